"""The notebooks of docs/notebooks run from top to bottom (nbclient), and show what they promise: HTML
tables, a system in LaTeX, figures."""
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "docs" / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs(path, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.setenv("MECHSYM_PROGRESS", "0")
    nb = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}).execute()
    kinds = {k for cell in nb.cells if cell.cell_type == "code" for out in cell.get("outputs", [])
             for k in out.get("data", {})}
    assert "text/html" in kinds and "image/png" in kinds
    if path.stem == "new_linkage":
        assert "text/latex" in kinds


def test_there_is_a_notebook_per_use():
    assert {p.stem for p in NOTEBOOKS} == {"new_linkage", "pasibot_study", "ugv_optimisation"}
