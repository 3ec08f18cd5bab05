/* mechsym C runtime: the continuation of a one-coordinate mechanism from one angle to another (advance: steps
   halved down to their floor, kept on the branch) and the bridge across a bifurcation; after ms_newton.h. */
#ifndef MS_CONTINUATION_H
#define MS_CONTINUATION_H
/* ---- crossing a bifurcation ----
   Where the branch being followed crosses another (a bifurcation: [Phi_q Phi_th] loses rank, Phi_q is singular
   but the branch q(th) stays smooth), q' and q'' from Phi_q lose all accuracy near the point (0/0: their error
   grows like rounding / distance^3) and Newton barely converges. So near such a point the continuation
   bridges it: from the last well-conditioned state a, a third-order prediction across the point to c as far
   beyond it, Newton there, and every state between a and c from the degree-7 Hermite polynomial of q and its
   first three derivatives at both ends (exact coefficients; its error is about (|c - a| / 2)^8 / 8! times the
   eighth derivative). The bridge is kept only if c lies on the same branch signs, is as well conditioned as
   a, and the polynomial closes the loops inside it (MS_BRIDGE_RES); else the path is walked as before (a
   limit position, a dead point, a change of branch are named where the step floor is reached). Near: the
   smallest singular value of Phi_q (columns in their scales, estimated by one step of inverse iteration from a
   fixed vector) below 1/MS_BRIDGE_DROP of its value where the path started (MS_BRIDGE_DROP, MS_BRIDGE_RES:
   ms_constants.h). */
typedef struct {
  int on;               /* [th[0], th[1]] is bridged by the polynomial c[0..7] in s = (th - th[0]) / (th[1] - th[0]) */
  double th[2], c[8][NQ];
  double s_ref, s_now;  /* the singular-value estimate where the path started, and at the current state */
  double skip[2];       /* a span where a bridge failed: not tried again inside */
} Bridge;

/* The estimate of the smallest singular value of Phi_q diag(scale) at factored a (NQ == NROW): |r| / |x| for
   diag(scale) x = Phi_q^-1 r, r a fixed vector (one step of inverse iteration). */
static double sigma_estimate(const double *a, const int *piv, const double *scale) {
  double r[NROW], x[NQ], nr = 0.0, nx = 0.0;
  for (int i = 0; i < NROW; ++i) { r[i] = cos(1.7 * i + 0.3); nr += r[i] * r[i]; }
  lu_solve(a, piv, r, x);
  for (int i = 0; i < NQ; ++i) { const double v = x[i] / scale[i]; nx += v * v; }
  return nx > 0.0 ? sqrt(nr / nx) : 0.0;
}

static void bridge_start(Bridge *br, const double *a, const int *piv, const double *scale) {
  br->on = 0;
  br->skip[0] = br->skip[1] = NAN;
  br->s_ref = br->s_now = sigma_estimate(a, piv, scale);
}

/* The start of a continuation at th0: q settled there by Newton (sc and the factored a, piv with it), dq/dth and
   d2q/dth2, the branch signs the path keeps, and the bridge (unless NULL). Returns Newton's status (0: settled). */
static int continuation_start(double *q, double *sc, const double *th0, const double *p, const double *scale,
                              double tol, int maxit, double *a, int *piv, double *dq, double *ddq, int *sign,
                              Bridge *bridge) {
  const int status = newton(q, sc, th0, p, scale, tol, maxit, a, piv);
  if (status) return status;
  coefficients(q, sc, p, a, piv, dq, ddq);
  branch_signs(q, sc, p, a, piv, sign);
  if (bridge) bridge_start(bridge, a, piv, scale);
  return 0;
}

static int bridge_holds(const Bridge *br, double th) {
  return br->on && (th - br->th[0]) * (th - br->th[1]) <= 0.0;
}

/* q, sc, dq, ddq at th on the bridge (d3 too unless NULL). */
static void bridge_state(const Bridge *br, double th, double *q, double *sc, double *dq, double *ddq, double *d3) {
  const double h = br->th[1] - br->th[0], s = (th - br->th[0]) / h;
  for (int i = 0; i < NQ; ++i) {
    double v = 0.0, d1 = 0.0, d2 = 0.0, e3 = 0.0;
    for (int k = 7; k >= 0; --k) {  /* Horner's scheme for the polynomial and its derivatives */
      if (k >= 3) e3 = e3 * s + k * (k - 1) * (k - 2) * br->c[k][i];
      if (k >= 2) d2 = d2 * s + k * (k - 1) * br->c[k][i];
      if (k >= 1) d1 = d1 * s + k * br->c[k][i];
      v = v * s + br->c[k][i];
    }
    q[i] = v; dq[i] = d1 / h; ddq[i] = d2 / (h * h);
    if (d3) d3[i] = e3 / (h * h * h);
  }
  trig1(q, sc);
}

/* A state at th from the solved one (q, sc, dq, ddq at th0, factorised in a) by the third-order prediction
   and Newton: into q2, sc2, dq2, ddq2, d3 (its third derivatives), a2, piv2. Returns 0 if Newton converged
   within its largest step of the prediction on the branch signs `sign`. */
static int solve_across(const double *q, const double *sc, const double *dq, const double *ddq, const double *a,
                        const int *piv, double th0, double th, const double *p, const double *scale, double tol,
                        int maxit, const int *sign, double *q2, double *sc2, double *dq2, double *ddq2, double *d3,
                        double *a2, int *piv2) {
  const double h = th - th0;
  double pred[NQ];
  int now[MS_NSIGN];
  third(q, sc, p, a, piv, dq, ddq, d3);
  for (int i = 0; i < NQ; ++i) q2[i] = pred[i] = q[i] + h * (dq[i] + h * (0.5 * ddq[i] + h * d3[i] / 6.0));
  if (newton(q2, sc2, &th, p, scale, tol, maxit, a2, piv2)) return 1;
  for (int i = 0; i < NQ; ++i) if (!(fabs(q2[i] - pred[i]) <= MS_MAX_STEP * scale[i])) return 1;
  branch_signs(q2, sc2, p, a2, piv2, now);
  if (memcmp(now, sign, sizeof now)) return 1;
  coefficients(q2, sc2, p, a2, piv2, dq2, ddq2);
  third(q2, sc2, p, a2, piv2, dq2, ddq2, d3);
  return 0;
}

/* Try to bridge, from the solved state (q, sc, dq, ddq at tha, factorised in a), the singular point that the
   estimates s_a at tha and s_b at thb (nearer it) place ahead: the bridge runs from the point hmax before it
   (or tha, if nearer) to as far beyond. Returns 1 with the bridge held (q and the rest untouched), or 0: the
   point is more than 2 hmax ahead (a later step tries again), or no bridge holds there (its span is then
   skipped by later attempts). */
static int bridge_try(Bridge *br, const double *q, const double *sc, const double *dq, const double *ddq,
                      const double *a, const int *piv, double tha, double thb, double s_a, double s_b,
                      const double *p, const double *scale, double tol, int maxit, double hmax, const int *sign) {
  const double zero = s_a > s_b ? thb + (thb - tha) * s_b / (s_a - s_b) : thb;
  double e[2][4][NQ], sce[NSC], ae[LU_NSLOT], r[NROW], size = 0.0, th[2];
  int pive[LU_NBLOCK];
  if (!(fabs(zero - tha) <= 2.0 * hmax) || zero == tha) return 0;  /* still far: a later step comes nearer */
  th[0] = fabs(zero - tha) > hmax ? zero - (zero > tha ? hmax : -hmax) : tha;
  th[1] = 2.0 * zero - th[0];
  br->skip[0] = tha; br->skip[1] = th[1];
  if (th[0] == tha) {
    memcpy(e[0][0], q, sizeof e[0][0]); memcpy(e[0][1], dq, sizeof e[0][1]); memcpy(e[0][2], ddq, sizeof e[0][2]);
    third(q, sc, p, a, piv, dq, ddq, e[0][3]);
    if (solve_across(q, sc, dq, ddq, a, piv, tha, th[1], p, scale, tol, maxit, sign, e[1][0], sce, e[1][1], e[1][2],
                     e[1][3], ae, pive)) return 0;
  } else {
    if (solve_across(q, sc, dq, ddq, a, piv, tha, th[0], p, scale, tol, maxit, sign, e[0][0], sce, e[0][1], e[0][2],
                     e[0][3], ae, pive)) return 0;
    s_a = sigma_estimate(ae, pive, scale);
    double sc0[NSC], a0[LU_NSLOT];
    int piv0[LU_NBLOCK];
    memcpy(sc0, sce, sizeof sc0); memcpy(a0, ae, sizeof a0); memcpy(piv0, pive, sizeof piv0);
    if (solve_across(e[0][0], sc0, e[0][1], e[0][2], a0, piv0, th[0], th[1], p, scale, tol, maxit, sign, e[1][0], sce,
                     e[1][1], e[1][2], e[1][3], ae, pive)) return 0;
  }
  if (!(sigma_estimate(ae, pive, scale) >= 0.5 * s_a)) return 0;  /* the far end as well conditioned */
  const double h = th[1] - th[0];
  for (int i = 0; i < NQ; ++i) {  /* the degree-7 Hermite polynomial in s = (th - th[0]) / h */
    const double c0 = e[0][0][i], c1 = h * e[0][1][i], c2 = 0.5 * h * h * e[0][2][i], c3 = h * h * h * e[0][3][i] / 6.0;
    const double A = e[1][0][i] - (c0 + c1 + c2 + c3), B = h * e[1][1][i] - (c1 + 2.0 * c2 + 3.0 * c3);
    const double C = h * h * e[1][2][i] - (2.0 * c2 + 6.0 * c3), D = h * h * h * e[1][3][i] - 6.0 * c3;
    br->c[0][i] = c0; br->c[1][i] = c1; br->c[2][i] = c2; br->c[3][i] = c3;
    br->c[4][i] = 35.0 * A - 15.0 * B + 2.5 * C - D / 6.0;
    br->c[5][i] = -84.0 * A + 39.0 * B - 7.0 * C + 0.5 * D;
    br->c[6][i] = 70.0 * A - 34.0 * B + 6.5 * C - 0.5 * D;
    br->c[7][i] = -20.0 * A + 10.0 * B - 2.0 * C + D / 6.0;
    if (scale[i] > size) size = scale[i];
  }
  br->th[0] = th[0]; br->th[1] = th[1]; br->on = 1;
  for (int k = 1; k <= 3; ++k) {  /* the polynomial closes the loops inside */
    const double t = th[0] + 0.25 * k * h;
    bridge_state(br, t, e[0][0], sce, e[0][1], e[0][2], NULL);
    phi1_s(e[0][0], &t, p, sce, r);
    for (int i = 0; i < NROW; ++i) if (!(fabs(r[i]) <= MS_BRIDGE_RES * size)) { br->on = 0; return 0; }
  }
  return 1;
}

/* Solve the one-coordinate configuration at th1 from a solved (q, dq, ddq) at th0 (factorised in a, piv), in
   steps of at most hmax, each kept on the branch whose signs (branch_signs) the caller took at the start of
   its path, `sign`; on return q, dq, ddq, a are at th1. A step that Newton cannot complete from its
   prediction, that lands far from it or that changes those signs is retried in halves (the first half, then
   the rest), halved again as needed, as mechsym.planar.continuation.Continuation._refine does; only a step shorter than
   twice the floor (MS_STEP_FLOOR hmax) fails for good, with that step's status. `fail` (2 + 2 NQ, or NULL)
   then receives the last solved angle, the angle not reached, the configuration solved at the first and
   Newton's last iterate at the second, from which the caller names the limit position, dead point or
   change of branch; q, dq, ddq, a are left at the last solved angle. A span that is not finite or longer
   than 1e9 steps fails at once (status 1); SIGINT ends the walk between steps (MS_INTERRUPTED). */
static int advance(double *q, double *sc, double *dq, double *ddq, double th0, double th1, const double *p,
                   const double *scale, double tol, int maxit, double hmax, double *a, int *piv, int *turns,
                   const int *sign, double *fail, Bridge *br) {
  const double span = th1 - th0, floor = MS_STEP_FLOOR / MS_STEP * hmax;
  if (!(fabs(span) <= 1e9 * hmax)) {  /* not finite, or more steps than an int counts: no path to walk */
    if (fail) { fail[0] = th0; fail[1] = th1; memcpy(fail + 2, q, NQ * sizeof *q); memcpy(fail + 2 + NQ, q, NQ * sizeof *q); }
    return 1;
  }
  int steps = (int)ceil(fabs(span) / hmax);
  if (steps < 1) steps = 1;
  double tha = th0;
  for (int s = 1; s <= steps; ++s) {
    if (ms_stop) return MS_INTERRUPTED;  /* a long walk ends at Ctrl-C like every other loop */
    double ends[MS_MAX_HALVINGS + 1];  /* the angles still to reach from tha, nearest last */
    int depth = 0;
    ends[0] = th0 + span * s / steps;
    while (depth >= 0) {
      const double thb = ends[depth];
      if (br && bridge_holds(br, thb)) {  /* on a bridge: the polynomial */
        bridge_state(br, thb, q, sc, dq, ddq, NULL);
        br->s_now = 0.0;
        tha = thb; --depth; continue;
      }
      if (br && bridge_holds(br, tha)) {  /* leaving a bridge: from its end on thb's side, solved afresh */
        const double end = br->th[(thb - br->th[0]) * (br->th[1] - br->th[0]) > 0.0];
        bridge_state(br, end, q, sc, dq, ddq, NULL);
        newton(q, sc, &end, p, scale, tol, maxit, a, piv);
        coefficients(q, sc, p, a, piv, dq, ddq);
        br->s_now = sigma_estimate(a, piv, scale);
        tha = end;
      }
      double q_a[NQ];
      memcpy(q_a, q, sizeof q_a);
      const double s_a = br ? br->s_now : 0.0;
      int status = advance_step(q, sc, dq, ddq, tha, thb, p, scale, tol, maxit, a, piv, turns, sign);
      const double s_b = br && !status ? sigma_estimate(a, piv, scale) : 0.0;
      if (br && !(s_a < br->s_ref / MS_BRIDGE_DROP) && (status || s_b < br->s_ref / MS_BRIDGE_DROP) &&
          !((tha - br->skip[0]) * (tha - br->skip[1]) < 0.0)) {
        /* from a well-conditioned state towards a singular one: bridge it if it is a bifurcation */
        double keep[4][NQ], dq_a[NQ], ddq_a[NQ], sc_a[NSC];
        memcpy(keep[0], q, sizeof keep[0]); memcpy(keep[1], dq, sizeof keep[1]); memcpy(keep[2], ddq, sizeof keep[2]);
        double q_s[NQ];
        memcpy(q_s, q_a, sizeof q_s);
        trig1(q_s, sc_a);
        jac_slots(q_s, sc_a, p, a);
        lu_factor(a, piv);
        coefficients(q_s, sc_a, p, a, piv, dq_a, ddq_a);
        if (bridge_try(br, q_s, sc_a, dq_a, ddq_a, a, piv, tha, thb, s_a, status ? 0.0 : s_b, p, scale, tol, maxit,
                       hmax, sign) && bridge_holds(br, thb)) {
          bridge_state(br, thb, q, sc, dq, ddq, NULL);
          br->s_now = 0.0;
          tha = thb; --depth; continue;
        }
        memcpy(q, keep[0], sizeof keep[0]); memcpy(dq, keep[1], sizeof keep[1]); memcpy(ddq, keep[2], sizeof keep[2]);
        if (!status) {  /* no bridge: the step as it was solved */
          trig1(q, sc);
          jac_slots(q, sc, p, a);
          lu_factor(a, piv);
        }
      }
      if (!status) { if (br) br->s_now = s_b; tha = thb; --depth; continue; }
      if (fail) { fail[0] = tha; fail[1] = thb; memcpy(fail + 2, q_a, sizeof q_a); memcpy(fail + 2 + NQ, q, sizeof q_a); }
      memcpy(q, q_a, sizeof q_a);  /* back to the last solved state: its sines, factorisation, coefficients */
      trig1(q, sc);
      jac_slots(q, sc, p, a);
      lu_factor(a, piv);
      coefficients(q, sc, p, a, piv, dq, ddq);
      if (!(0.5 * fabs(thb - tha) >= floor) || depth == MS_MAX_HALVINGS) return status;
      ends[++depth] = 0.5 * (tha + thb);
    }
  }
  return 0;
}

/* A run over samples th in path order, at sample s: SIGINT polled, then the continuation from th[s - 1] (none at
   s = 0). Returns 0, or the status that ends the run there (MS_INTERRUPTED, or advance's). */
static int path_step(int s, const double *th, double *q, double *sc, double *dq, double *ddq, const double *p,
                     const double *scale, double tol, int maxit, double hmax, double *a, int *piv, int *turns,
                     const int *sign, double *fail, Bridge *br) {
  if (ms_stop) return MS_INTERRUPTED;
  return s > 0 ? advance(q, sc, dq, ddq, th[s - 1], th[s], p, scale, tol, maxit, hmax, a, piv, turns, sign, fail, br)
               : 0;
}

#endif
