"""The command line: outputs, the one-line errors of docs/conventions.md (Errors) and their exit codes."""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import pytest

from mechsym.app.cli import main
from mechsym.core.results import read_csv


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_inverse_writes_csv_and_plot(tmp_path, capsys, fourbar, plotted):
    """The CSV, and a plot drawing its torque against the crank angle, one line per speed."""
    out, png = tmp_path / "sub" / "t.csv", tmp_path / "t.png"
    code, _, err = run(capsys, "inverse", "fourbar", "--omega", "2", "--omega=5", "--samples", "36",
                       "--theta0", "90deg", "--out", str(out), "--plot", str(png))
    assert code == 0, err
    table = read_csv(out)
    assert table.names[:3] == ["theta", "omega", "A.fx"] and table.names[-1] == "torque"
    assert len(table) == 72 and png.stat().st_size > 1000
    lines = {label: (x, y) for _, label, x, y in plotted["t.png"]}
    for k, w in enumerate((2, 5)):
        x, y = lines[f"torque, omega = {w} rad/s"]
        rows = slice(36 * k, 36 * (k + 1))
        assert np.array_equal(x, table["theta"][rows]) and np.array_equal(y, table["torque"][rows])
    assert np.isclose(table["theta"][0], np.pi / 2)
    ref = fourbar.inverse(table["theta"][:36], 5.0)["torque"]
    assert np.allclose(table["torque"][36:], ref, rtol=0, atol=1e-14)


def test_kinematics_and_forward_columns(tmp_path, capsys):
    code, _, err = run(capsys, "kinematics", "slider-crank", "--samples", "10", "--out", str(tmp_path / "k.csv"))
    assert code == 0, err
    names = read_csv(tmp_path / "k.csv").names
    assert names[0] == "theta" and {"rod.angle", "slider.x", "S.x", "P.y"} <= set(names)
    code, _, err = run(capsys, "forward", "slider-crank", "--torque", "0.1", "--theta0=-90deg", "--omega0", "0",
                       "--t-end", "0.5", "--dt", "0.01", "--out", str(tmp_path / "f.csv"))
    assert code == 0, err
    f = read_csv(tmp_path / "f.csv")
    assert f.names == ["t", "theta", "omega"] and len(f) == 51 and f["t"][-1] == 0.5


def test_params_json(capsys):
    code, out, _ = run(capsys, "params", "fourbar", "--param", "l_crank=0.06", "--json")
    data = json.loads(out)
    assert code == 0 and data["parameters"]["l_crank"] == 0.06
    assert data["bodies"]["crank"]["mass"] == pytest.approx(0.06)


def test_equations_latex(capsys):
    code, out, _ = run(capsys, "equations", "slider-crank", "--latex")
    assert code == 0 and r"\left[\begin{matrix}" in out and "M(" in out
    assert r"\ddot{\theta}_{rod}" in out and r"{x'_{crank}}^{2}" in out  # accelerations, primes that take a power


@pytest.mark.parametrize("args, message", [
    (["inverse", "nosuch", "--omega", "1"], "unknown model 'nosuch'"),
    (["inverse", "fourbar", "--omega", "1", "--param", "l_crank=-1"], "'l_crank' = -1.0 must be positive"),
    (["inverse", "fourbar", "--omega", "1", "--param", "bogus=1"], "unknown parameter 'bogus'"),
    (["inverse", "fourbar", "--omega", "nan"], "is not finite"),
    (["inverse", "fourbar", "--omega", "1", "--samples", "0"], "must be at least 1"),
    (["inverse", "fourbar", "--omega", "1", "--samples", "ten"], "not a whole number"),
    (["inverse", "fourbar", "--omega", "1", "--param", "l_crank=0.2"], "cannot assemble at theta="),
    (["forward", "fourbar", "--torque", "1", "--t-end", "-1"], "--t-end must be positive"),
    (["kinematics", "fourbar", "--theta0", "abc"], "not an angle"),
    (["inverse", "slider-crank", "--omega", "1", "--param", "m_slider=-1"], "'m_slider' = -1.0 must be positive"),
    (["inverse", "fourbar", "--omega", "1", "--param", "g=nan"], "'g' = nan is not finite"),
    (["forward", "fourbar", "--torque", "1", "--t-end", "1", "--param", "g=inf"], "'g' = inf is not finite"),
    (["kinematics", "fourbar", "--samples", "-3"], "must be at least 1"),
    (["export", "fourbar", "--out", os.path.join(tempfile.gettempdir(), "mechsym-export-x"), "--param", "density=0"], "'density' = 0.0 must be positive"),
])
def test_bad_input_is_one_line_exit_2(capsys, args, message):
    code, _, err = run(capsys, *args)
    assert code == 2
    assert err.startswith("error: ") and message in err and err.count("\n") == 1


def test_malformed_model_file(tmp_path, capsys):
    bad = tmp_path / "bad.py"
    bad.write_text("def build(:\n")
    code, _, err = run(capsys, "inverse", str(bad), "--omega", "1")
    assert code == 2 and "malformed: line 1" in err
    empty = tmp_path / "empty.py"
    empty.write_text("x = 1\n")
    code, _, err = run(capsys, "inverse", str(empty), "--omega", "1")
    assert code == 2 and "defines neither build()" in err


OPEN_CHAIN = """
from mechanisms import fourbar


def build():
    m = fourbar.build()
    del m.joints["M"]  # the rocker no longer closes the loop: three degrees of freedom
    return m
"""

SLIDER_DRIVEN = """
from dataclasses import replace

from mechanisms import slider_crank


def build():
    m = slider_crank.build()
    m.coordinates.clear()
    m.coordinate("s", "guide", force="push", guess_at=0.15)  # driven by the slider: dead points
    m.bodies["crank"] = replace(m.bodies["crank"], guess=1.0)
    m.bodies["rod"] = replace(m.bodies["rod"], guess=-0.3)
    return m
"""


@pytest.mark.parametrize("source, args, message", [
    (OPEN_CHAIN, ["--omega", "1"], "mobility is 3 (rank of the constraint Jacobian 6 for 9 coordinates) but 1"),
    (SLIDER_DRIVEN, ["--omega", "1", "--samples", "1", "--theta0", "0.2", "--param", "offset=0"],
     "is at a dead point at s=0.2: the constraint Jacobian is singular (condition number"),
])
def test_model_file_errors(tmp_path, capsys, source, args, message):
    model = tmp_path / "model.py"
    model.write_text(source)
    code, _, err = run(capsys, "inverse", str(model), *args)
    assert code == 2 and err.startswith("error: ") and message in err and err.count("\n") == 1


def test_console_script_no_traceback(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "mechsym", "inverse", "fourbar", "--omega", "1", "--param",
                           "l_crank=0.2"], capture_output=True, text=True)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr


def test_a_closed_pipe_is_not_an_error():
    """`mechsym inverse ... | head -1`: the reader leaves long before the end; no error line, exit code 0."""
    command = "inverse fourbar --omega 2 --samples 200000 --backend numpy"
    proc = subprocess.run(f"{sys.executable} -m mechsym {command} | head -1", shell=True,
                          capture_output=True, text=True, executable="/bin/bash",
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": ".", "SHELLOPTS": "pipefail"})
    assert proc.stdout.startswith("theta,omega,") and proc.stderr == "", proc.stderr
    assert proc.returncode == 0
