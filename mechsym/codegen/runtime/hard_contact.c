/* Hard contact in C: the contact terms, the force LCP solved by Lemke's method, and the dynamics of a held
   set of contact states with the event guards, for a model whose generated code has ms_contact (H, the
   bias, the contact frames' Jacobians and classical accelerations) and ms_poses (every frame's origin).

   The formulation, the unknowns' layout and the pivoting rules are those of the Python route
   (mechsym/contact/lcp.py, hard_problem.py, hard_forces.py, hard_impulse.py, hard_modes.py): the tableau
   [I, -M, -e | q], the covering vector of ones, the lexicographic ratio test with z0 leaving as soon as it is tied, the polishing solve of the basic
   unknowns and the complementarity check relative to the scales of z and w. Where the Python route would
   choose among several solutions (a minimum-norm step on a singular or non-unique support), these
   functions return MC_AMBIGUOUS and the caller solves that state by the Python route. Compiled through
   mechsym.codegen.c_backend's cache (mechsym/contact/c_contact.py); states are sample-major. By stage: the
   LCP (ms_hard_lcp.h), a state's contact terms and the LCP of a set of contacts (ms_hard_terms.h), then
   here the forces, the impulses and the held states' right-hand side and guards. */
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

#include "ms_hard_lcp.h"
#include "ms_hard_terms.h"

/* What a call over ns states of the forces or the impulses lays out and holds: in the caller's work space a
   state's contact terms (buf, qn, L, C, Jc, bc: terms()), `own` doubles of the entry point's own, zero (nv
   zeros), then the LCP's arrays; in iwork n ints of its own (iown), then the LCP's; and SIGINT caught for a
   call over more than one state (stopped() polls it, call_end() puts the previous handler back). */
typedef struct {
  double *buf, *qn, *L, *C, *Jc, *bc, *own, *zero;
  int *iown;
  mc_lcp P;
  ms_handler old;
  int caught;
} mc_call;

static void call_start(const mc_model *m, int ns, double *work, int *iwork, int own, mc_call *c) {
  const int nv = m->nv, n = m->n;
  c->buf = work; c->qn = c->buf + MC_TERMS(m); c->L = c->qn + m->nq; c->C = c->L + nv * nv; c->Jc = c->C + nv;
  c->bc = c->Jc + 3 * n * nv; c->own = c->bc + 3 * n; c->zero = c->own + own;
  c->iown = iwork;
  lcp_layout(m, c->zero + nv, iwork + n, &c->P);
  memset(c->zero, 0, nv * sizeof(double));
  c->caught = ns > 1 ? ms_catch(&c->old) : 0;
}

static int stopped(const mc_call *c) { return c->caught && ms_stop; }

static void call_end(mc_call *c) { ms_release(c->caught, &c->old); }

/* contact_forces of mechsym.contact.hard_forces for ns states (q, v, tau sample-major): the LCP over the contacts
   with active[i], the kinetic force on those sliding faster than slip_tol, the warm start from guess (ns x
   (n + (k+1) n) flags, or NULL). Outputs per state: lam (n x 3), qdd (nv), accel (n), taccel (n x 2), state
   (n), z and w (their layout that of hard_problem.py's friction_problem, their size in info), info: status, warm,
   pivots, size; viol. Returns MS_OK, or MS_INTERRUPTED. */
int mc_forces(const mc_model *m, int ns, const double *Q, const double *V, const double *TAU, const double *mu,
              const int *active, double slip_tol, const int *guess, double check_tol, double *work, int *iwork,
              double *LAM, double *QDD, double *ACC, double *TACC, int *STATE, double *Z, double *W, int *INFO,
              double *VIOL) {
  const int nq = m->nq, nv = m->nv, n = m->n, k = m->k, mmax = n + (k + 1) * n;
  mc_call call;
  call_start(m, ns, work, iwork, 2 * nv + 8 * n, &call);
  double *buf = call.buf, *qn = call.qn, *L = call.L, *C = call.C, *Jc = call.Jc, *bc = call.bc, *zero = call.zero,
         *freeacc = call.own, *dv = freeacc + nv, *rate = dv + nv, *base = rate + 3 * n, *sdir = base + 3 * n;
  int *sliding = call.iown;
  int status = MS_OK;
  for (int s = 0; s < ns; s++) {
    if (stopped(&call)) { status = MS_INTERRUPTED; break; }
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
    assemble(m, L, Jc, mu, active, sliding, sdir, base, &call.P);
    info[3] = call.P.mm;
    int st = solve_problem(m, Jc, mu, guess ? guess + s * mmax : NULL, check_tol, &call.P, z, w, info + 1, &VIOL[s]);
    info[0] = st;
    if (st != MC_OK) continue;
    unpack(m, &call.P, mu, sliding, sdir, z, lam, dv);
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
  call_end(&call);
  return status;
}

/* impulse of mechsym.contact.hard_impulse for ns states: frictionless, the block system by its Schur complement
   W Lam = -(1 + e) zeta'- where W is regular and the solution does not pull, else the impact LCP; with
   friction the velocity-level LCP. Outputs per state: v_plus (nv), Lam (n x 3), the normal rates before and
   after (n each), state (n), info: status, block, pivots, size. Returns MS_OK, or MS_INTERRUPTED. */
int mc_impulse(const mc_model *m, int ns, const double *Q, const double *V, const double *mu, const double *e,
               const int *active, double check_tol, double *work, int *iwork, double *VP, double *LAM,
               double *BEFORE, double *AFTER, int *STATE, int *INFO) {
  const int nq = m->nq, nv = m->nv, n = m->n, mmax = n + (m->k + 1) * n;
  mc_call call;
  call_start(m, ns, work, iwork, nv + 3 * n + 2 * mmax, &call);
  double *buf = call.buf, *qn = call.qn, *L = call.L, *C = call.C, *Jc = call.Jc, *bc = call.bc, *zero = call.zero,
         *dv = call.own, *base = dv + nv, *z = base + 3 * n, *w = z + mmax;
  int *none = call.iown;
  int status = MS_OK;
  memset(none, 0, n * sizeof(int));
  for (int s = 0; s < ns; s++) {
    if (stopped(&call)) { status = MS_INTERRUPTED; break; }
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
    assemble(m, L, Jc, mu, active, none, zero, base, &call.P);
    info[3] = call.P.mm;
    int st = MC_OK, block = 0;
    if (nact && !frictional) {
      /* the block system: W Lam = -(1 + e) zeta'-, W = M (frictionless); kept where Lam does not pull */
      int na = call.P.na, *piv = call.P.iscratch;
      double *Wf = call.P.scratch, rc, big = 0.0;
      memcpy(Wf, call.P.M, na * na * sizeof(double));
      for (int j = 0; j < na; j++) z[j] = -call.P.qv[j];
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
      st = solve_problem(m, Jc, mu, NULL, check_tol, &call.P, z, w, info + 1, &viol);
      info[1] = 0;
    }
    info[0] = st;
    if (st != MC_OK) continue;
    info[1] = block;
    unpack(m, &call.P, mu, none, zero, z, lam, dv);
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
  call_end(&call);
  return status;
}

/* ------------------------------------------------------------------ the held states: right-hand side and guards */

/* The right-hand side of mechsym.contact.hard_modes with every contact's state held (0 none, 1 stick, 2 slip),
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
