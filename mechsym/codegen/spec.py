"""The codegen spec: what generated code computes, independent of any backend.

For a derived planar System, `mechsym.planar.spec.generate(system)` returns a `Spec`: named `Function`s (named input groups of symbols, output
expressions) and the `SparseJacobian` of Phi_q (its pattern, the varying entries as the function
`jac_values`, and the static elimination plan of mechsym.codegen.sparse_plan). Each backend is a
printer of the same spec:

- numpy (`mechsym.codegen.numpy_backend.render`): each function lambdified with CSE over sample arrays
  (on first use), Phi_q assembled from the pattern, the plan run by mechsym.codegen.sparse_numpy;
- Python on floats (`mechsym.codegen.scalar_python`): the one-state tracker, each function a CSE'd
  straight-line block, the plan unrolled;
- C (`mechsym.codegen.c_source.render`): each function a CSE'd C function (sharing the sines and cosines
  of the body angles), the plan unrolled, and the C runtime (mechsym/codegen/runtime) around them;
  `c_source.render_straight` for a spec of straight-line functions (a Program's, a tree's, any other).

A spec need not come from a mechanism: `mechsym.codegen.program.Program.spec()` gives one, a spatial tree
gives one per group of functions (`mechsym.spatial.system.TreeSystem.spec`, built by `shared_program` from
its recursions' straight-line program), and `mechsym.codegen.callables.load` turns any spec into callables
on either backend.

So every backend evaluates the same expressions and the same elimination. The runtime algorithms that
loop sample after sample (ms_inverse's continuation, ms_ode, ms_forward's DOP853, ms_track) exist in C
only: on numpy the same jobs are done by vectorised numpy (mechsym.planar.solver.Solver's two-pass sweep,
scipy's DOP853 with the same coefficients and error control) or by the scalar tracker, since a
per-sample loop in Python would be the slow path numpy is there to avoid.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import sympy as sp

from mechsym.codegen.sparse_plan import Plan

__all__ = ["Function", "SparseJacobian", "Spec", "check", "shared_program", "flops", "SHARED"]

# input groups by these names are one vector shared by every sample (the run-time parameters): a printer
# evaluates what depends on them alone once per call, not once per sample
SHARED = ("p",)


class Function:
    """out[i] = outputs[i], a function of named input groups ((name, symbols), ...). `outputs` may be given
    as a callable that derives them on first use (gamma3 is a further differentiation that only some
    analyses need, and the numpy printer renders a function only when it is called). `temporaries` are
    straight-line assignments (symbol, expression), each over the inputs and the temporaries before it,
    printed in order before the outputs (a Program's shared intermediate values); without them a printer
    eliminates common subexpressions itself. With `solve` = n the outputs are a symmetric n x n matrix M
    (row-major) and then n values r, and the function's value is M^-1 r by Cholesky, NaN where M is not
    positive definite (a tree's forward dynamics, H qdd = tau - bias). `pieces`, if given, are for each
    temporary (piece, index) in the program it comes from: a printer may print each piece as a function of
    its own (mechsym.codegen.c_parts)."""

    def __init__(self, name: str, inputs, outputs, doc: str = "", temporaries=(), solve: int = 0, pieces=()):
        self.name, self.inputs, self.doc = name, tuple(inputs), doc
        self.temporaries = tuple(temporaries)
        self.solve = int(solve)
        self.pieces = tuple(pieces)
        self._outputs = outputs

    @cached_property
    def outputs(self) -> tuple:
        """The output expressions, in order."""
        return tuple(self._outputs() if callable(self._outputs) else self._outputs)

    @property
    def groups(self) -> tuple:
        """The symbols of each input group, in order (the positional arguments of a rendered function)."""
        return tuple(symbols for _, symbols in self.inputs)

    @property
    def size(self) -> int:
        """The number of values the function returns per sample."""
        return self.solve or len(self.outputs)

    def shared_temporaries(self) -> tuple:
        """(the temporaries over the shared input groups alone, the others), each in order: a printer
        computes the first once per call."""
        return self._split

    @cached_property
    def _split(self) -> tuple:
        known = {s for g, symbols in self.inputs if g in SHARED for s in symbols}
        head, body = [], []
        for t, e in self.temporaries:
            if sp.sympify(e).free_symbols <= known:
                known.add(t)
                head.append((t, e))
            else:
                body.append((t, e))
        return tuple(head), tuple(body)

    def __repr__(self):
        return f"Function({self.name!r}, inputs={[n for n, _ in self.inputs]})"


@dataclass(frozen=True)
class SparseJacobian:
    """Phi_q (rows x cols): `entries` maps (row, col) to a float (constant) or None (varying); the varying
    entries' values are the outputs of the function `values` in the order of `varying`; `plan` is the
    static elimination (None unless Phi_q is square)."""

    rows: int
    cols: int
    entries: dict
    varying: tuple
    values: str
    plan: Plan | None


@dataclass(frozen=True)
class Spec:
    """Everything a backend prints: sizes, functions (name -> Function, in print order), a sparse Jacobian
    (of Phi_q for a mechanism, of the rates for a Program; or None), and the indices of the first input
    group that are body angles (whose sines and cosines a printer may compute once per configuration)."""

    name: str
    sizes: dict
    functions: dict
    jacobian: SparseJacobian | None
    angles: tuple = field(default=())
    lanes: tuple = ()      # the functions whose compiled batched entry points evaluate blocks of samples on SIMD lanes


def shared_program(items, assignments, prefix="x", pieces=None) -> dict:
    """Functions over one straight-line program: `assignments` (symbol, expression), each over the inputs
    and the symbols before it; `items` (name, inputs, outputs, doc, solve) whose outputs use them. Each
    function gets the temporaries its outputs need, in program order; the temporaries any output needs are
    renamed prefix0, prefix1, ... in that order and the rest left out, so that the printed code does not
    depend on assignments no output uses. `pieces` (one number per assignment, non-decreasing: a tree's
    recursions body by body) become the functions' `pieces`. (The order of the program itself is the caller's: a spatial tree
    derives each group of functions into a program of its own, since its derivation caches shared
    quantities and would write them where the first group to need them asked.)"""
    index = {t: e for t, e in assignments}
    operands = {}

    def needed(outputs):
        need, stack = set(), [s for e in outputs for s in sp.sympify(e).free_symbols if s in index]
        while stack:
            t = stack.pop()
            if t not in need:
                need.add(t)
                if t not in operands:
                    operands[t] = [s for s in sp.sympify(index[t]).free_symbols if s in index]
                stack.extend(operands[t])
        return need

    per_function = [needed(outputs) for _, _, outputs, _, _ in items]
    reached = set().union(*per_function)
    order = [t for t, _ in assignments if t in reached]
    rename = {t: sp.Symbol(f"{prefix}{n}", real=True) for n, t in enumerate(order)}
    program = {t: (rename[t], sp.sympify(index[t]).xreplace(rename)) for t in order}
    piece = None
    if pieces is not None:
        of = {t: p for (t, _), p in zip(assignments, pieces)}
        piece = {t: (of[t], n) for n, t in enumerate(order)}
    functions = {}
    for (fname, inputs, outputs, doc, solve), need in zip(items, per_function):
        outputs = [sp.sympify(e).xreplace(rename) for e in outputs]
        mine = [t for t in order if t in need]
        functions[fname] = Function(fname, inputs, outputs, doc, [program[t] for t in mine], solve,
                                    [piece[t] for t in mine] if piece is not None else ())
    return functions


def flops(spec: Spec) -> dict:
    """name -> arithmetic operations per sample of each function as printed (each operation and function
    call counts one; the temporaries over shared inputs, computed once per call, are left out)."""
    counted = {}

    def ops(e):
        if e not in counted:
            counted[e] = sp.count_ops(e, visual=False)
        return counted[e]

    out = {}
    for name, f in spec.functions.items():
        _, body = f.shared_temporaries()
        out[name] = int(sum(ops(e) for _, e in body) + sum(ops(sp.sympify(e)) for e in f.outputs))
    return out


def check(spec: Spec):
    """Raise ValueError unless every output of every function depends only on its inputs' symbols and its
    temporaries defined before (a spec a printer can render without knowing where it came from); the C
    printers check before printing, so that a stray symbol is named here, not by the C compiler."""
    for f in spec.functions.values():
        known = {s for _, symbols in f.inputs for s in symbols}
        for t, e in f.temporaries:
            stray = sp.sympify(e).free_symbols - known
            if stray:
                raise ValueError(f"spec function '{f.name}': temporary {t} uses {sorted(map(str, stray))} before "
                                 "they are defined")
            known.add(t)
        for e in f.outputs:
            stray = sp.sympify(e).free_symbols - known
            if stray:
                raise ValueError(f"spec function '{f.name}': outputs use {sorted(map(str, stray))}, not among its inputs")
