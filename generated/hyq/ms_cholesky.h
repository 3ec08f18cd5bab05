/* mechsym C runtime: a small dense Cholesky solve (a spatial tree's forward dynamics, H qdd = tau - bias). */
#ifndef MS_CHOLESKY_H
#define MS_CHOLESKY_H
/* x = H^-1 b by Cholesky (H row-major n x n, overwritten); NaN if H is not positive definite */
static void chol_solve(int n, double *H, const double *b, double *x) {
  for (int j = 0; j < n; j++) {
    double d = H[j * n + j];
    for (int k = 0; k < j; k++) d -= H[j * n + k] * H[j * n + k];
    if (!(d > 0)) { for (int i = 0; i < n; i++) x[i] = NAN; return; }
    d = sqrt(d);
    H[j * n + j] = d;
    for (int i = j + 1; i < n; i++) {
      double s = H[i * n + j];
      for (int k = 0; k < j; k++) s -= H[i * n + k] * H[j * n + k];
      H[i * n + j] = s / d;
    }
  }
  for (int i = 0; i < n; i++) {
    double s = b[i];
    for (int k = 0; k < i; k++) s -= H[i * n + k] * x[k];
    x[i] = s / H[i * n + i];
  }
  for (int i = n - 1; i >= 0; i--) {
    double s = x[i];
    for (int k = i + 1; k < n; k++) s -= H[k * n + i] * x[k];
    x[i] = s / H[i * n + i];
  }
}
#endif
