"""Staged optimisation: dynamic programming over a per-stage decision on a grid of states.

A decision taken at each of K stages (a UGV's leg angles at each point of a track, a gear ratio per
segment, ...) where each state may follow only some states of the stage before (a rate limit) is a shortest
path through a layered graph. `staged_dp` finds its global optimum on the grid, vectorised over states,
for an additive criterion (a sum of transition costs) or a minimax one (the worst stage cost).
"""
from __future__ import annotations

import numpy as np


def staged_dp(kind, n_stages, stage_cost, trans_cost, allowed, nbr):
    """Optimal path through states s at stages k = 0 .. n_stages-1; returns (value, path).

    nbr[s', m]: the m-th admissible predecessor of state s' (-1: none); allowed[k, s]: admissible states.
    kind 'sum': minimise the sum over k of trans_cost(k, nbr) -> (S, M) array, the cost of moving from
    state nbr[s', m] at stage k to s' at stage k+1. kind 'max': minimise the maximum of stage_cost[k, s]
    (an (n_stages, S) array). The value is inf when no admissible path exists."""
    if kind not in ("sum", "max"):
        raise ValueError(f"kind must be 'sum' or 'max', not {kind!r}")
    S = nbr.shape[0]
    valid = nbr >= 0
    safe = np.where(valid, nbr, 0)
    V = np.where(allowed[0], stage_cost[0] if kind == "max" else 0.0, np.inf)
    back = np.zeros((n_stages, S), dtype=np.int64)
    rows = np.arange(S)
    for k in range(n_stages - 1):
        prev = np.where(valid, V[safe], np.inf)  # (S, M)
        if kind == "max":
            j = np.argmin(prev, axis=1)
            V = np.where(allowed[k + 1], np.maximum(prev[rows, j], stage_cost[k + 1]), np.inf)
        else:
            total = prev + np.where(valid, trans_cost(k, safe), np.inf)
            j = np.argmin(total, axis=1)
            V = np.where(allowed[k + 1], total[rows, j], np.inf)
        back[k + 1] = safe[rows, j]
    end = int(np.argmin(V))
    path = np.empty(n_stages, dtype=np.int64)
    path[-1] = end
    for k in range(n_stages - 1, 0, -1):
        path[k - 1] = back[k, path[k]]
    return float(V[end]), path
