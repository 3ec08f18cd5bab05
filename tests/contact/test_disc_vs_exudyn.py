"""`mechsym disc` (mechanisms/disc.py): the penalty rolling disc on mechsym's floating body, against Exudyn's
own runs of the same disc (tests/reference/exudyn_disc.py, step 3.125e-5 s), analytic checks, the CLI."""
import dataclasses

import numpy as np
import pytest

from mechanisms.disc import COLUMNS, Disc, simulate
from mechsym.app.cli import main
from mechsym.core.errors import InputError
from mechsym.core.results import read_csv

G = 9.81
TRAJ = COLUMNS[1:10]
FORCES = ("f_lat", "f_long", "f_n")


def disc_of(case) -> Disc:
    return Disc(**{f.name: getattr(case, f.name) for f in dataclasses.fields(Disc)})


@pytest.fixture(scope="module")
def runs():
    """mechsym's runs of the issue's cases (a), (b), (c) over 1 s, sampled every 1 ms."""
    from tests.reference.exudyn_disc import CASES

    return {name: simulate(disc_of(case), 1.0).columns for name, case in CASES.items()}


def normwise(a, b):
    """docs/conventions.md (Accuracy): max|a - b| / max|b| over the whole compared array."""
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


def _draws_its_csv(lines, table):
    """How many of a figure's lines draw a column of the CSV against its time column, each exactly."""
    drawn = [(label, x, y) for _, label, x, y in lines if label in table]
    for label, x, y in drawn:
        assert np.array_equal(x, table["t"]) and np.array_equal(y, table[label]), label
    return len(drawn)


def test_command_writes_the_issue_columns(tmp_path, capsys, plotted):
    out, png, gif = tmp_path / "sub" / "disc.csv", tmp_path / "disc.png", tmp_path / "anim" / "disc.gif"
    code = main([*BASE, "--v0=0,1,0", "--omega0=-5,0,0", "--tilt", "0deg", "--t-end", "0.05", "--dt", "0.001",
                 "--out", str(out), "--plot", str(png)])
    assert code == 0, capsys.readouterr().err
    table = read_csv(out)
    assert table.names == list(COLUMNS) and len(table) == 51
    np.testing.assert_allclose(table["vy"], 1.0, atol=1e-9)
    np.testing.assert_allclose(table["f_n"], G, rtol=1e-6)
    assert png.stat().st_size > 0 and _draws_its_csv(plotted["disc.png"], table) == 11  # rates, forces, slips
    assert "wrote" in capsys.readouterr().out
    # the animation (a few frames), and the options beyond the issue's: a friction pair, rolling friction
    code = main([*BASE[:-1], "0.3,0.2", "--rolling-friction", "0.05", "--v0=0,1,0", "--omega0=-5,0,0",
                 "--t-end", "0.05", "--dt", "0.01", "--out", str(out), "--animate", str(gif)])
    assert code == 0, capsys.readouterr().err
    assert gif.read_bytes()[:3] == b"GIF"
    table = read_csv(out)
    # rolling friction c_r f_n v slows the rolling disc: v = exp(-c_r m g t / (m + I / r^2))
    assert table["vy"][-1] == pytest.approx(np.exp(-0.05 * G * 0.05 / (1 + 0.02 / 0.04)), rel=1e-4)


def test_disc_simulation_uses_the_exact_jacobian_and_two_stiff_solvers_agree():
    from tests.reference.exudyn_disc import CASES

    disc = disc_of(CASES["b_sliding"])
    bdf = simulate(disc, 1.0, rtol=1e-10)
    st = bdf.stats
    assert st["method"] == "BDF" and st["jacobians"] >= 1 and st["backend"] == "c"
    radau = simulate(disc, 1.0, rtol=1e-10, method="Radau")
    st = radau.stats
    assert st["jacobians"] >= 1
    traj = normwise(np.stack([radau[c] for c in TRAJ]), np.stack([bdf[c] for c in TRAJ]))
    assert traj <= 1e-7, traj


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
    (["--mu", "0.1,0.2,0.3"], "expected 1 or 2 comma-separated values"),
    (["--rtol", "0"], "--rtol must be positive"),
    (["--rolling-friction", "-1"], "--rolling-friction must be non-negative"),
    (["--tilt", "30deg", "--t-end", "1"], "the disc lies flat"),     # it falls flat: the rates overflow there,
    (["--tilt", "30.1deg", "--t-end", "1"], "the disc lies flat"),   # or the step size collapses (CPU-dependent)
    (["--tilt", "35deg", "--t-end", "1"], "the disc lies flat"),
    (["--animate", "x.avi"], "--animate must be a .gif or .mp4 file"),
    (["--plot", "x.gif"], "--plot must be a .png or .svg file"),
])
def test_command_bad_input(tmp_path, capsys, args, message):
    argv = [*BASE, "--v0", "0,0,0", "--omega0", "0,0,0", "--t-end", "0.01", "--out", str(tmp_path / "x.csv")]
    code = main(argv + args)
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_a_disc_that_falls_flat_stops_with_an_error_naming_it():
    with pytest.raises(InputError, match=r"at t = 0\.2\d* s: rolling disc 'contact': axis is parallel"):
        simulate(Disc(tilt=0.5), 1.0)


def test_connector_rejects_bad_parameters_by_name():
    from mechsym.contact.rolling_disc import RollingDisc

    good = dict(radius=0.2, stiffness=1e5, zone=1e-3)
    for name, value, message in (("radius", 0.0, "radius must be positive"), ("stiffness", -1.0, "stiffness"),
                                 ("zone", 0.0, "zone must be positive"),
                                 ("axis", (0, 0, 0), "axis must not be the zero"),
                                 ("mu", (0.1, -0.1), "mu"), ("plane_normal", (0, 0, 0), "plane_normal"),
                                 ("centre", (0, np.nan, 0), "centre")):
        with pytest.raises(InputError, match=f"rolling disc 'w': {message}"):
            RollingDisc("w", **{**good, name: value})
    # an axis parallel to the plane normal in the starting state: the error names the disc
    from mechanisms.disc import system
    from mechsym.core.quaternion import about as quat_about

    sys3 = system()
    ode = sys3.loaded([RollingDisc("w", **good, axis=(0, 0, 1))])
    with pytest.raises(InputError, match="rolling disc 'w': axis is parallel to the plane normal"):
        ode.simulate(sys3.initial_state((0, 0, 0.1), quat_xyzw=quat_about((1, 0, 0), 0.0)), 0.1)


# ---------------------------------------------------------------- the larger example: a two-wheeled cart

def test_cart_reaches_the_terminal_speed_of_drive_and_rolling_friction():
    from mechanisms.cart import Cart, energy_balance
    from mechanisms.cart import simulate as simulate_cart

    cart = Cart()
    cols = simulate_cart(cart, 6.0)
    st = cols.stats
    assert st["jacobians"] >= 1
    m, r, k = cart.mass, cart.radius, cart.stiffness
    np.testing.assert_allclose(cols["z"][0], r - m * G / (2 * k), rtol=0, atol=1e-12)
    for w in ("left", "right"):                                    # each wheel carries half the weight
        np.testing.assert_allclose(cols[f"{w}.f_n"][cols["t"] > 0.5], m * G / 2, rtol=1e-5)
    np.testing.assert_allclose(cols["left.f_long"], cols["right.f_long"], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(cols["heading"], 0.0, atol=1e-12)  # symmetric: it runs straight
    vinf, tau = cart.terminal_speed(), cart.time_constant()
    assert vinf == pytest.approx(cart.torque / (r * cart.rolling_friction * m * G))
    speed = np.hypot(cols["vx"], cols["vy"])
    np.testing.assert_allclose(speed, vinf * (1 - np.exp(-cols["t"] / tau)), rtol=0, atol=1e-4 * vinf)
    # energy: kinetic + potential change by the work of the drive and the contacts
    d_energy, work = energy_balance(cart, cols)
    assert np.abs(d_energy - work).max() <= 1e-7 * np.abs(work).max()


def test_cart_turning_scrubs_its_yaw_rate_away_and_conserves_energy():
    from mechanisms.cart import Cart, energy_balance
    from mechanisms.cart import simulate as simulate_cart

    cart = Cart(v0=1.0, yaw_rate=2.0, torque=0.3)
    cols = simulate_cart(cart, 1.0, dt=2.5e-4)
    assert abs(cols["wz"][-1]) < 1e-6 and 0.01 < cols["heading"][-1] < 0.2   # stopped turning, turned a bit
    late = cols["t"] > 0.5
    assert np.ptp(cols["heading"][late]) < 1e-6
    d_energy, work = energy_balance(cart, cols)
    assert np.abs(d_energy - work).max() <= 1e-6 * np.abs(work).max()
    assert work[-1] < 0                                          # friction took more than the drive gave


def test_cart_command(tmp_path, capsys, plotted):
    from mechanisms.cart import COLUMNS as CART_COLUMNS

    out, png, gif = tmp_path / "cart.csv", tmp_path / "cart.png", tmp_path / "cart.gif"
    code = main(["cart", "--t-end", "0.05", "--dt", "0.01", "--v0", "0.5", "--out", str(out), "--plot", str(png),
                 "--animate", str(gif)])
    assert code == 0, capsys.readouterr().err
    table = read_csv(out)
    assert table.names == list(CART_COLUMNS) and len(table) == 6
    assert png.stat().st_size > 0 and gif.read_bytes()[:3] == b"GIF"
    assert _draws_its_csv(plotted["cart.png"], table) == 16  # rates, and forces and slips of both wheels
    code = main(["cart", "--t-end", "1", "--radius", "-1", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: radius must be positive") and len(err.strip().splitlines()) == 1
