"""The backend: how generated code is evaluated, chosen once per derived system.

    backend = resolve("c")          # or resolve("numpy"), resolve(None) (the default), resolve(a Backend)
    fns = backend.load(name, key, make_spec)     # the callables of any codegen spec
    lib = backend.mechanism(system)              # a planar mechanism's functions
    run = backend.route(compiled=..., python=...)  # the one choice between an operation's two routes

`CBackend` compiles the generated C through the content-keyed cache (mechsym.codegen.c_backend);
`NumpyBackend` renders the same spec with numpy (mechsym.codegen.numpy_backend). The default is C where a
compiler is present, numpy otherwise; C asked for by name where no compiler exists falls back to numpy
with one warning. Code outside codegen never asks which backend it has: where a job has a compiled route
(the C runtime's batched loops) and a Python one (vectorised numpy, scipy's integrators), the algorithm
hands both to `route` and calls what it returns.
"""
from __future__ import annotations

import warnings

from mechsym.codegen import c_backend
from mechsym.core.errors import InputError

__all__ = ["Backend", "CBackend", "NumpyBackend", "NAMES", "default_backend", "require", "resolve"]


class Backend:
    """One way of evaluating generated code. `name` ("c" or "numpy") is for messages, cache keys and
    passing the choice on (a worker process, a command's option)."""

    name: str

    def load(self, name: str, key: str, make_spec):
        """The functions of the codegen spec `make_spec()` as callables with the numpy layout
        (mechsym.codegen.callables); `key` must change with everything make_spec reads."""
        raise NotImplementedError

    def mechanism(self, system):
        """A planar mechanism's generated functions (phi, jac, gamma, mass, ...; mechsym.planar.spec)."""
        raise NotImplementedError

    def route(self, compiled, python):
        """`compiled` on a backend that runs the C runtime's algorithms, else `python`: the one place
        where an operation with both routes is sent one way."""
        raise NotImplementedError

    def __repr__(self):
        return f"{type(self).__name__}()"

    def __str__(self):
        return self.name


class NumpyBackend(Backend):
    """The numpy rendering of every spec (lambdified with CSE, or straight-line numpy)."""

    name = "numpy"

    def load(self, name, key, make_spec):
        """The numpy rendering of the spec (its functions lambdified on first use)."""
        from mechsym.codegen import numpy_backend

        return numpy_backend.render(make_spec())

    def mechanism(self, system):
        """The numpy rendering of the mechanism's spec, its sparse plan run by sparse_numpy."""
        from mechsym.codegen import numpy_backend

        return numpy_backend.render(system.spec)

    def route(self, compiled, python):
        """`python`: numpy has no compiled route."""
        return python


class CBackend(Backend):
    """Generated C, compiled once into the per-user cache and loaded in-process."""

    name = "c"

    def load(self, name, key, make_spec):
        """The spec compiled through the cache (mechsym.codegen.callables.compile_spec)."""
        from mechsym.codegen import callables

        return callables.compile_spec(name, key, make_spec)

    def mechanism(self, system):
        """The mechanism's compiled library (mechsym.codegen.c_library.CLibrary), from the cache."""
        return c_backend.build(system)

    def route(self, compiled, python):
        """`compiled`: the C runtime's route."""
        return compiled


_BACKENDS = {b.name: b for b in (NumpyBackend(), CBackend())}
NAMES = tuple(_BACKENDS)


def default_backend() -> Backend:
    """C where a compiler is present, numpy otherwise."""
    return _BACKENDS["c" if c_backend.compiler() is not None else "numpy"]


def resolve(backend=None, quiet=False, default=None) -> Backend:
    """The Backend for a name ("c", "numpy"), a Backend, or None (the default: `default` where the caller
    gives one, e.g. "numpy" for a run that has no compiled route, else C where a compiler is present). "c"
    where no compiler exists is numpy, with a warning unless `quiet` (a look ahead whose derivation warns
    later); an unknown name is an InputError."""
    if isinstance(backend, Backend):
        return backend
    if backend is None:
        return default_backend() if default is None else resolve(default, quiet)
    if backend not in _BACKENDS:
        raise InputError(f"unknown backend '{backend}' ({' or '.join(NAMES)})")
    if backend == "c" and c_backend.compiler() is None:
        if not quiet:
            warnings.warn("no C compiler found (set CC, or install gcc); falling back to the numpy backend",
                          stacklevel=3)
        return _BACKENDS["numpy"]
    return _BACKENDS[backend]


def require(name: str) -> Backend:
    """The backend a user named explicitly (a command's --backend): as `resolve`, but C without a compiler
    is an InputError instead of a fallback."""
    if name == "c" and c_backend.compiler() is None:
        raise InputError("--backend c needs a C compiler (CC, cc, gcc or clang), and none was found; "
                         "install one or give --backend numpy")
    return resolve(name)
