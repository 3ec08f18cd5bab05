"""The codegen spec (mechsym.codegen.spec): one description of the generated functions that every backend
renders. Each rendering is checked against sympy's own evaluation of the spec's expressions (xreplace to
numbers, no lambdify, no CSE, no printer), and the backends against each other."""
import numpy as np
import pytest
import sympy as sp

from conftest import agree
from mechanisms import fourbar, slider_crank
from mechsym.codegen import c_backend, numpy_backend, spec as codegen_spec
from mechsym.codegen.c_source import generate, render
from mechsym.system import derive

MODELS = {"fourbar": fourbar, "slider-crank": slider_crank}


@pytest.fixture(scope="module", params=list(MODELS))
def system(request):
    return derive(MODELS[request.param].build())


def _random_inputs(f, rng, n):
    """name -> (len(symbols), n) random values for each input group of f (parameters: one vector)."""
    return {name: (rng.uniform(0.05, 0.3, len(symbols)) if name == "p" else rng.uniform(-1, 1, (len(symbols), n)))
            for name, symbols in f.inputs}


def _sympy_values(f, values, k):
    """f's outputs at sample k by substitution into the expressions (the independent route)."""
    subs = {}
    for name, symbols in f.inputs:
        v = values[name] if name == "p" else values[name][:, k]
        subs.update({s: sp.Float(float(x), 30) for s, x in zip(symbols, v)})
    return np.array([float(sp.sympify(e).xreplace(subs).evalf(30)) for e in f.outputs])


def test_spec_names_inputs_outputs_and_plan(system):
    spec = system.spec
    con = system.constraints
    assert list(spec.functions) == ["phi", "gamma", "gamma3", "applied", "applied_rate", "mass", "points", "branches",
                                    "energy", "jac_values"]
    assert [n for n, _ in spec.functions["gamma3"].inputs] == ["q", "qd", "qdd", "p"]
    assert spec.functions["phi"].outputs == tuple(con.rows)
    codegen_spec.check(spec)  # every output is a function of its own inputs
    jac = spec.jacobian
    assert jac.plan is not None and (jac.rows, jac.cols) == (len(con.rows), con.n)
    dense = sp.zeros(jac.rows, jac.cols)
    for (i, j), v in jac.entries.items():
        if v is not None:
            dense[i, j] = v
    for (i, j), e in zip(jac.varying, spec.functions[jac.values].outputs):
        dense[i, j] = e
    assert sp.simplify(dense - con.jacobian) == sp.zeros(jac.rows, jac.cols)


def test_check_refuses_a_function_of_symbols_it_does_not_take():
    x, y = sp.symbols("x y")
    spec = codegen_spec.Spec("m", {}, {"f": codegen_spec.Function("f", [("x", (x,))], [x * y])}, None)
    with pytest.raises(ValueError, match=r"spec function 'f': outputs use \['y'\], not among its inputs"):
        codegen_spec.check(spec)


def test_numpy_rendering_against_sympy_evaluation(system):
    rng = np.random.default_rng(1)
    rendered = numpy_backend.render(system.spec)
    for name, f in system.spec.functions.items():
        values = _random_inputs(f, rng, 3)
        out = getattr(rendered, name)(*[values[n] for n, _ in f.inputs])
        for k in range(3):
            got = out if name == "mass" else out[:, k]
            assert agree(got, _sympy_values(f, values, k), 1e-12), name


@pytest.mark.skipif(c_backend.compiler() is None, reason="no C compiler")
def test_c_rendering_of_the_same_spec_agrees(system, tmp_path):
    """The C library built from the spec gives, function by function, what the numpy rendering gives
    (Phi_q through its pattern on both sides)."""
    rng = np.random.default_rng(2)
    lib = c_backend.CLibrary(c_backend.build_source(system.mechanism.name, "spec-test", lambda: render(system.spec),
                                                    tmp_path))
    rendered = numpy_backend.render(system.spec)
    for name, f in system.spec.functions.items():
        values = _random_inputs(f, rng, 5)
        args = [values[n] for n, _ in f.inputs]
        if name == "jac_values":
            q, p = args
            assert agree(lib.jac(q, p), rendered.jac(q, p), 1e-12)
            continue
        assert agree(getattr(lib, name)(*args), getattr(rendered, name)(*args), 1e-12), name


def test_one_printer_per_backend_from_one_spec(system):
    """The C source is the C printer's rendering of the System's spec, and the System's numpy functions are
    the numpy printer's rendering of that same spec object."""
    assert generate(system) == render(system.spec)
    assert system.functions.spec is system.spec
    assert system.kin.functions is system.functions


def test_spec_derives_costly_outputs_on_first_use():
    """gamma3 (a further differentiation) is derived only when a backend renders it."""
    system = derive(fourbar.build())
    f = system.spec.functions["gamma3"]
    assert "outputs" not in vars(f) and "gamma3" not in vars(system.constraints)
    assert f.outputs == tuple(system.constraints.gamma3)
