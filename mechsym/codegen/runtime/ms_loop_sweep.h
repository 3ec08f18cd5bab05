/* mechsym C runtime: the kinematics sweep of a spatial closed-loop mechanism with one driven coordinate along the
   driven values (mechsym.spatial.loop_kinematics.LoopSolver.sweep, step for step: the continuation over the
   nodes with steps halved down to their floor, the samples predicted from their node and corrected by Newton,
   the branch and dead points checked, the exact derivatives), q moved by loop_integrate (coordinates whose
   rates are their speeds, spherical joints' quaternions); after ms_loop_forward.h. Every solve is the least-squares one of
   loop_least_squares: the systems solved have full column rank at a regular configuration, where it is the
   pseudo-inverse's the numpy route uses. */
#ifndef MS_LOOP_SWEEP_H
#define MS_LOOP_SWEEP_H
#define MS_SWEEP_TOL 1e-12       /* loop_kinematics.TOL */
#define MS_SWEEP_SINGULAR 1e8    /* loop_kinematics.SINGULAR */

/* The closure of a mechanism: phi (nr), J (nr x nv, row-major) and gamma (nr) at q, v into out. */
typedef void (*loop_closure_fn)(const double *q, const double *v, const double *p, double *out);

typedef struct {
  int nq, nv, nr, drive_q, drive_v;          /* the driven coordinate and its speed */
  const int *man;                            /* loop_integrate's joints */
  const double *p, *col, *rows, *max_step;   /* rows: the closure rows' scales */
  double theta_scale, sign;
  loop_closure_fn closure;
  double *out, *A, *Jf, *b, *x, *ls, *zero, *dv, *dq, *ddq, *trial;  /* work (loop_sweep_init) */
  int *iwork;
} LoopSweep;

/* The doubles of work a sweep needs (the ints: nv + nr + 1). */
#define LOOP_SWEEP_WORK(nq, nv, nr) ((nr) * ((nv) + 2) + 3 * ((nr) + 1) * (nv) + 10 * (nv) + (nq) + 3 * ((nr) + 1))

static void loop_sweep_init(LoopSweep *w, double *work) {
  const int nv = w->nv, nr = w->nr, m = nr + 1;
  w->out = work;                             /* phi, J, gamma */
  w->A = w->out + nr * (nv + 2);             /* [J; e_drive], m x nv */
  w->Jf = w->A + m * nv;                     /* J without the driven column, nr x (nv - 1) */
  w->b = w->Jf + nr * nv;                    /* m + nv */
  w->x = w->b + m + nv;                      /* nv */
  w->zero = w->x + nv;                       /* nv */
  w->dv = w->zero + nv;                      /* nv */
  w->dq = w->dv + nv;                        /* nv: the continuation's q' */
  w->ddq = w->dq + nv;                       /* nv: its q'' */
  w->trial = w->ddq + nv;                    /* nq: its trial configuration */
  w->ls = w->trial + w->nq;                  /* the least squares' m nv + m + 2 nv, the SVD's m nv */
  for (int j = 0; j < nv; j++) w->zero[j] = 0.0;
}

/* out = closure at (q, v), A = [J; e_drive]. */
static void sweep_system(LoopSweep *w, const double *q, const double *v) {
  const int nv = w->nv, nr = w->nr;
  w->closure(q, v, w->p, w->out);
  for (int i = 0; i < nr * nv; i++) w->A[i] = w->out[nr + i];
  for (int j = 0; j < nv; j++) w->A[nr * nv + j] = j == w->drive_v ? 1.0 : 0.0;
}

/* q' (dq) and q'' at unit driven speed, zero driven acceleration (ddq) at q: A q' = [0; 1],
   A q'' = [-gamma(q, q'); 0]. */
static void sweep_derivatives(LoopSweep *w, const double *q, double *dq, double *ddq) {
  const int nv = w->nv, nr = w->nr;
  sweep_system(w, q, w->zero);
  for (int i = 0; i < nr; i++) w->b[i] = 0.0;
  w->b[nr] = 1.0;
  loop_least_squares(nr + 1, nv, w->A, w->b, dq, w->ls, w->iwork);
  w->closure(q, dq, w->p, w->out);
  for (int i = 0; i < nr; i++) w->b[i] = -w->out[nr + nr * nv + i];
  w->b[nr] = 0.0;
  loop_least_squares(nr + 1, nv, w->A, w->b, ddq, w->ls, w->iwork);
}

/* Newton from q at the driven value theta (LoopSolver.newton of one sample): 1 where it converged; *moved the
   largest corrections relative to the scales, summed. */
static int sweep_newton(LoopSweep *w, double *q, double theta, double *moved) {
  const int nv = w->nv, nr = w->nr, d = w->drive_v;
  *moved = fabs(q[w->drive_q] - theta) / w->theta_scale;
  q[w->drive_q] = theta;
  for (int it = 0; it < MS_LOOP_ITER; it++) {
    w->closure(q, w->zero, w->p, w->out);
    for (int i = 0; i < nr; i++)
      for (int j = 0, k = 0; j < nv; j++)
        if (j != d) w->Jf[i * (nv - 1) + k++] = w->out[nr + i * nv + j];
    loop_least_squares(nr, nv - 1, w->Jf, w->out, w->x, w->ls, w->iwork);
    double size = 0.0;
    for (int j = 0, k = 0; j < nv; j++) {
      double s = 0.0;
      if (j != d) {
        s = w->x[k++];
        if (s != s) s = 0.0;                       /* (numpy's nan_to_num) */
        s = s > w->max_step[j] ? w->max_step[j] : s < -w->max_step[j] ? -w->max_step[j] : s;
      }
      w->dv[j] = -s;
      if (fabs(s) / w->col[j] > size) size = fabs(s) / w->col[j];
    }
    loop_integrate(w->man, q, w->dv, q);
    *moved += size;
    if (size < 1e-13) {
      w->closure(q, w->zero, w->p, w->out);
      for (int i = 0; i < nr; i++)
        if (!(fabs(w->out[i]) <= MS_SWEEP_TOL * w->rows[i])) return 0;
      return 1;
    }
  }
  return 0;
}

/* sign det of A (scaled) at q where A is square, else 0 (LoopSolver.determinant_sign). */
static double sweep_sign(LoopSweep *w, const double *q) {
  if (w->nr + 1 != w->nv) return 0.0;
  sweep_system(w, q, w->zero);
  return loop_sign(w->nv, w->A, w->col, w->ls, w->iwork);
}

/* The condition number sigma_1 / sigma_n of A scaled (rows by the rows' and the drive's scales, columns by col)
   at q, by one-sided Jacobi rotations (accurate small singular values); inf where A is singular. */
static double sweep_condition(LoopSweep *w, const double *q) {
  const int nv = w->nv, m = w->nr + 1;
  double *B = w->ls;
  sweep_system(w, q, w->zero);
  for (int i = 0; i < m; i++)
    for (int j = 0; j < nv; j++) B[i * nv + j] = w->A[i * nv + j] * w->col[j] / (i < w->nr ? w->rows[i] : w->theta_scale);
  for (int pass = 0; pass < 60; pass++) {
    double off = 0.0;
    for (int i = 0; i < nv - 1; i++)
      for (int j = i + 1; j < nv; j++) {
        double a = 0.0, b = 0.0, c = 0.0;
        for (int k = 0; k < m; k++) {
          const double x = B[k * nv + i], y = B[k * nv + j];
          a += x * x; b += y * y; c += x * y;
        }
        if (c == 0.0) continue;
        const double r = fabs(c) / sqrt(a * b);
        if (r > off) off = r;
        if (!(r > 1e-15)) continue;
        const double zeta = (b - a) / (2.0 * c);
        const double t = (zeta >= 0.0 ? 1.0 : -1.0) / (fabs(zeta) + sqrt(1.0 + zeta * zeta));
        const double cs = 1.0 / sqrt(1.0 + t * t), sn = cs * t;
        for (int k = 0; k < m; k++) {
          const double x = B[k * nv + i], y = B[k * nv + j];
          B[k * nv + i] = cs * x - sn * y;
          B[k * nv + j] = sn * x + cs * y;
        }
      }
    if (!(off > 1e-15)) break;
  }
  double big = 0.0, small = INFINITY;
  for (int j = 0; j < nv; j++) {
    double s = 0.0;
    for (int k = 0; k < m; k++) s += B[k * nv + j] * B[k * nv + j];
    s = sqrt(s);
    if (s > big) big = s;
    if (s < small) small = s;
  }
  return big / small;
}

/* q (+) (q' h + q'' h^2 / 2) into out (not q). */
static void sweep_predict(LoopSweep *w, const double *q, const double *dq, const double *ddq, double h, double *out) {
  for (int j = 0; j < w->nv; j++) w->dv[j] = dq[j] * h + 0.5 * ddq[j] * h * h;
  for (int j = 0; j < w->nq; j++) out[j] = q[j];
  loop_integrate(w->man, q, w->dv, out);
}

/* q at theta_b continued from the solved (theta_a, q) in steps halved where they fail (LoopSolver._continue),
   into q; 0, or 1 where the step reaches its floor (*stop: the last driven value reached). */
static int sweep_continue(LoopSweep *w, double theta_a, double *q, double theta_b, double step, double floor,
                          double *stop) {
  double *dq = w->dq, *ddq = w->ddq, *trial = w->trial;
  double t0 = theta_a, left = 1.0, h = 1.0, moved;
  const double span = theta_b - theta_a;
  while (left > 0) {
    h = h < left ? h : left;
    const double t1 = theta_b - (left - h) * span;
    sweep_derivatives(w, q, dq, ddq);
    sweep_predict(w, q, dq, ddq, t1 - t0, trial);
    const int ok = sweep_newton(w, trial, t1, &moved);
    const double size = fabs(t1 - t0) / w->theta_scale;
    if (ok && moved <= 0.2 * (size > 1e-12 ? size : 1e-12) + 1e-9 && sweep_sign(w, trial) == w->sign) {
      t0 = t1;
      for (int j = 0; j < w->nq; j++) q[j] = trial[j];
      left -= h;
      h = 2 * h < 1.0 ? 2 * h : 1.0;
      continue;
    }
    h /= 2;
    if (h * fabs(span) / w->theta_scale < floor * step) {
      *stop = t0;
      return 1;
    }
  }
  return 0;
}

/* The sweep over n driven values theta from q0 solved at theta[0], nodes (nnodes indices into theta, the first
   0) the samples continued to: q (n x nq), dq, ddq (n x nv each). Returns 0; 1 where the continuation stops (info[0]: the
   driven value reached); 2 where a sample's Newton fails or leaves the branch (info[0]: the sample); 3 at a dead
   point (info[0]: the sample, info[1]: its condition number). */
static int loop_sweep(LoopSweep *w, int n, const double *theta, int nnodes, const int *nodes, const double *q0,
                      double step, double floor, double *q, double *dq, double *ddq, double *info) {
  const int nq = w->nq, nv = w->nv;
  double moved;
  for (int j = 0; j < nq; j++) q[(size_t)nodes[0] * nq + j] = q0[j];
  /* the nodes, each from the one before (their q kept in the rows of q at their samples) */
  for (int k = 1; k < nnodes; k++) {
    double *qa = q + (size_t)nodes[k - 1] * nq, *qb = q + (size_t)nodes[k] * nq;
    for (int j = 0; j < nq; j++) qb[j] = qa[j];
    if (sweep_continue(w, theta[nodes[k - 1]], qb, theta[nodes[k]], step, floor, info)) return 1;
  }
  /* the derivatives at the nodes (in dq, ddq at their samples), then every other sample from its node */
  for (int k = 0; k < nnodes; k++)
    sweep_derivatives(w, q + (size_t)nodes[k] * nq, dq + (size_t)nodes[k] * nv, ddq + (size_t)nodes[k] * nv);
  for (int k = 0; k < nnodes; k++) {
    const int first = nodes[k], end = k + 1 < nnodes ? nodes[k + 1] : n;
    const double *qn = q + (size_t)first * nq, *dn = dq + (size_t)first * nv, *an = ddq + (size_t)first * nv;
    for (int i = first + 1; i < end; i++) sweep_predict(w, qn, dn, an, theta[i] - theta[first], q + (size_t)i * nq);
  }
  for (int i = 0; i < n; i++) {
    double *qi = q + (size_t)i * nq;
    if (!(sweep_newton(w, qi, theta[i], &moved) && sweep_sign(w, qi) == w->sign)) {
      info[0] = i;
      return 2;
    }
  }
  for (int i = 0; i < n; i++) {
    const double c = sweep_condition(w, q + (size_t)i * nq);
    if (!(c < MS_SWEEP_SINGULAR)) {
      info[0] = i;
      info[1] = c;
      return 3;
    }
  }
  for (int i = 0; i < n; i++) sweep_derivatives(w, q + (size_t)i * nq, dq + (size_t)i * nv, ddq + (size_t)i * nv);
  return 0;
}
#endif
