"""`mechsym disc` (mechanisms/disc.py): the penalty rolling disc on mechsym's floating body, against Exudyn's
own runs of the same disc (tests/reference/exudyn_disc.py, step 3.125e-5 s), analytic checks, the CLI."""
import dataclasses

import numpy as np
import pytest

from mechanisms.disc import COLUMNS, Disc, simulate
from mechsym.cli import main
from mechsym.errors import InputError
from mechsym.results import read_csv

G = 9.81
TRAJ = COLUMNS[1:10]
FORCES = ("f_lat", "f_long", "f_n")


def disc_of(case) -> Disc:
    return Disc(**{f.name: getattr(case, f.name) for f in dataclasses.fields(Disc)})


@pytest.fixture(scope="module")
def runs():
    """mechsym's runs of the issue's cases (a), (b), (c) over 1 s, sampled every 1 ms."""
    from tests.reference.exudyn_disc import CASES

    return {name: simulate(disc_of(case), 1.0)[0] for name, case in CASES.items()}


def normwise(a, b):
    """CONTRACTS.md: max|a - b| / max|b| over the whole compared array."""
    return np.abs(a - b).max() / np.abs(b).max()


@pytest.mark.parametrize("name", ["a_rolling", "b_sliding", "c_driven"])
def test_agrees_with_exudyn(runs, name):
    pytest.importorskip("exudyn")
    from tests.reference.exudyn_disc import CASES, REFERENCE_STEP, run_disc

    ref = run_disc(CASES[name], REFERENCE_STEP).columns()
    ours = runs[name]
    np.testing.assert_allclose(ours["t"], ref["t"], atol=1e-12)
    traj = normwise(np.stack([ours[c] for c in TRAJ]), np.stack([ref[c] for c in TRAJ]))
    force = normwise(np.stack([ours[c] for c in FORCES]), np.stack([ref[c] for c in FORCES]))
    assert traj <= 1e-5, f"{name}: trajectories differ by {traj:.3g} norm-wise"
    assert force <= 1e-3, f"{name}: contact forces differ by {force:.3g} norm-wise"


def test_rest_and_rolling_case_a(runs):
    a = runs["a_rolling"]
    r, m, k = 0.2, 1.0, 1e5
    np.testing.assert_allclose(a["z"], r - m * G / k, atol=1e-10)          # static penetration m g / k
    np.testing.assert_allclose(a["f_n"], m * G, rtol=1e-8)
    np.testing.assert_allclose(a["vy"], 1.0, atol=1e-9)
    np.testing.assert_allclose(a["wx"], -5.0, atol=1e-8)
    np.testing.assert_allclose(a["y"], a["t"], atol=1e-9)


def test_sliding_disc_case_b_analytic(runs):
    b = runs["b_sliding"]
    m, r, ixx, mu, v0 = 1.0, 0.2, 0.02, 0.2, 2.0
    vf = v0 / (1 + ixx / (m * r * r))
    assert vf == pytest.approx(4 / 3)
    t_star = (v0 - vf) / (mu * G)
    t = b["t"]
    slip = t < t_star - 1e-3                                      # the slip phase, before the zone
    np.testing.assert_allclose(b["vy"][slip], v0 - mu * G * t[slip], atol=1e-8)
    np.testing.assert_allclose(b["f_long"][slip], -mu * m * G, rtol=1e-7)
    # the slip's straight line through the slip phase reaches zero at t*
    fit = np.polyfit(t[slip], b["slip_long"][slip], 1)
    assert -fit[1] / fit[0] == pytest.approx(t_star, abs=1e-8)
    rolling = t > t_star + 3e-3
    np.testing.assert_allclose(b["vy"][rolling], vf, atol=1e-8)
    np.testing.assert_allclose(b["wx"][rolling], -vf / r, atol=1e-7)
    np.testing.assert_allclose(b["z"], r - m * G / 1e5, atol=1e-10)


def test_driven_disc_case_c(runs):
    c = runs["c_driven"]
    m, r, ixx, T = 1.0, 0.2, 0.02, 0.5
    a = T * r / (ixx + m * r * r)
    late = c["t"] > 0.05
    np.testing.assert_allclose(np.gradient(c["vy"], c["t"])[late][1:-1], a, rtol=1e-5)
    np.testing.assert_allclose(c["f_long"][late], m * a, rtol=1e-5)
    assert (c["vy"][late] > 0).all()


def test_bad_disc_input():
    with pytest.raises(InputError, match="radius must be positive"):
        simulate(Disc(radius=0.0), 0.01)
    with pytest.raises(InputError, match="stiffness must be positive"):
        simulate(Disc(stiffness=-1.0), 0.01)
    with pytest.raises(InputError, match="zone must be positive"):
        simulate(Disc(zone=0.0), 0.01)
    with pytest.raises(InputError, match="parallel"):
        simulate(Disc(tilt=np.pi / 2), 0.01)


BASE = ["disc", "--radius", "0.2", "--mass", "1", "--inertia", "0.02,0.01,0.01", "--stiffness", "1e5",
        "--damping", "1e3", "--mu", "0.3"]


def test_command_writes_the_issue_columns(tmp_path, capsys):
    out, png = tmp_path / "sub" / "disc.csv", tmp_path / "disc.png"
    code = main([*BASE, "--v0=0,1,0", "--omega0=-5,0,0", "--tilt", "0deg", "--t-end", "0.05", "--dt", "0.001",
                 "--out", str(out), "--plot", str(png)])
    assert code == 0, capsys.readouterr().err
    table = read_csv(out)
    assert table.names == list(COLUMNS) and len(table) == 51
    np.testing.assert_allclose(table["vy"], 1.0, atol=1e-9)
    np.testing.assert_allclose(table["f_n"], G, rtol=1e-6)
    assert png.stat().st_size > 0
    assert "wrote" in capsys.readouterr().out


def test_command_tilt_and_torque(tmp_path):
    out = tmp_path / "d.csv"
    assert main([*BASE, "--v0", "0,0,0", "--omega0", "0,0,0", "--tilt", "5.729577951308232deg",
                 "--torque", "0.5", "--t-end", "0.02", "--out", str(out)]) == 0
    table = read_csv(out)
    assert table["z"][0] == pytest.approx(0.2 * np.cos(0.1) - G / 1e5, abs=1e-12)
    assert table["vy"][-1] > 0                                 # positive torque drives towards +y


@pytest.mark.parametrize("args, message", [
    (["--radius", "0"], "--radius must be positive"),
    (["--stiffness", "-1"], "--stiffness must be positive"),
    (["--mu-zone", "0"], "--mu-zone must be positive"),
    (["--tilt", "90deg"], "parallel"),
    (["--v0", "1,2"], "expected 3 comma-separated values"),
    (["--mu", "-0.1"], "--mu must be non-negative"),
    (["--t-end", "0"], "--t-end must be positive"),
])
def test_command_bad_input(tmp_path, capsys, args, message):
    argv = [*BASE, "--v0", "0,0,0", "--omega0", "0,0,0", "--t-end", "0.01", "--out", str(tmp_path / "x.csv")]
    code = main(argv + args)
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
