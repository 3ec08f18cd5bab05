/* mechsym C runtime: a small dense Cholesky solve (a spatial tree's forward dynamics, H qdd = tau - bias;
   the contact terms of hard contact, which reuse one factor). */
#ifndef MS_CHOLESKY_H
#define MS_CHOLESKY_H
/* Cholesky H = L L^T in place (lower triangle, H row-major n x n); 0 if H is not positive definite. */
static int chol_factor(int n, double *H) {
  for (int j = 0; j < n; j++) {
    double d = H[j * n + j];
    for (int k = 0; k < j; k++) d -= H[j * n + k] * H[j * n + k];
    if (!(d > 0)) return 0;
    d = sqrt(d);
    H[j * n + j] = d;
    for (int i = j + 1; i < n; i++) {
      double s = H[i * n + j];
      for (int k = 0; k < j; k++) s -= H[i * n + k] * H[j * n + k];
      H[i * n + j] = s / d;
    }
  }
  return 1;
}
/* x = H^-1 b with the factor L of chol_factor (x may be b) */
static void chol_factored_solve(int n, const double *L, const double *b, double *x) {
  if (x != b)
    for (int i = 0; i < n; i++) x[i] = b[i];
  for (int i = 0; i < n; i++) {
    double s = x[i];
    for (int k = 0; k < i; k++) s -= L[i * n + k] * x[k];
    x[i] = s / L[i * n + i];
  }
  for (int i = n - 1; i >= 0; i--) {
    double s = x[i];
    for (int k = i + 1; k < n; k++) s -= L[k * n + i] * x[k];
    x[i] = s / L[i * n + i];
  }
}
/* x = H^-1 b by Cholesky (H overwritten by its factor); NaN if H is not positive definite */
static void chol_solve(int n, double *H, const double *b, double *x) {
  if (!chol_factor(n, H)) { for (int i = 0; i < n; i++) x[i] = NAN; return; }
  chol_factored_solve(n, H, b, x);
}
#endif
