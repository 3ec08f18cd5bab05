"""Reliability: interrupts, atomic outputs, faults of the user's world, budgets, non-finite values."""
import errno
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from conftest import group, interrupt_cli, processes
from mechsym.app.cli import main
from mechsym.core.errors import InputError
from mechsym.core.output import atomic, transaction
from mechsym.core.results import Table

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def listing(folder):
    return sorted(os.listdir(folder))


# -- interrupts ---------------------------------------------------------------------------------------
def test_ctrl_c_stops_the_c_integrator_at_once(tmp_path):
    """forward on the C backend runs minutes for t_end = 2000 s: SIGINT ends it within a second, exit
    130, and the file that was there before is untouched (the C loop polls the interrupt flag)."""
    out = tmp_path / "lf.csv"
    out.write_text("previous\n")
    warm = subprocess.run([sys.executable, "-m", "mechsym", "forward", "fourbar", "--torque", "0.1", "--t-end",
                           "0.01", "--out", str(tmp_path / "warm.csv")], cwd=ROOT, capture_output=True)
    assert warm.returncode == 0, warm.stderr  # the library is compiled and cached: the long run is in C
    code, after = interrupt_cli(["forward", "fourbar", "--torque", "0.1", "--t-end", "2000", "--out", str(out)], 4.0, ROOT)
    assert code == 130 and after < 1.0, (code, after)
    assert out.read_text() == "previous\n"
    assert listing(tmp_path) == ["lf.csv", "warm.csv"]


COMPILE = """
import sys
from pathlib import Path
from mechsym.codegen import c_backend, c_parts

folder = Path(sys.argv[1])
body = "".join(f"  x = x * 1.0000001 + {k}.0 / (x + {k + 1}.0);\\n" for k in range(40000))
units = [f"double f{u}(double x) {{\\n{body}  return x;\\n}}\\n" for u in range(2)]
(folder / "source.c").write_text("/* common */\\n" + "".join(c_parts.UNIT + "\\n" + unit for unit in units))
c_backend._compile(c_backend.compiler(), c_backend.build_flags(), folder)
"""


def test_ctrl_c_while_compiling_leaves_no_compiler_running(tmp_path):
    """Ctrl-C while a source of two translation units compiles (two compilers at once, each with the cc1 it
    starts): the command ends with every compiler process; before, the units' compilers ran on, orphaned,
    and a single source's cc1 outlived the gcc that was killed."""
    from mechsym.codegen import c_backend

    if c_backend.compiler() is None:
        pytest.skip("no C compiler")
    script = tmp_path / "compile.py"
    script.write_text(COMPILE)
    proc = subprocess.Popen([sys.executable, str(script), str(tmp_path)], cwd=ROOT, start_new_session=True,
                            env=dict(os.environ, PYTHONPATH=ROOT), stderr=subprocess.PIPE, text=True)
    compilers = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None and len(compilers) < 2:
        compilers = _descendants(proc.pid)
        time.sleep(0.05)
    assert len(compilers) >= 2, "the compilers did not start"
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=30)
    assert proc.returncode != 0
    time.sleep(0.5)
    alive = [pid for pid in compilers if _running(pid)]
    assert not alive, f"compiler processes left running: {alive}"


def _descendants(pid) -> list:
    """The processes below `pid`, zombies excepted."""
    children = {}
    for child, parent, _ in processes():
        children.setdefault(parent, []).append(child)
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _running(pid) -> bool:
    return any(found == pid for found, _, _ in processes())


LOST = """
import os, signal, sys, time
from mechsym.app.cli import _interrupts

class Dropped:
    def __del__(self):  # the signal handled here: Python prints the KeyboardInterrupt and drops it
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.05)

received, start = [], time.monotonic()
try:
    with _interrupts(received):
        Dropped()
        while time.monotonic() < start + 10:
            time.sleep(0.01)
    print("ran on")
except KeyboardInterrupt:
    print("interrupted", received, round(time.monotonic() - start, 2))
"""


def test_a_terminating_signal_whose_interrupt_python_dropped_is_raised_again():
    """SIGTERM handled inside a __del__ (as in an at-fork hook while a sweep forks its workers): Python
    drops the KeyboardInterrupt raised there; the command is interrupted all the same, within a second
    (before, the sweep ran to its end and exited 0)."""
    run = subprocess.run([sys.executable, "-c", LOST], capture_output=True, text=True, timeout=60, cwd=ROOT,
                         env=dict(os.environ, PYTHONPATH=ROOT))
    assert "Exception ignored" in run.stderr, run.stderr   # the first interrupt was indeed dropped
    words = run.stdout.split()
    assert words[:2] == ["interrupted", f"[{int(signal.SIGTERM)}]"] and float(words[2]) < 1.0, run.stdout


def _parts(folder):
    return [name for name in os.listdir(folder) if ".part" in name]


def _children(pid):
    return [p for p in group(pid) if p != pid]


def test_sigterm_ends_pasibot_figures_without_a_part_file(tmp_path):
    """`pasibot figures`, sent SIGTERM once its first figure is staged (a .part file in the folder): exit
    143 within a few seconds, no .part file and no process left (SIGTERM used to kill it outright,
    leaving six .figNN.*.part.* files)."""
    figs = tmp_path / "figs"
    code, after = interrupt_cli(["pasibot", "figures", "--out", str(figs)], 120, ROOT, signal.SIGTERM,
                                ready=lambda pid: figs.is_dir() and bool(_parts(figs)))
    assert code == 143 and after < 5.0, (code, after)
    assert not figs.exists() or os.listdir(figs) == []


def test_sigterm_while_a_large_csv_is_written_keeps_the_previous_file(tmp_path):
    """kinematics of 400,000 samples, sent SIGTERM once the CSV is being written (its .part file exists):
    exit 143, the previous file as it was, no .part file (a 5 MB .part was left)."""
    out = tmp_path / "k.csv"
    out.write_text("previous\n")
    code, after = interrupt_cli(["kinematics", "fourbar", "--samples", "400000", "--out", str(out)], 120, ROOT,
                                signal.SIGTERM, ready=lambda pid: bool(_parts(tmp_path)))
    assert code == 143 and after < 5.0, (code, after)
    assert out.read_text() == "previous\n" and listing(tmp_path) == ["k.csv"]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_and_sighup_end_a_sweep_and_its_workers(tmp_path, sig):
    """`sweep --workers 2`, sent SIGTERM (or SIGHUP) once both workers run: exit 128 + N, no CSV (only
    its .part, for --resume), and no worker left (interrupt_cli fails on any process of the group still there; they were left
    orphaned for minutes)."""
    out = tmp_path / "s.csv"
    code, after = interrupt_cli(["sweep", "inverse", "fourbar", "--param", "l_crank=0.01:0.05:100000", "--omega", "3",
                                 "--reduce", "max:torque", "--workers", "2", "--out", str(out)], 120, ROOT, sig,
                                ready=lambda pid: len(_children(pid)) >= 2)
    assert code == 128 + sig and after < 5.0, (code, after)
    assert listing(tmp_path) == ["s.csv.part"]  # the rows done, for --resume (docs/conventions.md)


def test_sigterm_stops_the_c_integrator_as_ctrl_c_does(tmp_path):
    """SIGTERM inside a long C call: the C runtime catches it as it does SIGINT (where the program handles
    the signal, as the CLI does) and the command exits 143 at once, the earlier file kept."""
    out = tmp_path / "lf.csv"
    out.write_text("previous\n")
    warm = subprocess.run([sys.executable, "-m", "mechsym", "forward", "fourbar", "--torque", "0.1", "--t-end",
                           "0.01", "--out", str(tmp_path / "warm.csv")], cwd=ROOT, capture_output=True)
    assert warm.returncode == 0, warm.stderr
    code, after = interrupt_cli(["forward", "fourbar", "--torque", "0.1", "--t-end", "2000", "--out", str(out)], 4.0, ROOT,
                                signal.SIGTERM)
    assert code == 143 and after < 1.0, (code, after)
    assert out.read_text() == "previous\n" and listing(tmp_path) == ["lf.csv", "warm.csv"]


def test_a_full_cache_folder_is_an_error_naming_it(tmp_path, monkeypatch):
    """MECHSYM_CACHE on a disk that fills while the library is written (the source, or the compiler's
    output): one InputError naming the folder and the remedy, not an internal error."""
    from mechsym.codegen import c_backend

    if c_backend.compiler() is None:
        pytest.skip("no C compiler")

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(c_backend.c_runtime, "amalgamate", lambda source: source)
    monkeypatch.setattr(c_backend.Path, "write_text", full)
    with pytest.raises(InputError, match=f"the C cache folder {tmp_path} cannot be written: No space left on device "
                                         r"\(free space there, or set MECHSYM_CACHE to another folder\)"):
        c_backend.build_source("full", "k", lambda: ("int f(void) { return 1; }\n", {}), tmp_path)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".build-")]


def test_c_call_restores_the_python_handler(fourbar):
    """After a long C call, SIGINT is Python's again (the call put back the handler it replaced)."""
    import numpy as np

    from mechsym import derive

    system = derive(fourbar.mechanism, backend="c")
    system.inverse(np.linspace(0, 6, 50), [1.0], 0.0, {})
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    with pytest.raises(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.5)


def test_ctrl_c_ends_a_long_continuation_inside_one_c_call(fourbar):
    """Two samples 10^6 rad apart: the C continuation walks 10^7 steps between them inside one call (about
    3 s); SIGINT ends it between steps, not at the next sample."""
    import threading

    import numpy as np

    from mechsym import derive

    system = derive(fourbar.mechanism, backend="c")
    system.kinematics_table(np.array([0.0, 0.1]))                 # compiled and loaded beforehand
    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
    start = time.perf_counter()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        system.kinematics_table(np.array([0.0, 1e6]))
    assert time.perf_counter() - start < 1.3


# -- atomic outputs -----------------------------------------------------------------------------------
def test_interrupted_write_keeps_the_previous_file(tmp_path):
    path = tmp_path / "a.csv"
    path.write_text("good\n")
    with pytest.raises(KeyboardInterrupt):
        with atomic(path) as tmp:
            with open(tmp, "w") as fh:
                fh.write("half a ro")
            raise KeyboardInterrupt
    assert path.read_text() == "good\n" and listing(tmp_path) == ["a.csv"]


def test_full_disk_is_an_error_naming_the_file(tmp_path, monkeypatch):
    path = tmp_path / "a.csv"
    path.write_text("good\n")

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    from mechsym.core import results

    monkeypatch.setattr(results, "write_csv", full)
    with pytest.raises(InputError, match="cannot write .*a.csv.*No space left"):
        Table({"t": np.arange(3.0)}).to_csv(path)
    assert path.read_text() == "good\n" and listing(tmp_path) == ["a.csv"]


def test_a_failed_command_leaves_every_output_as_it_was(tmp_path, capsys, monkeypatch):
    """The CSV is complete before the plot fails; within the command's transaction neither replaces the
    previous files."""
    out, plot = tmp_path / "a.csv", tmp_path / "a.png"
    out.write_text("old csv\n")
    plot.write_text("old png\n")

    def broken(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(Table, "plot", broken)
    code, _, _ = run(capsys, "inverse", "fourbar", "--omega", "1", "--backend", "numpy", "--out", str(out),
                     "--plot", str(plot))
    assert code == 130
    assert out.read_text() == "old csv\n" and plot.read_text() == "old png\n"
    assert listing(tmp_path) == ["a.csv", "a.png"]


def test_transaction_renames_only_on_success(tmp_path):
    path = tmp_path / "x.txt"
    with transaction():
        with atomic(path) as tmp:
            open(tmp, "w").write("new")
        assert not path.exists()
    assert path.read_text() == "new"


# -- budgets ------------------------------------------------------------------------------------------
def test_periodic_coordinate_starts_one_period_away():
    """theta0 three turns and a bit from the reference: the kinematics from the period shift equal the
    continuation walked all the way (an independent route), and theta0 = 1e4 rad is fast; 1e17 rad,
    whose rounding is 16 rad, is refused."""
    from mechanisms import fourbar
    from mechsym import derive

    target = 0.3 + 6 * np.pi
    walked = derive(fourbar.build(), backend="numpy").kinematics_table(np.linspace(0.0, target, 400))
    shifted_system = derive(fourbar.build(), backend="numpy")
    shifted = shifted_system.kinematics_table(np.array([target]))
    for name in walked.names:
        assert abs(shifted[name][0] - walked[name][-1]) <= 1e-9 * max(1.0, abs(walked[name][-1])), name
    period, shift = shifted_system.solver().period()
    assert period == 2 * np.pi and shift[2] == 2 * np.pi  # the crank turns once per period, the others swing
    start = time.perf_counter()
    far = shifted_system.kinematics_table(1e4 + np.linspace(0, 1, 10))
    assert time.perf_counter() - start < 2.0 and np.all(np.isfinite(far["rocker.angle"]))
    with pytest.raises(InputError, match="too large to be resolved"):
        shifted_system.kinematics_table(np.array([1e17]))


@pytest.mark.parametrize("args, estimate", [
    (["forward", "fourbar", "--torque", "0.1", "--t-end", "1", "--dt", "1e-9"], "1e+09 time points needs about"),
    (["inverse", "fourbar", "--omega", "1", "--samples", "1000000000"], "1000000000 samples x 1 speed"),
    (["kinematics", "fourbar", "--samples", "100000000"], "100000000 samples needs about"),
    (["ugv", "sweep", "--grid", "10000"], "10000^2 angle pairs"),
    (["polydisc", "--sides", "100000", "--out", "x.csv"], "200000 points at 1001 time points"),
])
def test_requests_beyond_the_memory_budget_are_refused_up_front(capsys, tmp_path, monkeypatch, args, estimate):
    monkeypatch.chdir(tmp_path)
    start = time.perf_counter()
    code, _, err = run(capsys, *args)
    assert code == 2 and estimate in err and "--max-memory" in err and err.count("\n") == 1
    assert time.perf_counter() - start < 10 and listing(tmp_path) == []


def test_max_memory_sets_the_limit(capsys):
    """The estimate is the same whatever the limit; --max-memory moves the limit both ways."""
    from mechsym.core.budget import parse_size

    code, out, err = run(capsys, "inverse", "fourbar", "--omega", "1", "--samples", "1000", "--max-memory", "10K",
                         "--backend", "numpy")
    assert code == 2 and "above the limit of 10 KiB (set by --max-memory)" in err
    code, out, err = run(capsys, "inverse", "fourbar", "--omega", "1", "--samples", "1000", "--max-memory", "1G",
                         "--backend", "numpy")
    assert code == 0 and len(out.splitlines()) == 1001
    assert parse_size("1.5G") == 3 * 2**29 and parse_size("512m") == 2**29 and parse_size("100") == 100


def test_progress_reports_fraction_and_estimate():
    import io

    ticks = iter([0.0, 3.0, 3.5, 5.0])
    stream = io.StringIO()
    progress = __import__("mechsym.core.progress", fromlist=["Progress"]).Progress(
        "run", 10.0, stream=stream, delay=2.0, every=1.0, clock=lambda: next(ticks))
    progress.enabled = True
    progress(2.5)   # t = 3 s: a quarter done in 3 s, about 9 s left
    progress(3.0)   # t = 3.5 s: within a second of the last line, not shown
    progress(5.0)   # t = 5 s: half done, about 5 s left
    lines = stream.getvalue().splitlines()
    assert lines == ["run: 2.5 of 10 s (25.0 %), 3 s so far, about 9 s left (Ctrl-C stops)",
                     "run: 5 of 10 s (50.0 %), 5 s so far, about 5 s left (Ctrl-C stops)"]


# -- non-finite values --------------------------------------------------------------------------------
@pytest.mark.parametrize("args, message", [
    (["inverse", "fourbar", "--omega", "1", "--param", "density=1e308", "--out", "x.csv"],
     "A.fx is nan at theta = 0, omega = 1: a speed, acceleration or parameter is too large"),
    (["inverse", "fourbar", "--omega=-1e300", "--out", "x.csv"], "A.fx is -inf at theta = 0, omega = -1e+300"),
    (["forward", "fourbar", "--torque", "1e300", "--t-end", "1", "--out", "x.csv"],
     "torque 1e+300 and omega0 0 give the acceleration"),
    (["disc", "--radius", "1", "--mass", "1", "--stiffness", "1e5", "--damping", "10", "--mu", "0.5", "--v0",
      "0,1e200,0", "--omega0", "0,0,0", "--t-end", "1", "--out", "x.csv"],
     "body 'disc': the rate of vx at t = 0 is nan: an initial value or a parameter is too large"),
])
def test_non_finite_values_are_errors_naming_the_quantity(capsys, tmp_path, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, *args)
    assert code == 2 and message in err and err.count("\n") == 1, err
    assert listing(tmp_path) == []


def test_a_table_with_nan_is_never_written(tmp_path):
    table = Table({"t": np.arange(3.0), "x": np.array([1.0, np.nan, 2.0])}, title="run")
    with pytest.raises(InputError, match="run: x is nan at row 2"):
        table.to_csv(tmp_path / "a.csv")
    assert listing(tmp_path) == []


# -- track expressions and files ----------------------------------------------------------------------
@pytest.mark.parametrize("text, message", [
    ("Heaviside(x-4)*0.2", "uses the function 'Heaviside', which is not allowed"),
    ("+".join(f"0.001*sin({i}*x)" for i in range(3000)), "is too long (52889 characters, at most 2000)"),
    ("*".join(["(1+x)"] * 300), "is too large (more than 1000 operations"),
    ("__import__('os').system('true')", "is not allowed"),
    ("x.real", "'x.real' is not allowed"),
    ("foo(x)", "uses the function 'foo'"),
    ("0.1*y*x", "uses 'y', which is not allowed"),
])
def test_track_expressions_are_parsed_by_an_allow_list(text, message):
    from mechsym.planar.track import load_track

    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)").replace("+", r"\+")
                       .replace("*", r"\*")):
        load_track(text)


def test_track_expression_within_the_limits_keeps_exact_derivatives():
    """An allowed expression: its derivatives (sympy) against the closed form (an independent route)."""
    from mechsym.planar.track import load_track

    x = np.linspace(0, 3, 7)
    f, d1, d2 = load_track("0.05*sin(2*x)^2 + 0.01*x").eval(x)
    assert np.allclose(f, 0.05 * np.sin(2 * x) ** 2 + 0.01 * x, rtol=1e-14, atol=1e-16)
    assert np.allclose(d1, 0.2 * np.sin(2 * x) * np.cos(2 * x) + 0.01, rtol=1e-14, atol=1e-16)
    assert np.allclose(d2, 0.4 * np.cos(4 * x), rtol=1e-13, atol=1e-15)


def test_track_files_out_of_order_or_empty_are_refused(tmp_path):
    from mechsym.planar.track import load_track

    rows = "x,y\n0,0\n1,0.1\n2,0.2\n1.5,0.1\n3,0\n4,0\n"
    (tmp_path / "order.csv").write_text(rows)
    with pytest.raises(InputError, match="row 5 has x = 1.5 after x = 2; x must increase"):
        load_track(str(tmp_path / "order.csv"))
    (tmp_path / "empty.csv").write_text("x,y\n")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy warning leaks
        with pytest.raises(InputError, match="has no data rows"):
            load_track(str(tmp_path / "empty.csv"))


# -- smaller items ------------------------------------------------------------------------------------
FIVEBAR = '''
from mechsym.planar.model import Mechanism


def build():
    m = Mechanism("fivebar")
    m.gravity_down("g")
    m.ground(points={"A": (0, 0), "B": (0.1, 0)})
    m.bar("crank", ("A", "P"), 0.05, 1.0)
    m.bar("coupler", ("P", "C"), 0.25, 1.0, guess=1.4)
    m.bar("rocker", ("B", "M"), 0.125, 1.0, guess=1.8)
    m.revolute("A", "ground", "A", "crank")
    m.revolute("P", "crank", "P", "coupler")
    m.revolute("B", "ground", "B", "rocker")
    m.coordinate("theta", "A", force="torque")
    return m
'''


def test_equations_refuses_a_wrong_mobility_as_kinematics_does(capsys, tmp_path):
    model = tmp_path / "fivebar.py"
    model.write_text(FIVEBAR)
    outcomes = [run(capsys, command, str(model)) for command in ("equations", "kinematics")]
    for code, out, err in outcomes:
        assert code == 2 and out == "" and "mobility is 3" in err
    assert outcomes[0][2] == outcomes[1][2]


def test_sys_exit_in_a_model_file_is_an_error(capsys, tmp_path):
    model = tmp_path / "leaves.py"
    model.write_text("import sys\nsys.exit(3)\n")
    code, _, err = run(capsys, "params", str(model))
    assert code == 2 and err == f"error: model file '{model}' called sys.exit(3) while loading\n"


def test_params_text_and_json_hold_the_same_values(capsys):
    import json

    code, text, _ = run(capsys, "params", "fourbar", "--param", "l_crank=0.06")
    code_json, data, _ = run(capsys, "params", "fourbar", "--param", "l_crank=0.06", "--json")
    data = json.loads(data)
    assert code == code_json == 0 and not text.lstrip().startswith("{")
    assert "l_crank   = 0.06 m" in text and f"mass {data['bodies']['crank']['mass']:.6g} kg" in text


def test_pasibot_slip_refuses_rtol_zero_and_figures_are_computed_once(capsys, tmp_path, monkeypatch):
    """`pasibot slip --rtol 0` is refused; a figure listed three times is computed once. The figure is a stub
    counting its calls: a figure computed three times writes the same file three times, so the files cannot
    show the repetition (only its time), and the real figure takes minutes."""
    code, _, err = run(capsys, "pasibot", "slip", "--mu-s", "0.3", "--omega", "3", "--rtol", "0")
    assert code == 2 and "--rtol must be positive and finite, got 0.0" in err
    from mechanisms import pasibot_figures as st

    calls = []
    monkeypatch.setitem(st.FIGURES, "11", lambda out_dir, params=None, backend="numpy": calls.append(out_dir))
    st.figures(str(tmp_path), ["11", "11", "11"], log=lambda *a: None)
    assert len(calls) == 1


def test_missing_compiler_one_line_warning_and_explicit_backend_error(capsys, monkeypatch, tmp_path):
    from mechsym.codegen import c_backend

    monkeypatch.setenv("MECHSYM_CACHE", str(tmp_path))  # a machine without a compiler has nothing compiled

    def missing(*args, **kwargs):
        raise c_backend.CompilerMissing("no C compiler found")

    monkeypatch.setattr(c_backend, "build", missing)
    monkeypatch.setattr(c_backend, "compiler", lambda: None)
    code, _, err = run(capsys, "inverse", "fourbar", "--omega", "1", "--samples", "4")
    assert code == 0 and err == ("warning: no C compiler found (set CC, or install gcc); falling back to the numpy "
                                 "backend\n")
    code, _, err = run(capsys, "inverse", "fourbar", "--omega", "1", "--samples", "4", "--backend", "c")
    assert code == 2 and err.startswith("error: --backend c needs a C compiler") and err.count("\n") == 1


@pytest.mark.slow
def test_ctrl_c_while_a_large_csv_is_written_keeps_the_previous_file(tmp_path):
    """kinematics of 2,000,000 samples, interrupted at several instants (computing, writing): the CSV is
    either the previous one or complete, never cut, and no temporary file is left. (A single numpy
    operation over 2e6 samples may take a second on a loaded machine, hence the 2 s bound.)"""
    out = tmp_path / "k.csv"
    for delay in (2.0, 5.0, 12.0):
        out.write_text("previous\n")
        code, after = interrupt_cli(["kinematics", "fourbar", "--samples", "2000000", "--out", str(out)], delay, ROOT)
        assert after < 2.0, after
        text = out.read_text() if code == 130 else None
        assert code == 0 or text == "previous\n", (delay, code)
        if code == 0:
            assert sum(1 for _ in open(out)) == 2_000_001
        assert listing(tmp_path) == ["k.csv"]


def test_a_collapsing_step_size_ends_with_an_error_not_an_exhausted_machine():
    """A model too stiff for an explicit method takes ever more steps whose dense output the integrator keeps
    (a rolling disc falling flat ran until it held 5 GB): the run stops with an error naming the time
    reached once that output would pass the memory limit, on the hybrid runner and on a forward run alike,
    and runs normally within the limit."""
    from mechanisms import fourbar
    from mechsym import derive
    from mechsym.core import hybrid
    from mechsym.core.budget import limit_memory

    stiff = hybrid.Mode("stiff", lambda t, y: -1e7 * (y - np.cos(t)), ())
    with limit_memory(1_000_000), pytest.raises(InputError, match=r"hybrid run: the integration stalled at t = .* s: "
                                                                   r"\d+ right-hand side evaluations reached only this "
                                                                   r"time.*memory limit of 977 KiB"):
        hybrid.run([stiff], "stiff", [1.0], (0.0, 1.0), method="RK45", rtol=1e-6)
    system = derive(fourbar.build(), backend="numpy")
    with limit_memory(50_000), pytest.raises(InputError, match="forward run of 'fourbar': the integration stalled at t = .* reached only"):
        system.forward(0.0, 0.0, 0.0, 2.0, dt=0.5, rtol=1e-9)
    with limit_memory(1_000_000):
        assert system.forward(0.0, 0.0, 0.0, 2.0, dt=0.5, rtol=1e-9).status == "done"


def test_a_run_that_creeps_stops_within_seconds_naming_the_time():
    """A step size that collapses without exhausting memory soon (a model far too stiff for an explicit
    method, over a long span) is caught by its progress per CPU second: over a few seconds of CPU it advances
    far less than span / budget.SLOWEST per second, and stops with one line naming the time reached and
    the rate; a model's own explanation (`explain`) replaces it where the model has one."""
    from mechsym.core import budget, hybrid
    from scipy.integrate import solve_ivp

    stiff = hybrid.Mode("stiff", lambda t, y: -1e9 * (y - np.cos(t)), ())
    start = time.thread_time()
    with pytest.raises(InputError) as caught:
        hybrid.run([stiff], "stiff", [1.0], (0.0, 1e4), method="RK45", rtol=1e-6)
    message = str(caught.value)
    assert re.fullmatch(r"hybrid run: the integration stalled at t = \S+ s: it advanced \S+ s in \S+ s of CPU "
                        r"\((\S+) simulated s per CPU s, below the floor of 1; .*", message), message
    rate = float(re.search(r"\((\S+) simulated s per CPU s", message).group(1))
    assert rate < 1.0 and "\n" not in message
    assert time.thread_time() - start < 4 * budget.WINDOW       # ended after about one window of CPU

    def flat(t, y):
        raise InputError(f"the model degenerates at t = {t:.6g} s")

    watched = budget.CallBudget(1, "run", 1e4, "RK45", explain=flat).wrap(lambda t, y: -1e9 * (y - np.cos(t)))
    with pytest.raises(InputError, match=r"^the model degenerates at t = \S+ s$"):
        solve_ivp(watched, (0.0, 1e4), [1.0], method="RK45", rtol=1e-6, dense_output=True)


def test_every_solve_ivp_call_is_watched():
    """scipy's solve_ivp is called in one place, the runner skeleton (mechsym.core.runner.integrate), whose
    right-hand side goes through budget.CallBudget (the one place that stops a creeping run): a runner that
    called solve_ivp itself would escape the watch. (A text check: which runs go through the skeleton is the
    property, and a run's result cannot show it.)"""
    root = Path(__file__).resolve().parent.parent / "mechsym"
    callers = {p.relative_to(root).as_posix(): p.read_text() for p in root.rglob("*.py")
               if re.search(r"\bsolve_ivp\(", p.read_text())}
    assert set(callers) == {"core/runner.py"}
    assert "CallBudget(" in callers["core/runner.py"]


