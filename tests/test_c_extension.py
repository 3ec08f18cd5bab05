"""The Python extension that calls a tree's generated functions (mechsym.codegen.c_extension): the same
compiled function as the ctypes route, so the same bits, one state and N states (from 8 states the lanes'
entry point); agreement with Pinocchio;
bad input named in one line; ctypes where the extension cannot be built."""
import ctypes
import functools
import warnings

import numpy as np
import pytest

from conftest import agree
from mechsym.codegen import c_backend, c_extension, keys
from mechsym.core.errors import InputError

pin = pytest.importorskip("pinocchio")
FEET = ("lf_foot", "lh_foot", "rf_foot", "rh_foot")
NAMES = ("mass", "bias", "gravity", "inverse", "forward", "contact", "com", "poses")


@pytest.fixture(scope="module")
def hyq():
    """The shipped HyQ (floating base: the quaternion check), Pinocchio's model and random states."""
    erd = pytest.importorskip("example_robot_data")
    if c_backend.compiler() is None or c_extension.module() is None:
        pytest.skip("no compiler or no Python headers: the extension cannot be built")
    from mechanisms import hyq as shipped

    model = erd.load("hyq").model
    rng = np.random.default_rng(3)
    pin.seed(3)
    q = np.array([pin.randomConfiguration(model, -np.ones(model.nq), np.ones(model.nq)) for _ in range(12)])
    return shipped.system(), model, q, rng.standard_normal((12, model.nv)), rng.standard_normal((12, model.nv))


def by_ctypes(system, name, q, v, a):
    """`name` at the states (rows of q, v, a) through ctypes, calling the entry point that the extension calls
    for as many states: the per-state loop, or from 8 states the lanes' where the function has one: (n, size)."""
    q, v, a = (np.ascontiguousarray(np.atleast_2d(x)) for x in (q, v, a))
    lib = system._library("main")
    fn, size = lib.address_function(name, len(q)), lib.meta["functions"][name]["size"]
    out, p = np.empty((len(q), size)), system.param_values
    fn(len(q), q.ctypes.data, v.ctypes.data, a.ctypes.data, p.ctypes.data, out.ctypes.data)
    return out


@pytest.mark.parametrize("name", NAMES)
def test_the_extension_gives_the_bits_of_ctypes(hyq, name):
    system, _, q, v, a = hyq
    entry = system.entries.call(name)
    assert type(entry).__name__ == "Entry"
    many = entry(q, v, a)
    assert many.shape[0] == len(q)
    assert np.array_equal(many.reshape(len(q), -1), by_ctypes(system, name, q, v, a))
    for i in (0, 5):
        one = entry(q[i], v[i], a[i])
        assert one.shape == many.shape[1:]
        assert np.array_equal(one.ravel(), by_ctypes(system, name, q[i], v[i], a[i])[0])
    # groups not given are zeros, as ctypes is given them
    zero = np.zeros_like(v)
    assert np.array_equal(entry(q).reshape(len(q), -1), by_ctypes(system, name, q, zero, zero))
    assert np.array_equal(entry(q[1]).ravel(), by_ctypes(system, name, q[1], zero[1], zero[1])[0])


def test_one_state_calls_agree_with_pinocchio(hyq):
    system, model, q, v, a = hyq
    data = model.createData()
    for qi, vi, ai in zip(q, v, a):
        H = pin.crba(model, data, qi)
        assert agree(system.mass_matrix(qi), np.triu(H) + np.triu(H, 1).T, 1e-10)
        assert agree(system.bias(qi, vi), pin.nonLinearEffects(model, data, qi, vi), 1e-10)
        assert agree(system.inverse(qi, vi, ai), pin.rnea(model, data, qi, vi, ai), 1e-10)
        assert agree(system.forward(qi, vi, ai), pin.aba(model, data, qi, vi, ai), 1e-10)


def test_inputs_not_read_in_place_are_converted(hyq):
    system, _, q, v, _ = hyq
    expected = system.bias(q[2], v[2])
    wide = np.zeros((len(q), 2 * system.nq))
    wide[:, ::2] = q                                   # a strided view: copied
    assert np.array_equal(system.bias(wide[2, ::2], v[2]), expected)
    assert np.array_equal(system.bias(list(q[2]), tuple(v[2])), expected)
    single = q[2].astype(np.float32)                   # another dtype: converted
    assert np.array_equal(system.bias(single, v[2]), system.bias(single.astype(float), v[2]))
    assert np.array_equal(system.bias(np.asfortranarray(q[:4]), v[:4])[2], system.bias(q[2:3], v[2:3])[0])
    assert np.array_equal(system.bias(q[:4].astype(">f8"), v[:4])[2], expected)
    gravity = np.zeros(system.nq, dtype=np.int64)
    gravity[6] = 1                                     # integers (the unit quaternion): converted
    assert np.array_equal(system.gravity(gravity), system.gravity(gravity.astype(float)))


@pytest.mark.parametrize("call, words", [
    (lambda s, q, v: s.mass_matrix(q[0][:5]), "tree 'hyq', mass_matrix: q must have shape (19,) or (N, 19), got (5,)"),
    (lambda s, q, v: s.bias(q[0], v[0][:3]), "tree 'hyq', bias: v must have shape (18,)"),
    (lambda s, q, v: s.bias(q[:3], v[:2]), "tree 'hyq', bias: 2 velocities for 3 configurations"),
    (lambda s, q, v: s.inverse(q[0], v[0], np.full(18, np.inf)), "tree 'hyq', inverse: a is not finite (sample 0, entry 0)"),
    (lambda s, q, v: s.forward(q[:2], v[:2], np.full((2, 18), np.nan)), "tree 'hyq', forward: tau is not finite"),
    (lambda s, q, v: s.mass_matrix(np.where(np.arange(19) == 6, 1.01, q[0])),
     "tree 'hyq', mass_matrix: the base quaternion of sample 0 has norm"),
    (lambda s, q, v: s.contact_terms(q[0], np.array(["a"] * 18)), "could not convert string to float"),
])
def test_bad_input_is_one_line_naming_the_function_and_argument(hyq, call, words):
    system, _, q, v, _ = hyq
    with pytest.raises((InputError, ValueError)) as err:
        call(system, q, v)
    assert words in str(err.value) and "\n" not in str(err.value), str(err.value)


def test_new_parameters_reach_the_entry(hyq):
    system, _, q, _, _ = hyq
    before = system.mass_matrix(q[0])
    try:
        system.set_params({"trunk.m": 2 * system.tree.resolve_parameters({})["trunk.m"]})
        after = system.mass_matrix(q[0])
        assert not np.array_equal(after, before)
        assert np.array_equal(after, system.mass_matrix(q[0], params=system.param_values))   # the general route
    finally:
        system.set_params()
    assert np.array_equal(system.mass_matrix(q[0]), before)


def test_ctypes_where_the_extension_cannot_be_built(hyq, monkeypatch, tmp_path):
    system, model, q, v, a = hyq
    expected = {n: (system.entries.call(n)(q, v, a), system.entries.call(n)(q[0], v[0], a[0])) for n in NAMES}
    monkeypatch.setattr(c_extension.sysconfig, "get_paths", lambda: {"include": str(tmp_path)})  # no Python.h
    c_extension.module.cache_clear()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert c_extension.module() is None
        assert len(caught) == 1 and "C headers" in str(caught[0].message), [str(w.message) for w in caught]
        system.entries._calls = {}
        for n in NAMES:
            entry = system.entries.call(n)
            assert isinstance(entry, functools.partial)             # the ctypes route
            many, one = expected[n]
            assert np.array_equal(entry(q, v, a), many) and np.array_equal(entry(q[0], v[0], a[0]), one)
        with pytest.raises(InputError, match="tree 'hyq', bias: v must have shape"):
            system.bias(q[0], v[0][:3])
    finally:
        monkeypatch.undo()
        c_extension.module.cache_clear()
        system.entries._calls = {}
    assert type(system.entries.call("mass")).__name__ == "Entry"


def test_a_system_with_entries_is_freed(hyq):
    """The entries hold the system's general route (a cycle through its methods): the collector frees it."""
    import gc
    import weakref

    from mechsym import derive

    system, _, q, v, _ = hyq
    other = derive(system.tree, contact_frames=FEET)          # (warm: from the cache)
    assert np.array_equal(other.bias(q[0], v[0]), system.bias(q[0], v[0]))
    ref = weakref.ref(other)
    del other
    gc.collect()
    assert ref() is None


def test_the_extension_is_keyed_by_the_python_abi(monkeypatch):
    key = keys.cache_key("source", python=True)
    assert key != keys.cache_key("source")
    monkeypatch.setattr(keys, "python_abi", lambda: "cpython-399 .cpython-399-x86_64-linux-gnu.so numpy 1.0")
    assert keys.cache_key("source", python=True) != key
    assert keys.cache_key("source") == keys.cache_key("source", python=False)


def test_a_generated_function_by_address_with_zeros_for_missing_groups():
    """An entry over a plain compiled function (not a tree): the layout (shape, rows) and the GIL-free
    N-state evaluate, against numpy."""
    if c_backend.compiler() is None or c_extension.module() is None:
        pytest.skip("no compiler or no Python headers")
    import sympy as sp

    from mechsym.codegen.callables import compile_spec
    from mechsym.codegen.spec import Function, Spec

    x, y, k = sp.symbols("x0:3"), sp.symbols("y0:2"), sp.symbols("k0:1")
    exprs = [x[0] * y[1] + k[0], x[1] - x[2] * y[0], x[2] ** 2, y[0] + y[1]]
    spec = Spec("ext", {}, {"f": Function("f", [("x", x), ("y", y), ("p", k)], exprs)}, None)
    fns = compile_spec("ext-test", keys.cache_key(sp.srepr(exprs)), lambda: spec)
    address = ctypes.cast(fns.address_function("f"), ctypes.c_void_p).value
    p = np.array([0.5])
    fallback = lambda *args: "fallback"
    entry = c_extension.entry(address, (3, 2), (2, 2), p, fallback)
    X, Y = np.random.default_rng(0).standard_normal((7, 3)), np.random.default_rng(1).standard_normal((7, 2))
    want = np.stack([X[:, 0] * Y[:, 1] + 0.5, X[:, 1] - X[:, 2] * Y[:, 0], X[:, 2] ** 2, Y[:, 0] + Y[:, 1]], 1)
    assert np.allclose(entry(X, Y), want.reshape(7, 2, 2), rtol=1e-15, atol=0)
    assert np.allclose(entry(X[3], Y[3]), want[3].reshape(2, 2), rtol=1e-15, atol=0)
    assert np.allclose(entry(X)[:, 0, 0], 0.5) and entry(X[:0]).shape == (0, 2, 2)
    assert np.allclose(entry.evaluate(X, Y, np.array([1.5])), (want + [1, 0, 0, 0]).reshape(7, 2, 2), rtol=1e-15)
    assert entry(X.T, Y) == "fallback" and entry(X, Y[:3]) == "fallback" and entry([1, 2, 3]) == "fallback"
    assert entry(X[0].astype(np.float32)) == "fallback" and entry(X, Y, Y) == "fallback"
    with pytest.raises(ValueError, match="rows"):
        entry.evaluate(X, Y[:3], p)
