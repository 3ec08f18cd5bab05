"""spatial_v2's example 7, the rolling polygonal disc: the model, the run and the command."""
import numpy as np
import pytest

from mechsym.cli import main
from mechsym.results import read_csv
from mechsym.rigid3d import rotation_matrix

COLUMNS = "t,x,y,z,qw,qx,qy,qz,vx,vy,vz,wx,wy,wz,n_contact,n_stick,n_slip".split(",")


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
    t = run.table
    assert run.stats["unlocated"] == 0 and run.stats["events"] > 50
    after = t["t"] > 0.3
    assert t["x"][-1] > 0.3 and abs(t["y"][-1]) < 0.05               # it rolls forward
    assert np.all(np.abs(t["z"][after] - 0.05) < 0.002)              # upright, centre at about R
    assert np.mean(t["n_contact"][after] >= 1) > 0.9                 # on the ground, but for small hops
    assert t["n_slip"].max() >= 1 and t["n_stick"].max() >= 1
    q = np.array([t[c] for c in ("qw", "qx", "qy", "qz")])
    np.testing.assert_allclose(np.linalg.norm(q, axis=0), 1, atol=1e-12)
    tilt = rotation_matrix(q)[2, 1]                                  # world z of the disc axis
    assert 0.01 < np.abs(tilt[after]).max() < 0.3                    # a wobble, not a fall
    kinds = {e.kind for e in run.timeline}
    assert kinds == {"contact made", "contact lost", "stick->slip", "slip->stick"}


def test_twist_022_falls_over():
    """The DocBlock: with a twist of 0.22 rad the disc falls over."""
    from mechanisms import polydisc

    run = polydisc.simulate(twist=0.22)
    t = run.table
    q = np.array([t[c][-1] for c in ("qw", "qx", "qy", "qz")])
    assert abs(rotation_matrix(q)[2, 1]) > 0.99 and t["z"][-1] == pytest.approx(0.005, abs=5e-4)


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
    (["--rtol", "-1"], "--rtol and --atol must be positive"),
    (["--mu", "-0.1"], "--mu must be non-negative"),
    (["--t-end", "0"], "t_end must be positive"),
    (["--max-step", "0"], "--max-step must be positive"),
])
def test_command_bad_input(tmp_path, capsys, args, message):
    code = main(["polydisc", "--out", str(tmp_path / "x.csv"), *args])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
