"""Hard contact on HyQ (mechsym.spatial's generated tree) against Pinocchio's constrained dynamics and
impulse dynamics, and the scenarios of `mechsym hyq` against their free-fall closed forms."""
import numpy as np
import pytest

pin = pytest.importorskip("pinocchio")
erd = pytest.importorskip("example_robot_data")

from mechanisms import hyq_contact  # noqa: E402
from mechsym.contact.hard_forces import contact_forces  # noqa: E402
from mechsym.contact.hard_impulse import impulse  # noqa: E402

G = 9.81


@pytest.fixture(scope="module")
def hyq():
    contacts, q = hyq_contact.initial_state("drop")
    q_stand = hyq_contact.robot()[1].copy()
    q_stand[2] -= contacts.gaps(q_stand).min()             # level, every foot on the ground
    return contacts, q_stand, erd.load("hyq").model


def pinocchio_rows(model, q, v):
    """Normal rows and drifts of the four feet from Pinocchio (LOCAL_WORLD_ALIGNED, classical acceleration)."""
    data = model.createData()
    pin.forwardKinematics(model, data, q, v, np.zeros(model.nv))
    pin.computeJointJacobians(model, data, q)
    pin.updateFramePlacements(model, data)
    rows, drift = [], []
    for f in hyq_contact.FEET:
        fid = model.getFrameId(f)
        J = pin.getFrameJacobian(model, data, fid, pin.LOCAL_WORLD_ALIGNED)
        a = pin.getFrameClassicalAcceleration(model, data, fid, pin.LOCAL_WORLD_ALIGNED).linear
        rows.append(J[2])
        drift.append(a[2])
    return np.array(rows), np.array(drift)


def test_contact_lcp_equals_pinocchio_constrained_dynamics(hyq):
    """Standing on four feet with the joints pushing down: every foot loaded, so the LCP's q'' and forces
    equal Pinocchio's forwardDynamics with the four normal constraints (its lambda_c)."""
    contacts, q, model = hyq
    rng = np.random.default_rng(11)
    checked = 0
    for _ in range(60):
        v = 0.1 * rng.standard_normal(model.nv)
        v[:6] = 0.0
        tau = np.concatenate([np.zeros(6), 2 * rng.standard_normal(12)])
        sol = contact_forces(q, v, tau, contacts)
        if not np.all(sol.lam[:, 0] > 1.0):
            continue
        J, gamma = pinocchio_rows(model, q, v)
        data = model.createData()
        ddq = pin.forwardDynamics(model, data, q, v, tau, J, gamma)
        np.testing.assert_allclose(sol.qdd, ddq, atol=1e-8 * np.abs(ddq).max())
        np.testing.assert_allclose(sol.lam[:, 0], data.lambda_c, rtol=1e-8)
        checked += 1
    assert checked >= 5


def test_impulse_equals_pinocchio_impulse_dynamics(hyq):
    """All four feet landing together: the block solution equals Pinocchio's impulseDynamics."""
    contacts, q, model = hyq
    rng = np.random.default_rng(12)
    for e in (0.0, 0.4):
        v = 0.2 * rng.standard_normal(model.nv)
        v[2] = -2.0
        res = impulse(q, v, contacts, e=e)
        assert res.info["block"] and np.all(res.Lam[:, 0] > 0)
        J, _ = pinocchio_rows(model, q, v)
        data = model.createData()
        dq_after = pin.impulseDynamics(model, data, q, v, J, e, 0.0)
        np.testing.assert_allclose(res.v_plus, dq_after, atol=1e-9 * np.abs(v).max())
        np.testing.assert_allclose(res.Lam[:, 0], data.impulse_c, rtol=1e-8)


@pytest.mark.parametrize("scenario", ["drop", "tilted"])
def test_scenarios_land_at_the_free_fall_instant(scenario, tmp_path):
    """The lowest foot falls freely from its height h along the plane's normal (n_z g t^2 / 2): drop lands
    at sqrt(2 / g) s, tilted at sqrt(1 / (g cos 5 deg)) s; the CSV has the columns of docs/conventions.md and the impulses
    of the timeline."""
    from mechsym.app.cli import main
    from mechsym.core.results import read_csv

    out, events = tmp_path / "hyq.csv", tmp_path / "events.csv"
    assert main(["hyq", scenario, "--t-end", "0.6", "--out", str(out), "--timeline", str(events)]) == 0
    table = read_csv(out)
    model = hyq_contact.robot()[0]
    names = ["t", "base.x", "base.y", "base.z", "base.qx", "base.qy", "base.qz", "base.qw"] + model.joint_names + \
        ["com.x", "com.y", "com.z"] + [f"{f}.{c}" for f in hyq_contact.FEET for c in ("fn", "ft1", "ft2", "impulse")]
    assert table.names == names
    timeline = read_csv(events)
    expected = np.sqrt(2 / G) if scenario == "drop" else np.sqrt(1 / (G * np.cos(np.deg2rad(5))))
    np.testing.assert_allclose(timeline["t"][0], expected, rtol=1e-7)
    total = sum(table[f"{f}.impulse"].sum() for f in hyq_contact.FEET)
    np.testing.assert_allclose(total, timeline["impulse"].sum(), rtol=1e-12)
    assert np.all(table["com.z"][:10] > table["com.z"][-1])
