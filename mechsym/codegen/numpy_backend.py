"""numpy backend: sympy's lambdify with common-subexpression elimination, vectorised over samples.

Every function takes argument groups (e.g. coordinates, speeds, parameters); a group is an array whose
first axis runs over its symbols and whose other axes (if any) run over samples. Outputs carry the
sample axes last for vectors and first for matrices (ready for numpy's batched solvers).
"""
from __future__ import annotations

import numpy as np
import sympy as sp


def _lambdify(groups, exprs, replacements=None):
    cse = True if replacements is None else (lambda e, reps=tuple(replacements): (list(reps), e))
    return sp.lambdify([list(g) for g in groups], list(exprs), modules="numpy", cse=cse)


class VectorFunction:
    """f(*groups) -> array (len(exprs), *sample_shape).

    replacements: the (symbol, expression) pairs of a common-subexpression elimination done beforehand
    (evaluated in order, `exprs` written in their symbols), used instead of sympy's own cse."""

    def __init__(self, groups, exprs, replacements=None):
        self.exprs = tuple(sp.sympify(e) for e in exprs)
        self._f = _lambdify(groups, self.exprs, replacements) if self.exprs else None

    def one(self, *groups):
        """One sample, each group a plain sequence of floats (an ODE right-hand side's call): no shape
        inspection, one conversion of the result."""
        return np.array(self._f(*groups), float) if self._f is not None else np.empty(0)

    def outputs(self, *groups):
        """The outputs as a list, each a scalar or an array as the inputs broadcast; a group is a sequence
        whose entries may be scalars or arrays of one shape (nothing is stacked or copied)."""
        return list(self._f(*groups)) if self._f is not None else []

    def __call__(self, *args):
        shape = _sample_shape(args)
        if shape == () and self._f is not None:  # one sample (an ODE right-hand side): scalars, one conversion
            return np.array(self._f(*args), float)
        out = np.empty((len(self.exprs),) + shape)
        if self._f is not None:
            for i, v in enumerate(self._f(*args)):
                out[i] = v
        return out


class SparseMatrixFunction:
    """f(*groups) -> dense array (*sample_shape, rows, cols) from the non-zero entries of a matrix.

    Constant entries are stored once; only the entries that depend on the arguments are evaluated.
    """

    def __init__(self, groups, matrix: sp.Matrix):
        self.shape = matrix.shape
        entries = [(i, j, e) for (i, j), e in matrix.todok().items() if e != 0]
        self.pattern = tuple((i, j) for i, j, _ in entries)
        self.constant = {(i, j): float(e) for i, j, e in entries if e.is_number}
        varying = [(i, j, e) for i, j, e in entries if not e.is_number]
        self._index = (np.array([i for i, _, _ in varying], dtype=int), np.array([j for _, j, _ in varying], dtype=int))
        self._f = VectorFunction(groups, [e for _, _, e in varying])
        self._base = np.zeros(self.shape)
        for (i, j), v in self.constant.items():
            self._base[i, j] = v

    def outputs(self, *groups):
        """The outputs as a list, each a scalar or an array as the inputs broadcast; a group is a sequence
        whose entries may be scalars or arrays of one shape (nothing is stacked or copied)."""
        return list(self._f(*groups)) if self._f is not None else []

    def __call__(self, *args):
        shape = _sample_shape(args)
        out = np.broadcast_to(self._base, shape + self.shape).copy()
        values = self._f(*args)
        if values.size:
            out[(...,) + self._index] = np.moveaxis(values, 0, -1)
        return out


def _sample_shape(args):
    shapes = [np.shape(a)[1:] for a in args if np.ndim(a) > 1]
    return np.broadcast_shapes(*shapes) if shapes else ()
