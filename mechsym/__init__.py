"""mechsym: declare a mechanism once, derive its kinematics and dynamics symbolically, evaluate fast.

The public API, importable from the package itself:

    import mechsym
    m = mechsym.Mechanism("crank")            # or mechsym.FloatingBody("brick") for a free 3-D body
    tree = mechsym.read_urdf("robot.urdf")    # or mechsym.Tree(...): a 3-D tree (docs/trees.md)
    ...                                       # parameters, bodies, joints, coordinates (docs/getting-started.md)
    system = mechsym.derive(m)                # C where a compiler is present (or backend="numpy"); a System:
                                              # kinematics, inverse, solve, forward, ode. A FloatingBody or a
                                              # Tree gives its own kind of system, with the same interface
                                              # (mechsym.core.derived.DerivedSystem)
    mechsym.load_mechanism("fourbar")         # a shipped model or a model file, by name or path

and the errors every stage raises (InputError, ModelError, AssemblyError, SingularError). The names are
loaded on first use, so `import mechsym` itself stays light (no sympy).
"""
from importlib import import_module

from mechsym.core import __version__  # noqa: F401 (mechsym.__version__)
from mechsym.core.errors import AssemblyError, InputError, ModelError, SingularError

_LAZY = {
    "derive": "mechsym.core.derived",
    "System": "mechsym.planar.system",
    "Mechanism": "mechsym.planar.model",
    "FloatingBody": "mechsym.spatial.floating",
    "Tree": "mechsym.spatial.declare",
    "read_urdf": "mechsym.spatial.urdf",
    "load_mechanism": "mechsym.app.registry",
    "Table": "mechsym.core.results",
    "RunResult": "mechsym.core.results",
}

__all__ = ["AssemblyError", "InputError", "ModelError", "SingularError", *_LAZY]


def __getattr__(name):
    if name in _LAZY:
        value = getattr(import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'mechsym' has no attribute '{name}'")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
