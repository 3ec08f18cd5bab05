/* mechsym C runtime: the batched evaluation entry points (the loop over samples is here, not in Python),
   included last into a generated mechanism's source; needs its per-sample functions phi1, jac1, gamma1,
   gamma3_1, applied1, apprate1, energy1, points1, branch1 and mass1. */
#ifndef MS_BATCH_H
#define MS_BATCH_H
/* ---- batched entry points (the loop over samples is here, not in Python) ---- */
#define BATCH_QP(NAME, F, OUT)                                                                  \
  void NAME(int n, const double *q, const double *p, double *out) {                             \
    for (int s = 0; s < n; ++s) F(q + (size_t)s * NQ, p, out + (size_t)s * (OUT));             \
  }
BATCH_QP(MS_FN(applied), applied1, NQ)
BATCH_QP(MS_FN(jac), jac1, NROW * NQ)

void MS_FN(phi)(int n, const double *q, const double *th, const double *p, double *out) {
  for (int s = 0; s < n; ++s) phi1(q + (size_t)s * NQ, th + (size_t)s * NTH, p, out + (size_t)s * NROW);
}
void MS_FN(gamma)(int n, const double *q, const double *qd, const double *p, double *out) {
  for (int s = 0; s < n; ++s) gamma1(q + (size_t)s * NQ, qd + (size_t)s * NQ, p, out + (size_t)s * NROW);
}
void MS_FN(gamma3)(int n, const double *q, const double *qd, const double *qdd, const double *p, double *out) {
  for (int s = 0; s < n; ++s)
    gamma3_1(q + (size_t)s * NQ, qd + (size_t)s * NQ, qdd + (size_t)s * NQ, p, out + (size_t)s * NROW);
}
void MS_FN(applied_rate)(int n, const double *q, const double *qd, const double *p, double *out) {
  for (int s = 0; s < n; ++s) apprate1(q + (size_t)s * NQ, qd + (size_t)s * NQ, p, out + s);
}
void MS_FN(energy)(int n, const double *q, const double *qd, const double *p, double *out) {
  for (int s = 0; s < n; ++s) energy1(q + (size_t)s * NQ, qd + (size_t)s * NQ, p, out + (size_t)s * 2);
}
void MS_FN(points)(int n, const double *q, const double *p, double *out, int width) {
  for (int s = 0; s < n; ++s) points1(q + (size_t)s * NQ, p, out + (size_t)s * width);
}
void MS_FN(branches)(int n, const double *q, const double *p, double *out, int width) {
  for (int s = 0; s < n; ++s) branch1(q + (size_t)s * NQ, p, out + (size_t)s * width);
}
void MS_FN(mass)(const double *p, double *out) { mass1(p, out); }
#endif
