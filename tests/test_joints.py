"""A new joint type is one class: the gear pair of docs/joints.md, run from the page's own code."""
import re
from pathlib import Path

import numpy as np
import pytest

from conftest import agree
from mechsym import derive
from mechsym.codegen import c_backend
from mechsym.core.errors import ModelError
from mechsym.planar.model import Mechanism

PAGE = Path(__file__).resolve().parent.parent / "docs" / "joints.md"


def _declared():
    """The gear pair class and the declaration, executed from docs/joints.md."""
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(), re.S)
    assert len(blocks) == 2
    scope = {"Mechanism": Mechanism}
    exec(blocks[0], scope)
    exec(blocks[1], scope)
    return scope["m"]


@pytest.mark.parametrize("backend", ["numpy", pytest.param("c", marks=pytest.mark.skipif(
    c_backend.compiler() is None, reason="no C compiler"))])
def test_gear_pair_from_the_docs(backend):
    s = derive(_declared(), backend)
    r1, r2, i1, i2 = 0.05, 0.1, 2e-4, 3e-3
    theta = np.linspace(-1.0, 2.0, 13)
    table = s.kinematics_table(theta)
    assert agree(table["gear2.angle"], -(r1 / r2) * theta, 1e-12)
    alpha = 4.0
    inv = s.inverse(theta, 0.0, alpha=alpha)
    assert agree(inv["torque"], np.full_like(theta, (i1 + i2 * (r1 / r2) ** 2) * alpha), 1e-12)
    # the tooth force accelerates gear 2: I2 alpha2 = r2 ft (alpha2 = -(r1/r2) alpha, ft along its row)
    assert agree(r2 * inv["mesh.ft"], np.full_like(theta, i2 * -(r1 / r2) * alpha), 1e-12)


def test_a_joint_must_be_a_joint_type():
    from mechsym.core.errors import InputError

    with pytest.raises(InputError, match="is not a joint"):
        Mechanism("m").add_joint(("A", "B"))


def _pendulum(welded, la=0.4, lb=0.25, rho=2.0, angle=0.0):
    """A bar pinned to the ground at O and driven there; welded: two bars, b fixed to a's end P at the
    relative angle `angle`; else one bar of length la + lb (the same body, for angle 0)."""
    m = Mechanism("weld" if welded else "bar")
    m.ground(points={"O": (0, 0)})
    if welded:
        m.bar("a", ("O", "P"), la, rho)
        m.bar("b", ("P", "Q"), lb, rho)
        m.revolute("O", "ground", "O", "a")
        m.weld("W", "a", "P", "b", angle=angle)
    else:
        m.bar("a", ("O", "Q"), la + lb, rho)
        m.revolute("O", "ground", "O", "a")
    m.coordinate("theta", "O", force="torque")
    return m


@pytest.mark.parametrize("backend", ["numpy", pytest.param("c", marks=pytest.mark.skipif(
    c_backend.compiler() is None, reason="no C compiler"))])
def test_weld_is_one_rigid_body(backend):
    """A fixed joint (weld) between two bars: their kinematics and driving torque are those of the one bar
    they make (an independent declaration), and the weld carries the outer bar: the force of a on b
    balances b's weight and inertia, and its moment about P is b's moment of those (by hand)."""
    la, lb, rho, g = 0.4, 0.25, 2.0, 9.81
    theta = np.linspace(-2.0, 3.0, 11)
    omega, alpha = 1.5, -0.7
    welded, single = derive(_pendulum(True), backend), derive(_pendulum(False), backend)
    kin_w, kin_s = welded.kinematics_table(theta), single.kinematics_table(theta)
    assert agree(kin_w["Q.x"], kin_s["Q.x"], 1e-12) and agree(kin_w["Q.y"], kin_s["Q.y"], 1e-12)
    assert agree(kin_w["b.angle"], theta, 1e-12)
    inv_w, inv_s = welded.inverse(theta, omega, alpha=alpha), single.inverse(theta, omega, alpha=alpha)
    assert agree(inv_w["torque"], inv_s["torque"], 1e-12)
    # bar b: mass mb, centre at distance la + lb/2 from O on the line at theta; a's force on it at P
    mb, d = rho * lb, la + lb / 2
    e, n = np.array([np.cos(theta), np.sin(theta)]), np.array([-np.sin(theta), np.cos(theta)])
    acc = d * (alpha * n - omega**2 * e)
    force = mb * acc + np.array([0.0, mb * g])[:, None]
    assert agree(inv_w["W.fx"], force[0], 1e-12) and agree(inv_w["W.fy"], force[1], 1e-12)
    # moment about P: I_b alpha + (lb/2) e x (mb acc + mb g y)
    moment = mb * lb**2 / 12 * alpha + (lb / 2) * (e[0] * force[1] - e[1] * force[0])
    assert agree(inv_w["W.m"], moment, 1e-12)


def test_weld_holds_its_angle():
    m = _pendulum(True, angle=0.5)
    table = derive(m, backend="numpy").kinematics_table(np.linspace(0, 1, 5))
    assert agree(table["b.angle"] - table["a.angle"], np.full(5, 0.5), 1e-12)
    with pytest.raises(ModelError, match="joint .W. is a weld, which cannot be driven"):
        bad = _pendulum(True)
        bad.coordinate("phi", "W")
        derive(bad, backend="numpy")
