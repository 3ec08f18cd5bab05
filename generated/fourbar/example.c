/* Example for fourbar, printing three CSV blocks, each after a line "# name: columns":
   kinematics (the named points), inverse dynamics at 2 rad/s (the driving torque torque) and the reduced
   ODE with its Jacobian at 2 rad/s under zero torque, at 8 values of theta over one turn from
   FOURBAR_THETA_REF; and forward dynamics from rest at FOURBAR_THETA_REF under zero torque for 0.2 s. */
#include <stdio.h>
#include "fourbar.h"

int main(void) {
  enum { N = 8, NT = 21 };
  static double th[N], q[N * FOURBAR_NQ], coef[N], branch[N], u[N * FOURBAR_NU * 3], pts[N * 2 * FOURBAR_NPOINTS + 1];
  static double grid[NT], y[NT * 2];
  const double omega = 2.0, tol = 1e-10;
  int status = 0, n_events = 0;
  long nfev = 0, n_rec = 0;
  for (int i = 0; i < N; ++i) th[i] = FOURBAR_THETA_REF + 6.283185307179586 * i / N;
  int failed = fourbar_inverse(N, th, FOURBAR_PARAMS, FOURBAR_Q_REF, FOURBAR_SCALE, tol, 30, 0.1, q, coef, branch, u, &status, 0);
  if (failed >= 0) { fprintf(stderr, "inverse failed at sample %d (status %d)\n", failed, status); return 1; }
  fourbar_points(N, q, FOURBAR_PARAMS, pts, 2 * FOURBAR_NPOINTS);
  printf("# points: theta,A.x,A.y,B.x,B.y,P.x,P.y,C.x,C.y,M.x,M.y\n");
  for (int i = 0; i < N; ++i) {
    printf("%.17g", th[i]);
    for (int k = 0; k < 2 * FOURBAR_NPOINTS; ++k) printf(",%.17g", pts[i * 2 * FOURBAR_NPOINTS + k]);
    printf("\n");
  }
  printf("# inverse: theta,torque\n");
  for (int i = 0; i < N; ++i) {
    const double *ui = u + (size_t)i * FOURBAR_NU * 3 + 3 * (FOURBAR_NU - 1);
    printf("%.17g,%.17g\n", th[i], omega * omega * ui[1] + ui[2]);
  }
  static double om[N], f[N * 2], jac[N * 4];
  for (int i = 0; i < N; ++i) om[i] = omega;
  failed = fourbar_ode(N, th, om, 0.0, FOURBAR_PARAMS, FOURBAR_Q_REF, FOURBAR_SCALE, tol, 30, 0.1, f, jac, &status, 0);
  if (failed >= 0) { fprintf(stderr, "ode failed at sample %d (status %d)\n", failed, status); return 1; }
  printf("# ode: theta,omega,thetadd,dthetadd/dtheta,dthetadd/domega\n");
  for (int i = 0; i < N; ++i) printf("%.17g,%.17g,%.17g,%.17g,%.17g\n", th[i], om[i], f[2 * i + 1], jac[4 * i + 2], jac[4 * i + 3]);
  for (int i = 0; i < NT; ++i) grid[i] = 0.2 * i / (NT - 1);
  int written = fourbar_forward(0.0, FOURBAR_THETA_REF, 0.0, 0.2, grid, NT, tol, tol, FOURBAR_PARAMS, FOURBAR_Q_REF, FOURBAR_SCALE,
      tol, 30, 0.1, 0, 0, 0, 0, 0, 0, 0, 0, 0, &n_events, y, &nfev, 0, 0, &n_rec, &status);
  if (status) { fprintf(stderr, "forward failed (status %d)\n", status); return 1; }
  printf("# forward: t,theta,omega\n");
  for (int i = 0; i < written; ++i) printf("%.17g,%.17g,%.17g\n", grid[i], y[2 * i], y[2 * i + 1]);
  return 0;
}
