"""The examples of docs/getting-started.md and docs/trees.md run as the pages show them: every Python block
(the model file saved as my_linkage.py, the Python API, the declaration fragments) and every `mechsym`
command of the pages' shell blocks, in a fresh folder, with what the page says of their results checked
against a second route (the command line against the Python API; the folded against the symbolic URDF
tree; the page's error message against the page's text)."""
import os
import re
import shlex
from pathlib import Path

import numpy as np
import pytest

from conftest import agree, doc_blocks
from mechsym.app.cli import main
from mechsym.core.results import read_csv

ROOT = Path(__file__).resolve().parent.parent


def commands(page):
    """The `mechsym ...` command lines of a page's bash blocks, continuation lines joined, comments dropped."""
    lines = []
    for block in doc_blocks(page, "bash"):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split("#")[0].strip()
            if line.startswith("mechsym "):
                lines.append(shlex.split(line)[1:])
    return lines


@pytest.fixture
def linkage(tmp_path, monkeypatch):
    """A fresh folder holding the page's model file, as the current directory."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "my_linkage.py").write_text(doc_blocks("getting-started.md")[0])
    return tmp_path


def test_getting_started_python_blocks(linkage):
    """The Python API block draws one line per speed with a legend, each the torque of that speed; the
    fragment block declares a point mass, a plate and a slide on a mechanism of its own."""
    blocks = doc_blocks("getting-started.md")
    assert len(blocks) == 3
    scope = {"__name__": "docs_getting_started"}
    exec(blocks[1], scope)
    assert (linkage / "out" / "torque.png").stat().st_size > 0
    table, system = scope["table"], scope["system"]
    fig = table.plot(None, "theta", ["torque"])
    lines = fig.axes[0].get_lines()
    assert [line.get_label() for line in lines] == ["torque, omega = 5 rad/s", "torque, omega = 10 rad/s"]
    theta = np.linspace(0, 2 * np.pi, 720, endpoint=False)
    assert agree(lines[1].get_ydata(), system.inverse(theta, 10.0)["torque"], 1e-12)

    from mechsym import Mechanism

    m = Mechanism("fragment")
    ms = m.parameter("ms", 0.3, "kg")
    m.ground(points={"L": (0, 0)})
    exec(blocks[2], {"m": m, "ms": ms})
    assert {"slider", "coupler"} <= set(m.bodies) and "guide" in m.joints
    assert m.bodies["coupler"].mass != 0 and m.bodies["slider"].inertia == 0


def test_getting_started_commands(linkage, capsys):
    """Every command of the page exits 0; torque.csv has the columns the page names, and its torque at 10
    rad/s is the Python API's; the page's bad-input example gives the error the page shows."""
    lines = commands("getting-started.md")
    assert len(lines) >= 11
    for args in lines:
        assert main(args) == 0, (args, capsys.readouterr().err)
    capsys.readouterr()
    torque = read_csv(linkage / "out" / "torque.csv")
    assert torque.names[:3] == ["theta", "omega", "O.fx"] and torque.names[-1] == "torque"
    import mechsym

    python = mechsym.derive(mechsym.load_mechanism("my_linkage.py")).inverse(torque["theta"], 10.0)
    assert agree(torque["torque"], python["torque"], 1e-12)

    page = (ROOT / "docs" / "getting-started.md").read_text()
    shown = re.search(r"\$ mechsym (.*)\n(error: .*)\n", page)
    assert main(shlex.split(shown[1])) == 2
    err = capsys.readouterr().err
    pattern = ".*".join(re.escape(part) for part in shown[2].split("..."))
    assert err.count("\n") == 1 and re.fullmatch(pattern, err.strip()), (err, shown[2])


def test_trees_python_blocks(monkeypatch):
    """The URDF block, run from the repository's folder as the page says: the arm read from URDF is the
    arm the page declares in Python, and the tree with every value folded into the code has the mass
    matrix of the symbolic one; HyQ gets its free-flyer base."""
    from mechsym import derive
    from test_trees import docs_arm

    monkeypatch.chdir(ROOT)
    blocks = doc_blocks("trees.md")
    assert len(blocks) == 3
    scope = {"__name__": "docs_trees"}
    exec(blocks[2], scope)
    arm, frozen, hyq = (derive(scope[name]) for name in ("arm", "frozen", "hyq"))
    python = derive(docs_arm())
    assert hyq.nq == 19 and hyq.nv == 18 and hyq.coordinate_names[:3] == ["base.x", "base.y", "base.z"]
    q = np.random.default_rng(7).uniform(-2, 2, (20, arm.nq))
    assert frozen.param_values.size < arm.param_values.size
    assert agree(frozen.mass_matrix(q), arm.mass_matrix(q), 1e-12)
    assert agree(python.mass_matrix(q), arm.mass_matrix(q), 1e-12)


def test_the_pages_examples_are_all_run():
    """A new Python block on these pages needs a test here: the count of blocks is the count run above."""
    assert len(doc_blocks("getting-started.md")) == 3 and len(doc_blocks("trees.md")) == 3
    assert os.path.isfile(ROOT / "docs" / "examples" / "arm.urdf")
