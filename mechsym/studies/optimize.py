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


def hat_basis(K, every):
    """(K, n) piecewise-linear interpolation from knots at every `every`-th stage (and the last), and the knots."""
    knots = np.unique(np.concatenate([np.arange(0, K, every), [K - 1]]))
    basis = np.zeros((K, len(knots)))
    for a, (k0, k1) in enumerate(zip(knots[:-1], knots[1:])):
        t = (np.arange(k0, k1 + 1) - k0) / (k1 - k0)
        basis[k0:k1 + 1, a] += 1 - t
        basis[k0:k1 + 1, a + 1] += t
    basis[knots, :] = np.eye(len(knots))
    return basis, knots


def project_rate(u, lower, upper, rate):
    """The path u (K, d) within the bounds and the rate limit |u[k+1] - u[k]| <= rate, taken in stage
    order (removes rounding-level excess after an optimiser)."""
    out = np.clip(np.asarray(u, float), lower, upper)
    for k in range(1, len(out)):
        out[k] = np.minimum(np.maximum(np.maximum(out[k], out[k - 1] - rate), lower), np.minimum(out[k - 1] + rate, upper))
    return out


def refine_stages(u0, evaluate, lower, upper, rate, start_value, accept, objective=None, minimax=(),
                  constraints=(), every=8, rounds=3, maxiter=40):
    """SLSQP refinement of a staged path u0 (K stages x d decisions, e.g. a DP path) in which every per-stage
    quantity depends only on that stage's own decisions.

    The path becomes u = u0 + B z, B the piecewise-linear interpolation from knots every `every` stages
    (z = 0 is u0). `evaluate(u, derivatives)` returns (values, grads): name -> (K,) array, and (when asked,
    else None) name -> (K, d) exact derivatives by the stage's own decisions; the chain rule through B gives
    the gradient and the constraint Jacobian. Criterion: `objective(values, grads)` -> (value, (K, d)
    gradient, None without grads), a function of the whole path; or, with `minimax` (names of values),
    the largest |values[name]| over the stages (an epigraph variable t >= +-values at every stage).
    Constraints at every stage: values[name] >= 0 for each of `constraints` (scaled by the caller to order
    one), lower <= u <= upper and |u[k+1] - u[k]| <= rate ((d,) each). Constraints whose margin is large at
    u0 are left out and added back (active-set rounds, at most `rounds`) if the result violates them.

    The result, projected onto the bounds and the rate limit, is returned only if `accept(u)` (the caller's
    exact check of every constraint, returning the criterion value or None) gives a value below
    `start_value`: (u, info) or None."""
    from scipy.optimize import minimize

    u0 = np.asarray(u0, float)
    K, d = u0.shape
    lower, upper, rate = (np.broadcast_to(np.asarray(v, float), (d,)) for v in (lower, upper, rate))
    minimax = tuple(minimax)
    if (objective is None) == (not minimax):
        raise ValueError("give either an objective or minimax terms")
    scale = max(abs(start_value), 1e-12)
    B, _ = hat_basis(K, every)
    nk = B.shape[1]
    n_var = d * nk + (1 if minimax else 0)
    cache = {}

    def path(z):
        return u0 + (B @ z[:d * nk].reshape(d, nk).T)

    def at(z, derivatives=True):
        key = z.tobytes()
        if cache.get("key") != key:
            cache.clear()
            cache["key"] = key
            cache["values"], cache["grads"] = evaluate(path(z), False)
        if derivatives and cache["grads"] is None:
            cache["values"], cache["grads"] = evaluate(path(z), True)
        return cache["values"], (cache["grads"] if derivatives else None)

    def through_basis(g):
        """(K, d) derivatives by the stage decisions -> derivatives by z (n_var,)."""
        out = np.zeros(n_var)
        out[:d * nk] = (B.T @ g).T.ravel()
        return out

    def total(z, need_grad=True):
        if minimax:
            grad = np.zeros(n_var)
            grad[-1] = 1.0 / scale
            return z[-1] / scale, grad
        values, grads = at(z, need_grad)
        value, g = objective(values, grads)
        return value / scale, (through_basis(g) / scale if need_grad else None)

    def rows(z, need_grad=True):
        """Every constraint per stage as (value (K,), kind, derivative): kind 'stage' with (K, d) derivatives
        by the stage's decisions, 'rate' with (i, sign) for sign (u[k+1, i] - u[k, i]) <= rate[i]."""
        values, grads = at(z, need_grad)
        zero = np.zeros((K, d))
        out = [(values[name], "stage", grads[name] if need_grad else zero) for name in constraints]
        u = path(z)
        for i in range(d):
            step = np.diff(u[:, i])
            for sgn in (1, -1):  # written on stage k (linear)
                out.append((np.concatenate([(rate[i] - sgn * step) / rate[i], [1.0]]), "rate", (i, sgn)))
            unit = np.zeros((K, d))
            unit[:, i] = 1.0 / rate[i]
            out.append(((u[:, i] - lower[i]) / rate[i], "stage", unit))
            out.append(((upper[i] - u[:, i]) / rate[i], "stage", -unit))
        for name in minimax:
            for sgn in (1, -1):
                g = grads[name] if need_grad else zero
                out.append(((z[-1] - sgn * values[name]) / scale, "bound", -sgn * g / scale))
        return out

    def assemble(z, active, need_jac=True):
        values, jac = [], []
        for (val, kind, der), act in zip(rows(z, need_jac), active):
            idx = np.flatnonzero(act)
            if not idx.size:
                continue
            values.append(val[idx])
            J = np.zeros((len(idx), n_var))
            if kind == "rate":
                i, sgn = der
                J[:, i * nk:(i + 1) * nk] = -sgn * (B[idx + 1] - B[idx]) / rate[i]
            else:
                for i in range(d):
                    J[:, i * nk:(i + 1) * nk] = der[idx, i, None] * B[idx]
                if kind == "bound":
                    J[:, -1] = 1 / scale
            jac.append(J)
        return np.concatenate(values), np.vstack(jac)

    z = np.zeros(n_var)
    if minimax:
        z[-1] = start_value
    # start with the constraints that are near-active at u0 (every epigraph row)
    active = [np.asarray(val) < (0.2 if kind == "rate" else 0.05) for val, kind, _ in rows(z, False)]
    for act, (_, kind, _) in zip(active, rows(z, False)):
        if kind == "bound":
            act[:] = True
    bounds = [(lo - hi, hi - lo) for lo, hi in zip(lower, upper) for _ in range(nk)] + ([(0, None)] if minimax else [])
    for _ in range(rounds):
        act_now = [a.copy() for a in active]
        cons = [{"type": "ineq", "fun": lambda zz: assemble(zz, act_now, False)[0],
                 "jac": lambda zz: assemble(zz, act_now)[1]}] if any(a.any() for a in act_now) else []
        try:
            with np.errstate(all="ignore"):
                res = minimize(lambda zz: total(zz, False)[0], z, jac=lambda zz: total(zz)[1], method="SLSQP",
                               bounds=bounds, constraints=cons, options={"maxiter": maxiter, "ftol": 1e-10})
        except (ValueError, np.linalg.LinAlgError):
            return None
        violated = [np.asarray(val) < -1e-9 for val, _, _ in rows(res.x, False)]
        if any((v & ~a).any() for v, a in zip(violated, active)):  # a left-out constraint is violated: add it
            active = [a | v for a, v in zip(active, violated)]
            continue
        u = project_rate(path(res.x), lower, upper, rate)
        value = accept(u)
        if value is not None and np.isfinite(value) and value < start_value:
            return u, {"iterations": int(res.nit), "message": str(res.message), "value": float(value), "knots": nk}
        return None
    return None
