"""numpy backend: sympy's lambdify with common-subexpression elimination, vectorised over samples.

`render(spec)` is the numpy printer of a codegen Spec (mechsym.codegen.spec): one VectorFunction per
spec function (lambdified on first use), Phi_q assembled from the spec's sparse pattern, and the spec's
elimination plan run by mechsym.codegen.sparse_numpy, with the array layouts of the C library.

Every function takes argument groups (e.g. coordinates, speeds, parameters); a group is an array whose
first axis runs over its symbols and whose other axes (if any) run over samples. Outputs carry the
sample axes last for vectors and first for matrices (ready for numpy's batched solvers).
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from mechsym.codegen.sparse_numpy import SparseLU
from mechsym.codegen.spec import Function


def _lambdify(groups, exprs):
    return sp.lambdify([list(g) for g in groups], list(exprs), modules="numpy", cse=True)


def _straight_line(groups, exprs, temporaries):
    """A numpy function of the groups printing the temporaries in order, then returning the expressions: a
    straight-line program stays one (lambdify would substitute its temporaries into one large expression)."""
    from sympy.printing.numpy import NumPyPrinter

    names = {s: sp.Symbol(f"g{k}_{i}") for k, g in enumerate(groups) for i, s in enumerate(g)}
    printer = NumPyPrinter({"fully_qualified_modules": True})
    py = lambda e: printer.doprint(sp.sympify(e).xreplace(names))
    args = [f"g{k}" for k in range(len(groups))]
    lines = [f"def f({', '.join(args)}):"]
    lines += [f"    {''.join(f'g{k}_{i}, ' for i in range(len(g)))}= g{k}" for k, g in enumerate(groups) if len(g)]
    lines += [f"    {t} = {py(e)}" for t, e in temporaries]
    lines.append(f"    return [{', '.join(py(e) for e in exprs)}]")
    namespace = {"numpy": np}
    exec("\n".join(lines), namespace)  # noqa: S102 (our own generated code)
    return namespace["f"]


class VectorFunction:
    """f(*groups) -> array (len(outputs), *sample_shape): the numpy printer's rendering of one spec Function
    (mechsym.codegen.spec), lambdified with CSE, or printed as a straight-line numpy function when it has
    temporaries. `VectorFunction(groups, exprs, temporaries)` renders the one-function spec of those
    expressions over those input groups; `render(spec)` gives one per function of a spec."""

    def __init__(self, groups, exprs, temporaries=()):
        self._render(Function("f", [(f"g{k}", tuple(g)) for k, g in enumerate(groups)], exprs, temporaries=temporaries))

    @classmethod
    def of(cls, function):
        """The rendering of the spec Function `function`."""
        self = cls.__new__(cls)
        self._render(function)
        return self

    def _render(self, function):
        self.function = function
        self.exprs = tuple(sp.sympify(e) for e in function.outputs)
        if not self.exprs:
            self._f = None
        elif function.temporaries:
            self._f = _straight_line(function.groups, self.exprs, function.temporaries)
        else:
            self._f = _lambdify(function.groups, self.exprs)

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
    """f(*groups) -> dense array (*sample_shape, rows, cols) of a matrix given by its sparsity pattern: the
    constant entries stored once, the varying ones the outputs of `values` (a VectorFunction) in the order
    of `varying`."""

    def __init__(self, shape, entries: dict, varying, values: VectorFunction):
        self.shape = tuple(shape)
        self.constant = {rc: v for rc, v in entries.items() if v is not None}
        self._index = (np.array([i for i, _ in varying], dtype=int), np.array([j for _, j in varying], dtype=int))
        self._f = values
        self._base = np.zeros(self.shape)
        for (i, j), v in self.constant.items():
            self._base[i, j] = v

    def __call__(self, *args):
        shape = _sample_shape(args)
        out = np.broadcast_to(self._base, shape + self.shape).copy()
        values = self._f(*args)
        if values.size:
            out[(...,) + self._index] = np.moveaxis(values, 0, -1)
        return out


class SolveFunction:
    """f(*groups) -> M^-1 r (n, *sample_shape), where `values` gives a symmetric n x n matrix M (row-major)
    and then r (a spec function with `solve`): by Cholesky, NaN for a sample whose M is not positive
    definite (as the C runtime's chol_solve)."""

    def __init__(self, n, values: VectorFunction):
        self.n, self._f = n, values

    def __call__(self, *args):
        n = self.n
        values = np.moveaxis(self._f(*args), 0, -1)
        M, r = values[..., :n * n].reshape(values.shape[:-1] + (n, n)), values[..., n * n:]
        try:
            x = _cholesky_solve(M, r)
        except np.linalg.LinAlgError:              # some sample is not positive definite: those are NaN
            x = np.full(r.shape, np.nan)
            for i in np.ndindex(r.shape[:-1]):
                try:
                    x[i] = _cholesky_solve(M[i], r[i])
                except np.linalg.LinAlgError:
                    pass
        return np.moveaxis(x, -1, 0)


def _cholesky_solve(M, r):
    L = np.linalg.cholesky(M)
    y = np.linalg.solve(L, r[..., None])
    return np.linalg.solve(np.swapaxes(L, -1, -2), y)[..., 0]


class Rendered:
    """The numpy rendering of a codegen Spec: an attribute per spec function (a VectorFunction, lambdified
    on first use), `jac` (Phi_q from its pattern and the function of its varying entries) and `sparse` (the
    elimination plan as a SparseLU, or None when Phi_q is not square)."""

    backend = "numpy"

    def __init__(self, spec):
        self.spec = spec
        jac = spec.jacobian
        self.sparse = SparseLU(jac.plan, list(jac.varying)) if jac is not None and jac.plan is not None else None

    def __getattr__(self, name):
        spec = self.__dict__.get("spec")
        if spec is None or (name not in spec.functions and (name != "jac" or spec.jacobian is None)):
            raise AttributeError(name)
        if name == "jac":
            jac = spec.jacobian
            value = SparseMatrixFunction((jac.rows, jac.cols), jac.entries, jac.varying, getattr(self, jac.values))
        else:
            f = spec.functions[name]
            value = VectorFunction.of(f)
            if f.solve:
                value = SolveFunction(f.solve, value)
        setattr(self, name, value)
        return value


def render(spec) -> Rendered:
    """The numpy printer of a codegen Spec (see `Rendered`)."""
    return Rendered(spec)


def _sample_shape(args):
    shapes = [np.shape(a)[1:] for a in args if np.ndim(a) > 1]
    return np.broadcast_shapes(*shapes) if shapes else ()
