/* mechsym C runtime: dense LU with partial pivoting of the small block that the static sparse elimination
   (mechsym.codegen.sparse_plan) leaves to run time. */
#ifndef MS_DENSE_H
#define MS_DENSE_H
/* Dense LU with partial pivoting of a small r x r block (row-major); returns 0, or 1 + the column
   where no usable pivot exists (a singular configuration). */
static int dense_lu(double *m, int r, int *piv) {
  for (int k = 0; k < r; ++k) {
    int p = k; double best = fabs(m[k * r + k]);
    for (int i = k + 1; i < r; ++i) { double v = fabs(m[i * r + k]); if (v > best) { best = v; p = i; } }
    piv[k] = p;
    if (!(best > 0.0)) return k + 1;
    if (p != k) for (int j = 0; j < r; ++j) { double t = m[k * r + j]; m[k * r + j] = m[p * r + j]; m[p * r + j] = t; }
    const double inv = 1.0 / m[k * r + k];
    for (int i = k + 1; i < r; ++i) {
      double l = (m[i * r + k] *= inv);
      if (l != 0.0) for (int j = k + 1; j < r; ++j) m[i * r + j] -= l * m[k * r + j];
    }
  }
  return 0;
}

static void dense_solve(const double *m, int r, const int *piv, double *b, double *x) {
  for (int k = 0; k < r; ++k) { int p = piv[k]; if (p != k) { double t = b[k]; b[k] = b[p]; b[p] = t; } }
  for (int i = 0; i < r; ++i) for (int j = 0; j < i; ++j) b[i] -= m[i * r + j] * b[j];
  for (int i = r - 1; i >= 0; --i) {
    double s = b[i];
    for (int j = i + 1; j < r; ++j) s -= m[i * r + j] * x[j];
    x[i] = s / m[i * r + i];
  }
}

static void dense_solve_t(const double *m, int r, const int *piv, double *c, double *y) {
  /* (P M)^T = U^T L^T: solve U^T s = c, L^T t = s, y = P^T t */
  for (int i = 0; i < r; ++i) {
    double s = c[i];
    for (int j = 0; j < i; ++j) s -= m[j * r + i] * y[j];
    y[i] = s / m[i * r + i];
  }
  for (int i = r - 1; i >= 0; --i) for (int j = i + 1; j < r; ++j) y[i] -= m[j * r + i] * y[j];
  for (int k = r - 1; k >= 0; --k) { int p = piv[k]; if (p != k) { double t = y[k]; y[k] = y[p]; y[p] = t; } }
}
#endif
