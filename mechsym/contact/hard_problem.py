"""What hard contact's forces and impulses share (mechsym.contact.hard's module docstring states the
problem): the mass matrix's factor, the Stewart-Trinkle LCP of a set of contacts with its minimum-norm
choice among equivalent solutions, the unknowns unpacked into forces, and the checks of a state."""
from __future__ import annotations

import math

import numpy as np
from scipy.linalg import cho_factor, cho_solve

from mechsym.contact.hard import ContactError
from mechsym.contact.lcp import LCPError, solve_lcp
from mechsym.core.errors import InputError


def factor(H):
    """The Cholesky factor of the mass matrix H, or an InputError where it is not positive definite."""
    try:
        return cho_factor(H)
    except np.linalg.LinAlgError:
        raise InputError("the mass matrix is not positive definite at this configuration") from None


def friction_problem(hc, Hf, Jc, act, mu, sliding, sdir, base_rate):
    """LCP (M, qv) and the map G (nv x m) from unknowns to generalised force/impulse.

    Jc: (nc, 3, nv) contact Jacobians; act: indices of the contacts in the problem; mu: per contact;
    sliding: per contact, True where a kinetic force -mu fn s applies (sdir: (nc, 2) unit directions in
    (t1, t2)); base_rate: (nc, 3) the normal/tangential rates at zero unknowns (d and b_t, or the
    restitution-shifted pre-impact rates). Unknown layout: fn (na), beta (k per frictional resting contact),
    gamma (one per frictional resting contact)."""
    k, D = hc.k, hc.D
    na = len(act)
    fr = [i for i in act if mu[i] > 0 and not sliding[i]]
    nf = len(fr)
    nv = Jc.shape[2]
    Jn = Jc[act, 0, :]                                        # na x nv
    Gn = Jn.T.copy()                                          # force of fn on the model
    for j, i in enumerate(act):
        if mu[i] > 0 and sliding[i]:
            Gn[:, j] -= mu[i] * hc.reach(sdir[i]) * (Jc[i, 1:, :].T @ sdir[i])
    Jd = np.zeros((k * nf, nv))
    for j, i in enumerate(fr):
        Jd[k * j:k * (j + 1)] = D.T @ Jc[i, 1:, :]
    G = np.hstack([Gn, Jd.T])                                 # nv x (na + k nf)
    HiG = cho_solve(Hf, G)
    rows = np.vstack([Jn, Jd])
    m = na + (k + 1) * nf
    M = np.zeros((m, m))
    M[:na + k * nf, :na + k * nf] = rows @ HiG
    qv = np.zeros(m)
    qv[:na] = base_rate[act, 0]
    for j, i in enumerate(fr):
        sl = slice(na + k * j, na + k * (j + 1))
        qv[sl] = D.T @ base_rate[i, 1:]
        M[sl, na + k * nf + j] = 1.0                          # + gamma
        g = na + k * nf + j
        M[g, act.index(i)] = mu[i]                            # mu fn - sum beta
        M[g, sl] = -1.0
    return M, qv, np.hstack([G, np.zeros((nv, nf))]), fr


def min_norm_forces(hc, Jc, M, qv, G, z, w, act, fr, tol=1e-9):
    """With friction: among the contact forces of the frictional contacts in contact that give the same
    generalised force, the one of minimum norm (a symmetric body on redundant contacts gets symmetric loads),
    written back as pyramid weights and kept only if it still satisfies the LCP. A resting contact (zero
    slip rate) varies its fn and ft freely; a slipping one (positive slip rate: its force on the pyramid's
    boundary, opposite to a slip velocity that the same generalised force leaves unchanged) keeps its ratio
    ft = c fn (c from its pyramid weights, or from the pyramid's edges of least slip rate where fn = 0), so it
    varies fn alone, weighted by |(1, c)| so that the norm is that of its force."""
    from scipy.optimize import nnls

    na, k, nf = len(act), hc.k, len(fr)
    gamma = z[na + k * nf:]
    scale = tol * (np.max(np.abs(qv), initial=0.0) + np.max(np.abs(M), initial=0.0) * np.max(np.abs(z), initial=0.0))
    touching = [j for j, i in enumerate(fr) if w[act.index(i)] <= scale]
    free = [j for j in touching if gamma[j] <= scale]
    slid = [j for j in touching if gamma[j] > scale]
    if len(free) + len(slid) < 2:
        return z, w
    cols, x, weight = [], [], []
    for j in free:
        i = fr[j]
        cols.append(Jc[i].T)
        x += [z[act.index(i)], *(hc.D @ z[na + k * j:na + k * (j + 1)])]
        weight += [1.0, 1.0, 1.0]
    ratio = {}
    for j in slid:
        i = fr[j]
        fn = z[act.index(i)]
        if fn > scale:
            ratio[j] = hc.D @ z[na + k * j:na + k * (j + 1)] / fn
        else:   # no force yet: the pyramid's edges of least slip rate (w_beta = 0) carry any it gets
            edges = w[na + k * j:na + k * (j + 1)] <= scale
            ratio[j] = M[na + k * nf + j, act.index(i)] * hc.D[:, edges].mean(axis=1)
        cols.append((Jc[i, 0] + ratio[j] @ Jc[i, 1:])[:, None])
        x.append(fn)
        weight.append(float(np.sqrt(1.0 + ratio[j] @ ratio[j])))
    A, x, weight = np.hstack(cols), np.array(x), np.array(weight)
    x2 = np.linalg.lstsq(A / weight, A @ x, rcond=1e-10)[0] / weight
    z2 = z.copy()
    for n_, j in enumerate(free):
        i, row = fr[j], x2[3 * n_:3 * n_ + 3]
        z2[act.index(i)] = row[0]
        z2[na + k * j:na + k * (j + 1)] = nnls(hc.D, row[1:])[0]
    for n_, j in enumerate(slid):
        i, fn = fr[j], x2[3 * len(free) + n_]
        z2[act.index(i)] = fn
        z2[na + k * j:na + k * (j + 1)] = nnls(hc.D, ratio[j] * fn)[0]
    from mechsym.contact.lcp import lcp_residual

    w2, viol = lcp_residual(M, qv, z2)
    if viol <= tol and np.allclose(G @ z2, G @ z, rtol=1e-9, atol=1e-12 * (1 + np.max(np.abs(G @ z)))):
        return z2, w2
    return z, w


def unpack(hc, z, act, fr, mu, sliding, sdir):
    """(nc, 3) forces (fn, ft1, ft2) from the LCP unknowns."""
    lam = np.zeros((hc.n, 3))
    na, k = len(act), hc.k
    for j, i in enumerate(act):
        lam[i, 0] = z[j]
        if mu[i] > 0 and sliding[i]:
            lam[i, 1:] = -mu[i] * hc.reach(sdir[i]) * z[j] * sdir[i]
    for j, i in enumerate(fr):
        lam[i, 1:] = hc.D @ z[na + k * j:na + k * (j + 1)]
    return lam


def check_state(model, q, v, tau):
    """One state: shapes and finite values, named."""
    if q.shape == (model.nq,) and v.shape == tau.shape == (model.nv,) and math.isfinite(q @ q + v @ v + tau @ tau):
        return
    for name, arr, size in (("q", q, model.nq), ("v", v, model.nv), ("tau", tau, model.nv)):
        if arr.shape != (size,):
            raise InputError(f"{name} must have {size} values, got shape {arr.shape}")
        if not np.all(np.isfinite(arr)):
            raise InputError(f"{name} must be finite, got {arr}")


def check_states(model, q, v, tau):
    """N states as rows: shapes and finite values, the first bad sample named."""
    n = len(q) if q.ndim == 2 else None
    for name, arr, size in (("q", q, model.nq), ("v", v, model.nv), ("tau", tau, model.nv)):
        if arr.ndim != 2 or arr.shape != (n, size):
            raise InputError(f"{name} must have shape ({n}, {size}) for {n} states, got {arr.shape}")
        if not np.isfinite(arr).all():
            raise InputError(f"{name} of sample {int(np.argwhere(~np.isfinite(arr))[0][0])} is not finite")


def sliding_directions(rate, slip_tol, hc):
    """Per contact: whether it slides (tangential speed above slip_tol) and its unit sliding direction."""
    speed = np.linalg.norm(rate[:, 1:], axis=1)
    sliding = speed > slip_tol
    sdir = np.where(sliding[:, None], rate[:, 1:] / np.where(sliding, speed, 1.0)[:, None], 0.0)
    return sliding, sdir


def solve(M, qv, G, guess, t, hc, act, what="contact LCP"):
    """solve_lcp with the minimum-norm choice among solutions giving the same generalised force G z."""
    where = f" at t = {t:.9g} s" if t is not None else ""
    names = ", ".join(hc.names[i] for i in act)
    try:
        return solve_lcp(M, qv, guess=guess, what=what, keep=G)
    except LCPError as exc:
        raise ContactError(f"{exc}{where} (contacts: {names})") from None
