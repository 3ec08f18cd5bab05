/* Example for pasibot, printing three CSV blocks, each after a line "# name: columns":
   kinematics (the named points), inverse dynamics at 2 rad/s (the driving torque T8) and the reduced
   ODE with its Jacobian at 2 rad/s under zero torque, at 8 values of theta8 over one turn from
   PASIBOT_THETA_REF; and forward dynamics from rest at PASIBOT_THETA_REF under zero torque for 0.2 s. */
#include <stdio.h>
#include "pasibot.h"

int main(void) {
  enum { N = 8, NT = 21 };
  static double th[N], q[N * PASIBOT_NQ], coef[N], branch[N], u[N * PASIBOT_NU * 3], pts[N * 2 * PASIBOT_NPOINTS + 1];
  static double grid[NT], y[NT * 2];
  const double omega = 2.0, tol = 1e-10;
  int status = 0, n_events = 0;
  long nfev = 0, n_rec = 0;
  for (int i = 0; i < N; ++i) th[i] = PASIBOT_THETA_REF + 6.283185307179586 * i / N;
  int failed = pasibot_inverse(N, th, PASIBOT_PARAMS, PASIBOT_Q_REF, PASIBOT_SCALE, tol, 30, 0.1, q, coef, branch, u, &status, 0);
  if (failed >= 0) { fprintf(stderr, "inverse failed at sample %d (status %d)\n", failed, status); return 1; }
  pasibot_points(N, q, PASIBOT_PARAMS, pts, 2 * PASIBOT_NPOINTS);
  printf("# points: theta8,A.x,A.y,B.x,B.y,D.x,D.y,slot.x,slot.y,P.x,P.y,P_f.x,P_f.y,E.x,E.y,K.x,K.y,L.x,L.y,C.x,C.y,F.x,F.y,H.x,H.y,Hp.x,Hp.y,M.x,M.y,S.x,S.y,G.x,G.y,Ep.x,Ep.y,heel.x,heel.y,toe.x,toe.y,E_f.x,E_f.y,K_f.x,K_f.y,L_f.x,L_f.y,C_f.x,C_f.y,F_f.x,F_f.y,H_f.x,H_f.y,Hp_f.x,Hp_f.y,M_f.x,M_f.y,S_f.x,S_f.y,G_f.x,G_f.y,Ep_f.x,Ep_f.y,heel_f.x,heel_f.y,toe_f.x,toe_f.y\n");
  for (int i = 0; i < N; ++i) {
    printf("%.17g", th[i]);
    for (int k = 0; k < 2 * PASIBOT_NPOINTS; ++k) printf(",%.17g", pts[i * 2 * PASIBOT_NPOINTS + k]);
    printf("\n");
  }
  printf("# inverse: theta8,T8\n");
  for (int i = 0; i < N; ++i) {
    const double *ui = u + (size_t)i * PASIBOT_NU * 3 + 3 * (PASIBOT_NU - 1);
    printf("%.17g,%.17g\n", th[i], omega * omega * ui[1] + ui[2]);
  }
  static double om[N], f[N * 2], jac[N * 4];
  for (int i = 0; i < N; ++i) om[i] = omega;
  failed = pasibot_ode(N, th, om, 0.0, PASIBOT_PARAMS, PASIBOT_Q_REF, PASIBOT_SCALE, tol, 30, 0.1, f, jac, &status, 0);
  if (failed >= 0) { fprintf(stderr, "ode failed at sample %d (status %d)\n", failed, status); return 1; }
  printf("# ode: theta8,omega,thetadd,dthetadd/dtheta,dthetadd/domega\n");
  for (int i = 0; i < N; ++i) printf("%.17g,%.17g,%.17g,%.17g,%.17g\n", th[i], om[i], f[2 * i + 1], jac[4 * i + 2], jac[4 * i + 3]);
  for (int i = 0; i < NT; ++i) grid[i] = 0.2 * i / (NT - 1);
  int written = pasibot_forward(0.0, PASIBOT_THETA_REF, 0.0, 0.2, grid, NT, tol, tol, PASIBOT_PARAMS, PASIBOT_Q_REF, PASIBOT_SCALE,
      tol, 30, 0.1, 0, 0, 0, 0, 0, 0, 0, 0, 0, &n_events, y, &nfev, 0, 0, &n_rec, &status);
  if (status) { fprintf(stderr, "forward failed (status %d)\n", status); return 1; }
  printf("# forward: t,theta8,omega\n");
  for (int i = 0; i < written; ++i) printf("%.17g,%.17g,%.17g\n", grid[i], y[2 * i], y[2 * i + 1]);
  return 0;
}
