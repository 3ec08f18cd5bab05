/* mechsym C runtime: the batched kernels of a one-coordinate mechanism
   (factorisations and solves, the tracked state of a simulation, inverse dynamics, kinematics, the reduced
   ODE), included after ms_newton.h and ms_continuation.h. */
#ifndef MS_KERNELS_H
#define MS_KERNELS_H
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
  int status = continuation_start(q, sc, &th0, p, scale, tol, maxit, a, piv, dq, ddq, sign, NULL);
  if (status) return status;
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
  *status = continuation_start(q, sc, th, p, scale, tol, maxit, a, piv, dq, ddq, sign, NULL);
  if (*status) return 0;
  for (int s = 0; s < n; ++s) {
    if ((*status = path_step(s, th, q, sc, dq, ddq, p, scale, tol, maxit, hmax, a, piv, &turns, sign, fail, NULL)))
      return s;
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
  *status = continuation_start(q, sc, th, p, scale, tol, maxit, a, piv, dq, ddq, sign, &bridge);
  if (*status) return 0;
  for (int s = 0; s < n; ++s) {
    if ((*status = path_step(s, th, q, sc, dq, ddq, p, scale, tol, maxit, hmax, a, piv, &turns, sign, fail, &bridge)))
      return s;
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
static int kinematics_run(int n, const double *th, const double *p, const double *q0, const double *scale, double tol,
                          int maxit, double hmax, double *q_out, double *dq_out, double *ddq_out, double *coef_max,
                          double *branch_min, int *status, double *fail) {
  double q[NQ], sc[NSC], dq[NQ], ddq[NQ], a[LU_NSLOT], br[NBRANCH];
  int piv[LU_NBLOCK], turns = 0, sign[MS_NSIGN];
  Bridge bridge;
  memcpy(q, q0, sizeof q);
  *status = continuation_start(q, sc, th, p, scale, tol, maxit, a, piv, dq, ddq, sign, &bridge);
  if (*status) return 0;
  for (int s = 0; s < n; ++s) {
    if ((*status = path_step(s, th, q, sc, dq, ddq, p, scale, tol, maxit, hmax, a, piv, &turns, sign, fail, &bridge)))
      return s;
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
  return -1;
}

int MS_FN(kinematics)(int n, const double *th, const double *p, const double *q0, const double *scale, double tol,
                      int maxit, double hmax, double *q_out, double *dq_out, double *ddq_out, double *coef_max,
                      double *branch_min, int *status, double *fail) {
  ms_handler old;
  const int caught = ms_catch(&old);
  const int failed = kinematics_run(n, th, p, q0, scale, tol, maxit, hmax, q_out, dq_out, ddq_out, coef_max,
                                    branch_min, status, fail);
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
