"""The generic commands' options a new user reaches for: a quasi-static inverse without a speed, the
kinematics' velocity and acceleration coefficients (or rates at a speed), forward --all."""
import numpy as np
import pytest
import sympy as sp

from mechsym.app.cli import main
from mechsym.core.results import read_csv


def slider_closed_form(theta, omega=None, alpha=0.0, r=0.05, l=0.15, e=0.01):
    """x of the slider pin S and of the crank pin P, and their first and second theta-derivatives, from
    the offset slider-crank's closed form x_S = r cos(t) + sqrt(l^2 - (r sin(t) - e)^2) (sympy)."""
    t = sp.Symbol("t")
    out = {}
    for name, expr in (("S.x", r * sp.cos(t) + sp.sqrt(l**2 - (r * sp.sin(t) - e) ** 2)), ("P.y", r * sp.sin(t))):
        f = [sp.lambdify(t, sp.diff(expr, t, k), "numpy") for k in range(3)]
        out[name], out[name + "'"], out[name + "''"] = (np.broadcast_to(fk(theta), theta.shape) for fk in f)
    return out


def test_kinematics_writes_coefficients_against_a_closed_form(tmp_path, capsys):
    out = tmp_path / "k.csv"
    assert main(["kinematics", "slider-crank", "--samples", "24", "--out", str(out)]) == 0
    k = read_csv(out)
    ref = slider_closed_form(k["theta"])
    for name in ("S.x", "S.x'", "S.x''", "P.y", "P.y'", "P.y''"):
        assert np.allclose(k[name], ref[name], rtol=0, atol=1e-12 * np.max(np.abs(ref[name])) + 1e-15), name
    assert np.allclose(k["slider.x'"], ref["S.x'"], atol=1e-13) and np.all(k["slider.angle'"] == 0)
    assert {"crank.angle'", "rod.y''", "rod.angle''"} <= set(k.names)


def test_kinematics_rates_at_a_speed(tmp_path, capsys):
    out = tmp_path / "k.csv"
    assert main(["kinematics", "slider-crank", "--samples", "24", "--omega", "3", "--alpha=-2", "--out", str(out)]) == 0
    k = read_csv(out)
    ref = slider_closed_form(k["theta"])
    assert np.allclose(k["S.vx"], 3 * ref["S.x'"], atol=1e-12)
    assert np.allclose(k["S.ax"], 9 * ref["S.x''"] - 2 * ref["S.x'"], atol=1e-11)
    assert np.allclose(k["crank.omega"], 3.0) and np.allclose(k["crank.alpha"], -2.0)
    assert "S.x'" not in k.names


def test_quasi_static_inverse_needs_no_speed(tmp_path, capsys, fourbar):
    out = tmp_path / "q.csv"
    assert main(["inverse", "fourbar", "--quasi-static", "--samples", "36", "--out", str(out)]) == 0
    q = read_csv(out)
    assert "omega" not in q.names and q.names[0] == "theta" and len(q) == 36
    at_rest = fourbar.inverse(q["theta"], 0.0)  # with inertia, at rest: the same forces
    assert np.allclose(q["torque"], at_rest["torque"], rtol=0, atol=1e-13)
    assert main(["inverse", "fourbar", "--samples", "36"]) == 2
    assert "inverse needs --omega (or --quasi-static)" in capsys.readouterr().err


def test_forward_all_writes_every_coordinate_and_point(tmp_path, capsys, slider_crank):
    out = tmp_path / "f.csv"
    assert main(["forward", "slider-crank", "--torque", "0.1", "--t-end", "0.3", "--dt", "0.01", "--all",
                 "--out", str(out)]) == 0
    f = read_csv(out)
    assert f.names[:3] == ["t", "theta", "omega"] and {"rod.angle", "slider.x", "S.x", "P.y"} <= set(f.names)
    ref = slider_closed_form(f["theta"])
    assert np.allclose(f["S.x"], ref["S.x"], atol=1e-13) and len(f) == 31


def test_theta0_names_the_driven_coordinate_whatever_its_name(tmp_path, capsys):
    out = tmp_path / "p.csv"
    assert main(["kinematics", "pasibot", "--samples", "4", "--theta0", "90deg", "--out", str(out)]) == 0
    assert read_csv(out)["theta8"][0] == pytest.approx(np.pi / 2, abs=1e-15)


def test_a_models_own_kinematics_gives_rates_at_a_speed(tmp_path, capsys):
    coef, rates = tmp_path / "c.csv", tmp_path / "r.csv"
    assert main(["kinematics", "pasibot", "--samples", "6", "--out", str(coef)]) == 0
    assert main(["kinematics", "pasibot", "--samples", "6", "--omega", "2", "--alpha", "0.5", "--out", str(rates)]) == 0
    c, r = read_csv(coef), read_csv(rates)
    assert "1.x'" in c.names and "1.x'" not in r.names
    assert np.array_equal(r["1.vx"], 2 * c["1.x'"]) and np.allclose(r["1.ay"], 4 * c["1.y''"] + 0.5 * c["1.y'"])
    assert np.array_equal(r["1.omega"], 2 * c["1.angle'"])


def test_pasibot_forward_all_in_the_ground_frame(tmp_path, capsys):
    out = tmp_path / "f.csv"
    assert main(["forward", "pasibot", "--torque", "1", "--theta0", "90deg", "--t-end", "0.3", "--dt", "0.05", "--all",
                 "--out", str(out)]) == 0
    f = read_csv(out)
    assert f.names[:3] == ["t", "theta8", "omega"] and {"1.x", "9.angle", "support"} <= set(f.names)
    assert not any(n.endswith("'") for n in f.names) and len(f) == 7
    from mechanisms import pasibot as pb

    kin = pb.kinematics_table(f["theta8"], frame="ground", backend="c")
    assert np.array_equal(f["1.x"], kin["1.x"])
