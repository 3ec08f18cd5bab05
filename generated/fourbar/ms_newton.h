/* mechsym C runtime: Newton on the loop closures and one continuation step of a one-coordinate mechanism
   (the trig of the angles kept by rotation, the velocity and acceleration coefficients, the branch signs),
   included into a generated mechanism's source after its per-sample functions. Needs, from the generated
   source before it: the sizes NQ, NROW, NTH, NPAR, NJ, NSC, LU_NSLOT, LU_NBLOCK, NBRANCH, NBRANCH_USED; the
   per-sample functions trig1, phi1_s, gamma1_s, gamma3_1_s, applied1_s, apprate1_s, branch1_s, mass1 and
   jac_slots; the static sparse elimination lu_factor, lu_solve, lu_solve_t. */
#ifndef MS_NEWTON_H
#define MS_NEWTON_H
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

#endif
