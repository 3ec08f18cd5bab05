"""Generated entry points called from Python without ctypes: one state at the cost of the call.

    entry = c_extension.entry(address, sizes=(nq, nv, nv), shape=(nv, nv), p=params, fallback=general)
    entry(q)            # (nq,) -> (nv, nv), read in place;  entry(qs) (N, nq) -> (N, nv, nv), GIL released
    entry.evaluate(qs, vs, as_, p)   # N states of arrays the caller has checked

A ctypes call converts every argument and the caller allocates in Python: 3 to 10 us a state, where a small
tree's H takes a fraction of one. `ms_call` (mechsym/codegen/runtime/ms_python.c) is a small CPython extension module,
compiled once per Python ABI into the C backend's content-keyed cache (keys.cache_key(..., python=True)), whose
Entry takes numpy arrays through numpy's C API and calls the generated function by its address (METH_FASTCALL,
vectorcall). An input that is not a finite, C-contiguous float64 array of the right shape (or a base
quaternion off the unit sphere) goes unchanged to `fallback`, the Python route, which converts it or raises
the one-line error naming the argument. Where the module cannot be built (no compiler, or no Python.h:
install the Python development headers) `entry` returns None, with one warning, and callers keep their
ctypes route.
"""
from __future__ import annotations

import functools
import importlib.machinery
import importlib.util
import sysconfig
import warnings
from pathlib import Path

import numpy as np

from mechsym.codegen import c_backend, c_runtime
from mechsym.codegen.keys import cache_key

__all__ = ["module", "entry"]

SOURCE = "ms_python.c"


@functools.lru_cache(maxsize=1)
def module():
    """The ms_call extension module, built into the cache on first use, or None where it cannot be built."""
    headers = sysconfig.get_paths()["include"]
    if c_backend.compiler() is None:
        return None                     # (the backend has warned: numpy evaluates the code)
    if not Path(headers, "Python.h").is_file():
        warnings.warn(f"Python's C headers are not in {headers} (install the Python development package); "
                      "one-state calls of compiled code go through ctypes (about 10 us each)", stacklevel=3)
        return None
    source = c_runtime.source(SOURCE)
    meta = {"kind": "extension", "module": "ms_call", "include": [headers, np.get_include()]}
    key = cache_key(source, repr(meta), python=True)
    try:
        compiled = c_backend.build_source("python-call", key, lambda: (source, meta), python=True)
    except (c_backend.CompilerMissing, RuntimeError) as exc:
        lines = str(exc).splitlines() or [type(exc).__name__]
        warnings.warn(f"the Python extension for one-state calls could not be built ("
                      f"{next((ln for ln in lines if 'error' in ln), lines[-1]).strip()}); they go through ctypes",
                      stacklevel=3)
        return None
    loader = importlib.machinery.ExtensionFileLoader("ms_call", str(compiled.path / "lib.so"))
    mod = importlib.util.module_from_spec(importlib.util.spec_from_loader("ms_call", loader))
    loader.exec_module(mod)
    return mod


def entry(address: int, sizes, shape, p, fallback, quat=-1, quat_tol=0.0, finite_out=False, widen=None,
          wide_from=0):
    """An ms_call.Entry for the generated function at `address` (`void f(int ns, g1..gk, p, out)`): groups
    of `sizes` per state, output of `shape` per state, parameters `p` (a float64 vector), `fallback` the
    Python route called with the same arguments when an input is not usable as it is; `quat` the offset of
    a unit quaternion in the first group (-1: none) checked to `quat_tol`; `finite_out`: a one-state output
    that is not finite goes to `fallback` too (which names the cause); `widen` (or None) is called once, on the
    first call of at least `wide_from` states, for the address of the entry point such calls run through from
    then on (0: the same one): a batched library compiled only when batches come. None where the module
    cannot be built."""
    mod = module()
    if mod is None:
        return None
    return mod.Entry(address, tuple(int(s) for s in sizes), tuple(int(s) for s in shape),
                     np.ascontiguousarray(p, float), fallback, int(quat), float(quat_tol), bool(finite_out), widen,
                     int(wide_from))
