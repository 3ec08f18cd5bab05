"""Chebyshev lambda linkage: crank A-P, rocker B-M, coupler P-M-C with M at its midpoint.

The coupler point C traces a nearly straight line over part of the turn. SI units; every link is a
uniform slender rod. theta is the angle of A->P; the driving torque acts on the crank, its reaction on
the ground.
"""
from mechsym.planar.constraints import cross2
from mechsym.planar.model import Mechanism


def build() -> Mechanism:
    m = Mechanism("fourbar", doc=__doc__)
    l1 = m.parameter("l_crank", 0.05, "m", "crank length A-P")
    l2 = m.parameter("l_rocker", 0.125, "m", "rocker length B-M")
    l3 = m.parameter("l_coupler", 0.25, "m", "coupler length P-C (M at its midpoint)")
    d = m.parameter("d_ground", 0.1, "m", "ground pivot distance A-B")
    rho = m.parameter("density", 1.0, "kg/m", "linear density of every link")
    m.gravity_down("g")

    m.ground(points={"A": (0, 0), "B": (d, 0)})
    m.bar("crank", ("A", "P"), l1, rho)
    m.bar("coupler", ("P", "C"), l3, rho, points={"M": (l3 / 2, 0)}, guess=1.4)
    m.bar("rocker", ("B", "M"), l2, rho, guess=1.8)

    m.revolute("A", "ground", "A", "crank")
    m.revolute("P", "crank", "P", "coupler")
    m.revolute("M", "coupler", "M", "rocker")
    m.revolute("B", "ground", "B", "rocker")
    m.coordinate("theta", "A", force="torque")
    A, B, M = m.at("A"), m.at("B"), m.at("M")
    m.branch(cross2(B - A, M - A), "rocker tip M above line AB")
    return m
