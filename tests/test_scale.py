"""Sizes are relative to the mechanism's own: the reproduction of the size-dependent dead-point test, a
slider-crank at 1e-5 m driven by its slider's travel (velocity coefficients of 1e5 rad/m and an unscaled
condition number made it 'a dead point' far from any; the continuation stepped 0.1 m)."""
import numpy as np
import pytest

from conftest import agree
from mechsym import derive
from mechsym.codegen import c_backend
from mechsym.planar.model import Mechanism


def _slider_driven(factor):
    """The offset slider-crank of mechanisms/slider_crank.py with every length times `factor`, driven by the
    slider's travel s along its guide (a coordinate in metres) instead of the crank angle; assembled from
    the crank at 1.2 rad (s = 0.1636 factor)."""
    m = Mechanism("slider-driven")
    l1, l2, e = (m.parameter(n, v * factor, "m") for n, v in (("l_crank", 0.05), ("l_rod", 0.15), ("offset", 0.01)))
    rho = m.parameter("density", 1.0, "kg/m")
    m.ground(points={"O": (0, 0), "L": (0, e)})
    m.bar("crank", ("O", "P"), l1, rho, guess=1.2)
    m.bar("rod", ("P", "S"), l2, rho, guess=-0.2465)
    m.body("slider", mass=0.5, inertia=0, com=(0, 0), points={"S": (0, 0)})
    m.revolute("O", "ground", "O", "crank")
    m.revolute("P", "crank", "P", "rod")
    m.revolute("S", "rod", "S", "slider")
    m.prismatic("guide", "ground", "L", "slider", "S", axis=(1, 0))
    m.coordinate("s", "guide", force="F", guess_at=0.1636 * factor)
    return m


@pytest.mark.parametrize("backend", ["numpy", pytest.param("c", marks=pytest.mark.skipif(
    c_backend.compiler() is None, reason="no C compiler"))])
def test_a_small_slider_driven_mechanism_is_no_dead_point(backend):
    """At the old tree: SingularError 'dead point at s=1.636e-06 (condition number 7.46e+06)' on both backends."""
    s = np.linspace(0.12, 0.19, 15)
    small, big = derive(_slider_driven(1e-5), backend), derive(_slider_driven(1.0), backend)
    k_small, k_big = small.kinematics_table(1e-5 * s), big.kinematics_table(s)
    for name in k_big.columns:
        factor = 1.0 if name.endswith("angle") else 1e-5
        assert agree(k_small[name], factor * k_big[name], 1e-9) or np.max(np.abs(k_big[name])) < 1e-15, name
    # quasi-static guide force: the bars' weight (mass times 1e-5) through dy/ds (unchanged); the slider's
    # weight is borne by the horizontal guide
    f_small = small.inverse(1e-5 * s, 0.0, inertia=False)["F"]
    f_big = big.inverse(s, 0.0, inertia=False)["F"]
    assert agree(f_small, 1e-5 * f_big, 1e-9)
