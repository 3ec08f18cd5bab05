"""Wheels rolling on a track: the contact force and quasi-static equilibrium in closed form.

A `RollingContact` is a wheel (a circle of radius r about a named point of a body) touching a track curve
of the fixed body (mechsym.planar.track). At the contact, with beta the track's slope angle there,

    t = (cos beta, sin beta),  n = (-sin beta, cos beta),  contact point P = centre - r n,

and the ground exerts F t + N n on the wheel at P: F the friction (traction) force along the track, N the
normal force. Its generalised force on the wheel's coordinates (x, y of the centre of mass, angle) is
(f_x, f_y, (P - com) x f): for a wheel whose centre of mass is at its centre the moment is r F.

`ContactStatics` writes the quasi-static Newton-Euler rows of every moving body exactly as the dynamics
does (mechsym.planar.constraints, mechsym.planar.equations: joint reactions and coordinate forces as the gradient
columns of the constraint rows, gravity and loads as applied forces), adds the contact columns, and lets
`ties` (rows linear in the unknowns, = 0) close the system, e.g. two motor torques tied equal. It then
eliminates in closed form, once, symbolically: pivots on the constant (+-1) entries first (the pin
reactions and coordinate forces, which sums the bodies into subsystems), then Cramer's rule on the small
dense block that is left. The resulting expressions are compiled with mechsym.codegen.VectorFunction
(common subexpressions shared), so a solve costs a few hundred floating-point operations per sample, vectorised, no LAPACK.
Their exact partial derivatives by the body angles and contact angles (for gradient-based optimisation)
are compiled the same way (`forward_derivatives`). Where the wheels stand on the track is
mechsym.planar.wheels'.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sp

from mechsym.codegen import VectorFunction
from mechsym.core.errors import InputError, ModelError, SingularError
from mechsym.planar.constraints import cross2, derive_constraints, point_position
from mechsym.planar.equations import derive_equations
from mechsym.planar.model import Mechanism


@dataclass(frozen=True)
class RollingContact:
    """Wheel `body` (circle of `radius` about its point `centre`) on a track of the fixed body.

    `friction` and `normal` name the unknown ground-force components F (along t) and N (along n)."""

    name: str
    body: str
    centre: str
    radius: sp.Expr
    friction: str
    normal: str

    @property
    def angle(self) -> sp.Symbol:
        """The symbol of the track's slope angle at this contact (an input of the compiled solution)."""
        return sp.Symbol(f"beta_{self.name}", real=True)

    def generalised_force(self, mech: Mechanism, poses) -> tuple:
        """Columns (3 rows: x, y, moment about the com) of F and of N on the wheel's coordinates."""
        b = self.angle
        t = sp.Matrix([sp.cos(b), sp.sin(b)])
        n = sp.Matrix([-sp.sin(b), sp.cos(b)])
        centre = point_position(mech, poses, self.body, self.centre)
        x, y, _ = poses[self.body]
        arm = centre - self.radius * n - sp.Matrix([x, y])
        col_f = (t[0], t[1], sp.simplify(cross2(arm, t)))
        col_n = (n[0], n[1], sp.simplify(cross2(arm, n)))
        return col_f, col_n


class ContactStatics:
    """Quasi-static equilibrium of a mechanism held by rolling contacts, derived from the per-body rows.

    Unknowns: every joint reaction, the force of every generalised coordinate (all motions imposed), and
    the F, N of every contact. Rows: three per moving body, plus `ties` ((name, expression) pairs linear in
    the unknowns, equal to zero; unknowns written as symbols named like `unknowns`). The system must be
    square. `solve(q, beta, params)` returns name -> array for the requested unknowns.
    """

    def __init__(self, mech: Mechanism, contacts, ties=()):
        mech.check()
        self.mechanism, self.contacts, self.ties = mech, tuple(contacts), tuple(ties)
        self._check_contacts()
        self.constraints = con = derive_constraints(mech, None)
        self.equations = eqs = derive_equations(con)
        reactions = list(con.reaction_names)
        forces = [c.force for c in mech.coordinates]
        problems = [f"coordinate '{c.name}' has no force: its motion cannot be imposed"
                    for c in mech.coordinates if c.force is None]
        if problems:
            raise InputError(f"mechanism '{mech.name}': " + "; ".join(problems))
        contact_names = [n for c in self.contacts for n in (c.friction, c.normal)]
        self.unknowns = tuple(reactions + forces + contact_names)
        if len(set(self.unknowns)) != len(self.unknowns):
            raise InputError(f"mechanism '{mech.name}': unknown names repeat: {self.unknowns}")
        jac_t = con.jacobian.T
        columns = [jac_t[:, i] for i in range(jac_t.shape[1])]
        index = {b: i for i, b in enumerate(con.bodies)}
        for c in self.contacts:
            i = 3 * index[c.body]
            for col in c.generalised_force(mech, con.poses):
                full = sp.zeros(con.n, 1)
                full[i:i + 3, 0] = sp.Matrix(col)
                columns.append(full)
        a = sp.Matrix.hstack(*columns)
        rhs = -sp.Matrix(eqs.applied)  # quasi-static: sum of unknown forces = -applied
        symbols = [sp.Symbol(n, real=True) for n in self.unknowns]
        tie_rows, tie_rhs = [], []
        for name, expr in self.ties:
            expr = sp.sympify(expr)
            coeffs = [sp.diff(expr, s) for s in symbols]
            if any(s in cf.free_symbols for cf in coeffs for s in symbols):
                raise InputError(f"tie '{name}' is not linear in the unknowns")
            tie_rows.append(coeffs)
            tie_rhs.append(-expr.subs({s: 0 for s in symbols}))
        if tie_rows:
            a = a.col_join(sp.Matrix(tie_rows))
            rhs = rhs.col_join(sp.Matrix(tie_rhs))
        self.row_names = tuple(eqs.row_names) + tuple(n for n, _ in self.ties)
        if a.shape[0] != a.shape[1]:
            raise InputError(
                f"mechanism '{mech.name}': {a.shape[1]} unknowns ({', '.join(self.unknowns)}) for {a.shape[0]} "
                "equilibrium rows; add ties (or contacts) until the system is square")
        self.A, self.C = a, rhs
        self.betas = tuple(c.angle for c in self.contacts)
        self._solution = None
        self._compiled = {}

    def _check_contacts(self):
        mech = self.mechanism
        problems = []
        for c in self.contacts:
            if c.body not in mech.bodies or c.body == mech.fixed:
                problems.append(f"contact '{c.name}' names '{c.body}', not a moving body")
            elif c.centre not in mech.bodies[c.body].points:
                problems.append(f"contact '{c.name}' names unknown point '{c.centre}' of body '{c.body}'")
        if problems:
            raise ModelError(mech.name, problems)
        # every moving body must reach the fixed body or a contact wheel through joints
        adjacency = {b: set() for b in mech.bodies}
        for j in mech.joints.values():
            adjacency[j.body1].add(j.body2)
            adjacency[j.body2].add(j.body1)
        for c in self.contacts:
            adjacency[mech.fixed].add(c.body)
            adjacency[c.body].add(mech.fixed)
        seen, stack = {mech.fixed}, [mech.fixed]
        while stack:
            for other in adjacency[stack.pop()] - seen:
                seen.add(other)
                stack.append(other)
        loose = [b for b in mech.bodies if b not in seen]
        if loose:
            raise ModelError(mech.name, [f"body '{b}' is held neither by a joint nor by a contact" for b in loose])

    # -- closed form --------------------------------------------------------------------------------
    @property
    def solution(self) -> dict:
        """name -> sympy expression of every unknown in q, the contact angles and the parameters."""
        if self._solution is None:
            positive = {p.symbol for p in self.mechanism.parameters.values() if p.positive}
            values = eliminate(self.A, self.C, positive)
            self._solution = dict(zip(self.unknowns, values))
        return self._solution

    def compile(self, names=None, values=None, wrt=()):
        """A compiled function (mechsym.codegen.VectorFunction) of the unknowns `names` (default all).

        Without `values`: f(q, beta, params) -> array (one row per output), q the body coordinates in the order of
        `constraints.q`, beta the contact angles, params in declaration order. With `values` (parameter values
        in declaration order) they are substituted first, so constants fold: f(q, beta). With `wrt` (symbols
        among q and the contact angles) the list goes on with the exact partial derivatives, name by name,
        each by every symbol of `wrt` (symbolic: `forward_derivatives`)."""
        names, wrt = tuple(names or self.unknowns), tuple(wrt)
        key = (names, None if values is None else tuple(float(v) for v in values), wrt)
        if key not in self._compiled:
            missing = [n for n in names if n not in self.unknowns]
            if missing:
                raise InputError(f"unknown(s) {missing}: the equilibrium unknowns are {self.unknowns}")
            con = self.constraints
            stray = [str(w) for w in wrt if w not in set(con.q) | set(self.betas)]
            if stray:
                raise InputError(f"derivatives by {stray}: only by the body coordinates and the contact angles")
            exprs = [self.solution[n] for n in names]
            args = [list(con.q), list(self.betas)]
            if values is None:
                args.append(list(con.params))
            else:
                subs = dict(zip(con.params, (sp.Float(v) for v in key[1])))
                exprs = [e.xreplace(subs) for e in exprs]
            temporaries = ()
            if wrt:
                temporaries, exprs = forward_derivatives(exprs, wrt)
            self._compiled[key] = VectorFunction(args, exprs, temporaries)
        return self._compiled[key]

    def solve(self, q, beta, values, names=None, chunk=16384, wrt=()) -> dict:
        """The unknowns `names` at samples: q a sequence of the n body coordinates and beta of the contact
        angles, each an array (or a scalar; all broadcast together); values the parameter values. Evaluated
        in chunks of `chunk` samples (cache-sized arrays). With `wrt` (symbols among q and the contact angles)
        the result also holds the exact partial derivatives, under the keys (name, symbol)."""
        names, wrt = tuple(names or self.unknowns), tuple(wrt)
        f = self.compile(names, values, wrt)
        keys = list(names) + [(n, w) for n in names for w in wrt]
        q, beta = [np.asarray(v, float) for v in q], [np.asarray(v, float) for v in beta]
        shape = np.broadcast_shapes(*(v.shape for v in q + beta))
        size = int(np.prod(shape))
        flat = lambda v: v.ravel() if v.ndim == 0 or v.shape == shape else np.broadcast_to(v, shape).ravel()  # noqa: E731
        q = [v if v.ndim == 0 else flat(v) for v in q]
        beta = [v if v.ndim == 0 else flat(v) for v in beta]
        out = np.empty((len(keys), size))
        for lo in range(0, max(size, 1), chunk):
            sl = slice(lo, lo + chunk)
            part = f.outputs([v if v.ndim == 0 else v[sl] for v in q], [v if v.ndim == 0 else v[sl] for v in beta])
            for k, v in enumerate(part):
                out[k, sl] = v
        bad = ~np.all(np.isfinite(out), axis=0)
        if bad.any():
            i = int(np.argmax(bad))
            angles = ", ".join(f"{b} = {float(np.ravel(v)[i] if v.ndim else v):.6g}" for b, v in zip(self.betas, beta))
            raise SingularError(f"mechanism '{self.mechanism.name}': the equilibrium is singular at sample {i} "
                                f"({angles}): the contacts cannot hold the mechanism there")
        return {n: out[k].reshape(shape) for k, n in enumerate(keys)}

    def equations_text(self, latex=False) -> str:
        """The equilibrium rows A U = C (one per body coordinate, then the ties), as text or LaTeX."""
        u = [sp.Symbol(n) for n in self.unknowns]
        if latex:
            return (r"% rows: " + ", ".join(self.row_names) + "\n" + sp.latex(self.A) + sp.latex(sp.Matrix(u))
                    + " = " + sp.latex(self.C))
        out = [f"quasi-static equilibrium of '{self.mechanism.name}': {self.A.shape[0]} rows x {self.A.shape[1]} unknowns",
               "U = " + ", ".join(self.unknowns),
               "contact angles: " + ", ".join(str(b) for b in self.betas)]
        for i, name in enumerate(self.row_names):
            terms = [f"({sp.sstr(self.A[i, j])})*{u[j]}" for j in range(self.A.shape[1]) if self.A[i, j] != 0]
            out.append(f"[{name}] " + " + ".join(terms) + f" = {sp.sstr(self.C[i])}")
        return "\n".join(out)

    def matrices(self):
        """Numeric A(q, beta, params) and C as functions (for checks: the residual of the full system)."""
        con = self.constraints
        args = [list(con.q), list(self.betas), list(con.params)]
        def matrix(m):
            f = VectorFunction(args, list(m))

            def evaluate(*groups):
                out = f(*groups)
                return out.reshape(m.shape + out.shape[1:])

            return evaluate

        return matrix(self.A), matrix(self.C)


def eliminate(a: sp.Matrix, c: sp.Matrix, positive=()) -> list:
    """Solve the square symbolic system a u = c in closed form: Gaussian elimination with pivots that
    cannot vanish first, fewest fill-ins first (numbers, then products of the `positive` symbols: a wheel
    radius, a mass), then Cramer's rule on the remaining dense block (or sympy's LU when that block is
    larger than 4). Returns the expression of every unknown."""
    positive = set(positive)

    def safe(v):
        if v.is_number:
            return 0 if v != 0 else None
        factors = v.as_ordered_factors()
        if all(f.is_number or f in positive or (f.is_Pow and f.base in positive and f.exp.is_number) for f in factors):
            return 1
        return None

    n = a.shape[0]
    rows = [{j: a[i, j] for j in range(n) if a[i, j] != 0} for i in range(n)]
    rhs = [c[i] for i in range(n)]
    live_rows, live_cols = set(range(n)), set(range(n))
    pivots = []  # (row, col) in elimination order
    while True:
        best = None
        col_count = {j: 0 for j in live_cols}
        for i in live_rows:
            for j in rows[i]:
                col_count[j] += 1
        for i in live_rows:
            for j, v in rows[i].items():
                kind = safe(v)
                if kind is not None:
                    cost = (kind, (len(rows[i]) - 1) * (col_count[j] - 1), -abs(float(v)) if v.is_number else 0.0)
                    if best is None or cost < best[0]:
                        best = (cost, i, j)
        if best is None:
            break
        _, i, j = best
        p = rows[i][j]
        for k in list(live_rows):
            if k == i or j not in rows[k]:
                continue
            factor = rows[k][j] / p
            for col, v in rows[i].items():
                value = rows[k].get(col, 0) - factor * v
                if value == 0:
                    rows[k].pop(col, None)
                else:
                    rows[k][col] = value
            rows[k].pop(j, None)
            rhs[k] = rhs[k] - factor * rhs[i]
        pivots.append((i, j))
        live_rows.discard(i)
        live_cols.discard(j)
    solution = {}
    block_rows, block_cols = sorted(live_rows), sorted(live_cols)
    if block_rows:
        m = sp.Matrix([[rows[i].get(j, 0) for j in block_cols] for i in block_rows])
        b = sp.Matrix([rhs[i] for i in block_rows])
        if len(block_rows) <= 4:
            det = m.det(method="berkowitz")
            if det == 0:
                raise InputError("the equilibrium system is singular for every configuration")
            for k, j in enumerate(block_cols):
                mk = m.copy()
                mk[:, k] = b
                solution[j] = mk.det(method="berkowitz") / det
        else:
            for j, v in zip(block_cols, m.LUsolve(b)):
                solution[j] = v
    for i, j in reversed(pivots):
        rest = sum((v * solution[col] for col, v in rows[i].items() if col != j), sp.Integer(0))
        solution[j] = (rhs[i] - rest) / rows[i][j]
    return [solution[j] for j in range(n)]


def forward_derivatives(exprs, wrt):
    """Exact derivatives of `exprs` by the symbols `wrt`, symbolically in forward mode: common subexpressions
    first (sympy's cse), then the chain rule through them, so that the derivatives share the values' work
    (much cheaper to build than differentiating each expanded expression). Returns (replacements, outputs):
    the replacements to evaluate in order, then the expressions and after them their derivatives, expression
    by expression, each by every symbol of `wrt`."""
    replacements, reduced = sp.cse(list(exprs))
    partials = {}  # subexpression symbol -> its derivatives by wrt (0 where independent)
    out = []

    def chain(e):
        result = [sp.Integer(0)] * len(wrt)
        for s in e.free_symbols:
            rates = [int(s == w) for w in wrt] if s in wrt else partials.get(s)
            if rates is None or not any(r != 0 for r in rates):
                continue
            ds = sp.diff(e, s)
            result = [total + ds * r if r != 0 else total for total, r in zip(result, rates)]
        return result

    for s, e in replacements:
        out.append((s, e))
        ds = []
        for k, d in enumerate(chain(e)):
            if d == 0:
                ds.append(sp.Integer(0))
            else:
                symbol = sp.Symbol(f"_d{k}{s.name}")
                out.append((symbol, d))
                ds.append(symbol)
        partials[s] = ds
    outputs = list(reduced)
    for e in reduced:
        outputs.extend(chain(e))
    return out, outputs
