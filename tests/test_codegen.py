"""C backend against the numpy backend; the cache. (The standalone export: tests/test_generated.py.)"""
import hashlib
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import agree
from mechanisms import fourbar, slider_crank
from mechsym import derive
from mechsym.codegen import c_backend, keys

pytestmark = pytest.mark.skipif(c_backend.compiler() is None, reason="no C compiler")
MODELS = {"fourbar": fourbar, "slider-crank": slider_crank}


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    path = tmp_path_factory.mktemp("cache")
    old = os.environ.get("MECHSYM_CACHE")
    os.environ["MECHSYM_CACHE"] = str(path)
    yield path
    if old is None:
        os.environ.pop("MECHSYM_CACHE")
    else:
        os.environ["MECHSYM_CACHE"] = old


@pytest.fixture(scope="module", params=list(MODELS))
def pair(request, cache):
    mech = MODELS[request.param].build
    return derive(mech(), "numpy"), derive(mech(), "c")


def test_functions_agree_on_random_inputs(pair):
    num, c = pair
    rng = np.random.default_rng(1)
    n, N = num.constraints.n, 200
    q = rng.normal(size=(n, N))
    qd = rng.normal(size=(n, N))
    th = rng.normal(size=(1, N))
    p = num.params() * rng.uniform(0.5, 1.5, size=len(num.params()))
    assert agree(c.kin.phi(q, th, p), num.kin.phi(q, th, p), 1e-12)
    assert agree(c.kin.jac(q, p), num.kin.jac(q, p), 1e-12)
    assert agree(c.kin.gamma(q, qd, p), num.kin.gamma(q, qd, p), 1e-12)
    qdd = rng.normal(size=(n, N))
    assert agree(c.gamma3(q, qd, qdd, p), num.gamma3(q, qd, qdd, p), 1e-12)
    assert agree(c.applied_rate(q, qd, p), num.applied_rate(q, qd, p), 1e-12)
    assert agree(c.applied(q, p), num.applied(q, p), 1e-12)
    assert agree(c.energy(q, qd, p), num.energy(q, qd, p), 1e-12)
    assert agree(c.kin.points(q, p), num.kin.points(q, p), 1e-12)
    assert agree(c.mass(p), num.mass(p), 1e-12)


def test_inverse_dynamics_agree(pair):
    num, c = pair
    rng = np.random.default_rng(2)
    theta = np.sort(rng.uniform(0, 2 * np.pi, 300))
    params = {"density": 1.7, "g": 9.7}
    a = c.inverse(theta, [0.5, 4.0], alpha=3.0, params=params)
    b = num.inverse(theta, [0.5, 4.0], alpha=3.0, params=params)
    for name in b.names:
        assert agree(a[name], b[name], 1e-12), name


def test_reduced_ode_and_jacobian_agree(pair):
    num, c = pair
    theta = np.linspace(0.2, 2 * np.pi + 0.2, 97)
    omega = np.random.default_rng(3).normal(size=97)
    for a, b in zip(c.ode(theta, omega, 0.07, {"g": 9.7}), num.ode(theta, omega, 0.07, {"g": 9.7})):
        assert agree(a, b, 1e-12)


def test_c_factorisation_solves_as_dense_lapack(pair):
    """The C sparse factorisation of Phi_q against numpy.linalg.solve of the dense Jacobian: Phi_q x = b and
    Phi_q^T y = c, one and several right-hand sides; a singular sample gives NaN in its own solution only."""
    num, c = pair
    rng = np.random.default_rng(4)
    n, N = num.constraints.n, 64
    q, p = rng.normal(size=(n, N)), num.params()
    q[:, 5] = np.nan                                            # Phi_q cannot be factorised there
    jac = num.kin.jac(q, p)
    fac = c.kin.factor(q, p)
    assert fac.ok.tolist() == [i != 5 for i in range(N)]
    b, bm = rng.normal(size=(N, n)), rng.normal(size=(N, n, 3))
    good = np.arange(N) != 5
    for got, want in ((fac.solve(b), np.linalg.solve(jac[good], b[good][..., None])[..., 0]),
                      (fac.solve(bm), np.linalg.solve(jac[good], bm[good])),
                      (fac.solve_t(b), np.linalg.solve(np.swapaxes(jac[good], 1, 2), b[good][..., None])[..., 0]),
                      (fac.solve_t(bm), np.linalg.solve(np.swapaxes(jac[good], 1, 2), bm[good]))):
        assert np.isnan(got[5]).any()
        np.testing.assert_allclose(got[good], want, rtol=1e-9, atol=1e-9 * np.abs(want).max())
    np.testing.assert_array_equal(fac.take(good).solve(b[good]), fac.solve(b)[good])


def test_kinematics_sweep_in_c_agrees_with_numpy(pair):
    """A sweep through the C factorisation gives the numpy backend's q, q' and q'' (its own sparse
    elimination) to 1e-12."""
    num, c = pair
    theta = np.linspace(0.1, 4 * np.pi, 3000)
    a, b = c.kinematics(theta), num.kinematics(theta)
    for name in ("q", "dq", "ddq"):
        assert agree(getattr(a, name), getattr(b, name), 1e-12), name
    assert type(a.factor).__name__ == "CFactor"


def test_horizontal_links_need_run_time_pivoting(cache):
    """With no offset, crank and rod lie on the x axis at theta = 0: a pattern-only pivot order would
    divide by an exact zero there."""
    num, c = derive(slider_crank.build(), "numpy"), derive(slider_crank.build(), "c")
    theta = np.array([0.0, 0.3, np.pi])
    a = c.inverse(theta, 2.0, params={"offset": 0.0})
    b = num.inverse(theta, 2.0, params={"offset": 0.0})
    assert agree(a["torque"], b["torque"], 1e-12) and agree(a["guide.fn"], b["guide.fn"], 1e-12)


def test_forward_in_c_matches_solve_ivp(pair):
    num, c = pair
    a = c.forward(0.2, 0.3, -1.0, 0.4, rtol=1e-12, atol=1e-12)
    b = num.forward(0.2, 0.3, -1.0, 0.4, rtol=1e-11, atol=1e-11)
    assert agree(a["theta"], b["theta"], 1e-9) and agree(a["omega"], b["omega"], 1e-8)


def test_events_located_in_c_as_by_solve_ivp(pair):
    """A terminal event (omega rising through 0) and a non-terminal one (theta crossing -0.4 either way):
    the C integrator finds the same events at the same times as scipy's solve_ivp."""
    from mechsym.planar.forward import Crossing

    num, c = pair
    events = [Crossing("theta", -0.4), Crossing("omega", 0.0, direction=1, terminal=True)]
    a = c.forward(0.0, 0.0, 0.0, 2.0, rtol=1e-12, atol=1e-12, events=events)
    b = num.forward(0.0, 0.0, 0.0, 2.0, rtol=1e-12, atol=1e-12, events=events)
    names = ["theta = -0.4", "omega = 0 rising"]
    assert [e.name for e in a.events] == [e.name for e in b.events] == names
    assert agree([e.t for e in a.events], [e.t for e in b.events], 1e-9)
    assert len(a) == len(b) and agree(a["theta"], b["theta"], 1e-9)
    assert a.status == b.status == "stopped" and b.events[0].state[0] == pytest.approx(-0.4, abs=1e-12)
    # the state at each event from the C integrator's dense output: the crossing value, and the same
    # speed as scipy's (its own dense output)
    assert a.events[0].state[0] == pytest.approx(-0.4, abs=1e-9) and a.events[1].state[1] == pytest.approx(0.0, abs=1e-9)
    assert agree(np.array([e.state for e in a.events]), np.array([e.state for e in b.events]), 1e-8)
    # listed in the other order, the events still come back in time order, on both routes
    for system in (c, num):
        swapped = system.forward(0.0, 0.0, 0.0, 2.0, rtol=1e-12, atol=1e-12, events=events[::-1])
        assert [e.name for e in swapped.events] == names


def test_c_forward_conserves_energy(pair):
    """Zero torque, no damping, from rest at crank angle 0 for 2 s: the Dormand-Prince run in C keeps
    the total energy to 1e-8 of the peak kinetic energy."""
    from mechsym.planar.dynamics import energies

    num, c = pair
    table = c.forward(0.0, 0.0, 0.0, 2.0, rtol=1e-10, atol=1e-10)
    assert np.ptp(table["theta"]) > 0.5
    ke, pe = energies(num, num.kinematics(table["theta"]), table["omega"])
    assert np.max(np.abs(ke + pe - ke[0] - pe[0])) < 1e-8 * ke.max()


def planar_key(mech, options=None):
    """The lookup key c_backend.build gives a planar mechanism's library."""
    return keys.cache_key(mech, json.dumps(options or {}, sort_keys=True), keys.package_source())


def test_cache_key_tracks_model_parameters_and_generator(monkeypatch):
    base = planar_key(fourbar.build())
    assert base == planar_key(fourbar.build())  # deterministic
    m = fourbar.build()
    m.parameter("extra", 1.0)
    assert planar_key(m) != base  # another parameter set
    m = fourbar.build()
    m.torque("rocker", m.parameters["g"].symbol)
    assert planar_key(m) != base  # another model
    m = fourbar.build()
    m.bodies["coupler"].points["M"] = m.bodies["coupler"].points["M"]  # (same text, same order)
    assert planar_key(m) == base
    m.bodies["coupler"].points["N"] = m.bodies["coupler"].points.pop("M")
    assert planar_key(m) != base  # a renamed point
    assert planar_key(fourbar.build(), {"option": 1}) != base
    monkeypatch.setattr(keys, "_sympy_version", lambda: "0.0")  # another printer of the same expressions
    assert planar_key(fourbar.build()) != base
    monkeypatch.undo()
    monkeypatch.setattr(keys, "package_source", lambda: "changed generator")
    assert planar_key(fourbar.build()) != base


def test_fingerprint_refuses_what_it_cannot_describe():
    m = fourbar.build()
    m.loads.append(lambda q: q)
    with pytest.raises(TypeError, match="cannot fingerprint"):
        keys.fingerprint(m)


def _damage(path, data):
    """Replace a cache file's content by another inode, as a damaged or edited file: this process maps the
    library it loaded, and truncating that mapping in place would crash it (SIGBUS) when it next touches it."""
    tmp = path.with_name(path.name + ".damaged")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def test_corrupt_entry_is_rebuilt(tmp_path):
    num = derive(fourbar.build(), backend="numpy")
    first = c_backend.build(num, directory=tmp_path)
    entry = first.path
    _damage(entry / "lib.so", b"not a library")  # then damaged on disk
    lib = c_backend.build(num, directory=tmp_path)
    assert lib.path == entry
    assert (entry / "lib.so").read_bytes()[:4] == b"\x7fELF"
    assert lib.meta["lib_sha256"] == hashlib.sha256((entry / "lib.so").read_bytes()).hexdigest()
    source = (entry / "source.c").read_text()
    _damage(entry / "source.c", (source + "/* edited */\n").encode())  # content no longer the one recorded
    assert c_backend._intact(entry) is None
    assert c_backend.build(num, directory=tmp_path).path == entry and (entry / "source.c").read_text() == source


def test_two_processes_racing_on_one_entry(tmp_path):
    code = ("import sys; from mechanisms import slider_crank; from mechsym import derive; "
            "s = derive(slider_crank.build(), 'c'); assert s.backend.name == 'c'; "
            "print(s.inverse([0.0, 1.0], 2.0)['torque'][1])")
    env = dict(os.environ, MECHSYM_CACHE=str(tmp_path), PYTHONPATH=os.getcwd())
    procs = [subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    assert outs[0][0] == outs[1][0]
    entries = [e for e in tmp_path.iterdir() if not e.name.startswith(".") and e.name != "index"]
    assert len(entries) == 1
    # a third process reuses the entry: building is made impossible there, and it still loads
    reuse = "from mechsym.codegen import c_backend; c_backend.write_entry = None; " + code
    proc = subprocess.run([sys.executable, "-c", reuse], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout == outs[0][0], proc.stderr


def test_no_compiler_falls_back_with_one_warning(monkeypatch, tmp_path):
    monkeypatch.setenv("MECHSYM_CACHE", str(tmp_path))
    monkeypatch.setattr(c_backend, "compiler", lambda: None)
    with pytest.warns(UserWarning, match="no C compiler"):
        s = derive(fourbar.build(), "c")
    assert s.backend.name == "numpy"


def test_printed_powers_keep_their_precedence():
    """C reads `a/b*b` as (a/b)*b: a power printed as a product must be bracketed. Python's operators have
    C's precedence, so the printed text evaluated as Python must give sympy's value."""
    import math

    import sympy as sp

    from mechsym.codegen.c_source import c_code

    a, b, c = sp.symbols("a b c", real=True)
    values = {a: 1.7, b: 0.6, c: -2.3}
    names = {str(s): v for s, v in values.items()}
    for expr in (a / b**2, a / (b + c)**3, a**2 / b, c * a**4 / (a - b)**2, a / b**-2, 1 / b**2 - a / c):
        text = c_code(expr)
        printed = eval(text, {"pow": math.pow, "sqrt": math.sqrt}, names)
        assert printed == pytest.approx(float(expr.subs(values)), rel=1e-14), f"{expr} printed as {text}"


def test_build_source_caches_any_generated_c(tmp_path, monkeypatch):
    """The public entry point serves C that is not a mechanism's: built once, then loaded from the folder
    by a later load (nothing generated or compiled again), and rebuilt under another key."""
    import ctypes

    calls = []

    def generate(scale):
        calls.append(scale)
        return f"double twice(double x) {{ return {scale} * x; }}\n", {"kind": "test"}

    first = c_backend.build_source("demo", "k1", lambda: generate(2.0), directory=tmp_path)
    first.dll.twice.restype, first.dll.twice.argtypes = ctypes.c_double, [ctypes.c_double]
    assert first.dll.twice(1.25) == 2.5 and first.meta["kind"] == "test" and calls == [2.0]
    monkeypatch.setattr(c_backend, "_LOADED", {})              # as a new process would see the folder
    monkeypatch.setattr(c_backend, "write_entry", None)
    again = c_backend.build_source("demo", "k1", lambda: generate(9.0), directory=tmp_path)
    assert calls == [2.0] and again.path == first.path
    assert again.meta["lib_sha256"] == hashlib.sha256((first.path / "lib.so").read_bytes()).hexdigest()
    monkeypatch.undo()
    other = c_backend.build_source("demo", "k2", lambda: generate(3.0), directory=tmp_path)
    other.dll.twice.restype, other.dll.twice.argtypes = ctypes.c_double, [ctypes.c_double]
    assert other.dll.twice(1.25) == 3.75 and calls == [2.0, 3.0]
    entries = sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("."))
    assert entries == sorted([first.path.name, other.path.name, "index"])
    assert sorted(p.name for p in (tmp_path / "index").iterdir()) == ["demo-k1", "demo-k2"]


def test_one_source_under_two_layouts_gets_two_entries(tmp_path):
    """An entry is named by its source and the metadata it is loaded with: the same C text generated under
    another layout (another name for its entry point) is not served the first layout."""
    source = "double twice(double x) { return 2.0 * x; }\n"
    first = c_backend.build_source("demo", "k1", lambda: (source, {"entry": "twice"}), directory=tmp_path)
    other = c_backend.build_source("demo", "k2", lambda: (source, {"entry": "double_it"}), directory=tmp_path)
    assert first.meta["entry"] == "twice" and other.meta["entry"] == "double_it"
    assert other.path != first.path


def test_cache_hit_derives_no_symbolic_jacobian():
    """A library loaded from the cache needs only the declaration: the symbolic Phi_q and gamma are not
    derived to load it, solve kinematics or inverse dynamics; the numpy backend derives them."""
    derive(fourbar.build(), "c")                                  # the entry exists from here on
    c = derive(fourbar.build(), "c")
    c.inverse(np.linspace(0, 1, 40), 2.0)
    assert c.backend.name == "c" and not {"jacobian", "gamma"} & set(vars(c.constraints))
    assert {"jacobian", "gamma"} <= set(vars(derive(fourbar.build(), backend="numpy").constraints))


def test_parameter_expressions_evaluate_as_sympy_subs():
    """size_scale and tree_guess evaluate parameter expressions by xreplace: the same numbers as subs."""
    from mechsym.planar.kinematics import size_scale, tree_guess
    from mechsym.planar.model import numeric_subs

    num = derive(fourbar.build(), backend="numpy")
    con, mech = num.constraints, num.mechanism
    p = num.params({"l_crank": 0.037})
    subs = dict(zip(con.params, p))
    exprs = [c for b in mech.bodies.values() for pt in [*b.points.values(), b.com] for c in pt]
    fast = numeric_subs(mech.parameters, dict(zip(mech.parameters, p)))
    assert [float(e.xreplace(fast)) for e in exprs] == [float(e.subs(subs)) for e in exprs]
    assert size_scale(con, p) == max(abs(float(e.subs(subs))) for b in mech.bodies.values()
                                     for pt in b.points.values() for e in pt)
    q = tree_guess(con, p)                  # the spanning tree's joints are closed at the guess
    tree = {joint for _, joint in con.topology.tree.values()}
    rows = [i for i in range(con.n_joint_rows) if con.row_joint[i] in tree]
    assert rows and np.max(np.abs(num.kin.phi(q, np.zeros(1), p)[rows])) < 1e-15
