"""Mechanism.plate: a polygonal lamina's mass, centroid and inertia against a decomposition into
triangles computed independently, a rectangle's closed form, and the statics and dynamics of a plate
pendulum."""
import numpy as np
import pytest
import sympy as sp

from mechsym import derive
from mechsym.core.errors import ModelError
from mechsym.planar.model import Mechanism


def triangles(vertices, rho):
    """Fan triangulation of a convex polygon: each triangle's mass, centroid (vertex mean) and polar
    moment about its centroid m (a^2 + b^2 + c^2) / 36, combined with the parallel-axis theorem."""
    v = np.asarray(vertices, float)
    parts = []
    for i in range(1, len(v) - 1):
        a, b, c = v[0], v[i], v[i + 1]
        area = 0.5 * abs((b[0] - a[0]) * (c[1] - a[1]) - (c[0] - a[0]) * (b[1] - a[1]))
        m = rho * area
        sides = sum(np.sum((p - q) ** 2) for p, q in ((a, b), (b, c), (c, a)))
        parts.append((m, (a + b + c) / 3, m * sides / 36))
    mass = sum(p[0] for p in parts)
    com = sum(p[0] * p[1] for p in parts) / mass
    inertia = sum(p[2] + p[0] * np.sum((p[1] - com) ** 2) for p in parts)
    return mass, com, inertia


def plate_values(mech, name):
    body = mech.bodies[name]
    subs = {p.symbol: p.default for p in mech.parameters.values()}
    f = lambda e: float(sp.sympify(e).xreplace(subs))
    return f(body.mass), np.array([f(c) for c in body.com]), f(body.inertia)


@pytest.mark.parametrize("corners", [
    {"A": (0, 0), "B": (0.3, 0.05), "C": (0.1, 0.25)},                       # ternary, counter-clockwise
    {"A": (0, 0), "C": (0.1, 0.25), "B": (0.3, 0.05)},                       # the same, clockwise
    {"A": (0, 0), "B": (0.4, -0.1), "C": (0.5, 0.2), "D": (0.15, 0.3), "E": (-0.05, 0.15)},  # convex pentagon
])
def test_plate_against_triangles(corners):
    m = Mechanism("p")
    m.plate("plate", corners, 7.5)
    mass, com, inertia = plate_values(m, "plate")
    ref = triangles(list(corners.values()) if list(corners)[1] != "C" else list(corners.values())[::-1], 7.5)
    assert mass == pytest.approx(ref[0], rel=1e-14)
    assert np.allclose(com, ref[1], rtol=0, atol=1e-15)
    assert inertia == pytest.approx(ref[2], rel=1e-13)


def test_symbolic_rectangle_closed_form():
    m = Mechanism("p")
    w, h, rho = m.parameter("w", 0.4, "m"), m.parameter("h", 0.1, "m"), m.parameter("rho", 3.0, "kg/m^2", positive=True)
    m.plate("plate", {"A": (0, 0), "B": (w, 0), "C": (w, h), "D": (0, h)}, rho)
    body = m.bodies["plate"]
    assert sp.simplify(body.mass - rho * w * h) == 0
    assert sp.simplify(body.com[0] - w / 2) == 0 and sp.simplify(body.com[1] - h / 2) == 0
    assert sp.simplify(body.inertia - rho * w * h * (w**2 + h**2) / 12) == 0


def pendulum(gravity=True):
    m = Mechanism("plate-pendulum")
    if not gravity:
        m.no_gravity()
    m.ground(points={"O": (0, 0)})
    m.plate("plate", {"O": (0, 0), "B": (0.3, 0.05), "C": (0.1, 0.25)}, 7.5)
    m.revolute("O", "ground", "O", "plate")
    m.coordinate("theta", "O", force="torque")
    return m


def test_plate_pendulum_statics_and_inertia():
    mass, com, inertia = triangles([(0, 0), (0.3, 0.05), (0.1, 0.25)], 7.5)
    theta = np.linspace(0, 2 * np.pi, 7)
    held = derive(pendulum(), backend="numpy").inverse(theta, 0.0, inertia=False)["torque"]
    cx = com[0] * np.cos(theta) - com[1] * np.sin(theta)  # the centroid's x in the fixed frame
    assert np.allclose(held, mass * 9.81 * cx, rtol=0, atol=1e-13)
    spun = derive(pendulum(gravity=False), backend="numpy").inverse(theta, 2.0, alpha=3.0)["torque"]
    assert np.allclose(spun, 3.0 * (inertia + mass * com @ com), rtol=1e-13)


def test_plate_needs_three_corners():
    m = Mechanism("p")
    m.ground()
    m.plate("plate", {"A": (0, 0), "B": (1, 0)}, 1.0)
    with pytest.raises(ModelError, match="plate 'plate' needs three or more corners"):
        m.check()
