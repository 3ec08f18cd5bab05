"""Generated C for the inverse-dynamics batch in blocks of MS_LANES samples, in a form compilers vectorise.

Inside a block every quantity is stored structure-of-arrays (coordinate i of lane l at [i * MS_LANES + l],
written V(i)), every per-sample function is one loop over the lanes with straight-line, branch-free
code (restrict pointers; the dense block of the sparse LU pivots by selects, not by branches), and the
sines and cosines of the body angles come from MS_SIN_COS, a polynomial of our own that vectorises
(Cody-Waite reduction by pi/2 in three parts and fdlibm's kernel polynomials on [-pi/4, pi/4]: an absolute
error below 2^-52 for |x| <= MS_TRIG_MAX; larger or non-finite x go to libm's sin and cos).

Each sample of a block is solved by its own Newton from its own prediction: the third-order Taylor step
off an anchor configuration (solved by continuation from the previous anchor, as the sequential route
does, with its exact derivatives along the coordinate), never from the previous sample's solution, so the
lanes are independent. A block whose samples lie farther than hmax from the anchor, or in which a lane
does not converge or meets a singular Phi_q, is solved sample by sample by the sequential route
(inverse_run), which names the failure exactly as before.

The block layout and MS_SIN_COS are the runtime file ms_lanes.h, the block driver (inverse_blocks) is
ms_blocks.h; this module prints the model's lane functions between them. Built for the cache with MS_SIMD
defined (-fopenmp-simd: `#pragma omp simd` on the lane loops); an export compiles the same text as plain
C99 without it.

A spec of straight-line functions (a tree's) gets the same layout in its batched entry points
(mechsym.codegen.c_source.render_straight): `LaneBody` turns one sample's printed C into the body of a loop
over the lanes of a block.
"""
from __future__ import annotations

import re

import sympy as sp

from mechsym.codegen import c_runtime
from mechsym.codegen.sparse_plan import Plan, constant_sign, static_steps

MAX_BLOCK = 6  # the largest run-time dense block unrolled branch-free; beyond it the sequential route runs


def _lane_symbols(cname, symbols, per_lane=True):
    return {s: sp.Symbol(f"{cname}[V({i})]" if per_lane else f"{cname}[{i}]", real=True)
            for i, s in enumerate(symbols)}


def lane_function(name, args, exprs, printer, out="out", at=None, constants=()) -> str:
    """static void name(a1, ..., out): out[V(at[i])] = exprs[i] (at[i] = i by default) and
    out[V(k)] = v for (k, v) in constants, for every lane, in one vectorisable loop. args: (C name,
    symbols, per_lane) with per_lane False for the parameters shared by the block."""
    mapping = {}
    for cname, symbols, per_lane in args:
        mapping.update(_lane_symbols(cname, symbols, per_lane))
    exprs = [sp.sympify(e).xreplace(mapping) for e in exprs]
    temps, reduced = sp.cse(exprs, symbols=sp.numbered_symbols("t"), order="none")
    sig = ", ".join(f"const double *restrict {c}" for c, _, _ in args)
    lines = [f"static void {name}({sig}, double *restrict {out}) {{"]
    lines += [f"  (void){c};" for c, _, _ in args]
    lines += ["  MS_SIMD_LOOP", "  for (int l = 0; l < MS_LANES; ++l) {"]
    lines += [f"    const double {t} = {printer(v)};" for t, v in temps]
    at = list(range(len(reduced))) if at is None else at
    lines += [f"    {out}[V({k})] = {v!r};" for k, v in constants]
    lines += [f"    {out}[V({k})] = {printer(e)};" for k, e in zip(at, reduced)]
    lines += ["  }", "}"]
    return "\n".join(lines) + "\n"


_ELEMENT = re.compile(r"\b([A-Za-z_]\w*)\[(\d+)\]")


def on_lane(text: str, per_lane) -> str:
    """One sample's C text on lane l of a block: each element g[i] of an array g named in `per_lane` (a
    per-sample input group, a per-sample workspace) written g[V(i)]."""
    return _ELEMENT.sub(lambda m: f"{m.group(1)}[V({m.group(2)})]" if m.group(1) in per_lane else m.group(0), text)


class LaneBody:
    """The lines of one loop over the lanes of a block, printed from one sample's expressions: the arrays
    named in `per_lane` indexed by lane (`on_lane`), and each sine and cosine through MS_SIN_COS, both for
    one argument at once, declared before the first line that uses them. An argument beyond MS_TRIG_MAX
    (or not finite) sets `wide`: the caller then evaluates that block by its per-sample route (libm's sin
    and cos)."""

    def __init__(self, per_lane, printer):
        self.per_lane, self.printer = frozenset(per_lane), printer
        self.trig = {}                     # argument -> its number in this body
        self.lines = []

    def value(self, expr, scalar=None) -> str:
        """The lane text of `expr` (in C names); `scalar`, if given, is its one-sample text, reused where
        expr has no sine or cosine."""
        calls = expr.atoms(sp.sin, sp.cos) if expr.has(sp.sin, sp.cos) else ()
        if not calls:
            return on_lane(self.printer(expr) if scalar is None else scalar, self.per_lane)
        sub = {}
        for call in sorted(calls, key=sp.default_sort_key):
            arg = call.args[0]
            if arg not in self.trig:
                n = self.trig[arg] = len(self.trig)
                self.lines += [f"const double ms_x{n} = {self.value(arg)};", f"double ms_sn{n}, ms_cs{n};",
                               f"MS_SIN_COS(ms_x{n}, ms_sn{n}, ms_cs{n});",
                               f"wide |= !(fabs(ms_x{n}) <= MS_TRIG_MAX);"]
            sub[call] = sp.Symbol(f"ms_{'sn' if isinstance(call, sp.sin) else 'cs'}{self.trig[arg]}", real=True)
        return on_lane(self.printer(expr.xreplace(sub)), self.per_lane)

    def let(self, name, expr, scalar=None):
        """const double name = expr, on every lane."""
        value = self.value(expr, scalar)
        self.lines.append(f"const double {name} = {value};")

    def store(self, target, expr, scalar=None):
        """target = expr (target in lane form, e.g. out[V(3)])."""
        value = self.value(expr, scalar)
        self.lines.append(f"{target} = {value};")

    def loop(self, indent="  ") -> list:
        """The loop over the lanes (the caller declares `int wide = 0;` before it)."""
        return ([f"{indent}MS_SIMD_LOOP_WIDE", f"{indent}for (int l = 0; l < MS_LANES; ++l) {{"]
                + [f"{indent}  {line}" for line in self.lines] + [f"{indent}}}"])


def trig_function(n_angles) -> str:
    """trig_v(q, sc): the sines and cosines of the body angles q[3 b + 2] of every lane (libm's for an angle
    beyond MS_TRIG_MAX), and rotate_v(sc, dx): those after the tiny correction q -= dx, as rotate_trig."""
    lines = ["static void trig_v(const double *restrict q, double *restrict sc) {", "  int wide = 0;",
             "  MS_SIMD_LOOP_WIDE", "  for (int l = 0; l < MS_LANES; ++l) {"]
    for b in range(n_angles):
        lines.append(f"    MS_SIN_COS(q[V({3 * b + 2})], sc[V({2 * b})], sc[V({2 * b + 1})]);")
        lines.append(f"    wide |= !(fabs(q[V({3 * b + 2})]) <= MS_TRIG_MAX);")
    lines += ["  }", "  if (wide)", "    for (int l = 0; l < MS_LANES; ++l) {"]
    for b in range(n_angles):
        x = f"q[V({3 * b + 2})]"
        lines.append(f"      if (!(fabs({x}) <= MS_TRIG_MAX)) {{ sc[V({2 * b})] = sin({x}); sc[V({2 * b + 1})] = cos({x}); }}")
    lines += ["    }", "}", "",
              "static void rotate_v(double *restrict sc, const double *restrict dx) {",
              "  MS_SIMD_LOOP", "  for (int l = 0; l < MS_LANES; ++l) {"]
    for b in range(n_angles):
        lines.append(f"    {{ const double d = -dx[V({3 * b + 2})], s0 = sc[V({2 * b})], c0 = sc[V({2 * b + 1})], "
                     "h = 1.0 - 0.5 * d * d;")
        lines.append(f"      sc[V({2 * b})] = s0 * h + c0 * d; sc[V({2 * b + 1})] = c0 * h - s0 * d; }}")
    lines += ["  }", "}"]
    return "\n".join(lines) + "\n"


def _dense_lu(r, base) -> list:
    """Branch-free partial pivoting of the r x r block at slots base.. (row-major), as dense_lu does it
    (the first largest |entry| of the column wins); pivots as doubles in pv[V(k)], bad |= a zero pivot."""
    m = lambda i, j: f"a[V({base + i * r + j})]"
    body = []
    for k in range(r):
        body.append(f"    {{ double best = fabs({m(k, k)}), p = {k}.0;")
        for i in range(k + 1, r):
            body.append(f"      {{ const double v = fabs({m(i, k)}); p = v > best ? {i}.0 : p; best = v > best ? v : best; }}")
        body.append(f"      pv[V({k})] = p; bad |= !(best > 0.0);")
        for i in range(k + 1, r):
            for j in range(r):
                body.append(f"      {{ const double t = {m(k, j)}, u = {m(i, j)}; {m(k, j)} = p == {i}.0 ? u : t; "
                            f"{m(i, j)} = p == {i}.0 ? t : u; }}")
        if k + 1 < r:
            body.append(f"      const double inv = 1.0 / {m(k, k)};")
        for i in range(k + 1, r):
            body.append(f"      {m(i, k)} *= inv;")
            for j in range(k + 1, r):
                body.append(f"      {m(i, j)} -= {m(i, k)} * {m(k, j)};")
        body.append("    }")
    return body


def _dense_solve(r, base) -> list:
    """x = block^-1 b for the factored block (as dense_solve), b in rb{k}, x in rx{k}."""
    m = lambda i, j: f"a[V({base + i * r + j})]"
    body = []
    for k in range(r):
        for i in range(k + 1, r):
            body.append(f"    {{ const double t = rb{k}, u = rb{i}; rb{k} = pv[V({k})] == {i}.0 ? u : t; "
                        f"rb{i} = pv[V({k})] == {i}.0 ? t : u; }}")
    for i in range(r):
        for j in range(i):
            body.append(f"    rb{i} -= {m(i, j)} * rb{j};")
    for i in reversed(range(r)):
        terms = "".join(f" - {m(i, j)} * rx{j}" for j in range(i + 1, r))
        body.append(f"    const double rx{i} = (rb{i}{terms}) / {m(i, i)};")
    return body


def _dense_solve_t(r, base) -> list:
    """y = block^-T c for the factored block (as dense_solve_t), c in rc{k}, y in ry{k}."""
    m = lambda i, j: f"a[V({base + i * r + j})]"
    body = []
    for i in range(r):
        terms = "".join(f" - {m(j, i)} * ry{j}" for j in range(i))
        body.append(f"    double ry{i} = (rc{i}{terms}) / {m(i, i)};")
    for i in reversed(range(r)):
        for j in range(i + 1, r):
            body.append(f"    ry{i} -= {m(j, i)} * ry{j};")
    for k in reversed(range(r)):
        for i in range(k + 1, r):
            body.append(f"    {{ const double t = ry{k}, u = ry{i}; ry{k} = pv[V({k})] == {i}.0 ? u : t; "
                        f"ry{i} = pv[V({k})] == {i}.0 ? t : u; }}")
    return body


def _on_lane(name: str, k: int) -> str:
    """Element k of the C array `name` on lane l (V: ms_lanes.h's lane-major index)."""
    return f"{name}[V({k})]"


def emit_lanes(p: Plan) -> str:
    """lu_factor_v(a, pv), lu_solve_v(a, pv, b, x) and lu_solve_t_v(a, pv, c, y): the static sparse
    elimination of `p` (as emit_c's lu_factor, lu_solve, lu_solve_t) on every lane at once. lu_factor_v
    returns whether any lane met a zero pivot. lu_det_sign_v(a, pv, sg): the sign of det Phi_q per lane."""
    r, base = len(p.block_rows), len(p.slots)
    loop = ["  MS_SIMD_LOOP", "  for (int l = 0; l < MS_LANES; ++l) {"]
    steps = static_steps(p, p.slots, base, _on_lane, "    ")
    # -- factor
    body = steps["factor"] + _dense_lu(r, base)
    text = ["static int lu_factor_v(double *restrict a, double *restrict pv) {", "  int bad = 0;", "  (void)pv;",
            "  MS_SIMD_LOOP_BAD", "  for (int l = 0; l < MS_LANES; ++l) {"] + body + ["  }", "  return bad;", "}"]
    # -- solve Phi x = b (b is overwritten)
    body = list(steps["solve"])
    if r:
        body += [f"    double rb{k} = b[V({i})];" for k, i in enumerate(p.block_rows)]
        body += _dense_solve(r, base)
        body += [f"    x[V({j})] = rx{k};" for k, j in enumerate(p.block_cols)]
    body += steps["back"]
    text += ["static void lu_solve_v(const double *restrict a, const double *restrict pv, double *restrict b, "
             "double *restrict x) {", "  (void)pv;"] + loop + body + ["  }", "}"]
    # -- solve Phi^T y = c (c is overwritten)
    body = list(steps["solve_t"])
    if r:
        body += [f"    const double rc{k} = c[V({j})];" for k, j in enumerate(p.block_cols)]
        body += _dense_solve_t(r, base)
        body += [f"    y[V({i})] = ry{k};" for k, i in enumerate(p.block_rows)]
    body += steps["back_t"]
    text += ["static void lu_solve_t_v(const double *restrict a, const double *restrict pv, double *restrict c, "
             "double *restrict y) {", "  (void)pv;"] + loop + body + ["  }", "}"]
    # -- the sign of det Phi_q per lane, as lu_det_sign for the dense LU of the block
    body = [f"    double s = {-1.0 if constant_sign(p) else 1.0!r};"]
    body += [f"    s = (pv[V({k})] != {k}.0) != (a[V({base + k * r + k})] < 0.0) ? -s : s;" for k in range(r)]
    text += ["static void lu_det_sign_v(const double *restrict a, const double *restrict pv, double *restrict sg) {",
             "  (void)a; (void)pv;"] + loop + body + ["    sg[l] = s;", "  }", "}"]
    return "\n".join(text) + "\n"


def lanes_source(spec, trig, sc, printer) -> str | None:
    """The lane functions of a square mechanism's codegen Spec (trig_v, phi_v, jac_slots_v, gamma_v,
    applied_v, branch_v and the sparse LU on lanes), or None when the plan's dense block is too large to
    unroll."""
    fns, pl = spec.functions, spec.jacobian.plan
    if len(pl.block_rows) > MAX_BLOCK:
        return None
    q, th, p = (dict(fns["phi"].inputs)[k] for k in ("q", "th", "p"))
    qd = dict(fns["gamma"].inputs)["qd"]
    sub = lambda exprs: [sp.sympify(e).xreplace(trig) for e in exprs]
    lanes = lambda c, syms: (c, syms, True)
    shared = ("p", p, False)
    parts = [c_runtime.include("ms_lanes.h"), trig_function(len(sc) // 2)]
    parts.append(lane_function("phi_v", [lanes("q", q), lanes("th", th), shared, lanes("sc", sc)],
                               sub(fns["phi"].outputs), printer))
    parts.append(lane_function("gamma_v", [lanes("q", q), lanes("qd", qd), shared, lanes("sc", sc)],
                               sub(fns["gamma"].outputs), printer))
    parts.append(lane_function("applied_v", [lanes("q", q), shared, lanes("sc", sc)], sub(fns["applied"].outputs),
                               printer))
    parts.append(lane_function("branch_v", [lanes("q", q), shared, lanes("sc", sc)],
                               sub(list(fns["branches"].outputs) or [1]), printer))
    parts.append(lane_function("jac_slots_v", [lanes("q", q), lanes("sc", sc), shared],
                               sub(fns[spec.jacobian.values].outputs), printer, out="a",
                               at=[pl.slots[ij] for ij in spec.jacobian.varying], constants=sorted(pl.constants.items())))
    parts.append(emit_lanes(pl))
    return "\n".join(parts)
