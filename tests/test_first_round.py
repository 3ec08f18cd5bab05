"""Every command of the first round keeps its columns and its numbers: the tables that mechsym wrote at
commit 683ec53, before the core became one design (tests/reference/first_round/make.sh), against the
same commands now, on both backends. A regression of the first round's results, not an independent check:
those come from the oracles (tests/test_oracle.py, tests/test_pasibot.py). Inverse and kinematics tables
agree to 1e-9 norm-wise per column; forward runs (rtol 1e-11) to 1e-8. Later versions may add columns."""
import gzip
import io
from pathlib import Path

import numpy as np
import pytest

from conftest import agree
from mechsym.app.cli import main

REFERENCE = Path(__file__).parent / "reference" / "first_round"
COMMANDS = {
    "inverse": (["--omega", "1", "--omega", "4", "--samples", "73"], 1e-9),
    "kinematics": (["--samples", "73"], 1e-9),
    "forward": (["--torque", "0.05", "--omega0", "2", "--t-end", "1", "--dt", "0.02", "--rtol", "1e-11",
                 "--atol", "1e-12"], 1e-8),
}
CASES = [(c, m) for c in ("inverse", "kinematics") for m in ("fourbar", "slider-crank", "pasibot")] + [
    ("forward", m) for m in ("fourbar", "slider-crank")]


def _table(text):
    """(column names, values) of a CSV text."""
    header, _, body = text.partition("\n")
    return header.split(","), np.loadtxt(io.StringIO(body), delimiter=",", ndmin=2)


@pytest.mark.parametrize("backend", ["c", "numpy"])
@pytest.mark.parametrize("command,model", CASES)
def test_first_round_tables_are_unchanged(command, model, backend, tmp_path, capsys):
    options, tol = COMMANDS[command]
    out = tmp_path / "now.csv"
    assert main([command, model, *options, "--backend", backend, "--out", str(out)]) == 0
    capsys.readouterr()
    then_names, then = _table(gzip.decompress((REFERENCE / f"{command}_{model}.csv.gz").read_bytes()).decode())
    now_names, now = _table(out.read_text())
    missing = [n for n in then_names if n not in now_names]
    assert not missing, f"{command} {model} lost columns {missing}"
    assert now.shape[0] == then.shape[0]
    for j, name in enumerate(then_names):
        column = now[:, now_names.index(name)]
        assert agree(column, then[:, j], tol) or np.max(np.abs(column - then[:, j])) <= 1e-12, \
            f"{command} {model} column {name}: {np.max(np.abs(column - then[:, j]))}"
