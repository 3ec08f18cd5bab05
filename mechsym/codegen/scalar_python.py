"""One state of a simulation in plain Python on floats: the numpy backend's counterpart of the C library's
ms_track, for an integrator's one-state-at-a-time calls where numpy's per-call overhead dominates.

The generated function does what ms_track does (runtime/ms_kernels.h), printed from the same codegen spec
(mechsym.codegen.spec) as the C and numpy backends: Newton from a prediction with
the static sparse elimination of Phi_q (mechsym.codegen.sparse_plan; its constant pivots unrolled, the
small block in the link angles by a dense LU with partial pivoting), then J = dq/dtheta, the acceleration
offset a0 and the applied forces, each a straight-line CSE'd expression on scalars. No array is built
until the results are handed back.
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp
from sympy.printing.pycode import PythonCodePrinter



class _Printer(PythonCodePrinter):
    """Python on floats: math's functions without the module prefix, small powers as products."""

    def _print_Pow(self, expr, rational=False):
        base, exp = expr.args
        if exp.is_Integer and 2 <= int(exp) <= 4:
            b = self.parenthesize(base, 100)
            return "(" + "*".join([b] * int(exp)) + ")"
        if exp == -1:
            return f"(1.0/{self.parenthesize(base, 100)})"
        return super()._print_Pow(expr, rational)

    def _module_format(self, fqn, register=True):
        return fqn.split(".")[-1]


def _block(exprs, names, indent, out):
    """Lines computing the CSE'd expressions into the variables named `out`."""
    printer = _Printer({"standard": "python3"})
    temps, reduced = sp.cse([sp.sympify(e).xreplace(names) for e in exprs], symbols=sp.numbered_symbols("_t"),
                            order="none")
    lines = [f"{indent}{t} = {printer.doprint(v)}" for t, v in temps]
    return lines + [f"{indent}{o} = {printer.doprint(e)}" for o, e in zip(out, reduced)]


def _lu_lines(p, indent):
    """The plan's constant-pivot elimination on slot variables a{k}, then the dense block's (m{i}_{j})."""
    S, lines = p.slots, []
    for (row, col), pv, low, ups in zip(p.pivots, p.pivot_values, p.lower, p.updates):
        if pv != 1.0:
            lines += [f"{indent}a{S[(i, col)]} = a{S[(i, col)]} * {1.0 / pv!r}" for i in low]
        lines += [f"{indent}a{S[(i, j)]} -= a{S[(i, col)]} * a{S[(row, j)]}" for i, j in ups]
    r = len(p.block_rows)
    for bi, i in enumerate(p.block_rows):
        lines += [f"{indent}m{bi}_{bj} = " + (f"a{S[(i, j)]}" if (i, j) in S else "0.0") for bj, j in enumerate(p.block_cols)]
    return lines + _dense_lu_lines(r, indent)


def _dense_lu_lines(r, indent):
    """LU with partial pivoting of the block m{i}_{j}, unrolled: row k exchanged with row piv{k} (recorded)
    and `return 2, None` where no usable pivot exists (a singular configuration)."""
    lines = []
    for k in range(r):
        lines += [f"{indent}piv{k} = {k}", f"{indent}best = abs(m{k}_{k})"]
        for i in range(k + 1, r):
            lines.append(f"{indent}if abs(m{i}_{k}) > best:\n{indent}    piv{k} = {i}\n{indent}    best = abs(m{i}_{k})")
        lines.append(f"{indent}if not best > 0.0:\n{indent}    return 2, None")
        for i in range(k + 1, r):
            row_k = ", ".join(f"m{k}_{j}" for j in range(r))
            row_i = ", ".join(f"m{i}_{j}" for j in range(r))
            lines.append(f"{indent}if piv{k} == {i}:\n{indent}    {row_k}, {row_i} = {row_i}, {row_k}")
        lines.append(f"{indent}inv = 1.0 / m{k}_{k}")
        for i in range(k + 1, r):
            lines.append(f"{indent}m{i}_{k} *= inv")
            lines += [f"{indent}m{i}_{j} -= m{i}_{k} * m{k}_{j}" for j in range(k + 1, r)]
    return lines


def _dense_solve_lines(r, b, x, indent):
    """x{k} (k < r) from the block's factors and right-hand side variables b{k} (overwritten)."""
    lines = []
    for k in range(r):
        for i in range(k + 1, r):
            lines.append(f"{indent}if piv{k} == {i}:\n{indent}    {b}{k}, {b}{i} = {b}{i}, {b}{k}")
    for i in range(r):
        lines += [f"{indent}{b}{i} -= m{i}_{j} * {b}{j}" for j in range(i)]
    for i in reversed(range(r)):
        terms = "".join(f" - m{i}_{j} * {x}{j}" for j in range(i + 1, r))
        lines.append(f"{indent}{x}{i} = ({b}{i}{terms}) / m{i}_{i}")
    return lines


def _solve_lines(p, b, x, indent):
    """x{j} from Phi_q x = b with the factors in a{k} and the dense block's in m{i}_{j}, piv{k} (b is overwritten)."""
    S, lines = p.slots, []
    for (row, col), low in zip(p.pivots, p.lower):
        lines += [f"{indent}{b}{i} -= a{S[(i, col)]} * {b}{row}" for i in low]
    r = len(p.block_rows)
    if r:
        lines += [f"{indent}{b}_{k} = {b}{i}" for k, i in enumerate(p.block_rows)]
        lines += _dense_solve_lines(r, f"{b}_", f"{x}_", indent)
        lines += [f"{indent}{x}{j} = {x}_{k}" for k, j in enumerate(p.block_cols)]
    for (row, col), pv, up in reversed(list(zip(p.pivots, p.pivot_values, p.upper))):
        terms = "".join(f" - a{S[(row, j)]} * {x}{j}" for j in up)
        value = f"({b}{row}{terms})" if terms else f"{b}{row}"
        lines.append(f"{indent}{x}{col} = {value}" + ("" if pv == 1.0 else f" * {1.0 / pv!r}"))
    return lines


def source(spec) -> str:
    """The Python text of track(q, th, thd, p, scale, tol, maxit) from a codegen Spec (mechsym.codegen.spec)
    with a square Phi_q: its functions phi, jac_values, gamma and applied and its elimination plan."""
    fns, jac = spec.functions, spec.jacobian
    nq, k, npar, nj = spec.sizes["nq"], spec.sizes["nth"], spec.sizes["npar"], spec.sizes["nj"]
    entries, varying, pl = jac.entries, jac.varying, jac.plan
    values = fns[jac.values].outputs
    names = {}
    for group, prefix in (("q", "q"), ("th", "th"), ("p", "p")):
        names.update({s: sp.Symbol(f"{prefix}{i}") for i, s in enumerate(dict(fns["phi"].inputs)[group])})
    names.update({s: sp.Symbol(f"qd{i}") for i, s in enumerate(dict(fns["gamma"].inputs)["qd"])})
    S = pl.slots
    qs = ", ".join(f"q{i}" for i in range(nq))
    ind = "        "
    lines = ["def track(q, th, thd, p, scale, tol, maxit):",
             f"    {qs}, = q", f"    {''.join(f'th{i}, ' for i in range(k))}= th",
             f"    {''.join(f'p{i}, ' for i in range(npar))}= p" if npar else "",
             f"    {''.join(f's{i}, ' for i in range(nq))}= scale",
             "    for _ in range(maxit):"]
    lines += _block(list(fns["phi"].outputs) + list(values), names, ind,
                    [f"b{i}" for i in range(nq)] + [f"a{S[(i, j)]}" for i, j in varying])
    lines += [f"{ind}a{S[rc]} = {v!r}" for rc, v in entries.items() if v is not None]
    lines += [f"{ind}a{s} = 0.0" for rc, s in S.items() if rc not in entries]
    lines += _lu_lines(pl, ind)
    lines += _solve_lines(pl, "b", "x", ind)
    lines += [f"{ind}q{i} -= x{i}" for i in range(nq)]
    close = " and ".join(f"abs(x{i}) <= tol * s{i}" for i in range(nq))  # (False for a NaN)
    lines.append(f"{ind}if {close}:\n{ind}    break")
    lines.append("    else:\n        return 1, None")
    # the factorisation at the solution (as ms_track: J, a0 and the caller's solves use it)
    ind = "    "
    lines += _block(list(values), names, ind, [f"a{S[(i, j)]}" for i, j in varying])
    lines += [f"{ind}a{S[rc]} = {v!r}" for rc, v in entries.items() if v is not None]
    lines += [f"{ind}a{s} = 0.0" for rc, s in S.items() if rc not in entries]
    lines += _lu_lines(pl, ind)
    for j in range(k):
        lines += [f"{ind}e{i} = {1.0 if i == nj + j else 0.0}" for i in range(nq)]
        lines += _solve_lines(pl, "e", f"j{j}_", ind)
    lines += [f"{ind}qd{i} = " + " + ".join(f"j{j}_{i} * thd[{j}]" for j in range(k)) for i in range(nq)]
    lines += _block([-g for g in fns["gamma"].outputs] + list(fns["applied"].outputs), names, ind,
                    [f"g{i}" for i in range(nq)] + [f"f{i}" for i in range(nq)])
    lines += _solve_lines(pl, "g", "c", ind)
    jq = ", ".join("(" + "".join(f"j{j}_{i}, " for j in range(k)) + ")" for i in range(nq))
    lines.append(f"{ind}return 0, (({qs}), ({jq}), ({', '.join(f'c{i}' for i in range(nq))}), "
                 f"({', '.join(f'f{i}' for i in range(nq))}))")
    return "\n".join(line for line in lines if line) + "\n"


class ScalarTracker:
    """The numpy backend's one-state step with the C library's interface (tracker, walker, track_rows), for
    mechsym.planar.tracking.CompiledTracker: tracker(params, col_scale, tol) -> track(q, theta, thetad) ->
    (status, q, J (nq, k), a0, applied, factor = None), and track.raw the same on floats."""

    backend = "numpy"

    def __init__(self, spec):
        namespace = {}
        namespace.update({n: getattr(math, n) for n in dir(math) if not n.startswith("_")})
        exec(source(spec), namespace)  # noqa: S102 (our own generated code)
        self._track = namespace["track"]
        self.nq, self.nth = spec.sizes["nq"], spec.sizes["nth"]

    def tracker(self, params, col_scale, tol, maxit=30):
        """As CLibrary.tracker; the factorisation is not handed back (None)."""
        p, scale, track = tuple(map(float, params)), tuple(map(float, col_scale)), self._track
        tol, maxit = float(tol), int(maxit)

        def raw(q0, theta, thetad):
            """(status, (q, J, a0, applied) as tuples of floats, or None) from lists of floats."""
            try:
                return track(q0, theta, thetad, p, scale, tol, maxit)
            except (ZeroDivisionError, OverflowError, ValueError):  # a singular or wild trial state
                return 2, None

        def run(q0, theta, thetad):
            status, out = raw(q0.tolist(), np.ravel(theta).tolist(), np.ravel(thetad).tolist())
            if status:
                return status, q0, None, None, None, None
            q, jq, a0, app = out
            return 0, np.array(q), np.array(jq), np.array(a0), np.array(app), None

        run.raw = raw
        return run

    def walker(self, params, col_scale, tol, hmax, maxit=30):
        """None: no walk on floats (CLibrary.walker continues to a state in C); a state that one Newton solve
        cannot settle goes to the careful numpy route (mechsym.planar.tracking.ConfigurationTracker)."""
        return None

    def track_rows(self, params, col_scale, tol, rows, maxit=30):
        """None: no row entry on floats (CLibrary.track_rows); the tracker's `state` answers instead."""
        return None

