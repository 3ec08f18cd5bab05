"""Turning symbolic expressions into functions evaluated over many samples at once: a spec of the
functions (mechsym.codegen.spec), rendered by one printer per backend (numpy_backend, c_source with the C
runtime, scalar_python), loaded through callables or, for a mechanism, through System."""

__all__ = ["SparseMatrixFunction", "VectorFunction"]


def __getattr__(name):
    """The numpy backend's classes, imported on first use: loading a compiled library from the cache
    (mechsym.codegen.c_backend) then needs no sympy."""
    if name in __all__:
        from mechsym.codegen import numpy_backend

        return getattr(numpy_backend, name)
    raise AttributeError(f"module 'mechsym.codegen' has no attribute {name!r}")
