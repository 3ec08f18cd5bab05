"""A spatial RSSR crank-rocker: a crank turning about z through the origin, a rocker swinging about y through
Q = (-0.05, 0.05, 0.05) m, and a coupler joining the crank's end A (a spherical joint) to the rocker's tip B.
An S-S coupler spins freely about AB; here its end at B is a universal joint (axes: on the coupler, normal to
AB and y; on the rocker, y), which takes that idle spin away and leaves mobility 1 (Grübler's count
6 * 3 - 5 - 3 - 5 - 4 = 1). The tree is crank (revolute), coupler (spherical, its quaternion a coordinate),
rocker (revolute); the universal joint closes the loop. Thin rods; the coupler has the axial inertia of a
5 mm radius cylinder. Their masses are the parameters m_crank, m_coupler and m_rocker (kg). The crank turns
fully; the rocker swings within about [-0.14, 1.47] rad.
"""
import numpy as np

from mechsym.spatial import Revolute, Spherical, Tree, Universal

CRANK, ROCKER, PIVOT = 0.04, 0.08, np.array([-0.05, 0.05, 0.05])
MASSES = {"crank": 0.2, "coupler": 0.3, "rocker": 0.25}
COUPLER_RADIUS = 0.005


def _rod(mass, vector, radius=0.0):
    """(com, inertia about it) of a thin rod from its body origin along `vector` (m), axial inertia m r^2/2."""
    length = np.linalg.norm(vector)
    u = vector / length
    shape = length ** 2 / 12 * (np.eye(3) - np.outer(u, u)) + radius ** 2 / 2 * np.outer(u, u)
    return dict(mass=mass, com=tuple(vector / 2), inertia=[[mass * float(x) for x in row] for row in shape])


def build():
    """Crank, coupler and rocker of the module docstring; the crank's angle is driven (its torque)."""
    a = np.array([CRANK, 0.0, 0.0])
    b = PIVOT + np.array([0.0, 0.0, -ROCKER])
    ab = b - a
    tree = Tree("rssr")
    m = {name: tree.parameter(f"m_{name}", value, "kg", f"{name} mass") for name, value in MASSES.items()}
    tree.body("ground")
    tree.body("crank", "ground", Revolute("crank", axis=(0, 0, 1)), **_rod(m["crank"], a))
    tree.body("coupler", "crank", Spherical("A"), xyz=tuple(a), **_rod(m["coupler"], ab, COUPLER_RADIUS))
    tree.body("rocker", "ground", Revolute("rocker", axis=(0, 1, 0)), xyz=tuple(PIVOT),
              **_rod(m["rocker"], b - PIVOT))
    tree.frame("B_coupler", "coupler", xyz=tuple(ab))
    tree.frame("B_rocker", "rocker", xyz=tuple(b - PIVOT))
    normal = np.cross((0, 1, 0), ab)
    tree.close("loop", "B_coupler", "B_rocker", Universal("B", axis=tuple(normal / np.linalg.norm(normal)),
                                                          axis2=(0, 1, 0)))
    tree.drive("crank")
    return tree
