"""A warm `mechsym inverse` from the manifest (mechsym.app.warm): no sympy, scipy or matplotlib imported, and
the same table as the full route that derived the mechanism."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("sympy", "scipy", "matplotlib")
PROBE = ("import sys; from mechsym.app.cli import main; code = main(sys.argv[1:]); "
         f"print('heavy:', [m for m in {HEAVY!r} if m in sys.modules], file=sys.stderr); sys.exit(code)")


def mechsym(args, cache):
    env = dict(os.environ, MECHSYM_CACHE=str(cache))
    proc = subprocess.run([sys.executable, "-c", PROBE, *args], cwd=ROOT, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout, proc.stderr


def table(text):
    lines = text.strip().splitlines()
    return lines[0], np.array([[float(v) for v in line.split(",")] for line in lines[1:]])


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("cache")


def test_warm_inverse_imports_no_sympy_and_matches_the_full_route(tmp_path):
    cache = tmp_path / "cache"                          # its own: the first run must find nothing
    args = ["inverse", "fourbar", "--omega", "3", "--omega", "-5", "--alpha", "2", "--samples", "24"]
    full, err = mechsym(args, cache)
    assert "heavy: []" not in err                       # the first run derives (sympy)
    warm, err = mechsym(args, cache)
    assert "heavy: []" in err
    (h1, a), (h2, b) = table(full), table(warm)
    assert h1 == h2 and a.shape == b.shape == (48, 11)
    assert np.max(np.abs(a - b)) <= 1e-10 * np.max(np.abs(a))


def test_what_the_manifest_does_not_cover_goes_the_full_route(cache):
    mechsym(["inverse", "fourbar", "--omega", "3", "--samples", "6"], cache)
    base, err = mechsym(["inverse", "fourbar", "--omega", "3", "--samples", "6", "--param", "density=2000"], cache)
    assert "heavy: []" not in err                       # other parameters: derived again
    out, err = mechsym(["inverse", "fourbar", "--omega", "3", "--samples", "6", "--theta0", "1"], cache)
    assert "heavy: []" not in err                       # another first sample: its configuration is not known


def test_a_warm_run_refuses_an_unwritable_output_before_any_work(cache, tmp_path):
    """The warm route checks its outputs as the full route does: exit 2, one line naming the option's
    problem (before, a warm repeat wrote into /proc late and named the OS error, and a file in the way of
    the output's folder ended in an internal error)."""
    mechsym(["inverse", "fourbar", "--omega", "3", "--samples", "6"], cache)
    (tmp_path / "blocker").write_text("a file")
    env = dict(os.environ, MECHSYM_CACHE=str(cache))
    for out, message in (("/proc/t.csv", "cannot write in '/proc'"), (str(tmp_path / "blocker" / "t.csv"),
                                                                      "is a file, not a folder")):
        proc = subprocess.run([sys.executable, "-c", PROBE, "inverse", "fourbar", "--omega", "3", "--samples", "6",
                               "--out", out], cwd=ROOT, env=env, capture_output=True, text=True)
        assert proc.returncode == 2 and message in proc.stderr and "heavy: []" in proc.stderr, proc.stderr
        assert proc.stderr.count("error:") == 1


def test_a_changed_model_file_is_not_served_from_an_old_manifest(cache, tmp_path):
    model = tmp_path / "bar.py"
    model.write_text((ROOT / "mechanisms" / "fourbar.py").read_text())
    args = ["inverse", str(model), "--omega", "2", "--samples", "6"]
    mechsym(args, cache)
    assert "heavy: []" in mechsym(args, cache)[1]
    model.write_text(model.read_text() + "\n# edited\n")
    assert "heavy: []" not in mechsym(args, cache)[1]


def test_a_changed_data_file_the_model_reads_is_not_served_from_an_old_manifest(cache, tmp_path):
    """The manifest keeps the SHA-256 of every file the model's build opened: a model file unchanged but
    its data edited is derived again, and its table follows the data."""
    source = (ROOT / "mechanisms" / "fourbar.py").read_text()
    source = source.replace('d = m.parameter("d_ground", 0.1,',
                            'd = m.parameter("d_ground", float((Path(__file__).parent / "ground.txt").read_text()),')
    model = tmp_path / "bar_data.py"
    model.write_text("from pathlib import Path\n" + source)
    (tmp_path / "ground.txt").write_text("0.1")
    args = ["inverse", str(model), "--omega", "2", "--samples", "6"]
    first, _ = mechsym(args, cache)
    warm, err = mechsym(args, cache)
    assert "heavy: []" in err and warm == first
    (tmp_path / "ground.txt").write_text("0.105")
    edited, err = mechsym(args, cache)
    assert "heavy: []" not in err and table(edited)[1].shape == table(first)[1].shape
    assert not np.allclose(table(edited)[1], table(first)[1])


@pytest.mark.parametrize("argv", [
    ["inverse", "fourbar", "--omega", "3"],
    ["inverse", "fourbar", "--omega", "1", "--omega", "2", "--alpha", "-1", "--samples", "7", "--theta0", "10deg",
     "--out", "x.csv", "--param", "density=3", "--backend", "numpy", "--max-memory", "1G"],
])
def test_the_warm_parser_reads_an_inverse_line_as_the_full_parser(argv):
    from mechsym.app import warm
    from mechsym.app.cli import build_parser

    assert vars(warm.parse(argv)) == vars(build_parser().parse_args(argv))
