"""A planar three-link chain falling onto compliant ground (mechsym's planar example of issue 6).

Three uniform links of length l = 1 m and mass 1 kg (density 1 kg/m) are pinned in series: link1 from the
base pin O, 1.5 m above the ground, to A; link2 from A to B; link3 from B to the tip C. The coordinates
are the relative joint angles theta1 (link1 against the ground frame), theta2 (link2 against link1) and
theta3 (link3 against link2), all passive. Gravity 9.81 m/s^2 along -y; the ground is y = 0.

Contact points sit at the moving link ends A, B and C, each on the link it ends (the pins A and B carry
one point each, not one per link, so that a pin touching the ground is one contact). Ground: K = 1e6,
D = 2000, mu = 0.5 (spatial_v2's "safe floor").

Started horizontal (all angles zero) at rest, the chain swings down; B and C strike the ground (A can not:
it stays 0.5 m above it) and slide and stick there.
"""
from __future__ import annotations

import numpy as np

from mechsym.contact import ContactPoints, GroundContact
from mechsym.model import Mechanism

K, D, MU = 1e6, 2000.0, 0.5
CONTACT_POINTS = {"A": ("link1", "A"), "B": ("link2", "B"), "C": ("link3", "C")}


def build() -> Mechanism:
    m = Mechanism("chain3", doc=__doc__)
    length = m.parameter("l", 1.0, "m", "length of every link")
    rho = m.parameter("density", 1.0, "kg/m", "linear density of every link (1 kg per link)")
    height = m.parameter("h", 1.5, "m", "height of the base pin O above the ground")
    m.gravity_down("g")
    m.ground(points={"O": (0, height)})
    m.bar("link1", ("O", "A"), length, rho)
    m.bar("link2", ("A", "B"), length, rho)
    m.bar("link3", ("B", "C"), length, rho)
    m.revolute("O", "ground", "O", "link1")
    m.revolute("A", "link1", "A", "link2")
    m.revolute("B", "link2", "B", "link3")
    m.coordinate("theta1", "O")
    m.coordinate("theta2", "A")
    m.coordinate("theta3", "B")
    return m


def model(params=None, mu=MU, stiffness=K, damping=D):
    """(system, contact points at A, B, C, ground)."""
    from mechsym.system import derive

    system = derive(build())
    return system, ContactPoints(system, CONTACT_POINTS, params), GroundContact(stiffness, damping, mu)


def simulate(t_end=1.5, theta0=(0.0, 0.0, 0.0), thetad0=(0.0, 0.0, 0.0), dt=None, rtol=1e-8, atol=None,
             method="RK45", **contact):
    """The fall as a ContactRun (columns t, theta1..3, their rates, deflections, contact counts)."""
    from mechsym.contact.run import simulate_contact

    system, points, ground = model(**contact)
    state0 = np.concatenate([np.asarray(theta0, float), np.asarray(thetad0, float)])
    return simulate_contact(points, ground, state0, t_end, dt=dt, rtol=rtol, atol=atol, method=method)
