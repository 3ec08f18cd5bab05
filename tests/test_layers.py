"""mechsym in layers: each package imports only its own layer and the layers below it, and no layer but the
application imports the shipped models (mechanisms/). Every import is parsed, those inside functions
included, relative imports resolved and `from mechsym import x` taken as the module x where there is one,
so that a function-level import cannot hide an edge of the graph (docs/architecture.md: Layers)."""
import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The layers, lowest first: a module of mechsym belongs to the most specific package that contains it.
# "mechsym.planar" holds the planar mechanisms (declaration, kinematics, dynamics, runs, rolling contact);
# "mechsym" holds spatial, contact and the free body (not yet in layers of their own), which use the planar
# layer; the package itself (mechsym/__init__.py, the public API, and __main__) sits on top of them all.
LAYERS = ("mechsym.core", "mechsym.codegen", "mechsym.planar", "mechsym", "mechsym.studies", "mechsym.app")
TOP = {"mechsym", "mechsym.__main__"}

# What only the application may reach: the shipped models.
SHIPPED = ("mechanisms",)
APP = "mechsym.app"


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, root: Path, known: set) -> list[tuple[int, str]]:
    """(line, module) of every import in `path` of a module of mechsym or mechanisms, wherever it stands."""
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([node.module] if node.module else []))
            for a in node.names:
                found.append((node.lineno, f"{base}.{a.name}" if f"{base}.{a.name}" in known else base))
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None))
              in ("import_module", "__import__") and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)):
            found.append((node.lineno, node.args[0].value))
    return [(line, m) for line, m in found if m.split(".")[0] in ("mechsym", "mechanisms")]


def layer(module: str) -> int:
    """The index in LAYERS of the layer holding `module` (the most specific package that contains it); the
    package itself above them all."""
    if module in TOP:
        return len(LAYERS)
    return max((i for i, p in enumerate(LAYERS) if module == p or module.startswith(p + ".")),
               key=lambda i: len(LAYERS[i]))


def _shipped(target: str) -> bool:
    return any(target == s or target.startswith(s + ".") for s in SHIPPED)


def offences(root: Path) -> list[str]:
    """Every import under root/mechsym that goes up the layers, or to the shipped models from outside the
    application."""
    files = sorted((root / "mechsym").rglob("*.py"))
    known = {module_name(p, root) for p in files}
    found = []
    for path in files:
        name = module_name(path, root)
        for line, target in imports(path, root, known):
            where = f"{path.relative_to(root)}:{line}: {name} imports {target}"
            if _shipped(target):
                if not (name == APP or name.startswith(APP + ".")):
                    found.append(f"{where} (the shipped models, outside the application)")
                continue
            if layer(target) > layer(name):
                found.append(f"{where} (a layer above {LAYERS[layer(name)]})")
    return found


def test_every_import_stays_in_its_layer_or_below():
    assert len(list((ROOT / "mechsym" / "core").glob("*.py"))) > 10
    assert (ROOT / "mechsym" / "studies" / "sweep.py").exists() and (ROOT / "mechsym" / "app" / "cli.py").exists()
    found = offences(ROOT)
    assert not found, "imports that go up the layers:\n" + "\n".join(found)


def test_the_check_finds_an_upward_import(tmp_path, monkeypatch):
    """The scan is not vacuous: an upward import inside a function, a relative one, one through `from
    mechsym import x`, the planar layer reaching the spatial one, a study reaching the command line, and a
    library module or a study importing a shipped model are each found; the application importing them and
    spatial importing the planar layer are not."""
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    for rel, text in {
        "mechsym/__init__.py": "",
        "mechsym/planar/__init__.py": "",
        "mechsym/planar/kinematics.py": "",
        "mechsym/planar/model.py": "from mechanisms import fourbar\nfrom mechsym.codegen import spec\n",
        "mechsym/planar/system.py": "def f():\n    from mechsym.spatial.system import TreeSystem\n",
        "mechsym/spatial/__init__.py": "",
        "mechsym/spatial/system.py": "from mechsym.planar.model import Mechanism\n",
        "mechsym/core/__init__.py": "",
        "mechsym/core/errors.py": "",
        "mechsym/core/results.py": "def f():\n    from mechsym.planar.kinematics import Solver\n",
        "mechsym/codegen/__init__.py": "",
        "mechsym/codegen/spec.py": "from ..core import errors\nfrom ..planar import kinematics\n",
        "mechsym/codegen/sparse_plan.py": "from mechsym import planar\nfrom mechsym.core.errors import X\n",
        "mechsym/studies/__init__.py": "",
        "mechsym/studies/sweep.py": ("from mechsym.planar.kinematics import Solver\n"
                                     "def f():\n    from mechsym.app.cli import build_parser\n"
                                     "    import importlib\n    importlib.import_module('mechanisms.pasibot')\n"),
        "mechsym/app/__init__.py": "",
        "mechsym/app/registry.py": "from mechsym.studies import sweep\ndef f():\n    from mechanisms import REGISTRY\n",
        "mechsym/app/cli.py": "from .registry import find\n",
    }.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    found = sorted(o.split(": ", 1)[1] for o in offences(tmp_path))
    assert found == [
        "mechsym.codegen.sparse_plan imports mechsym.planar (a layer above mechsym.codegen)",
        "mechsym.codegen.spec imports mechsym.planar.kinematics (a layer above mechsym.codegen)",
        "mechsym.core.results imports mechsym.planar.kinematics (a layer above mechsym.core)",
        "mechsym.planar.model imports mechanisms (the shipped models, outside the application)",
        "mechsym.planar.system imports mechsym.spatial.system (a layer above mechsym.planar)",
        "mechsym.studies.sweep imports mechanisms.pasibot (the shipped models, outside the application)",
        "mechsym.studies.sweep imports mechsym.app.cli (a layer above mechsym.studies)",
    ]


def test_the_shipped_models_use_the_public_entry_points_of_studies_and_app():
    """mechanisms/ reaches the command line only through its option groups (mechsym.app.options) and the
    studies only through the package's exported names (mechsym.studies)."""
    files = sorted((ROOT / "mechanisms").glob("*.py"))
    known = {module_name(p, ROOT) for p in sorted((ROOT / "mechsym").rglob("*.py"))}
    found = [f"{p.name}:{line}: {target}" for p in files for line, target in imports(p, ROOT, known)
             if (target.startswith("mechsym.app") and target != "mechsym.app.options")
             or (target.startswith("mechsym.studies.") and target != "mechsym.studies")]
    assert not found, "shipped models past the public entry points:\n" + "\n".join(found)


def test_the_library_works_without_the_shipped_models(tmp_path):
    """A copy of the package without mechanisms/ (and any import of it refused) imports mechsym, its studies
    and its spatial layer, and
    sweeps a model declared in a file of the user's (the four-bar's declaration, copied): its figures
    equal System.inverse's, and nothing of mechanisms/ was imported."""
    shutil.copytree(ROOT / "mechsym", tmp_path / "mechsym", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "mechanisms" / "fourbar.py", tmp_path / "my_linkage.py")
    code = """
import sys

class NoShippedModels:  # the editable install of the package would find mechanisms/ beside the original
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "mechanisms":
            raise ModuleNotFoundError(f"no module named {name!r}", name=name)

sys.meta_path.insert(0, NoShippedModels())
import mechsym, mechsym.studies, mechsym.spatial
assert mechsym.__file__.startswith(sys.argv[1])
import numpy as np
from mechsym.studies import InverseOptions, TableStudy, sweep
from my_linkage import build

study = TableStudy(InverseOptions(omega=[2.0], samples=12), ["absmax:torque"])
table = sweep(build, {"density": [1.0, 2.0]}, study, backend="numpy")
system = mechsym.derive(build())
theta = 2 * np.pi * np.arange(12) / 12
direct = [np.max(np.abs(system.inverse(theta, [2.0], params={"density": d})["torque"])) for d in (1.0, 2.0)]
assert list(table["status"]) == ["ok", "ok"]
assert np.allclose(table["absmax_torque"], direct, rtol=1e-12, atol=0)
assert not any(name.split(".")[0] == "mechanisms" for name in sys.modules)
print("ok")
"""
    env = {"PYTHONPATH": str(tmp_path), "PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "/")}
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
