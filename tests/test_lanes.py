"""The inverse-dynamics batch in blocks of lanes (mechsym.codegen.c_lanes) against the sequential route it
replaces, the numpy backend, and libm for its own sines and cosines."""
import ctypes
import math
import subprocess

import numpy as np
import pytest

from conftest import agree
from mechanisms import fourbar, slider_crank
from mechsym import derive
from mechsym.codegen import c_backend, c_lanes, c_runtime, keys
from mechsym.codegen.c_library import CLibrary
from mechsym.codegen.c_source import generate
from mechsym.core.errors import InputError
from mechsym.planar.kinematics import STEP_TOL

pytestmark = pytest.mark.skipif(c_backend.compiler() is None, reason="no C compiler")
MODELS = {"fourbar": fourbar, "slider-crank": slider_crank}


def _compile(tmp_path, name, source, meta):
    c_backend.write_entry(tmp_path / name, source, meta)
    return CLibrary(c_backend.Compiled(ctypes.CDLL(str(tmp_path / name / "lib.so")), meta, tmp_path / name))


def _libraries(num, tmp):
    """The library of a System with lanes, and the same generated without them (the sequential route)."""
    source, meta = generate(num)
    assert "#define MS_HAVE_LANES 1" in source
    limit = c_lanes.MAX_BLOCK
    c_lanes.MAX_BLOCK = -1  # no dense block is small enough: inverse_blocks is inverse_run
    try:
        sequential, meta_seq = generate(num)
    finally:
        c_lanes.MAX_BLOCK = limit
    assert "#define MS_HAVE_LANES 0" in sequential
    return _compile(tmp, "lanes", source, meta), _compile(tmp, "sequential", sequential, meta_seq)


@pytest.fixture(scope="module", params=list(MODELS))
def routes(request, tmp_path_factory):
    """(numpy System, library with lanes, library with the sequential route only) of one model."""
    num = derive(MODELS[request.param].build(), backend="numpy")
    return (num, *_libraries(num, tmp_path_factory.mktemp("lanes")))


def _run(lib, solver, theta):
    q0 = solver.sweep(np.asarray(theta[:1], float)[:, None]).q[0]
    return lib.inverse(np.asarray(theta, float), solver.params, q0, solver.col_scale, STEP_TOL,
                       hmax=solver.step[0], want_q=True)


PATHS = {
    "dense": np.linspace(0.0, 2 * np.pi, 20000, endpoint=False),     # blocks far inside one anchor's reach
    "coarse": np.linspace(0.3, 2 * np.pi + 0.3, 37),                # blocks wider than 2 hmax: sample by sample
    "one degree": np.linspace(0.0, 2 * np.pi, 360, endpoint=False),
    "backwards, two turns": np.linspace(5.0, 5.0 - 4 * np.pi, 3001),
    "uneven": np.sort(np.random.default_rng(3).uniform(-1.0, 9.0, 517)),
    "three": np.array([1.0, 1.1, 1.15]),
}


@pytest.mark.parametrize("path", list(PATHS))
def test_blocks_equal_the_sequential_route(routes, path):
    num, lanes, sequential = routes
    theta = PATHS[path]
    solver = num.solver({"density": 1.3})
    a, b = _run(lanes, solver, theta), _run(sequential, solver, theta)
    assert a[0] == b[0] == -1 and a[1] == b[1] == 0
    for k, tol in ((2, 1e-13), (3, 1e-12), (4, 1e-12), (5, 1e-12)):  # q, largest coefficient, branch, basis
        assert agree(a[k], b[k], tol), (path, k)


def test_a_sample_does_not_depend_on_its_neighbours(routes):
    """Each sample is solved from a prediction of its own: the same angle in another batch (other
    neighbours, another block position) gives the same result to rounding."""
    num, lanes, _ = routes
    solver = num.solver()
    theta = PATHS["dense"][:4000]
    whole = _run(lanes, solver, theta)
    part = _run(lanes, solver, theta[1237:2900:3])
    assert agree(part[5], whole[5][1237:2900:3], 1e-13) and agree(part[2], whole[2][1237:2900:3], 1e-13)


def test_inverse_on_c_agrees_with_numpy_on_a_dense_sweep(routes):
    """The table every user sees: the C backend (lanes) against the numpy backend at 10^4 angles."""
    num, _, _ = routes
    c = derive(num.mechanism, "c")
    theta = np.linspace(0.1, 2 * np.pi + 0.1, 10000, endpoint=False)
    a, b = c.inverse(theta, [0.5, 3.0], alpha=2.0), num.inverse(theta, [0.5, 3.0], alpha=2.0)
    for name in b.names:
        assert agree(a[name], b[name], 1e-10), name


def test_a_failure_is_named_at_the_same_sample(tmp_path):
    """A crank that cannot turn (near theta = pi the coupler and rocker cannot reach its end): the blocks
    stop at the sample where the sequential route stops, with its status."""
    num = derive(fourbar.build(), backend="numpy")
    lanes, sequential = _libraries(num, tmp_path)
    solver = num.solver({"l_crank": 0.3})
    theta = np.linspace(0.0, 2 * np.pi, 5000)
    a, b = _run(lanes, solver, theta), _run(sequential, solver, theta)
    assert b[0] > 0 and (a[0], a[1]) == (b[0], b[1])
    for k in (2, 3, 4, 5):
        assert agree(a[k][: a[0]], b[k][: b[0]], 1e-12), k


def test_sines_and_cosines_within_their_stated_error(tmp_path):
    """MS_SIN_COS against libm (math.sin, math.cos): absolute error below 2^-52 for |x| <= MS_TRIG_MAX,
    with the cache's flags and with an export's portable ones."""
    source = "#include <math.h>\n" + c_runtime.text("ms_lanes.h") + r"""
void sin_cos_batch(int n, const double *x, double *s, double *c) {
  MS_SIMD_LOOP
  for (int i = 0; i < n; ++i) MS_SIN_COS(x[i], s[i], c[i]);
}
"""
    (tmp_path / "sc.c").write_text(source)
    rng = np.random.default_rng(0)
    near = np.arange(-2000, 2000) * (np.pi / 2)
    x = np.concatenate([rng.uniform(-1e5, 1e5, 50000), rng.uniform(-7, 7, 50000), near,
                        near + rng.normal(scale=1e-8, size=near.size), [0.0, -0.0, 1e5, -1e5, np.pi / 4]])
    exact_s = np.array([math.sin(v) for v in x])
    exact_c = np.array([math.cos(v) for v in x])
    ptr = ctypes.POINTER(ctypes.c_double)
    for i, flags in enumerate((c_backend.CFLAGS + c_backend.HOST_FLAGS, ["-O2", "-std=c99", "-shared", "-fPIC"])):
        lib_path = tmp_path / f"sc{i}.so"
        subprocess.run([c_backend.compiler(), *flags, "-o", str(lib_path), str(tmp_path / "sc.c"), "-lm"], check=True)
        lib = ctypes.CDLL(str(lib_path))
        s, c = np.empty_like(x), np.empty_like(x)
        lib.sin_cos_batch(len(x), x.ctypes.data_as(ptr), s.ctypes.data_as(ptr), c.ctypes.data_as(ptr))
        assert np.max(np.abs(s - exact_s)) <= 2.0**-52 and np.max(np.abs(c - exact_c)) <= 2.0**-52, flags
        assert np.max(np.abs(s * s + c * c - 1.0)) <= 4.5e-16


def test_cache_key_holds_the_cpu_features(monkeypatch):
    """The native cache builds for the host's CPU (-march=native): a worker on another CPU must not load it.
    A portable build (MECHSYM_PORTABLE=1) is keyed by its flags alone, so that it serves every CPU and
    never mixes with a native entry."""
    monkeypatch.setenv("MECHSYM_PORTABLE", "0")
    key = keys.cache_key("source")
    monkeypatch.setenv("MECHSYM_PORTABLE", "1")
    portable = keys.cache_key("source")
    assert "-march=native" not in c_backend.build_flags() and "-O2" in c_backend.build_flags()
    monkeypatch.setattr(c_backend, "cpu_features", lambda: "another CPU: avx512f")
    assert keys.cache_key("source") == portable
    monkeypatch.setenv("MECHSYM_PORTABLE", "0")
    assert keys.cache_key("source") not in (key, portable)
    monkeypatch.setenv("MECHSYM_PORTABLE", "yes")
    with pytest.raises(InputError, match="MECHSYM_PORTABLE must be 0 or 1, got 'yes'"):
        c_backend.build_flags()
