/* mechsym C runtime, compliant contact's run: the switch of the points' states at a located event, the
   whole run from y0 to t_end (steps, grid, pieces, events) and its entry point MS_FN(contact_run); after
   ms_contact.h and ms_contact_step.h. */
#ifndef MS_CONTACT_RUN_H
#define MS_CONTACT_RUN_H

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
