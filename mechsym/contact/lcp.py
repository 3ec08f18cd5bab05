"""Linear complementarity problems: find z >= 0 with w = M z + q >= 0 and z^T w = 0.

`lemke(M, q)` is Lemke's complementary pivoting method (covering vector of ones, lexicographic ratio test
so that degenerate pivots cannot cycle) on a dense tableau. It is exact up to round-off, solves every LCP
with a P-matrix or a positive semi-definite M that has a solution (the frictionless contact LCP), and on
the non-symmetric friction LCP it either finds a solution or ends on a secondary ray, which is reported
(never a silent wrong answer). The contact problems here have at most a few dozen unknowns, where a dense
pivoting method costs microseconds; a library QP solver would solve only the symmetric (frictionless)
case, to an iteration tolerance, and not report the ray.

`solve_lcp` adds what a simulation needs: a warm start (the equality system of a guessed set of positive
unknowns, accepted only if it satisfies the LCP), the minimum-norm solution among those with the same w
(where M is singular, as for a body resting on more contacts than it has constrained directions), and a
check of the result with tolerances scaled by the size of z and of q.
"""
from __future__ import annotations

import numpy as np

from mechsym.codegen.constants import FLOOR, LEMKE_PIVOT_TOL, LEMKE_PIVOTS, LEMKE_TIE
from mechsym.core.errors import InputError

__all__ = ["LCPError", "lemke", "solve_lcp", "lcp_residual"]


class LCPError(InputError):
    """The LCP has no solution that Lemke's method can reach (ray termination), or a result fails its check."""


def lemke(M, q, max_pivots=None, tol=LEMKE_PIVOT_TOL):
    """(z, pivots) solving LCP(M, q) by Lemke's method; raises LCPError on ray termination."""
    M = np.asarray(M, float)
    q = np.asarray(q, float)
    n = len(q)
    if n == 0 or np.all(q >= 0):
        return np.zeros(n), 0
    max_pivots = LEMKE_PIVOTS * (n + 1) if max_pivots is None else max_pivots
    # tableau rows: B^-1 [I, -M, -e | q]; variables 0..n-1 are w, n..2n-1 are z, 2n is z0
    tab = np.hstack([np.eye(n), -M, -np.ones((n, 1)), q[:, None]])
    basis = np.arange(n)
    scale = max(1.0, float(np.max(np.abs(tab))))
    row = int(np.argmin(q))
    entering = 2 * n
    pivots = 0
    while True:
        _pivot(tab, row, entering)
        leaving = basis[row]
        basis[row] = entering
        pivots += 1
        if leaving == 2 * n:  # z0 left the basis: a complementary solution
            break
        if pivots > max_pivots:
            raise LCPError(f"Lemke's method did not terminate within {max_pivots} pivots")
        entering = leaving + n if leaving < n else leaving - n  # the complement of the leaving variable
        col = tab[:, entering]
        cand = np.flatnonzero(col > tol * scale)
        if len(cand) == 0:
            raise LCPError("Lemke's method ended on a ray (the LCP has no solution it can reach)")
        row = _lex_min_ratio(tab, col, cand, basis, n)
    x = np.zeros(2 * n + 1)
    x[basis] = tab[:, -1]
    z = np.maximum(x[n:2 * n], 0.0)
    # polish: the basic z solve M_SS z_S = -q_S directly (the tableau accumulates round-off over pivots)
    S = np.zeros(n, bool)
    S[basis[(basis >= n) & (basis < 2 * n)] - n] = True
    if S.any():
        polished = np.zeros(n)
        polished[S] = np.linalg.lstsq(M[np.ix_(S, S)], -q[S], rcond=1e-12)[0]
        if lcp_residual(M, q, polished)[1] < lcp_residual(M, q, z)[1]:
            z = np.maximum(polished, 0.0)
    return z, pivots


def _pivot(tab, row, col):
    tab[row] /= tab[row, col]
    other = np.arange(len(tab)) != row
    tab[other] -= np.outer(tab[other, col], tab[row])


def _lex_min_ratio(tab, col, cand, basis, n):
    """The leaving row: the minimum ratio, ties broken lexicographically on B^-1 (no cycling); z0 leaves
    whenever it is among the tied rows (so the method ends as soon as it can)."""
    ratios = tab[cand, -1] / col[cand]
    best = ratios.min()
    tied = cand[ratios <= best + LEMKE_TIE * max(1.0, abs(best))]
    if len(tied) == 1:
        return int(tied[0])
    z0 = tied[basis[tied] == 2 * n]
    if len(z0):
        return int(z0[0])
    keys = tab[tied, :n] / col[tied, None]
    order = np.lexsort(keys.T[::-1])
    return int(tied[order[0]])


def lcp_residual(M, q, z):
    """(w, violation): w = M z + q and the largest violation of z >= 0, w >= 0, min(z, w) = 0, each
    relative to its scale (z's by max|z|, w's by max|q| + max|M| max|z|)."""
    w = M @ z + q
    zs = max(float(np.max(np.abs(z), initial=0.0)), FLOOR)
    ws = max(float(np.max(np.abs(q), initial=0.0)) + float(np.max(np.abs(M), initial=0.0)) * zs, FLOOR)
    zr, wr = z / zs, w / ws
    viol = max(float(np.max(-zr, initial=0.0)), float(np.max(-wr, initial=0.0)),
               float(np.max(np.abs(np.minimum(zr, wr)), initial=0.0)))
    return w, viol


def solve_lcp(M, q, guess=None, min_norm=True, check_tol=1e-9, what="LCP", keep=None):
    """(z, w, info) of LCP(M, q). guess: a boolean mask of unknowns expected positive (the previous active
    set): its equality system M_SS z_S = -q_S is tried first and kept if it satisfies the LCP (info['warm']
    True); otherwise Lemke's method. min_norm: replace z by the minimum-norm z' with the same support
    candidates (w_i = 0) and A z' = A z (A = keep, default M: then w is unchanged), when z' satisfies the
    LCP. For a symmetric positive semi-definite M every solution has the same M z, so this is the
    minimum-norm solution of the LCP.
    Raises LCPError naming `what` on ray termination or when the result fails the check."""
    M = np.asarray(M, float)
    q = np.asarray(q, float)
    n = len(q)
    info = {"warm": False, "pivots": 0}
    z = None
    if guess is not None and n:
        S = np.asarray(guess, bool)
        trial = np.zeros(n)
        if S.any():
            try:
                trial[S] = np.linalg.solve(M[np.ix_(S, S)], -q[S])
            except np.linalg.LinAlgError:
                trial = None
        if trial is not None and lcp_residual(M, q, trial)[1] <= check_tol:
            z, info["warm"] = np.maximum(trial, 0.0), True
    if z is None:
        try:
            z, info["pivots"] = lemke(M, q)
        except LCPError as exc:
            raise LCPError(f"{what}: {exc}") from None
    w, viol = lcp_residual(M, q, z)
    if min_norm and n:
        S = w <= check_tol * (float(np.max(np.abs(q), initial=0.0)) + float(np.max(np.abs(M), initial=0.0))
                              * float(np.max(np.abs(z), initial=0.0)) + FLOOR)
        unique = np.array_equal(S, z > 0) and np.linalg.cond(M[np.ix_(S, S)]) < 1e10 if S.any() else True
        if S.any() and not unique:  # another support, or a singular block: other solutions may exist
            zs = np.zeros(n)
            A = M if keep is None else np.asarray(keep, float)
            zs[S] = np.linalg.lstsq(A[:, S], A @ z, rcond=1e-10)[0]
            w2, viol2 = lcp_residual(M, q, zs)
            if viol2 <= check_tol and np.max(np.abs(w2 - w)) <= check_tol * (np.max(np.abs(w)) + np.max(np.abs(q)) + FLOOR):
                z, w, viol = np.maximum(zs, 0.0), w2, viol2
    if viol > check_tol:
        raise LCPError(f"{what}: the solution fails its complementarity check (relative violation {viol:.2e})")
    info["violation"] = viol
    return z, w, info
