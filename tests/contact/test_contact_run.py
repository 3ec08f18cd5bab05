"""Simulation with contact points: located state changes, energy and statics cross-checks, bad input."""
import numpy as np
import pytest

from mechsym.codegen import c_backend
from mechsym.contact import (NO_CONTACT, SLIP, STICK, ContactPoints, GroundContact, gcontact,
                             simulate_contact, static_penetration)
from mechsym import derive
from mechsym.contact.points import classify, contact_signals
from mechsym.contact.spatial_v2 import _laws
from mechsym.core.errors import InputError
from mechsym.core.quaternion import about as quat_about
from mechsym.spatial.floating import FloatingBody

K, D = 1e6, 2000.0
A, B, C = 0.1, 0.06, 0.04  # half sizes of the box


def box(corners):
    """A 1 kg box (half sizes A, B, C) with the given corner points (z = -C: the bottom four)."""
    b = FloatingBody("box")
    b.body(1.0, ((B**2 + C**2) / 3, (A**2 + C**2) / 3, (A**2 + B**2) / 3))
    system = derive(b, backend="numpy")
    pts = {f"k{i}{j}{k}": ("box", (sx * A, sy * B, sz * C))
           for i, sx in enumerate((-1, 1)) for j, sy in enumerate((-1, 1)) for k, sz in enumerate((-1, 1))
           if corners == 8 or sz < 0}
    return system, ContactPoints(system, pts)


def law_states(run, t):
    """The law's own classification at time t, from the dense output."""
    y = run.sample([t])[0]
    pts = run.points
    if pts.nd == 3:
        q, qd = y[:7], y[7:13]
        n_model = 13
    else:
        k = len(pts.system.coordinate_names)
        kin = pts.system.kinematics(y[None, :k])
        q, qd, n_model = kin.q[0], kin.velocities(y[None, k:2 * k])[0], 2 * k
    ground = run.ground
    return pts.evaluate(ground, q, qd, y[n_model:].reshape(pts.nd - 1, pts.n))[5]


def check_timeline(run, eps=1e-9):
    """Every recorded change is a change of the law's classification across its instant."""
    assert run.timeline, "no events"
    for e in run.timeline:
        before, after = law_states(run, e.t - eps)[e.index], law_states(run, e.t + eps)[e.index]
        assert (before, after) == (e.before, e.after), e.describe()
    assert run.stats["unlocated"] == 0


# ---------------------------------------------------------------- the signals are the law's classification

@pytest.mark.parametrize("nd", [2, 3])
def test_signals_classify_like_the_law(nd):
    rng = np.random.default_rng(nd)
    n = 4000
    p = rng.normal(scale=1e-3, size=(nd, n))
    pd = rng.normal(scale=0.5, size=(nd, n))
    u = rng.normal(scale=1e-4, size=(nd - 1, n))
    ground = GroundContact(K, D, 0.4)
    _, _, _, state = _laws(K, D, 0.4, p, pd, u)
    c, s = contact_signals(ground, p, pd, u)
    np.testing.assert_array_equal(classify(c, s), state)
    assert {NO_CONTACT, STICK, SLIP} <= set(state.tolist())


def reference_gcontact(K, D, mu, p, pd, u):
    """spatial_v2's gcontact point by point, its steps as the reference describes them (step 1-7:
    sticking force first, scaled by the ratio onto the cone, slip rate -(ft_s + K r u) / (D r))."""
    nd, n = p.shape
    f, ud, state = np.zeros((nd, n)), (-K / D) * u, np.zeros(n, int)
    for i in range(n):
        z, zd, vt = p[-1, i], pd[-1, i], pd[:-1, i]
        r = np.sqrt(max(0.0, -z))
        fn = r * (-K * z - D * zd)
        if not fn > 0:
            continue
        ft = -r * (K * u[:, i] + D * vt)
        ratio = np.linalg.norm(ft) / (mu * fn) if mu > 0 else (np.inf if np.any(ft) else 0.0)
        if ratio <= 1:
            f[:, i], state[i] = [*ft, fn], STICK
            if mu > 0:
                ud[:, i] = vt
        else:
            fts = ft / ratio
            f[:, i], state[i] = [*fts, fn], SLIP
            if mu > 0:
                ud[:, i] = -(fts + K * r * u[:, i]) / (D * r)
    return f, ud, state


@pytest.mark.parametrize("nd, mu", [(2, 0.4), (3, 0.4), (3, 0.0)])
def test_law_and_held_states_agree_with_the_reference_steps(nd, mu):
    """gcontact (which classifies, then evaluates laws_in_states), and laws_in_states held in the
    reference's own states, reproduce the reference's steps (ft / ratio) to rounding."""
    from mechsym.contact.points import laws_in_states

    rng = np.random.default_rng(10 + nd)
    n = 4000
    p = rng.normal(scale=1e-3, size=(nd, n))
    pd = rng.normal(scale=0.5, size=(nd, n))
    u = rng.normal(scale=1e-4, size=(nd - 1, n))
    f_ref, ud_ref, state_ref = reference_gcontact(K, D, mu, p, pd, u)
    assert {NO_CONTACT, STICK, SLIP} <= set(state_ref.tolist()) or mu == 0
    f, ud, _, state = _laws(K, D, mu, p, pd, u)
    np.testing.assert_array_equal(state, state_ref)
    for f_, ud_ in (laws_in_states(K, D, mu, p, pd, u, state_ref), (f, ud)):
        np.testing.assert_allclose(f_, f_ref, rtol=1e-13, atol=1e-13 * np.abs(f_ref).max())
        np.testing.assert_allclose(ud_, ud_ref, rtol=1e-12, atol=1e-12 * np.abs(ud_ref).max())


def test_direct_law_option_agrees():
    """hold_states=False evaluates gcontact's own classification in every right-hand side: the same
    events, located less sharply (the step across a touchdown feels the contact)."""
    system, points = box(corners=4)
    ground = GroundContact(K, D, 0.5)
    y0 = system.initial_state((0, 0, C + 0.001))
    held = simulate_contact(points, ground, y0, 0.05, rtol=1e-10)
    direct = simulate_contact(points, ground, y0, 0.05, rtol=1e-10, hold_states=False)
    assert [(e.point, e.kind) for e in held.timeline] == [(e.point, e.kind) for e in direct.timeline]
    np.testing.assert_allclose([e.t for e in held.timeline], [e.t for e in direct.timeline], rtol=1e-6)
    assert held.timeline[0].t == pytest.approx(np.sqrt(2 * 0.001 / 9.81), rel=1e-12)


def test_sliding_box_sticks_and_the_audit_sees_unlocated_changes(monkeypatch):
    """A box landing while sliding at 0.3 m/s slips, then sticks (mu g stops it in some 60 ms): the
    slip->stick changes are located. With the stick guard switched off they are not, and the audit of
    the output samples reports the disagreement instead of passing silently."""
    from mechsym.contact import run as run_module

    system, points = box(corners=4)
    ground = GroundContact(K, D, 0.5)
    y0 = system.initial_state((0, 0, C + 0.001), velocity=(0.3, 0, 0))
    run = simulate_contact(points, ground, y0, 0.15, rtol=1e-8, backend="numpy")
    assert run.counts("slip->stick") == 4 and run["n_stick"][-1] == 4
    assert abs(run["vx"][-1]) < 1e-3
    check_timeline(run)
    monkeypatch.setattr(run_module._Guards, "stick_guard", lambda self, t, y: 1.0)
    blind = simulate_contact(points, ground, y0, 0.15, rtol=1e-8, backend="numpy")
    assert blind.counts("slip->stick") == 0 and blind.stats["unlocated"] > 100


# ---------------------------------------------------------------- statics: resting on four points

def test_resting_on_four_points_settles_to_the_static_penetration():
    system, points = box(corners=4)
    ground = GroundContact(K, D, 0.5)
    y0 = system.initial_state((0, 0, C + 0.001))         # 1 mm above, level, at rest
    run = simulate_contact(points, ground, y0, 0.5, rtol=1e-10)
    depth = -(run["z"][-1] - C)
    expected = static_penetration(K, 1.0 * 9.81 / 4)
    assert depth == pytest.approx(expected, rel=1e-6)
    assert run["n_stick"][-1] == 4
    # the four corners touch at one instant and are recorded together
    first = run.timeline[:4]
    assert {e.kind for e in first} == {"contact made"} and len({e.t for e in first}) == 1
    assert first[0].t == pytest.approx(np.sqrt(2 * 0.001 / 9.81), rel=1e-9)
    check_timeline(run)


# ---------------------------------------------------------------- energy: work balances

def motion(run, y):
    """Coordinates, speeds and mechanical energy (kinetic + gravity) at full ODE states y (N, ny)."""
    system = run.points.system
    if run.points.nd == 3:
        return y[:, :7], y[:, 7:13], system.energy(y[:, :13].T, system.params()).sum(axis=0)
    from mechsym.planar.dynamics import energies

    k = len(system.coordinate_names)
    kin = system.kinematics(y[:, :k])
    return kin.q, kin.velocities(y[:, k:2 * k]), energies(system, kin, y[:, k:2 * k]).sum(axis=0)


def piecewise_integral(run, integrand, order=80):
    """The integral over the run of integrand(t, y) -> (N,), exact for a smooth integrand on every piece
    between state changes: Gauss-Legendre per piece, in t = ta + s^2 to absorb the square-root start of a
    touchdown. The integrand sees the point states held on the piece."""
    t_end = run["t"][-1]
    breaks = np.unique(np.concatenate([[0.0], [e.t for e in run.timeline], [t_end]]))
    nodes, weights = np.polynomial.legendre.leggauss(order)
    total = 0.0
    for ta, tb in zip(breaks[:-1], breaks[1:]):
        if tb <= ta:
            continue
        span = np.sqrt(tb - ta)
        s = 0.5 * span * (nodes + 1)
        t = ta + s**2
        total += np.sum(integrand(t, run.sample(t), run.states_at(0.5 * (ta + tb))[0]) * 2 * s * 0.5 * span * weights)
    return total


def point_motion(run, y):
    """Point positions and velocities (N, nd, np) at full ODE states y (N, ny)."""
    q, qd, _ = motion(run, y)
    pv = [run.points.kinematics(qi, qdi) for qi, qdi in zip(q, qd)]
    return np.array([p for p, _ in pv]), np.array([v for _, v in pv])


def damping_balance(run):
    """mu = 0: (energy lost, what the ground's dampers and springs account for).

    While point i is in contact, f_n zdot = -d/dt (2/5 K d^2.5) - D d^0.5 zdot^2 (d = -z, the depth):
    the spring stores V = 2/5 K d^2.5, the damper dissipates D d^0.5 zdot^2. A point leaves the ground
    below its surface (rising faster than the ground recovers), leaving its V to the unloaded ground,
    which its own damper dissipates; one re-entering below the surface loads the ground again. So
    E(0) - E(T) = W_damper + sum_lost V(d) - sum_made V(d) + sum_(in contact at T) V(d).
    """
    K, D = run.ground.stiffness, run.ground.damping

    def damper_power(t, y, state):
        p, v = point_motion(run, y)
        d, zd = np.maximum(0.0, -p[:, -1]), v[:, -1]
        return np.sum(np.where(state != NO_CONTACT, D * np.sqrt(d) * zd**2, 0.0), axis=1)

    def stored_at(t, index):
        p, _ = point_motion(run, run.sample([t]))
        return 0.4 * K * max(0.0, -p[0, -1, index]) ** 2.5

    w_damper = piecewise_integral(run, damper_power)
    left = sum(stored_at(e.t, e.index) for e in run.timeline if e.kind == "contact lost")
    loaded = sum(stored_at(e.t, e.index) for e in run.timeline if e.kind == "contact made")
    t_end = run["t"][-1]
    y_ends = run.sample([0.0, t_end])
    _, _, energy = motion(run, y_ends)
    held = sum(stored_at(t_end, i) for i in np.flatnonzero(run.states_at(t_end)[0] != NO_CONTACT))
    return energy[0] - energy[1], w_damper, left, loaded, held


def test_frictionless_bounce_loses_exactly_the_damping_work():
    """3-D: a box tumbling onto the ground on its eight corners, mu = 0: E(0) - E(T) = W_damper + the
    elastic energy left in (minus taken from) the ground at separations (entries), to 1e-6."""
    system, points = box(corners=8)
    ground = GroundContact(K, D, 0.0)
    y0 = system.initial_state((0, 0, 0.15), quat_xyzw=quat_about((1, 0.5, 0), 0.4), velocity=(0.3, 0, -1.0),
                                  omega=(2.0, -1.0, 3.0))
    run = simulate_contact(points, ground, y0, 0.6, rtol=1e-10)
    lost, w_damper, left, loaded, held = damping_balance(run)
    assert lost > 1.0 and left > 0.01 and w_damper > 1.0
    assert abs(lost - (w_damper + left - loaded + held)) <= 1e-6 * lost
    # frictionless: no state but slip or none, the deflections stay zero
    assert all(e.after in (NO_CONTACT, SLIP) for e in run.timeline)
    check_timeline(run)


def test_frictionless_chain_loses_exactly_the_damping_work():
    """2-D: the three-link chain bouncing on the frictionless ground, the same balance to 1e-6."""
    from mechanisms import chain3

    run = chain3.simulate(t_end=0.8, rtol=1e-10, mu=0.0)
    lost, w_damper, left, loaded, held = damping_balance(run)
    assert run.counts("contact lost") >= 2 and lost > 1.0 and left > 1e-3
    assert abs(lost - (w_damper + left - loaded + held)) <= 1e-6 * lost
    check_timeline(run)


# ---------------------------------------------------------------- the planar example

@pytest.fixture(scope="module")
def chain_run():
    from mechanisms import chain3

    return chain3.simulate(t_end=0.75, rtol=1e-10)


def test_chain_falls_onto_the_ground(chain_run):
    run = chain_run
    t = run
    assert set(t.names) >= {"theta1", "theta2d", "B.ux", "C.y", "n_contact", "n_stick", "n_slip"}
    kinds = {e.kind for e in run.timeline}
    assert {"contact made", "contact lost"} <= kinds
    assert all(e.point in ("B", "C") for e in run.timeline)   # A stays 0.5 m up
    first = run.timeline[0]
    assert first.kind == "contact made" and 0.5 < first.t < 0.6
    # compliant: the points strike at some m/s and go about a centimetre into the ground
    assert -0.03 < min(t["B.y"].min(), t["C.y"].min()) < -0.001
    assert t["A.y"].min() > 0.49
    check_timeline(run)


def test_chain_counts_match_the_timeline(chain_run):
    run = chain_run
    t = run
    assert np.all(t["n_contact"] == t["n_stick"] + t["n_slip"])
    states = run.states_at(t["t"])
    np.testing.assert_array_equal(t["n_contact"], np.sum(states != NO_CONTACT, axis=1))


def test_chain_energy_lost_is_the_work_of_the_ground(chain_run):
    """mu = 0.5: the chain's mechanical energy (derived from the declaration) falls by exactly the work
    that the point forces of gcontact do on the point velocities, sum_i f_i . v_i integrated (to 1e-6):
    an independent check of J^T f and of the planar dynamics with the contact load."""
    run = chain_run
    ground = run.ground

    def power(t, y, state):
        p, v = point_motion(run, y)
        n = run.points.n
        out = np.empty(len(t))
        for j in range(len(t)):
            f, _, _ = gcontact(ground.stiffness, ground.damping, ground.mu, p[j], v[j],
                               y[j, -n:].reshape(1, n))
            out[j] = np.sum(f * v[j])
        return out

    work = piecewise_integral(run, power)
    _, _, energy = motion(run, run.sample([0.0, run["t"][-1]]))
    assert run.counts("stick->slip") + run.counts("slip->stick") >= 1 and work < -1.0
    assert abs((energy[1] - energy[0]) - work) <= 1e-6 * abs(work)


def test_plain_simulate_with_the_contact_load_agrees():
    """mechsym.planar.simulate with ContactPoints.load (the law evaluated directly, no events) follows the same
    motion as the event runner with held states."""
    from mechanisms import chain3
    from mechsym.planar.simulate import simulate

    system, points, ground = chain3.model()
    plain = simulate(system, [0, 0, 0], [0, 0, 0], 0.6, rtol=1e-9, load=points.load(ground), state0=np.zeros(3),
                     state_names=points.deflection_names(), method="RK45")
    run = chain3.simulate(t_end=0.6, rtol=1e-9)
    assert run.timeline and run.timeline[0].t < 0.6
    for name in ("theta1", "theta2", "theta3", "theta3d", "B.ux"):
        assert np.max(np.abs(plain[name] - run[name])) <= 1e-5 * np.max(np.abs(run[name]))


@pytest.fixture
def chain3_command():
    """`mechsym chain3`, as the command line runs it."""
    from mechsym.app.cli import main

    return main


def test_chain_command(chain3_command, tmp_path, capsys, plotted):
    """The command's CSV, timeline and figure; the figure draws the heights, paths and contact counts of the
    CSV (read back: the same numbers)."""
    from mechsym.core.results import read_csv

    out, events, picture = tmp_path / "out" / "chain.csv", tmp_path / "events.csv", tmp_path / "chain.png"
    code = chain3_command(["chain3", "--t-end", "0.6", "--dt", "0.01", "--out", str(out), "--timeline", str(events),
                           "--plot", str(picture)])
    assert code == 0 and "point state changes" in capsys.readouterr().out
    table = read_csv(out)
    assert table.names[:7] == ["t", "theta1", "theta2", "theta3", "theta1d", "theta2d", "theta3d"]
    assert {"A.x", "C.y", "B.ux", "n_contact", "n_stick", "n_slip"} <= set(table.names) and len(table) == 61
    assert (table["A.y"][0], table["C.x"][0]) == pytest.approx((1.5, 3.0))
    timeline = read_csv(events)
    assert len(timeline) >= 2 and timeline["before"][0] == 0 and 0.5 < timeline["t"][0] < 0.6
    assert picture.stat().st_size > 10_000
    lines = {label: (x, y) for _, label, x, y in plotted["chain.png"]}
    for label, (x, y) in (("A.y", ("t", "A.y")), ("C.y", ("t", "C.y")), ("n_contact", ("t", "n_contact")),
                          ("path of C", ("C.x", "C.y"))):
        assert np.array_equal(lines[label][0], table[x]) and np.array_equal(lines[label][1], table[y]), label


@pytest.mark.skipif(c_backend.compiler() is None, reason="no C compiler")
def test_chain_command_on_the_c_backend_agrees_with_numpy(chain3_command, tmp_path, capsys):
    """`--backend c` (configuration, J, a0 and the applied forces in one generated ms_track call per
    state) follows the numpy run: the same point state changes, every column to 1e-6."""
    from mechanisms import chain3
    from mechsym.core.results import read_csv

    assert chain3.model(backend="c")[0].backend.name == "c"
    tables = {}
    for backend in ("numpy", "c"):
        out, events = tmp_path / f"{backend}.csv", tmp_path / f"{backend}-events.csv"
        code = chain3_command(["chain3", "--t-end", "0.6", "--dt", "0.01", "--backend", backend, "--out", str(out),
                               "--timeline", str(events)])
        assert code == 0, capsys.readouterr().err
        tables[backend] = read_csv(out), read_csv(events)
    (c, c_events), (ref, ref_events) = tables["c"], tables["numpy"]
    assert len(ref_events) >= 2 and list(c_events["after"]) == list(ref_events["after"])
    assert np.allclose(c_events["t"], ref_events["t"], rtol=0, atol=1e-6)
    for name in ref.names:
        assert np.max(np.abs(c[name] - ref[name])) <= 1e-6 * max(np.max(np.abs(ref[name])), 1.0), name


@pytest.mark.parametrize("args, message", [
    (["--theta0", "0,0"], "expected 3 comma-separated values"),
    (["--theta0=-90deg,0,x"], "not an angle"),
    (["--mu=-0.5"], "mu must be a finite non-negative number"),
    (["--stiffness", "0"], "stiffness must be a finite positive number"),
    (["--damping=-1"], "damping must be a finite positive number"),
    (["--rtol", "0"], "--rtol must be positive"),
    (["--t-end", "nan"], "not finite"),
    (["--backend", "fortran"], "invalid choice: 'fortran'"),
])
def test_chain_command_bad_input(chain3_command, tmp_path, capsys, args, message):
    code = chain3_command(["chain3", "--out", str(tmp_path / "x.csv"), *args])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


# ---------------------------------------------------------------- bad input

def test_bad_run_input():
    system, points = box(corners=4)
    ground = GroundContact(K, D, 0.5)
    y0 = system.initial_state((0, 0, 0.1))
    with pytest.raises(InputError, match="13 values"):
        simulate_contact(points, ground, y0[:12], 1.0)
    bad = y0.copy()
    bad[2] = np.nan
    with pytest.raises(InputError, match="state0 must be finite"):
        simulate_contact(points, ground, bad, 1.0)
    with pytest.raises(InputError, match="u0 must have shape"):
        simulate_contact(points, ground, y0, 1.0, u0=np.zeros((3, 4)))
    with pytest.raises(InputError, match="u0 must be finite"):
        simulate_contact(points, ground, y0, 1.0, u0=np.full((2, 4), np.nan))
    with pytest.raises(InputError, match="t_end must be positive"):
        simulate_contact(points, ground, y0, 0.0)
    with pytest.raises(InputError, match="dt must be in"):
        simulate_contact(points, ground, y0, 1.0, dt=2.0)
    with pytest.raises(InputError, match="rtol must be positive"):
        simulate_contact(points, ground, y0, 1.0, rtol=-1e-6)
    with pytest.raises(InputError, match="GroundContact"):
        simulate_contact(points, (K, D, 0.5), y0, 1.0)
    with pytest.raises(InputError, match="ContactPoints"):
        simulate_contact(system, ground, y0, 1.0)
    with pytest.raises(InputError, match="forces apply to planar"):
        simulate_contact(points, ground, y0, 1.0, forces={"torque": 1.0})
    for k, d, mu, what in ((0.0, D, 0.5, "stiffness"), (K, -1.0, 0.5, "damping"), (K, D, -0.1, "mu"),
                           (K, np.nan, 0.5, "damping")):
        with pytest.raises(InputError, match=what):
            GroundContact(k, d, mu)


def test_bad_planar_state():
    from mechanisms import chain3

    system, points, ground = chain3.model()
    with pytest.raises(InputError, match=r"\[theta, thetad\] \(6 values\)"):
        simulate_contact(points, ground, [0.0, 0.0, 0.0], 1.0)
    with pytest.raises(InputError, match="unknown coordinate force"):
        simulate_contact(points, ground, np.zeros(6), 1.0, forces={"motor": 1.0})
