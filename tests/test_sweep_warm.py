"""A sweep worker's warm start (mechsym.studies.sweep_warm): a fresh worker process evaluates an inverse or a
forward study from the manifest the sweeping process recorded, without importing sympy, with the figures of the full route;
a data file the model's build read is covered by the manifest, so editing it sends the worker back to
the full route."""
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from mechsym.app.registry import find
from mechsym.codegen import c_backend
from mechsym.studies.analyses import ForwardOptions, InverseOptions
from mechsym.studies import TableStudy, grid, sweep

pytestmark = pytest.mark.skipif(c_backend.compiler() is None, reason="no C compiler")
ROOT = Path(__file__).resolve().parent.parent
STUDY = dict(options={"omega": [2.0, 3.0], "alpha": 0.5, "samples": 180},
             reductions=["absmax:torque", "rms:B.fy", "final:A.fx"])

WORKER = r"""
import json, sys
from mechsym.app.registry import find
from mechsym.studies.analyses import ForwardOptions, InverseOptions
from mechsym.studies import TableStudy
from mechsym.studies.sweep import ModelRef, evaluate
spec = json.loads(sys.argv[1])
ref = ModelRef(find(spec["model"]))
if spec["route"] == "full":  # derived first: evaluate() then takes the full route
    ref.system()
options = (ForwardOptions if spec["study"].get("analysis") == "forward" else InverseOptions)(**spec["study"]["options"])
study = TableStudy(options, spec["study"]["reductions"])
rows = list(evaluate(ref, study, spec["sets"]))
print(json.dumps({"sympy": "sympy" in sys.modules, "scipy": "scipy" in sys.modules, "rows": rows}))
"""


def _study():
    return TableStudy(InverseOptions(**STUDY["options"]), STUDY["reductions"])


def _worker(model, sets, study=STUDY, route="warm"):
    """evaluate() of one task in a fresh process, as a worker of a process pool runs it (route "full":
    with the model derived first, as the sweeping process has it)."""
    spec = json.dumps({"model": model, "sets": list(sets), "study": study, "route": route})
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", WORKER, spec], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def _figures(table, names):
    """Per row of a sweep's table its figures, or None for a failed set."""
    return [None if table["status"][k] != "ok" else [float(table[n][k]) for n in names] for k in range(len(table))]


def _rows(rows, names):
    """Per row that evaluate() returned its figures, or None for a failed set."""
    return [None if r[0] is None else [r[0][n] for n in names] for r in rows]


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("MECHSYM_CACHE", str(tmp_path / "cache"))
    return tmp_path


def test_worker_evaluates_inertial_sets_without_sympy(cache):
    """Densities and gravities (the default geometry): a fresh worker imports neither sympy nor scipy and
    gives the sweeping process's figures and messages."""
    study = _study()
    sets = grid(density=[1.0, 2.5, -1.0], g=[9.81, 1.62])
    with ThreadPoolExecutor(1) as pool:  # the sweeping process records the manifest before tasks leave
        table = sweep(find("fourbar"), sets, study, executor=pool)
    out = _worker("fourbar", sets)
    assert not out["sympy"] and not out["scipy"]
    expected = _figures(table, study.names)
    got = _rows(out["rows"], study.names)
    for e, g in zip(expected, got):
        assert (e is None) == (g is None) and (e is None or np.allclose(g, e, rtol=1e-12, atol=0.0))
    assert [r[1] for r in out["rows"]] == list(table["message"])


def test_a_forward_study_starts_warm_too(cache):
    """A forward study of other link lengths and densities (each set its own run in ms_forward_sets): the
    sweeping process derives nothing once the manifest is there, a fresh worker imports neither sympy nor
    scipy, and both give the figures and messages of a sweep of the derived model to 1e-12."""
    forward = {"analysis": "forward", "options": {"torque": 0.05, "t_end": 0.3},
               "reductions": ["final:theta", "absmax:omega", "mean:torque"]}
    study = TableStudy(ForwardOptions(**forward["options"]), forward["reductions"])
    sets = grid(l_crank=[0.045, 0.055], l_rocker=[0.12, 0.13], density=[1.0, -1.0])
    with ThreadPoolExecutor(1) as pool:  # derived here: the manifest recorded
        table = sweep(find("fourbar"), sets, study, executor=pool)
    code = ("import sys; from concurrent.futures import ThreadPoolExecutor; from mechsym.app.registry import find; "
            "from mechsym.studies import ForwardOptions, TableStudy, grid, sweep; "
            f"study = TableStudy(ForwardOptions(**{forward['options']!r}), {forward['reductions']!r}); "
            f"sweep(find('fourbar'), grid({dict(sets.axes)!r}), study, executor=ThreadPoolExecutor(1)); "
            "print('sympy' in sys.modules)")
    parent = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, PYTHONPATH=str(ROOT)),
                            capture_output=True, text=True, check=True)
    assert parent.stdout.split()[-1] == "False"
    out = _worker("fourbar", sets, forward)
    assert not out["sympy"] and not out["scipy"]
    assert [r[1] for r in out["rows"]] == list(table["message"]) and list(table["status"]).count("ok") == 4
    for e, g in zip(_figures(table, study.names), _rows(out["rows"], study.names)):
        assert (e is None) == (g is None) and (e is None or np.allclose(g, e, rtol=1e-12, atol=0.0))


def test_other_geometries_are_warm_and_only_a_set_that_fails_derives(cache):
    """Sets with other link lengths start warm too (each set's scales from the manifest's point expressions,
    its start from the reference assembly, all in C): no sympy, the sweeping process's figures to 1e-12. A
    set that cannot assemble sends the worker to the full route, which names it as the sweeping process
    did."""
    study = _study()
    sets = grid(l_crank=[0.045, 0.05, 0.055], l_rocker=[0.12, 0.13], density=[1.0, 2.0])
    with ThreadPoolExecutor(1) as pool:
        table = sweep(find("fourbar"), sets, study, executor=pool)
    out = _worker("fourbar", sets)
    assert not out["sympy"] and [r[1] for r in out["rows"]] == [""] * 12
    assert np.allclose(np.array(_rows(out["rows"], study.names), float),
                       np.array(_figures(table, study.names), float), rtol=1e-12, atol=0.0)
    failing = grid(l_crank=[0.05, 1.5], density=[1.0])
    with ThreadPoolExecutor(1) as pool:
        table = sweep(find("fourbar"), failing, study, executor=pool)
    out = _worker("fourbar", failing)
    assert out["sympy"] and [r[1] for r in out["rows"]] == list(table["message"])
    assert "cannot assemble" in table["message"][1] and table["message"][0] == ""


def _model_reading_a_data_file():
    """The fourbar of mechanisms/fourbar.py with its ground pivot distance read from ground.json beside it."""
    source = (ROOT / "mechanisms" / "fourbar.py").read_text()
    source = source.replace('d = m.parameter("d_ground", 0.1,', 'd = m.parameter("d_ground", json.loads(('
                            'Path(__file__).parent / "ground.json").read_text())["d_ground"],')
    return "import json\nfrom pathlib import Path\n" + source


def test_a_data_file_the_model_reads_is_covered(cache):
    model = cache / "fourbar_data.py"
    model.write_text(_model_reading_a_data_file())
    (cache / "ground.json").write_text(json.dumps({"d_ground": 0.1}))
    study = _study()
    sets = grid(density=[1.0, 2.0])
    with ThreadPoolExecutor(1) as pool:
        table = sweep(find(str(model)), sets, study, executor=pool)
    first = _worker(str(model), sets)
    assert not first["sympy"]
    assert np.allclose(np.array(_rows(first["rows"], study.names), float),
                       np.array(_figures(table, study.names), float), rtol=1e-12, atol=0.0)
    (cache / "ground.json").write_text(json.dumps({"d_ground": 0.11}))  # the model file itself unchanged
    second = _worker(str(model), sets)
    assert second["sympy"]  # the manifest no longer applies: the worker derived the edited model
    full = _worker(str(model), sets, route="full")
    assert np.allclose(np.array(_rows(second["rows"], study.names), float),
                       np.array(_rows(full["rows"], study.names), float), rtol=1e-12, atol=0.0)
    assert not np.allclose(np.array(_rows(second["rows"], study.names), float),
                           np.array(_rows(first["rows"], study.names), float), rtol=1e-6)


def test_manifests_are_per_cpu(monkeypatch):
    """A manifest names a library built with -march=native: another CPU finds no manifest of it. One built
    portably (MECHSYM_PORTABLE=1) serves every CPU, under its own name."""
    from mechsym.app import warm
    from mechsym.studies import sweep_warm

    def paths():
        return sweep_warm.manifest_path(find("fourbar")), warm.manifest_path("fourbar")

    monkeypatch.setenv("MECHSYM_PORTABLE", "0")
    native = paths()
    monkeypatch.setenv("MECHSYM_PORTABLE", "1")
    portable = paths()
    monkeypatch.setattr(c_backend, "cpu_features", lambda: "another CPU: avx512f")
    assert paths() == portable and not set(portable) & set(native)
    monkeypatch.setenv("MECHSYM_PORTABLE", "0")
    other = paths()
    assert other[0] != native[0] and other[1] != native[1]
