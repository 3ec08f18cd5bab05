/* mechsym C runtime: the configuration tracker and the batched kernels of a one-coordinate mechanism
   (Newton, continuation, the sparse factorisation and solves, the tracked state of a simulation, inverse
   dynamics, the reduced ODE), included into a generated mechanism's source after its per-sample functions.
   Needs, from the generated source before it: the sizes NQ, NROW, NTH, NPAR, NJ, NSC, LU_NSLOT, LU_NBLOCK,
   NBRANCH, NBRANCH_USED; the per-sample functions trig1, phi1_s, gamma1_s, gamma3_1_s, applied1_s,
   apprate1_s, branch1_s, mass1 and jac_slots; the static sparse elimination lu_factor, lu_solve, lu_solve_t. */
#ifndef MS_KERNELS_H
#define MS_KERNELS_H
/* After a tiny correction q -= dx (|d| <= tol rad per angle), rotate the stored sines and cosines by it,
   exact to rounding (the neglected terms are O(d^3)), instead of calling sin and cos again. */
static void rotate_trig(double *sc, const double *dx) {
  for (int b = 0; b < NSC / 2 && 2 * b + 1 < NSC && 3 * b + 2 < NQ; ++b) {
    const double d = -dx[3 * b + 2], s0 = sc[2 * b], c0 = sc[2 * b + 1], h = 1.0 - 0.5 * d * d;
    sc[2 * b] = s0 * h + c0 * d;
    sc[2 * b + 1] = c0 * h - s0 * d;
  }
}

/* MS_CHORD_TOL, MS_MAX_STEP, MS_STEP and MS_STEP_FLOOR: ms_constants.h (mechsym/codegen/constants.py). */

/* Newton on Phi(q, th) = 0 from q until a correction step is below tol (relative to the row scales), or
   below MS_CHORD_TOL and followed by one chord step, so that q is then exact to rounding; on return a holds
   the factorisation at the final q. Returns 0 on success, 1 if it did not converge, 2 if the Jacobian is
   singular. */
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
    for (int i = 0; i < NQ; ++i) {
      const double v = fabs(dx[i]) / scale[i], cap = MS_MAX_STEP * scale[i];
      q[i] -= v <= MS_MAX_STEP ? dx[i] : (dx[i] > 0.0 ? cap : -cap);
      if (!(v <= step)) step = v;
    }
    if (step <= MS_CHORD_TOL) {
      rotate_trig(sc, dx);
      if (step > tol) {  /* the chord step */
        phi1_s(q, th, p, sc, r);
        lu_solve(a, piv, r, dx);
        for (int i = 0; i < NQ; ++i) q[i] -= dx[i];
        rotate_trig(sc, dx);
      }
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

/* The third derivative d3q along th at a solved configuration (Phi_q d3q = -gamma3(q, dq, ddq)). */
static void third(const double *q, const double *sc, const double *p, const double *a, const int *piv,
                  const double *dq, const double *ddq, double *d3) {
  double r[NROW];
  gamma3_1_s(q, dq, ddq, p, sc, r);
  for (int i = 0; i < NROW; ++i) r[i] = -r[i];
  lu_solve(a, piv, r, d3);
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

/* The deepest halving: hmax / 2^40 lies far below the floor. */
#define MS_MAX_HALVINGS 40
/* The signs that must not change along a branch (Solver.signature's rule): each declared branch condition's,
   or where none is declared the sign of det Phi_q (factored in a): it changes only through a dead point. */
#define MS_NSIGN (NBRANCH_USED ? NBRANCH_USED : 1)
static void branch_signs(const double *q, const double *sc, const double *p, const double *a, const int *piv,
                         int *sign) {
  if (!NBRANCH_USED) { sign[0] = lu_det_sign(a, piv); return; }
  double br[NBRANCH];
  branch1_s(q, p, sc, br);
  for (int i = 0; i < NBRANCH_USED; ++i) sign[i] = br[i] > 0.0;
}

/* One step from the solved (q, sc, dq, ddq at tha, factorised in a) to thb: second-order prediction, Newton.
   Returns 0 with everything at thb, or the status of the failure: 1 or 2 (Newton), MS_FAR (Newton converged
   farther than its largest step from the prediction: an angle may have gone a whole turn, which the signs
   below cannot tell), MS_OFF_BRANCH (a declared condition changed sign) or MS_DET_SIGN (det Phi_q did). */
static int advance_step(double *q, double *sc, double *dq, double *ddq, double tha, double thb, const double *p,
                        const double *scale, double tol, int maxit, double *a, int *piv, int *turns, const int *sign) {
  double q_old[NQ], pred[NQ];
  int now[MS_NSIGN];
  memcpy(q_old, q, sizeof q_old);
  predict(q, dq, ddq, thb - tha);
  memcpy(pred, q, sizeof pred);
  turn_trig(sc, q_old, q, turns);
  const int status = newton_warm(q, sc, &thb, p, scale, tol, maxit, a, piv);
  if (status) return status;
  for (int i = 0; i < NQ; ++i) if (!(fabs(q[i] - pred[i]) <= MS_MAX_STEP * scale[i])) return MS_FAR;
  branch_signs(q, sc, p, a, piv, now);
  if (memcmp(now, sign, sizeof now)) return NBRANCH_USED ? MS_OFF_BRANCH : MS_DET_SIGN;
  coefficients(q, sc, p, a, piv, dq, ddq);
  return 0;
}

/* ---- crossing a bifurcation ----
   Where the branch being followed crosses another (a bifurcation: [Phi_q Phi_th] loses rank, Phi_q is singular
   but the branch q(th) stays smooth), q' and q'' from Phi_q lose all accuracy near the point (0/0: their error
   grows like rounding / distance^3) and Newton barely converges. So near such a point the continuation
   bridges it: from the last well-conditioned state a, a third-order prediction across the point to c as far
   beyond it, Newton there, and every state between a and c from the degree-7 Hermite polynomial of q and its
   first three derivatives at both ends (exact coefficients; its error is about (|c - a| / 2)^8 / 8! times the
   eighth derivative). The bridge is kept only if c lies on the same branch signs, is as well conditioned as
   a, and the polynomial closes the loops inside it (MS_BRIDGE_RES); else the path is walked as before (a
   limit position, a dead point, a change of branch are named where the step floor is reached). Near: the
   smallest singular value of Phi_q (columns in their scales, estimated by one step of inverse iteration from a
   fixed vector) below 1/MS_BRIDGE_DROP of its value where the path started (MS_BRIDGE_DROP, MS_BRIDGE_RES:
   ms_constants.h). */
typedef struct {
  int on;               /* [th[0], th[1]] is bridged by the polynomial c[0..7] in s = (th - th[0]) / (th[1] - th[0]) */
  double th[2], c[8][NQ];
  double s_ref, s_now;  /* the singular-value estimate where the path started, and at the current state */
  double skip[2];       /* a span where a bridge failed: not tried again inside */
} Bridge;

/* The estimate of the smallest singular value of Phi_q diag(scale) at factored a (NQ == NROW): |r| / |x| for
   diag(scale) x = Phi_q^-1 r, r a fixed vector (one step of inverse iteration). */
static double sigma_estimate(const double *a, const int *piv, const double *scale) {
  double r[NROW], x[NQ], nr = 0.0, nx = 0.0;
  for (int i = 0; i < NROW; ++i) { r[i] = cos(1.7 * i + 0.3); nr += r[i] * r[i]; }
  lu_solve(a, piv, r, x);
  for (int i = 0; i < NQ; ++i) { const double v = x[i] / scale[i]; nx += v * v; }
  return nx > 0.0 ? sqrt(nr / nx) : 0.0;
}

static void bridge_start(Bridge *br, const double *a, const int *piv, const double *scale) {
  br->on = 0;
  br->skip[0] = br->skip[1] = NAN;
  br->s_ref = br->s_now = sigma_estimate(a, piv, scale);
}

static int bridge_holds(const Bridge *br, double th) {
  return br->on && (th - br->th[0]) * (th - br->th[1]) <= 0.0;
}

/* q, sc, dq, ddq at th on the bridge (d3 too unless NULL). */
static void bridge_state(const Bridge *br, double th, double *q, double *sc, double *dq, double *ddq, double *d3) {
  const double h = br->th[1] - br->th[0], s = (th - br->th[0]) / h;
  for (int i = 0; i < NQ; ++i) {
    double v = 0.0, d1 = 0.0, d2 = 0.0, e3 = 0.0;
    for (int k = 7; k >= 0; --k) {  /* Horner's scheme for the polynomial and its derivatives */
      if (k >= 3) e3 = e3 * s + k * (k - 1) * (k - 2) * br->c[k][i];
      if (k >= 2) d2 = d2 * s + k * (k - 1) * br->c[k][i];
      if (k >= 1) d1 = d1 * s + k * br->c[k][i];
      v = v * s + br->c[k][i];
    }
    q[i] = v; dq[i] = d1 / h; ddq[i] = d2 / (h * h);
    if (d3) d3[i] = e3 / (h * h * h);
  }
  trig1(q, sc);
}

/* A state at th from the solved one (q, sc, dq, ddq at th0, factorised in a) by the third-order prediction
   and Newton: into q2, sc2, dq2, ddq2, d3 (its third derivatives), a2, piv2. Returns 0 if Newton converged
   within its largest step of the prediction on the branch signs `sign`. */
static int solve_across(const double *q, const double *sc, const double *dq, const double *ddq, const double *a,
                        const int *piv, double th0, double th, const double *p, const double *scale, double tol,
                        int maxit, const int *sign, double *q2, double *sc2, double *dq2, double *ddq2, double *d3,
                        double *a2, int *piv2) {
  const double h = th - th0;
  double pred[NQ];
  int now[MS_NSIGN];
  third(q, sc, p, a, piv, dq, ddq, d3);
  for (int i = 0; i < NQ; ++i) q2[i] = pred[i] = q[i] + h * (dq[i] + h * (0.5 * ddq[i] + h * d3[i] / 6.0));
  if (newton(q2, sc2, &th, p, scale, tol, maxit, a2, piv2)) return 1;
  for (int i = 0; i < NQ; ++i) if (!(fabs(q2[i] - pred[i]) <= MS_MAX_STEP * scale[i])) return 1;
  branch_signs(q2, sc2, p, a2, piv2, now);
  if (memcmp(now, sign, sizeof now)) return 1;
  coefficients(q2, sc2, p, a2, piv2, dq2, ddq2);
  third(q2, sc2, p, a2, piv2, dq2, ddq2, d3);
  return 0;
}

/* Try to bridge, from the solved state (q, sc, dq, ddq at tha, factorised in a), the singular point that the
   estimates s_a at tha and s_b at thb (nearer it) place ahead: the bridge runs from the point hmax before it
   (or tha, if nearer) to as far beyond. Returns 1 with the bridge held (q and the rest untouched), or 0: the
   point is more than 2 hmax ahead (a later step tries again), or no bridge holds there (its span is then
   skipped by later attempts). */
static int bridge_try(Bridge *br, const double *q, const double *sc, const double *dq, const double *ddq,
                      const double *a, const int *piv, double tha, double thb, double s_a, double s_b,
                      const double *p, const double *scale, double tol, int maxit, double hmax, const int *sign) {
  const double zero = s_a > s_b ? thb + (thb - tha) * s_b / (s_a - s_b) : thb;
  double e[2][4][NQ], sce[NSC], ae[LU_NSLOT], r[NROW], size = 0.0, th[2];
  int pive[LU_NBLOCK];
  if (!(fabs(zero - tha) <= 2.0 * hmax) || zero == tha) return 0;  /* still far: a later step comes nearer */
  th[0] = fabs(zero - tha) > hmax ? zero - (zero > tha ? hmax : -hmax) : tha;
  th[1] = 2.0 * zero - th[0];
  br->skip[0] = tha; br->skip[1] = th[1];
  if (th[0] == tha) {
    memcpy(e[0][0], q, sizeof e[0][0]); memcpy(e[0][1], dq, sizeof e[0][1]); memcpy(e[0][2], ddq, sizeof e[0][2]);
    third(q, sc, p, a, piv, dq, ddq, e[0][3]);
    if (solve_across(q, sc, dq, ddq, a, piv, tha, th[1], p, scale, tol, maxit, sign, e[1][0], sce, e[1][1], e[1][2],
                     e[1][3], ae, pive)) return 0;
  } else {
    if (solve_across(q, sc, dq, ddq, a, piv, tha, th[0], p, scale, tol, maxit, sign, e[0][0], sce, e[0][1], e[0][2],
                     e[0][3], ae, pive)) return 0;
    s_a = sigma_estimate(ae, pive, scale);
    double sc0[NSC], a0[LU_NSLOT];
    int piv0[LU_NBLOCK];
    memcpy(sc0, sce, sizeof sc0); memcpy(a0, ae, sizeof a0); memcpy(piv0, pive, sizeof piv0);
    if (solve_across(e[0][0], sc0, e[0][1], e[0][2], a0, piv0, th[0], th[1], p, scale, tol, maxit, sign, e[1][0], sce,
                     e[1][1], e[1][2], e[1][3], ae, pive)) return 0;
  }
  if (!(sigma_estimate(ae, pive, scale) >= 0.5 * s_a)) return 0;  /* the far end as well conditioned */
  const double h = th[1] - th[0];
  for (int i = 0; i < NQ; ++i) {  /* the degree-7 Hermite polynomial in s = (th - th[0]) / h */
    const double c0 = e[0][0][i], c1 = h * e[0][1][i], c2 = 0.5 * h * h * e[0][2][i], c3 = h * h * h * e[0][3][i] / 6.0;
    const double A = e[1][0][i] - (c0 + c1 + c2 + c3), B = h * e[1][1][i] - (c1 + 2.0 * c2 + 3.0 * c3);
    const double C = h * h * e[1][2][i] - (2.0 * c2 + 6.0 * c3), D = h * h * h * e[1][3][i] - 6.0 * c3;
    br->c[0][i] = c0; br->c[1][i] = c1; br->c[2][i] = c2; br->c[3][i] = c3;
    br->c[4][i] = 35.0 * A - 15.0 * B + 2.5 * C - D / 6.0;
    br->c[5][i] = -84.0 * A + 39.0 * B - 7.0 * C + 0.5 * D;
    br->c[6][i] = 70.0 * A - 34.0 * B + 6.5 * C - 0.5 * D;
    br->c[7][i] = -20.0 * A + 10.0 * B - 2.0 * C + D / 6.0;
    if (scale[i] > size) size = scale[i];
  }
  br->th[0] = th[0]; br->th[1] = th[1]; br->on = 1;
  for (int k = 1; k <= 3; ++k) {  /* the polynomial closes the loops inside */
    const double t = th[0] + 0.25 * k * h;
    bridge_state(br, t, e[0][0], sce, e[0][1], e[0][2], NULL);
    phi1_s(e[0][0], &t, p, sce, r);
    for (int i = 0; i < NROW; ++i) if (!(fabs(r[i]) <= MS_BRIDGE_RES * size)) { br->on = 0; return 0; }
  }
  return 1;
}

/* Solve the one-coordinate configuration at th1 from a solved (q, dq, ddq) at th0 (factorised in a, piv), in
   steps of at most hmax, each kept on the branch whose signs (branch_signs) the caller took at the start of
   its path, `sign`; on return q, dq, ddq, a are at th1. A step that Newton cannot complete from its
   prediction, that lands far from it or that changes those signs is retried in halves (the first half, then
   the rest), halved again as needed, as mechsym.kinematics.Solver._refine does; only a step shorter than
   twice the floor (MS_STEP_FLOOR hmax) fails for good, with that step's status. `fail` (2 + 2 NQ, or NULL)
   then receives the last solved angle, the angle not reached, the configuration solved at the first and
   Newton's last iterate at the second, from which the caller names the limit position, dead point or
   change of branch; q, dq, ddq, a are left at the last solved angle. A span that is not finite or longer
   than 1e9 steps fails at once (status 1); SIGINT ends the walk between steps (MS_INTERRUPTED). */
static int advance(double *q, double *sc, double *dq, double *ddq, double th0, double th1, const double *p,
                   const double *scale, double tol, int maxit, double hmax, double *a, int *piv, int *turns,
                   const int *sign, double *fail, Bridge *br) {
  const double span = th1 - th0, floor = MS_STEP_FLOOR / MS_STEP * hmax;
  if (!(fabs(span) <= 1e9 * hmax)) {  /* not finite, or more steps than an int counts: no path to walk */
    if (fail) { fail[0] = th0; fail[1] = th1; memcpy(fail + 2, q, NQ * sizeof *q); memcpy(fail + 2 + NQ, q, NQ * sizeof *q); }
    return 1;
  }
  int steps = (int)ceil(fabs(span) / hmax);
  if (steps < 1) steps = 1;
  double tha = th0;
  for (int s = 1; s <= steps; ++s) {
    if (ms_stop) return MS_INTERRUPTED;  /* a long walk ends at Ctrl-C like every other loop */
    double ends[MS_MAX_HALVINGS + 1];  /* the angles still to reach from tha, nearest last */
    int depth = 0;
    ends[0] = th0 + span * s / steps;
    while (depth >= 0) {
      const double thb = ends[depth];
      if (br && bridge_holds(br, thb)) {  /* on a bridge: the polynomial */
        bridge_state(br, thb, q, sc, dq, ddq, NULL);
        br->s_now = 0.0;
        tha = thb; --depth; continue;
      }
      if (br && bridge_holds(br, tha)) {  /* leaving a bridge: from its end on thb's side, solved afresh */
        const double end = br->th[(thb - br->th[0]) * (br->th[1] - br->th[0]) > 0.0];
        bridge_state(br, end, q, sc, dq, ddq, NULL);
        newton(q, sc, &end, p, scale, tol, maxit, a, piv);
        coefficients(q, sc, p, a, piv, dq, ddq);
        br->s_now = sigma_estimate(a, piv, scale);
        tha = end;
      }
      double q_a[NQ];
      memcpy(q_a, q, sizeof q_a);
      const double s_a = br ? br->s_now : 0.0;
      int status = advance_step(q, sc, dq, ddq, tha, thb, p, scale, tol, maxit, a, piv, turns, sign);
      const double s_b = br && !status ? sigma_estimate(a, piv, scale) : 0.0;
      if (br && !(s_a < br->s_ref / MS_BRIDGE_DROP) && (status || s_b < br->s_ref / MS_BRIDGE_DROP) &&
          !((tha - br->skip[0]) * (tha - br->skip[1]) < 0.0)) {
        /* from a well-conditioned state towards a singular one: bridge it if it is a bifurcation */
        double keep[4][NQ], dq_a[NQ], ddq_a[NQ], sc_a[NSC];
        memcpy(keep[0], q, sizeof keep[0]); memcpy(keep[1], dq, sizeof keep[1]); memcpy(keep[2], ddq, sizeof keep[2]);
        double q_s[NQ];
        memcpy(q_s, q_a, sizeof q_s);
        trig1(q_s, sc_a);
        jac_slots(q_s, sc_a, p, a);
        lu_factor(a, piv);
        coefficients(q_s, sc_a, p, a, piv, dq_a, ddq_a);
        if (bridge_try(br, q_s, sc_a, dq_a, ddq_a, a, piv, tha, thb, s_a, status ? 0.0 : s_b, p, scale, tol, maxit,
                       hmax, sign) && bridge_holds(br, thb)) {
          bridge_state(br, thb, q, sc, dq, ddq, NULL);
          br->s_now = 0.0;
          tha = thb; --depth; continue;
        }
        memcpy(q, keep[0], sizeof keep[0]); memcpy(dq, keep[1], sizeof keep[1]); memcpy(ddq, keep[2], sizeof keep[2]);
        if (!status) {  /* no bridge: the step as it was solved */
          trig1(q, sc);
          jac_slots(q, sc, p, a);
          lu_factor(a, piv);
        }
      }
      if (!status) { if (br) br->s_now = s_b; tha = thb; --depth; continue; }
      if (fail) { fail[0] = tha; fail[1] = thb; memcpy(fail + 2, q_a, sizeof q_a); memcpy(fail + 2 + NQ, q, sizeof q_a); }
      memcpy(q, q_a, sizeof q_a);  /* back to the last solved state: its sines, factorisation, coefficients */
      trig1(q, sc);
      jac_slots(q, sc, p, a);
      lu_factor(a, piv);
      coefficients(q, sc, p, a, piv, dq, ddq);
      if (!(0.5 * fabs(thb - tha) >= floor) || depth == MS_MAX_HALVINGS) return status;
      ends[++depth] = 0.5 * (tha + thb);
    }
  }
  return 0;
}

/* Factorisations of Phi_q at n configurations q (n x NQ) by the static sparse elimination, into a
   (n x LU_NSLOT) and piv (n x LU_NBLOCK); ok[s] is the sign of det Phi_q (+1 or -1), or 0 where Phi_q is
   singular (its slots are then NaN and its pivots the identity, so that its solutions are NaN and no other
   sample's are touched). Returns 0, or MS_INTERRUPTED. */
int MS_FN(factor)(int n, const double *q, const double *p, double *a, int *piv, int *ok) {
  ms_handler old;
  const int caught = ms_catch(&old);
  int status = 0;
  for (int s = 0; s < n; ++s) {
    if (ms_stop) { status = MS_INTERRUPTED; break; }
    double sc[NSC], *as = a + (size_t)s * LU_NSLOT;
    trig1(q + (size_t)s * NQ, sc);
    jac_slots(q + (size_t)s * NQ, sc, p, as);
    ok[s] = lu_factor(as, piv + (size_t)s * LU_NBLOCK) ? 0 : lu_det_sign(as, piv + (size_t)s * LU_NBLOCK);
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
int MS_FN(solve)(int n, int m, int transpose, const double *a, const int *piv, const double *b, double *x) {
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
int MS_FN(track)(double *q, const double *th, const double *thd, const double *p, const double *scale, double tol,
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

/* One state of a one-coordinate mechanism that ms_track cannot settle at once (a trial state more than a
   continuation step away, or one Newton moved far from its prediction): from the configuration q (in/out)
   solved at th0, the walk to th1 by advance (steps of at most hmax, each halved down to the floor as needed,
   kept on the branch whose signs q has at th0), then the state at th1 as ms_track gives it (J, a0, app and
   the factorisation into lu, lu_piv unless NULL). Returns 0, or the status where the walk stopped for good
   (q then at the last solved angle, `fail` (2 + 2 NQ, or NULL) as advance writes it), or 1 if Newton does
   not settle q at th0, the mechanism has several coordinates or th1 is not within 10^6 steps of th0 (or
   not finite). */
int MS_FN(walk)(double *q, double th0, double th1, const double *thd, const double *p, const double *scale, double tol,
            int maxit, double hmax, double *jq, double *a0, double *app, double *lu, int *lu_piv, double *fail) {
  double sc[NSC], dq[NQ], ddq[NQ], a[LU_NSLOT];
  int piv[LU_NBLOCK], turns = 0, sign[MS_NSIGN];
  if (NTH != 1 || !(fabs(th1 - th0) <= 1e6 * hmax)) return 1;
  int status = newton(q, sc, &th0, p, scale, tol, maxit, a, piv);
  if (status) return status;
  coefficients(q, sc, p, a, piv, dq, ddq);
  branch_signs(q, sc, p, a, piv, sign);
  status = advance(q, sc, dq, ddq, th0, th1, p, scale, tol, maxit, hmax, a, piv, &turns, sign, fail, NULL);
  if (status) return status;
  return MS_FN(track)(q, &th1, thd, p, scale, tol, maxit, jq, a0, app, lu, lu_piv);
}

/* Inverse dynamics of a one-coordinate mechanism over n samples th (in path order), starting from the
   configuration q0 near th[0]. Per sample: the unknowns U (reactions, then the driving force) for three
   right-hand sides (per unit thetadd, per unit thetad^2, static loads), the largest velocity coefficient
   (each relative to its coordinate's scale; large near a dead point), the smallest branch condition, and q
   (if q_out is not NULL). Returns -1, or the index of the first sample that failed
   (*status: 1 no convergence, 2 singular, 5 interrupted,
   6 det Phi_q changed sign: another branch). */
static int inverse_run(int n, const double *th, const double *p, const double *q0, const double *scale, double tol,
                       int maxit, double hmax, double *q_out, double *coef_max, double *branch_min, double *u_out,
                       int *status, double *fail) {
  double q[NQ], sc[NSC], dq[NQ], ddq[NQ], a[LU_NSLOT], mass[NQ], rhs[NQ], app[NQ], u[NROW], br[NBRANCH];
  int piv[LU_NBLOCK], turns = 0, sign[MS_NSIGN];
  memcpy(q, q0, sizeof q);
  mass1(p, mass);
  *status = newton(q, sc, th, p, scale, tol, maxit, a, piv);
  if (*status) return 0;
  coefficients(q, sc, p, a, piv, dq, ddq);
  branch_signs(q, sc, p, a, piv, sign);
  for (int s = 0; s < n; ++s) {
    if (ms_stop) { *status = MS_INTERRUPTED; return s; }
    if (s > 0) {
      *status = advance(q, sc, dq, ddq, th[s - 1], th[s], p, scale, tol, maxit, hmax, a, piv, &turns, sign, fail, NULL);
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

/* inverse_run's results in blocks of samples solved independently (ms_blocks.h, included after this file) */
static int inverse_blocks(int n, const double *th, const double *p, const double *q0, const double *scale, double tol,
                          int maxit, double hmax, double *q_out, double *coef_max, double *branch_min, double *u_out,
                          int *status, double *fail);

int MS_FN(inverse)(int n, const double *th, const double *p, const double *q0, const double *scale, double tol,
               int maxit, double hmax, double *q_out, double *coef_max, double *branch_min, double *u_out, int *status,
               double *fail) {
  ms_handler old;
  const int caught = ms_catch(&old);
  const int failed = inverse_blocks(n, th, p, q0, scale, tol, maxit, hmax, q_out, coef_max, branch_min, u_out, status,
                                    fail);
  ms_release(caught, &old);
  return failed;
}

/* A parameter set's configuration near th0 (into q), reached from the reference assembly q_ref at th_ref
   (solved for the reference parameters) as mechsym.kinematics.Solver._start reaches it: Newton at th_ref
   with the set's parameters p, which must land on the reference's branch (every declared branch condition
   positive, or where none is declared det Phi_q of the sign ref_sign), then the continuation over the
   lattice nodes th_ref + j hmax to the node nearest th0 (each step by advance, kept on that branch), then
   to th0. *coef: the largest velocity coefficient (relative to the scales) at the reference and at every
   node, which the caller checks for a dead point. Returns 0, or the status where it failed (1 no
   convergence, 2 singular, MS_OFF_BRANCH, MS_DET_SIGN, MS_FAR, MS_INTERRUPTED; 1 if th0 is more than 10^6
   steps away). */
static int start_at(double th0, const double *p, double th_ref, const double *q_ref, int ref_sign,
                    const double *scale, double tol, int maxit, double hmax, double *q, double *coef) {
  double sc[NSC], dq[NQ], ddq[NQ], a[LU_NSLOT];
  int piv[LU_NBLOCK], turns = 0, sign[MS_NSIGN];
  *coef = 0.0;
  if (!(fabs(th0 - th_ref) <= 1e6 * hmax)) return 1;
  memcpy(q, q_ref, sizeof(double) * NQ);
  int status = newton(q, sc, &th_ref, p, scale, tol, maxit, a, piv);
  if (status) return status;
  branch_signs(q, sc, p, a, piv, sign);
  for (int i = 0; i < MS_NSIGN; ++i)
    if (NBRANCH_USED ? !sign[i] : (sign[i] != ref_sign)) return NBRANCH_USED ? MS_OFF_BRANCH : MS_DET_SIGN;
  coefficients(q, sc, p, a, piv, dq, ddq);
  const long target = lrint((th0 - th_ref) / hmax), dir = target >= 0 ? 1 : -1;
  for (long j = 0;; j += dir) {
    for (int i = 0; i < NQ; ++i) { const double v = fabs(dq[i]) / scale[i]; if (!(v <= *coef)) *coef = v; }
    const double tha = th_ref + (double)j * hmax, thb = j == target ? th0 : th_ref + (double)(j + dir) * hmax;
    if (ms_stop) return MS_INTERRUPTED;
    if ((status = advance(q, sc, dq, ddq, tha, thb, p, scale, tol, maxit, hmax, a, piv, &turns, sign, NULL, NULL)))
      return status;
    if (j == target) return 0;
  }
}

/* The inverse dynamics of nsets parameter sets along the same n samples th, set-major, in one call: set k
   has the parameters P[k * NPAR ..], the coordinate scales SCALE[k * NQ ..] and the largest step HMAX[k],
   and starts from the reference assembly (start_at: th_ref, q_ref, ref_sign); its outputs are those of
   ms_inverse at offsets k * n (coef_max, branch_min) and k * n * NROW * 3 (u_out), start_coef[k] start_at's
   largest coefficient, failed[k] the return value of ms_inverse (-1, or the first sample that failed; 0
   where the start failed) and status[k] its status. Returns 0, or MS_INTERRUPTED (the sets from the
   interrupted one on are not computed). */
int MS_FN(inverse_sets)(int nsets, int n, const double *th, const double *P, double th_ref, const double *q_ref,
                        int ref_sign, const double *SCALE, const double *HMAX, double tol, int maxit, double *start_coef,
                        double *coef_max, double *branch_min, double *u_out, int *failed, int *status) {
  ms_handler old;
  const int caught = ms_catch(&old);
  int result = 0;
  double q0[NQ];
  for (int k = 0; k < nsets; ++k) {
    const size_t off = (size_t)k * n;
    const double *p = P + (size_t)k * NPAR, *scale = SCALE + (size_t)k * NQ;
    status[k] = start_at(th[0], p, th_ref, q_ref, ref_sign, scale, tol, maxit, HMAX[k], q0, start_coef + k);
    failed[k] = status[k] ? 0 : inverse_blocks(n, th, p, q0, scale, tol, maxit, HMAX[k], NULL, coef_max + off,
                                               branch_min + off, u_out + off * NROW * 3, status + k, NULL);
    if (status[k] == MS_INTERRUPTED || ms_stop) { result = MS_INTERRUPTED; break; }
  }
  ms_release(caught, &old);
  return result;
}

/* ---- the reduced one-coordinate ODE y' = f(y), y = (theta, omega): M thetadd + h omega^2 + G = torque ---- */

/* f at a solved configuration (q, sc, dq, ddq at theta, factorisation in a) and, if jac is not NULL, its
   exact Jacobian df/dy (row-major 2 x 2), from the third-order coefficients (Phi_q q''' = -gamma3, or `d3`
   where not NULL: a bridge's): M' = 2 h, h' = sum m (q''^2 + q' q'''), G' = -(q' . dQ/dq q' + Q . q''). */
static void reduced_ode(const double *q, const double *sc, const double *dq, const double *ddq, const double *a,
                        const int *piv, const double *p, const double *mass, double torque, double omega,
                        double *f, double *jac, const double *d3_given) {
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
  double d3[NQ], rate;
  if (d3_given) memcpy(d3, d3_given, sizeof d3);
  else third(q, sc, p, a, piv, dq, ddq, d3);
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
   index of the first sample that failed (*status 1: no convergence, 2: singular, 5: interrupted, 6: det Phi_q
   changed sign). */
static int ode_run(int n, const double *th, const double *om, double torque, const double *p, const double *q0,
                   const double *scale, double tol, int maxit, double hmax, double *f_out, double *jac_out, int *status,
                   double *fail) {
  double q[NQ], sc[NSC], dq[NQ], ddq[NQ], a[LU_NSLOT], mass[NQ];
  int piv[LU_NBLOCK], turns = 0, sign[MS_NSIGN];
  Bridge bridge;
  memcpy(q, q0, sizeof q);
  mass1(p, mass);
  *status = newton(q, sc, th, p, scale, tol, maxit, a, piv);
  if (*status) return 0;
  coefficients(q, sc, p, a, piv, dq, ddq);
  branch_signs(q, sc, p, a, piv, sign);
  bridge_start(&bridge, a, piv, scale);
  for (int s = 0; s < n; ++s) {
    if (ms_stop) { *status = MS_INTERRUPTED; return s; }
    if (s > 0) {
      *status = advance(q, sc, dq, ddq, th[s - 1], th[s], p, scale, tol, maxit, hmax, a, piv, &turns, sign, fail,
                        &bridge);
      if (*status) return s;
    }
    double d3[NQ];
    const int bridged = s > 0 && bridge_holds(&bridge, th[s]);
    if (bridged) bridge_state(&bridge, th[s], q, sc, dq, ddq, d3);
    reduced_ode(q, sc, dq, ddq, a, piv, p, mass, torque, om[s], f_out + 2 * (size_t)s, jac_out + 4 * (size_t)s,
                bridged ? d3 : NULL);
  }
  return -1;
}

int MS_FN(ode)(int n, const double *th, const double *om, double torque, const double *p, const double *q0,
           const double *scale, double tol, int maxit, double hmax, double *f_out, double *jac_out, int *status,
           double *fail) {
  ms_handler old;
  const int caught = ms_catch(&old);
  const int failed = ode_run(n, th, om, torque, p, q0, scale, tol, maxit, hmax, f_out, jac_out, status, fail);
  ms_release(caught, &old);
  return failed;
}
/* Kinematics of a one-coordinate mechanism over n samples th (in path order) from the configuration q0 near
   th[0]: q, dq/dth and d2q/dth2 per sample (n x NQ each), the largest velocity coefficient and the smallest
   branch condition as ms_inverse. Returns -1, or the index of the first sample that failed (*status: 1 no
   convergence, 2 singular, 5 interrupted, 6 det Phi_q changed sign). */
int MS_FN(kinematics)(int n, const double *th, const double *p, const double *q0, const double *scale, double tol,
                  int maxit, double hmax, double *q_out, double *dq_out, double *ddq_out, double *coef_max,
                  double *branch_min, int *status, double *fail) {
  double q[NQ], sc[NSC], dq[NQ], ddq[NQ], a[LU_NSLOT], br[NBRANCH];
  int piv[LU_NBLOCK], turns = 0, failed = -1, sign[MS_NSIGN];
  Bridge bridge;
  ms_handler old;
  const int caught = ms_catch(&old);
  memcpy(q, q0, sizeof q);
  *status = newton(q, sc, th, p, scale, tol, maxit, a, piv);
  if (*status) failed = 0;
  else {
    coefficients(q, sc, p, a, piv, dq, ddq);
    branch_signs(q, sc, p, a, piv, sign);
    bridge_start(&bridge, a, piv, scale);
  }
  for (int s = 0; s < n && failed < 0; ++s) {
    if (ms_stop) { *status = MS_INTERRUPTED; failed = s; break; }
    if (s > 0 && (*status = advance(q, sc, dq, ddq, th[s - 1], th[s], p, scale, tol, maxit, hmax, a, piv, &turns, sign,
                                    fail, &bridge))) {
      failed = s;
      break;
    }
    double cm = 0.0, bm = 1.0;
    for (int i = 0; i < NQ; ++i) { double v = fabs(dq[i]) / scale[i]; if (!(v <= cm)) cm = v; }
    branch1_s(q, p, sc, br);
    for (int i = 0; i < NBRANCH_USED; ++i) if (!(br[i] >= bm)) bm = br[i];
    coef_max[s] = cm;
    branch_min[s] = bm;
    memcpy(q_out + (size_t)s * NQ, q, sizeof q);
    memcpy(dq_out + (size_t)s * NQ, dq, sizeof dq);
    memcpy(ddq_out + (size_t)s * NQ, ddq, sizeof ddq);
  }
  ms_release(caught, &old);
  return failed;
}
/* One state as ms_track (q in/out, J, a0, the applied forces app), and for nr rows k of Phi_q the multiplier
   of row k (a reaction, or a coordinate's generalised force) as a linear function of the coordinates'
   accelerations thdd: lambda_k = base[r] + sum_j coef[r * NTH + j] thdd[j], where Phi_q^T lambda = M qdd - Q
   and qdd = J thdd + a0. With lambda_k = (Phi_q^-1 e_k) . (M qdd - Q), any analysis of the state that fixes
   or frees accelerations and ties forces together (Coulomb friction) is a small system in these numbers.
   Returns as ms_track. */
int MS_FN(track_rows)(double *q, const double *th, const double *thd, const double *p, const double *scale, double tol,
                  int maxit, int nr, const int *rows, double *jq, double *a0, double *app, double *base, double *coef) {
  double lu[LU_NSLOT], mass[NQ], r0[NQ], e[NROW], w[NQ];
  int piv[LU_NBLOCK];
  const int status = MS_FN(track)(q, th, thd, p, scale, tol, maxit, jq, a0, app, lu, piv);
  if (status) return status;
  mass1(p, mass);
  for (int i = 0; i < NQ; ++i) r0[i] = mass[i] * a0[i] - app[i];
  for (int r = 0; r < nr; ++r) {
    memset(e, 0, sizeof e);
    e[rows[r]] = 1.0;
    lu_solve(lu, piv, e, w);
    double b = 0.0;
    for (int i = 0; i < NQ; ++i) b += w[i] * r0[i];
    base[r] = b;
    for (int j = 0; j < NTH; ++j) {
      double c = 0.0;
      for (int i = 0; i < NQ; ++i) c += w[i] * mass[i] * jq[i * NTH + j];
      coef[r * NTH + j] = c;
    }
  }
  return 0;
}
#endif
