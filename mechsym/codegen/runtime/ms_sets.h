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
  int status = continuation_start(q, sc, &th_ref, p, scale, tol, maxit, a, piv, dq, ddq, sign, NULL);
  if (status) return status;
  for (int i = 0; i < MS_NSIGN; ++i)
    if (NBRANCH_USED ? !sign[i] : (sign[i] != ref_sign)) return NBRANCH_USED ? MS_OFF_BRANCH : MS_DET_SIGN;
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

/* One set's analysis once it has started: set k with parameters p from its start q0 (solved at the first
   sample), its coordinate scales and largest step; writes *status and returns the first sample that failed
   (-1 where none did), as the single-set kernels do. `ctx` holds the analysis' inputs and outputs. */
typedef int (*ms_set_run)(void *ctx, int k, const double *p, const double *q0, const double *scale, double hmax,
                          int *status);

/* The per-set loop of every analysis of many parameter sets: set k (parameters P[k * NPAR ..], coordinate
   scales SCALE[k * NQ ..], largest step HMAX[k]) started from the reference assembly at th0 (start_at: th_ref,
   q_ref, ref_sign; its configuration into start_q + k * NQ where start_q is given, start_coef[k] its largest
   coefficient), then `run` from there. failed[k] (where given) what `run` returned, 0 where the start failed;
   status[k] that of the start or of the run. Returns 0, or MS_INTERRUPTED (the sets from the interrupted one
   on are not computed). */
static int run_sets(int nsets, double th0, const double *P, double th_ref, const double *q_ref, int ref_sign,
                    const double *SCALE, const double *HMAX, double tol, int maxit, double *start_coef, double *start_q,
                    int *failed, int *status, ms_set_run run, void *ctx) {
  ms_handler old;
  const int caught = ms_catch(&old);
  int result = 0;
  double q[NQ];
  for (int k = 0; k < nsets; ++k) {
    const double *p = P + (size_t)k * NPAR, *scale = SCALE + (size_t)k * NQ;
    double *q0 = start_q ? start_q + (size_t)k * NQ : q;
    status[k] = start_at(th0, p, th_ref, q_ref, ref_sign, scale, tol, maxit, HMAX[k], q0, start_coef + k);
    const int first = status[k] ? 0 : run(ctx, k, p, q0, scale, HMAX[k], status + k);
    if (failed) failed[k] = first;
    if (status[k] == MS_INTERRUPTED || ms_stop) { result = MS_INTERRUPTED; break; }
  }
  ms_release(caught, &old);
  return result;
}

/* The samples, tolerances and outputs of ms_inverse_sets and ms_kinematics_sets. */
typedef struct {
  int n, maxit;
  const double *th;
  double tol, *q_out, *dq_out, *ddq_out, *coef_max, *branch_min, *u_out;
} ms_sweep;

static int inverse_set(void *ctx, int k, const double *p, const double *q0, const double *scale, double hmax,
                       int *status) {
  const ms_sweep *s = ctx;
  const size_t off = (size_t)k * s->n;
  return inverse_blocks(s->n, s->th, p, q0, scale, s->tol, s->maxit, hmax, NULL, s->coef_max + off,
                        s->branch_min + off, s->u_out + off * NROW * 3, status, NULL);
}

static int kinematics_set(void *ctx, int k, const double *p, const double *q0, const double *scale, double hmax,
                          int *status) {
  const ms_sweep *s = ctx;
  const size_t off = (size_t)k * s->n;
  return kinematics_run(s->n, s->th, p, q0, scale, s->tol, s->maxit, hmax, s->q_out + off * NQ, s->dq_out + off * NQ,
                        s->ddq_out + off * NQ, s->coef_max + off, s->branch_min + off, status, NULL);
}

/* The inverse dynamics of nsets parameter sets along the same n samples th, set-major, in one call (run_sets:
   set k's parameters, scales and largest step; start_coef[k], failed[k] and status[k]); its outputs are those
   of ms_inverse at offsets k * n (coef_max, branch_min) and k * n * NROW * 3 (u_out). */
int MS_FN(inverse_sets)(int nsets, int n, const double *th, const double *P, double th_ref, const double *q_ref,
                        int ref_sign, const double *SCALE, const double *HMAX, double tol, int maxit, double *start_coef,
                        double *coef_max, double *branch_min, double *u_out, int *failed, int *status) {
  ms_sweep s = {n, maxit, th, tol, NULL, NULL, NULL, coef_max, branch_min, u_out};
  return run_sets(nsets, th[0], P, th_ref, q_ref, ref_sign, SCALE, HMAX, tol, maxit, start_coef, NULL, failed, status,
                  inverse_set, &s);
}

/* The kinematics of nsets parameter sets along the same n samples th, set-major, in one call (run_sets, as
   ms_inverse_sets); its outputs are those of ms_kinematics at offsets k * n * NQ (q_out, dq_out, ddq_out) and
   k * n (coef_max, branch_min). */
int MS_FN(kinematics_sets)(int nsets, int n, const double *th, const double *P, double th_ref, const double *q_ref,
                           int ref_sign, const double *SCALE, const double *HMAX, double tol, int maxit,
                           double *start_coef, double *q_out, double *dq_out, double *ddq_out, double *coef_max,
                           double *branch_min, int *failed, int *status) {
  ms_sweep s = {n, maxit, th, tol, q_out, dq_out, ddq_out, coef_max, branch_min, NULL};
  return run_sets(nsets, th[0], P, th_ref, q_ref, ref_sign, SCALE, HMAX, tol, maxit, start_coef, NULL, failed, status,
                  kinematics_set, &s);
}

/* The inputs and outputs of ms_forward_sets. */
typedef struct {
  double torque, th0, om0, t_end, rtol, atol, tol, *ev_t, *ev_y, *start_f, *grid_y;
  const double *grid_t, *ev_value;
  int n_grid, maxit, n_ev, max_events, *ev_id, *n_events, *written;
  const int *ev_comp, *ev_dir, *ev_terminal;
  long *nfev;
} ms_runs;

static int forward_set(void *ctx, int k, const double *p, const double *q0, const double *scale, double hmax,
                       int *status) {
  const ms_runs *r = ctx;
  const size_t ev = (size_t)k * r->max_events;
  double jac[4];
  long n_rec;
  ode_run(1, &r->th0, &r->om0, r->torque, p, q0, scale, r->tol, r->maxit, hmax, r->start_f + 2 * k, jac, status, NULL);
  if (!*status)
    r->written[k] = forward_run(r->torque, r->th0, r->om0, r->t_end, r->grid_t, r->n_grid, r->rtol, r->atol, p, q0,
                                scale, r->tol, r->maxit, hmax, r->n_ev, r->ev_comp, r->ev_value, r->ev_dir,
                                r->ev_terminal, r->max_events, r->ev_t + ev, r->ev_id + ev, r->ev_y + 2 * ev,
                                r->n_events + k, r->grid_y + (size_t)k * r->n_grid * 2, r->nfev + k, 0, NULL, &n_rec,
                                status);
  return -1;
}

/* Forward dynamics of nsets parameter sets from the same (th0, om0) under the same constant torque, in one
   call: independent integrations (each its own DOP853 step control and located events, as ms_forward), set
   k started as in run_sets. Per set: start_q (NQ) the configuration at th0 and start_coef its start's largest
   velocity coefficient; start_f (2) the right-hand side (omega, thetadd) at the start; grid_y (n_grid x 2)
   the states on the grid and written[k] how many; nfev[k]; n_events[k] events (at most max_events, at ev_t,
   ev_id, ev_y + 2 * (k * max_events)); status[k] that of start_at or of the run (MS_OK: complete). Returns 0,
   or MS_INTERRUPTED (the sets from the interrupted one on are not computed). */
int MS_FN(forward_sets)(int nsets, double torque, double th0, double om0, double t_end, const double *grid_t,
                        int n_grid, double rtol, double atol, const double *P, double th_ref, const double *q_ref,
                        int ref_sign, const double *SCALE, const double *HMAX, double tol, int maxit, int n_ev,
                        const int *ev_comp, const double *ev_value, const int *ev_dir, const int *ev_terminal,
                        int max_events, double *ev_t, int *ev_id, double *ev_y, int *n_events, double *start_coef,
                        double *start_q, double *start_f, double *grid_y, int *written, long *nfev, int *status) {
  ms_runs r = {torque, th0, om0, t_end, rtol, atol, tol, ev_t, ev_y, start_f, grid_y, grid_t, ev_value,
               n_grid, maxit, n_ev, max_events, ev_id, n_events, written, ev_comp, ev_dir, ev_terminal, nfev};
  for (int k = 0; k < nsets; ++k) {
    written[k] = n_events[k] = 0;
    nfev[k] = 0;
  }
  return run_sets(nsets, th0, P, th_ref, q_ref, ref_sign, SCALE, HMAX, tol, maxit, start_coef, start_q, NULL, status,
                  forward_set, &r);
}

/* The diagonals of the mass matrix (NQ each, into out + k * NQ) of nsets parameter sets P (NPAR each). */
void MS_FN(mass_sets)(int nsets, const double *P, double *out) {
  for (int k = 0; k < nsets; ++k) mass1(P + (size_t)k * NPAR, out + (size_t)k * NQ);
}
#endif
