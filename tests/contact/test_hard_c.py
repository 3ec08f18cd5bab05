"""The compiled route of hard contact (mechsym/codegen/runtime/hard_contact.c) against the Python route on HyQ: the
force LCP per state and over N states, the warm start, the held right-hand side with its guards, and the
event-driven drop."""
import numpy as np
import pytest

from mechanisms import hyq_contact
from mechsym.codegen.constants import HardStatus
from mechsym.contact import c_contact
from mechsym.contact.hard_forces import contact_forces
from mechsym.contact.hard_impulse import impulse
from mechsym.contact.hard_modes import CModes, Modes
from mechsym.contact.hard_run import pd_hold, simulate_hard
from mechsym.contact.spatial_v2 import NO_CONTACT, SLIP, STICK
from mechsym.core.errors import InputError


@pytest.fixture(scope="module")
def hyq():
    contacts, _ = hyq_contact.initial_state("drop")
    q = hyq_contact.robot()[1].copy()
    q[2] -= contacts.gaps(q).min()                         # level, every foot on the ground
    if contacts.c_route() is None:
        pytest.skip("no C compiler")
    return contacts, q


def _states(rng, q, count, base_speed):
    """Random states near the standing pose: joint rates, base twists (sliding feet), joint torques, the
    quaternion a little off the unit sphere (as an integrator carries it)."""
    for _ in range(count):
        qq = q.copy()
        qq[7:] += 0.05 * rng.standard_normal(12)
        qq[3:7] *= 1 + 1e-9 * rng.standard_normal()
        v = 0.1 * rng.standard_normal(18)
        v[:6] = base_speed * rng.standard_normal(6)
        tau = np.concatenate([np.zeros(6), 3 * rng.standard_normal(12)])
        yield qq, v, tau


def _close(a, b, scale_of):
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-10 * max(1.0, np.abs(scale_of).max()))


@pytest.mark.parametrize("mu", [0.0, 0.8])
def test_forces_equal_the_python_route(hyq, mu):
    """Per state, every contact subset, sticking and sliding feet: lam, q'', the gap accelerations, the
    tangential accelerations and the states equal the Python route's to 1e-10 (relative to their size)."""
    contacts, q = hyq
    rng = np.random.default_rng(5)
    routes = {"c": 0, "warm": 0}
    for j, (qq, v, tau) in enumerate(_states(rng, q, 40, 0.05)):
        if j % 2 == 0:
            v[:6] = 0.0                                    # feet at rest: stick or start to slip
        active = rng.random(4) < 0.8
        ref = contact_forces(qq, v, tau, contacts, mu=mu, active=active, route="python")
        sol = contact_forces(qq, v, tau, contacts, mu=mu, active=active, route="c")
        assert sol.info["route"] == "c"
        routes["c"] += sol.info["status"] == 0
        for a, b in ((sol.lam, ref.lam), (sol.qdd, ref.qdd), (sol.accel, ref.accel),
                     (sol.tangential_accel, ref.tangential_accel)):
            _close(a, b, b)
        np.testing.assert_array_equal(sol.state, ref.state)
        warm = contact_forces(qq, v, tau, contacts, mu=mu, active=active, route="c", guess=sol.info["z"] > 0)
        routes["warm"] += warm.info["warm"]
        _close(warm.lam, ref.lam, ref.lam)
        _close(warm.qdd, ref.qdd, ref.qdd)
    assert routes["c"] >= 30 and routes["warm"] >= 30      # decided in C, and the warm start taken


def test_n_states_in_one_call(hyq, monkeypatch):
    """N states go to C in one call (no per-state Python on the way) and equal the states one by one."""
    contacts, q = hyq
    rng = np.random.default_rng(6)
    Q, V, T = (np.array(a) for a in zip(*_states(rng, q, 50, 0.05)))
    route = contacts.c_route()
    calls = []
    real = route.forces
    monkeypatch.setattr(route, "forces", lambda *a, **k: calls.append(1) or real(*a, **k))
    monkeypatch.setattr(route, "forces_one", None)
    many = contact_forces(Q, V, T, contacts, mu=0.8)
    assert len(calls) == 1 and many.lam.shape == (50, 4, 3) and many.qdd.shape == (50, 18)
    for i in range(0, 50, 7):
        one = contact_forces(Q[i], V[i], T[i], contacts, mu=0.8, route="python")
        _close(many.lam[i], one.lam, one.lam)
        _close(many.qdd[i], one.qdd, one.qdd)
        np.testing.assert_array_equal(many.state[i], one.state)


@pytest.mark.parametrize("mu", [0.0, 0.8])
def test_impulses_equal_the_python_route(hyq, monkeypatch, mu):
    """Impulses of N states (feet landing, some leaving: the block system and the impact LCP; with friction
    the velocity-level LCP) in one call equal the Python route's state by state."""
    contacts, q = hyq
    rng = np.random.default_rng(8)
    Q, V, _ = (np.array(a) for a in zip(*_states(rng, q, 40, 0.3)))
    V[:, 2] -= rng.uniform(0.0, 2.0, 40)
    V[::2, 3] += rng.uniform(-3, 3, 20)                    # rolling: feet on one side leave
    e = rng.uniform(0, 1, 4)
    route = contacts.c_route()
    calls = []
    real = route.impulse
    monkeypatch.setattr(route, "impulse", lambda *a, **k: calls.append(1) or real(*a, **k))
    many = impulse(Q, V, contacts, e=e, mu=mu)
    assert len(calls) == 1
    blocks = 0
    for i in range(40):
        one = impulse(Q[i], V[i], contacts, e=e, mu=mu, route="python")
        blocks += bool(one.info.get("block"))
        assert bool(many.info["block"][i]) == bool(one.info.get("block"))
        for f in ("v_plus", "Lam", "rate_before", "rate_after"):
            _close(getattr(many, f)[i], getattr(one, f), getattr(one, f))
        np.testing.assert_array_equal(many.state[i], one.state)
    assert (0 < blocks < 40) if mu == 0 else blocks == 0   # both the block system and the impact LCP
    assert (many.info["status"] == 0).sum() >= 35


def test_n_states_bad_input_named(hyq):
    contacts, q = hyq
    Q = np.tile(q, (3, 1))
    V = np.zeros((3, 18))
    V[2, 4] = np.nan
    with pytest.raises(InputError, match="v of sample 2 is not finite"):
        contact_forces(Q, V, np.zeros((3, 18)), contacts)
    with pytest.raises(InputError, match=r"tau must have shape \(3, 18\)"):
        contact_forces(Q, np.zeros((3, 18)), np.zeros((2, 18)), contacts)


def test_route_c_refused_where_there_is_none():
    from mechsym.contact.box import RigidBox
    from mechsym.contact.hard import HardContacts

    box = RigidBox(2.0, (0.4, 0.3, 0.2))
    hc = HardContacts(box, {"c": "corner++-"})
    with pytest.raises(InputError, match="C route"):
        contact_forces(np.array([0, 0, 0.1, 0, 0, 0, 1.0]), np.zeros(6), np.zeros(6), hc, route="c")


@pytest.mark.parametrize("mu, undecided, own", [(0.0, False, False), (0.8, False, False), (0.8, True, False),
                                               (0.8, False, True)])
def test_held_rhs_and_guards_equal_the_python_route(hyq, monkeypatch, mu, undecided, own):
    """The compiled right-hand side with the contact states held (none, stick, slip with a fast or a slow
    slide) and the PD hold (or a controller of one's own, called from Python): y', the forces and every
    guard's per-contact values equal the Python route's (also where C reports a state undecided and the
    Python route fills in)."""
    contacts, q = hyq
    rng = np.random.default_rng(7)
    mu_arr, e_arr = contacts.mu_array(mu), contacts.e_array(0.0)
    ctrl = pd_hold(contacts.model, q)
    if own:
        pd = ctrl
        ctrl = lambda t, q, v: pd(t, q, v) + np.sin(t + np.arange(18))   # noqa: E731
    args = (contacts, mu_arr, e_arr, ctrl, 1e-10, 1e-6, 1e-3, 1e-3)
    cm, pm = CModes(contacts.c_route(), *args), Modes(*args)
    if undecided:
        monkeypatch.setattr(cm.c, "held", lambda *a, **k: HardStatus.AMBIGUOUS)
    for j, (qq, v, _) in enumerate(_states(rng, q, 30, 0.05)):
        qq[2] += 0.01 * rng.random()                       # some feet above the ground
        state = rng.choice([NO_CONTACT, STICK, SLIP], 4)
        if j == 0:
            state[:] = NO_CONTACT
        fast = rng.random(4) < 0.5
        sdir = rng.standard_normal((4, 2))
        sdir /= np.linalg.norm(sdir, axis=1, keepdims=True)
        y = np.concatenate([qq, v])
        for m in (pm, cm):
            m.fast, m.slide_dir, m.bias_gap = fast.copy(), sdir.copy(), np.zeros(4)
            m.state = state.copy()
            m._key = None
        yd_p, yd_c = pm.rhs(0.1, y), cm.rhs(0.1, y)
        _close(yd_c, yd_p, yd_p)
        _close(cm.solve(0.1, y)[1], pm.solve(0.1, y)[1], pm.solve(0.1, y)[1])
        for name in ("_loss_values", "_slip_values", "_stick_values"):
            a, b = getattr(cm, name)(0.1, y), getattr(pm, name)(0.1, y)
            np.testing.assert_array_equal(np.isinf(a), np.isinf(b))
            fin = np.isfinite(b)
            _close(a[fin], b[fin], np.concatenate([b[fin], [1.0]]) if name != "_stick_values" else 1.0)
        assert cm.gain_guard(0.1, y) == pytest.approx(pm.gain_guard(0.1, y), abs=1e-12)


def test_drop_equals_the_python_route(hyq):
    """HyQ's drop through its first impacts and contact changes: the same events at the same times (to
    1e-9 s) and the same trajectory (to the integration tolerance) by either route."""
    contacts, q0 = hyq_contact.initial_state("drop")
    ctrl = pd_hold(contacts.model, q0)
    runs = {r: simulate_hard(contacts, q0, np.zeros(18), 0.8, controller=ctrl, route=r) for r in ("c", "python")}
    c, p = runs["c"], runs["python"]
    assert c.stats["impacts"] == p.stats["impacts"] >= 3
    kinds = lambda run: [(e.contact, e.kind) for e in run.timeline if e.kind != "persistent"]  # noqa: E731
    assert kinds(c) == kinds(p)
    np.testing.assert_allclose([e.t for e in c.timeline if e.kind == "impact"],
                               [e.t for e in p.timeline if e.kind == "impact"], atol=1e-9)
    t = np.linspace(0, 0.8, 41)
    np.testing.assert_allclose(c.sample(t), p.sample(t), atol=1e-6)
    for f in hyq_contact.FEET:            # the table's forces: one C call against the Python loop
        for col in ("fn", "ft1", "ft2"):
            a, b = c[f"{f}.{col}"], p[f"{f}.{col}"]
            np.testing.assert_allclose(a, b, atol=1e-5 * max(1.0, np.abs(b).max()))


def test_simulate_route_c_refused_where_there_is_none():
    from mechsym.contact.box import RigidBox
    from mechsym.contact.hard import HardContacts

    hc = HardContacts(RigidBox(2.0, (0.4, 0.3, 0.2)), {"c": "corner++-"})
    with pytest.raises(InputError, match="C route"):
        simulate_hard(hc, [0, 0, 0.6, 0, 0, 0, 1], np.zeros(6), 0.1, route="c")


def test_library_is_keyed_by_its_source(monkeypatch):
    """The compiled library's lookup key covers hard_contact.c: the C file is part of package_source."""
    import pathlib

    from mechsym.codegen import keys

    real = pathlib.Path.read_bytes
    keys.package_source.cache_clear()
    try:
        before = keys.package_source()
        keys.package_source.cache_clear()
        monkeypatch.setattr(pathlib.Path, "read_bytes", lambda self: real(self) + (
            b"/* changed */" if self.name == c_contact.SOURCE else b""))
        after = keys.package_source()
    finally:
        monkeypatch.undo()
        keys.package_source.cache_clear()
    assert before != after


def test_ctrl_c_ends_the_drop_at_once(tmp_path):
    """`mechsym hyq drop` elastic and undamped for 2000 s (an impact every 20 ms) runs many minutes: SIGINT
    ends it within a second (every compiled call is short, the integration loop Python's), exit 130, nothing
    written."""
    from pathlib import Path

    from conftest import interrupt_cli

    root = str(Path(__file__).resolve().parents[2])
    out = tmp_path / "drop.csv"
    code, after = interrupt_cli(["hyq", "drop", "--kd", "0", "--restitution", "1", "--t-end", "2000", "--out", str(out)],
                                5.0, root)
    assert code == 130 and after < 1.0, (code, after)
    assert not out.exists()


def test_one_state_bad_input_named(hyq):
    """A non-finite state found in C is named by the Python route's check."""
    contacts, q = hyq
    v = np.zeros(18)
    v[5] = np.inf
    with pytest.raises(InputError, match="v must be finite"):
        contact_forces(q, v, np.zeros(18), contacts)
    with pytest.raises(InputError, match="tau must have 18 values"):
        contact_forces(q, np.zeros(18), np.zeros(17), contacts)


def test_gaps_and_rows_equal_the_model_route(hyq):
    """gaps and contact rows by the compiled route against the model's own frame positions and Jacobians
    (tilted plane, sphere feet, a quaternion off the unit sphere by round-off)."""
    from mechsym.contact.hard import Contact, HardContacts, Plane

    contacts, q = hyq
    plane = Plane.tilted(0.3, "x", point=(0.1, -0.2, 0.05))
    hc = HardContacts(contacts.model, [Contact(f, f, 0.02175) for f in hyq_contact.FEET], plane)
    assert hc.c_route() is not None
    model, B = hc.model, hc.B
    nx = hc._nx
    for qq, v, _ in _states(np.random.default_rng(9), q, 5, 0.1):
        pos = np.array([model.frame_position(qq, f) for f in hyq_contact.FEET])
        np.testing.assert_allclose(hc.gaps(qq), (pos - plane.point) @ B[0] - 0.02175, rtol=0, atol=1e-13)
        J = np.array([model.frame_jacobian(qq, f) for f in hyq_contact.FEET])
        rows = np.einsum("ab,nbk->nak", B, J[:, :3] + 0.02175 * np.einsum("ab,nbk->nak", nx, J[:, 3:]))
        np.testing.assert_allclose(hc.jacobian(qq), rows, rtol=0, atol=1e-13)
        np.testing.assert_allclose(hc.rates_normal(qq, v), rows[:, 0] @ v, rtol=0, atol=1e-13)


def test_ctrl_c_ends_a_call_over_many_states(hyq):
    """SIGINT during one C call over many states (a second or more) ends it at once with KeyboardInterrupt (the
    loop polls the flag its handler raises) and puts Python's handler back."""
    import os
    import signal
    import threading
    import time

    contacts, q = hyq
    n = 20000
    Q, V = np.tile(q, (n, 1)), np.zeros((n, 18))
    T = np.tile(np.concatenate([np.zeros(6), np.ones(12)]), (n, 1))
    t0 = time.perf_counter()
    contact_forces(Q[:2000], V[:2000], T[:2000], contacts, mu=0.8)
    per_state = (time.perf_counter() - t0) / 2000
    m = int(min(max(1.5 / per_state, 20000), 150000))   # a call of about 1.5 s (20000 to 150000 states)
    Q, V, T = np.tile(q, (m, 1)), np.zeros((m, 18)), np.tile(T[0], (m, 1))
    before = signal.getsignal(signal.SIGINT)
    timer = threading.Timer(0.2, lambda: os.kill(os.getpid(), signal.SIGINT))
    start = time.perf_counter()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        contact_forces(Q, V, T, contacts, mu=0.8)
    elapsed = time.perf_counter() - start
    timer.join()
    assert elapsed < 0.2 + 0.5 < m * per_state, (elapsed, m * per_state)
    assert signal.getsignal(signal.SIGINT) is before
