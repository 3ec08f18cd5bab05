"""The codegen spec (mechsym.codegen.spec): one description of the generated functions that every backend
renders. Each rendering is checked against sympy's own evaluation of the spec's expressions (xreplace to
numbers, no lambdify, no CSE, no printer), and the backends against each other."""
import numpy as np
import pytest
import sympy as sp

from conftest import agree
from mechanisms import fourbar, slider_crank
from mechsym import derive
from mechsym.codegen import c_backend, numpy_backend, spec as codegen_spec
from mechsym.codegen.c_library import CLibrary
from mechsym.codegen.c_source import generate, render

MODELS = {"fourbar": fourbar, "slider-crank": slider_crank}


@pytest.fixture(scope="module", params=list(MODELS))
def system(request):
    return derive(MODELS[request.param].build(), backend="numpy")


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
    lib = CLibrary(c_backend.build_source(system.mechanism.name, "spec-test", lambda: render(system.spec),
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
    system = derive(fourbar.build(), backend="numpy")
    f = system.spec.functions["gamma3"]
    assert "outputs" not in vars(f) and "gamma3" not in vars(system.constraints)
    assert f.outputs == tuple(system.constraints.gamma3)


def _program():
    """A small Program with shared temporaries, a norm and a parameter: rates of a damped spring in 2-D."""
    from mechsym.codegen.program import Program

    y = sp.symbols("x z vx vz", real=True)
    prog = Program(y)
    k, c = prog.param("k"), prog.param("c")
    r = prog.norm(y[0] ** 2 + y[1] ** 2)
    stretch = prog.let(r - 1)
    ex, ez = prog.let(y[0] / r), prog.let(y[1] / r)
    f = prog.let(-k * stretch - c * (ex * y[2] + ez * y[3]))
    prog.output([y[2], y[3], f * ex, f * ez - 9.81])
    return prog, y, (k, c)


def _flat(prog, e):
    """e with every temporary of the program substituted (the expression the program computes)."""
    for t, v in reversed(prog.values + prog.derivatives):
        e = e.xreplace({t: v})
    return e


def test_program_spec_is_one_spec_rendered_by_both_printers(tmp_path, monkeypatch):
    monkeypatch.setenv("MECHSYM_CACHE", str(tmp_path))
    prog, y, (k, c) = _program()
    spec = prog.spec("spring")
    codegen_spec.check(spec)
    assert list(spec.functions) == ["rhs", "jac_values"] and spec.functions["rhs"].temporaries == tuple(prog.values)
    states = np.array([[0.9, 0.6, 0.3, -0.2], [-1.2, 0.4, -0.5, 0.7]]).T
    params = np.array([40.0, 0.3])
    at = lambda s: {y[0]: s[0], y[1]: s[1], y[2]: s[2], y[3]: s[3], k: params[0], c: params[1]}
    flat = sp.Matrix([_flat(prog, o) for o in prog.outputs])
    exact_rates = np.array([[float(e.xreplace(at(s))) for e in flat] for s in states.T]).T
    exact_jac = np.array([np.array(flat.jacobian(sp.Matrix(y)).xreplace(at(s)), float) for s in states.T])
    rates, jacobians = prog.numpy_functions()
    assert agree(rates(states, params), exact_rates, 1e-13)
    assert agree(np.moveaxis(jacobians(states, params), -1, 0), exact_jac, 1e-13)
    if c_backend.compiler() is None:
        return
    from mechsym.codegen import program

    compiled = program.load("spring", "spec-test", lambda: prog, "c")
    assert compiled.backend == "c" and compiled.param_names == ("k", "c")
    assert agree(compiled.rates(states, params), exact_rates, 1e-13)
    assert agree(np.moveaxis(compiled.jacobians(states, params), -1, 0), exact_jac, 1e-13)
    fun, jac = compiled.single(params)                  # an integrator's one-state calls
    assert agree(fun(0.0, states[:, 1]), exact_rates[:, 1], 1e-13) and agree(jac(0.0, states[:, 1]), exact_jac[1], 1e-13)


def test_check_refuses_a_temporary_used_before_it_is_defined():
    x = sp.Symbol("x")
    t0, t1 = sp.symbols("t0 t1")
    f = codegen_spec.Function("f", [("x", (x,))], [t1], temporaries=[(t1, 2 * t0), (t0, x + 1)])
    with pytest.raises(ValueError, match=r"temporary t1 uses \['t0'\] before they are defined"):
        codegen_spec.check(codegen_spec.Spec("m", {}, {"f": f}, None))


def _small_spec():
    """Two functions of a 3-state, 2-parameter system and the sparse Jacobian of the first."""
    y = sp.symbols("a b c", real=True)
    k = sp.symbols("k0 k1", real=True)
    rate = [y[1] * sp.cos(y[0]) * k[0], -k[1] * y[2] ** 2 + sp.sin(y[1]), y[0] * y[1] / (1 + y[2] ** 2)]
    energy = [y[0] ** 2 + y[1] ** 2, sp.exp(-y[2])]
    jac = sp.Matrix(rate).jacobian(sp.Matrix(y))
    varying = [(i, j) for i in range(3) for j in range(3) if jac[i, j] != 0]
    inputs = [("y", y), ("p", k)]
    functions = {"rate": codegen_spec.Function("rate", inputs, rate),
                 "energy": codegen_spec.Function("energy", [("y", y)], energy),
                 "jac_values": codegen_spec.Function("jac_values", inputs, [jac[i, j] for i, j in varying])}
    jacobian = codegen_spec.SparseJacobian(3, 3, {rc: None for rc in varying}, tuple(varying), "jac_values", None)
    return codegen_spec.Spec("small", {}, functions, jacobian), y, k, rate, energy, jac


@pytest.mark.parametrize("backend", ["numpy", "c"])
def test_callables_from_a_spec_on_either_backend(backend, tmp_path, monkeypatch):
    """codegen.callables.load: each function of a spec with the numpy layout, for one sample and for
    sample arrays of any shape, against sympy's evaluation; the Jacobian samples first."""
    from mechsym.codegen import callables

    if backend == "c" and c_backend.compiler() is None:
        pytest.skip("no C compiler")
    monkeypatch.setenv("MECHSYM_CACHE", str(tmp_path))
    spec, y, k, rate, energy, jac = _small_spec()
    fns = callables.load("small", f"test-{backend}", lambda: spec, backend)
    assert fns.backend == backend
    rng = np.random.default_rng(3)
    p = np.array([1.3, 0.4])
    for shape in [(), (5,), (2, 4)]:
        ys = rng.uniform(-1, 1, (3,) + shape)
        flat = ys.reshape(3, -1)
        at = lambda n: {**dict(zip(y, flat[:, n])), **dict(zip(k, p))}
        want_rate = np.array([[float(e.xreplace(at(n))) for e in rate] for n in range(flat.shape[1])]).T
        want_energy = np.array([[float(e.xreplace(at(n))) for e in energy] for n in range(flat.shape[1])]).T
        want_jac = np.array([np.array(jac.xreplace(at(n)), float) for n in range(flat.shape[1])])
        assert fns.rate(ys, p).shape == (3,) + shape and fns.jac(ys, p).shape == shape + (3, 3)
        assert agree(fns.rate(ys, p).reshape(3, -1), want_rate, 1e-14)
        assert agree(fns.energy(ys).reshape(2, -1), want_energy, 1e-14)
        assert agree(fns.jac(ys, p).reshape(-1, 3, 3), want_jac, 1e-14)


# -- a tree's spec, and the analyses' extra columns and rows --------------------------------------------

def _tree():
    """The docs' arm on a free base (a quaternion among the coordinates) and its system on numpy."""
    from pathlib import Path

    from mechsym.spatial.system import TreeSystem
    from mechsym.spatial.urdf import read_urdf

    urdf = Path(__file__).resolve().parent.parent / "docs" / "examples" / "arm.urdf"
    return TreeSystem(read_urdf(str(urdf), floating=True), backend="numpy")


def _tree_states(system, n, rng):
    q = rng.uniform(-1, 1, (system.nq, n))
    q[3:7] /= np.linalg.norm(q[3:7], axis=0)
    return {"q": q, "v": rng.uniform(-1, 1, (system.nv, n)), "a": rng.uniform(-1, 1, (system.nv, n)),
            "p": system.param_values}


def _program_values(f, values, k):
    """f's value at sample k by substitution: each temporary in order at 30 digits, then the outputs; a
    function that solves takes M and r so and solves in floats."""
    subs = {}
    for name, symbols in f.inputs:
        v = values[name] if name == "p" else values[name][:, k]
        subs.update({s: sp.Float(float(x), 30) for s, x in zip(symbols, v)})
    for t, e in f.temporaries:
        subs[t] = sp.sympify(e).xreplace(subs).evalf(30)
    out = np.array([float(sp.sympify(e).xreplace(subs).evalf(30)) for e in f.outputs])
    if f.solve:
        n = f.solve
        return np.linalg.solve(out[:n * n].reshape(n, n), out[n * n:])
    return out


@pytest.mark.parametrize("backend", ["numpy", "c"])
def test_tree_spec_on_both_backends_against_sympy(backend, tmp_path, monkeypatch):
    """Every function of a tree's spec (main and Coriolis, the Cholesky solve included), rendered by the
    numpy printer and by the C printer (loaded through callables), against sympy's substitution."""
    from mechsym.codegen import callables

    if backend == "c" and c_backend.compiler() is None:
        pytest.skip("no C compiler")
    monkeypatch.setenv("MECHSYM_CACHE", str(tmp_path))
    system = _tree()
    spec = system.spec("all")
    codegen_spec.check(spec)
    assert set(spec.functions) >= {"mass", "bias", "forward", "contact", "coriolis"}
    assert spec.functions["forward"].solve == system.nv == spec.functions["forward"].size
    fns = callables.load("arm-tree", "spec-test", lambda: spec, backend)
    assert fns.backend == backend
    values = _tree_states(system, 3, np.random.default_rng(4))
    for name, f in spec.functions.items():
        got = getattr(fns, name)(*[values[g] for g, _ in f.inputs])
        assert got.shape == (f.size, 3), name
        for k in range(3):
            assert agree(got[:, k], _program_values(f, values, k), 1e-12), name


def test_tree_spec_is_a_function_of_the_declaration():
    """A group's spec is the same, temporaries and all, whatever was derived before it."""
    first, second = _tree(), _tree()
    second.derivation.coriolis()
    second.spec("coriolis")
    for group in ("main", "coriolis"):
        a, b = first.spec(group).functions, second.spec(group).functions
        assert list(a) == list(b)
        for name in a:
            assert a[name].temporaries == b[name].temporaries and a[name].outputs == b[name].outputs, (group, name)


def test_vector_function_is_the_rendering_of_a_one_function_spec():
    x, y = sp.symbols("x y", real=True)
    from mechsym.codegen import VectorFunction

    f = VectorFunction([(x, y)], [x * y, sp.sin(x)])
    assert isinstance(f.function, codegen_spec.Function) and f.function.outputs == (x * y, sp.sin(x))
    assert agree(f(np.array([[0.5, 1.0], [2.0, 3.0]])), np.array([[1.0, 3.0], np.sin([0.5, 1.0])]), 1e-15)


@pytest.mark.parametrize("backend", ["numpy", "c"])
def test_analysis_rows_and_columns_run_on_the_system_backend(backend, tmp_path, monkeypatch):
    """An analysis's extra columns and rows are a spec loaded on the mechanism's backend (C when it runs on
    C), each against sympy's substitution of the spec's expressions."""
    from mechsym.planar.dynamics import analysis_functions
    from mechsym.planar.equations import Analysis

    if backend == "c" and c_backend.compiler() is None:
        pytest.skip("no C compiler")
    monkeypatch.setenv("MECHSYM_CACHE", str(tmp_path))
    m = fourbar.build()
    f = m.parameter("F", 0.0, "N", "vertical force at C", positive=False)
    m.force("coupler", "C", 0, f)
    s = derive(m, backend)
    torque, f_sym = sp.Symbol("torque", real=True), sp.Symbol("F", real=True)
    both = Analysis("both", free=("theta",), unknown_forces=("torque",), extra_unknowns=("F",),
                    extra_rows=(("set", torque - 0.2), ("tie", f_sym - 3 * torque * sp.cos(s.constraints.q[2]))))
    fn = analysis_functions(s, both)
    assert fn.backend == backend
    rng = np.random.default_rng(5)
    for name, f in fn.spec.functions.items():
        assert f.outputs, name
        values = _random_inputs(f, rng, 4)
        got = getattr(fn, name)(*[values[g] for g, _ in f.inputs])
        for k in range(4):
            assert agree(got[:, k], _sympy_values(f, values, k), 1e-12), name


def test_tree_without_a_compiler_runs_the_numpy_rendering_of_its_spec(monkeypatch, tmp_path):
    """backend "c" without a compiler: one warning, and the numpy rendering of the same spec answers."""
    from mechsym.spatial.system import TreeSystem

    monkeypatch.setenv("MECHSYM_CACHE", str(tmp_path))
    monkeypatch.setattr(c_backend, "compiler", lambda: None)
    numpy_system = _tree()
    with pytest.warns(UserWarning, match="falling back to the numpy backend"):
        system = TreeSystem(numpy_system.tree, backend="c")
    assert system.backend.name == "numpy"
    values = _tree_states(system, 4, np.random.default_rng(6))
    q, v, tau = values["q"].T, values["v"].T, values["a"].T
    assert np.array_equal(system.mass_matrix(q), numpy_system.mass_matrix(q))
    assert np.array_equal(system.forward(q, v, tau), numpy_system.forward(q, v, tau))
    assert agree(np.einsum("nij,nj->ni", system.mass_matrix(q), system.forward(q, v, tau)) + system.bias(q, v),
                 tau, 1e-12)
