"""Where wheels stand on a track (mechsym.planar.track): the position problem of a vehicle on two wheels and
a wheel's rotation as it rolls.

`rear_contact` places a second wheel on the track behind a first one at a given
distance between the wheel centres (a rigid vehicle on two wheels): for each front contact x_f, the rear
contact x_r < x_f nearest to x_f with |W(x_r) - W(x_f)| = R, W the wheel-centre (offset) curve. It is
vectorised over front contacts and distances: a scan of |W(x) - W_f| behind each x_f (shared by every R)
brackets the first crossing, then a safeguarded Newton iteration (bisection when a step leaves the
bracket) converges on all samples at once with the exact derivative W'(x) = (1 - r kappa)(1, f').
`wheel_rotation` gives the angle a wheel turns through rolling without slip along the track.
"""
from __future__ import annotations

import math

import numpy as np

from mechsym.core.errors import InputError


def rear_contact(track, r, x_front, distance, scan_step=0.01, tol=1e-13, max_iter=60, guess=None):
    """Rear contacts x_r (shape (M, P)) for front contacts x_front (M,) and centre distances `distance`:
    (P,) for every front contact, or (M, P) per front contact (e.g. (M, 1): one distance per sample).

    x_r < x_f is the root nearest to x_f of |W(x_r) - W(x_f)| = R, W the wheel-centre curve of radius r:
    the first crossing of the distance R going back from x_f (found on a scan of spacing `scan_step`,
    shared by every R), then polished by a bracketed Newton iteration on all samples at once. The track's
    concave curvature must stay below 1/r (Track.check_curvature), which makes W's x coordinate increase
    with x, so the crossing lies within x_f - (R + 2r) and a placement always exists on an unbounded
    track; on a bounded one (a CSV track) a rear wheel that falls off the start raises InputError.

    `guess` (broadcastable to (M, P)): known nearby solutions, e.g. the previous step of a continuation.
    Where [guess - scan_step, guess + scan_step] brackets a crossing the scan is skipped and Newton starts
    from the guess (the root continued from the guess); elsewhere the scan decides."""
    x_front = np.atleast_1d(np.asarray(x_front, float))
    distance = np.asarray(distance, float)
    if distance.ndim < 2:
        distance = np.atleast_1d(distance)[None, :]
    distance = np.broadcast_to(distance, (len(x_front), distance.shape[1]))
    if not np.all(np.isfinite(distance)) or np.any(distance <= 0):
        raise InputError(f"wheel-centre distance must be positive and finite, got {distance[~(distance > 0)][:1]}")
    shape = distance.shape
    wfx, wfy, *_ = track.offset(x_front, r)
    fx = np.repeat(wfx, shape[1])
    fy = np.repeat(wfy, shape[1])
    R2 = np.ascontiguousarray(distance).ravel() ** 2
    lo_domain = track.domain[0]

    def h(xv, sel):
        wx, wy, dwx, dwy, _ = track.offset(xv, r)
        ex, ey = wx - fx[sel], wy - fy[sel]
        return ex * ex + ey * ey - R2[sel], 2 * (ex * dwx + ey * dwy)

    size = R2.size
    x = np.empty(size)
    x_lo, x_hi = np.empty(size), np.empty(size)
    need = np.ones(size, bool)
    if guess is not None:
        g = np.broadcast_to(np.asarray(guess, float), shape).ravel()
        xf = np.repeat(x_front, shape[1])
        ok = np.isfinite(g) & (g < xf) & (g - scan_step >= lo_domain)
        sel = np.flatnonzero(ok)
        a, b = g[sel] - scan_step, np.minimum(g[sel] + scan_step, xf[sel])
        ha, _ = h(a, sel)
        hb, _ = h(b, sel)
        good = (ha >= 0) & (hb < 0)
        sel = sel[good]
        x[sel], x_lo[sel], x_hi[sel] = g[sel], a[good], b[good]
        need[sel] = False
    rows_needed = np.flatnonzero(need.reshape(shape).any(axis=1))
    if rows_needed.size:
        lo_, hi_, start = _scan(track, r, x_front[rows_needed], wfx[rows_needed], wfy[rows_needed],
                                distance[rows_needed], scan_step)
        flat = (rows_needed[:, None] * shape[1] + np.arange(shape[1])[None, :]).ravel()
        take = need[flat]
        flat = flat[take]
        x[flat], x_lo[flat], x_hi[flat] = start.ravel()[take], lo_.ravel()[take], hi_.ravel()[take]
    # safeguarded Newton on h(x) = |W(x) - W_f|^2 - R^2, with h(x_lo) >= 0 > h(x_hi)
    scale = tol * max(1.0, float(np.max(np.abs(x_front))))
    quad = max(scale, 1e-3 * math.sqrt(scale))
    ia = np.arange(size)
    for _ in range(max_iter):
        if ia.size == 0:
            break
        xa = x[ia]
        hv, dh = h(xa, ia)
        lo = np.where(hv >= 0, xa, x_lo[ia])
        hi = np.where(hv < 0, xa, x_hi[ia])
        with np.errstate(all="ignore"):
            new = xa - hv / dh
        bad = ~((new >= lo) & (new <= hi)) & (hv != 0)
        new[hv == 0] = xa[hv == 0]
        new[bad] = 0.5 * (lo[bad] + hi[bad])
        x[ia], x_lo[ia], x_hi[ia] = new, lo, hi
        # converged when the step is below the tolerance, or a Newton step so small that (quadratic
        # convergence) the next one would be: |step| <= 1e-3 sqrt(tol)
        step = np.abs(new - xa)
        done = (step <= scale) | ((step <= quad) & ~bad) | (hi - lo <= scale)
        ia = ia[~done]
    if ia.size:
        raise InputError(f"track '{track.name}': the rear-wheel placement did not converge at the front contact "
                         f"x = {x_front[ia[0] // shape[1]]:.6g}")
    return x.reshape(shape)


def _scan(track, r, x_front, wfx, wfy, distance, scan_step):
    """Brackets (x_lo, x_hi) of the first crossing of |W(x) - W_f| = R behind each x_f, and a regula-falsi
    start inside; distance (M, P). One scan per front contact serves every distance: x_f itself, then the
    nodes below it of one grid of spacing `scan_step` shared by all front contacts (W evaluated once per node)."""
    reach = float(distance.max()) + 2 * r  # W_x(x_f) - W_x(x) >= R somewhere before x_f - reach
    k = int(math.ceil(reach / scan_step)) + 1
    lo_domain = track.domain[0]
    top = np.floor(x_front / scan_step).astype(np.int64)  # the node at or below each x_f
    first = int(top.min()) - k + 1
    nodes = scan_step * np.arange(first, int(top.max()) + 1)
    on_track = nodes >= lo_domain
    gx, gy, *_ = track.offset(np.where(on_track, nodes, lo_domain), r)
    m = len(x_front)
    j = (top - first)[:, None] - np.arange(k)[None, :]  # (M, K) node indices, going back from x_f
    xs = np.empty((m, k + 1))
    xs[:, 0], xs[:, 1:] = x_front, nodes[j]
    d = np.empty((m, k + 1))
    d[:, 0] = 0.0
    # off the track (before its start) never a crossing
    d[:, 1:] = np.where(on_track[j], np.hypot(gx[j] - wfx[:, None], gy[j] - wfy[:, None]), -np.inf)
    dmax = np.maximum.accumulate(d, axis=1)  # finite: d[:, 0] = 0
    # first index where d >= R, for every (row, R): one searchsorted on row-offset keys
    big = 2.0 * (float(np.max(dmax)) + float(distance.max()) + 1.0)
    offsets = big * np.arange(m)[:, None]
    keys = (dmax + offsets).ravel()
    idx = np.searchsorted(keys, (distance + offsets).ravel(), side="left").reshape(distance.shape)
    idx -= (k + 1) * np.arange(m)[:, None]
    missing = idx > k
    if missing.any():
        i, p = np.argwhere(missing)[0]
        raise InputError(
            f"track '{track.name}': no placement for the rear wheel behind the front contact x = {x_front[i]:.6g} "
            f"(wheel-centre distance {distance[i, p]:.6g} m): the track starts at x = {lo_domain:g}")
    rows = np.arange(m)[:, None]
    x_hi, x_lo = xs[rows, idx - 1], xs[rows, idx]  # within R, at or beyond R
    d_hi, d_lo = d[rows, idx - 1], d[rows, idx]
    with np.errstate(all="ignore"):
        start = x_hi + (x_lo - x_hi) * (distance - d_hi) / np.where(d_lo > d_hi, d_lo - d_hi, 1.0)
    return x_lo, x_hi, start


def wheel_rotation(track, r, x, order=8):
    """Absolute rotation (counter-clockwise, rad) of a wheel rolling without slip through contacts x (in
    order along a path), relative to its angle at x[0]: theta = beta - s/r (Track module docstring)."""
    x = np.asarray(x, float).ravel()
    s = track.arc_length(x, order)
    beta = track.slope(x)
    return beta - beta[0] - s / r
