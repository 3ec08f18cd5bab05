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

/* ---- scipy's RK45 (Dormand-Prince 5(4), Shampine's quartic dense output) ---- */
static const double RK_C[6] = {0.0, 1.0 / 5, 3.0 / 10, 4.0 / 5, 8.0 / 9, 1.0};
static const double RK_A[6][5] = {
  {0, 0, 0, 0, 0},
  {1.0 / 5, 0, 0, 0, 0},
  {3.0 / 40, 9.0 / 40, 0, 0, 0},
  {44.0 / 45, -56.0 / 15, 32.0 / 9, 0, 0},
  {19372.0 / 6561, -25360.0 / 2187, 64448.0 / 6561, -212.0 / 729, 0},
  {9017.0 / 3168, -355.0 / 33, 46732.0 / 5247, 49.0 / 176, -5103.0 / 18656}};
static const double RK_B[6] = {35.0 / 384, 0, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784, 11.0 / 84};
static const double RK_E[7] = {-71.0 / 57600, 0, 71.0 / 16695, -71.0 / 1920, 17253.0 / 339200, -22.0 / 525, 1.0 / 40};
static const double RK_P[7][4] = {
  {1, -8048581381.0 / 2820520608, 8663915743.0 / 2820520608, -12715105075.0 / 11282082432},
  {0, 0, 0, 0},
  {0, 131558114200.0 / 32700410799, -68118460800.0 / 10900136933, 87487479700.0 / 32700410799},
  {0, -1754552775.0 / 470086768, 14199869525.0 / 1410260304, -10690763975.0 / 1880347072},
  {0, 127303824393.0 / 49829197408, -318862633887.0 / 49829197408, 701980252875.0 / 199316789632},
  {0, -282668133.0 / 205662961, 2019193451.0 / 616988883, -1453857185.0 / 822651844},
  {0, 40617522.0 / 29380423, -110615467.0 / 29380423, 69997945.0 / 29380423}};

static double rms(const double *a, int n) {
  double s = 0.0;
  for (int i = 0; i < n; ++i) s += a[i] * a[i];
  return sqrt(s) / sqrt((double)n);
}

/* scipy's select_initial_step for an error estimator of order 4. */
static double rk_first_step(Contact *w, const double *y, const double *f0, double span, double max_step,
                            double rtol, double atol, double *tmp, double *f1) {
  const int n = w->ny;
  double d0 = 0.0, d1 = 0.0, d2 = 0.0;
  for (int i = 0; i < n; ++i) {
    const double sc = atol + fabs(y[i]) * rtol;
    d0 += (y[i] / sc) * (y[i] / sc);
    d1 += (f0[i] / sc) * (f0[i] / sc);
  }
  d0 = sqrt(d0) / sqrt((double)n);
  d1 = sqrt(d1) / sqrt((double)n);
  double h0 = (d0 < 1e-5 || d1 < 1e-5) ? 1e-6 : 0.01 * d0 / d1;
  h0 = fmin(h0, span);
  for (int i = 0; i < n; ++i) tmp[i] = y[i] + h0 * f0[i];
  contact_rhs(w, tmp, f1);
  for (int i = 0; i < n; ++i) {
    const double sc = atol + fabs(y[i]) * rtol, a = (f1[i] - f0[i]) / sc;
    d2 += a * a;
  }
  d2 = sqrt(d2) / sqrt((double)n) / h0;
  const double h1 = (d1 <= 1e-15 && d2 <= 1e-15) ? fmax(1e-6, h0 * 1e-3) : pow(0.01 / fmax(d1, d2), 1.0 / 5.0);
  return fmin(fmin(fmin(100.0 * h0, h1), span), max_step);
}

/* One RK45 trial step of size h from (y, k[0]): stages k[1..5], y1, k[6] = f(y1); returns the error norm. */
static double rk_step(Contact *w, const double *y, double h, double *k, double *y1, double *tmp, double rtol,
                      double atol, double *err) {
  const int n = w->ny;
  for (int s = 1; s < 6; ++s) {
    for (int i = 0; i < n; ++i) {
      double d = 0.0;
      for (int j = 0; j < s; ++j) d += k[j * n + i] * RK_A[s][j];
      tmp[i] = y[i] + d * h;
    }
    contact_rhs(w, tmp, k + s * n);
  }
  for (int i = 0; i < n; ++i) {
    double d = 0.0;
    for (int j = 0; j < 6; ++j) d += k[j * n + i] * RK_B[j];
    y1[i] = y[i] + h * d;
  }
  contact_rhs(w, y1, k + 6 * n);
  for (int i = 0; i < n; ++i) {
    double e = 0.0;
    for (int j = 0; j < 7; ++j) e += k[j * n + i] * RK_E[j];
    err[i] = e * h / (atol + fmax(fabs(y[i]), fabs(y1[i])) * rtol);
  }
  return rms(err, n);
}

/* The dense output of a step: y(t_old + x h) = y_old + h sum_r Q[i][r] x^(r+1). */
static void rk_dense(const double *Q, const double *y_old, double t_old, double h, double t, int n, double *y) {
  const double x = (t - t_old) / h, p1 = x, p2 = x * x, p3 = p2 * x, p4 = p3 * x;
  for (int i = 0; i < n; ++i)
    y[i] = y_old[i] + h * (Q[4 * i] * p1 + Q[4 * i + 1] * p2 + Q[4 * i + 2] * p3 + Q[4 * i + 3] * p4);
}

typedef struct { Contact *w; const double *Q, *y_old; double t_old, h; int which; double *y; } GuardAt;

static double guard_at(GuardAt *a, double t) {
  double g[2];
  rk_dense(a->Q, a->y_old, a->t_old, a->h, t, a->w->ny, a->y);
  contact_guards(a->w, a->y, g);
  return g[a->which];
}

/* Brent's method as scipy's brentq (xtol = rtol = 4 eps), on the guard along the dense output. */
static double brent(GuardAt *a, double xa, double xb) {
  const double xtol = 4 * 2.220446049250313e-16, rtol = xtol;
  double xpre = xa, xcur = xb, xblk = 0.0, fblk = 0.0, spre = 0.0, scur = 0.0;
  double fpre = guard_at(a, xpre), fcur = guard_at(a, xcur);
  if (fpre == 0.0) return xpre;
  if (fcur == 0.0) return xcur;
  if (signbit(fpre) == signbit(fcur)) return fabs(fpre) < fabs(fcur) ? xpre : xcur;
  for (int it = 0; it < 100; ++it) {
    if (fpre != 0.0 && fcur != 0.0 && signbit(fpre) != signbit(fcur)) {
      xblk = xpre; fblk = fpre; spre = scur = xcur - xpre;
    }
    if (fabs(fblk) < fabs(fcur)) {
      xpre = xcur; xcur = xblk; xblk = xpre;
      fpre = fcur; fcur = fblk; fblk = fpre;
    }
    const double delta = (xtol + rtol * fabs(xcur)) / 2, sbis = (xblk - xcur) / 2;
    if (fcur == 0.0 || fabs(sbis) < delta) return xcur;
    if (fabs(spre) > delta && fabs(fcur) < fabs(fpre)) {
      double stry;
      if (xpre == xblk) {
        stry = -fcur * (xcur - xpre) / (fcur - fpre);
      } else {
        const double dpre = (fpre - fcur) / (xpre - xcur), dblk = (fblk - fcur) / (xblk - xcur);
        stry = -fcur * (fblk * dblk - fpre * dpre) / (dblk * dpre * (fblk - fpre));
      }
      if (2 * fabs(stry) < fmin(fabs(spre), 3 * fabs(sbis) - delta)) { spre = scur; scur = stry; }
      else { spre = sbis; scur = sbis; }
    } else {
      spre = sbis; scur = sbis;
    }
    xpre = xcur; fpre = fcur;
    xcur += fabs(scur) > delta ? scur : (sbis > 0 ? delta : -delta);
    fcur = guard_at(a, xcur);
  }
  return xcur;
}

/* At a located crossing: the switch of mechsym.contact.run's Guards.switch (y projected first). Records the
   changed points in the event buffers; returns 0, or MS_BUFFER_FULL. */
static int contact_switch(Contact *w, double t, double *y, unsigned char *fresh, int cap_events, double *ev_t,
                          int *ev_point, int *ev_before, int *ev_after, int *n_events) {
  project1(y);
  contact_signals(w, y);
  const double half = 0.5 * w->tol;
  for (int i = 0; i < w->np; ++i) {
    const int was_fresh = t - w->since[i] <= w->window * fmax(1.0, fabs(t));
    const int old = w->state[i], incontact = old != MS_NO_CONTACT;
    const int cross_c = w->sig_c[i] * w->c[i] + (was_fresh ? w->bias_c[i] : 0.0) <= half;
    const int cross_s = incontact && w->sig_s[i] * w->s[i] + (was_fresh ? w->bias_s[i] : 0.0) <= half;
    int now = old;
    if (incontact && cross_c) now = MS_NO_CONTACT;
    else if (!incontact && cross_c) now = w->s[i] >= 0 ? MS_STICK : MS_SLIP;
    else if (cross_s) now = old == MS_STICK ? MS_SLIP : MS_STICK;
    if (now != old) {
      if (*n_events >= cap_events) return MS_BUFFER_FULL;
      ev_t[*n_events] = t; ev_point[*n_events] = i; ev_before[*n_events] = old; ev_after[*n_events] = now;
      (*n_events)++;
      w->since[i] = t;
    }
    w->state[i] = now;
    fresh[i] = (unsigned char)(now != old || was_fresh);
  }
  contact_arm(w, fresh);
  return 0;
}

/* The whole run from (0, y0) to t_end (see mechsym.contact.c_run for the buffers). Returns 0 (done), 1 (a step
   fell below its smallest size), 5 (interrupted), 6 (a buffer is full: call again with larger ones),
   7 (switches without time advancing), 8 (more than max_switches switches) or 9 (no memory). */
static int contact_run(Contact *w, const double *y0, double t_end, double rtol, double atol, double max_step,
                       int max_switches, int max_chatter, const double *grid_t, int n_grid, double *grid_y,
                       int cap_steps, long *total_steps, double *step_t, double *step_h, double *step_y, double *step_q, int *n_steps,
                       int cap_pieces, double *piece_t, int *piece_step, int *piece_states, int *piece_transition,
                       long *piece_nfev, double *piece_y, int *n_pieces,
                       int cap_events, double *ev_t, int *ev_point, int *ev_before, int *ev_after, int *n_events) {
  const int n = w->ny, np = w->np;
  double *mem = malloc(sizeof(double) * (size_t)n * 14);
  unsigned char *fresh = malloc((size_t)np);
  if (!mem || !fresh) { free(mem); free(fresh); return MS_NO_MEMORY; }
  double *y = mem, *y1 = mem + n, *tmp = mem + 2 * n, *err = mem + 3 * n, *k = mem + 4 * n, *ye = mem + 11 * n;
  double *yp = mem + 12 * n, *scratch = mem + 13 * n;
  int status = 0, stall = 0, switches = 0, written = 0;
  double t = 0.0, first_step = 0.0;
  *n_steps = *n_pieces = *n_events = 0;
  *total_steps = 0;
  memcpy(y, y0, sizeof(double) * n);
  contact_signals(w, y);
  for (int i = 0; i < np; ++i) {
    w->state[i] = w->c[i] > 0 ? (w->s[i] >= 0 ? MS_STICK : MS_SLIP) : MS_NO_CONTACT;
    w->since[i] = -INFINITY;
    fresh[i] = 1;
  }
  contact_arm(w, fresh);
  for (;;) {                                    /* one piece: solve_ivp from (t, y) until an event or t_end */
    if (*n_pieces >= cap_pieces) { status = MS_BUFFER_FULL; break; }
    const int piece = (*n_pieces)++;
    const long nfev0 = w->nfev;
    piece_t[piece] = t;
    piece_step[piece] = *n_steps;
    piece_transition[piece] = -1;
    memcpy(piece_states + (size_t)piece * np, w->state, sizeof(int) * np);
    memcpy(piece_y + (size_t)piece * n, y, sizeof(double) * n);
    memcpy(yp, y, sizeof(double) * n);
    const double t_piece = t;
    double g[2], g1[2];
    contact_rhs(w, y, k);
    double h_abs = first_step > 0.0 ? first_step : rk_first_step(w, y, k, t_end - t, max_step, rtol, atol, tmp, scratch);
    first_step = 0.0;
    contact_guards(w, y, g);
    int fired = -1, restart = 0;
    double te = 0.0;
    while (t < t_end) {
      if (ms_stop) { status = MS_INTERRUPTED; break; }
      const double min_step = MS_IVP_MIN_STEP * fabs(nextafter(t, INFINITY) - t);
      if (h_abs > max_step) h_abs = max_step;
      else if (h_abs < min_step) h_abs = min_step;
      int rejected = 0;
      double t_new = t, h = 0.0;
      for (;;) {
        if (h_abs < min_step) { status = MS_STEP_SIZE; break; }
        t_new = t + h_abs;
        if (t_new > t_end) t_new = t_end;
        h = t_new - t;
        h_abs = fabs(h);
        const double en = rk_step(w, y, h, k, y1, tmp, rtol, atol, err);
        if (en < 1.0) {
          double factor = en == 0.0 ? MS_IVP_MAX_FACTOR : fmin(MS_IVP_MAX_FACTOR, MS_IVP_SAFETY * pow(en, -0.2));
          if (rejected) factor = fmin(1.0, factor);
          h_abs *= factor;
          break;
        }
        const double shrink = MS_IVP_SAFETY * pow(en, -0.2);
        h_abs *= shrink > MS_IVP_MIN_FACTOR ? shrink : MS_IVP_MIN_FACTOR;         /* (NaN: 0.2, as Python's max(0.2, nan)) */
        rejected = 1;
      }
      if (status) break;
      double *Q = step_q + (size_t)(*n_steps < cap_steps ? *n_steps : cap_steps) * n * 4;  /* (one spare) */
      for (int i = 0; i < n; ++i)
        for (int r = 0; r < 4; ++r) {
          double q = 0.0;
          for (int j = 0; j < 7; ++j) q += k[j * n + i] * RK_P[j][r];
          Q[4 * i + r] = q;
        }
      if (*n_steps < cap_steps) {                 /* kept for the dense output of the run's pieces */
        const int s = (*n_steps)++;
        step_t[s] = t;
        step_h[s] = h;
        memcpy(step_y + (size_t)s * n, y, sizeof(double) * n);
      }
      (*total_steps)++;
      contact_guards(w, y1, g1);
      double roots[2];
      int active = 0;
      for (int e = 0; e < 2; ++e) {
        roots[e] = INFINITY;
        if (g[e] >= 0.0 && g1[e] <= 0.0) {       /* falling through zero (direction -1) */
          GuardAt a = {w, Q, y, t, h, e, scratch};
          roots[e] = brent(&a, t, t_new);
          active = 1;
        }
      }
      if (active) {
        const double first = fmin(roots[0], roots[1]);
        fired = roots[0] <= first + 1e-12 * fmax(1.0, fabs(first)) ? 0 : 1;
        te = roots[fired];
        rk_dense(Q, y, t, h, te, n, ye);
        if (te <= t_piece + 1e-14 * fmax(1.0, fabs(t_piece))) {   /* a guard zero where the piece starts? */
          double gs[2], ge[2];
          contact_guards(w, yp, gs);
          contact_guards(w, ye, ge);
          if (gs[fired] == 0.0 && ge[fired] == 0.0) restart = 1;
        }
      }
      /* the output grid: up to the located switch (a sample at its instant belongs to the next piece) */
      while (written < n_grid && (fired >= 0 ? grid_t[written] < te : grid_t[written] <= t_new)) {
        rk_dense(Q, y, t, h, grid_t[written], n, grid_y + (size_t)written * n);
        written++;
      }
      if (fired >= 0) break;
      t = t_new;
      memcpy(y, y1, sizeof(double) * n);
      memcpy(k, k + 6 * n, sizeof(double) * n);
      g[0] = g1[0]; g[1] = g1[1];
    }
    piece_nfev[piece] = w->nfev - nfev0;
    if (status) break;
    if (restart) {                    /* take a real first step (mechsym.core.hybrid's _spurious_start) */
      *total_steps -= *n_steps - piece_step[piece];
      *n_steps = piece_step[piece];
      (*n_pieces)--;
      t = t_piece;
      memcpy(y, yp, sizeof(double) * n);
      first_step = 1e-6 * fmin(max_step, t_end - t);
      continue;
    }
    if (fired < 0) break;                       /* reached t_end */
    piece_transition[piece] = fired;
    stall = te - t_piece <= 1e-12 * fmax(1.0, fabs(te)) ? stall + 1 : 0;
    if (stall > max_chatter) { status = MS_CHATTER; t = te; break; }
    if (switches >= max_switches) { status = MS_SWITCHES; t = te; break; }
    status = contact_switch(w, te, ye, fresh, cap_events, ev_t, ev_point, ev_before, ev_after, n_events);
    if (status) break;
    switches++;
    t = te;
    memcpy(y, ye, sizeof(double) * n);
  }
  if (*n_pieces < cap_pieces) piece_t[*n_pieces] = t;     /* where the run ended */
  free(mem);
  free(fresh);
  return status;
}

/* Entry point: the run of contact_run with SIGINT caught for its duration. p: the model's parameters;
   local: ND x np point coordinates in the body frame (row-major); grid_y (n_grid x ny) receives the states at
   the increasing times grid_t; the first cap_steps accepted steps are kept (step_q needs one more); counters:
   right-hand sides, signal evaluations, accepted steps. */
int MS_FN(contact_run)(const double *y0, int np, const double *p, const double *local, double K, double D, double mu,
                   double t_end, double rtol, double atol, double max_step, double event_tol, int max_switches,
                   int max_chatter, const double *grid_t, int n_grid, double *grid_y, int cap_steps, double *step_t, double *step_h, double *step_y, double *step_q,
                   int *n_steps, int cap_pieces, double *piece_t, int *piece_step, int *piece_states,
                   int *piece_transition, long *piece_nfev, double *piece_y, int *n_pieces, int cap_events,
                   double *ev_t, int *ev_point, int *ev_before, int *ev_after, int *n_events, long *counters) {
  Contact w;
  w.np = np; w.ny = NYM + NT * np; w.local = local; w.p = p;
  w.K = K; w.D = D; w.mu = mu; w.tau = D / K; w.tol = event_tol; w.window = 1e-9;
  w.kdm[0] = K; w.kdm[1] = D; w.kdm[2] = mu;
  w.nfev = w.nsig = 0;
  w.state = malloc(sizeof(int) * (size_t)np);
  double *buf = malloc(sizeof(double) * (size_t)np * 7);
  if (!w.state || !buf) { free(w.state); free(buf); return MS_NO_MEMORY; }
  w.sig_c = buf; w.sig_s = buf + np; w.bias_c = buf + 2 * np; w.bias_s = buf + 3 * np; w.since = buf + 4 * np;
  w.c = buf + 5 * np; w.s = buf + 6 * np;
  ms_handler old;
  const int caught = ms_catch(&old);
  const int status = contact_run(&w, y0, t_end, rtol, atol, max_step, max_switches, max_chatter, grid_t, n_grid,
                                 grid_y, cap_steps, counters + 2, step_t,
                                 step_h, step_y, step_q, n_steps, cap_pieces, piece_t, piece_step, piece_states,
                                 piece_transition, piece_nfev, piece_y, n_pieces, cap_events, ev_t, ev_point,
                                 ev_before, ev_after, n_events);
  ms_release(caught, &old);
  counters[0] = w.nfev;
  counters[1] = w.nsig;
  free(w.state);
  free(buf);
  return status;
}
#endif
