"""Offset slider-crank: crank O-P, connecting rod P-S, slider pin S on the line y = offset (x > 0).

SI units; crank and rod are uniform slender rods, the slider a point mass at its pin. theta is the crank
angle; the driving torque acts on the crank, its reaction on the ground.
"""
from mechsym.planar.model import Mechanism


def build() -> Mechanism:
    m = Mechanism("slider-crank", doc=__doc__)
    l1 = m.parameter("l_crank", 0.05, "m", "crank length O-P")
    l2 = m.parameter("l_rod", 0.15, "m", "connecting rod length P-S")
    e = m.parameter("offset", 0.01, "m", "height of the slider line above O", positive=False)
    rho = m.parameter("density", 1.0, "kg/m", "linear density of crank and rod")
    ms = m.parameter("m_slider", 0.5, "kg", "slider mass (a point mass at S)")
    m.gravity_down("g")

    m.ground(points={"O": (0, 0), "L": (0, e)})
    m.bar("crank", ("O", "P"), l1, rho)
    m.bar("rod", ("P", "S"), l2, rho)
    m.body("slider", mass=ms, inertia=0, com=(0, 0), points={"S": (0, 0)})

    m.revolute("O", "ground", "O", "crank")
    m.revolute("P", "crank", "P", "rod")
    m.revolute("S", "rod", "S", "slider")
    m.prismatic("guide", "ground", "L", "slider", "S", axis=(1, 0))
    m.coordinate("theta", "O", force="torque")
    S, O = m.at("S"), m.at("O")
    m.branch(S[0] - O[0], "slider on the +x side of O")
    return m
