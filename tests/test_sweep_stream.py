"""Sweeps streamed to disk: the file equals the in-memory table's CSV on one core, one worker and two; a
Ctrl-C leaves the .part and --resume completes it into the same file; Parquet reads back with its units."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from mechsym.app.cli import main
from mechsym.app.registry import find
from mechsym.studies.analyses import InverseOptions
from mechsym.studies import TableStudy, grid, sweep
from mechsym.studies.sweep_grid import Grid

ROOT = Path(__file__).resolve().parent.parent
FOURBAR = find("fourbar")  # what `mechsym sweep ... fourbar` sends to the workers
STUDY = TableStudy(InverseOptions(omega=[3.0], samples=90), ("absmax:torque", "rms:torque", "final:B.fx"))
AXES = {"l_crank": [0.04, 0.05, 0.06, 1.5], "density": [1.0, 2.0, 3.0]}  # l_crank = 1.5 cannot assemble


def test_the_grid_is_generated_from_its_axes():
    """Grid: sets by index and by range equal itertools.product's, columns vectorised, nothing expanded."""
    import itertools

    axes = {"a": [1.0, 2.0], "b": [3.0, 4.0, 5.0], "c": [6.0, 7.0]}
    g = grid(axes)
    expected = [dict(zip(axes, combo)) for combo in itertools.product(*axes.values())]
    assert len(g) == 12 and list(g) == expected and g[5] == expected[5] and g[-1] == expected[-1]
    part = g[3:9]
    assert isinstance(part, Grid) and list(part) == expected[3:9] and part[0] == expected[3]
    assert np.array_equal(part.column("b"), [e["b"] for e in expected[3:9]])
    huge = grid({f"p{i}": np.linspace(0, 1, 10) for i in range(9)})  # 10^9 sets: only the axes are held
    assert len(huge) == 10**9 and huge[10**9 - 1] == {f"p{i}": 1.0 for i in range(9)}


def test_streamed_file_equals_the_table_on_one_core_one_worker_and_two(tmp_path):
    table = sweep(FOURBAR, AXES, STUDY)
    table.to_csv(tmp_path / "table.csv")
    expected = (tmp_path / "table.csv").read_bytes()
    runs = {"serial": {}, "one worker": {"workers": 1, "chunk": 2}, "two workers": {"workers": 2, "chunk": 1}}
    for name, options in runs.items():
        path = tmp_path / f"{name}.csv"
        found = sweep(FOURBAR, AXES, STUDY, out=path, **options)
        assert path.read_bytes() == expected, name
        assert not Path(f"{path}.part").exists()
        assert (found.sets, found.failed) == (12, 3) and "assemble" in found.first_failure


def test_a_killed_worker_leaves_the_same_file(tmp_path):
    from test_sweep import DiesOnce

    sweep(FOURBAR, AXES, STUDY, out=tmp_path / "serial.csv")
    sweep(FOURBAR, AXES, DiesOnce(str(tmp_path / "marker"), STUDY), out=tmp_path / "pool.csv", workers=2, chunk=1)
    assert (tmp_path / "marker").exists()  # a worker did die
    assert (tmp_path / "pool.csv").read_bytes() == (tmp_path / "serial.csv").read_bytes()


def test_a_leftover_part_is_resumed_only_when_asked_and_only_for_its_own_sweep(tmp_path, capsys):
    path = tmp_path / "s.csv"
    part = Path(f"{path}.part")
    part.write_text("# mechsym sweep 0123 of 12 sets\nindex,l_crank\n")
    args = ["sweep", "inverse", "fourbar", "--omega", "3", "--samples", "90", "--reduce", "absmax:torque",
            "--param", "l_crank=0.04,0.05", "--out", str(path)]
    assert main(args) == 2 and "--resume" in capsys.readouterr().err
    assert main([*args, "--resume"]) == 2 and "holds another sweep" in capsys.readouterr().err
    assert not path.exists() and part.exists()
    assert main(["sweep", "inverse", "fourbar", "--omega", "3", "--reduce", "absmax:torque", "--param",
                 "l_crank=0.04,0.05", "--resume"]) == 2 and "give --out" in capsys.readouterr().err


def _rows(part):
    with open(part) as fh:
        return max(0, sum(1 for line in fh if line.endswith("\n")) - 2)


def test_ctrl_c_then_resume_gives_the_uninterrupted_file(tmp_path):
    """A streamed sweep sent SIGINT after some rows exits 130 naming its .part; --resume computes only the
    missing sets (the rows already there are kept as they are) and the file equals an uninterrupted run's."""
    param = ["--param", "l_crank=0.045:0.055:150", "--param", "l_rocker=0.12:0.13:100"]
    args = ["sweep", "inverse", "fourbar", "--omega", "3", "--samples", "360", "--reduce", "absmax:torque",
            "--reduce", "rms:torque", *param, "--chunk", "100"]
    path = tmp_path / "run.csv"
    part = Path(f"{path}.part")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "mechsym", *args, "--out", str(path)], cwd=tmp_path, env=env,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while (not part.exists() or _rows(part) < 300) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and str(part) in err and "--resume" in err, err
    assert not path.exists() and 300 <= _rows(part) < 15000
    before = part.read_text()
    kept = before.splitlines()[2:]
    # the resumed run appends the rest without recomputing what the .part holds
    done = subprocess.run([sys.executable, "-m", "mechsym", *args, "--out", str(path), "--resume"], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert not part.exists()
    whole = tmp_path / "whole.csv"
    assert main([*args, "--out", str(whole)]) == 0
    assert path.read_bytes() == whole.read_bytes()
    lines = whole.read_text().splitlines()[1:]
    index = [int(line.split(",", 1)[0]) for line in kept if line]
    assert all(line.split(",", 1)[1] == lines[i] for line, i in zip(kept, index))


def test_parquet_reads_back_with_pandas_and_pyarrow_with_units(tmp_path):
    pd = pytest.importorskip("pandas")
    pq = pytest.importorskip("pyarrow.parquet")
    table = sweep(FOURBAR, AXES, STUDY)
    path = tmp_path / "s.parquet"
    sweep(FOURBAR, AXES, STUDY, out=path, workers=2, chunk=2)
    frame = pd.read_parquet(path)
    assert list(frame.columns) == table.names
    for name in table.names:
        if name in ("status", "message"):
            assert list(frame[name]) == list(table[name])
        else:
            assert np.array_equal(frame[name].to_numpy(), table[name], equal_nan=True)
    schema = pq.read_schema(path)
    assert schema.field("l_crank").metadata == {b"unit": b"m"} and schema.field("density").metadata == {b"unit": b"kg/m"}
    assert pq.read_table(path).num_rows == 12 and schema.metadata[b"title"] == b"fourbar: sweep"


def test_resume_recomputes_only_missing_and_lost_sets(tmp_path, monkeypatch):
    """A .part holding some tasks' rows (one of them given up as lost, one row written twice, a last row cut
    short) is completed by resume=True: only the missing sets and the lost task's are computed again, and
    the file equals an uninterrupted run's."""
    import importlib

    sw = importlib.import_module("mechsym.studies.sweep")  # the module (mechsym.studies.sweep is its function)
    from mechsym.studies.sweep_rows import Rows
    from mechsym.studies.sweep_stream import RowFile, csv_rows

    sets = grid(AXES)
    whole = tmp_path / "whole.csv"
    sweep(FOURBAR, AXES, STUDY, out=whole)
    names, figures = list(AXES), STUDY.names
    path = tmp_path / "resumed.csv"
    header = [*names, *figures, "status", "message"]
    rows = RowFile(path, sw._digest(FOURBAR, "c", STUDY, sets), header, len(sets))
    done = sw.evaluate(sw.ModelRef(FOURBAR), STUDY, list(sets))
    rows.write(csv_rows(sets[6:9], 6, done[6:9], names, figures), 0, "")
    rows.write(csv_rows(sets[0:2], 0, Rows.failed(2, "task lost 3 times: BrokenProcessPool: gone"), names, figures), 2,
               "")
    rows.write(csv_rows(sets[7:8], 7, done[7:8], names, figures), 0, "")  # written twice: the last one counts
    rows.write(csv_rows(sets[2:3], 2, done[2:3], names, figures)[:-9], 0, "")  # cut short
    rows.close()
    computed = []
    original = sw.evaluate_csv
    monkeypatch.setattr(sw, "evaluate_csv", lambda m, st, s, first, *a: computed.extend(range(first, first + len(s)))
                        or original(m, st, s, first, *a))
    sweep(FOURBAR, AXES, STUDY, out=path, resume=True)
    assert sorted(computed) == [0, 1, 2, 3, 4, 5, 9, 10, 11]
    assert path.read_bytes() == whole.read_bytes()
