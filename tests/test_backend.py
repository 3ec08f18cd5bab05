"""The backend is chosen once (mechsym.codegen.backend) and the three kinds of derived system share one
interface (mechsym.core.derived.DerivedSystem).

- No module outside mechsym/codegen/ (mechanisms/ included) asks which backend it has: no comparison
  involving a backend or its name, no test of whether a compiled library exists, no duck test standing for
  either. The scanner is shown to find each form in a synthetic source.
- The default backend (C where a compiler is present) gives the numpy backend's results on the shipped
  planar models: inverse and kinematics to 1e-12, forward to the integrators' tolerance (the C DOP853 and
  scipy's take their own step sequences).
- A planar System, a FloatingSystem and a TreeSystem each satisfy DerivedSystem, and each member answers
  with a value that is checked (params round-trips set_params, an entry point sees the values set).
"""
import ast
import warnings
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

import mechsym
from mechsym.codegen import c_backend
from mechsym.codegen.backend import Backend, default_backend, require, resolve
from mechsym.core.derived import DerivedSystem
from mechsym.core.errors import InputError

ROOT = Path(__file__).resolve().parent.parent
needs_c = pytest.mark.skipif(c_backend.compiler() is None, reason="no C compiler")

# what only a compiled library has: asking for one of these stands for asking which backend runs
COMPILED_ONLY = {"factor", "walker", "tracker", "track_rows", "inverse", "inverse_sets", "inverse_columns",
                 "kinematics", "ode", "forward", "dll", "meta", "address_function", "wide_address", "library",
                 "backend"}
# places still testing the backend, each with its reason; the list only shrinks
ALLOWED = set()


def _reads(node, names) -> bool:
    """Whether the expression reads a name or attribute in `names`, directly or by getattr/hasattr."""
    for n in ast.walk(node):
        if (isinstance(n, ast.Name) and n.id in names) or (isinstance(n, ast.Attribute) and n.attr in names):
            return True
        if (isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("getattr", "hasattr")
                and len(n.args) >= 2 and isinstance(n.args[1], ast.Constant) and n.args[1].value in names):
            return True
    return False


def _is_backend(node) -> bool:
    """A backend or its name itself: backend, system.backend, system.backend.name, getattr(s, "backend")."""
    if isinstance(node, ast.Attribute) and node.attr == "name":
        node = node.value
    if isinstance(node, ast.Name):
        return node.id == "backend"
    if isinstance(node, ast.Attribute):
        return node.attr == "backend"
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"
            and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and node.args[1].value == "backend")


def _names_a_backend(node) -> bool:
    """The string "c" or "numpy", or a tuple, list or set of strings holding one."""
    values = [node] if isinstance(node, ast.Constant) else getattr(node, "elts", [])
    return any(isinstance(v, ast.Constant) and v.value in ("c", "numpy") for v in values)


def _is_none(node) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


LIBRARY = {"library", "lib", "c_factor", "c_kinematics"}


def backend_tests(source: str, where: str = "<source>") -> list[str]:
    """Every place in `source` that tests the backend: a comparison of a backend, or of a name with "c" or
    "numpy"; a test of whether a compiled library exists (`library is None`, `if system.library`); a
    hasattr of what only a compiled library has."""
    found = []
    for node in ast.walk(ast.parse(source)):
        line = f"{where}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Compare):
            parts = [node.left, *node.comparators]
            named = any(isinstance(p, ast.Attribute) and p.attr == "name" for p in parts)
            if any(_is_backend(p) for p in parts) or (named and any(_names_a_backend(p) for p in parts)):
                found.append(f"{line}: compares the backend")
            elif any(_is_none(p) for p in parts) and any(_reads(p, LIBRARY) for p in parts):
                found.append(f"{line}: tests whether a compiled library exists")
        elif isinstance(node, (ast.If, ast.IfExp, ast.While)) and isinstance(node.test, (ast.Name, ast.Attribute)) \
                and _reads(node.test, LIBRARY):
            found.append(f"{line}: tests whether a compiled library exists")
        elif isinstance(node, ast.BoolOp) and any(isinstance(v, (ast.Name, ast.Attribute)) and _reads(v, LIBRARY)
                                                  for v in node.values):
            found.append(f"{line}: tests whether a compiled library exists")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "hasattr"
              and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
              and node.args[1].value in COMPILED_ONLY):
            found.append(f"{line}: duck-tests for a compiled library (hasattr '{node.args[1].value}')")
    return found


def test_nothing_outside_codegen_tests_the_backend():
    files = [p for p in sorted((ROOT / "mechsym").rglob("*.py")) if "codegen" not in p.relative_to(ROOT).parts]
    files += sorted((ROOT / "mechanisms").rglob("*.py"))
    found = set()
    for path in files:
        found |= set(backend_tests(path.read_text(), str(path.relative_to(ROOT))))
    assert found <= ALLOWED, "the backend tested outside mechsym/codegen/:\n" + "\n".join(sorted(found - ALLOWED))
    assert not ALLOWED - found, "allowed places that no longer test the backend (drop them):\n" + \
        "\n".join(sorted(ALLOWED - found))


@pytest.mark.parametrize("source", [
    'if system.backend == "c":\n    pass',
    'fast = backend != "numpy"',
    'route = a if system.backend.name == "c" else b',
    'if library is not None and len(q) == 1:\n    pass',
    'if system.library is None:\n    pass',
    'x = lib.inverse if system.library else None',
    'ok = system.library and n > 3',
    'if hasattr(functions, "factor"):\n    pass',
    'walk = library.walker() if hasattr(library, "walker") else None',
    'if getattr(system, "backend", None) != "c":\n    pass',
    'if chosen.name == "numpy":\n    pass',
    'same = a.backend is b.backend',
    'if backend in ("numpy", "c"):\n    pass',
])
def test_the_scanner_finds_a_backend_test(source):
    assert len(backend_tests(source)) == 1


def test_the_scanner_passes_a_choice_made_by_the_backend():
    source = ("run = system.backend.route(compiled=_forward_c, python=_forward_ivp)\n"
              "if tracker is not None and method == 'RK45':\n    pass\n"
              "derive(mech, backend=getattr(args, 'backend', 'numpy'))\n"
              "known = (source, self.backend, derived) in cache\n"
              "if hasattr(model, 'normalise'):\n    pass\n")
    assert backend_tests(source) == []


# -- one backend object ---------------------------------------------------------------------------------
def test_resolve_names_objects_and_the_default(monkeypatch):
    numpy = resolve("numpy")
    assert isinstance(numpy, Backend) and numpy.name == "numpy" and resolve(numpy) is numpy
    assert resolve(None) is default_backend()
    with pytest.raises(InputError, match="unknown backend 'fortran'"):
        resolve("fortran")
    monkeypatch.setattr(c_backend, "compiler", lambda: None)
    assert default_backend() is numpy
    with pytest.warns(UserWarning, match="falling back to the numpy backend"):
        assert resolve("c") is numpy
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert resolve("c", quiet=True) is numpy                 # a look ahead: the derivation warns
    with pytest.raises(InputError, match="--backend c needs a C compiler"):
        require("c")


@needs_c
def test_the_default_is_c_where_a_compiler_is_present():
    from mechanisms import fourbar

    assert default_backend().name == "c" and mechsym.derive(fourbar.build()).backend is resolve("c")


def _agree(got, ref, units, tol):
    """Norm-wise agreement (docs/conventions.md) of two tables, per group of columns sharing a unit."""
    assert got.names == ref.names
    groups = {}
    for name in ref.names:
        groups.setdefault(units.get(name, ""), []).append(name)
    for unit, names in groups.items():
        a = np.array([got[n] for n in names])
        b = np.array([ref[n] for n in names])
        assert np.max(np.abs(a - b)) <= tol * np.max(np.abs(b)), (unit, names)


@needs_c
@pytest.mark.parametrize("model", ["fourbar", "slider-crank", "pasibot"])
def test_the_default_backend_gives_the_numpy_results(model):
    """derive's default (C here) against the numpy backend: inverse and kinematics to 1e-12 (the same
    continuation and solves, in another order of summation), forward to its tolerance."""
    from mechsym.app.registry import load_mechanism

    default, numpy = mechsym.derive(load_mechanism(model)), mechsym.derive(load_mechanism(model), "numpy")
    theta = 2 * np.pi * np.arange(72) / 72
    inv = default.inverse(theta, [2.0, 5.0])
    _agree(inv, numpy.inverse(theta, [2.0, 5.0]), inv.units, 1e-12)
    kin = default.kinematics_table(theta, rates=True)
    _agree(kin, numpy.kinematics_table(theta, rates=True), kin.units, 1e-12)
    fwd = default.forward(1.0, theta[0], 0.0, 0.3, rtol=1e-11, atol=1e-11)
    ref = numpy.forward(1.0, theta[0], 0.0, 0.3, rtol=1e-11, atol=1e-11)
    _agree(fwd, ref, fwd.units, 1e-8)


# -- one model interface --------------------------------------------------------------------------------
def _planar():
    """The fourbar; its physics: the mass matrix (the density scales it)."""
    from mechanisms import fourbar

    system = mechsym.derive(fourbar.build(), "numpy")
    return system, "density", lambda: system.mass(system.params())


def _floating():
    """A brick; its physics: the accelerations under a vertical force (the mass divides it)."""
    body = mechsym.FloatingBody("brick")
    m = body.parameter("m", 2.0, "kg")
    body.body(m, sp.diag(0.1, 0.2, 0.3))
    system = mechsym.derive(body, "numpy")
    return system, "m", lambda: system.accelerations(system.initial_state((0, 0, 1)), np.array([0, 0, 1.0, 0, 0, 0]))


def _tree():
    """A one-link arm; its physics: the mass matrix (the upper arm's length moves the forearm)."""
    from mechsym.spatial import Revolute

    arm = mechsym.Tree("arm")
    arm.parameter("l_upper", 0.4, "m")
    arm.body("base")
    arm.body("upper_arm", "base", Revolute("shoulder", axis=(0, 1, 0)), xyz=(0, 0, 0.1),
             mass=2.0, com=(0.2, 0, 0), inertia=(0.002, 0.027, 0.027, 0, 0, 0))
    arm.body("forearm", "upper_arm", Revolute("elbow", axis=(0, 1, 0)), xyz=("l_upper", 0, 0),
             mass=1.0, com=(0.15, 0, 0), inertia=(0.0005, 0.0076, 0.0076, 0, 0, 0))
    system = mechsym.derive(arm, backend="numpy")
    return system, "l_upper", lambda: system.mass_matrix(np.array([0.3, 0.2]))


@pytest.mark.parametrize("make", [_planar, _floating, _tree], ids=["planar", "floating", "tree"])
def test_every_kind_of_system_follows_the_one_interface(make):
    system, name, physics = make()
    assert isinstance(system, DerivedSystem)
    assert system.backend is resolve("numpy")
    assert isinstance(system.declaration, (mechsym.Mechanism, mechsym.FloatingBody, mechsym.Tree))
    assert name in system.param_names and len(system.coordinate_names) > 0
    i = system.param_names.index(name)
    defaults = system.params()
    assert np.array_equal(system.param_values, defaults) and defaults.shape == (len(system.param_names),)
    before = physics()
    value = 1.5 * defaults[i]
    system.set_params({name: value})
    p = system.params()
    assert p[i] == value and np.array_equal(np.delete(p, i), np.delete(defaults, i))
    assert np.array_equal(system.param_values, p)
    assert system.params({name: 2 * value})[i] == 2 * value      # overrides on top of the values in use
    assert not np.allclose(physics(), before)                    # the entry points see the values set
    with pytest.raises(InputError):
        system.set_params({"no_such_parameter": 1.0})
    assert np.array_equal(system.params(), p)                    # a refused set changes nothing
    system.set_params()
    assert np.array_equal(system.params(), defaults) and np.array_equal(physics(), before)
    counts = system.flops
    assert all(isinstance(v, int) and v >= 0 for v in counts.values()) and sum(counts.values()) > 0


def _loop():
    """The Bricard linkage (a closed spatial loop): its parameters are its tree's."""
    from mechanisms import bricard

    system = mechsym.derive(bricard.build(), backend="numpy")
    return system, "m", None


@pytest.mark.parametrize("make", [_planar, _floating, _tree, _loop], ids=["planar", "floating", "tree", "loop"])
def test_an_unknown_or_a_nan_parameter_gets_one_line_naming_it_on_every_kind(make):
    """params() and set_params() refuse an unknown name and a NaN value with the same line on every kind
    (the kind and the model named first, then the parameter), and a refused set changes nothing."""
    system, name, _ = make()
    model = system.declaration.name
    defaults = system.params()
    known = ", ".join(sorted(system.param_names))
    for overrides, problem in (({"no_such": 1.0}, f"unknown parameter 'no_such' (known: {known})"),
                               ({name: float("nan")}, f"parameter '{name}' = nan is not finite")):
        for call in (system.params, system.set_params):
            with pytest.raises(InputError) as refused:
                call(overrides)
            text = str(refused.value)
            kind, _, rest = text.partition(" ")
            assert kind in ("mechanism", "body", "tree") and rest == f"'{model}': {problem}", text
        assert np.array_equal(system.params(), defaults)


def test_derive_refuses_what_it_cannot_derive():
    from mechanisms import fourbar

    with pytest.raises(InputError, match="cannot derive a str"):
        mechsym.derive("fourbar")
    with pytest.raises(InputError, match="contact_frames name frames of a tree"):
        mechsym.derive(fourbar.build(), contact_frames=("tip",))


def test_every_kind_of_system_simulates_through_the_one_interface():
    """The runner entry point of RunnableSystem, `simulate(state0, t_end, ...)` on each kind, against an
    independent value: the planar fourbar against its reduced one-coordinate forward run (another
    formulation and integrator route), the brick's free flight against the closed form (a parabola, the spin
    about a principal axis constant), the arm swinging under gravity against its energy (constant)."""
    from mechsym.core.derived import RunnableSystem

    assert all(isinstance(make()[0], RunnableSystem) for make in (_planar, _floating, _tree))
    system = _planar()[0]
    theta0 = 0.3
    run = system.simulate([theta0, 2.0], 0.4, rtol=1e-11, atol=1e-11)
    assert list(run.names[1:3]) == system.state_names
    ref = system.forward(0.0, theta0, 2.0, 0.4, rtol=1e-11, atol=1e-11)
    name = system.coordinate_names[0]
    np.testing.assert_allclose(run[name], ref[name], atol=1e-8 * np.ptp(ref[name]))

    brick = _floating()[0]
    y0 = brick.initial_state((0, 0, 1), velocity=(0.5, 0, 3.0), omega=(0, 0, 4.0))
    assert len(brick.state_names) == len(y0)
    run = brick.simulate(y0, 0.5, rtol=1e-11, atol=1e-11)
    t = run["t"]
    np.testing.assert_allclose(run["z"], 1 + 3.0 * t - 9.81 * t ** 2 / 2, atol=1e-9)
    np.testing.assert_allclose(run["x"], 0.5 * t, atol=1e-9)
    np.testing.assert_allclose(run["wz"], 4.0, atol=1e-9)

    arm = _tree()[0]
    state0 = np.array([0.3, -0.4, 1.0, 0.0])
    assert len(arm.state_names) == len(state0)
    run = arm.simulate(state0, 1.0, rtol=1e-11, atol=1e-11)
    q = np.column_stack([run[n] for n in arm.coordinate_names])
    v = np.column_stack([run[f"{n}.v"] for n in arm.coordinate_names])
    energy = np.array([arm.kinetic_energy(a, b) + arm.potential_energy(a) for a, b in zip(q, v)])
    assert np.ptp(q[:, 0]) > 0.3 and np.ptp(energy) <= 1e-8 * np.max(np.abs(energy))
