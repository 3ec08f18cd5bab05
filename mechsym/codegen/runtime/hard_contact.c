/* Hard contact in C: the contact terms, the force LCP solved by Lemke's method, and the dynamics of a held
   set of contact states with the event guards, for a model whose generated code has ms_contact (H, the
   bias, the contact frames' Jacobians and classical accelerations) and ms_poses (every frame's origin).

   The formulation, the unknowns' layout and the pivoting rules are those of mechsym/contact/hard.py,
   lcp.py and hard_run.py (the Python route): the tableau [I, -M, -e | q], the covering vector of ones, the
   lexicographic ratio test with z0 leaving as soon as it is tied, the polishing solve of the basic
   unknowns and the complementarity check relative to the scales of z and w. Where the Python route would
   choose among several solutions (a minimum-norm step on a singular or non-unique support), these
   functions return MC_AMBIGUOUS and the caller solves that state by the Python route. Compiled through
   mechsym.codegen.c_backend's cache (mechsym/contact/c_contact.py); states are sample-major. */
/* the runtime prelude: the POSIX feature macro, math.h, signal.h, string.h and the SIGINT handling; the
   status codes (MC_ per state, MS_ per call) shared with Python */
#include "ms_prelude.h"
#include "ms_constants.h"
#include "ms_cholesky.h"
#include <stdlib.h>

/* SIGINT during a call over many states: the runtime's handler raises ms_stop, the loops poll it once per
   state and the call returns MS_INTERRUPTED with the previous handler put back (ms_catch, ms_release). One
   state is too short to need it. */

typedef void (*mc_gen)(int, const double *, const double *, const double *, const double *, double *);

typedef struct {
  mc_gen contact, poses;   /* the tree's generated ms_contact and ms_poses */
  const double *p;         /* its parameter vector */
  int nq, nv, nframes, n, k, ntan, floating;
  const int *index;        /* per contact: its frame among the generated contact frames */
  const int *pose;         /* per contact: its frame among the generated poses */
  const double *radius;    /* per contact, m */
  const double *D;         /* 2 x k: the pyramid's edge directions in (t1, t2) */
  const double *facets;    /* 2 x k: the polygon's outward facet normals */
  double facet_dist;       /* their distance per unit mu fn */
  double B[9];             /* rows n, t1, t2 of the plane */
  double nx[9];            /* [n]x */
  double p0[3];            /* a point of the plane */
} mc_model;

/* ------------------------------------------------------------------ small dense linear algebra */

/* LU with partial pivoting of the m x m matrix A (row stride lda) in place; 0 where a pivot is exactly
   zero. rcond_est: the smallest over the largest pivot magnitude (a cheap conditioning estimate). */
static int lu(int m, double *A, int lda, int *piv, double *rcond_est) {
  double big = 0.0, small = INFINITY;
  for (int j = 0; j < m; j++) {
    int r = j;
    for (int i = j + 1; i < m; i++)
      if (fabs(A[i * lda + j]) > fabs(A[r * lda + j])) r = i;
    piv[j] = r;
    if (A[r * lda + j] == 0.0) return 0;
    if (r != j)
      for (int c = 0; c < m; c++) { double t = A[j * lda + c]; A[j * lda + c] = A[r * lda + c]; A[r * lda + c] = t; }
    double d = A[j * lda + j];
    if (fabs(d) > big) big = fabs(d);
    if (fabs(d) < small) small = fabs(d);
    for (int i = j + 1; i < m; i++) {
      double f = A[i * lda + j] / d;
      A[i * lda + j] = f;
      for (int c = j + 1; c < m; c++) A[i * lda + c] -= f * A[j * lda + c];
    }
  }
  if (rcond_est) *rcond_est = m ? small / big : 1.0;
  return 1;
}

static void lu_solve(int m, const double *A, int lda, const int *piv, double *x) {
  for (int j = 0; j < m; j++) {
    if (piv[j] != j) { double t = x[j]; x[j] = x[piv[j]]; x[piv[j]] = t; }
  }
  for (int i = 0; i < m; i++)
    for (int l = 0; l < i; l++) x[i] -= A[i * lda + l] * x[l];
  for (int i = m - 1; i >= 0; i--) {
    for (int l = i + 1; l < m; l++) x[i] -= A[i * lda + l] * x[l];
    x[i] /= A[i * lda + i];
  }
}

static double maxabs(int n, const double *x) {
  double m = 0.0;
  for (int i = 0; i < n; i++) if (fabs(x[i]) > m) m = fabs(x[i]);
  return m;
}

/* ------------------------------------------------------------------ the LCP */

/* w = M z + q and the largest violation of z >= 0, w >= 0, min(z, w) = 0 relative to the scales of z and w
   (mechsym.contact.lcp.lcp_residual). */
static double residual(int n, const double *M, const double *q, const double *z, double *w) {
  double zs = maxabs(n, z), Mmax = maxabs(n * n, M), qs = maxabs(n, q);
  if (zs < MS_FLOOR) zs = MS_FLOOR;
  double ws = qs + Mmax * zs;
  if (ws < MS_FLOOR) ws = MS_FLOOR;
  double viol = 0.0;
  for (int i = 0; i < n; i++) {
    double s = q[i];
    for (int j = 0; j < n; j++) s += M[i * n + j] * z[j];
    w[i] = s;
    double zr = z[i] / zs, wr = s / ws, mn = zr < wr ? zr : wr;
    if (-zr > viol) viol = -zr;
    if (-wr > viol) viol = -wr;
    if (fabs(mn) > viol) viol = fabs(mn);
  }
  return viol;
}

static void pivot(int n, int width, double *tab, int row, int col) {
  double *r = tab + row * width, d = r[col];
  for (int c = 0; c < width; c++) r[c] /= d;
  for (int i = 0; i < n; i++) {
    if (i == row) continue;
    double f = tab[i * width + col];
    if (f == 0.0) continue;
    double *t = tab + i * width;
    for (int c = 0; c < width; c++) t[c] -= f * r[c];
  }
}

/* Lemke's method on LCP(M, q) (n unknowns) into z; returns MC_OK, MC_RAY or MC_PIVOTS; *pivots counted. */
static int lemke(int n, const double *M, const double *q, double *z, int *pivots, double *work, int *iwork) {
  *pivots = 0;
  int all = 1;
  for (int i = 0; i < n; i++) if (q[i] < 0) all = 0;
  memset(z, 0, n * sizeof(double));
  if (n == 0 || all) return MC_OK;
  int width = 2 * n + 2, max_pivots = MS_LEMKE_PIVOTS * (n + 1);
  double *tab = work, *x = tab + n * width, *pol = x + 2 * n + 1, *Ms = pol + n, *w1 = Ms + n * n, *w2 = w1 + n;
  int *basis = iwork, *cand = basis + n, *tied = cand + n, *piv = tied + n, *Sidx = piv + n;
  for (int i = 0; i < n; i++) {
    double *t = tab + i * width;
    for (int c = 0; c < width; c++) t[c] = 0.0;
    t[i] = 1.0;
    for (int j = 0; j < n; j++) t[n + j] = -M[i * n + j];
    t[2 * n] = -1.0;
    t[2 * n + 1] = q[i];
    basis[i] = i;
  }
  double scale = maxabs(n * width, tab);
  if (scale < 1.0) scale = 1.0;
  int row = 0;
  for (int i = 1; i < n; i++) if (q[i] < q[row]) row = i;
  int entering = 2 * n;
  for (;;) {
    pivot(n, width, tab, row, entering);
    int leaving = basis[row];
    basis[row] = entering;
    (*pivots)++;
    if (leaving == 2 * n) break;
    if (*pivots > max_pivots) return MC_PIVOTS;
    entering = leaving < n ? leaving + n : leaving - n;
    int nc = 0;
    for (int i = 0; i < n; i++) if (tab[i * width + entering] > MS_LEMKE_PIVOT_TOL * scale) cand[nc++] = i;
    if (nc == 0) return MC_RAY;
    /* the minimum ratio; ties lexicographically on B^-1, z0 leaving whenever tied */
    double best = INFINITY;
    for (int a = 0; a < nc; a++) {
      double r = tab[cand[a] * width + width - 1] / tab[cand[a] * width + entering];
      if (r < best) best = r;
    }
    double lim = best + MS_LEMKE_TIE * (fabs(best) > 1.0 ? fabs(best) : 1.0);
    int nt = 0;
    for (int a = 0; a < nc; a++) {
      double r = tab[cand[a] * width + width - 1] / tab[cand[a] * width + entering];
      if (r <= lim) tied[nt++] = cand[a];
    }
    row = tied[0];
    if (nt > 1) {
      int z0 = -1;
      for (int a = 0; a < nt; a++) if (basis[tied[a]] == 2 * n) { z0 = tied[a]; break; }
      if (z0 >= 0) row = z0;
      else {
        for (int a = 1; a < nt; a++) {
          int r = tied[a];
          double cr = tab[r * width + entering], cb = tab[row * width + entering];
          for (int c = 0; c < n; c++) {
            double kr = tab[r * width + c] / cr, kb = tab[row * width + c] / cb;
            if (kr < kb) { row = r; break; }
            if (kr > kb) break;
          }
        }
      }
    }
  }
  memset(x, 0, (2 * n + 1) * sizeof(double));
  for (int i = 0; i < n; i++) x[basis[i]] = tab[i * width + width - 1];
  for (int i = 0; i < n; i++) z[i] = x[n + i] > 0.0 ? x[n + i] : 0.0;
  /* polish: the basic z solved directly from M_SS z_S = -q_S (the tableau gathers round-off) */
  int ns = 0;
  for (int i = 0; i < n; i++) if (basis[i] >= n && basis[i] < 2 * n) Sidx[ns++] = basis[i] - n;
  if (ns) {
    /* in increasing order, as a boolean mask selects them */
    for (int a = 1; a < ns; a++)
      for (int b = a; b > 0 && Sidx[b - 1] > Sidx[b]; b--) { int t = Sidx[b]; Sidx[b] = Sidx[b - 1]; Sidx[b - 1] = t; }
    for (int a = 0; a < ns; a++)
      for (int b = 0; b < ns; b++) Ms[a * ns + b] = M[Sidx[a] * n + Sidx[b]];
    double rc;
    if (lu(ns, Ms, ns, piv, &rc) && rc > 1e-12) {
      memset(pol, 0, n * sizeof(double));
      for (int a = 0; a < ns; a++) w1[a] = -q[Sidx[a]];
      lu_solve(ns, Ms, ns, piv, w1);
      for (int a = 0; a < ns; a++) pol[Sidx[a]] = w1[a];
      if (residual(n, M, q, pol, w2) < residual(n, M, q, z, w1))
        for (int i = 0; i < n; i++) z[i] = pol[i] > 0.0 ? pol[i] : 0.0;
    }
  }
  return MC_OK;
}

/* mechsym.contact.lcp.solve_lcp without its minimum-norm step: a warm start from `guess` (or none), else
   Lemke; MC_CHECK where the check fails. info: warm, pivots, and info[2] = 1 where the support of the
   solution is not unique (the Python route then takes the minimum-norm z with the same generalised force). */
static int solve_lcp(int n, const double *M, const double *q, const int *guess, double check_tol, double *z,
                     double *w, int *info, double *viol_out, double *work, int *iwork) {
  info[0] = 0; info[1] = 0; info[2] = 0;
  double viol;
  int have = 0;
  if (guess && n) {
    int ns = 0, *Sidx = iwork, *piv = iwork + n;
    double *Ms = work, *t = work + n * n, *trial = t + n;
    for (int i = 0; i < n; i++) if (guess[i]) Sidx[ns++] = i;
    memset(trial, 0, n * sizeof(double));
    int ok = 1;
    if (ns) {
      for (int a = 0; a < ns; a++) {
        for (int b = 0; b < ns; b++) Ms[a * ns + b] = M[Sidx[a] * n + Sidx[b]];
        t[a] = -q[Sidx[a]];
      }
      ok = lu(ns, Ms, ns, piv, NULL);
      if (ok) {
        lu_solve(ns, Ms, ns, piv, t);
        for (int a = 0; a < ns; a++) trial[Sidx[a]] = t[a];
      }
    }
    if (ok && residual(n, M, q, trial, w) <= check_tol) {
      for (int i = 0; i < n; i++) z[i] = trial[i] > 0.0 ? trial[i] : 0.0;
      info[0] = 1;
      have = 1;
    }
  }
  if (!have) {
    int st = lemke(n, M, q, z, &info[1], work, iwork);
    if (st != MC_OK) return st;
  }
  viol = residual(n, M, q, z, w);
  if (n) {
    double scale = check_tol * (maxabs(n, q) + maxabs(n * n, M) * maxabs(n, z) + MS_FLOOR);
    int ns = 0, same = 1, *Sidx = iwork, *piv = iwork + n;
    for (int i = 0; i < n; i++) {
      int s = w[i] <= scale;
      if (s != (z[i] > 0)) same = 0;
      if (s) Sidx[ns++] = i;
    }
    if (ns) {
      double *Ms = work, rc = 0.0;
      for (int a = 0; a < ns; a++)
        for (int b = 0; b < ns; b++) Ms[a * ns + b] = M[Sidx[a] * n + Sidx[b]];
      /* the pivots' ratio bounds the condition number from below: well above 1e-10 means a unique z */
      if (!same || !lu(ns, Ms, ns, piv, &rc) || rc < 1e-7) info[2] = 1;
    }
  }
  *viol_out = viol;
  if (viol > check_tol) return MC_CHECK;
  return MC_OK;
}

/* ------------------------------------------------------------------ contact terms */

/* The state's normalised q (into qn), H (factored in place into L), C, and every contact's rows Jc (n x 3 x nv)
   and biases bc (n x 3); buf holds ms_contact's output. Returns 0 when H is not positive definite. */
static int terms(const mc_model *m, const double *q, const double *v, double *qn, double *buf, double *L,
                 double *C, double *Jc, double *bc, double *zero) {
  int nv = m->nv;
  memcpy(qn, q, m->nq * sizeof(double));
  if (m->floating) {
    double s = sqrt(qn[3] * qn[3] + qn[4] * qn[4] + qn[5] * qn[5] + qn[6] * qn[6]);
    for (int i = 3; i < 7; i++) qn[i] /= s;
  }
  m->contact(1, qn, v, zero, m->p, buf);
  memcpy(L, buf, nv * nv * sizeof(double));
  memcpy(C, buf + nv * nv, nv * sizeof(double));
  for (int i = 0; i < m->n; i++) {
    const double *J6 = buf + nv * nv + nv + m->index[i] * (6 * nv + 6), *a6 = J6 + 6 * nv;
    double r = m->radius[i], lin[3];
    for (int k = 0; k < nv; k++) {
      for (int a = 0; a < 3; a++) {
        double s = J6[a * nv + k];
        if (r != 0.0) for (int b = 0; b < 3; b++) s += r * m->nx[a * 3 + b] * J6[(3 + b) * nv + k];
        lin[a] = s;
      }
      for (int row = 0; row < 3; row++)
        Jc[(i * 3 + row) * nv + k] = m->B[row * 3] * lin[0] + m->B[row * 3 + 1] * lin[1] + m->B[row * 3 + 2] * lin[2];
    }
    for (int a = 0; a < 3; a++) {
      double s = a6[a];
      if (r != 0.0) for (int b = 0; b < 3; b++) s += r * a6[3 + b] * m->nx[a * 3 + b];
      lin[a] = s;
    }
    for (int row = 0; row < 3; row++)
      bc[i * 3 + row] = m->B[row * 3] * lin[0] + m->B[row * 3 + 1] * lin[1] + m->B[row * 3 + 2] * lin[2];
  }
  return chol_factor(nv, L);
}

/* The friction polygon's radius along the unit tangential direction s, per unit mu fn. */
static double reach(const mc_model *m, const double *s) {
  double best = -INFINITY;
  for (int j = 0; j < m->k; j++) {
    double d = s[0] * m->facets[j] + s[1] * m->facets[m->k + j];
    if (d > best) best = d;
  }
  return m->facet_dist / best;
}

static double dot(int n, const double *a, const double *b) {
  double s = 0.0;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

/* ------------------------------------------------------------------ the LCP of forces or impulses */

typedef struct {          /* one problem's arrays, laid out in the caller's work space */
  double *G, *HiG, *rows, *M, *qv, *scratch;
  int *act, *fr, *pos, *iscratch;
  int na, nf, nr, mm;
} mc_lcp;

static void lcp_layout(const mc_model *m, double *space, int *ispace, mc_lcp *P) {
  int nv = m->nv, n = m->n, mmax = n + (m->k + 1) * n;
  P->G = space; P->HiG = P->G + nv * mmax; P->rows = P->HiG + nv * mmax; P->M = P->rows + nv * mmax;
  P->qv = P->M + mmax * mmax; P->scratch = P->qv + mmax;
  P->act = ispace; P->fr = P->act + n; P->pos = P->fr + n; P->iscratch = P->pos + n;
}

/* hard.py's _friction_problem: the LCP (M, qv) over the contacts with active[i] and the generalised forces
   of its unknowns (fn, then k pyramid weights per resting frictional contact, then their slip rates);
   base: (n x 3) the normal and tangential rates at zero unknowns; sliding contacts (sliding[i]) carry the
   kinetic force along sdir. */
static void assemble(const mc_model *m, const double *L, const double *Jc, const double *mu, const int *active,
                     const int *sliding, const double *sdir, const double *base, mc_lcp *P) {
  const int nv = m->nv, n = m->n, k = m->k;
  int na = 0, nf = 0;
  for (int i = 0; i < n; i++) {
    P->pos[i] = -1;
    if (!active[i]) continue;
    P->pos[i] = na;
    P->act[na++] = i;
    if (mu[i] > 0 && !sliding[i]) P->fr[nf++] = i;
  }
  const int nr = na + k * nf, mm = na + (k + 1) * nf;
  P->na = na; P->nf = nf; P->nr = nr; P->mm = mm;
  for (int j = 0; j < na; j++) {     /* G (nv x nr) stored by columns: fn's, then the pyramid's */
    int i = P->act[j];
    double *g = P->G + j * nv;
    memcpy(g, Jc + (i * 3) * nv, nv * sizeof(double));
    memcpy(P->rows + j * nv, g, nv * sizeof(double));
    if (mu[i] > 0 && sliding[i]) {
      double f = mu[i] * reach(m, sdir + 2 * i);
      for (int c = 0; c < nv; c++)
        g[c] -= f * (Jc[(i * 3 + 1) * nv + c] * sdir[2 * i] + Jc[(i * 3 + 2) * nv + c] * sdir[2 * i + 1]);
    }
  }
  for (int j = 0; j < nf; j++) {
    int i = P->fr[j];
    for (int l = 0; l < k; l++) {
      double *g = P->G + (na + k * j + l) * nv, d1 = m->D[l], d2 = m->D[k + l];
      for (int c = 0; c < nv; c++) g[c] = d1 * Jc[(i * 3 + 1) * nv + c] + d2 * Jc[(i * 3 + 2) * nv + c];
      memcpy(P->rows + (na + k * j + l) * nv, g, nv * sizeof(double));
    }
  }
  for (int j = 0; j < nr; j++) chol_factored_solve(nv, L, P->G + j * nv, P->HiG + j * nv);
  double *M = P->M, *qv = P->qv;
  memset(M, 0, mm * mm * sizeof(double));
  memset(qv, 0, mm * sizeof(double));
  for (int a = 0; a < nr; a++)
    for (int b = 0; b < nr; b++) M[a * mm + b] = dot(nv, P->rows + a * nv, P->HiG + b * nv);
  for (int j = 0; j < na; j++) qv[j] = base[P->act[j] * 3];
  for (int j = 0; j < nf; j++) {
    int i = P->fr[j], g = na + k * nf + j;
    for (int l = 0; l < k; l++) {
      int r = na + k * j + l;
      qv[r] = m->D[l] * base[i * 3 + 1] + m->D[k + l] * base[i * 3 + 2];
      M[r * mm + g] = 1.0;
      M[g * mm + r] = -1.0;
    }
    M[g * mm + P->pos[i]] = mu[i];
  }
}

/* Solve the assembled LCP (solve_lcp without its minimum-norm step). Where the Python route would choose
   among several solutions, the minimum-norm z with the same generalised force G z (a non-unique support) and
   the minimum-norm contact forces of resting frictional contacts, every choice has the same forces (fn, ft)
   per contact, hence the same lam and q'', when the contacts' rows (normal, and tangential where mu > 0) are
   independent: then this solution stands; otherwise MC_AMBIGUOUS (the Python route decides). */
static int solve_problem(const mc_model *m, const double *Jc, const double *mu, const int *guess,
                         double check_tol, mc_lcp *P, double *z, double *w, int *info, double *viol) {
  const int nv = m->nv, mm = P->mm;
  int flags[3];
  int st = solve_lcp(mm, P->M, P->qv, guess, check_tol, z, w, flags, viol, P->scratch, P->iscratch);
  info[0] = flags[0]; info[1] = flags[1];
  if (st != MC_OK || (!flags[2] && P->nf < 2)) return st;
  int nrow = 0, *row = P->iscratch;
  for (int j = 0; j < P->na; j++) {
    int i = P->act[j];
    row[nrow++] = i * 3;
    if (mu[i] > 0) for (int a = 1; a <= m->ntan; a++) row[nrow++] = i * 3 + a;
  }
  double *AAt = P->scratch, big = 0.0, small = INFINITY;
  for (int a = 0; a < nrow; a++)
    for (int b = 0; b < nrow; b++) AAt[a * nrow + b] = dot(nv, Jc + row[a] * nv, Jc + row[b] * nv);
  for (int a = 0; a < nrow; a++) if (AAt[a * nrow + a] > big) big = AAt[a * nrow + a];
  if (!chol_factor(nrow, AAt)) return MC_AMBIGUOUS;
  for (int a = 0; a < nrow; a++) if (AAt[a * nrow + a] < small) small = AAt[a * nrow + a];
  return small * small < 1e-14 * big ? MC_AMBIGUOUS : MC_OK;
}

/* hard.py's _unpack: forces (or impulses) n x 3 from the unknowns; dv = H^-1 G z. */
static void unpack(const mc_model *m, const mc_lcp *P, const double *mu, const int *sliding, const double *sdir,
                   const double *z, double *lam, double *dv) {
  const int nv = m->nv, k = m->k;
  memset(lam, 0, 3 * m->n * sizeof(double));
  for (int j = 0; j < P->na; j++) {
    int i = P->act[j];
    lam[i * 3] = z[j];
    if (mu[i] > 0 && sliding[i]) {
      double f = -mu[i] * reach(m, sdir + 2 * i) * z[j];
      lam[i * 3 + 1] = f * sdir[2 * i];
      lam[i * 3 + 2] = f * sdir[2 * i + 1];
    }
  }
  for (int j = 0; j < P->nf; j++) {
    int i = P->fr[j];
    double f1 = 0.0, f2 = 0.0;
    for (int l = 0; l < k; l++) {
      f1 += m->D[l] * z[P->na + k * j + l];
      f2 += m->D[k + l] * z[P->na + k * j + l];
    }
    lam[i * 3 + 1] = f1;
    lam[i * 3 + 2] = f2;
  }
  for (int c = 0; c < nv; c++) {
    double s = 0.0;
    for (int j = 0; j < P->nr; j++) s += P->HiG[j * nv + c] * z[j];
    dv[c] = s;
  }
}

/* The doubles of work space ahead of an LCP's arrays: the contact terms and the per-state vectors. */
#define MC_TERMS(m) ((m)->nv * (m)->nv + (m)->nv + (m)->nframes * (6 * (m)->nv + 6))

/* contact_forces of mechsym.contact.hard for ns states (q, v, tau sample-major): the LCP over the contacts
   with active[i], the kinetic force on those sliding faster than slip_tol, the warm start from guess (ns x
   (n + (k+1) n) flags, or NULL). Outputs per state: lam (n x 3), qdd (nv), accel (n), taccel (n x 2), state
   (n), z and w (their layout that of hard.py's _friction_problem, their size in info), info: status, warm,
   pivots, size; viol. Returns MS_OK, or MS_INTERRUPTED. */
int mc_forces(const mc_model *m, int ns, const double *Q, const double *V, const double *TAU, const double *mu,
              const int *active, double slip_tol, const int *guess, double check_tol, double *work, int *iwork,
              double *LAM, double *QDD, double *ACC, double *TACC, int *STATE, double *Z, double *W, int *INFO,
              double *VIOL) {
  const int nq = m->nq, nv = m->nv, n = m->n, k = m->k, mmax = n + (k + 1) * n;
  double *buf = work, *qn = buf + MC_TERMS(m), *L = qn + nq, *C = L + nv * nv, *Jc = C + nv, *bc = Jc + 3 * n * nv,
         *freeacc = bc + 3 * n, *dv = freeacc + nv, *rate = dv + nv, *base = rate + 3 * n, *sdir = base + 3 * n,
         *zero = sdir + 2 * n;
  int *sliding = iwork;
  mc_lcp P;
  lcp_layout(m, zero + nv, iwork + n, &P);
  int status = MS_OK;
  ms_handler old;
  const int caught = ns > 1 ? ms_catch(&old) : 0;
  memset(zero, 0, nv * sizeof(double));
  for (int s = 0; s < ns; s++) {
    if (caught && ms_stop) { status = MS_INTERRUPTED; break; }
    const double *q = Q + s * nq, *v = V + s * nv, *tau = TAU + s * nv;
    double *lam = LAM + s * n * 3, *qdd = QDD + s * nv, *acc = ACC + s * n, *tacc = TACC + s * n * 2;
    double *z = Z + s * mmax, *w = W + s * mmax;
    int *state = STATE + s * n, *info = INFO + s * 4;
    info[0] = MC_OK; info[1] = 0; info[2] = 0; info[3] = 0;
    VIOL[s] = 0.0;
    memset(lam, 0, 3 * n * sizeof(double));
    double sum = 0.0;                        /* NaN or inf anywhere in the state makes the sum non-finite */
    for (int i = 0; i < nq; i++) sum += q[i] * 0.0;
    for (int i = 0; i < nv; i++) sum += v[i] * 0.0 + tau[i] * 0.0;
    if (sum != 0.0) { info[0] = MC_NOT_FINITE; continue; }
    if (!terms(m, q, v, qn, buf, L, C, Jc, bc, zero)) { info[0] = MC_NOT_PD; continue; }
    for (int i = 0; i < nv; i++) freeacc[i] = tau[i] - C[i];
    chol_factored_solve(nv, L, freeacc, freeacc);
    for (int i = 0; i < n; i++) {
      for (int a = 0; a < 3; a++) {
        const double *J = Jc + (i * 3 + a) * nv;
        rate[i * 3 + a] = dot(nv, J, v);
        base[i * 3 + a] = dot(nv, J, freeacc) + bc[i * 3 + a];
      }
      double sp = sqrt(rate[i * 3 + 1] * rate[i * 3 + 1] + rate[i * 3 + 2] * rate[i * 3 + 2]);
      sliding[i] = sp > slip_tol;
      sdir[2 * i] = sliding[i] ? rate[i * 3 + 1] / sp : 0.0;
      sdir[2 * i + 1] = sliding[i] ? rate[i * 3 + 2] / sp : 0.0;
    }
    assemble(m, L, Jc, mu, active, sliding, sdir, base, &P);
    info[3] = P.mm;
    int st = solve_problem(m, Jc, mu, guess ? guess + s * mmax : NULL, check_tol, &P, z, w, info + 1, &VIOL[s]);
    info[0] = st;
    if (st != MC_OK) continue;
    unpack(m, &P, mu, sliding, sdir, z, lam, dv);
    for (int c = 0; c < nv; c++) qdd[c] = freeacc[c] + dv[c];
    for (int i = 0; i < n; i++) {
      acc[i] = dot(nv, Jc + (i * 3) * nv, qdd) + bc[i * 3];
      tacc[2 * i] = dot(nv, Jc + (i * 3 + 1) * nv, qdd) + bc[i * 3 + 1];
      tacc[2 * i + 1] = dot(nv, Jc + (i * 3 + 2) * nv, qdd) + bc[i * 3 + 2];
      state[i] = MS_NO_CONTACT;
      if (lam[i * 3] > 0) {
        double rc = -INFINITY;
        for (int j = 0; j < k; j++) {
          double d = m->facets[j] * lam[i * 3 + 1] + m->facets[k + j] * lam[i * 3 + 2];
          if (d > rc) rc = d;
        }
        int at_cone = mu[i] > 0 && rc >= (1 - 1e-9) * mu[i] * m->facet_dist * lam[i * 3];
        state[i] = (sliding[i] || at_cone) ? MS_SLIP : MS_STICK;
      }
    }
  }
  ms_release(caught, &old);
  return status;
}

/* impulse of mechsym.contact.hard for ns states: frictionless, the block system by its Schur complement
   W Lam = -(1 + e) zeta'- where W is regular and the solution does not pull, else the impact LCP; with
   friction the velocity-level LCP. Outputs per state: v_plus (nv), Lam (n x 3), the normal rates before and
   after (n each), state (n), info: status, block, pivots, size. Returns MS_OK, or MS_INTERRUPTED. */
int mc_impulse(const mc_model *m, int ns, const double *Q, const double *V, const double *mu, const double *e,
               const int *active, double check_tol, double *work, int *iwork, double *VP, double *LAM,
               double *BEFORE, double *AFTER, int *STATE, int *INFO) {
  const int nq = m->nq, nv = m->nv, n = m->n, mmax = n + (m->k + 1) * n;
  double *buf = work, *qn = buf + MC_TERMS(m), *L = qn + nq, *C = L + nv * nv, *Jc = C + nv, *bc = Jc + 3 * n * nv,
         *dv = bc + 3 * n, *base = dv + nv, *z = base + 3 * n, *w = z + mmax, *zero = w + mmax;
  int *none = iwork;
  mc_lcp P;
  lcp_layout(m, zero + nv, iwork + n, &P);
  int status = MS_OK;
  ms_handler old;
  const int caught = ns > 1 ? ms_catch(&old) : 0;
  memset(zero, 0, nv * sizeof(double));
  memset(none, 0, n * sizeof(int));
  for (int s = 0; s < ns; s++) {
    if (caught && ms_stop) { status = MS_INTERRUPTED; break; }
    const double *q = Q + s * nq, *v = V + s * nv;
    double *vp = VP + s * nv, *lam = LAM + s * n * 3, *before = BEFORE + s * n, *after = AFTER + s * n;
    int *state = STATE + s * n, *info = INFO + s * 4;
    info[0] = MC_OK; info[1] = 0; info[2] = 0; info[3] = 0;
    memset(lam, 0, 3 * n * sizeof(double));
    if (!terms(m, q, v, qn, buf, L, C, Jc, bc, zero)) { info[0] = MC_NOT_PD; continue; }
    int frictional = 0, nact = 0;
    for (int i = 0; i < n; i++) {
      for (int a = 0; a < 3; a++) base[i * 3 + a] = dot(nv, Jc + (i * 3 + a) * nv, v);
      before[i] = base[i * 3];
      base[i * 3] *= 1 + e[i];
      if (active[i]) { nact++; if (mu[i] > 0) frictional = 1; }
    }
    assemble(m, L, Jc, mu, active, none, zero, base, &P);
    info[3] = P.mm;
    int st = MC_OK, block = 0;
    if (nact && !frictional) {
      /* the block system: W Lam = -(1 + e) zeta'-, W = M (frictionless); kept where Lam does not pull */
      int na = P.na, *piv = P.iscratch;
      double *Wf = P.scratch, rc, big = 0.0;
      memcpy(Wf, P.M, na * na * sizeof(double));
      for (int j = 0; j < na; j++) z[j] = -P.qv[j];
      if (!lu(na, Wf, na, piv, &rc) || rc < 1e-7) st = MC_AMBIGUOUS;   /* singular W: the minimum-norm Lam */
      else {
        lu_solve(na, Wf, na, piv, z);
        for (int j = 0; j < na; j++) if (fabs(z[j]) > big) big = fabs(z[j]);
        block = 1;
        for (int j = 0; j < na; j++) if (z[j] < -1e-12 * (big > 1.0 ? big : 1.0)) block = 0;
        if (block) for (int j = 0; j < na; j++) if (z[j] < 0) z[j] = 0.0;
      }
    }
    if (st == MC_OK && !block) {
      double viol;
      st = solve_problem(m, Jc, mu, NULL, check_tol, &P, z, w, info + 1, &viol);
      info[1] = 0;
    }
    info[0] = st;
    if (st != MC_OK) continue;
    info[1] = block;
    unpack(m, &P, mu, none, zero, z, lam, dv);
    for (int c = 0; c < nv; c++) vp[c] = v[c] + dv[c];
    for (int i = 0; i < n; i++) {
      double a0 = dot(nv, Jc + (i * 3) * nv, vp), a1 = dot(nv, Jc + (i * 3 + 1) * nv, vp),
             a2 = dot(nv, Jc + (i * 3 + 2) * nv, vp), sp = sqrt(a1 * a1 + a2 * a2);
      after[i] = a0;
      state[i] = MS_NO_CONTACT;
      if (lam[i * 3] > 0)
        state[i] = sp <= 1e-9 * (1.0 + fabs(a0) + sqrt(a0 * a0 + a1 * a1 + a2 * a2)) ? MS_STICK : MS_SLIP;
    }
  }
  ms_release(caught, &old);
  return status;
}

/* ------------------------------------------------------------------ the held states: right-hand side and guards */

/* The right-hand side of mechsym.contact.hard_run with every contact's state held (0 none, 1 stick, 2 slip),
   the joints driven by the PD hold tau = kp (qref - q_j) - kd v_j on the actuated speeds act[0..na) (q index
   act + nq - nv), and the guards' per-contact values. y = [q, v] (raw: the quaternion as integrated).
   Outputs: ydot (nq + nv), lam (n x 3), rates (n x 3), gap (n; only where need_gap), loss, slip, stick (n
   each, +inf where a guard does not apply), accn (n: every contact's normal gap acceleration). fast: per
   contact, 1 when the slide follows v_t, 0 when it keeps sdir0 (2 per contact). Returns MC_OK, MC_NOT_PD,
   or MC_AMBIGUOUS when the constrained system is singular (redundant contacts: the Python route takes its minimum-norm solution). */
int mc_held(const mc_model *m, const double *y, const int *state, const double *mu, const int *fast,
            const double *sdir0, int nact, const int *act, const double *qref, double kp, double kd,
            const double *tau_in, int need_gap, double slow, double *work, int *iwork, double *ydot, double *lam,
            double *rates, double *gap, double *loss, double *slip, double *stick, double *accn) {
  const int nq = m->nq, nv = m->nv, n = m->n, mx = 3 * n;
  const double *q = y, *v = y + nq;
  double *buf = work, *qn = buf + nv * nv + nv + m->nframes * (6 * nv + 6), *L = qn + nq, *C = L + nv * nv,
         *Jc = C + nv, *bc = Jc + 3 * n * nv, *freeacc = bc + 3 * n, *tau = freeacc + nv, *G = tau + nv,
         *HiG = G + nv * mx, *R = HiG + nv * mx, *A = R + nv * mx, *rhs = A + mx * mx, *sd = rhs + mx,
         *zero = sd + 2 * n, *pose = zero + nv;
  int *piv = iwork, *who = piv + mx, *comp = who + mx;
  memset(zero, 0, nv * sizeof(double));
  if (tau_in) memcpy(tau, tau_in, nv * sizeof(double));
  else memset(tau, 0, nv * sizeof(double));
  for (int j = 0; j < nact; j++) {
    int a = act[j];
    tau[a] += kp * (qref[j] - q[a + nq - nv]) - kd * v[a];
  }
  if (!terms(m, q, v, qn, buf, L, C, Jc, bc, zero)) return MC_NOT_PD;
  for (int i = 0; i < nv; i++) freeacc[i] = tau[i] - C[i];
  chol_factored_solve(nv, L, freeacc, freeacc);
  memset(lam, 0, 3 * n * sizeof(double));
  for (int i = 0; i < n; i++) {
    for (int a = 0; a < 3; a++) rates[i * 3 + a] = dot(nv, Jc + (i * 3 + a) * nv, v);
    double vt1 = rates[i * 3 + 1], vt2 = rates[i * 3 + 2], sp = sqrt(vt1 * vt1 + vt2 * vt2);
    if (fast[i]) { sd[2 * i] = vt1 / sp; sd[2 * i + 1] = vt2 / sp; }
    else { sd[2 * i] = sdir0[2 * i]; sd[2 * i + 1] = sdir0[2 * i + 1]; }
  }
  int nx = 0;
  for (int i = 0; i < n; i++) {
    if (state[i] == MS_NO_CONTACT) continue;
    int slipping = state[i] == MS_SLIP && mu[i] > 0;
    double *g = G + nx * nv;
    memcpy(g, Jc + (i * 3) * nv, nv * sizeof(double));
    if (slipping) {
      double f = mu[i] * reach(m, sd + 2 * i);
      for (int c = 0; c < nv; c++)
        g[c] -= f * (sd[2 * i] * Jc[(i * 3 + 1) * nv + c] + sd[2 * i + 1] * Jc[(i * 3 + 2) * nv + c]);
    }
    memcpy(R + nx * nv, Jc + (i * 3) * nv, nv * sizeof(double));
    rhs[nx] = bc[i * 3];
    who[nx] = i; comp[nx] = 0; nx++;
    if (state[i] == MS_STICK && mu[i] > 0) {
      for (int a = 1; a <= m->ntan; a++) {
        memcpy(G + nx * nv, Jc + (i * 3 + a) * nv, nv * sizeof(double));
        memcpy(R + nx * nv, Jc + (i * 3 + a) * nv, nv * sizeof(double));
        rhs[nx] = bc[i * 3 + a];
        who[nx] = i; comp[nx] = a; nx++;
      }
    }
  }
  double *vdot = ydot + nq;
  memcpy(vdot, freeacc, nv * sizeof(double));
  if (nx) {
    for (int j = 0; j < nx; j++) chol_factored_solve(nv, L, G + j * nv, HiG + j * nv);
    for (int a = 0; a < nx; a++) {
      for (int b = 0; b < nx; b++) A[a * nx + b] = dot(nv, R + a * nv, HiG + b * nv);
      rhs[a] = -(dot(nv, R + a * nv, freeacc) + rhs[a]);
    }
    double rc;
    if (!lu(nx, A, nx, piv, &rc) || rc < 1e-9) return MC_AMBIGUOUS;
    lu_solve(nx, A, nx, piv, rhs);
    for (int j = 0; j < nx; j++) {
      for (int c = 0; c < nv; c++) vdot[c] += HiG[j * nv + c] * rhs[j];
      lam[who[j] * 3 + comp[j]] = rhs[j];
    }
    for (int i = 0; i < n; i++)
      if (state[i] == MS_SLIP && mu[i] > 0) {
        double f = -mu[i] * reach(m, sd + 2 * i) * lam[i * 3];
        lam[i * 3 + 1] = f * sd[2 * i];
        lam[i * 3 + 2] = f * sd[2 * i + 1];
      }
  }
  /* dq/dt: p' = R(quat) v_lin, quat' = quat (x) (w, 0) / 2 (the quaternion as integrated), joints' = rates */
  if (m->floating) {
    double x = q[3], yy = q[4], zz = q[5], w = q[6], s = 2.0 / (x * x + yy * yy + zz * zz + w * w);
    double Rm[9] = {1 - s * (yy * yy + zz * zz), s * (x * yy - zz * w), s * (x * zz + yy * w),
                    s * (x * yy + zz * w), 1 - s * (x * x + zz * zz), s * (yy * zz - x * w),
                    s * (x * zz - yy * w), s * (yy * zz + x * w), 1 - s * (x * x + yy * yy)};
    for (int a = 0; a < 3; a++) ydot[a] = Rm[a * 3] * v[0] + Rm[a * 3 + 1] * v[1] + Rm[a * 3 + 2] * v[2];
    double bx = v[3], by = v[4], bz = v[5];
    ydot[3] = 0.5 * (w * bx + yy * bz - zz * by);
    ydot[4] = 0.5 * (w * by - x * bz + zz * bx);
    ydot[5] = 0.5 * (w * bz + x * by - yy * bx);
    ydot[6] = 0.5 * (-x * bx - yy * by - zz * bz);
    for (int i = 7; i < nq; i++) ydot[i] = v[i - 1];
  } else {
    memcpy(ydot, v, nv * sizeof(double));
  }
  /* guards: loss (fn of contacts in contact), slip (distance of a sticking force to the pyramid), stick */
  for (int i = 0; i < n; i++) {
    accn[i] = dot(nv, Jc + (i * 3) * nv, vdot) + bc[i * 3];
    loss[i] = state[i] != MS_NO_CONTACT ? lam[i * 3] : INFINITY;
    slip[i] = INFINITY;
    stick[i] = INFINITY;
    if (state[i] == MS_STICK && mu[i] > 0) {
      double rc = -INFINITY;
      for (int j = 0; j < m->k; j++) {
        double d = m->facets[j] * lam[i * 3 + 1] + m->facets[m->k + j] * lam[i * 3 + 2];
        if (d > rc) rc = d;
      }
      slip[i] = mu[i] * m->facet_dist * lam[i * 3] - rc;
    }
    if (state[i] == MS_SLIP && mu[i] > 0) {
      double vt1 = rates[i * 3 + 1], vt2 = rates[i * 3 + 2], sp = sqrt(vt1 * vt1 + vt2 * vt2);
      double along = sdir0[2 * i] * vt1 + sdir0[2 * i + 1] * vt2;
      stick[i] = fast[i] ? sp - slow : (along < 2 * slow - sp ? along : 2 * slow - sp);
    }
  }
  if (need_gap) {
    m->poses(1, qn, zero, zero, m->p, pose);
    for (int i = 0; i < n; i++) {
      const double *o = pose + 12 * m->pose[i];
      gap[i] = m->B[0] * (o[0] - m->p0[0]) + m->B[1] * (o[1] - m->p0[1]) + m->B[2] * (o[2] - m->p0[2]) - m->radius[i];
    }
  }
  return MC_OK;
}

/* The held states' forces at ns states y (rows of Y), each with its own held states, slide flags and
   directions (STATES, FAST: ns x n; SDIR: ns x n x 2) and, where TAU is not NULL, its own added tau (ns x
   nv): LAM (ns x n x 3), STATUS (ns). Returns MS_OK,
   MS_INTERRUPTED or MS_NO_MEMORY. */
int mc_held_many(const mc_model *m, int ns, const double *Y, const int *STATES, const int *FAST, const double *SDIR,
                 const double *mu, int nact, const int *act, const double *qref, double kp, double kd,
                 const double *TAU, double slow, double *work, int *iwork, double *LAM, int *STATUS) {
  const int nq = m->nq, nv = m->nv, n = m->n;
  double *out = malloc((nq + nv + 10 * n) * sizeof(double));
  if (!out) return MS_NO_MEMORY;
  double *ydot = out, *rates = ydot + nq + nv, *gap = rates + 3 * n, *loss = gap + n, *slip = loss + n,
         *stick = slip + n, *accn = stick + n;
  int status = MS_OK;
  ms_handler old;
  const int caught = ns > 1 ? ms_catch(&old) : 0;
  for (int s = 0; s < ns; s++) {
    if (caught && ms_stop) { status = MS_INTERRUPTED; break; }
    STATUS[s] = mc_held(m, Y + s * (nq + nv), STATES + s * n, mu, FAST + s * n, SDIR + s * 2 * n, nact, act, qref,
                        kp, kd, TAU ? TAU + s * nv : NULL, 0, slow, work, iwork, ydot, LAM + s * 3 * n, rates, gap,
                        loss, slip, stick, accn);
  }
  ms_release(caught, &old);
  free(out);
  return status;
}

/* The kinematics of the contacts at one configuration: gaps (n) and rows Jc (n x 3 x nv). Returns 0 when H
   (computed with them) is not positive definite. */
int mc_kin(const mc_model *m, const double *q, double *work, double *gap, double *Jc) {
  const int nq = m->nq, nv = m->nv, n = m->n;
  double *buf = work, *qn = buf + MC_TERMS(m), *L = qn + nq, *C = L + nv * nv, *bc = C + nv, *zero = bc + 3 * n,
         *pose = zero + nv;
  memset(zero, 0, nv * sizeof(double));
  int ok = terms(m, q, zero, qn, buf, L, C, Jc, bc, zero);
  m->poses(1, qn, zero, zero, m->p, pose);
  for (int i = 0; i < n; i++) {
    const double *o = pose + 12 * m->pose[i];
    gap[i] = m->B[0] * (o[0] - m->p0[0]) + m->B[1] * (o[1] - m->p0[1]) + m->B[2] * (o[2] - m->p0[2]) - m->radius[i];
  }
  return ok;
}

/* ------------------------------------------------------------------ one state, arguments by address */

/* mc_forces of one state with its arrays' addresses in a[] (q, v, tau, mu, active, guess, work, iwork, lam,
   qdd, accel, taccel, state, z, w, info, viol): one argument to pass instead of twenty. */
int mc_forces_one(const mc_model *m, void *const *a, double slip_tol, int warm, double check_tol) {
  return mc_forces(m, 1, a[0], a[1], a[2], a[3], a[4], slip_tol, warm ? a[5] : NULL, check_tol, a[6], a[7], a[8],
                   a[9], a[10], a[11], a[12], a[13], a[14], a[15], a[16]);
}

/* mc_held with its arrays' addresses in a[] (y, state, mu, fast, sdir, act, qref, tau, work, iwork, ydot, lam,
   rates, gap, loss, slip, stick, accn). */
int mc_held_one(const mc_model *m, void *const *a, int nact, double kp, double kd, int with_tau, int need_gap,
                double slow) {
  return mc_held(m, a[0], a[1], a[2], a[3], a[4], nact, a[5], a[6], kp, kd, with_tau ? a[7] : NULL, need_gap,
                 slow, a[8], a[9], a[10], a[11], a[12], a[13], a[14], a[15], a[16], a[17]);
}
