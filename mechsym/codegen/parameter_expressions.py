"""Expressions of a mechanism's parameters as numpy source text, evaluated without sympy: the points'
coordinates in their bodies' frames, from which each parameter set's size (and so its coordinates'
scales) follows. The sweep's compiled route evaluates them for every set at once, and a sweep worker's warm
start (mechsym.studies.sweep_warm) evaluates the text held in its manifest, without loading sympy."""
from __future__ import annotations

import functools

import numpy as np


def numpy_sources(expressions, parameters) -> tuple:
    """Each sympy expression of `expressions` as numpy source text in p[i], the i-th symbol of `parameters`
    (for `expression_values`)."""
    import sympy as sp
    from sympy.printing.numpy import NumPyPrinter

    p = sp.IndexedBase("p")
    to_p = {symbol: p[i] for i, symbol in enumerate(parameters)}
    printer = NumPyPrinter()
    return tuple(printer.doprint(sp.sympify(e).xreplace(to_p)) for e in expressions)


@functools.lru_cache(maxsize=64)
def _compiled(sources: tuple) -> list:
    return [compile(src, "<parameter expression>", "eval") for src in sources]


def expression_values(sources, params):
    """The values (len(sources), S) of numpy expressions of the parameters, each written in p[i] (the i-th
    parameter, in declaration order, as `numpy_sources` prints them), at the parameter sets
    params (S, npar): what a sweep worker evaluates without sympy."""
    p = np.asarray(params, float).T
    out = np.empty((len(sources), p.shape[1] if p.ndim == 2 else 1))
    for k, code in enumerate(_compiled(tuple(sources))):
        out[k] = eval(code, {"numpy": np, "__builtins__": {}}, {"p": p})
    return out


def size_scales(sources, params):
    """The size of a planar mechanism at each parameter set of params (S, npar): the largest |coordinate|
    of any point in its body's frame (`sources`, expressions of the parameters), 1 where every point is at
    its frame's origin. Every tolerance and step on lengths is relative to it."""
    if not sources:
        return np.ones(len(params))
    size = np.abs(expression_values(sources, params)).max(axis=0)
    return np.where(size > 0, size, 1.0)


def coordinate_scales(angle, length, size) -> tuple:
    """(col_scale (..., n), coord_scale (..., k)) for mechanisms of size(s) `size`: each coordinate's scale
    (an angle's 1, a position's the size; `angle` marks the angles) and each driven coordinate's (a length's
    is the size; `length` marks them)."""
    size = np.asarray(size, float)[..., None]
    return np.where(angle, 1.0, size), np.where(length, size, 1.0)
