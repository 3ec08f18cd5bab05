"""Write docs/api.md from the docstrings and signatures of mechsym's public modules.

    python docs/make_api.py

Run it after changing a public name; tests/test_api_docs.py checks that every public class and function
of the modules below is in the reference.
"""
from __future__ import annotations

import importlib
import inspect
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

INTRO = """# API reference

The Python API, module by module: every public class and function with its arguments and what it
returns. Units are SI throughout (m, kg, s, N, N m, rad; docs/conventions.md); array shapes are given as
(N, ...) with N the number of samples. The top-level names `mechsym.Mechanism`, `mechsym.derive`,
`mechsym.System`, `mechsym.FloatingBody`, `mechsym.Tree`, `mechsym.read_urdf`, `mechsym.load_mechanism`,
`mechsym.Table`, `mechsym.RunResult` and the errors are these modules' own, re-exported. The generated-code
internals (`mechsym.codegen.c_backend`, `c_library`, `c_sets`, `c_source`, `constants`, `numpy_backend`, `program`, `sparse_numpy`,
`sparse_plan`, and `mechsym.planar.spec`) and
the command-line modules (`mechsym.app.cli`, `mechsym.app.options`, `mechsym.app.sweep_cli`,
`mechsym.app.warm`) are documented in their docstrings, not here. This page is written by `python docs/make_api.py` from the docstrings.
"""

MODULES = [
    ("mechsym.planar.model", "Declaring a mechanism"),
    ("mechsym.planar.joints", "Planar joint types"),
    ("mechsym.core.parameters", "Parameters and gravity of every declaration"),
    ("mechsym.app.registry", "The model registry: shipped models and model files"),
    ("mechsym.core.forces", "Force elements"),
    ("mechsym.core.derived", "Deriving a model: the interface of every derived system"),
    ("mechsym.planar.system", "A derived mechanism's analyses"),
    ("mechsym.codegen.backend", "The backend, chosen once"),
    ("mechsym.planar.kinematics", "Kinematics"),
    ("mechsym.planar.solver", "The kinematics solver"),
    ("mechsym.planar.assembly", "One configuration"),
    ("mechsym.planar.continuation", "Continuation along the coordinates"),
    ("mechsym.planar.bridging", "Bridging a bifurcation"),
    ("mechsym.planar.rates", "Velocity and acceleration coefficients"),
    ("mechsym.planar.dynamics", "Dynamics: A U = C and the inverse analysis"),
    ("mechsym.planar.inverse_kernel", "The compiled inverse of one parameter set"),
    ("mechsym.planar.reduced", "The reduced form"),
    ("mechsym.planar.forward", "Forward runs of one coordinate"),
    ("mechsym.planar.equations", "Symbolic equations and analyses"),
    ("mechsym.planar.constraints", "Constraints"),
    ("mechsym.planar.topology", "Topology"),
    ("mechsym.planar.simulate", "Simulation of several coordinates"),
    ("mechsym.planar.tracking", "Following the configuration along a run"),
    ("mechsym.core.runner", "The runner skeleton: options, integrator, RunResult"),
    ("mechsym.core.hybrid", "Hybrid runs (modes and transitions)"),
    ("mechsym.planar.stickslip", "Coulomb stick/slip of a prismatic coordinate"),
    ("mechsym.core.results", "Results"),
    ("mechsym.core.timegrid", "Run options and the output grid"),
    ("mechsym.studies.analyses", "The generic analyses with typed options"),
    ("mechsym.studies.sweep", "Sweeps and design studies"),
    ("mechsym.studies.sweep_grid", "A sweep's parameter sets"),
    ("mechsym.studies.sweep_study", "A sweep's study of a generic analysis"),
    ("mechsym.studies.sweep_sets", "Parameter sets in compiled calls"),
    ("mechsym.studies.figures", "A parameter set's figures"),
    ("mechsym.core.progress", "Progress"),
    ("mechsym.core.plotting", "Pictures"),
    ("mechsym.planar.track", "Tracks (terrain profiles)"),
    ("mechsym.planar.rolling", "Rolling contact statics"),
    ("mechsym.planar.wheels", "Wheels on a track: their positions"),
    ("mechsym.planar.stance", "A mechanism standing on two rolling contacts"),
    ("mechsym.studies.optimize", "Staged optimisation"),
    ("mechsym.spatial.floating", "Free 3-D rigid bodies"),
    ("mechsym.spatial.floating_loads", "A free body under generated loads"),
    ("mechsym.core.freejoint", "The free joint of a floating body"),
    ("mechsym.core.quaternion", "Quaternions"),
    ("mechsym.contact.spatial_v2", "Compliant ground contact (spatial_v2)"),
    ("mechsym.contact.points", "Contact points on a mechanism"),
    ("mechsym.contact.run", "Contact simulations"),
    ("mechsym.contact.rolling_disc", "Penalty rolling-disc contact"),
    ("mechsym.codegen.export", "Standalone C export"),
    ("mechsym.core.errors", "Errors"),
]


def signature(obj) -> str:
    try:
        return str(inspect.signature(obj))
    except (TypeError, ValueError):
        return "(...)"


def members(cls):
    for name, value in vars(cls).items():
        if name.startswith("_"):
            continue
        if isinstance(value, property):
            yield name, value.fget, "property"
        elif isinstance(value, (staticmethod, classmethod)):
            yield name, value.__func__, "method"
        elif inspect.isfunction(value):
            yield name, value, "method"


def doc(obj) -> str:
    return inspect.cleandoc(obj.__doc__ or "").replace("\n", "\n")


def render() -> str:
    out = [INTRO]
    for module_name, title in MODULES:
        module = importlib.import_module(module_name)
        out.append(f"## `{module_name}`: {title}\n\n{doc(module)}\n")
        for name, obj in vars(module).items():
            if name.startswith("_") or not (inspect.isclass(obj) or inspect.isfunction(obj)):
                continue
            if obj.__module__ != module_name:
                continue
            kind = "class" if inspect.isclass(obj) else "function"
            sig = signature(obj) if kind == "function" or not issubclass(obj, BaseException) else ""
            out.append(f"### `{module_name}.{name}{sig}`\n\n*{kind}*. {doc(obj)}\n")
            if inspect.isclass(obj):
                for member, fn, what in members(obj):
                    shown = member if what == "property" else f"{member}{signature(fn)}"
                    first = doc(fn).replace("\n", " ")
                    out.append(f"- `{shown}` ({what}): {first}")
                out.append("")
    return "\n".join(out).rstrip() + "\n"


if __name__ == "__main__":
    (ROOT / "docs" / "api.md").write_text(render())
    print("wrote docs/api.md")
