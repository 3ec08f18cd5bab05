"""Compliant ground contact for points: Featherstone's spatial_v2 model (see `spatial_v2`), contact points
on any derived model (`points`) and simulation with located state changes (`run`)."""
from mechsym.contact.points import ContactPoints
from mechsym.contact.run import ContactEvent, ContactRun, simulate_contact
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
           "static_penetration", "ContactPoints", "ContactEvent", "ContactRun", "simulate_contact"]
