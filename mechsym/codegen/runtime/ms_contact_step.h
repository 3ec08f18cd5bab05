/* mechsym C runtime, compliant contact's step: scipy's RK45 (Dormand-Prince 5(4) with Shampine's quartic dense
   output) on the contact right-hand side, and Brent's method locating a guard's zero along a step's dense
   output; after ms_contact.h. */
#ifndef MS_CONTACT_STEP_H
#define MS_CONTACT_STEP_H

/* ---- scipy's RK45 (Dormand-Prince 5(4), Shampine's quartic dense output) ---- */
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
#endif
