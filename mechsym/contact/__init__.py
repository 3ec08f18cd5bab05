"""Compliant ground contact for points: Featherstone's spatial_v2 model (see `spatial_v2`)."""
from mechsym.contact.spatial_v2 import (
    NO_CONTACT,
    SLIP,
    STICK,
    ContactResult,
    Fpt,
    GroundContact,
    gcontact,
    static_penetration,
)

__all__ = ["NO_CONTACT", "STICK", "SLIP", "ContactResult", "Fpt", "GroundContact", "gcontact",
           "static_penetration"]
