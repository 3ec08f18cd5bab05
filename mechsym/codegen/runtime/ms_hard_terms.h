/* mechsym C runtime, hard contact (mechsym/codegen/runtime/hard_contact.c, whose mc_model it reads): a
   state's contact terms and the LCP of forces or impulses over a set of contacts (mechsym/contact/
   hard_problem.py's layout of the unknowns). */
#ifndef MS_HARD_TERMS_H
#define MS_HARD_TERMS_H
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

/* hard_problem.py's friction_problem: the LCP (M, qv) over the contacts with active[i] and the generalised forces
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

/* hard_problem.py's unpack: forces (or impulses) n x 3 from the unknowns; dv = H^-1 G z. */
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
#endif
