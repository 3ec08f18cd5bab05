"""Step control of the numpy sweep's continuation: an interval whose end leaves the branch (the sign of
det Phi_q or of a declared branch condition changes) or that Newton cannot cross from the prediction is
retried in halved steps, and only where the step floor is reached is a dead point named. Checked against
the closed-form position analysis of a four-bar (two circles' intersection, on the side of the branch)."""
import numpy as np
import pytest

from conftest import agree
from mechanisms import fourbar
from mechsym import derive
from mechsym.core.errors import AssemblyError
from mechsym.planar.constraints import cross2
from mechsym.codegen.constants import STEP, STEP_FLOOR
from test_branch_c import kite


def _closed_form_m(theta, gap=0.0005, crank=0.05, link=0.125, side=1.0):
    """The kite's joint M at crank angles theta: the intersection of the circles of radius `link` about the
    crank pin P and the ground pivot B, on the side `side` of the line B->P."""
    p = crank * np.stack([np.cos(theta), np.sin(theta)], axis=1)
    b = np.array([-(crank + gap), 0.0])
    d = p - b
    dist = np.linalg.norm(d, axis=1)
    height = np.sqrt(link**2 - (dist / 2) ** 2)
    normal = np.stack([-d[:, 1], d[:, 0]], axis=1) / dist[:, None]
    return (p + b) / 2 + side * height[:, None] * normal


def _kite(declared):
    """The kite, bare (the branch checked by the sign of det Phi_q) or with the branch it assembles on
    declared: M to the left of the line from B to P."""
    m = kite()
    if declared:
        b, p, mid = m.at("B"), m.at("P"), m.at("M")
        m.branch(cross2(p - b, mid - b), "M to the left of B->P")
    return m


@pytest.fixture(scope="module", params=[False, True], ids=["det", "declared"])
def kite_system(request):
    return derive(_kite(request.param), backend="numpy")


@pytest.mark.parametrize("n", [64, 125, 229, 356, 1000])
def test_the_sweep_follows_the_branch_past_a_near_change_point(kite_system, n):
    """The kite (the crank pin passes within 0.5 mm of the ground pivot at theta = pi) raised 'det Phi_q
    changed sign: a dead point lies between' (or, with its branch declared, 'a declared branch condition
    changed sign') at every sampling: the nodes, 0.1 rad apart, jumped to the other branch there. The
    interval is now retried in halved steps, and the joint M follows the closed-form intersection on the
    reference's side over the whole revolution, with the reference's sign of det Phi_q. (At 125 and 356
    samples the nodes alone held the branch, but a sample's prediction between two of them was too coarse
    and its Newton converged on the other branch: such a sample is continued from its node.)"""
    theta = np.linspace(0.0, 2 * np.pi, n, endpoint=False)
    table = kite_system.kinematics_table(theta)
    m = np.stack([table["M.x"], table["M.y"]], axis=1)
    sides = [_closed_form_m(theta, side=side) for side in (1.0, -1.0)]
    expected = min(sides, key=lambda e: np.max(np.abs(e[0] - m[0])))  # the reference's side
    assert agree(m, expected, 1e-12)
    solver = kite_system.solver()
    reference = np.sign(np.linalg.det(solver.f.jac(solver.reference()[1], solver.params)))
    q = kite_system.kinematics(theta).q
    assert np.all(np.sign(np.linalg.det(solver.f.jac(q.T, solver.params))) == reference)


def test_a_sweep_without_a_flip_takes_the_same_nodes():
    """The common case keeps its coarse nodes, one per continuation step along the path."""
    s = derive(fourbar.build(), backend="numpy")
    solver = s.solver()
    ref, q_ref = solver.reference()
    path = np.array([[ref[0]], [ref[0] + 2 * np.pi]])
    nodes, qs, dist = solver._continue(path, q_ref, solver.step)
    count = int(np.ceil(2 * np.pi / STEP))
    assert len(nodes) == len(qs) == count + 1
    assert np.allclose(dist, np.linspace(0.0, 2 * np.pi / STEP, count + 1), rtol=0, atol=1e-12)


def test_a_limit_position_is_named_at_its_angle():
    """A fourbar whose crank cannot turn fully (crank 0.2 m, ground 0.1 m, rocker and half coupler 0.125 m)
    reaches its limit position where |P - B| = 0.25 m: cos(theta) = -0.3125 (closed form). The sweep named
    the first node past it (0.1 rad steps: theta = 1.89493); it now names the limit itself, as a dead point,
    within the step floor."""
    s = derive(fourbar.build(), backend="numpy")
    limit = np.arccos(-0.3125)
    with pytest.raises(AssemblyError) as info:
        s.kinematics(np.linspace(0.0, 2 * np.pi, 50), params={"l_crank": 0.2})
    message = str(info.value)
    assert "cannot assemble at theta=" in message and "loop 1" in message and "dead point" in message
    named = float(message.split("dead point at theta=")[1].split(" ")[0].rstrip(":,"))
    assert abs(named - limit) < STEP_FLOOR + 1e-5  # (printed to 6 digits)


@pytest.mark.parametrize("n", [64, 229, 1000])
def test_a_change_point_is_named_at_its_angle(n):
    """The kite with no gap: at theta = pi the crank pin lies on the ground pivot, where the two assembly
    branches cross (det Phi_q = 0). Halving down to the step floor still changes the sign there: the sweep
    names the branch change at theta = pi, whatever the sampling."""
    s = derive(kite(gap=0.0), backend="numpy")
    with pytest.raises(AssemblyError, match=r"leaves its assembly branch at theta=3\.14159: det Phi_q changed sign"):
        s.kinematics(np.linspace(0.0, 2 * np.pi, n, endpoint=False))


def test_the_tracker_walks_past_a_near_change_point(kite_system):
    """The configuration tracker walks to a far state in continuation steps: past the kite's near change
    point its fixed steps landed on the other branch and the state was rejected ('det Phi_q changed
    sign'), which ends a run of an implicit integrator. A step that fails or leaves the branch is now
    retried in halves as the sweep's are: the tracker reaches the state, equal to the sweep's there."""
    from mechsym.planar.tracking import ConfigurationTracker

    solver = kite_system.solver()
    tracker = ConfigurationTracker(solver, [2.0])
    q, _, _ = tracker.at([4.5])
    expected = kite_system.kinematics([2.0, 4.5]).q[1]
    assert agree(q, expected, 1e-12)
