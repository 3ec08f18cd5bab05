/* mechsym C runtime: forward dynamics of a one-coordinate mechanism (the reduced ODE integrated by DOP853
   with dense output and located events), included after ms_kernels.h. */
#ifndef MS_DOP853_H
#define MS_DOP853_H
typedef struct {
  double q[NQ], sc[NSC], dq[NQ], ddq[NQ], th, a[LU_NSLOT], mass[NQ];
  int piv[LU_NBLOCK];
  const double *p, *scale;
  double tol, hmax, torque;
  int maxit, status, turns, sign[MS_NSIGN];
  long nfev;
  Bridge bridge;
} Work;

/* Whether q satisfies every declared branch condition. */
static int on_branch(const double *q, const double *sc, const double *p) {
  double br[NBRANCH];
  branch1_s(q, p, sc, br);
  for (int i = 0; i < NBRANCH_USED; ++i) if (!(br[i] > 0.0)) return 0;
  return 1;
}

/* A trial state farther than MS_MAX_WALK continuation steps (ms_constants.h) from the last solved one is not
   walked to: its step is rejected (a shorter one follows), as is one where the loops do not close on the way. */
static void rhs(Work *w, const double *y, double *f) {
  w->nfev++;
  if (w->status) { f[0] = f[1] = 0.0; return; }
  if (!(fabs(y[0] - w->th) <= MS_MAX_WALK * w->hmax) || !(fabs(y[1]) < INFINITY)) { w->status = 1; f[0] = f[1] = 0.0; return; }
  int st = advance(w->q, w->sc, w->dq, w->ddq, w->th, y[0], w->p, w->scale, w->tol, w->maxit, w->hmax, w->a, w->piv, &w->turns, w->sign, NULL, &w->bridge);
  if (!st && !on_branch(w->q, w->sc, w->p)) st = MS_OFF_BRANCH;
  if (st) { w->status = st; f[0] = f[1] = 0.0; return; }
  w->th = y[0];
  reduced_ode(w->q, w->sc, w->dq, w->ddq, w->a, w->piv, w->p, w->mass, w->torque, y[1], f, 0, NULL);
}

/* DOP853: Hairer's explicit Runge-Kutta 8(5,3) with the coefficients, error norm, step-size control and
   dense output of scipy's solve_ivp(method="DOP853"), so that an rtol buys the same accuracy on both
   backends. Row 12 of DOP_A gives the new state (the weights b); rows 13-15 are the dense output's stages. */
static const double DOP_A[16][16] = {
  {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
  {0.05260015195876773, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
  {0.0197250569845379, 0.0591751709536137, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
  {0.02958758547680685, 0.0, 0.08876275643042054, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
  {0.2413651341592667, 0.0, -0.8845494793282861, 0.924834003261792, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
  {0.037037037037037035, 0.0, 0.0, 0.17082860872947386, 0.12546768756682242, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
  {0.037109375, 0.0, 0.0, 0.17025221101954405, 0.06021653898045596, -0.017578125, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
  {0.03709200011850479, 0.0, 0.0, 0.17038392571223998, 0.10726203044637328, -0.015319437748624402, 0.008273789163814023, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
  {0.6241109587160757, 0.0, 0.0, -3.3608926294469414, -0.868219346841726, 27.59209969944671, 20.154067550477894, -43.48988418106996, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
  {0.47766253643826434, 0.0, 0.0, -2.4881146199716677, -0.590290826836843, 21.230051448181193, 15.279233632882423, -33.28821096898486, -0.020331201708508627, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
  {-0.9371424300859873, 0.0, 0.0, 5.186372428844064, 1.0914373489967295, -8.149787010746927, -18.52006565999696, 22.739487099350505, 2.4936055526796523, -3.0467644718982196, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
  {2.273310147516538, 0.0, 0.0, -10.53449546673725, -2.0008720582248625, -17.9589318631188, 27.94888452941996, -2.8589982771350235, -8.87285693353063, 12.360567175794303, 0.6433927460157636, 0.0, 0.0, 0.0, 0.0, 0.0},
  {0.054293734116568765, 0.0, 0.0, 0.0, 0.0, 4.450312892752409, 1.8915178993145003, -5.801203960010585, 0.3111643669578199, -0.1521609496625161, 0.20136540080403034, 0.04471061572777259, 0.0, 0.0, 0.0, 0.0},
  {0.056167502283047954, 0.0, 0.0, 0.0, 0.0, 0.0, 0.25350021021662483, -0.2462390374708025, -0.12419142326381637, 0.15329179827876568, 0.00820105229563469, 0.007567897660545699, -0.008298, 0.0, 0.0, 0.0},
  {0.03183464816350214, 0.0, 0.0, 0.0, 0.0, 0.028300909672366776, 0.053541988307438566, -0.05492374857139099, 0.0, 0.0, -0.00010834732869724932, 0.0003825710908356584, -0.00034046500868740456, 0.1413124436746325, 0.0, 0.0},
  {-0.42889630158379194, 0.0, 0.0, 0.0, 0.0, -4.697621415361164, 7.683421196062599, 4.06898981839711, 0.3567271874552811, 0.0, 0.0, 0.0, -0.0013990241651590145, 2.9475147891527724, -9.15095847217987, 0.0}};
static const double DOP_E3[13] = {-0.18980075407240762, 0.0, 0.0, 0.0, 0.0, 4.450312892752409, 1.8915178993145003, -5.801203960010585, -0.4226823213237919, -0.1521609496625161, 0.20136540080403034, 0.02265179219836082, 0.0};
static const double DOP_E5[13] = {0.01312004499419488, 0.0, 0.0, 0.0, 0.0, -1.2251564463762044, -0.4957589496572502, 1.6643771824549864, -0.35032884874997366, 0.3341791187130175, 0.08192320648511571, -0.022355307863886294, 0.0};
static const double DOP_D[4][16] = {
  {-8.428938276109013, 0.0, 0.0, 0.0, 0.0, 0.5667149535193777, -3.0689499459498917, 2.38466765651207, 2.117034582445028, -0.871391583777973, 2.2404374302607883, 0.6315787787694688, -0.08899033645133331, 18.148505520854727, -9.194632392478356, -4.436036387594894},
  {10.427508642579134, 0.0, 0.0, 0.0, 0.0, 242.28349177525817, 165.20045171727028, -374.5467547226902, -22.113666853125306, 7.733432668472264, -30.674084731089398, -9.332130526430229, 15.697238121770845, -31.139403219565178, -9.35292435884448, 35.81684148639408},
  {19.985053242002433, 0.0, 0.0, 0.0, 0.0, -387.0373087493518, -189.17813819516758, 527.8081592054236, -11.57390253995963, 6.8812326946963, -1.0006050966910838, 0.7777137798053443, -2.778205752353508, -60.19669523126412, 84.32040550667716, 11.99229113618279},
  {-25.69393346270375, 0.0, 0.0, 0.0, 0.0, -154.18974869023643, -231.5293791760455, 357.6391179106141, 93.40532418362432, -37.45832313645163, 104.0996495089623, 29.8402934266605, -43.53345659001114, 96.32455395918828, -39.17726167561544, -149.72683625798564}};

/* One trial step of size h from y with k[0] = f(y): stages k[1..11], the new state y1 and k[12] = f(y1).
   Returns scipy's error norm, or -1 when a stage could not be evaluated (the step must be rejected). */
static double dop853_step(Work *w, const double *y, double h, double k[16][2], double *y1, double rtol, double atol) {
  double yt[2];
  for (int s = 1; s <= 12; ++s) {
    for (int i = 0; i < 2; ++i) {
      double d = 0.0;
      for (int j = 0; j < s; ++j) d += DOP_A[s][j] * k[j][i];
      yt[i] = y[i] + h * d;
    }
    if (s == 12) { y1[0] = yt[0]; y1[1] = yt[1]; }
    rhs(w, yt, k[s]);
  }
  if (w->status) return -1.0;
  double e5 = 0.0, e3 = 0.0;
  for (int i = 0; i < 2; ++i) {
    const double sc = atol + rtol * fmax(fabs(y[i]), fabs(y1[i]));
    double a5 = 0.0, a3 = 0.0;
    for (int j = 0; j < 13; ++j) { a5 += DOP_E5[j] * k[j][i]; a3 += DOP_E3[j] * k[j][i]; }
    e5 += (a5 / sc) * (a5 / sc);
    e3 += (a3 / sc) * (a3 / sc);
  }
  if (e5 == 0.0 && e3 == 0.0) return 0.0;
  const double en = fabs(h) * e5 / sqrt((e5 + 0.01 * e3) * 2.0);
  return en == en ? en : -1.0;
}

/* The dense output F (7 x 2) of an accepted step from y to y1, with its three extra stages; returns 0, or
   the tracker's failure status. */
static int dop853_dense(Work *w, const double *y, const double *y1, double h, double k[16][2], double F[7][2]) {
  double yt[2];
  for (int s = 13; s < 16; ++s) {
    for (int i = 0; i < 2; ++i) {
      double d = 0.0;
      for (int j = 0; j < s; ++j) d += DOP_A[s][j] * k[j][i];
      yt[i] = y[i] + h * d;
    }
    rhs(w, yt, k[s]);
  }
  if (w->status) return w->status;
  for (int i = 0; i < 2; ++i) {
    const double dy = y1[i] - y[i];
    F[0][i] = dy;
    F[1][i] = h * k[0][i] - dy;
    F[2][i] = 2.0 * dy - h * (k[12][i] + k[0][i]);
    for (int r = 0; r < 4; ++r) {
      double d = 0.0;
      for (int j = 0; j < 16; ++j) d += DOP_D[r][j] * k[j][i];
      F[3 + r][i] = h * d;
    }
  }
  return 0;
}

/* The dense output at t of the step from (t0, y0) of size h. */
static void dop853_eval(double F[7][2], const double *y0, double t0, double h, double t, double *y) {
  const double x = (t - t0) / h;
  for (int i = 0; i < 2; ++i) {
    double v = 0.0;
    for (int r = 6; r >= 0; --r) { v += F[r][i]; v *= (r % 2 == 0) ? x : 1.0 - x; }
    y[i] = y0[i] + v;
  }
}

/* One accepted step's dense output as a record of MS_DENSE_RECORD doubles (ms_constants.h): t_old, h, the
   state at t_old, then F (7 x 2, row-major), so that y(t) = dop853_eval(F, y_old, t_old, h, t). */
static void dop853_record(double *rec, double t0, double h, const double *y0, double F[7][2]) {
  rec[0] = t0; rec[1] = h; rec[2] = y0[0]; rec[3] = y0[1];
  memcpy(rec + 4, F, 14 * sizeof(double));
}

/* scipy's initial step (Hairer, Norsett & Wanner II.4) for an error estimator of order 7. */
static double dop853_first_step(Work *w, const double *y, const double *f0, double t_end, double rtol, double atol) {
  double d0 = 0.0, d1 = 0.0, d2 = 0.0, sc[2], y1[2], f1[2];
  for (int i = 0; i < 2; ++i) {
    sc[i] = atol + rtol * fabs(y[i]);
    d0 += (y[i] / sc[i]) * (y[i] / sc[i]);
    d1 += (f0[i] / sc[i]) * (f0[i] / sc[i]);
  }
  d0 = sqrt(d0 / 2.0);
  d1 = sqrt(d1 / 2.0);
  double h0 = (d0 < 1e-5 || d1 < 1e-5) ? 1e-6 : 0.01 * d0 / d1;
  h0 = fmin(h0, t_end);
  const Work saved = *w;
  for (int i = 0; i < 2; ++i) y1[i] = y[i] + h0 * f0[i];
  rhs(w, y1, f1);
  if (w->status) { const long n = w->nfev; *w = saved; w->nfev = n; f1[0] = f0[0]; f1[1] = f0[1]; }
  for (int i = 0; i < 2; ++i) d2 += ((f1[i] - f0[i]) / sc[i]) * ((f1[i] - f0[i]) / sc[i]);
  d2 = sqrt(d2 / 2.0) / h0;
  const double h1 = (d1 <= 1e-15 && d2 <= 1e-15) ? fmax(1e-6, h0 * 1e-3) : pow(0.01 / fmax(d1, d2), 1.0 / 8.0);
  return fmin(fmin(100.0 * h0, h1), t_end);
}

/* Integrate from (th0, om0) to t_end under a constant torque; write the state at the increasing grid
   times grid_t (n_grid points, grid_t[0] = 0). Events: for each e < n_ev, the component ev_comp[e] crossing ev_value[e] with
   direction ev_dir[e] (0 any, +1 rising, -1 falling); ev_terminal[e] stops the run. A step whose stages the
   tracker cannot reach is rejected and retried shorter. Returns the number of grid points written;
   ev_t/ev_id/ev_y (theta, omega there) receive up to max_events located events (*n_events), in time order. *status: 0, or why the
   run ended early (1 the loops could not be closed, 2 a dead point, 3 the step size fell below its limit,
   4 a declared branch condition would not hold, 5 interrupted).
   With rec non-NULL every accepted step's dense output is made and the first rec_cap of them are written to
   rec, MS_DENSE_RECORD doubles a step (dop853_record); *n_rec receives the number of accepted steps, which may exceed
   rec_cap (a caller then knows the size to ask for). With rec NULL no step makes a dense output it does
   not need. */
static int forward_run(double torque, double th0, double om0, double t_end, const double *grid_t, int n_grid, double rtol, double atol,
               const double *p, const double *q0, const double *scale, double tol, int maxit, double hmax,
               int n_ev, const int *ev_comp, const double *ev_value, const int *ev_dir, const int *ev_terminal,
               int max_events, double *ev_t, int *ev_id, double *ev_y, int *n_events, double *grid_y, long *nfev,
               int rec_cap, double *rec, long *n_rec, int *status) {
  Work w;
  memcpy(w.q, q0, sizeof w.q);
  w.p = p; w.scale = scale; w.tol = tol; w.hmax = hmax; w.maxit = maxit; w.torque = torque; w.status = 0; w.nfev = 0; w.turns = 0;
  w.th = th0;
  mass1(p, w.mass);
  *n_events = 0;
  *n_rec = 0;
  *status = continuation_start(w.q, w.sc, &th0, p, scale, tol, maxit, w.a, w.piv, w.dq, w.ddq, w.sign, &w.bridge);
  if (*status) return 0;
  double y[2] = {th0, om0}, y1[2], k[16][2], F[7][2];
  rhs(&w, y, k[0]);
  if (w.status) { *status = w.status; *nfev = w.nfev; return 0; }
  double t = 0.0, h = dop853_first_step(&w, y, k[0], t_end, rtol, atol);
  int written = 0, stop = 0, rejected = 0, failure = 0;
  grid_y[0] = y[0]; grid_y[1] = y[1];
  written = 1;
  while (!stop && t < t_end && written < n_grid) {
    if (ms_stop) { *status = MS_INTERRUPTED; break; }
    if (h < MS_IVP_MIN_STEP * fabs(nextafter(t, INFINITY) - t)) { *status = failure ? failure : 3; break; }
    if (t + h > t_end) h = t_end - t;
    const Work saved = w;
    double en = dop853_step(&w, y, h, k, y1, rtol, atol);
    const double t_new = t + h;
    int need_dense = en >= 0.0 && en < 1.0 && (rec || (written < n_grid && grid_t[written] <= t_new));
    for (int e = 0; e < n_ev && en >= 0.0 && en < 1.0; ++e) {
      const double g0 = y[ev_comp[e]] - ev_value[e], g1 = y1[ev_comp[e]] - ev_value[e];
      need_dense |= (g0 < 0.0 && g1 >= 0.0) || (g0 > 0.0 && g1 <= 0.0);
    }
    if (need_dense && dop853_dense(&w, y, y1, h, k, F)) en = -1.0;
    if (!(en >= 0.0 && en < 1.0)) {                    /* rejected: the tracker back at the step's start */
      if (en < 0.0) { failure = w.status; const long n = w.nfev; w = saved; w.nfev = n; }
      h *= en < 0.0 ? MS_IVP_MIN_FACTOR : fmax(MS_IVP_MIN_FACTOR, MS_IVP_SAFETY * pow(en, -1.0 / 8.0));
      rejected = 1;
      continue;
    }
    double t_stop = t_new;
    int order[64], n_hit = 0;
    double when[64];
    for (int e = 0; e < n_ev; ++e) {
      const int c = ev_comp[e];
      const double g0 = y[c] - ev_value[e], g1 = y1[c] - ev_value[e];
      const int rising = g0 < 0.0 && g1 >= 0.0, falling = g0 > 0.0 && g1 <= 0.0;
      if (!((rising && ev_dir[e] >= 0) || (falling && ev_dir[e] <= 0))) continue;
      double lo = t, hi = t_new, ys[2];
      for (int it = 0; it < 200 && hi - lo > 1e-15 * fmax(1.0, fabs(hi)); ++it) {
        const double mid = 0.5 * (lo + hi);
        dop853_eval(F, y, t, h, mid, ys);
        const double gm = ys[c] - ev_value[e];
        if ((gm < 0.0) == (g0 < 0.0) && gm != 0.0) lo = mid; else hi = mid;
      }
      if (n_hit < 64) { int at = n_hit++; while (at > 0 && when[at - 1] > hi) { when[at] = when[at - 1]; order[at] = order[at - 1]; --at; } when[at] = hi; order[at] = e; }
      if (ev_terminal[e] && hi < t_stop) { t_stop = hi; stop = 1; }
    }
    for (int i = 0; i < n_hit && when[i] <= t_stop; ++i)
      if (*n_events < max_events) {
        ev_t[*n_events] = when[i]; ev_id[*n_events] = order[i];
        dop853_eval(F, y, t, h, when[i], ev_y + 2 * *n_events);
        (*n_events)++;
      }
    if (rec) {
      if (*n_rec < rec_cap) dop853_record(rec + MS_DENSE_RECORD * *n_rec, t, h, y, F);
      (*n_rec)++;
    }
    while (written < n_grid && grid_t[written] <= t_stop) {
      dop853_eval(F, y, t, h, grid_t[written], grid_y + 2 * written);
      written++;
    }
    t = t_new;
    y[0] = y1[0]; y[1] = y1[1]; k[0][0] = k[12][0]; k[0][1] = k[12][1];
    double fac = en == 0.0 ? MS_IVP_MAX_FACTOR : fmin(MS_IVP_MAX_FACTOR, MS_IVP_SAFETY * pow(en, -1.0 / 8.0));
    if (rejected) fac = fmin(1.0, fac);
    h *= fac;
    rejected = 0;
    failure = 0;
  }
  *nfev = w.nfev;
  return written;
}

int MS_FN(forward)(double torque, double th0, double om0, double t_end, const double *grid_t, int n_grid, double rtol, double atol,
               const double *p, const double *q0, const double *scale, double tol, int maxit, double hmax,
               int n_ev, const int *ev_comp, const double *ev_value, const int *ev_dir, const int *ev_terminal,
               int max_events, double *ev_t, int *ev_id, double *ev_y, int *n_events, double *grid_y, long *nfev,
               int rec_cap, double *rec, long *n_rec, int *status) {
  ms_handler old;
  const int caught = ms_catch(&old);
  const int written = forward_run(torque, th0, om0, t_end, grid_t, n_grid, rtol, atol, p, q0, scale, tol, maxit, hmax,
                                  n_ev, ev_comp, ev_value, ev_dir, ev_terminal, max_events, ev_t, ev_id, ev_y, n_events,
                                  grid_y, nfev, rec_cap, rec, n_rec, status);
  ms_release(caught, &old);
  return written;
}
#endif
