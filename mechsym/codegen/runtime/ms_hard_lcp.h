/* mechsym C runtime, hard contact (mechsym/codegen/runtime/hard_contact.c): small dense linear algebra and
   the LCP solved by Lemke's method (mechsym/contact/lcp.py's rules: the tableau [I, -M, -e | q], the covering
   vector of ones, the lexicographic ratio test, the polishing solve and the complementarity check). */
#ifndef MS_HARD_LCP_H
#define MS_HARD_LCP_H
/* ------------------------------------------------------------------ small dense linear algebra */

/* LU with partial pivoting of the m x m matrix A (row stride lda) in place; 0 where a pivot is exactly
   zero. rcond_est: the smallest over the largest pivot magnitude (a cheap conditioning estimate). */
static int lu(int m, double *A, int lda, int *piv, double *rcond_est) {
  double big = 0.0, small = INFINITY;
  for (int j = 0; j < m; j++) {
    int r = j;
    for (int i = j + 1; i < m; i++)
      if (fabs(A[i * lda + j]) > fabs(A[r * lda + j])) r = i;
    piv[j] = r;
    if (A[r * lda + j] == 0.0) return 0;
    if (r != j)
      for (int c = 0; c < m; c++) { double t = A[j * lda + c]; A[j * lda + c] = A[r * lda + c]; A[r * lda + c] = t; }
    double d = A[j * lda + j];
    if (fabs(d) > big) big = fabs(d);
    if (fabs(d) < small) small = fabs(d);
    for (int i = j + 1; i < m; i++) {
      double f = A[i * lda + j] / d;
      A[i * lda + j] = f;
      for (int c = j + 1; c < m; c++) A[i * lda + c] -= f * A[j * lda + c];
    }
  }
  if (rcond_est) *rcond_est = m ? small / big : 1.0;
  return 1;
}

static void lu_solve(int m, const double *A, int lda, const int *piv, double *x) {
  for (int j = 0; j < m; j++) {
    if (piv[j] != j) { double t = x[j]; x[j] = x[piv[j]]; x[piv[j]] = t; }
  }
  for (int i = 0; i < m; i++)
    for (int l = 0; l < i; l++) x[i] -= A[i * lda + l] * x[l];
  for (int i = m - 1; i >= 0; i--) {
    for (int l = i + 1; l < m; l++) x[i] -= A[i * lda + l] * x[l];
    x[i] /= A[i * lda + i];
  }
}

static double maxabs(int n, const double *x) {
  double m = 0.0;
  for (int i = 0; i < n; i++) if (fabs(x[i]) > m) m = fabs(x[i]);
  return m;
}

/* ------------------------------------------------------------------ the LCP */

/* w = M z + q and the largest violation of z >= 0, w >= 0, min(z, w) = 0 relative to the scales of z and w
   (mechsym.contact.lcp.lcp_residual). */
static double residual(int n, const double *M, const double *q, const double *z, double *w) {
  double zs = maxabs(n, z), Mmax = maxabs(n * n, M), qs = maxabs(n, q);
  if (zs < MS_FLOOR) zs = MS_FLOOR;
  double ws = qs + Mmax * zs;
  if (ws < MS_FLOOR) ws = MS_FLOOR;
  double viol = 0.0;
  for (int i = 0; i < n; i++) {
    double s = q[i];
    for (int j = 0; j < n; j++) s += M[i * n + j] * z[j];
    w[i] = s;
    double zr = z[i] / zs, wr = s / ws, mn = zr < wr ? zr : wr;
    if (-zr > viol) viol = -zr;
    if (-wr > viol) viol = -wr;
    if (fabs(mn) > viol) viol = fabs(mn);
  }
  return viol;
}

static void pivot(int n, int width, double *tab, int row, int col) {
  double *r = tab + row * width, d = r[col];
  for (int c = 0; c < width; c++) r[c] /= d;
  for (int i = 0; i < n; i++) {
    if (i == row) continue;
    double f = tab[i * width + col];
    if (f == 0.0) continue;
    double *t = tab + i * width;
    for (int c = 0; c < width; c++) t[c] -= f * r[c];
  }
}

/* Lemke's method on LCP(M, q) (n unknowns) into z; returns MC_OK, MC_RAY or MC_PIVOTS; *pivots counted. */
static int lemke(int n, const double *M, const double *q, double *z, int *pivots, double *work, int *iwork) {
  *pivots = 0;
  int all = 1;
  for (int i = 0; i < n; i++) if (q[i] < 0) all = 0;
  memset(z, 0, n * sizeof(double));
  if (n == 0 || all) return MC_OK;
  int width = 2 * n + 2, max_pivots = MS_LEMKE_PIVOTS * (n + 1);
  double *tab = work, *x = tab + n * width, *pol = x + 2 * n + 1, *Ms = pol + n, *w1 = Ms + n * n, *w2 = w1 + n;
  int *basis = iwork, *cand = basis + n, *tied = cand + n, *piv = tied + n, *Sidx = piv + n;
  for (int i = 0; i < n; i++) {
    double *t = tab + i * width;
    for (int c = 0; c < width; c++) t[c] = 0.0;
    t[i] = 1.0;
    for (int j = 0; j < n; j++) t[n + j] = -M[i * n + j];
    t[2 * n] = -1.0;
    t[2 * n + 1] = q[i];
    basis[i] = i;
  }
  double scale = maxabs(n * width, tab);
  if (scale < 1.0) scale = 1.0;
  int row = 0;
  for (int i = 1; i < n; i++) if (q[i] < q[row]) row = i;
  int entering = 2 * n;
  for (;;) {
    pivot(n, width, tab, row, entering);
    int leaving = basis[row];
    basis[row] = entering;
    (*pivots)++;
    if (leaving == 2 * n) break;
    if (*pivots > max_pivots) return MC_PIVOTS;
    entering = leaving < n ? leaving + n : leaving - n;
    int nc = 0;
    for (int i = 0; i < n; i++) if (tab[i * width + entering] > MS_LEMKE_PIVOT_TOL * scale) cand[nc++] = i;
    if (nc == 0) return MC_RAY;
    /* the minimum ratio; ties lexicographically on B^-1, z0 leaving whenever tied */
    double best = INFINITY;
    for (int a = 0; a < nc; a++) {
      double r = tab[cand[a] * width + width - 1] / tab[cand[a] * width + entering];
      if (r < best) best = r;
    }
    double lim = best + MS_LEMKE_TIE * (fabs(best) > 1.0 ? fabs(best) : 1.0);
    int nt = 0;
    for (int a = 0; a < nc; a++) {
      double r = tab[cand[a] * width + width - 1] / tab[cand[a] * width + entering];
      if (r <= lim) tied[nt++] = cand[a];
    }
    row = tied[0];
    if (nt > 1) {
      int z0 = -1;
      for (int a = 0; a < nt; a++) if (basis[tied[a]] == 2 * n) { z0 = tied[a]; break; }
      if (z0 >= 0) row = z0;
      else {
        for (int a = 1; a < nt; a++) {
          int r = tied[a];
          double cr = tab[r * width + entering], cb = tab[row * width + entering];
          for (int c = 0; c < n; c++) {
            double kr = tab[r * width + c] / cr, kb = tab[row * width + c] / cb;
            if (kr < kb) { row = r; break; }
            if (kr > kb) break;
          }
        }
      }
    }
  }
  memset(x, 0, (2 * n + 1) * sizeof(double));
  for (int i = 0; i < n; i++) x[basis[i]] = tab[i * width + width - 1];
  for (int i = 0; i < n; i++) z[i] = x[n + i] > 0.0 ? x[n + i] : 0.0;
  /* polish: the basic z solved directly from M_SS z_S = -q_S (the tableau gathers round-off) */
  int ns = 0;
  for (int i = 0; i < n; i++) if (basis[i] >= n && basis[i] < 2 * n) Sidx[ns++] = basis[i] - n;
  if (ns) {
    /* in increasing order, as a boolean mask selects them */
    for (int a = 1; a < ns; a++)
      for (int b = a; b > 0 && Sidx[b - 1] > Sidx[b]; b--) { int t = Sidx[b]; Sidx[b] = Sidx[b - 1]; Sidx[b - 1] = t; }
    for (int a = 0; a < ns; a++)
      for (int b = 0; b < ns; b++) Ms[a * ns + b] = M[Sidx[a] * n + Sidx[b]];
    double rc;
    if (lu(ns, Ms, ns, piv, &rc) && rc > 1e-12) {
      memset(pol, 0, n * sizeof(double));
      for (int a = 0; a < ns; a++) w1[a] = -q[Sidx[a]];
      lu_solve(ns, Ms, ns, piv, w1);
      for (int a = 0; a < ns; a++) pol[Sidx[a]] = w1[a];
      if (residual(n, M, q, pol, w2) < residual(n, M, q, z, w1))
        for (int i = 0; i < n; i++) z[i] = pol[i] > 0.0 ? pol[i] : 0.0;
    }
  }
  return MC_OK;
}

/* mechsym.contact.lcp.solve_lcp without its minimum-norm step: a warm start from `guess` (or none), else
   Lemke; MC_CHECK where the check fails. info: warm, pivots, and info[2] = 1 where the support of the
   solution is not unique (the Python route then takes the minimum-norm z with the same generalised force). */
static int solve_lcp(int n, const double *M, const double *q, const int *guess, double check_tol, double *z,
                     double *w, int *info, double *viol_out, double *work, int *iwork) {
  info[0] = 0; info[1] = 0; info[2] = 0;
  double viol;
  int have = 0;
  if (guess && n) {
    int ns = 0, *Sidx = iwork, *piv = iwork + n;
    double *Ms = work, *t = work + n * n, *trial = t + n;
    for (int i = 0; i < n; i++) if (guess[i]) Sidx[ns++] = i;
    memset(trial, 0, n * sizeof(double));
    int ok = 1;
    if (ns) {
      for (int a = 0; a < ns; a++) {
        for (int b = 0; b < ns; b++) Ms[a * ns + b] = M[Sidx[a] * n + Sidx[b]];
        t[a] = -q[Sidx[a]];
      }
      ok = lu(ns, Ms, ns, piv, NULL);
      if (ok) {
        lu_solve(ns, Ms, ns, piv, t);
        for (int a = 0; a < ns; a++) trial[Sidx[a]] = t[a];
      }
    }
    if (ok && residual(n, M, q, trial, w) <= check_tol) {
      for (int i = 0; i < n; i++) z[i] = trial[i] > 0.0 ? trial[i] : 0.0;
      info[0] = 1;
      have = 1;
    }
  }
  if (!have) {
    int st = lemke(n, M, q, z, &info[1], work, iwork);
    if (st != MC_OK) return st;
  }
  viol = residual(n, M, q, z, w);
  if (n) {
    double scale = check_tol * (maxabs(n, q) + maxabs(n * n, M) * maxabs(n, z) + MS_FLOOR);
    int ns = 0, same = 1, *Sidx = iwork, *piv = iwork + n;
    for (int i = 0; i < n; i++) {
      int s = w[i] <= scale;
      if (s != (z[i] > 0)) same = 0;
      if (s) Sidx[ns++] = i;
    }
    if (ns) {
      double *Ms = work, rc = 0.0;
      for (int a = 0; a < ns; a++)
        for (int b = 0; b < ns; b++) Ms[a * ns + b] = M[Sidx[a] * n + Sidx[b]];
      /* the pivots' ratio bounds the condition number from below: well above 1e-10 means a unique z */
      if (!same || !lu(ns, Ms, ns, piv, &rc) || rc < 1e-7) info[2] = 1;
    }
  }
  *viol_out = viol;
  if (viol > check_tol) return MC_CHECK;
  return MC_OK;
}
#endif
