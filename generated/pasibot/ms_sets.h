/* mechsym C runtime: the analyses of many parameter sets in one call (inverse dynamics, kinematics, forward
   dynamics), each set assembled from the reference assembly and continued to its start here; included after
   ms_blocks.h and ms_dop853.h. */
#ifndef MS_SETS_H
#define MS_SETS_H
/* A parameter set's configuration near th0 (into q), reached from the reference assembly q_ref at th_ref
   (solved for the reference parameters) as mechsym.planar.continuation.Continuation._start reaches it: Newton at th_ref
   with the set's parameters p, which must land on the reference's branch (every declared branch condition
   positive, or where none is declared det Phi_q of the sign ref_sign), then the continuation over the
   lattice nodes th_ref + j hmax to the node nearest th0 (each step by advance, kept on that branch), then
   to th0. *coef: the largest velocity coefficient (relative to the scales) at the reference, at every
   node and at th0, which the caller checks for a dead point. Returns 0, or the status where it failed (1 no
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
    if (j == target) break;
  }
  for (int i = 0; i < NQ; ++i) { const double v = fabs(dq[i]) / scale[i]; if (!(v <= *coef)) *coef = v; }
  return 0;
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


/* The kinematics of nsets parameter sets along the same n samples th, set-major, in one call: set k (its
   parameters, scales and largest step as in ms_inverse_sets) starts from the reference assembly (start_at)
   and its outputs are those of ms_kinematics at offsets k * n * NQ (q_out, dq_out, ddq_out) and k * n
   (coef_max, branch_min); start_coef[k], failed[k] and status[k] as ms_inverse_sets writes them. Returns 0,
   or MS_INTERRUPTED (the sets from the interrupted one on are not computed). */
int MS_FN(kinematics_sets)(int nsets, int n, const double *th, const double *P, double th_ref, const double *q_ref,
                           int ref_sign, const double *SCALE, const double *HMAX, double tol, int maxit,
                           double *start_coef, double *q_out, double *dq_out, double *ddq_out, double *coef_max,
                           double *branch_min, int *failed, int *status) {
  ms_handler old;
  const int caught = ms_catch(&old);
  int result = 0;
  double q0[NQ];
  for (int k = 0; k < nsets; ++k) {
    const size_t off = (size_t)k * n;
    const double *p = P + (size_t)k * NPAR, *scale = SCALE + (size_t)k * NQ;
    status[k] = start_at(th[0], p, th_ref, q_ref, ref_sign, scale, tol, maxit, HMAX[k], q0, start_coef + k);
    failed[k] = status[k] ? 0 : kinematics_run(n, th, p, q0, scale, tol, maxit, HMAX[k], q_out + off * NQ,
                                               dq_out + off * NQ, ddq_out + off * NQ, coef_max + off,
                                               branch_min + off, status + k, NULL);
    if (status[k] == MS_INTERRUPTED || ms_stop) { result = MS_INTERRUPTED; break; }
  }
  ms_release(caught, &old);
  return result;
}

/* Forward dynamics of nsets parameter sets from the same (th0, om0) under the same constant torque, in one
   call: independent integrations (each its own DOP853 step control and located events, as ms_forward), set
   k (its parameters, scales and largest step as in ms_inverse_sets) started from the reference assembly
   (start_at). Per set: start_q (NQ) the configuration at th0 and start_coef its start's largest velocity
   coefficient; start_f (2) the right-hand side (omega, thetadd) at the start; grid_y (n_grid x 2) the states
   on the grid and written[k] how many; nfev[k]; n_events[k] events (at most max_events, at ev_t, ev_id,
   ev_y + 2 * (k * max_events)); status[k] that of start_at or of the run (MS_OK: complete). Returns 0, or
   MS_INTERRUPTED (the sets from the interrupted one on are not computed). */
int MS_FN(forward_sets)(int nsets, double torque, double th0, double om0, double t_end, const double *grid_t,
                        int n_grid, double rtol, double atol, const double *P, double th_ref, const double *q_ref,
                        int ref_sign, const double *SCALE, const double *HMAX, double tol, int maxit, int n_ev,
                        const int *ev_comp, const double *ev_value, const int *ev_dir, const int *ev_terminal,
                        int max_events, double *ev_t, int *ev_id, double *ev_y, int *n_events, double *start_coef,
                        double *start_q, double *start_f, double *grid_y, int *written, long *nfev, int *status) {
  ms_handler old;
  const int caught = ms_catch(&old);
  int result = 0;
  for (int k = 0; k < nsets; ++k) {
    const double *p = P + (size_t)k * NPAR, *scale = SCALE + (size_t)k * NQ;
    double *q0 = start_q + (size_t)k * NQ, jac[4];
    const size_t ev = (size_t)k * max_events;
    long n_rec;
    written[k] = n_events[k] = 0;
    nfev[k] = 0;
    status[k] = start_at(th0, p, th_ref, q_ref, ref_sign, scale, tol, maxit, HMAX[k], q0, start_coef + k);
    if (!status[k]) ode_run(1, &th0, &om0, torque, p, q0, scale, tol, maxit, HMAX[k], start_f + 2 * k, jac, status + k,
                            NULL);
    if (!status[k])
      written[k] = forward_run(torque, th0, om0, t_end, grid_t, n_grid, rtol, atol, p, q0, scale, tol, maxit, HMAX[k],
                               n_ev, ev_comp, ev_value, ev_dir, ev_terminal, max_events, ev_t + ev, ev_id + ev,
                               ev_y + 2 * ev, n_events + k, grid_y + (size_t)k * n_grid * 2, nfev + k, 0, NULL, &n_rec,
                               status + k);
    if (status[k] == MS_INTERRUPTED || ms_stop) { result = MS_INTERRUPTED; break; }
  }
  ms_release(caught, &old);
  return result;
}
#endif
