"""Bricard's mechanism, problem A04 of the IFToMM library of computational benchmarks for multibody systems
(docs/spatial-loops.md cites the definition): five rods of 1 m and 1 kg, square cross-section 0.1 m,
joined with the ground in one loop of six revolute joints, each axis perpendicular to the two rods it joins.
Grübler's count is 0; the special geometry gives mobility 1 (one closure row is redundant).

The benchmark's frame (gravity along its -y) is turned by +90 degrees about x into mechsym's (gravity along
-z): a benchmark point (x, y, z) is (x, -z, y) here. Its corners: O (0, 0, 0), P1 (1, 0, 0), P2 (1, -1, 0),
P3 (1, -1, 1), P4 (0, -1, 1), P5 (0, 0, 1); the ground is the rod P5-O. The tree's zero configuration is
this position, where the benchmark starts from rest (10 s of free motion). J1 is driven: the kinematics and
inverse analyses follow it, and a forward run at zero torque is the free motion.
"""
import math

from mechsym.spatial import Revolute, Tree

CORNERS = ((0, 0, 0), (1, 0, 0), (1, -1, 0), (1, -1, 1), (0, -1, 1), (0, 0, 1))
AXES = ((0, 1, 0), (0, 0, 1), (1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 0, 0))     # benchmark frame, J1 ... J6
SIDE = 0.1                                                                     # the rods' square section, m


def build():
    """The tree O-J1-rod1-J2-...-rod5 closed by J6 between the ground and rod5 at P5."""
    tree = Tree("bricard")
    L = tree.parameter("L", 1.0, "m", "rod length")
    m = tree.parameter("m", 1.0, "kg", "rod mass")
    tree.body("ground")
    parent = "ground"
    for i in range(5):
        a, b = CORNERS[i], CORNERS[i + 1]
        along = [y - x for x, y in zip(a, b)]
        step = [y - x for x, y in zip(CORNERS[i - 1], a)] if i else [0, 0, 0]
        transverse = m * (L ** 2 + SIDE ** 2) / 12
        inertia = [m * SIDE ** 2 / 6 if c else transverse for c in along] + [0, 0, 0]
        tree.body(f"rod{i + 1}", parent, Revolute(f"J{i + 1}", axis=AXES[i]), xyz=[L * c for c in step],
                  rpy=(math.pi / 2, 0, 0) if i == 0 else (0, 0, 0), mass=m, com=[L * c / 2 for c in along],
                  inertia=inertia)
        parent = f"rod{i + 1}"
    tree.frame("P5_rod5", "rod5", xyz=(0, L, 0))
    tree.frame("P5_ground", "ground", xyz=(0, -L, 0), rpy=(math.pi / 2, 0, 0))
    tree.close("loop", "P5_ground", "P5_rod5", Revolute("J6", axis=AXES[5]))
    tree.drive("J1")            # the coordinate the kinematics and inverse analyses follow (its torque)
    return tree
