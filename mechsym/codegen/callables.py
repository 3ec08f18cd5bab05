"""Callables from a codegen spec on either backend: the one way from sympy expressions to functions.

    from mechsym.codegen.spec import Function, Spec
    spec = Spec("body", {}, {"rate": Function("rate", [("y", state), ("p", params)], exprs)}, None)
    fns = load("body", key, lambda: spec, backend="c")      # or backend="numpy"
    fns.rate(y, p)          # y (n,) or (n, N...), p (npar,) -> (len(exprs),) or (len(exprs), N...)

Every function of the spec becomes an attribute with the numpy backend's layout (a group's first axis runs
over its symbols, any further axes over samples; outputs first, then the sample axes); a spec with a
sparse Jacobian also gets `jac` (samples first, then rows and columns). On C, an input group named "p" is
one vector shared by every sample (the run-time parameters); every other group is per sample. The C
source is `c_source.render_straight` of the spec, compiled through the content-keyed cache of
mechsym.codegen.c_backend (`key` must change with everything `make_spec` reads; `make_spec` runs only
when nothing is cached). The functions named in spec.lanes also get batched entry points on SIMD lanes,
compiled into a second library only when batches come (`CFunctions.wide_address`); for backend "numpy", or "c" without a compiler (with a warning), the numpy
printer's rendering (`numpy_backend.render`) is returned.
"""
from __future__ import annotations

import ctypes
import dataclasses
import math

import numpy as np

from mechsym.codegen import c_backend
from mechsym.codegen.keys import cache_key

__all__ = ["load", "compile_spec", "layout", "CFunctions"]

PREFIX = "ms3_"
WIDE_FROM = 8   # MS_LANES (runtime/ms_lanes.h): a batch of fewer states fills no block of the lanes


def layout(spec) -> dict:
    """The metadata a compiled spec is loaded with: each function's input groups (name, size), number of
    values per sample and arithmetic operations per sample (spec.flops), the Jacobian's shape (or None),
    the names of the run-time parameters (the symbols of the shared group "p"), and the functions with
    entry points on lanes (spec.lanes)."""
    from mechsym.codegen.spec import flops

    counts = flops(spec)
    functions = {name: {"inputs": [[g, len(symbols)] for g, symbols in f.inputs], "size": f.size,
                        "flops": counts[name]} for name, f in spec.functions.items()}
    jac = spec.jacobian
    jacobian = None if jac is None else {"rows": jac.rows, "cols": jac.cols, "values": jac.values}
    shared = [symbols for f in spec.functions.values() for g, symbols in f.inputs if g == "p"]
    parameters = [getattr(s, "name", str(s)) for s in (shared[0] if shared else ())]
    return {"kind": "spec", "functions": functions, "jacobian": jacobian, "parameters": parameters,
            "lanes": [name for name in spec.functions if name in spec.lanes]}


def load(name, key, make_spec, backend=None):
    """The functions of the spec `make_spec()` as callables on `backend` (a name or a
    mechsym.codegen.backend.Backend; None: the default): compiled C (`CFunctions`) or numpy."""
    from mechsym.codegen.backend import resolve

    return resolve(backend).load(name, key, make_spec)


def compile_spec(name, key, make_spec) -> "CFunctions":
    """The spec `make_spec()` compiled through the cache (run only when nothing is cached): every function's
    per-state loop now, and the batched entry points on lanes of the functions in spec.lanes in a second
    library, `NAME-lanes`, keyed by `key` too, built on first need (`CFunctions.wide_address`): their code
    costs the compiler about twice what the per-state loops cost, which a cold start need not pay."""
    from mechsym.codegen.c_source import render_straight

    def generate():
        spec = make_spec()
        return render_straight(spec, PREFIX), layout(spec)

    def generate_lanes():
        spec = make_spec()
        wide = dataclasses.replace(spec, functions={n: f for n, f in spec.functions.items() if n in spec.lanes},
                                   jacobian=None)
        # (its entry points are only ever reached by address, `wide_address`: no layout to count flops for)
        return render_straight(wide, PREFIX, lanes=wide.lanes), {"kind": "lanes", "functions": list(wide.functions)}

    def lanes():
        return c_backend.build_source(f"{name}-lanes", cache_key(key, "lanes"), generate_lanes)

    return CFunctions(c_backend.build_source(name, key, generate), lanes)


class CFunctions:
    """The entry points of a compiled spec (a c_backend.Compiled entry), one attribute per function with
    the layout of the numpy rendering; `lanes` (or None) builds or loads the library of the batched entry
    points on lanes (a Compiled entry) when first asked for one."""

    backend = "c"

    def __init__(self, compiled, lanes=None):
        self.meta, self._dll = compiled.meta, compiled.dll
        self._lanes, self._wide = lanes, None
        for name, f in self.meta["functions"].items():
            setattr(self, name, self._bind(self.address_function(name), f["inputs"], f["size"], None))
        jac = self.meta["jacobian"]
        if jac is not None:
            inputs = self.meta["functions"][jac["values"]]["inputs"]
            self.jac = self._bind(self.address_function("jac"), inputs, jac["rows"] * jac["cols"],
                                  (jac["rows"], jac["cols"]))

    def address_function(self, name, states=1):
        """The C entry point of function `name` (or "jac") taking the arrays' addresses (ints) instead of arrays:
        fn(ns, *input addresses, out address), for a caller that keeps its own buffers (a one-state hot
        path) or hands the function to C code by pointer; for calls of `states` states, the lanes' entry
        point where the function has one and `states` reaches WIDE_FROM (`wide_address`)."""
        of = self.meta["jacobian"]["values"] if name == "jac" else name
        argtypes = [ctypes.c_int] + [ctypes.c_void_p] * (len(self.meta["functions"][of]["inputs"]) + 1)
        wide = self.wide_address(name) if states >= WIDE_FROM else 0
        if wide:
            return ctypes.CFUNCTYPE(None, *argtypes)(wide)
        fn = self._dll[PREFIX + name]                # (a new function object: the bound one keeps its argtypes)
        fn.argtypes = argtypes
        fn.restype = None
        return fn

    def wide_address(self, name) -> int:
        """The address of function `name`'s batched entry point on lanes (same arguments and results as
        `address_function`'s, for WIDE_FROM states or more), its library compiled now unless cached; 0 for
        a function without one."""
        if name not in self.meta.get("lanes", ()) or self._lanes is None:
            return 0
        if self._wide is None:
            self._wide = self._lanes().dll
        return ctypes.cast(self._wide[PREFIX + name], ctypes.c_void_p).value

    def prepare(self):
        """The library of the entry points on lanes built (or loaded) now rather than on the first batch."""
        for name in self.meta.get("lanes", ()):
            self.wide_address(name)

    def _bind(self, fn, inputs, size, matrix):
        """f(*groups) calling `fn` over the samples: outputs (size, *samples), or (*samples, *matrix)."""
        shared = [g == "p" for g, _ in inputs]

        def call(*groups):
            if len(groups) != len(inputs):
                raise TypeError(f"expected {len(inputs)} input groups ({', '.join(g for g, _ in inputs)}), "
                                f"got {len(groups)}")
            arrays = [np.asarray(a, float) for a in groups]
            shapes = {a.shape[1:] for a, s in zip(arrays, shared) if not s}
            shape = shapes.pop() if len(shapes) == 1 else np.broadcast_shapes(*shapes) if shapes else ()
            n = math.prod(shape)
            args = []
            for (g, k), a, s in zip(inputs, arrays, shared):
                if s:
                    a = np.ascontiguousarray(a.reshape(k))
                elif a.shape[1:] == shape:                 # samples last: one transposing copy
                    a = np.ascontiguousarray(a.reshape(k, n).T)
                else:
                    a = np.ascontiguousarray(np.moveaxis(np.broadcast_to(a.reshape((k,) + a.shape[1:]), (k,) + shape),
                                                         0, -1).reshape(n, k))
                args.append(a)
            out = np.empty((n, size))
            fn(n, *[a.ctypes.data for a in args], out.ctypes.data)
            if matrix is not None:
                return out.reshape(shape + matrix)
            return out.T.reshape((size,) + shape)

        return call
