"""C99 source for one mechanism, printed from the same symbolic expressions as the numpy backend.

Per-sample functions (common subexpressions eliminated, printed with sympy's C printer) and batched
entry points that loop over samples inside C:

  ms_phi, ms_jac, ms_gamma, ms_gamma3, ms_applied, ms_applied_rate, ms_mass, ms_points, ms_branches,
  ms_energy    (evaluation)
  ms_factor, ms_solve
               the static sparse factorisation of Phi_q at many configurations, and its solves
  ms_track     one state of a mechanism with several coordinates: Newton, J = dq/dtheta, the
               acceleration offset a0 and the applied forces, for a simulation's right-hand side
  ms_inverse   kinematics by Newton, exact coefficients, and the reactions and driving force for three
               right-hand sides (per unit thetadd, per unit thetad^2, static), per sample: in blocks of
               samples solved independently from anchors reached by continuation (mechsym.codegen.c_lanes)
  ms_inverse_sets
               ms_inverse for many parameter sets (each with its own starting configuration) in one call
  ms_ode       the reduced one-coordinate ODE's right-hand side and its exact Jacobian along theta
  ms_forward   the reduced one-coordinate ODE integrated by DOP853 (scipy's coefficients and error control) with
               dense output on a uniform grid and located events

The long calls (ms_inverse, ms_inverse_sets, ms_ode, ms_forward, ms_factor, ms_solve) catch SIGINT for their duration: the
handler only raises a flag, which the loops poll at every sample or integration step, and the call
returns status 5 (MS_INTERRUPTED, distinct from every failure status) and restores the previous handler, so that Ctrl-C ends a long C loop at
once (the caller raises KeyboardInterrupt) instead of waiting for it to finish.

The linear algebra is the static sparse elimination of mechsym.codegen.sparse_plan. The file is plain
C99 with no Python dependency, so it is also what `mechsym export` writes.
"""
from __future__ import annotations

import sympy as sp
from sympy.printing.c import C99CodePrinter

from mechsym.codegen import c_lanes
from mechsym.codegen.sparse_plan import DENSE_C, emit_c, jacobian_pattern, plan


class CPrinter(C99CodePrinter):
    """sympy's C99 printer with small integer powers as products (cheaper than pow and exact to the same
    rounding) and x**-1 as (1.0/x); both bracketed, since either may stand where it divides."""

    def _print_Pow(self, expr):
        base, exp = expr.args
        if exp.is_Integer and 2 <= int(exp) <= 4:
            b = self.parenthesize(base, 100)
            return "(" + "*".join([b] * int(exp)) + ")"   # a/b**2 must print a/(b*b), not a/b*b
        if exp == -1:
            return f"(1.0/{self.parenthesize(base, 100)})"
        return super()._print_Pow(expr)


def c_code(expr) -> str:
    """The C text of one expression."""
    return CPrinter().doprint(expr)


def per_sample_function(name, args, exprs, out="out") -> str:
    """static void name(const double *a1, ..., double *out) computing out[i] = exprs[i]."""
    mapping = {}
    for cname, symbols in args:
        for i, s in enumerate(symbols):
            mapping[s] = sp.Symbol(f"{cname}[{i}]", real=True)
    exprs = [sp.sympify(e).xreplace(mapping) for e in exprs]
    temps, reduced = sp.cse(exprs, symbols=sp.numbered_symbols("t"), order="none")
    sig = ", ".join(f"const double *{c}" for c, _ in args)
    lines = [f"static void {name}({sig}{', ' if sig else ''}double *{out}) {{"]
    lines += [f"  (void){c};" for c, _ in args]
    lines += [f"  const double {t} = {c_code(v)};" for t, v in temps]
    lines += [f"  {out}[{i}] = {c_code(e)};" for i, e in enumerate(reduced)]
    lines.append("}")
    return "\n".join(lines) + "\n"


def count_flops(exprs) -> int:
    """Arithmetic operations of the CSE'd expressions (a rough count: each op and function is one)."""
    temps, reduced = sp.cse(list(exprs), order="none")
    total = 0
    for e in [v for _, v in temps] + list(reduced):
        total += sp.count_ops(e, visual=False)
    return int(total)


def generate(system) -> tuple[str, dict]:
    """C source and metadata (sizes, names, slot layout) of a derived System."""
    con, eqs = system.constraints, system.equations
    mech = con.mechanism
    nq, m, k, npar = con.n, len(con.rows), len(con.theta), len(con.params)
    entries, varying = jacobian_pattern(con.jacobian)
    pl = plan(m, entries) if m == nq else None
    q, qd, th, p = con.q, con.qd, con.theta, con.params
    point_exprs = [c for name in con.points for c in con.points[name]]
    from mechsym.kinematics import _point_symbols

    branch_exprs = [b.expr.xreplace(_point_symbols(con)) for b in mech.branches]
    src = [HEADER.format(name=mech.name), POSIX, "#include <math.h>", "#include <signal.h>", "#include <string.h>", "",
           INTERRUPT]
    src.append(f"#define NQ {nq}\n#define NROW {m}\n#define NTH {k}\n#define NPAR {npar}\n#define NJ {con.n_joint_rows}\n")
    angles = [q[3 * i + 2] for i in range(len(con.bodies))]
    sc = sp.symbols(f"sc0:{max(1, 2 * len(angles))}", real=True)
    trig = {}
    for i, a in enumerate(angles):
        trig[sp.sin(a)], trig[sp.cos(a)] = sc[2 * i], sc[2 * i + 1]
    src.append(f"#define NSC {len(sc)}\n")
    src.append("/* sines and cosines of the body angles, computed once per configuration */\n"
               "static void trig1(const double *q, double *sc) {\n  (void)q; (void)sc;\n"
               + "".join(f"  sc[{2 * i}] = sin(q[{3 * i + 2}]); sc[{2 * i + 1}] = cos(q[{3 * i + 2}]);\n"
                         for i in range(len(angles))) + "}\n")

    def with_trig(name, args, exprs):
        """name_s(args..., sc, out) from the expressions with shared trig, and name(args..., out)."""
        exprs = [sp.sympify(e).xreplace(trig) for e in exprs]
        src.append(per_sample_function(f"{name}_s", args + [("sc", sc)], exprs))
        sig = ", ".join(f"const double *{c}" for c, _ in args)
        call = ", ".join(c for c, _ in args)
        src.append(f"static void {name}({sig}, double *out) {{\n  double sc[NSC];\n  trig1(q, sc);\n"
                   f"  {name}_s({call}, sc, out);\n}}\n")

    with_trig("phi1", [("q", q), ("th", th), ("p", p)], con.rows)
    with_trig("gamma1", [("q", q), ("qd", qd), ("p", p)], con.gamma)
    with_trig("gamma3_1", [("q", q), ("qd", qd), ("qdd", con.qdd), ("p", p)], con.gamma3)
    with_trig("applied1", [("q", q), ("p", p)], eqs.applied)
    with_trig("apprate1", [("q", q), ("qd", qd), ("p", p)], [eqs.applied_rate])
    src.append(per_sample_function("mass1", [("p", p)], eqs.mass))
    with_trig("points1", [("q", q), ("p", p)], point_exprs or [0])
    with_trig("branch1", [("q", q), ("p", p)], branch_exprs or [1])
    src.append(f"#define NBRANCH {max(1, len(branch_exprs))}\n#define NBRANCH_USED {len(branch_exprs)}\n")
    with_trig("energy1", [("q", q), ("qd", qd), ("p", p)], [eqs.kinetic, eqs.potential])
    with_trig("jacd1", [("q", q), ("p", p)], [e for _, _, e in varying] or [0])
    dense = [f"  out[{i * nq + j}] = v[{n}];" for n, (i, j, _) in enumerate(varying)]
    dense += [f"  out[{i * nq + j}] = {v!r};" for (i, j), v in entries.items() if v is not None]
    src.append("static void jac1(const double *q, const double *p, double *out) {\n"
               f"  double v[{max(1, len(varying))}];\n  memset(out, 0, sizeof(double) * NROW * NQ);\n"
               "  jacd1(q, p, v);\n" + "\n".join(dense) + "\n}\n")
    meta = {"nq": nq, "nrow": m, "nth": k, "npar": npar, "n_points": len(point_exprs) // 2,
            "n_branches": len(branch_exprs), "square": pl is not None}
    if pl is not None:
        src.append(DENSE_C)
        src.append(emit_c(pl, "lu"))
        fill = [f"  a[{pl.slots[(i, j)]}] = v[{n}];" for n, (i, j, _) in enumerate(varying)]
        consts = [f"  a[{s}] = {v!r};" for s, v in pl.constants.items()]
        src.append("/* Phi_q at q (with its trig sc) into the factorisation slots */\n"
                   "static void jac_slots(const double *q, const double *sc, const double *p, double *a) {\n"
                   f"  double v[{max(1, len(varying))}];\n  jacd1_s(q, p, sc, v);\n" + "\n".join(consts + fill) + "\n}\n")
        lanes = c_lanes.lanes_source(con, eqs, pl, trig, sc, varying, branch_exprs, c_code)
        src.append((lanes or "") + c_lanes.PROTOTYPE)
        src.append(KERNELS)
        src.append(c_lanes.DRIVER if lanes else c_lanes.NO_LANES)
        meta["block"] = len(pl.block_rows)
        meta["nslot"] = len(pl.slots)
    src.append(BATCH)
    flops = {
        "phi": count_flops(con.rows), "jacobian": count_flops([e for _, _, e in varying]),
        "gamma": count_flops(con.gamma), "applied": count_flops(eqs.applied),
        "gamma3": count_flops(con.gamma3), "applied_rate": count_flops([eqs.applied_rate]),
    }
    if pl is not None:
        r = len(pl.block_rows)
        elim = sum(len(lw) + 2 * len(up) for lw, up in zip(pl.lower, pl.updates))
        solve = sum(2 * len(lw) + 2 * len(up) + 1 for lw, up in zip(pl.lower, pl.upper))
        flops["factor"] = elim + (2 * r**3) // 3
        flops["solve"] = solve + 2 * r * r
    meta["flops"] = flops
    return "\n".join(src), meta


HEADER = """/* Generated by mechsym for the mechanism '{name}'. Plain C99; do not edit.
   Coordinates q: per moving body (x, y of the centre of mass, frame angle), in the fixed body's frame.
   Arrays are sample-major: sample s of a group of size G starts at s * G. */"""

POSIX = """#if !defined(_POSIX_C_SOURCE) && (defined(__unix__) || defined(__APPLE__))
#define _POSIX_C_SOURCE 200112L /* sigaction, which restores the previous handler exactly */
#endif"""

INTERRUPT = r"""/* SIGINT during a long call: the handler raises ms_stop, the loops poll it, the call returns status 5
   (MS_INTERRUPTED) and puts the previous handler back. A call made while another one catches (a nested or
   concurrent call) leaves the handler to that one; an ignored SIGINT stays ignored. */
/* statuses of the long calls: 1 no convergence (the loops could not be closed), 2 singular (a dead point),
   3 step size below its limit, 4 a declared branch condition would not hold, 5 interrupted */
#define MS_OFF_BRANCH 4
#define MS_INTERRUPTED 5
static volatile sig_atomic_t ms_stop = 0;
static void ms_on_sigint(int sig) { (void)sig; ms_stop = 1; }
#if defined(_POSIX_VERSION) || defined(SA_RESTART)
typedef struct sigaction ms_handler;
static int ms_catch(ms_handler *old) {
  struct sigaction sa;
  if (sigaction(SIGINT, NULL, old) != 0 || old->sa_handler == ms_on_sigint) return 0;
  ms_stop = 0;
  if (old->sa_handler == SIG_IGN) return 0;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = ms_on_sigint;
  sigemptyset(&sa.sa_mask);
  return sigaction(SIGINT, &sa, NULL) == 0;
}
static void ms_release(int caught, const ms_handler *old) { if (caught) sigaction(SIGINT, old, NULL); }
#else
typedef void (*ms_handler)(int);
static int ms_catch(ms_handler *old) {
  *old = signal(SIGINT, ms_on_sigint);
  if (*old == SIG_ERR) return 0;
  if (*old == ms_on_sigint) return 0;
  ms_stop = 0;
  if (*old == SIG_IGN) { signal(SIGINT, SIG_IGN); return 0; }
  return 1;
}
static void ms_release(int caught, const ms_handler *old) { if (caught) signal(SIGINT, *old); }
#endif
"""

KERNELS = r"""

/* After a tiny correction q -= dx (|d| <= tol rad per angle), rotate the stored sines and cosines by it,
   exact to rounding (the neglected terms are O(d^3)), instead of calling sin and cos again. */
static void rotate_trig(double *sc, const double *dx) {
  for (int b = 0; b < NSC / 2 && 2 * b + 1 < NSC && 3 * b + 2 < NQ; ++b) {
    const double d = -dx[3 * b + 2], s0 = sc[2 * b], c0 = sc[2 * b + 1], h = 1.0 - 0.5 * d * d;
    sc[2 * b] = s0 * h + c0 * d;
    sc[2 * b + 1] = c0 * h - s0 * d;
  }
}

/* Newton on Phi(q, th) = 0 from q until a correction step is below tol (relative to the row scales),
   so that q is then exact to rounding; on return a holds the factorisation at the final q.
   Returns 0 on success, 1 if it did not converge, 2 if the Jacobian is singular. */
static int newton(double *q, double *sc, const double *th, const double *p, const double *scale, double tol,
                  int maxit, double *a, int *piv) {
  double r[NROW], dx[NQ];
  for (int it = 0; it < maxit; ++it) {
    trig1(q, sc);
    phi1_s(q, th, p, sc, r);
    jac_slots(q, sc, p, a);
    if (lu_factor(a, piv)) return 2;
    lu_solve(a, piv, r, dx);
    double step = 0.0;
    for (int i = 0; i < NQ; ++i) { q[i] -= dx[i]; double v = fabs(dx[i]) / scale[i]; if (!(v <= step)) step = v; }
    if (step <= tol) {
      rotate_trig(sc, dx);
      jac_slots(q, sc, p, a);
      return lu_factor(a, piv) ? 2 : 0;
    }
  }
  return 1;
}

/* Velocity coefficients dq = dq/dth (one coordinate) and second derivatives ddq at factored a. */
static void coefficients(const double *q, const double *sc, const double *p, const double *a, const int *piv,
                         double *dq, double *ddq) {
  double e[NROW], g[NROW];
  memset(e, 0, sizeof e);
  e[NJ] = 1.0;
  lu_solve(a, piv, e, dq);
  gamma1_s(q, dq, p, sc, g);
  for (int i = 0; i < NROW; ++i) g[i] = -g[i];
  lu_solve(a, piv, g, ddq);
}

/* Newton from a prediction q (with its sines and cosines sc), whose first step reuses the factorisation
   still held in a (that of the previous configuration: a chord step). Its error after the step is about
   (change of Phi_q) * step, so it is accepted only when the step is far below tol; closely spaced samples
   then cost one factorisation each, at the solution. Otherwise full Newton takes over. */
static int newton_warm(double *q, double *sc, const double *th, const double *p, const double *scale, double tol,
                       int maxit, double *a, int *piv) {
  double r[NROW], dx[NQ], q_in[NQ];
  memcpy(q_in, q, sizeof q_in);
  phi1_s(q, th, p, sc, r);
  lu_solve(a, piv, r, dx);
  double step = 0.0;
  for (int i = 0; i < NQ; ++i) { double v = fabs(dx[i]) / scale[i]; if (!(v <= step)) step = v; }
  if (!(step <= 1e-3 * tol)) {
    memcpy(q, q_in, sizeof q_in);
    return newton(q, sc, th, p, scale, tol, maxit, a, piv);
  }
  for (int i = 0; i < NQ; ++i) q[i] -= dx[i];
  rotate_trig(sc, dx);
  jac_slots(q, sc, p, a);
  return lu_factor(a, piv) ? 2 : 0;
}

static void predict(double *q, const double *dq, const double *ddq, double h) {
  for (int i = 0; i < NQ; ++i) q[i] += h * dq[i] + 0.5 * h * h * ddq[i];
}

/* Sines and cosines at q_new from those at q_old: for angle increments d below 0.01 rad, a rotation by
   sin d and cos d from their Taylor series (exact to rounding there) replaces the calls to sin and cos;
   every TRIG_ANCHOR turns (or for a larger increment) they are computed afresh, so rounding cannot
   accumulate. */
#define TRIG_ANCHOR 16
static void turn_trig(double *sc, const double *q_old, const double *q_new, int *turns) {
  int fresh = ++*turns >= TRIG_ANCHOR;
  for (int b = 0; b < NSC / 2 && 3 * b + 2 < NQ; ++b) fresh |= !(fabs(q_new[3 * b + 2] - q_old[3 * b + 2]) < 1e-2);
  if (fresh) { *turns = 0; trig1(q_new, sc); return; }
  for (int b = 0; b < NSC / 2 && 3 * b + 2 < NQ; ++b) {
    const double d = q_new[3 * b + 2] - q_old[3 * b + 2], d2 = d * d;
    const double sd = d * (1.0 - d2 / 6.0 * (1.0 - d2 / 20.0 * (1.0 - d2 / 42.0)));
    const double cd = 1.0 - d2 / 2.0 * (1.0 - d2 / 12.0 * (1.0 - d2 / 30.0));
    const double s0 = sc[2 * b], c0 = sc[2 * b + 1];
    sc[2 * b] = s0 * cd + c0 * sd;
    sc[2 * b + 1] = c0 * cd - s0 * sd;
  }
}

/* Solve the one-coordinate configuration at th1 from a solved (q, dq, ddq) at th0, in steps of at most
   hmax; on return q, dq, ddq, a are at th1. */
static int advance(double *q, double *sc, double *dq, double *ddq, double th0, double th1, const double *p,
                   const double *scale, double tol, int maxit, double hmax, double *a, int *piv, int *turns) {
  const double span = th1 - th0;
  int steps = (int)ceil(fabs(span) / hmax);
  if (steps < 1) steps = 1;
  for (int s = 1; s <= steps; ++s) {
    const double h = span / steps;
    const double th = th0 + span * s / steps;
    double q_old[NQ];
    memcpy(q_old, q, sizeof q_old);
    predict(q, dq, ddq, h);
    turn_trig(sc, q_old, q, turns);
    const int status = newton_warm(q, sc, &th, p, scale, tol, maxit, a, piv);
    if (status) return status;
    coefficients(q, sc, p, a, piv, dq, ddq);
  }
  return 0;
}

/* Factorisations of Phi_q at n configurations q (n x NQ) by the static sparse elimination, into a
   (n x LU_NSLOT) and piv (n x LU_NBLOCK); ok[s] is 0 where Phi_q is singular (its slots are then NaN
   and its pivots the identity, so that its solutions are NaN and no other sample's are touched). Returns 0,
   or MS_INTERRUPTED. */
int ms_factor(int n, const double *q, const double *p, double *a, int *piv, int *ok) {
  ms_handler old;
  const int caught = ms_catch(&old);
  int status = 0;
  for (int s = 0; s < n; ++s) {
    if (ms_stop) { status = MS_INTERRUPTED; break; }
    double sc[NSC], *as = a + (size_t)s * LU_NSLOT;
    trig1(q + (size_t)s * NQ, sc);
    jac_slots(q + (size_t)s * NQ, sc, p, as);
    ok[s] = !lu_factor(as, piv + (size_t)s * LU_NBLOCK);
    if (!ok[s]) {
      for (int i = 0; i < LU_NSLOT; ++i) as[i] = NAN;
      for (int k = 0; k < LU_NBLOCK; ++k) piv[(size_t)s * LU_NBLOCK + k] = k;
    }
  }
  ms_release(caught, &old);
  return status;
}

/* Phi_q x = b (or Phi_q^T x = b if transpose) at n factorised samples, m right-hand sides each:
   b and x are n x m x NQ. Returns 0, or MS_INTERRUPTED. */
int ms_solve(int n, int m, int transpose, const double *a, const int *piv, const double *b, double *x) {
  double w[NQ];
  ms_handler old;
  const int caught = ms_catch(&old);
  int status = 0;
  for (int s = 0; s < n && !status; ++s) {
    if (ms_stop) status = MS_INTERRUPTED;
    for (int k = 0; k < m && !status; ++k) {
      const size_t at = ((size_t)s * m + k) * NQ;
      memcpy(w, b + at, sizeof w);
      if (transpose) lu_solve_t(a + (size_t)s * LU_NSLOT, piv + (size_t)s * LU_NBLOCK, w, x + at);
      else lu_solve(a + (size_t)s * LU_NSLOT, piv + (size_t)s * LU_NBLOCK, w, x + at);
    }
  }
  ms_release(caught, &old);
  return status;
}

/* One state of a mechanism with any number of coordinates, for a right-hand side: from the prediction q
   (in/out), Newton at th to rounding, then J = dq/dth (NQ x NTH, row-major), a0 = -Phi_q^-1 gamma(q, J thd)
   (so that qdd = J thdd + a0) and the applied forces; the factorisation of Phi_q at q goes to lu (LU_NSLOT)
   and lu_piv (LU_NBLOCK) unless they are NULL (as ms_factor's, for ms_solve). Returns 0, 1 (no
   convergence) or 2 (singular). */
int ms_track(double *q, const double *th, const double *thd, const double *p, const double *scale, double tol,
             int maxit, double *jq, double *a0, double *app, double *lu, int *lu_piv) {
  double sc[NSC], a[LU_NSLOT], e[NROW], col[NQ], qd[NQ], g[NROW];
  int piv[LU_NBLOCK];
  const int status = newton(q, sc, th, p, scale, tol, maxit, a, piv);
  if (status) return status;
  for (int j = 0; j < NTH; ++j) {
    memset(e, 0, sizeof e);
    e[NJ + j] = 1.0;
    lu_solve(a, piv, e, col);
    for (int i = 0; i < NQ; ++i) jq[i * NTH + j] = col[i];
  }
  for (int i = 0; i < NQ; ++i) {
    qd[i] = 0.0;
    for (int j = 0; j < NTH; ++j) qd[i] += jq[i * NTH + j] * thd[j];
  }
  gamma1_s(q, qd, p, sc, g);
  for (int i = 0; i < NROW; ++i) g[i] = -g[i];
  lu_solve(a, piv, g, a0);
  applied1_s(q, p, sc, app);
  if (lu) memcpy(lu, a, sizeof a);
  if (lu_piv) memcpy(lu_piv, piv, sizeof piv);
  return 0;
}

/* Inverse dynamics of a one-coordinate mechanism over n samples th (in path order), starting from the
   configuration q0 near th[0]. Per sample: the unknowns U (reactions, then the driving force) for three
   right-hand sides (per unit thetadd, per unit thetad^2, static loads), the largest velocity coefficient
   (each relative to its coordinate's scale; large near a dead point), the smallest branch condition, and q
   (if q_out is not NULL). Returns -1, or the index of the first sample that failed
   (*status: 1 no convergence, 2 singular, 5 interrupted). */
static int inverse_run(int n, const double *th, const double *p, const double *q0, const double *scale, double tol,
                       int maxit, double hmax, double *q_out, double *coef_max, double *branch_min, double *u_out,
                       int *status) {
  double q[NQ], sc[NSC], dq[NQ], ddq[NQ], a[LU_NSLOT], mass[NQ], rhs[NQ], app[NQ], u[NROW], br[NBRANCH];
  int piv[LU_NBLOCK], turns = 0;
  memcpy(q, q0, sizeof q);
  mass1(p, mass);
  *status = newton(q, sc, th, p, scale, tol, maxit, a, piv);
  if (*status) return 0;
  coefficients(q, sc, p, a, piv, dq, ddq);
  for (int s = 0; s < n; ++s) {
    if (ms_stop) { *status = MS_INTERRUPTED; return s; }
    if (s > 0) {
      *status = advance(q, sc, dq, ddq, th[s - 1], th[s], p, scale, tol, maxit, hmax, a, piv, &turns);
      if (*status) return s;
    }
    applied1_s(q, p, sc, app);
    double *out = u_out + (size_t)s * NROW * 3;
    for (int i = 0; i < NQ; ++i) rhs[i] = mass[i] * dq[i];
    lu_solve_t(a, piv, rhs, u);
    for (int i = 0; i < NROW; ++i) out[3 * i] = u[i];
    for (int i = 0; i < NQ; ++i) rhs[i] = mass[i] * ddq[i];
    lu_solve_t(a, piv, rhs, u);
    for (int i = 0; i < NROW; ++i) out[3 * i + 1] = u[i];
    for (int i = 0; i < NQ; ++i) rhs[i] = -app[i];
    lu_solve_t(a, piv, rhs, u);
    for (int i = 0; i < NROW; ++i) out[3 * i + 2] = u[i];
    double cm = 0.0;
    for (int i = 0; i < NQ; ++i) { double v = fabs(dq[i]) / scale[i]; if (!(v <= cm)) cm = v; }
    coef_max[s] = cm;
    branch1_s(q, p, sc, br);
    double bm = 1.0;
    for (int i = 0; i < NBRANCH_USED; ++i) if (!(br[i] >= bm)) bm = br[i];
    branch_min[s] = bm;
    if (q_out) memcpy(q_out + (size_t)s * NQ, q, sizeof q);
  }
  return -1;
}

int ms_inverse(int n, const double *th, const double *p, const double *q0, const double *scale, double tol,
               int maxit, double hmax, double *q_out, double *coef_max, double *branch_min, double *u_out, int *status) {
  ms_handler old;
  const int caught = ms_catch(&old);
  const int failed = inverse_blocks(n, th, p, q0, scale, tol, maxit, hmax, q_out, coef_max, branch_min, u_out, status);
  ms_release(caught, &old);
  return failed;
}

/* The inverse dynamics of nsets parameter sets along the same n samples th, set-major, in one call: set k
   has the parameters P[k * NPAR ..], the configuration Q0[k * NQ ..] near th[0], the coordinate scales
   SCALE[k * NQ ..] and the largest step HMAX[k]; its outputs are those of ms_inverse at offsets k * n
   (coef_max, branch_min) and k * n * NROW * 3 (u_out), failed[k] its return value and status[k] its
   status. Returns 0, or MS_INTERRUPTED (the sets from the interrupted one on are not computed). */
int ms_inverse_sets(int nsets, int n, const double *th, const double *P, const double *Q0, const double *SCALE,
                    const double *HMAX, double tol, int maxit, double *coef_max, double *branch_min, double *u_out,
                    int *failed, int *status) {
  ms_handler old;
  const int caught = ms_catch(&old);
  int result = 0;
  for (int k = 0; k < nsets; ++k) {
    const size_t off = (size_t)k * n;
    failed[k] = inverse_blocks(n, th, P + (size_t)k * NPAR, Q0 + (size_t)k * NQ, SCALE + (size_t)k * NQ, tol, maxit,
                            HMAX[k], NULL, coef_max + off, branch_min + off, u_out + off * NROW * 3, status + k);
    if (status[k] == MS_INTERRUPTED) { result = MS_INTERRUPTED; break; }
  }
  ms_release(caught, &old);
  return result;
}

/* ---- the reduced one-coordinate ODE y' = f(y), y = (theta, omega): M thetadd + h omega^2 + G = torque ---- */

/* f at a solved configuration (q, sc, dq, ddq at theta, factorisation in a) and, if jac is not NULL, its
   exact Jacobian df/dy (row-major 2 x 2), from the third-order coefficients (Phi_q q''' = -gamma3):
   M' = 2 h, h' = sum m (q''^2 + q' q'''), G' = -(q' . dQ/dq q' + Q . q''). */
static void reduced_ode(const double *q, const double *sc, const double *dq, const double *ddq, const double *a,
                        const int *piv, const double *p, const double *mass, double torque, double omega,
                        double *f, double *jac) {
  double app[NQ], big_m = 0.0, half_dm = 0.0, g = 0.0;
  applied1_s(q, p, sc, app);
  for (int i = 0; i < NQ; ++i) {
    big_m += mass[i] * dq[i] * dq[i];
    half_dm += mass[i] * dq[i] * ddq[i];
    g -= app[i] * dq[i];
  }
  f[0] = omega;
  f[1] = (torque - half_dm * omega * omega - g) / big_m;
  if (!jac) return;
  double r[NROW], d3[NQ], rate;
  gamma3_1_s(q, dq, ddq, p, sc, r);
  for (int i = 0; i < NROW; ++i) r[i] = -r[i];
  lu_solve(a, piv, r, d3);
  apprate1_s(q, dq, p, sc, &rate);
  double dh = 0.0, dg = -rate;
  for (int i = 0; i < NQ; ++i) {
    dh += mass[i] * (ddq[i] * ddq[i] + dq[i] * d3[i]);
    dg -= app[i] * ddq[i];
  }
  jac[0] = 0.0;
  jac[1] = 1.0;
  jac[2] = (-dh * omega * omega - dg - 2.0 * half_dm * f[1]) / big_m;
  jac[3] = -2.0 * half_dm * omega / big_m;
}

/* The reduced ODE's right-hand side f (n x 2) and exact Jacobian (n x 2 x 2) at n states (th[s], om[s]),
   th in path order from the configuration q0 near th[0], under a constant torque. Returns -1, or the
   index of the first sample that failed (*status 1: no convergence, 2: singular, 5: interrupted). */
static int ode_run(int n, const double *th, const double *om, double torque, const double *p, const double *q0,
                   const double *scale, double tol, int maxit, double hmax, double *f_out, double *jac_out, int *status) {
  double q[NQ], sc[NSC], dq[NQ], ddq[NQ], a[LU_NSLOT], mass[NQ];
  int piv[LU_NBLOCK], turns = 0;
  memcpy(q, q0, sizeof q);
  mass1(p, mass);
  *status = newton(q, sc, th, p, scale, tol, maxit, a, piv);
  if (*status) return 0;
  coefficients(q, sc, p, a, piv, dq, ddq);
  for (int s = 0; s < n; ++s) {
    if (ms_stop) { *status = MS_INTERRUPTED; return s; }
    if (s > 0) {
      *status = advance(q, sc, dq, ddq, th[s - 1], th[s], p, scale, tol, maxit, hmax, a, piv, &turns);
      if (*status) return s;
    }
    reduced_ode(q, sc, dq, ddq, a, piv, p, mass, torque, om[s], f_out + 2 * (size_t)s, jac_out + 4 * (size_t)s);
  }
  return -1;
}

int ms_ode(int n, const double *th, const double *om, double torque, const double *p, const double *q0,
           const double *scale, double tol, int maxit, double hmax, double *f_out, double *jac_out, int *status) {
  ms_handler old;
  const int caught = ms_catch(&old);
  const int failed = ode_run(n, th, om, torque, p, q0, scale, tol, maxit, hmax, f_out, jac_out, status);
  ms_release(caught, &old);
  return failed;
}

/* ---- forward dynamics of a one-coordinate mechanism: reduced form, DOP853 ---- */
typedef struct {
  double q[NQ], sc[NSC], dq[NQ], ddq[NQ], th, a[LU_NSLOT], mass[NQ];
  int piv[LU_NBLOCK];
  const double *p, *scale;
  double tol, hmax, torque;
  int maxit, status, turns;
  long nfev;
} Work;

/* A trial state farther than MAX_WALK continuation steps from the last solved one is not walked to:
   its step is rejected (a shorter one follows), as is one where the loops do not close on the way. */
#define MAX_WALK 64

/* Whether q satisfies every declared branch condition. */
static int on_branch(const double *q, const double *sc, const double *p) {
  double br[NBRANCH];
  branch1_s(q, p, sc, br);
  for (int i = 0; i < NBRANCH_USED; ++i) if (!(br[i] > 0.0)) return 0;
  return 1;
}

static void rhs(Work *w, const double *y, double *f) {
  w->nfev++;
  if (w->status) { f[0] = f[1] = 0.0; return; }
  if (!(fabs(y[0] - w->th) <= MAX_WALK * w->hmax) || !(fabs(y[1]) < INFINITY)) { w->status = 1; f[0] = f[1] = 0.0; return; }
  int st = advance(w->q, w->sc, w->dq, w->ddq, w->th, y[0], w->p, w->scale, w->tol, w->maxit, w->hmax, w->a, w->piv, &w->turns);
  if (!st && !on_branch(w->q, w->sc, w->p)) st = MS_OFF_BRANCH;
  if (st) { w->status = st; f[0] = f[1] = 0.0; return; }
  w->th = y[0];
  reduced_ode(w->q, w->sc, w->dq, w->ddq, w->a, w->piv, w->p, w->mass, w->torque, y[1], f, 0);
}

/* DOP853: Hairer's explicit Runge-Kutta 8(5,3) with the coefficients, error norm, step-size control and
   dense output of scipy's solve_ivp(method="DOP853"), so that an rtol buys the same accuracy on both
   backends. Row 12 of DOP_A gives the new state (the weights b); rows 13-15 are the dense output's stages. */
static const double DOP_A[16][16] = {
  {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
  {0.05260015195876773, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
  {0.0197250569845379, 0.0591751709536137, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
  {0.02958758547680685, 0.0, 0.08876275643042054, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
  {0.2413651341592667, 0.0, -0.8845494793282861, 0.924834003261792, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
  {0.037037037037037035, 0.0, 0.0, 0.17082860872947386, 0.12546768756682242, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
  {0.037109375, 0.0, 0.0, 0.17025221101954405, 0.06021653898045596, -0.017578125, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
  {0.03709200011850479, 0.0, 0.0, 0.17038392571223998, 0.10726203044637328, -0.015319437748624402, 0.008273789163814023, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
  {0.6241109587160757, 0.0, 0.0, -3.3608926294469414, -0.868219346841726, 27.59209969944671, 20.154067550477894, -43.48988418106996, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
  {0.47766253643826434, 0.0, 0.0, -2.4881146199716677, -0.590290826836843, 21.230051448181193, 15.279233632882423, -33.28821096898486, -0.020331201708508627, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
  {-0.9371424300859873, 0.0, 0.0, 5.186372428844064, 1.0914373489967295, -8.149787010746927, -18.52006565999696, 22.739487099350505, 2.4936055526796523, -3.0467644718982196, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
  {2.273310147516538, 0.0, 0.0, -10.53449546673725, -2.0008720582248625, -17.9589318631188, 27.94888452941996, -2.8589982771350235, -8.87285693353063, 12.360567175794303, 0.6433927460157636, 0.0, 0.0, 0.0, 0.0, 0.0},
  {0.054293734116568765, 0.0, 0.0, 0.0, 0.0, 4.450312892752409, 1.8915178993145003, -5.801203960010585, 0.3111643669578199, -0.1521609496625161, 0.20136540080403034, 0.04471061572777259, 0.0, 0.0, 0.0, 0.0},
  {0.056167502283047954, 0.0, 0.0, 0.0, 0.0, 0.0, 0.25350021021662483, -0.2462390374708025, -0.12419142326381637, 0.15329179827876568, 0.00820105229563469, 0.007567897660545699, -0.008298, 0.0, 0.0, 0.0},
  {0.03183464816350214, 0.0, 0.0, 0.0, 0.0, 0.028300909672366776, 0.053541988307438566, -0.05492374857139099, 0.0, 0.0, -0.00010834732869724932, 0.0003825710908356584, -0.00034046500868740456, 0.1413124436746325, 0.0, 0.0},
  {-0.42889630158379194, 0.0, 0.0, 0.0, 0.0, -4.697621415361164, 7.683421196062599, 4.06898981839711, 0.3567271874552811, 0.0, 0.0, 0.0, -0.0013990241651590145, 2.9475147891527724, -9.15095847217987, 0.0}};
static const double DOP_E3[13] = {-0.18980075407240762, 0.0, 0.0, 0.0, 0.0, 4.450312892752409, 1.8915178993145003, -5.801203960010585, -0.4226823213237919, -0.1521609496625161, 0.20136540080403034, 0.02265179219836082, 0.0};
static const double DOP_E5[13] = {0.01312004499419488, 0.0, 0.0, 0.0, 0.0, -1.2251564463762044, -0.4957589496572502, 1.6643771824549864, -0.35032884874997366, 0.3341791187130175, 0.08192320648511571, -0.022355307863886294, 0.0};
static const double DOP_D[4][16] = {
  {-8.428938276109013, 0.0, 0.0, 0.0, 0.0, 0.5667149535193777, -3.0689499459498917, 2.38466765651207, 2.117034582445028, -0.871391583777973, 2.2404374302607883, 0.6315787787694688, -0.08899033645133331, 18.148505520854727, -9.194632392478356, -4.436036387594894},
  {10.427508642579134, 0.0, 0.0, 0.0, 0.0, 242.28349177525817, 165.20045171727028, -374.5467547226902, -22.113666853125306, 7.733432668472264, -30.674084731089398, -9.332130526430229, 15.697238121770845, -31.139403219565178, -9.35292435884448, 35.81684148639408},
  {19.985053242002433, 0.0, 0.0, 0.0, 0.0, -387.0373087493518, -189.17813819516758, 527.8081592054236, -11.57390253995963, 6.8812326946963, -1.0006050966910838, 0.7777137798053443, -2.778205752353508, -60.19669523126412, 84.32040550667716, 11.99229113618279},
  {-25.69393346270375, 0.0, 0.0, 0.0, 0.0, -154.18974869023643, -231.5293791760455, 357.6391179106141, 93.40532418362432, -37.45832313645163, 104.0996495089623, 29.8402934266605, -43.53345659001114, 96.32455395918828, -39.17726167561544, -149.72683625798564}};

/* One trial step of size h from y with k[0] = f(y): stages k[1..11], the new state y1 and k[12] = f(y1).
   Returns scipy's error norm, or -1 when a stage could not be evaluated (the step must be rejected). */
static double dop853_step(Work *w, const double *y, double h, double k[16][2], double *y1, double rtol, double atol) {
  double yt[2];
  for (int s = 1; s <= 12; ++s) {
    for (int i = 0; i < 2; ++i) {
      double d = 0.0;
      for (int j = 0; j < s; ++j) d += DOP_A[s][j] * k[j][i];
      yt[i] = y[i] + h * d;
    }
    if (s == 12) { y1[0] = yt[0]; y1[1] = yt[1]; }
    rhs(w, yt, k[s]);
  }
  if (w->status) return -1.0;
  double e5 = 0.0, e3 = 0.0;
  for (int i = 0; i < 2; ++i) {
    const double sc = atol + rtol * fmax(fabs(y[i]), fabs(y1[i]));
    double a5 = 0.0, a3 = 0.0;
    for (int j = 0; j < 13; ++j) { a5 += DOP_E5[j] * k[j][i]; a3 += DOP_E3[j] * k[j][i]; }
    e5 += (a5 / sc) * (a5 / sc);
    e3 += (a3 / sc) * (a3 / sc);
  }
  if (e5 == 0.0 && e3 == 0.0) return 0.0;
  const double en = fabs(h) * e5 / sqrt((e5 + 0.01 * e3) * 2.0);
  return en == en ? en : -1.0;
}

/* The dense output F (7 x 2) of an accepted step from y to y1, with its three extra stages; returns 0, or
   the tracker's failure status. */
static int dop853_dense(Work *w, const double *y, const double *y1, double h, double k[16][2], double F[7][2]) {
  double yt[2];
  for (int s = 13; s < 16; ++s) {
    for (int i = 0; i < 2; ++i) {
      double d = 0.0;
      for (int j = 0; j < s; ++j) d += DOP_A[s][j] * k[j][i];
      yt[i] = y[i] + h * d;
    }
    rhs(w, yt, k[s]);
  }
  if (w->status) return w->status;
  for (int i = 0; i < 2; ++i) {
    const double dy = y1[i] - y[i];
    F[0][i] = dy;
    F[1][i] = h * k[0][i] - dy;
    F[2][i] = 2.0 * dy - h * (k[12][i] + k[0][i]);
    for (int r = 0; r < 4; ++r) {
      double d = 0.0;
      for (int j = 0; j < 16; ++j) d += DOP_D[r][j] * k[j][i];
      F[3 + r][i] = h * d;
    }
  }
  return 0;
}

/* The dense output at t of the step from (t0, y0) of size h. */
static void dop853_eval(double F[7][2], const double *y0, double t0, double h, double t, double *y) {
  const double x = (t - t0) / h;
  for (int i = 0; i < 2; ++i) {
    double v = 0.0;
    for (int r = 6; r >= 0; --r) { v += F[r][i]; v *= (r % 2 == 0) ? x : 1.0 - x; }
    y[i] = y0[i] + v;
  }
}

/* scipy's initial step (Hairer, Norsett & Wanner II.4) for an error estimator of order 7. */
static double dop853_first_step(Work *w, const double *y, const double *f0, double t_end, double rtol, double atol) {
  double d0 = 0.0, d1 = 0.0, d2 = 0.0, sc[2], y1[2], f1[2];
  for (int i = 0; i < 2; ++i) {
    sc[i] = atol + rtol * fabs(y[i]);
    d0 += (y[i] / sc[i]) * (y[i] / sc[i]);
    d1 += (f0[i] / sc[i]) * (f0[i] / sc[i]);
  }
  d0 = sqrt(d0 / 2.0);
  d1 = sqrt(d1 / 2.0);
  double h0 = (d0 < 1e-5 || d1 < 1e-5) ? 1e-6 : 0.01 * d0 / d1;
  h0 = fmin(h0, t_end);
  const Work saved = *w;
  for (int i = 0; i < 2; ++i) y1[i] = y[i] + h0 * f0[i];
  rhs(w, y1, f1);
  if (w->status) { const long n = w->nfev; *w = saved; w->nfev = n; f1[0] = f0[0]; f1[1] = f0[1]; }
  for (int i = 0; i < 2; ++i) d2 += ((f1[i] - f0[i]) / sc[i]) * ((f1[i] - f0[i]) / sc[i]);
  d2 = sqrt(d2 / 2.0) / h0;
  const double h1 = (d1 <= 1e-15 && d2 <= 1e-15) ? fmax(1e-6, h0 * 1e-3) : pow(0.01 / fmax(d1, d2), 1.0 / 8.0);
  return fmin(fmin(100.0 * h0, h1), t_end);
}

/* Integrate from (th0, om0) to t_end under a constant torque; write the state at the increasing grid
   times grid_t (n_grid points, grid_t[0] = 0). Events: for each e < n_ev, the component ev_comp[e] crossing ev_value[e] with
   direction ev_dir[e] (0 any, +1 rising, -1 falling); ev_terminal[e] stops the run. A step whose stages the
   tracker cannot reach is rejected and retried shorter. Returns the number of grid points written;
   ev_t/ev_id receive up to max_events located events (*n_events), in time order. *status: 0, or why the
   run ended early (1 the loops could not be closed, 2 a dead point, 3 the step size fell below its limit,
   4 a declared branch condition would not hold, 5 interrupted). */
static int forward_run(double torque, double th0, double om0, double t_end, const double *grid_t, int n_grid, double rtol, double atol,
               const double *p, const double *q0, const double *scale, double tol, int maxit, double hmax,
               int n_ev, const int *ev_comp, const double *ev_value, const int *ev_dir, const int *ev_terminal,
               int max_events, double *ev_t, int *ev_id, int *n_events, double *grid_y, long *nfev, int *status) {
  Work w;
  memcpy(w.q, q0, sizeof w.q);
  w.p = p; w.scale = scale; w.tol = tol; w.hmax = hmax; w.maxit = maxit; w.torque = torque; w.status = 0; w.nfev = 0; w.turns = 0;
  w.th = th0;
  mass1(p, w.mass);
  *n_events = 0;
  *status = newton(w.q, w.sc, &th0, p, scale, tol, maxit, w.a, w.piv);
  if (*status) return 0;
  coefficients(w.q, w.sc, p, w.a, w.piv, w.dq, w.ddq);
  double y[2] = {th0, om0}, y1[2], k[16][2], F[7][2];
  rhs(&w, y, k[0]);
  if (w.status) { *status = w.status; *nfev = w.nfev; return 0; }
  double t = 0.0, h = dop853_first_step(&w, y, k[0], t_end, rtol, atol);
  int written = 0, stop = 0, rejected = 0, failure = 0;
  grid_y[0] = y[0]; grid_y[1] = y[1];
  written = 1;
  while (!stop && t < t_end && written < n_grid) {
    if (ms_stop) { *status = MS_INTERRUPTED; break; }
    if (h < 10.0 * fabs(nextafter(t, INFINITY) - t)) { *status = failure ? failure : 3; break; }
    if (t + h > t_end) h = t_end - t;
    const Work saved = w;
    double en = dop853_step(&w, y, h, k, y1, rtol, atol);
    const double t_new = t + h;
    int need_dense = en >= 0.0 && en < 1.0 && written < n_grid && grid_t[written] <= t_new;
    for (int e = 0; e < n_ev && en >= 0.0 && en < 1.0; ++e) {
      const double g0 = y[ev_comp[e]] - ev_value[e], g1 = y1[ev_comp[e]] - ev_value[e];
      need_dense |= (g0 < 0.0 && g1 >= 0.0) || (g0 > 0.0 && g1 <= 0.0);
    }
    if (need_dense && dop853_dense(&w, y, y1, h, k, F)) en = -1.0;
    if (!(en >= 0.0 && en < 1.0)) {                    /* rejected: the tracker back at the step's start */
      if (en < 0.0) { failure = w.status; const long n = w.nfev; w = saved; w.nfev = n; }
      h *= en < 0.0 ? 0.2 : fmax(0.2, 0.9 * pow(en, -1.0 / 8.0));
      rejected = 1;
      continue;
    }
    double t_stop = t_new;
    int order[64], n_hit = 0;
    double when[64];
    for (int e = 0; e < n_ev; ++e) {
      const int c = ev_comp[e];
      const double g0 = y[c] - ev_value[e], g1 = y1[c] - ev_value[e];
      const int rising = g0 < 0.0 && g1 >= 0.0, falling = g0 > 0.0 && g1 <= 0.0;
      if (!((rising && ev_dir[e] >= 0) || (falling && ev_dir[e] <= 0))) continue;
      double lo = t, hi = t_new, ys[2];
      for (int it = 0; it < 200 && hi - lo > 1e-15 * fmax(1.0, fabs(hi)); ++it) {
        const double mid = 0.5 * (lo + hi);
        dop853_eval(F, y, t, h, mid, ys);
        const double gm = ys[c] - ev_value[e];
        if ((gm < 0.0) == (g0 < 0.0) && gm != 0.0) lo = mid; else hi = mid;
      }
      if (n_hit < 64) { int at = n_hit++; while (at > 0 && when[at - 1] > hi) { when[at] = when[at - 1]; order[at] = order[at - 1]; --at; } when[at] = hi; order[at] = e; }
      if (ev_terminal[e] && hi < t_stop) { t_stop = hi; stop = 1; }
    }
    for (int i = 0; i < n_hit && when[i] <= t_stop; ++i)
      if (*n_events < max_events) { ev_t[*n_events] = when[i]; ev_id[*n_events] = order[i]; (*n_events)++; }
    while (written < n_grid && grid_t[written] <= t_stop) {
      dop853_eval(F, y, t, h, grid_t[written], grid_y + 2 * written);
      written++;
    }
    t = t_new;
    y[0] = y1[0]; y[1] = y1[1]; k[0][0] = k[12][0]; k[0][1] = k[12][1];
    double fac = en == 0.0 ? 10.0 : fmin(10.0, 0.9 * pow(en, -1.0 / 8.0));
    if (rejected) fac = fmin(1.0, fac);
    h *= fac;
    rejected = 0;
    failure = 0;
  }
  *nfev = w.nfev;
  return written;
}

int ms_forward(double torque, double th0, double om0, double t_end, const double *grid_t, int n_grid, double rtol, double atol,
               const double *p, const double *q0, const double *scale, double tol, int maxit, double hmax,
               int n_ev, const int *ev_comp, const double *ev_value, const int *ev_dir, const int *ev_terminal,
               int max_events, double *ev_t, int *ev_id, int *n_events, double *grid_y, long *nfev, int *status) {
  ms_handler old;
  const int caught = ms_catch(&old);
  const int written = forward_run(torque, th0, om0, t_end, grid_t, n_grid, rtol, atol, p, q0, scale, tol, maxit, hmax,
                                  n_ev, ev_comp, ev_value, ev_dir, ev_terminal, max_events, ev_t, ev_id, n_events,
                                  grid_y, nfev, status);
  ms_release(caught, &old);
  return written;
}
"""

BATCH = r"""
/* ---- batched entry points (the loop over samples is here, not in Python) ---- */
#define BATCH_QP(NAME, F, OUT)                                                                  \
  void NAME(int n, const double *q, const double *p, double *out) {                             \
    for (int s = 0; s < n; ++s) F(q + (size_t)s * NQ, p, out + (size_t)s * (OUT));             \
  }
BATCH_QP(ms_applied, applied1, NQ)
BATCH_QP(ms_jac, jac1, NROW * NQ)

void ms_phi(int n, const double *q, const double *th, const double *p, double *out) {
  for (int s = 0; s < n; ++s) phi1(q + (size_t)s * NQ, th + (size_t)s * NTH, p, out + (size_t)s * NROW);
}
void ms_gamma(int n, const double *q, const double *qd, const double *p, double *out) {
  for (int s = 0; s < n; ++s) gamma1(q + (size_t)s * NQ, qd + (size_t)s * NQ, p, out + (size_t)s * NROW);
}
void ms_gamma3(int n, const double *q, const double *qd, const double *qdd, const double *p, double *out) {
  for (int s = 0; s < n; ++s)
    gamma3_1(q + (size_t)s * NQ, qd + (size_t)s * NQ, qdd + (size_t)s * NQ, p, out + (size_t)s * NROW);
}
void ms_applied_rate(int n, const double *q, const double *qd, const double *p, double *out) {
  for (int s = 0; s < n; ++s) apprate1(q + (size_t)s * NQ, qd + (size_t)s * NQ, p, out + s);
}
void ms_energy(int n, const double *q, const double *qd, const double *p, double *out) {
  for (int s = 0; s < n; ++s) energy1(q + (size_t)s * NQ, qd + (size_t)s * NQ, p, out + (size_t)s * 2);
}
void ms_points(int n, const double *q, const double *p, double *out, int width) {
  for (int s = 0; s < n; ++s) points1(q + (size_t)s * NQ, p, out + (size_t)s * width);
}
void ms_branches(int n, const double *q, const double *p, double *out, int width) {
  for (int s = 0; s < n; ++s) branch1(q + (size_t)s * NQ, p, out + (size_t)s * width);
}
void ms_mass(const double *p, double *out) { mass1(p, out); }
"""
