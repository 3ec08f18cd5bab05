"""Progress bars: silent without a terminal, shown when asked, and never a change to results or files."""
import numpy as np

from mechsym.app.cli import main
from mechsym.core.progress import bar, bisection_steps
from mechsym.app.registry import find
from mechsym.studies.analyses import InverseOptions
from mechsym.studies import TableStudy, sweep


def test_silent_without_a_terminal(capsys, monkeypatch):
    monkeypatch.delenv("MECHSYM_PROGRESS", raising=False)
    with bar(3, "work") as b:
        b.update(3)
        assert b.disable
    assert capsys.readouterr().err == ""


def test_shown_when_asked_and_results_unchanged(capsys, tmp_path, monkeypatch):
    study = TableStudy(InverseOptions(omega=[2.0], samples=36), ("max:torque",))
    quiet = sweep(find("fourbar"), {"density": [1.0, 2.0]}, study, progress=False)
    assert capsys.readouterr().err == ""
    shown = sweep(find("fourbar"), {"density": [1.0, 2.0]}, study, progress=True)
    assert "sweep" in capsys.readouterr().err
    assert np.array_equal(quiet["max_torque"], shown["max_torque"])
    args = ["sweep", "inverse", "fourbar", "--omega", "2", "--samples", "36", "--param", "density=1,2", "--reduce",
            "max:torque", "--out"]
    main(args + [str(tmp_path / "a.csv")])
    monkeypatch.setenv("MECHSYM_PROGRESS", "1")
    main(args + [str(tmp_path / "b.csv")])
    out, err = capsys.readouterr()
    assert "sweep" in err and "\r" in err and "sweep" not in out
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()


def test_bisection_steps():
    assert bisection_steps(0.0, 1.0, 1e-3) == 10 and bisection_steps(0.0, 1e-4, 1e-3) == 0


def test_a_cold_start_says_it_is_compiling_in_one_line_on_stderr(tmp_path):
    """On an empty compiled cache the command says once, on stderr, that it compiles (and where the result
    is kept); the CSV on stdout is the same table as the warm run's, which says nothing."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    env = {k: v for k, v in os.environ.items() if k != "MECHSYM_PROGRESS"}
    env.update(MECHSYM_CACHE=str(tmp_path / "cache"), PYTHONPATH=str(Path(__file__).resolve().parent.parent))
    command = [sys.executable, "-m", "mechsym", "inverse", "slider-crank", "--omega", "3", "--samples", "8"]
    cold = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    warm = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    assert cold.returncode == warm.returncode == 0, cold.stderr + warm.stderr
    lines = cold.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("mechsym: compiling generated C for ") and \
        str(tmp_path / "cache") in lines[0], cold.stderr
    assert warm.stderr == "" and cold.stdout == warm.stdout and cold.stdout.startswith("theta,omega,")
