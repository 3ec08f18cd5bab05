"""The calls of a spec's generated functions over states, at the parameters in use: each function takes the
groups q (nq per state), v and a (nv per state) and the shared parameter vector p, for one state or N.

On C a function's call is the extension's entry (mechsym.codegen.c_extension: finite float64 C-contiguous
arrays read in place, N states with the GIL released, batches of WIDE_FROM states or more through the
lanes' entry point, `CFunctions.wide_address`), or, where the extension cannot be built, ctypes with kept
buffers for one state; on numpy it is the owner's general route, which evaluates N states through the numpy
rendering of the same spec (`evaluate`). Whatever input a call cannot take as it is goes to the general
route, which checks, converts and names what is wrong.
"""
from __future__ import annotations

import ctypes
import functools
import math

import numpy as np

from mechsym.codegen import c_extension, callables

__all__ = ["Entries"]


class Entries:
    """The calls of the functions of one owner's libraries (see the module docstring).

    library(name): the loaded library (CFunctions, or the numpy rendering) holding function `name`;
    general(name, q, v=None, a=None): the owner's general route; quaternion: the offset in q of a unit
    quaternion checked to quat_tol before the compiled code reads q (-1: none); square: the functions whose
    output per state is an (nv, nv) matrix; solves: those whose one-state output, when not finite, goes to
    the general route (which names the cause: a matrix that is not positive definite)."""

    def __init__(self, backend, library, general, nq, nv, quaternion=-1, quat_tol=0.0, square=(), solves=()):
        self._library, self._general = library, general
        self.nq, self.nv, self.quaternion, self.quat_tol = nq, nv, quaternion, quat_tol
        self._square, self._solves = tuple(square), tuple(solves)
        self._calls = {}           # function name -> its call at the parameters in use
        self._functions = {}       # function name -> (ctypes function taking addresses, outputs per state)
        self._one = None           # one state's kept buffers and their addresses
        self.p = np.zeros(0)
        self._make = backend.route(compiled=self._compiled_call_of, python=_general_call)
        self.evaluate = backend.route(compiled=self._compiled_evaluate, python=self._numpy_evaluate)
        """evaluate(name, n, qs, vs, as_, p): `name` at n states (rows of the C-contiguous qs, vs, as_) at
        the parameter vector p, (n, outputs per state)."""

    @property
    def p(self) -> np.ndarray:
        """The parameter vector in use (C-contiguous float64; `p_address` is its address)."""
        return self._p

    @p.setter
    def p(self, value):
        self._p = np.ascontiguousarray(value, float)
        self.p_address = self._p.ctypes.data
        self._calls = {}                               # (each made again with these parameters)

    def call(self, name):
        """The call (q, v=None, a=None) of function `name` at the parameters in use, made once."""
        if name not in self._calls:
            self._calls[name] = self._make(name, functools.partial(self._general, name))
        return self._calls[name]

    def function(self, name):
        """(ctypes function of `name` taking addresses, outputs per state), looked up once."""
        if name not in self._functions:
            lib = self._library(name)
            self._functions[name] = (lib.address_function(name), lib.meta["functions"][name]["size"])
        return self._functions[name]

    def _compiled_call_of(self, name, general):
        """The extension's entry of the compiled function (arrays read in place, one state or N; anything
        else to `general`), or where it cannot be built the ctypes route."""
        fn, size = self.function(name)
        shape = (self.nv, self.nv) if name in self._square else (size,)
        entry = c_extension.entry(ctypes.cast(fn, ctypes.c_void_p).value, (self.nq, self.nv, self.nv), shape,
                                  self._p, general, self.quaternion, self.quat_tol, name in self._solves,
                                  functools.partial(self._library(name).wide_address, name), callables.WIDE_FROM)
        return entry if entry is not None else functools.partial(self._ctypes_call, name, shape)

    def _ctypes_call(self, name, shape, q, v=None, a=None):
        """One state through ctypes and kept buffers where it fits, else the general route."""
        if np.ndim(q) == 1:
            out = self._compiled_one(name, q, v, a)
            if out is not None:
                return out.reshape(shape)
        return self._general(name, q, v, a)

    def _compiled_evaluate(self, name, n, qs, vs, as_, p):
        """`name` at n states through its compiled entry point: (n, ...)."""
        entry = self.call(name)
        if not isinstance(entry, functools.partial):          # the extension's entry: the GIL released
            return entry.evaluate(qs, vs, as_, p)
        lib = self._library(name)
        fn = lib.address_function(name, n)
        out = np.empty((n, lib.meta["functions"][name]["size"]))
        fn(n, qs.ctypes.data, vs.ctypes.data, as_.ctypes.data, p.ctypes.data, out.ctypes.data)
        return out

    def _numpy_evaluate(self, name, n, qs, vs, as_, p):
        """`name` at n states through the numpy rendering of its spec: (n, size)."""
        fn = getattr(self._library(name), name)
        return np.ascontiguousarray(fn(np.atleast_2d(qs).T, np.atleast_2d(vs).T, np.atleast_2d(as_).T, p).T)

    def _compiled_one(self, name, q, v, a):
        """One state through preallocated buffers whose addresses are known (a ctypes call with array
        arguments costs more than HyQ's H). None when an input does not fit: the general route then
        reports it."""
        fn, size = self.function(name)
        if self._one is None or size > len(self._one[0][4]):     # (the output buffer fits every function so far)
            bufs = [np.zeros(self.nq), np.zeros(self.nv), np.zeros(self.nv), np.zeros(self.nv), np.empty(max(size, 1))]
            if self._one is not None:
                bufs[:4] = self._one[0][:4]
            self._one = (bufs, [b.ctypes.data for b in bufs])
        (qb, vb, ab, zb, ob), (qa, va, aa, za, oa) = self._one
        try:
            qb[:] = q
            if v is not None:
                vb[:] = v
            if a is not None:
                ab[:] = a
        except (ValueError, TypeError):
            return None
        # non-finite inputs (and a quaternion off the unit sphere) go to the general route, which names them
        if not math.isfinite(qb @ qb + (0.0 if v is None else vb @ vb) + (0.0 if a is None else ab @ ab)):
            return None
        if self.quaternion >= 0:
            quat = qb[self.quaternion:self.quaternion + 4]
            if not abs(math.sqrt(quat @ quat) - 1) <= self.quat_tol:
                return None
        fn(1, qa, za if v is None else va, za if a is None else aa, self.p_address, oa)
        out = ob[:size].copy()
        return out if name not in self._solves or np.isfinite(out).all() else None   # (the general route names it)


def _general_call(name, general):
    """A function's call where nothing is compiled: the general route."""
    return general
