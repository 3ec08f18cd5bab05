/* mechsym C runtime: the forward dynamics of a spatial closed-loop mechanism at one state
   (mechsym.spatial.loop_compiled), after ms_cholesky.h and ms_dense.h.

   loop_accelerations: the constrained accelerations from the tree's H and bias and the closure rows' Jacobian J
   and gamma,
     H dv/dt + bias = tau + J^T lambda,    J dv/dt = -gamma.
   J may have redundant rows (Bricard's linkage, the governor's planar loops), so J^T is factored by
   Householder QR with column pivoting, J^T P = Q R, its rank r where a pivot falls below MS_LOOP_RANK times
   the first (the largest row's norm; the Python route's pseudo-inverse drops singular values below the same
   fraction of the largest). The rows are not made of unit length: a row that vanishes at a configuration
   (the governor's rods at rest) would become rounding noise of full size. With y = Q^T dv/dt: the r
   independent rows give y_1 by forward substitution (R_11^T y_1 = -(P^T gamma)_1), and the dynamics projected
   on the null space of J (the last nv - r columns of Q) give y_2 from
   (Q^T H Q)_22 y_2 = (Q^T (tau - bias))_2 - (Q^T H Q)_21 y_1 by Cholesky. dv/dt is unique (the redundant rows
   leave lambda, not dv/dt, undetermined): the acceleration of the least-squares solution of the KKT system
   [H J^T; J 0] that the Python route solves.

   loop_dependent: the dependent coordinates and speeds of a partition into independent and dependent ones
   (mechsym.spatial.loop_dynamics.Partition.configuration, step for step), for a mechanism whose joints are
   joints whose rates are their speeds and spherical joints (loop_integrate). */
#ifndef MS_LOOP_FORWARD_H
#define MS_LOOP_FORWARD_H
#define MS_LOOP_RANK 1e-10
#define MS_LOOP_ITER 30

/* Reflector k of a QR (its vector in a[k+1:, k] below an implied 1, beta = 2 / |u|^2; lda the row stride)
   applied to x (length n, stride s) from the left: x -= beta u (u . x). */
static void loop_reflect(int n, int k, const double *a, int lda, double beta, double *x, int s) {
  double d = x[k * s];
  for (int i = k + 1; i < n; i++) d += a[i * lda + k] * x[i * s];
  d *= beta;
  x[k * s] -= d;
  for (int i = k + 1; i < n; i++) x[i * s] -= d * a[i * lda + k];
}

/* Householder QR with column pivoting of a (m x n, row-major) in place, a P = Q R: R above the diagonal, the
   reflectors below, beta (min(m, n)), perm[k] the column at position k; norm (n) is work. Returns the rank r:
   the pivots above MS_LOOP_RANK times the first. */
static int loop_qr(int m, int n, double *a, double *beta, int *perm, double *norm) {
  for (int j = 0; j < n; j++) perm[j] = j;
  double first = 0.0;
  for (int k = 0; k < m && k < n; k++) {
    int best = k;
    for (int j = k; j < n; j++) {
      double s = 0.0;
      for (int i = k; i < m; i++) s += a[i * n + j] * a[i * n + j];
      norm[j] = s;
      if (s > norm[best]) best = j;
    }
    const double top = sqrt(norm[best]);
    if (k == 0) first = top;
    if (!(top > MS_LOOP_RANK * first)) return k;
    if (best != k) {
      for (int i = 0; i < m; i++) { double t = a[i * n + k]; a[i * n + k] = a[i * n + best]; a[i * n + best] = t; }
      int t = perm[k]; perm[k] = perm[best]; perm[best] = t;
    }
    /* the reflector taking a[k:, k] to (alpha, 0, ...), alpha = -sign(a_kk) top */
    const double akk = a[k * n + k], alpha = akk >= 0.0 ? -top : top, u0 = akk - alpha;
    double uu = 1.0;
    for (int i = k + 1; i < m; i++) { a[i * n + k] /= u0; uu += a[i * n + k] * a[i * n + k]; }
    beta[k] = 2.0 / uu;
    a[k * n + k] = alpha;
    for (int j = k + 1; j < n; j++) loop_reflect(m, k, a, n, beta[k], a + j, n);
  }
  return m < n ? m : n;
}

/* x (n) minimising |A x - b| for A (m x n, row-major), the basic solution of its independent columns (where A
   has full column rank, the pseudo-inverse's); work m * n + m + 2 n doubles and n ints. */
static void loop_least_squares(int m, int n, const double *A, const double *b, double *x, double *work, int *perm) {
  double *a = work, *c = a + m * n, *beta = c + m, *norm = beta + n;
  for (int i = 0; i < m * n; i++) a[i] = A[i];
  for (int i = 0; i < m; i++) c[i] = b[i];
  const int r = loop_qr(m, n, a, beta, perm, norm);
  for (int k = 0; k < r; k++) loop_reflect(m, k, a, n, beta[k], c, 1);
  for (int i = 0; i < n; i++) x[i] = 0.0;
  for (int i = r - 1; i >= 0; i--) {
    double s = c[i];
    for (int j = i + 1; j < r; j++) s -= a[i * n + j] * x[perm[j]];
    x[perm[i]] = s / a[i * n + i];
  }
}

/* dv/dt (nv) at one state: terms holds H (nv x nv, row-major), bias (nv), J (nr x nv, row-major) and
   gamma (nr), in that order (the generated function `terms`); tau (nv) the generalised forces; work at least
   nv (2 nv + nr + 3) + nr doubles, iwork nr ints. NaN where the null-space block of H is not positive
   definite. */
static void loop_accelerations(int nv, int nr, const double *terms, const double *tau, double *work, int *iwork,
                               double *out) {
  const double *H = terms, *bias = terms + nv * nv, *J = bias + nv, *gamma = J + nr * nv;
  double *a = work;                        /* J^T, nv x nr: QR in place */
  double *beta = a + nv * nr;              /* nv */
  double *W = beta + nv;                   /* Q^T H Q, nv x nv */
  double *y = W + nv * nv;                 /* nv */
  double *f = y + nv;                      /* Q^T (tau - bias), nv */
  double *L = f + nv;                      /* the null-space block, nv x nv */
  double *norm = L + nv * nv;              /* nr */
  for (int j = 0; j < nr; j++)
    for (int i = 0; i < nv; i++) a[i * nr + j] = J[j * nv + i];
  const int r = loop_qr(nv, nr, a, beta, iwork, norm);
  /* y_1: R_11^T y_1 = -(P^T gamma)_1 (R_11 upper triangular in a[:r, :r]) */
  for (int i = 0; i < r; i++) {
    double s = -gamma[iwork[i]];
    for (int k = 0; k < i; k++) s -= a[k * nr + i] * y[k];
    y[i] = s / a[i * nr + i];
  }
  /* W = Q^T H Q and f = Q^T (tau - bias): Q^T = H_{r-1} ... H_0 applied to columns, then to rows */
  for (int i = 0; i < nv * nv; i++) W[i] = H[i];
  for (int i = 0; i < nv; i++) f[i] = tau[i] - bias[i];
  for (int k = 0; k < r; k++) {
    for (int j = 0; j < nv; j++) loop_reflect(nv, k, a, nr, beta[k], W + j, nv);
    for (int i = 0; i < nv; i++) loop_reflect(nv, k, a, nr, beta[k], W + i * nv, 1);
    loop_reflect(nv, k, a, nr, beta[k], f, 1);
  }
  /* y_2: W_22 y_2 = f_2 - W_21 y_1 */
  const int m = nv - r;
  for (int i = 0; i < m; i++) {
    double s = f[r + i];
    for (int k = 0; k < r; k++) s -= W[(r + i) * nv + k] * y[k];
    f[r + i] = s;
    for (int j = 0; j < m; j++) L[i * m + j] = W[(r + i) * nv + r + j];
  }
  if (m > 0) chol_solve(m, L, f + r, y + r);
  /* dv/dt = Q y = H_0 ... H_{r-1} y */
  for (int k = r - 1; k >= 0; k--) loop_reflect(nv, k, a, nr, beta[k], y, 1);
  for (int i = 0; i < nv; i++) out[i] = y[i];
}

/* q (nq) moved by the speeds dv (nv) into out (which may be q), joint by joint as LoopSystem.integrate: `man`
   lists the ns coordinates whose rates are their speeds, then the nquat spherical joints' quaternions,
   [ns, (iq, iv) x ns, nquat, (iq, iv) x nquat]; a quaternion (x, y, z, w at iq) turns by the rotation vector
   at iv, q (x) exp(dv), normalised (mechsym.core.quaternion.integrate). */
static void loop_integrate(const int *man, const double *q, const double *dv, double *out) {
  const int ns = man[0], nquat = man[1 + 2 * ns];
  const int *s = man + 1, *u = man + 2 + 2 * ns;
  for (int k = 0; k < ns; k++) out[s[2 * k]] = q[s[2 * k]] + dv[s[2 * k + 1]];
  for (int k = 0; k < nquat; k++) {
    const double *a = q + u[2 * k], *w = dv + u[2 * k + 1];
    const double th = sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
    const double sinc = th < 1e-6 ? 0.5 - th * th / 48 : sin(th / 2) / th;
    const double bx = w[0] * sinc, by = w[1] * sinc, bz = w[2] * sinc, bw = cos(th / 2);
    double r[4] = {a[3] * bx + a[0] * bw + a[1] * bz - a[2] * by, a[3] * by - a[0] * bz + a[1] * bw + a[2] * bx,
                   a[3] * bz + a[0] * by - a[1] * bx + a[2] * bw, a[3] * bw - a[0] * bx - a[1] * by - a[2] * bz};
    const double n = sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + r[3] * r[3]);
    for (int i = 0; i < 4; i++) out[u[2 * k] + i] = r[i] / n;
  }
}

/* The rows' function of a mechanism: phi (nr) and J (nr x nv, row-major) at q into out. */
typedef void (*loop_rows_fn)(const double *q, const double *p, double *out);

/* The system [J; P_I] (nr + ni rows, nv columns, row-major) at q: J from rows (phi, J), then a unit row for
   each independent speed. */
static void loop_system(int nv, int nr, int ni, const int *ind, const double *rows, double *A) {
  for (int i = 0; i < nr * nv; i++) A[i] = rows[nr + i];
  for (int k = 0; k < ni; k++)
    for (int j = 0; j < nv; j++) A[(nr + k) * nv + j] = j == ind[k] ? 1.0 : 0.0;
}

/* sign det (A diag(col)) of a square system A (nv x nv), 0 where it is singular; m work (nv x nv). */
static double loop_sign(int nv, const double *A, const double *col, double *m, int *piv) {
  for (int i = 0; i < nv; i++)
    for (int j = 0; j < nv; j++) m[i * nv + j] = A[i * nv + j] * col[j];
  if (dense_lu(m, nv, piv)) return 0.0;
  double s = 1.0;
  for (int k = 0; k < nv; k++) {
    if (piv[k] != k) s = -s;
    if (m[k * nv + k] < 0.0) s = -s;
  }
  return s;
}

/* The configuration q (nq) and speeds v (nv) of a partition with ni independent speeds ind (their coordinates
   qind, values q_ind, speeds v_ind) and nd = nv - ni dependent ones dep, q starting from the last solved
   configuration (in q on entry): Newton on the dependent columns (least-squares steps, clipped to max_step,
   until a step is below 1e-13 of the scales col; q moved by loop_integrate through `man`), then the checks of
   the Python route: every row within row_tol, moved by less than moved_max (relative to col), and where
   [J; P_I] is square the sign of its determinant `sign`; then v from [J; P_I] v = [0; v_ind]. Returns 0, or 1
   where a check fails (q and v then undefined). work: nr (nv + 1) + 2 m nv + 4 nv + 2 m doubles at least
   (m = nr + ni), iwork nv ints. */
static int loop_dependent(int nv, int nr, int ni, const int *ind, const int *qind, const int *dep, const int *man,
                          const double *q_ind, const double *v_ind, const double *col, const double *max_step,
                          const double *row_tol, double moved_max, double sign, loop_rows_fn rows, const double *p,
                          double *q, double *v, double *work, int *iwork) {
  const int nd = nv - ni, m = nr + ni;
  double *out = work;                      /* phi, J: nr + nr nv */
  double *A = out + nr + nr * nv;          /* J_D (nr x nd), then [J; P_I] (m x nv) */
  double *step = A + m * nv;               /* nv */
  double *b = step + nv;                   /* m + nv */
  double *ls = b + m + nv;                 /* the least squares' work, m nv + m + 2 nv; the sign's, nv nv */
  for (int k = 0; k < ni; k++) q[qind[k]] = q_ind[k];
  double moved = 0.0;
  for (int it = 0; it < MS_LOOP_ITER; it++) {
    rows(q, p, out);
    for (int i = 0; i < nr; i++)
      for (int k = 0; k < nd; k++) A[i * nd + k] = out[nr + i * nv + dep[k]];
    loop_least_squares(nr, nd, A, out, b, ls, iwork);
    double size = 0.0;
    for (int j = 0; j < nv; j++) step[j] = 0.0;
    for (int k = 0; k < nd; k++) {
      const int j = dep[k];
      step[j] = -(b[k] > max_step[j] ? max_step[j] : b[k] < -max_step[j] ? -max_step[j] : b[k]);
    }
    loop_integrate(man, q, step, q);
    for (int j = 0; j < nv; j++) {
      const double s = fabs(step[j]) / col[j];
      if (s > size) size = s;
    }
    moved += size;
    if (size < 1e-13) break;
  }
  rows(q, p, out);
  for (int i = 0; i < nr; i++)
    if (!(fabs(out[i]) <= row_tol[i])) return 1;
  if (!(moved < moved_max)) return 1;
  loop_system(nv, nr, ni, ind, out, A);
  if (m == nv && loop_sign(nv, A, col, ls, iwork) != sign) return 1;
  for (int i = 0; i < nr; i++) b[i] = 0.0;
  for (int k = 0; k < ni; k++) b[nr + k] = v_ind[k];
  loop_least_squares(m, nv, A, b, v, ls, iwork);
  return 0;
}
#endif
