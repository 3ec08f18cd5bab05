"""The equations of a spatial closed-loop mechanism (mechsym.spatial.loops.LoopSystem) as text or LaTeX, what
`mechsym equations MODEL [--latex]` prints:

  closure rows    phi_r(q) = 0, one per row of the closing joints (mechsym.spatial.joints: `closure_rows`)
  A U = C         sum_r J_ri lambda_r + sum_k D_ki tau_k = C_i(q, v, a), one row per speed i: A = [J^T D^T]
                  (D the drives' rows: a driven tree coordinate's unit row, a driven closure's row),
                  U = [lambda; tau], C = H(q) a + bias(q, v) (the tree's inverse dynamics, gravity included)

written over the straight-line program of the tree's derivation (mechsym.spatial.derive): its temporaries
x0, x1, ... come first, each over the coordinates, speeds, accelerations, parameters and the temporaries
before it (H is never expanded: the recursions' structure). Every name is a plain identifier (q_J1, v_J1,
a_J1, the parameters' names, lambda_J6_along0, the driven force's name), so that the text form is read back
by sympy as it stands (tests/test_spatial_loops_cli.py evaluates it against the generated functions).
"""
from __future__ import annotations

import re

import sympy as sp

from mechsym.codegen.spec import shared_program
from mechsym.spatial.derive import Derivation
from mechsym.spatial.loops import loop_spec_items

__all__ = ["LoopEquations"]


def _identifier(prefix, name):
    """prefix_name with every character that is not a letter, a digit or _ made _ (A.qx: q_A_qx)."""
    return f"{prefix}_{re.sub(r'[^0-9A-Za-z_]', '_', name)}" if prefix else re.sub(r"[^0-9A-Za-z_]", "_", name)


class LoopEquations:
    """The closure rows and A U = C of a LoopSystem as sympy expressions over named symbols: `temporaries`
    [(symbol, expression)], `phi` (rows), `A` (nv x unknowns), `unknowns` (symbols), `C` (nv)."""

    def __init__(self, system):
        tree = system.declaration
        d = Derivation(tree)
        items = loop_spec_items(d, tree)
        m, n = system.nrows, system.nv
        closure = items[0][1]
        rnea = d.rnea(d.v, d.a)
        driven = {name: out for name, out, _ in items}.get("drives", [])   # per driven closure: value, its row (nv), gamma, axis (3)
        rows = [driven[j * (n + 5) + 1:j * (n + 5) + 1 + n] for j in range(len(system.closure_driven))]
        functions = shared_program([("equations", [], list(closure[:m + m * n]) + list(rnea) + sum(rows, []), "",
                                     0)], d.s.assignments, "x", d.s.pieces)
        f = functions["equations"]
        names = {}
        for sym, name in zip(d.q, system.coordinate_names):
            names[sym] = sp.Symbol(_identifier("q", name), real=True)
        for group, prefix in ((d.v, "v"), (d.a, "a")):
            for sym, name in zip(group, system.speed_names):
                names[sym] = sp.Symbol(_identifier(prefix, name), real=True)
        for name, sym in d.p.items():
            names[sym] = sp.Symbol(_identifier("", name), real=True)
        self.names = names
        self.tex = {names[sym]: rf"{prefix}_{{\mathrm{{{name}}}}}"
                    for group, prefix, labels in ((d.q, "q", system.coordinate_names), (d.v, "v", system.speed_names),
                                                  (d.a, "a", system.speed_names))
                    for sym, name in zip(group, labels)}
        self.temporaries = [(t, e.xreplace(names)) for t, e in f.temporaries]
        out = [e.xreplace(names) for e in f.outputs]
        self.phi = out[:m]
        J = sp.Matrix(m, n, out[m:m + m * n])
        self.lam = [sp.Symbol(_identifier("lambda", r), real=True) for r in system.row_names]
        self.tex.update({lam: rf"\lambda_{{\mathrm{{{r}}}}}" for lam, r in zip(self.lam, system.row_names)})
        self.tau = [sp.Symbol(_identifier("", f), real=True) for f in system.force_names]
        E = sp.zeros(n, len(self.tau))
        for k, iv in zip(system.tree_driven, system.drive_v):
            E[iv, k] = 1
        for j, k in enumerate(system.closure_driven):     # a driven closure's force acts through its row
            E[:, k] = sp.Matrix(out[m + m * n + n + j * n:m + m * n + n + (j + 1) * n])
        self.A = J.T.row_join(E)
        self.unknowns = self.lam + self.tau
        self.C = out[m + m * n:m + m * n + n]
        self.row_names, self.speed_names = system.row_names, system.speed_names
        self.name = system.name

    def text(self) -> str:
        """Plain text that sympy reads back: `x = expr` lines, `[ROW] phi = 0`, `[SPEED] lhs = rhs`."""
        A, u = self.A, self.unknowns
        out = [f"closed-loop mechanism '{self.name}': {len(self.phi)} closure rows phi(q) = 0; A U = C with "
               f"A = [J^T D^T] ({A.shape[0]} speeds x {A.shape[1]} unknowns; D the drives' rows), "
               f"C = H(q) a + bias(q, v)",
               "U = " + ", ".join(map(str, u)),
               "# temporaries"]
        out += [f"{t} = {sp.sstr(e)}" for t, e in self.temporaries]
        out.append("# closure rows")
        out += [f"[{r}] {sp.sstr(e)} = 0" for r, e in zip(self.row_names, self.phi)]
        out.append("# A U = C")
        for i, name in enumerate(self.speed_names):
            terms = [f"({sp.sstr(A[i, j])})*{u[j]}" for j in range(A.shape[1]) if A[i, j] != 0]
            out.append(f"[{name}] {' + '.join(terms) or '0'} = {sp.sstr(self.C[i])}")
        return "\n".join(out)

    def latex(self) -> str:
        """The same as LaTeX: one aligned block of the temporaries, the closure rows and the rows of A U = C."""
        A, u = self.A, self.unknowns
        tex = lambda e: sp.latex(e, symbol_names=self.tex)
        lines = [rf"{tex(t)} &= {tex(e)}" for t, e in self.temporaries]
        lines += [rf"0 &= {tex(e)} && \text{{{r}}}" for r, e in zip(self.row_names, self.phi)]
        for i, name in enumerate(self.speed_names):
            lhs = sp.Add(*[A[i, j] * u[j] for j in range(A.shape[1])])
            lines.append(rf"{tex(lhs)} &= {tex(self.C[i])} && \text{{{name}}}")
        return ("% closure rows phi(q) = 0 and A U = C (A = [J^T D^T], U = [lambda; tau], C = H(q) a + bias(q, v)), "
                f"mechanism '{self.name}'\n\\begin{{aligned}}\n" + " \\\\\n".join(lines) + "\n\\end{aligned}")
