"""Contact: compliant ground contact for points (Featherstone's spatial_v2 law, `spatial_v2`; contact points
on a planar System or a FloatingSystem, `points`; simulation with located state changes, `run`, and its
compiled route, `c_run`), Exudyn's penalty rolling disc (`rolling_disc`), and hard contact (Lemke's method,
`lcp`; the contact LCP, impulses and the event-driven run, `hard*`; its compiled route, `c_contact`; a tree
and a box as its models, `tree_model`, `box`). The names below are the compliant contact's."""
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
