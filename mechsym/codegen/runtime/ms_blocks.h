/* mechsym C runtime: the inverse-dynamics batch in blocks of MS_LANES samples (inverse_blocks, which
   MS_FN(inverse) and MS_FN(inverse_sets) call, and MS_FN(inverse_columns)), included after ms_kernels.h. Where the generated source has
   lane functions (MS_HAVE_LANES: trig_v, rotate_v, phi_v, jac_slots_v, gamma_v, applied_v, branch_v,
   lu_factor_v, lu_solve_v, lu_solve_t_v of mechsym.codegen.c_lanes) each block's samples are solved
   independently; otherwise inverse_blocks is inverse_run. */
#ifndef MS_BLOCKS_H
#define MS_BLOCKS_H
#if MS_HAVE_LANES
/* Where the unknowns go: sample-major into u (n x NROW x 3, as MS_FN(inverse) writes them), or, when cols is
   not NULL, combined for nspeed speeds into columns, cols[(i * nspeed + k) * n + s] = coef[3 k] Ua +
   coef[3 k + 1] Uw + coef[3 k + 2] Us for unknown i at sample s (the layout of a table's columns, rows
   speed by speed). */
typedef struct { double *u, *cols; const double *coef; int nspeed, n; } ms_sink;

/* The unknowns u (NROW x 3) of sample s into the sink. */
static void sink_sample(const ms_sink *o, int s, const double *u) {
  if (!o->cols) { memcpy(o->u + (size_t)s * NROW * 3, u, sizeof(double) * NROW * 3); return; }
  for (int i = 0; i < NROW; ++i)
    for (int k = 0; k < o->nspeed; ++k)
      o->cols[((size_t)i * o->nspeed + k) * o->n + s] =
          o->coef[3 * k] * u[3 * i] + o->coef[3 * k + 1] * u[3 * i + 1] + o->coef[3 * k + 2] * u[3 * i + 2];
}

/* The samples th[0..cnt) of one block (cnt <= MS_LANES), each solved by Newton from its own prediction
   q + h dq + h^2/2 ddq + h^3/6 d3q off the anchor (qa and its derivatives d[0..2] along th, solved at tha),
   then their coefficients, reactions (three right-hand sides), largest velocity coefficient and smallest
   branch condition, written as inverse_run writes them. Returns the number of Newton iterations the block
   took, or 0 when a lane did not converge, met a singular Phi_q or, where no branch condition is declared,
   converged where det Phi_q has another sign than the anchor's `sign` (another assembly branch): nothing is
   then written, and the caller solves the block sample by sample. */
static int inverse_lanes(int cnt, const double *th, double tha, const double *qa, const double (*d)[NQ], int sign,
                         const double *p, const double *mass, const double *rscale, double tol, int maxit,
                         double *q_out, double *coef_max, double *branch_min, const ms_sink *out, int s0) {
  double Q[NQ * MS_LANES], SC[NSC * MS_LANES], TH[MS_LANES], A[LU_NSLOT * MS_LANES], PV[LU_NBLOCK * MS_LANES];
  double R[NROW * MS_LANES], DX[NQ * MS_LANES], DQ[NQ * MS_LANES], DDQ[NQ * MS_LANES], U[3][NROW * MS_LANES];
  double BR[NBRANCH * MS_LANES], STEP[MS_LANES], CM[MS_LANES], BM[MS_LANES], SG[MS_LANES];
  MS_SIMD_LOOP
  for (int l = 0; l < MS_LANES; ++l) {
    const double t = th[l < cnt ? l : cnt - 1], h = t - tha;
    TH[l] = t;
    for (int i = 0; i < NQ; ++i) Q[V(i)] = qa[i] + h * (d[0][i] + h * (0.5 * d[1][i] + h * (1.0 / 6.0) * d[2][i]));
  }
  int it = 0, done = 0;
  while (!done) {
    if (it++ == maxit) return 0;
    trig_v(Q, SC);
    phi_v(Q, TH, p, SC, R);
    jac_slots_v(Q, SC, p, A);
    if (lu_factor_v(A, PV)) return 0;
    lu_solve_v(A, PV, R, DX);
    MS_SIMD_LOOP
    for (int l = 0; l < MS_LANES; ++l) {
      double step = 0.0, sum = 0.0;
      for (int i = 0; i < NQ; ++i) {
        Q[V(i)] -= DX[V(i)];
        const double v = fabs(DX[V(i)]) * rscale[i];
        step = v > step ? v : step;
        sum += v;                                      /* NaN if any step is */
      }
      STEP[l] = sum == sum ? step : sum;
    }
    done = 1;
    for (int l = 0; l < MS_LANES; ++l) done &= STEP[l] <= tol;
  }
  rotate_v(SC, DX);
  jac_slots_v(Q, SC, p, A);
  if (lu_factor_v(A, PV)) return 0;
  if (!NBRANCH_USED) {
    lu_det_sign_v(A, PV, SG);
    for (int l = 0; l < cnt; ++l) if (SG[l] != sign) return 0;
  }
  branch_v(Q, p, SC, BR);
  for (int l = 0; l < cnt; ++l)
    for (int i = 0; i < NBRANCH_USED; ++i) if (!(BR[V(i)] > 0.0)) return 0;
  MS_SIMD_LOOP
  for (int l = 0; l < MS_LANES; ++l)
    for (int i = 0; i < NROW; ++i) R[V(i)] = i == NJ ? 1.0 : 0.0;
  lu_solve_v(A, PV, R, DQ);                       /* dq/dth */
  gamma_v(Q, DQ, p, SC, R);
  MS_SIMD_LOOP
  for (int l = 0; l < MS_LANES; ++l)
    for (int i = 0; i < NROW; ++i) R[V(i)] = -R[V(i)];
  lu_solve_v(A, PV, R, DDQ);                      /* d2q/dth2 */
  MS_SIMD_LOOP
  for (int l = 0; l < MS_LANES; ++l)
    for (int i = 0; i < NQ; ++i) R[V(i)] = mass[i] * DQ[V(i)];
  lu_solve_t_v(A, PV, R, U[0]);
  MS_SIMD_LOOP
  for (int l = 0; l < MS_LANES; ++l)
    for (int i = 0; i < NQ; ++i) R[V(i)] = mass[i] * DDQ[V(i)];
  lu_solve_t_v(A, PV, R, U[1]);
  applied_v(Q, p, SC, DX);
  MS_SIMD_LOOP
  for (int l = 0; l < MS_LANES; ++l)
    for (int i = 0; i < NQ; ++i) R[V(i)] = -DX[V(i)];
  lu_solve_t_v(A, PV, R, U[2]);
  MS_SIMD_LOOP
  for (int l = 0; l < MS_LANES; ++l) {
    double cm = 0.0, bm = 1.0, sum = 0.0;
    for (int i = 0; i < NQ; ++i) { const double v = fabs(DQ[V(i)]) * rscale[i]; cm = v > cm ? v : cm; sum += v; }
    for (int i = 0; i < NBRANCH_USED; ++i) { bm = BR[V(i)] < bm ? BR[V(i)] : bm; sum += BR[V(i)]; }
    CM[l] = sum == sum ? cm : sum;                     /* a NaN shows in both */
    BM[l] = sum == sum ? bm : sum;
  }
  if (out->cols)
    for (int i = 0; i < NROW; ++i)
      for (int k = 0; k < out->nspeed; ++k) {
        const double ca = out->coef[3 * k], cw = out->coef[3 * k + 1], cs = out->coef[3 * k + 2];
        double *col = out->cols + ((size_t)i * out->nspeed + k) * out->n + s0;
        for (int l = 0; l < cnt; ++l) col[l] = ca * U[0][V(i)] + cw * U[1][V(i)] + cs * U[2][V(i)];
      }
  for (int l = 0; l < cnt; ++l) {
    double *u = out->cols ? NULL : out->u + (size_t)(s0 + l) * NROW * 3;
    if (u)
      for (int i = 0; i < NROW; ++i) { u[3 * i] = U[0][V(i)]; u[3 * i + 1] = U[1][V(i)]; u[3 * i + 2] = U[2][V(i)]; }
    coef_max[l] = CM[l];
    branch_min[l] = BM[l];
    if (q_out) for (int i = 0; i < NQ; ++i) q_out[(size_t)l * NQ + i] = Q[V(i)];
  }
  return it;
}

/* inverse_run's results in blocks of MS_LANES samples, each block's samples solved independently
   (inverse_lanes) from one anchor: a solved configuration reached by continuation (advance, as the
   sequential route does) at the middle sample of the first block farther than `reach` from the last
   anchor, and always within hmax of every sample it predicts. reach adapts so that a block takes one
   Newton iteration: halved after a block that took more, grown after one that took one. A block whose
   samples span more than 2 hmax, or whose lanes fail, runs sample by sample (inverse_run) from the last
   anchor, which then names the failing sample and its status. */
static int inverse_blocks_to(int n, const double *th, const double *p, const double *q0, const double *scale,
                             double tol, int maxit, double hmax, double *q_out, double *coef_max, double *branch_min,
                             const ms_sink *out, int *status, double *fail) {
  double q[NQ], sc[NSC], d[3][NQ], a[LU_NSLOT], mass[NQ], q_prev[NQ], rscale[NQ], tha = th[0], reach = hmax;
  int piv[LU_NBLOCK], turns = 0;
  for (int i = 0; i < NQ; ++i) rscale[i] = 1.0 / scale[i];
  memcpy(q, q0, sizeof q);
  mass1(p, mass);
  int signs[MS_NSIGN];
  *status = continuation_start(q, sc, th, p, scale, tol, maxit, a, piv, d[0], d[1], signs, NULL);
  if (*status) return 0;
  third(q, sc, p, a, piv, d[0], d[1], d[2]);
  const int sign = lu_det_sign(a, piv);  /* every anchor's: advance keeps it */
  for (int s0 = 0; s0 < n; s0 += MS_LANES) {
    if (ms_stop) { *status = MS_INTERRUPTED; return s0; }
    const int cnt = n - s0 < MS_LANES ? n - s0 : MS_LANES;
    int near = 1, its = 0;
    for (int l = 0; l < cnt; ++l) near &= fabs(th[s0 + l] - tha) <= reach;
    memcpy(q_prev, q, sizeof q);
    const double tha_prev = tha;
    if (!near) {
      const double mid = th[s0 + (cnt - 1) / 2];
      near = !advance(q, sc, d[0], d[1], tha, mid, p, scale, tol, maxit, hmax, a, piv, &turns, signs, NULL, NULL);
      tha = mid;
      for (int l = 0; l < cnt && near; ++l) near = fabs(th[s0 + l] - mid) <= hmax;
      if (near) third(q, sc, p, a, piv, d[0], d[1], d[2]);
    }
    if (near)
      its = inverse_lanes(cnt, th + s0, tha, q, (const double (*)[NQ])d, sign, p, mass, rscale, tol, maxit,
                          q_out ? q_out + (size_t)s0 * NQ : NULL, coef_max + s0, branch_min + s0, out, s0);
    if (its) {
      reach = its > 1 ? 0.5 * reach : fmin(hmax, 1.25 * reach);
      continue;
    }
    /* sample by sample from the last anchor (its first row, the anchor itself, is not a result) */
    double t1[MS_LANES + 1], q1[(MS_LANES + 1) * NQ], c1[MS_LANES + 1], b1[MS_LANES + 1], u1[(MS_LANES + 1) * NROW * 3];
    t1[0] = tha_prev;
    memcpy(t1 + 1, th + s0, sizeof(double) * cnt);
    const int failed = inverse_run(cnt + 1, t1, p, q_prev, scale, tol, maxit, hmax, q1, c1, b1, u1, status, fail);
    const int good = failed < 0 ? cnt : (failed > 0 ? failed - 1 : 0);
    memcpy(coef_max + s0, c1 + 1, sizeof(double) * good);
    memcpy(branch_min + s0, b1 + 1, sizeof(double) * good);
    for (int j = 0; j < good; ++j) sink_sample(out, s0 + j, u1 + (size_t)(j + 1) * NROW * 3);
    if (q_out) memcpy(q_out + (size_t)s0 * NQ, q1 + NQ, sizeof(double) * NQ * good);
    if (failed >= 0) return s0 + good;
    memcpy(q, q1 + (size_t)cnt * NQ, sizeof q);
    tha = th[s0 + cnt - 1];
    *status = newton(q, sc, &tha, p, scale, tol, maxit, a, piv);
    if (*status) return s0 + cnt - 1;
    coefficients(q, sc, p, a, piv, d[0], d[1]);
    third(q, sc, p, a, piv, d[0], d[1], d[2]);
  }
  return -1;
}

static int inverse_blocks(int n, const double *th, const double *p, const double *q0, const double *scale, double tol,
                          int maxit, double hmax, double *q_out, double *coef_max, double *branch_min, double *u_out,
                          int *status, double *fail) {
  const ms_sink out = {u_out, NULL, NULL, 0, n};
  return inverse_blocks_to(n, th, p, q0, scale, tol, maxit, hmax, q_out, coef_max, branch_min, &out, status, fail);
}

/* MS_FN(inverse) with the unknowns combined for nspeed speeds into columns: cols (NROW x nspeed x n),
   cols[(i * nspeed + k) * n + s] = coef[3 k] Ua + coef[3 k + 1] Uw + coef[3 k + 2] Us (coef: nspeed rows of
   alpha, omega^2, 1), written as they are computed, so that no per-sample basis is stored. */
int MS_FN(inverse_columns)(int n, const double *th, const double *p, const double *q0, const double *scale,
                           double tol, int maxit, double hmax, int nspeed, const double *coef, double *coef_max,
                           double *branch_min, double *cols, int *status, double *fail) {
  ms_handler old;
  const int caught = ms_catch(&old);
  const ms_sink out = {NULL, cols, coef, nspeed, n};
  const int failed = inverse_blocks_to(n, th, p, q0, scale, tol, maxit, hmax, NULL, coef_max, branch_min, &out, status,
                                       fail);
  ms_release(caught, &old);
  return failed;
}
#else
static int inverse_blocks(int n, const double *th, const double *p, const double *q0, const double *scale, double tol,
                          int maxit, double hmax, double *q_out, double *coef_max, double *branch_min, double *u_out,
                          int *status, double *fail) {
  return inverse_run(n, th, p, q0, scale, tol, maxit, hmax, q_out, coef_max, branch_min, u_out, status, fail);
}
#endif
#endif
