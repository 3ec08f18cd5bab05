"""Generated C for the inverse-dynamics batch in blocks of MS_LANES samples, in a form compilers vectorise.

Inside a block every quantity is stored structure-of-arrays (coordinate i of lane l at [i * MS_LANES + l],
written V(i)), every per-sample function is one loop over the lanes with straight-line, branch-free
code (restrict pointers; the dense block of the sparse LU pivots by selects, not by branches), and the
sines and cosines of the body angles come from `ms_sin_cos`, a polynomial of our own that vectorises
(Cody-Waite reduction by pi/2 in three parts and fdlibm's kernel polynomials on [-pi/4, pi/4]: an absolute
error below 2^-52 for |x| <= MS_TRIG_MAX; larger or non-finite x go to libm's sin and cos).

Each sample of a block is solved by its own Newton from its own prediction: the Taylor step
q + h q' + h^2/2 q'' off one anchor configuration of the block (solved by continuation from the previous
anchor, as the sequential route does), never from the previous sample's solution, so the lanes are
independent. A block whose samples lie farther than hmax from the anchor, or in which a lane does not
converge or meets a singular Phi_q, is solved sample by sample by the sequential route (inverse_run),
which names the failure exactly as before.

Built for the cache with MS_SIMD defined (-fopenmp-simd: `#pragma omp simd` on the lane loops); an export
compiles the same text as plain C99 without it.
"""
from __future__ import annotations

import sympy as sp

from mechsym.codegen.sparse_plan import Plan, scaled

LANES = 8
MAX_BLOCK = 6  # the largest run-time dense block unrolled branch-free; beyond it the sequential route runs

PRELUDE = r"""
/* ---- blocks of MS_LANES samples, structure of arrays: V(i) is coordinate i of lane l ---- */
#define MS_LANES %(lanes)d
#define V(i) ((i) * MS_LANES + l)
#if defined(MS_SIMD)
#define MS_SIMD_LOOP _Pragma("omp simd")
#define MS_SIMD_LOOP_BAD _Pragma("omp simd reduction(|:bad)")
#define MS_SIMD_LOOP_WIDE _Pragma("omp simd reduction(|:wide)")
#else
#define MS_SIMD_LOOP_WIDE
#define MS_SIMD_LOOP
#define MS_SIMD_LOOP_BAD
#endif

/* sin x and cos x for |x| <= MS_TRIG_MAX, branch-free so that a loop over lanes vectorises: x = k pi/2 + r
   with r from pi/2 in three parts (fdlibm's pio2_1, pio2_2, pio2_3; k pio2_1 and k pio2_2 are exact for
   |k| < 2^20), then fdlibm's kernel polynomials on |r| <= pi/4: an absolute error below 2^-52 against libm
   (tests/test_lanes.py; relative to a value near a zero of sin or cos the error is larger, as the reduction
   keeps 2^-52 of r absolute, which is what the mechanism's equations see). k is rounded by adding and
   subtracting 1.5 2^52 (no rounding function, no integer overflow). */
#define MS_TRIG_MAX 1.0e5
#define MS_SIN_COS(X, S, C) do {                                                                            \
    const double x_ = (X), big_ = 6755399441055744.0;                                                       \
    const double k_ = (x_ * 6.36619772367581382433e-01 + big_) - big_;                                      \
    const double r_ = ((x_ - k_ * 1.57079632673412561417e+00) - k_ * 6.07710050630396597660e-11)            \
                      - k_ * 2.02226624871116645580e-21;                                                    \
    const double z_ = r_ * r_, hz_ = 0.5 * z_, w_ = 1.0 - hz_;                                              \
    const double s_ = r_ + r_ * z_ * (-1.66666666666666324348e-01 + z_ * (8.33333333332248946124e-03 + z_ * ( \
                      -1.98412698298579493134e-04 + z_ * (2.75573137070700676789e-06 + z_ * (               \
                      -2.50507602534068634195e-08 + z_ * 1.58969099521155010221e-10)))));                   \
    const double c_ = w_ + (((1.0 - w_) - hz_) + z_ * z_ * (4.16666666666666019037e-02 + z_ * (             \
                      -1.38888888888741095749e-03 + z_ * (2.48015872894767294178e-05 + z_ * (               \
                      -2.75573143513906633035e-07 + z_ * (2.08757232129817482790e-09                        \
                      + z_ * -1.13596475577881948265e-11))))));                                             \
    const double m_ = k_ - 4.0 * ((k_ * 0.25 + big_) - big_);  /* k mod 4, in -2..2 */                     \
    const double ss_ = (m_ == 1.0 || m_ == -1.0) ? c_ : s_, cc_ = (m_ == 1.0 || m_ == -1.0) ? s_ : c_;     \
    (S) = (m_ == 2.0 || m_ == -2.0 || m_ == -1.0) ? -ss_ : ss_;                                             \
    (C) = (m_ == 2.0 || m_ == -2.0 || m_ == 1.0) ? -cc_ : cc_;                                              \
  } while (0)
"""


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


def _dense_solve(r, base, src, dst) -> list:
    """x = block^-1 b for the factored block (as dense_solve), b in rb[k], x into dst."""
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


def emit_lanes(p: Plan) -> str:
    """lu_factor_v(a, pv), lu_solve_v(a, pv, b, x) and lu_solve_t_v(a, pv, c, y): the static sparse
    elimination of `p` (as emit_c's lu_factor, lu_solve, lu_solve_t) on every lane at once. lu_factor_v
    returns whether any lane met a zero pivot."""
    r, base, S = len(p.block_rows), len(p.slots), p.slots
    loop = ["  MS_SIMD_LOOP", "  for (int l = 0; l < MS_LANES; ++l) {"]
    # -- factor
    body = []
    for (row, col), pv_, low, ups in zip(p.pivots, p.pivot_values, p.lower, p.updates):
        for i in low if pv_ != 1.0 else ():
            body.append(f"    a[V({S[(i, col)]})] = {scaled(f'a[V({S[(i, col)]})]', pv_)};")
        for i, j in ups:
            body.append(f"    a[V({S[(i, j)]})] -= a[V({S[(i, col)]})] * a[V({S[(row, j)]})];")
    for bi, i in enumerate(p.block_rows):
        for bj, j in enumerate(p.block_cols):
            src = f"a[V({S[(i, j)]})]" if (i, j) in S else "0.0"
            body.append(f"    a[V({base + bi * r + bj})] = {src};")
    body += _dense_lu(r, base)
    text = ["static int lu_factor_v(double *restrict a, double *restrict pv) {", "  int bad = 0;", "  (void)pv;",
            "  MS_SIMD_LOOP_BAD", "  for (int l = 0; l < MS_LANES; ++l) {"] + body + ["  }", "  return bad;", "}"]
    # -- solve Phi x = b (b is overwritten)
    body = []
    for (row, col), low in zip(p.pivots, p.lower):
        for i in low:
            body.append(f"    b[V({i})] -= a[V({S[(i, col)]})] * b[V({row})];")
    if r:
        body += [f"    double rb{k} = b[V({i})];" for k, i in enumerate(p.block_rows)]
        body += _dense_solve(r, base, "rb", "rx")
        body += [f"    x[V({j})] = rx{k};" for k, j in enumerate(p.block_cols)]
    for (row, col), pv_, up in reversed(list(zip(p.pivots, p.pivot_values, p.upper))):
        terms = "".join(f" - a[V({S[(row, j)]})] * x[V({j})]" for j in up)
        body.append(f"    x[V({col})] = {scaled(f'(b[V({row})]{terms})' if terms else f'b[V({row})]', pv_)};")
    text += ["static void lu_solve_v(const double *restrict a, const double *restrict pv, double *restrict b, "
             "double *restrict x) {", "  (void)pv;"] + loop + body + ["  }", "}"]
    # -- solve Phi^T y = c (c is overwritten)
    body = []
    for (row, col), pv_, up in zip(p.pivots, p.pivot_values, p.upper):
        body.append(f"    y[V({row})] = {scaled(f'c[V({col})]', pv_)};")
        for j in up:
            body.append(f"    c[V({j})] -= a[V({S[(row, j)]})] * y[V({row})];")
    if r:
        body += [f"    const double rc{k} = c[V({j})];" for k, j in enumerate(p.block_cols)]
        body += _dense_solve_t(r, base)
        body += [f"    y[V({i})] = ry{k};" for k, i in enumerate(p.block_rows)]
    for (row, col), low in reversed(list(zip(p.pivots, p.lower))):
        terms = "".join(f" - a[V({S[(i, col)]})] * y[V({i})]" for i in low)
        if terms:
            body.append(f"    y[V({row})] = y[V({row})]{terms};")
    text += ["static void lu_solve_t_v(const double *restrict a, const double *restrict pv, double *restrict c, "
             "double *restrict y) {", "  (void)pv;"] + loop + body + ["  }", "}"]
    return "\n".join(text) + "\n"


def lanes_source(con, eqs, pl, trig, sc, varying, branch_exprs, printer) -> str | None:
    """The lane functions of a square mechanism (trig_v, phi_v, jac_slots_v, gamma_v, applied_v,
    branch_v and the sparse LU on lanes), or None when the plan's dense block is too large to unroll."""
    if len(pl.block_rows) > MAX_BLOCK:
        return None
    q, qd, th, p = con.q, con.qd, con.theta, con.params
    sub = lambda exprs: [sp.sympify(e).xreplace(trig) for e in exprs]
    lanes = lambda c, syms: (c, syms, True)
    shared = ("p", p, False)
    parts = [PRELUDE % {"lanes": LANES}, trig_function(len(sc) // 2)]
    parts.append(lane_function("phi_v", [lanes("q", q), lanes("th", th), shared, lanes("sc", sc)], sub(con.rows), printer))
    parts.append(lane_function("gamma_v", [lanes("q", q), lanes("qd", qd), shared, lanes("sc", sc)], sub(con.gamma),
                               printer))
    parts.append(lane_function("applied_v", [lanes("q", q), shared, lanes("sc", sc)], sub(eqs.applied), printer))
    parts.append(lane_function("branch_v", [lanes("q", q), shared, lanes("sc", sc)], sub(branch_exprs or [1]), printer))
    parts.append(lane_function("jac_slots_v", [lanes("q", q), lanes("sc", sc), shared], sub([e for _, _, e in varying]),
                               printer, out="a", at=[pl.slots[(i, j)] for i, j, _ in varying],
                               constants=sorted(pl.constants.items())))
    parts.append(emit_lanes(pl))
    return "\n".join(parts)


DRIVER = r"""
/* The samples th[0..cnt) of one block (cnt <= MS_LANES), each solved by Newton from its own prediction
   q + h dq + h^2/2 ddq + h^3/6 d3q off the anchor (qa and its derivatives d[0..2] along th, solved at tha),
   then their coefficients, reactions (three right-hand sides), largest velocity coefficient and smallest
   branch condition, written as inverse_run writes them. Returns the number of Newton iterations the block
   took, or 0 when a lane did not converge or met a singular Phi_q (nothing is then written: the caller
   solves the block sample by sample). */
static int inverse_lanes(int cnt, const double *th, double tha, const double *qa, const double (*d)[NQ],
                         const double *p, const double *mass, const double *scale, double tol, int maxit,
                         double *q_out, double *coef_max, double *branch_min, double *u_out) {
  double Q[NQ * MS_LANES], SC[NSC * MS_LANES], TH[MS_LANES], A[LU_NSLOT * MS_LANES], PV[LU_NBLOCK * MS_LANES];
  double R[NROW * MS_LANES], DX[NQ * MS_LANES], DQ[NQ * MS_LANES], DDQ[NQ * MS_LANES], U[3][NROW * MS_LANES];
  double BR[NBRANCH * MS_LANES], STEP[MS_LANES];
  MS_SIMD_LOOP
  for (int l = 0; l < MS_LANES; ++l) {
    const double t = th[l < cnt ? l : cnt - 1], h = t - tha;
    TH[l] = t;
    for (int i = 0; i < NQ; ++i) Q[V(i)] = qa[i] + h * (d[0][i] + h * (0.5 * d[1][i] + h * (1.0 / 6.0) * d[2][i]));
  }
  int it = 0, done = 0;
  while (!done) {
    if (it++ == maxit) return 0;
    trig_v(Q, SC);
    phi_v(Q, TH, p, SC, R);
    jac_slots_v(Q, SC, p, A);
    if (lu_factor_v(A, PV)) return 0;
    lu_solve_v(A, PV, R, DX);
    MS_SIMD_LOOP
    for (int l = 0; l < MS_LANES; ++l) {
      double step = 0.0;
      for (int i = 0; i < NQ; ++i) {
        Q[V(i)] -= DX[V(i)];
        const double v = fabs(DX[V(i)]) / scale[i];
        step = (step != step || v <= step) ? step : v;   /* a NaN stays */
      }
      STEP[l] = step;
    }
    done = 1;
    for (int l = 0; l < MS_LANES; ++l) done &= STEP[l] <= tol;
  }
  rotate_v(SC, DX);
  jac_slots_v(Q, SC, p, A);
  if (lu_factor_v(A, PV)) return 0;
  MS_SIMD_LOOP
  for (int l = 0; l < MS_LANES; ++l)
    for (int i = 0; i < NROW; ++i) R[V(i)] = i == NJ ? 1.0 : 0.0;
  lu_solve_v(A, PV, R, DQ);                       /* dq/dth */
  gamma_v(Q, DQ, p, SC, R);
  MS_SIMD_LOOP
  for (int l = 0; l < MS_LANES; ++l)
    for (int i = 0; i < NROW; ++i) R[V(i)] = -R[V(i)];
  lu_solve_v(A, PV, R, DDQ);                      /* d2q/dth2 */
  MS_SIMD_LOOP
  for (int l = 0; l < MS_LANES; ++l)
    for (int i = 0; i < NQ; ++i) R[V(i)] = mass[i] * DQ[V(i)];
  lu_solve_t_v(A, PV, R, U[0]);
  MS_SIMD_LOOP
  for (int l = 0; l < MS_LANES; ++l)
    for (int i = 0; i < NQ; ++i) R[V(i)] = mass[i] * DDQ[V(i)];
  lu_solve_t_v(A, PV, R, U[1]);
  applied_v(Q, p, SC, DX);
  MS_SIMD_LOOP
  for (int l = 0; l < MS_LANES; ++l)
    for (int i = 0; i < NQ; ++i) R[V(i)] = -DX[V(i)];
  lu_solve_t_v(A, PV, R, U[2]);
  branch_v(Q, p, SC, BR);
  for (int l = 0; l < cnt; ++l) {
    double *out = u_out + (size_t)l * NROW * 3, cm = 0.0, bm = 1.0;
    for (int i = 0; i < NROW; ++i) { out[3 * i] = U[0][V(i)]; out[3 * i + 1] = U[1][V(i)]; out[3 * i + 2] = U[2][V(i)]; }
    for (int i = 0; i < NQ; ++i) { const double v = fabs(DQ[V(i)]) / scale[i]; if (!(v <= cm)) cm = v; }
    for (int i = 0; i < NBRANCH_USED; ++i) if (!(BR[V(i)] >= bm)) bm = BR[V(i)];
    coef_max[l] = cm;
    branch_min[l] = bm;
    if (q_out) for (int i = 0; i < NQ; ++i) q_out[(size_t)l * NQ + i] = Q[V(i)];
  }
  return it;
}

/* The third derivative d3q along th at a solved configuration (Phi_q d3q = -gamma3(q, dq, ddq)). */
static void third(const double *q, const double *sc, const double *p, const double *a, const int *piv,
                  const double *dq, const double *ddq, double *d3) {
  double r[NROW];
  gamma3_1_s(q, dq, ddq, p, sc, r);
  for (int i = 0; i < NROW; ++i) r[i] = -r[i];
  lu_solve(a, piv, r, d3);
}

/* inverse_run's results in blocks of MS_LANES samples, each block's samples solved independently
   (inverse_lanes) from one anchor: a solved configuration reached by continuation (advance, as the
   sequential route does) at the middle sample of the first block farther than `reach` from the last
   anchor, and always within hmax of every sample it predicts. reach adapts so that a block takes one
   Newton iteration: halved after a block that took more, grown after one that took one. A block whose
   samples span more than 2 hmax, or whose lanes fail, runs sample by sample (inverse_run) from the last
   anchor, which then names the failing sample and its status. */
static int inverse_blocks(int n, const double *th, const double *p, const double *q0, const double *scale, double tol,
                          int maxit, double hmax, double *q_out, double *coef_max, double *branch_min, double *u_out,
                          int *status) {
  double q[NQ], sc[NSC], d[3][NQ], a[LU_NSLOT], mass[NQ], q_prev[NQ], tha = th[0], reach = hmax;
  int piv[LU_NBLOCK], turns = 0;
  memcpy(q, q0, sizeof q);
  mass1(p, mass);
  *status = newton(q, sc, th, p, scale, tol, maxit, a, piv);
  if (*status) return 0;
  coefficients(q, sc, p, a, piv, d[0], d[1]);
  third(q, sc, p, a, piv, d[0], d[1], d[2]);
  for (int s0 = 0; s0 < n; s0 += MS_LANES) {
    if (ms_stop) { *status = MS_INTERRUPTED; return s0; }
    const int cnt = n - s0 < MS_LANES ? n - s0 : MS_LANES;
    int near = 1, its = 0;
    for (int l = 0; l < cnt; ++l) near &= fabs(th[s0 + l] - tha) <= reach;
    memcpy(q_prev, q, sizeof q);
    const double tha_prev = tha;
    if (!near) {
      const double mid = th[s0 + (cnt - 1) / 2];
      near = !advance(q, sc, d[0], d[1], tha, mid, p, scale, tol, maxit, hmax, a, piv, &turns);
      tha = mid;
      for (int l = 0; l < cnt && near; ++l) near = fabs(th[s0 + l] - mid) <= hmax;
      if (near) third(q, sc, p, a, piv, d[0], d[1], d[2]);
    }
    if (near)
      its = inverse_lanes(cnt, th + s0, tha, q, (const double (*)[NQ])d, p, mass, scale, tol, maxit,
                          q_out ? q_out + (size_t)s0 * NQ : NULL, coef_max + s0, branch_min + s0,
                          u_out + (size_t)s0 * NROW * 3);
    if (its) {
      reach = its > 1 ? 0.5 * reach : fmin(hmax, 1.25 * reach);
      continue;
    }
    /* sample by sample from the last anchor (its first row, the anchor itself, is not a result) */
    double t1[MS_LANES + 1], q1[(MS_LANES + 1) * NQ], c1[MS_LANES + 1], b1[MS_LANES + 1], u1[(MS_LANES + 1) * NROW * 3];
    t1[0] = tha_prev;
    memcpy(t1 + 1, th + s0, sizeof(double) * cnt);
    const int failed = inverse_run(cnt + 1, t1, p, q_prev, scale, tol, maxit, hmax, q1, c1, b1, u1, status);
    const int good = failed < 0 ? cnt : (failed > 0 ? failed - 1 : 0);
    memcpy(coef_max + s0, c1 + 1, sizeof(double) * good);
    memcpy(branch_min + s0, b1 + 1, sizeof(double) * good);
    memcpy(u_out + (size_t)s0 * NROW * 3, u1 + NROW * 3, sizeof(double) * NROW * 3 * good);
    if (q_out) memcpy(q_out + (size_t)s0 * NQ, q1 + NQ, sizeof(double) * NQ * good);
    if (failed >= 0) return s0 + good;
    memcpy(q, q1 + (size_t)cnt * NQ, sizeof q);
    tha = th[s0 + cnt - 1];
    *status = newton(q, sc, &tha, p, scale, tol, maxit, a, piv);
    if (*status) return s0 + cnt - 1;
    coefficients(q, sc, p, a, piv, d[0], d[1]);
    third(q, sc, p, a, piv, d[0], d[1], d[2]);
  }
  return -1;
}
"""

PROTOTYPE = r"""
static int inverse_blocks(int n, const double *th, const double *p, const double *q0, const double *scale, double tol,
                          int maxit, double hmax, double *q_out, double *coef_max, double *branch_min, double *u_out,
                          int *status);
"""

NO_LANES = r"""
static int inverse_blocks(int n, const double *th, const double *p, const double *q0, const double *scale, double tol,
                          int maxit, double hmax, double *q_out, double *coef_max, double *branch_min, double *u_out,
                          int *status) {
  return inverse_run(n, th, p, q0, scale, tol, maxit, hmax, q_out, coef_max, branch_min, u_out, status);
}
"""
