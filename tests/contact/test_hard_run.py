"""Event-driven simulation with hard contacts: closed forms, energy balances and the compliant limit."""
import numpy as np
import pytest

from mechsym.contact.box import RigidBox
from mechsym.contact.hard import HardContacts, Plane
from mechsym.contact.hard_run import pd_hold, simulate_hard
from mechsym.core.errors import InputError

BOTTOM = ["corner++-", "corner+--", "corner-+-", "corner---"]
G = 9.81


@pytest.fixture(scope="module")
def chain():
    from mechanisms import chain3_hard

    model = chain3_hard.Chain3Tree()
    return model, chain3_hard.contacts(model)


def flat_box():
    box = RigidBox(2.0, (0.4, 0.3, 0.2))
    return box, HardContacts(box, {n: n for n in BOTTOM})


def states(run, k):
    t = run
    model = run.contacts.model
    q = np.array([t[n][k] for n in getattr(model, "q_names", [f"q{i}" for i in range(model.nq)])])
    v = np.array([t[n][k] for n in getattr(model, "v_names", [f"v{i}" for i in range(model.nv)])])
    return q, v


@pytest.mark.parametrize("e", [0.0, 0.5])
def test_flat_box_drop_closed_form(e):
    """Dropped flat from h: impact at sqrt(2h/g) with v = sqrt(2 g h); every corner takes m v (1 + e)/4; it
    bounces with e v, each flight e times the last, until the chatter rule makes the contact persistent;
    then every corner carries m g / 4."""
    box, hc = flat_box()
    h = 0.5
    run = simulate_hard(hc, [0, 0, 0.1 + h, 0, 0, 0, 1], np.zeros(6), 1.2, e=e, rtol=1e-11)
    v = np.sqrt(2 * G * h)
    first = run.impacts[0]
    np.testing.assert_allclose(first.t, np.sqrt(2 * h / G), rtol=1e-9)
    np.testing.assert_allclose(first.v_minus[2], -v, rtol=1e-9)
    np.testing.assert_allclose(first.Lam[:, 0], box.mass * v * (1 + e) / 4, rtol=1e-9)
    np.testing.assert_allclose(first.v_plus[2], e * v, rtol=1e-9, atol=1e-12)
    if e > 0:
        second = run.impacts[1]
        np.testing.assert_allclose(second.t - first.t, 2 * e * v / G, rtol=1e-8)
        np.testing.assert_allclose(second.Lam[:, 0], box.mass * e * v * (1 + e) / 4, rtol=1e-8)
        persistent = [ev for ev in run.timeline if ev.kind == "persistent"]
        assert persistent and {ev.contact for ev in persistent} == set(BOTTOM)
        # the last recorded rebound is the first one slower than the chatter speed
        speeds = [im.v_minus[2] * -e for im in run.impacts]
        assert speeds[-1] < 1e-3 <= speeds[-2]
    end = run
    for n in BOTTOM:
        np.testing.assert_allclose(end[f"{n}.fn"][-1], box.mass * G / 4, rtol=1e-9)
        assert end[f"{n}.impulse"].sum() == pytest.approx(sum(im.Lam[BOTTOM.index(n), 0] for im in run.impacts))
    np.testing.assert_allclose(end["q2"][-1], 0.1, atol=1e-12)


def test_elastic_drop_conserves_energy():
    """A tilted, spinning box bouncing with e = 1, frictionless, tau = 0: energy constant to 1e-9 across
    the impacts (single and multiple corners)."""
    box = RigidBox(1.5, (0.4, 0.3, 0.2))
    hc = HardContacts(box, {n: n for n in box.frames if n != "centre"})
    axis = np.array([1.0, 2.0, 0.5]) / np.linalg.norm([1.0, 2.0, 0.5])
    q0 = np.concatenate([[0, 0, 0.6], np.sin(0.2) * axis, [np.cos(0.2)]])
    v0 = np.array([0.3, 0, 0, 1.0, -2.0, 0.5])
    run = simulate_hard(hc, q0, v0, 1.5, e=1.0, rtol=1e-12, atol=1e-12)
    assert len(run.impacts) >= 3
    E = np.array([box.energy(*states(run, k)) for k in range(len(run))])
    assert np.abs(E - E[0]).max() <= 1e-9 * E[0]
    for im in run.impacts:
        assert box.energy(im.q, im.v_plus) == pytest.approx(box.energy(im.q, im.v_minus), rel=1e-12)


def test_plastic_impacts_lose_exactly_the_closed_form(chain):
    """e = 0, frictionless, tau = 0: each impact loses 1/2 zeta'-^T (J H^-1 J^T)^-1 zeta'- over the contacts
    it acts on; the energy at the end equals the start minus those losses."""
    model, hc = chain
    run = simulate_hard(hc, np.zeros(3), np.zeros(3), 1.5, e=0.0, rtol=1e-11, atol=1e-11)
    assert len(run.impacts) >= 2
    lost = 0.0
    for im in run.impacts:
        on = im.Lam[:, 0] > 0
        Jn = hc.jacobian(im.q)[on, 0, :]
        W = Jn @ np.linalg.solve(model.mass_matrix(im.q), Jn.T)
        zd = Jn @ im.v_minus
        loss = 0.5 * zd @ np.linalg.solve(W, zd)
        np.testing.assert_allclose(model.energy(im.q, im.v_minus) - model.energy(im.q, im.v_plus), loss, rtol=1e-9)
        lost += loss
    E0 = model.energy(*states(run, 0))
    E1 = model.energy(*states(run, len(run) - 1))
    np.testing.assert_allclose(E1, E0 - lost, rtol=1e-8)
    assert lost > 0.3 * E0


def test_sliding_box_stops_at_the_closed_form_instant():
    """A box sliding flat with friction along s: the kinetic force lies on the pyramid |ft1| + |ft2| <= mu fn
    (k = 4), so it is mu fn rho s with rho = 1/(|s1| + |s2|); the box decelerates at mu g rho until its speed
    falls to the slow-slip speed v_s (3e-4 of sqrt(g l), l = 0.5 m the diagonal of its contacts), where the
    cone holds it: it sticks at (v - v_s)/(mu g rho) after (v^2 - v_s^2)/(2 mu g rho), the last 1/2 m v_s^2
    removed by the stop."""
    box, hc = flat_box()
    mu = 0.5
    v_s = 3e-4 * np.sqrt(G * 0.5)
    for vx, vy in ((2.0, 0.5), (-1.5, 0.0)):
        run = simulate_hard(hc, [0, 0, 0.1, 0, 0, 0, 1], [vx, vy, 0, 0, 0, 0], 1.0, mu=mu, rtol=1e-11)
        assert run.stats["slow_slip"] == pytest.approx(v_s, rel=1e-12)
        speed = np.hypot(vx, vy)
        rho = speed / (abs(vx) + abs(vy))
        stops = [ev for ev in run.timeline if ev.kind == "slip->stick"]
        assert {ev.contact for ev in stops} == set(BOTTOM) and len({ev.t for ev in stops}) == 1
        np.testing.assert_allclose(stops[0].t, (speed - v_s) / (mu * G * rho), rtol=1e-6)
        np.testing.assert_allclose(np.hypot(run["q0"][-1], run["q1"][-1]), (speed ** 2 - v_s ** 2) / (2 * mu * G * rho),
                                   rtol=1e-6)
        seg = run.hybrid.segments
        k = next(i for i in range(1, len(seg)) if seg[i].t0 == stops[0].t)
        (q0, v0), (q1, v1) = (np.split(y, [7]) for y in (seg[k - 1].y1, seg[k].y0))
        assert box.energy(q0, v0) - box.energy(q1, v1) == pytest.approx(0.5 * box.mass * v_s ** 2, rel=1e-6)
        k = len(run) // 4                              # sliding: |ft1| + |ft2| = mu fn, opposing the motion
        fn = np.array([run[f"{n}.fn"][k] for n in BOTTOM])
        ft = np.array([[run[f"{n}.ft1"][k], run[f"{n}.ft2"][k]] for n in BOTTOM])
        np.testing.assert_allclose(np.abs(ft).sum(axis=1), mu * fn, rtol=1e-9)
        np.testing.assert_allclose(fn.sum(), box.mass * G, rtol=1e-9)
        np.testing.assert_allclose(ft / np.linalg.norm(ft, axis=1)[:, None], np.tile([-vx / speed, -vy / speed], (4, 1)), atol=1e-9)
        for n in BOTTOM:                                     # at rest: no friction needed
            assert abs(run[f"{n}.ft1"][-1]) < 1e-9


def test_separating_acceleration_event():
    """A box resting flat under a lift that equals its weight at t = 0 and then falls, m g (1 - t): the LCP
    leaves the corners free (zero force, zero separating acceleration); their normal acceleration turning
    negative is located at once (where it passes the guard's 1e-9 m/s^2 level: t = 1e-9 / g) and the corners
    are in contact from there, without an impact and without sinking (the gain guard alone would find them
    1e-10 m below the plane 0.4 ms later and apply an impulse)."""
    box = RigidBox(2.0, (0.4, 0.3, 0.2))
    hc = HardContacts(box, {n: n for n in ("corner++-", "corner+--", "corner-+-", "corner---")})
    m, g = box.mass, 9.81
    run = simulate_hard(hc, [0, 0, 0.1, 0, 0, 0, 1], np.zeros(6), 0.01,
                        controller=lambda t, q, v: np.array([0, 0, m * g * (1 - t), 0, 0, 0]))
    first = run.events[0]
    assert first.transition == "separate" and first.t == pytest.approx(1e-9 / g, rel=1e-3)
    assert {e.kind for e in run.timeline} == {"contact made"} and not run.impacts
    assert run.stats["max_drift"] == 0.0
    np.testing.assert_allclose(run["corner++-.fn"][-1], m * g * 0.01 / 4, rtol=1e-9)   # m g t / 4


def test_default_controller_is_the_pd_hold(chain):
    """On a model with actuated joints the default controller is tau = 300 (q0 - q) - 10 v: the run equals
    a plain integration of H v' + C = tau (far above the ground, no contact)."""
    from scipy.integrate import solve_ivp

    from mechanisms import chain3_hard

    class Driven(chain3_hard.Chain3Tree):
        actuated = (0, 1, 2)

    model = Driven()
    hc = chain3_hard.contacts(model, Plane((0, -10.0, 0), (0, 1, 0)))
    q0 = np.array([0.2, -0.1, 0.3])
    run = simulate_hard(hc, q0, np.zeros(3), 1.0, rtol=1e-11, atol=1e-11)
    assert not run.timeline

    def rhs(t, y):
        q, v = y[:3], y[3:]
        return np.concatenate([v, np.linalg.solve(model.mass_matrix(q), 300 * (q0 - q) - 10 * v - model.bias(q, v))])

    ref = solve_ivp(rhs, (0, 1), np.concatenate([q0, np.zeros(3)]), rtol=1e-11, atol=1e-11, dense_output=True)
    np.testing.assert_allclose(np.column_stack([run[n] for n in model.q_names]), ref.sol(run["t"])[:3].T,
                               atol=1e-8)
    tau = pd_hold(model, np.zeros(3), kp=100.0, kd=0.0)(0.0, np.ones(3), np.ones(3))
    np.testing.assert_allclose(tau, -100.0)


def test_hard_is_the_limit_of_the_compliant_chain(chain):
    """chain3, frictionless: spatial_v2's contact at K = 1e4 .. 1e8 with D = 2 ms K (an overdamped ground:
    no bounce) against the hard model with e = 0; the largest link-angle error over 1 s falls steadily."""
    from mechanisms import chain3

    model, hc = chain
    hard = simulate_hard(hc, np.zeros(3), np.zeros(3), 1.0, e=0.0, rtol=1e-10)
    H = np.column_stack([hard[f"theta{i}"] for i in (1, 2, 3)])
    errors = []
    for K in (1e4, 1e5, 1e6, 1e7, 1e8):
        run = chain3.simulate(t_end=1.0, mu=0.0, stiffness=K, damping=2e-3 * K, backend="c", rtol=1e-8)
        C = np.column_stack([run[f"theta{i}"] for i in (1, 2, 3)])
        errors.append(np.abs(C - H).max())
    assert np.all(np.diff(errors) < 0), errors
    assert errors[-1] < 1e-2 and errors[0] / errors[-1] > 100


def test_chain_frames_match_the_declared_mechanism(chain):
    """The adapter's frames A, B, C are where mechsym's own kinematics of chain3 puts them."""
    from mechanisms import chain3

    model, hc = chain
    run = chain3.simulate(t_end=0.3, mu=0.0, backend="numpy")
    for k in (0, 150, 300):
        q = np.array([run[f"theta{i}"][k] for i in (1, 2, 3)])
        for n in "ABC":
            np.testing.assert_allclose(model.frame_position(q, n)[:2], [run[f"{n}.x"][k], run[f"{n}.y"][k]],
                                       atol=1e-12)


def test_bad_input(chain):
    model, hc = chain
    with pytest.raises(InputError, match="mu of contact 'A' must be >= 0"):
        simulate_hard(hc, np.zeros(3), np.zeros(3), 1.0, mu=-1)
    with pytest.raises(InputError, match=r"restitution e of contact 'A' must be in \[0, 1\]"):
        simulate_hard(hc, np.zeros(3), np.zeros(3), 1.0, e=1.5)
    with pytest.raises(InputError, match=r"below the plane: B \(-0.364 m\), C"):
        simulate_hard(hc, [-1.2, 0, 0], np.zeros(3), 1.0)
    with pytest.raises(InputError, match="q0 must have 3 values"):
        simulate_hard(hc, np.zeros(2), np.zeros(3), 1.0)
