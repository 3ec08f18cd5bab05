"""spatial_v2's example 7, the rolling polygonal disc: the model, the run and the command."""
import numpy as np
import pytest

from mechsym.app.cli import main
from mechsym.contact import Fpt, gcontact
from mechsym.core.results import read_csv
from mechsym.core.quaternion import rotation_matrix

COLUMNS = "t,x,y,z,qw,qx,qy,qz,vx,vy,vz,wx,wy,wz,n_contact,n_stick,n_slip".split(",")


def skew(a):
    return np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])


class SpatialV2Port:
    """Example 7 ported by hand along spatial_v2's own route, sharing nothing with mechsym but the law
    (gcontact and Fpt, checked against hand values in test_spatial_v2): the disc's vertices computed here,
    point positions and velocities as gcPosVel does (Xpt, Vpt), point forces summed about the ORIGIN
    with Fpt, and FDfb's Newton-Euler in fixed-base coordinates: the spatial velocity (w, v_O) with v_O
    the velocity of the body point at the origin, the spatial inertia about the origin, and the spatial
    acceleration a = I^-1 (f - v x* I v) + a_gravity, which is d/dt (w, v_O) in a fixed frame.

    State: [q (body-to-world quaternion, scalar first), r (centre), w (world), v_O, u (2 x np)]."""

    def __init__(self, sides=16, radius=0.05, thickness=0.01, density=3000.0, K=1e6, D=2000.0, mu=0.1, g=9.81):
        a = 2 * np.pi * np.arange(sides) / sides
        face = lambda y: np.array([radius * np.sin(a), np.full(sides, y), radius * np.cos(a)])
        self.local = np.hstack([face(-thickness / 2), face(thickness / 2)])
        self.n = 2 * sides
        self.m = np.pi * radius**2 * thickness * density
        side = self.m * (3 * radius**2 + thickness**2) / 12
        self.inertia = np.diag([side, self.m * radius**2 / 2, side])
        self.K, self.D, self.mu = K, D, mu
        self.gravity = np.array([0.0, 0.0, 0.0, 0.0, 0.0, -g])

    def initial_state(self, twist=0.18, height=0.1, speed=0.6):
        r, w = np.array([0.0, 0.0, height]), np.zeros(3)
        v_o = np.array([speed, 0.0, 0.0]) - np.cross(w, r)
        q = [np.cos(twist / 2), 0.0, 0.0, np.sin(twist / 2)]
        return np.concatenate([q, r, w, v_o, np.zeros(2 * self.n)])

    @staticmethod
    def rotation(q):
        w, x, y, z = q / np.linalg.norm(q)
        return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                         [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                         [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])

    def posvel(self, x):
        r, w, v_o = x[4:7], x[7:10], x[10:13]
        p = r[:, None] + self.rotation(x[:4]) @ self.local
        return p, v_o[:, None] + np.cross(w, p, axis=0)

    def rhs(self, t, x):
        q, r, w, v_o = x[:4], x[4:7], x[7:10], x[10:13]
        p, pd = self.posvel(x)
        f, ud, _ = gcontact(self.K, self.D, self.mu, p, pd, x[13:].reshape(2, self.n))
        rot = self.rotation(q)
        c = skew(r)
        inertia = np.block([[rot @ self.inertia @ rot.T + self.m * c @ c.T, self.m * c],
                            [self.m * c.T, self.m * np.eye(3)]])
        v = np.concatenate([w, v_o])
        crf = np.block([[skew(w), skew(v_o)], [np.zeros((3, 3)), skew(w)]])
        a = np.linalg.solve(inertia, Fpt(f, p).sum(axis=1) - crf @ (inertia @ v)) + self.gravity
        qw, qx, qy, qz = q
        wx, wy, wz = w
        qdot = 0.5 * np.array([-wx * qx - wy * qy - wz * qz, wx * qw + wy * qz - wz * qy,
                               wy * qw - wx * qz + wz * qx, wz * qw + wx * qy - wy * qx])   # (0, w) (x) q
        return np.concatenate([qdot, v_o + np.cross(w, r), a, ud.ravel()])

    def world(self, x):
        """Centre r, its velocity v_O + w x r and w (each 3 x N) from states x (ny, N)."""
        r, w = x[4:7], x[7:10]
        return r, x[10:13] + np.cross(w, r, axis=0), w


@pytest.fixture(scope="module")
def disc():
    from mechanisms import polydisc

    return polydisc.model()


@pytest.fixture(scope="module")
def full_run():
    from mechanisms import polydisc

    return polydisc.simulate()


def test_the_disc_is_example_7(disc):
    system, points, ground = disc
    r, t, rho = 0.05, 0.01, 3000.0
    m = np.pi * r**2 * t * rho
    assert m == pytest.approx(0.235619449, rel=1e-9)
    values = system.body.resolve_parameters()
    subs = {system.body.parameters[n].symbol: v for n, v in values.items()}
    assert float(system.body.mass.subs(subs)) == pytest.approx(m, rel=1e-14)
    inertia = np.array(system.body.inertia.subs(subs), dtype=float)
    np.testing.assert_allclose(np.diag(inertia), [m * (3 * r**2 + t**2) / 12, m * r**2 / 2, m * (3 * r**2 + t**2) / 12],
                               rtol=1e-14)
    assert (ground.stiffness, ground.damping, ground.mu) == (1e6, 2000.0, 0.1)
    assert points.n == 32 and points.names[0] == "m0" and points.names[16] == "p0"
    k = np.arange(16)
    a = 2 * np.pi * k / 16
    np.testing.assert_allclose(points.local[:, :16], [r * np.sin(a), np.full(16, -t / 2), r * np.cos(a)], atol=1e-15)
    np.testing.assert_allclose(points.local[:, 16:], [r * np.sin(a), np.full(16, t / 2), r * np.cos(a)], atol=1e-15)


def test_initial_state(disc):
    from mechanisms import polydisc

    system, points, _ = disc
    y0 = polydisc.initial_state(system)
    cols = system.world_columns(y0)
    assert (cols["z"], cols["vx"], cols["qw"], cols["qz"]) == pytest.approx((0.1, 0.6, np.cos(0.09), np.sin(0.09)))
    p = points.positions(y0[:7])
    assert p[2].min() == pytest.approx(0.05, abs=1e-15)            # vertex 8 points straight down
    assert set(np.flatnonzero(np.isclose(p[2], 0.05))) == {8, 24}
    axis = rotation_matrix(y0[3:7])[:, 1]                            # body y = the disc axis, yawed 0.18
    np.testing.assert_allclose(axis, [-np.sin(0.18), np.cos(0.18), 0], atol=1e-15)


def test_falls_and_touches_down_with_both_faces_at_once():
    from mechanisms import polydisc

    run = polydisc.simulate(t_end=0.12)
    first = run.timeline[:2]
    t_hit = np.sqrt(2 * 0.05 / 9.81)                                 # free fall of the lowest vertex
    assert {e.point for e in first} == {"m8", "p8"}
    assert all(e.kind == "contact made" and e.t == pytest.approx(t_hit, rel=1e-9) for e in first)
    assert first[0].t == first[1].t


def test_example_7_rolls_with_a_wobble(full_run):
    run = full_run
    t = run
    assert run.stats["unlocated"] == 0 and run.stats["events"] > 50
    after = t["t"] > 0.3
    assert t["x"][-1] > 0.3 and abs(t["y"][-1]) < 0.05               # it rolls forward
    assert np.all(np.abs(t["z"][after] - 0.05) < 0.002)              # upright, centre at about R
    assert np.mean(t["n_contact"][after] >= 1) > 0.9                 # on the ground, but for small hops
    assert t["n_slip"].max() >= 1 and t["n_stick"].max() >= 1
    q = np.array([t[c] for c in ("qx", "qy", "qz", "qw")])
    np.testing.assert_allclose(np.linalg.norm(q, axis=0), 1, atol=1e-12)
    tilt = rotation_matrix(q.T)[:, 2, 1]                                  # world z of the disc axis
    assert 0.01 < np.abs(tilt[after]).max() < 0.3                    # a wobble, not a fall
    rolling = after & (t["n_contact"] >= 1)
    assert 0.2 < np.mean(t["n_slip"][rolling] >= 1) < 0.8            # sticking and slipping in turn
    kinds = {e.kind for e in run.timeline}
    assert kinds == {"contact made", "contact lost", "stick->slip", "slip->stick"}


def test_agrees_with_spatial_v2s_route():
    """Through the fall, the touchdown on both faces, the bounce and the first rolling impacts (0.3 s),
    mechsym (centre-of-mass Newton-Euler with a body-frame angular velocity, generated J^T f, held states
    and located events) follows the hand port of spatial_v2's route (origin-based spatial algebra, gcontact
    classifying by itself, no events) to 1e-6, norm-wise per quantity, both at rtol 1e-10; the
    difference shrinks with the tolerance (at 1e-8 it is some 1e-5), so it is integration error."""
    from scipy.integrate import solve_ivp

    from mechanisms import polydisc

    port = SpatialV2Port()
    t_end = 0.3
    sol = solve_ivp(port.rhs, (0.0, t_end), port.initial_state(), method="RK45", rtol=1e-10, atol=1e-10,
                    dense_output=True, max_step=2e-3)
    assert sol.status == 0
    run = polydisc.simulate(t_end=t_end, rtol=1e-10)
    t = run
    r, v, w = port.world(sol.sol(t["t"]))
    assert run.counts("contact made") >= 4 and run.counts("stick->slip") >= 1
    for k, axis in enumerate("xyz"):
        assert np.max(np.abs(t[axis] - r[k])) <= 1e-6 * np.max(np.abs(r))
        assert np.max(np.abs(t["v" + axis] - v[k])) <= 1e-6 * np.max(np.abs(v))
        assert np.max(np.abs(t["w" + axis] - w[k])) <= 1e-6 * np.max(np.abs(w))


def test_no_state_change_between_events(full_run):
    """Every state change is located: inside every integration step (at a quarter, half and three
    quarters of it, on the dense output) the law's own classification is the state held on the piece."""
    from mechsym.contact.points import classify

    run = full_run
    points, ground = run.points, run.ground
    checked = 0
    for seg, held in zip(run.hybrid.segments, run.seg_states):
        if seg.solution is None:
            continue
        ts = seg.solution.ts
        for frac in (0.25, 0.5, 0.75):
            y = seg.solution(ts[:-1] + frac * np.diff(ts))
            for k in range(y.shape[1]):
                law = classify(*points.signals(ground, y[:7, k], y[7:13, k], y[13:, k]))
                np.testing.assert_array_equal(law, held, err_msg=f"t = {ts[0]}")
                checked += 1
    assert checked > 2000


def test_twist_022_falls_over():
    """The DocBlock: with a twist of 0.22 rad the disc falls over, and slips as it falls (at 0.18 rad
    it rolls upright, sticking and slipping in turn)."""
    from mechanisms import polydisc

    run = polydisc.simulate(twist=0.22)
    t = run
    q = np.array([t[c][-1] for c in ("qx", "qy", "qz", "qw")])
    assert abs(rotation_matrix(q)[2, 1]) > 0.99 and t["z"][-1] == pytest.approx(0.005, abs=5e-4)
    tilt = np.degrees(np.abs(polydisc.axis_angles(t)[0]))
    falling = (tilt > 10) & (tilt < 80) & (t["n_contact"] >= 1)
    assert falling.sum() > 100 and np.mean(t["n_slip"][falling] >= 1) > 0.9
    assert t["n_contact"][-1] == 16 and t["n_stick"][-1] == 16            # lying on one face, at rest


def test_plot(full_run, tmp_path, plotted):
    """The figure draws the run's height, rates and contact counts against its time column."""
    from mechanisms import polydisc

    tilt, heading = polydisc.axis_angles(full_run)
    assert heading[0] == pytest.approx(0.18, abs=1e-12) and tilt[0] == pytest.approx(0.0, abs=1e-12)
    polydisc.plot(full_run, tmp_path / "disc.png")
    assert (tmp_path / "disc.png").stat().st_size > 10_000
    lines = {label: (x, y) for _, label, x, y in plotted["disc.png"]}
    for label, column in (("z (centre)", "z"), ("vx", "vx"), ("wz", "wz"), ("n_contact", "n_contact"),
                          ("n_slip", "n_slip")):
        x, y = lines[label]
        assert np.array_equal(x, full_run["t"]) and np.array_equal(y, full_run[column]), label
    assert np.allclose(lines["tilt of the axis"][1], np.degrees(tilt), rtol=1e-15, atol=0)


def test_command_writes_the_issue_columns(tmp_path, capsys):
    out, timeline = tmp_path / "sub" / "disc.csv", tmp_path / "events.csv"
    code = main(["polydisc", "--t-end", "0.12", "--dt", "0.001", "--out", str(out), "--timeline", str(timeline)])
    assert code == 0
    table = read_csv(out)
    assert table.names == COLUMNS and len(table) == 121
    assert table["z"][0] == pytest.approx(0.1) and table["n_contact"].max() == 2   # both faces' vertex 8
    events = read_csv(timeline)
    assert events.names == ["t", "point", "before", "after"] and len(events) == 4
    assert events["before"][0] == 0 and events["after"][0] in (1.0, 2.0)
    assert "point state changes" in capsys.readouterr().out


@pytest.mark.parametrize("args, message", [
    (["--sides", "2"], "at least"),
    (["--twist", "nan"], "not finite"),
    (["--rtol", "-1"], "--rtol must be positive"),
    (["--mu", "-0.1"], "--mu must be non-negative"),
    (["--t-end", "0"], "--t-end must be positive"),
    (["--max-step", "0"], "--max-step must be positive"),
])
def test_command_bad_input(tmp_path, capsys, args, message):
    code = main(["polydisc", "--out", str(tmp_path / "x.csv"), *args])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
