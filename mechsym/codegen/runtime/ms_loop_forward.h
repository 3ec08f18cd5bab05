/* mechsym C runtime: the constrained accelerations of a spatial closed-loop mechanism at one state, from its
   tree's H and bias and its closure rows' Jacobian J and gamma (mechsym.spatial.loop_compiled), after
   ms_cholesky.h:

     H dv/dt + bias = tau + J^T lambda,    J dv/dt = -gamma.

   J may have redundant rows (Bricard's linkage, the governor's planar loops), so J^T is factored by
   Householder QR with column pivoting, J^T P = Q R, its rank r where a pivot falls below MS_LOOP_RANK times
   the first (the largest row's norm; the Python route's pseudo-inverse drops singular values below the same
   fraction of the largest). The rows are not made of unit length: a row that vanishes at a configuration
   (the governor's rods at rest) would become rounding noise of full size. With y = Q^T dv/dt: the r independent rows give y_1 by forward
   substitution (R_11^T y_1 = -(P^T gamma)_1), and the dynamics projected on the null space of J (the last
   nv - r columns of Q) give y_2 from (Q^T H Q)_22 y_2 = (Q^T (tau - bias))_2 - (Q^T H Q)_21 y_1 by Cholesky.
   dv/dt is unique (the redundant rows leave lambda, not dv/dt, undetermined): the acceleration of the
   least-squares solution of the KKT system [H J^T; J 0] that the Python route solves. */
#ifndef MS_LOOP_FORWARD_H
#define MS_LOOP_FORWARD_H
#define MS_LOOP_RANK 1e-10

/* Reflector k of the QR (its vector in a[k:, k] after the factorisation, scaled so that its first entry is
   1 and beta = 2 / |u|^2) applied to x (length n, stride s) from the left: x -= beta u (u . x). */
static void loop_reflect(int n, int k, const double *a, int lda, double beta, double *x, int s) {
  double d = x[k * s];
  for (int i = k + 1; i < n; i++) d += a[i * lda + k] * x[i * s];
  d *= beta;
  x[k * s] -= d;
  for (int i = k + 1; i < n; i++) x[i * s] -= d * a[i * lda + k];
}

/* dv/dt (nv) at one state: terms holds H (nv x nv, row-major), bias (nv), J (nr x nv, row-major) and
   gamma (nr), in that order (the generated function `terms`); tau (nv) the generalised forces; work at least
   nv * (2 nv + nr + 3) + 2 nr doubles. NaN where the null-space block of H is not positive definite. */
static void loop_accelerations(int nv, int nr, const double *terms, const double *tau, double *work, double *out) {
  const double *H = terms, *bias = terms + nv * nv, *J = bias + nv, *gamma = J + nr * nv;
  double *a = work;                        /* J^T, nv x nr: QR in place */
  double *beta = a + nv * nr;              /* nv */
  double *W = beta + nv;                   /* Q^T H Q, nv x nv */
  double *y = W + nv * nv;                 /* nv */
  double *f = y + nv;                      /* Q^T (tau - bias), nv */
  double *L = f + nv;                      /* the null-space block, nv x nv */
  double *g = L + nv * nv;                 /* the rows' right-hand side -gamma, nr */
  double *norm = g + nr;                   /* the columns' remaining norms, nr */
  for (int j = 0; j < nr; j++) {
    for (int i = 0; i < nv; i++) a[i * nr + j] = J[j * nv + i];
    g[j] = -gamma[j];
  }
  int r = 0;
  double first = 0.0;
  for (int k = 0; k < nv && k < nr; k++) {
    int best = k;
    for (int j = k; j < nr; j++) {
      double s = 0.0;
      for (int i = k; i < nv; i++) s += a[i * nr + j] * a[i * nr + j];
      norm[j] = s;
      if (s > norm[best]) best = j;
    }
    const double top = sqrt(norm[best]);
    if (k == 0) first = top;
    if (!(top > MS_LOOP_RANK * first)) break;
    if (best != k) {
      for (int i = 0; i < nv; i++) { double t = a[i * nr + k]; a[i * nr + k] = a[i * nr + best]; a[i * nr + best] = t; }
      double tg = g[k]; g[k] = g[best]; g[best] = tg;
    }
    /* the reflector taking a[k:, k] to (alpha, 0, ...), alpha = -sign(a_kk) top */
    const double akk = a[k * nr + k], alpha = akk >= 0.0 ? -top : top, u0 = akk - alpha;
    double uu = 1.0;
    for (int i = k + 1; i < nv; i++) { a[i * nr + k] /= u0; uu += a[i * nr + k] * a[i * nr + k]; }
    beta[k] = 2.0 / uu;
    a[k * nr + k] = alpha;
    for (int j = k + 1; j < nr; j++) {                     /* the reflector on the other columns */
      double d = a[k * nr + j];
      for (int i = k + 1; i < nv; i++) d += a[i * nr + k] * a[i * nr + j];
      d *= beta[k];
      a[k * nr + j] -= d;
      for (int i = k + 1; i < nv; i++) a[i * nr + j] -= d * a[i * nr + k];
    }
    r = k + 1;
  }
  /* y_1: R_11^T y_1 = g_1 (R_11 upper triangular in a[:r, :r]) */
  for (int i = 0; i < r; i++) {
    double s = g[i];
    for (int k = 0; k < i; k++) s -= a[k * nr + i] * y[k];
    y[i] = s / a[i * nr + i];
  }
  /* W = Q^T H Q and f = Q^T (tau - bias): Q^T = H_{r-1} ... H_0 applied to rows, then to columns */
  for (int i = 0; i < nv * nv; i++) W[i] = H[i];
  for (int i = 0; i < nv; i++) f[i] = tau[i] - bias[i];
  for (int k = 0; k < r; k++) {
    for (int j = 0; j < nv; j++) loop_reflect(nv, k, a, nr, beta[k], W + j, nv);     /* columns of W */
    for (int i = 0; i < nv; i++) loop_reflect(nv, k, a, nr, beta[k], W + i * nv, 1); /* rows of W */
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
#endif
