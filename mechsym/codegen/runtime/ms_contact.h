/* mechsym C runtime: compliant ground contact (spatial_v2's law for points) on a generated model, integrated in C with every
   change of a point's state located as an event: the algorithm of mechsym.contact.run on mechsym.core.hybrid
   and scipy's solve_ivp(method="RK45"), step for step, so that an rtol buys the same accuracy on both
   backends.

   Included after the model's generated part, which defines
     NYM, NQC, NSP, ND, NW, NPAR          model states, coordinates, speeds, space and rotation dimensions,
                                          parameters; COORD_OFFSET and SPEED_OFFSET place q and qd in y
     frame1(q, qd, out)                   the body frame: origin (ND), rotation (ND x ND, row-major),
                                          velocity of the origin (ND), angular velocity (NW), world frame
     gen1(q, F, M, out)                   the generalised forces (NSP) of a resultant force F and moment M
                                          (world frame, about the frame's origin)
     rate1(y, gen, p, out)                the model's rates (NYM) under generalised forces gen
     project1(y)                          the state projected onto its manifold (a unit quaternion)
     law_none1, law_stick1, law_slip1     the point law in each held state (mechsym.contact.spatial_v2.law_spec)
   after ms_prefix.h and ms_prelude.h (the interrupt flag: ms_stop, ms_catch, ms_release, MS_INTERRUPTED).

   State y = [model (NYM), u (ND - 1 rows of np deflections, row-major)]. Points keep their state
   (0 none, 1 stick, 2 slip) between located events; the right-hand side evaluates the law's formulas in
   those held states. Guards: min_i (sigma_i c_i + b_i) over all points (contact) and over the points in
   contact (stick), falling through zero; located by Brent's method on the step's dense output. */
#ifndef MS_CONTACT_H
#define MS_CONTACT_H
#include <stdlib.h>

#define NT (ND - 1)

typedef struct {
  int np, ny;
  const double *local, *p;
  double K, D, mu, kdm[3], tau, tol, window;
  int *state;
  double *sig_c, *sig_s, *bias_c, *bias_s, *since, *c, *s;
  long nfev, nsig;
} Contact;

/* Arm R c_i, position and velocity of point i from the body frame fr. */
static void point_motion(const Contact *w, const double *fr, int i, double *arm, double *pos, double *vel) {
  const double *o = fr, *R = fr + ND, *vo = fr + ND + ND * ND, *om = fr + 2 * ND + ND * ND;
  for (int d = 0; d < ND; ++d) {
    double a = 0.0;
    for (int k = 0; k < ND; ++k) a += R[d * ND + k] * w->local[k * w->np + i];
    arm[d] = a;
    pos[d] = o[d] + a;
  }
#if ND == 3
  vel[0] = vo[0] + om[1] * arm[2] - om[2] * arm[1];
  vel[1] = vo[1] + om[2] * arm[0] - om[0] * arm[2];
  vel[2] = vo[2] + om[0] * arm[1] - om[1] * arm[0];
#else
  vel[0] = vo[0] - om[0] * arm[1];
  vel[1] = vo[1] + om[0] * arm[0];
#endif
}

/* spatial_v2's law of one point in its held state st: the generated law_none1, law_stick1, law_slip1
   (mechsym.contact.spatial_v2.law_spec, the formulas of laws_in_states printed to C) on s = (z, zdot, v_t, u)
   and kdm = (K, D, mu): the ground's force ft (ND) and the deflection rate ud (NT). */
static inline void point_law(const double *kdm, int st, const double *pos, const double *vel, const double *u,
                             double *ft, double *ud) {
  double s[2 + 2 * NT], out[ND + NT];
  s[0] = pos[ND - 1];
  s[1] = vel[ND - 1];
  for (int d = 0; d < NT; ++d) { s[2 + d] = vel[d]; s[2 + NT + d] = u[d]; }
  if (st == MS_STICK) law_stick1(s, kdm, out);
  else if (st == MS_SLIP) law_slip1(s, kdm, out);
  else law_none1(s, kdm, out);
  for (int d = 0; d < ND; ++d) ft[d] = out[d];
  for (int d = 0; d < NT; ++d) ud[d] = out[ND + d];
}

/* The continuous signals of one point (mechsym.contact.points.contact_signals), in metres. */
static inline void point_signals(double tau, double mu, const double *pos, const double *vel, const double *u,
                                 double *c, double *s) {
  const double z = pos[ND - 1], depth = -z - tau * vel[ND - 1];
  double n2 = 0.0;
  for (int d = 0; d < NT; ++d) { const double a = u[d] + tau * vel[d]; n2 += a * a; }
  *c = z != z || depth != depth ? NAN : fmin(-z, depth);
  *s = mu * depth - sqrt(n2);
}

/* dy/dt with every point's law evaluated in its held state. */
static void contact_rhs(Contact *w, const double *y, double *f) {
  double fr[2 * ND + ND * ND + NW], F[ND], M[NW], gen[NSP];
  const int np = w->np;
  w->nfev++;
  frame1(y + COORD_OFFSET, y + SPEED_OFFSET, fr);
  for (int d = 0; d < ND; ++d) F[d] = 0.0;
  for (int d = 0; d < NW; ++d) M[d] = 0.0;
  for (int i = 0; i < np; ++i) {
    double arm[ND], pos[ND], vel[ND], ft[ND], u[NT], ud[NT];
    point_motion(w, fr, i, arm, pos, vel);
    for (int d = 0; d < NT; ++d) u[d] = y[NYM + d * np + i];
    const int st = w->state[i];
    point_law(w->kdm, st, pos, vel, u, ft, ud);
    if (st != MS_NO_CONTACT) {
      for (int d = 0; d < ND; ++d) F[d] += ft[d];
#if ND == 3
      M[0] += arm[1] * ft[2] - arm[2] * ft[1];
      M[1] += arm[2] * ft[0] - arm[0] * ft[2];
      M[2] += arm[0] * ft[1] - arm[1] * ft[0];
#else
      M[0] += arm[0] * ft[1] - arm[1] * ft[0];
#endif
    }
    for (int d = 0; d < NT; ++d) f[NYM + d * np + i] = ud[d];
  }
  gen1(y + COORD_OFFSET, F, M, gen);
  rate1(y, gen, w->p, f);
}

/* The continuous signals (mechsym.contact.points.contact_signals) of every point, in metres. */
static void contact_signals(Contact *w, const double *y) {
  double fr[2 * ND + ND * ND + NW];
  const int np = w->np;
  w->nsig++;
  frame1(y + COORD_OFFSET, y + SPEED_OFFSET, fr);
  for (int i = 0; i < np; ++i) {
    double arm[ND], pos[ND], vel[ND], u[NT];
    point_motion(w, fr, i, arm, pos, vel);
    for (int d = 0; d < NT; ++d) u[d] = y[NYM + d * np + i];
    point_signals(w->tau, w->mu, pos, vel, u, w->c + i, w->s + i);
  }
}

/* The law and the signals of n points given directly (ND x n positions and velocities, NT x n deflections,
   row-major; states per point): forces f (ND x n), rates ud (NT x n), signals c, s (n). What the run
   evaluates, exposed so that it can be held against mechsym.contact.spatial_v2. */
void MS_FN(contact_law)(int n, const double *pos, const double *vel, const double *u, const int *state, double K,
                        double D, double mu, double *f, double *ud, double *c, double *s) {
  const double kdm[3] = {K, D, mu};
  for (int i = 0; i < n; ++i) {
    double p1[ND], v1[ND], u1[NT], f1[ND], ud1[NT];
    for (int d = 0; d < ND; ++d) { p1[d] = pos[d * n + i]; v1[d] = vel[d * n + i]; }
    for (int d = 0; d < NT; ++d) u1[d] = u[d * n + i];
    point_law(kdm, state[i], p1, v1, u1, f1, ud1);
    point_signals(D / K, mu, p1, v1, u1, c + i, s + i);
    for (int d = 0; d < ND; ++d) f[d * n + i] = f1[d];
    for (int d = 0; d < NT; ++d) ud[d * n + i] = ud1[d];
  }
}

/* The two guards (contact, stick) at state y: minima that propagate NaN as numpy's min does. */
static void contact_guards(Contact *w, const double *y, double *g) {
  contact_signals(w, y);
  double gc = INFINITY, gs = INFINITY;
  int any = 0;
  for (int i = 0; i < w->np; ++i) {
    const double a = w->sig_c[i] * w->c[i] + w->bias_c[i];
    if (a < gc || a != a) gc = gc != gc ? gc : a;
    if (w->state[i] != MS_NO_CONTACT) {
      const double b = w->sig_s[i] * w->s[i] + w->bias_s[i];
      any = 1;
      if (b < gs || b != b) gs = gs != gs ? gs : b;
    }
  }
  g[0] = gc;
  g[1] = any ? gs : 1.0;
}

/* Signs for the held states and the biases of the points switched at this instant (Guards._arm). */
static void contact_arm(Contact *w, const unsigned char *fresh) {
  for (int i = 0; i < w->np; ++i) {
    w->sig_c[i] = w->state[i] != MS_NO_CONTACT ? 1.0 : -1.0;
    w->sig_s[i] = w->state[i] == MS_STICK ? 1.0 : -1.0;
    w->bias_c[i] = fresh[i] ? fmax(0.0, w->tol - w->sig_c[i] * w->c[i]) : 0.0;
    w->bias_s[i] = fresh[i] ? fmax(0.0, w->tol - w->sig_s[i] * w->s[i]) : 0.0;
  }
}
#endif
