"""mechsym.studies.optimize: staged_dp against exhaustive enumeration of every admissible path; refine_stages on problems with known optima."""
import itertools

import numpy as np
import pytest

from mechsym.studies.optimize import refine_stages, staged_dp


def _problem(seed, S=5, K=5, reach=1):
    """States 0..S-1 on a line; a state follows those within `reach` of it; some states forbidden."""
    rng = np.random.default_rng(seed)
    moves = range(-reach, reach + 1)
    nbr = np.full((S, len(moves)), -1)
    for s in range(S):
        for m, d in enumerate(moves):
            if 0 <= s - d < S:
                nbr[s, m] = s - d
    allowed = rng.uniform(size=(K, S)) > 0.2
    stage = rng.uniform(size=(K, S))
    trans = rng.uniform(size=(K, S, S))  # trans[k, s_from, s_to]
    return nbr, allowed, stage, trans


def _brute(kind, nbr, allowed, stage, trans):
    K, S = allowed.shape
    best, best_path = np.inf, None
    for path in itertools.product(range(S), repeat=K):
        if not all(allowed[k, s] for k, s in enumerate(path)):
            continue
        if not all(path[k] in nbr[path[k + 1]] for k in range(K - 1)):
            continue
        if kind == "max":
            value = max(stage[k, s] for k, s in enumerate(path))
        else:
            value = sum(trans[k, path[k], path[k + 1]] for k in range(K - 1))
        if value < best:
            best, best_path = value, path
    return best, best_path


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("kind", ["sum", "max"])
def test_staged_dp_finds_the_enumerated_optimum(kind, seed):
    nbr, allowed, stage, trans = _problem(seed)
    value, path = staged_dp(kind, len(allowed), stage, lambda k, prev: trans[k, prev, np.arange(len(nbr))[:, None]],
                            allowed, nbr)
    expected, _ = _brute(kind, nbr, allowed, stage, trans)
    assert value == pytest.approx(expected, rel=1e-14)
    if np.isfinite(value):  # the returned path is admissible and achieves the value
        assert all(allowed[k, s] for k, s in enumerate(path))
        assert all(path[k] in nbr[path[k + 1]] for k in range(len(path) - 1))
        got = (max(stage[k, s] for k, s in enumerate(path)) if kind == "max"
               else sum(trans[k, path[k], path[k + 1]] for k in range(len(path) - 1)))
        assert got == pytest.approx(value, rel=1e-14)


def test_no_admissible_path_has_infinite_value():
    nbr, allowed, stage, trans = _problem(0)
    allowed[2] = False
    value, _ = staged_dp("max", len(allowed), stage, None, allowed, nbr)
    assert value == np.inf


def _sum_of_squares(target):
    """Objective sum_k |u_k - target_k|^2 with its gradient by every stage's decisions."""
    def objective(values, grads):
        diff = values["u"] - target
        return float(np.sum(diff ** 2)), 2 * diff

    return objective


def _evaluate(extra=None):
    """Per-stage values: the decisions themselves (key 'u', (K, d)) and any extra named quantities."""
    def evaluate(u, derivatives):
        values, grads = {"u": u}, {}
        for name, (fun, grad) in (extra or {}).items():
            values[name] = fun(u)
            grads[name] = grad(u)
        return values, (grads if derivatives else None)

    return evaluate


def test_refine_stages_reaches_a_nonlinear_constraint():
    """Closest point to a = (2, 1) within the unit disc at every stage: u_k = a / |a| (the start, a line,
    and the optimum are in the span of the basis). The disc is far from active at the start, so it enters
    through an active-set round."""
    K = 25
    a = np.array([2.0, 1.0])
    k = np.arange(K)
    u0 = np.c_[0.2 - 0.5 * k / (K - 1), -0.3 + 0.5 * k / (K - 1)]  # a line: in the span of the hat basis
    disc = (lambda u: 1 - 1e-9 - np.sum(u * u, axis=1), lambda u: -2 * u)  # a safety margin below rounding
    objective = _sum_of_squares(a)

    def accept(u):
        return objective({"u": u}, None)[0] if np.all(1 - np.sum(u * u, axis=1) >= -1e-12) else None

    start = objective({"u": u0}, None)[0]
    out = refine_stages(u0, _evaluate({"disc": disc}), -1.5, 1.5, 0.5, start, accept, objective=objective,
                        constraints=("disc",), every=6)
    assert out is not None
    u, info = out
    # SLSQP stops at ftol 1e-10 on the (scaled) criterion, which is flat to second order at the optimum:
    # the value to about that, the decisions to about its square root
    assert info["value"] == pytest.approx((np.linalg.norm(a) - 1) ** 2 * K, rel=1e-8)
    assert np.max(np.abs(u - a / np.linalg.norm(a))) < 1e-5


def test_refine_stages_follows_the_rate_limit():
    """sum (u_k - t_k)^2 for a unit step t at the middle under |u_{k+1} - u_k| <= s: the optimum is the ramp of
    slope s centred on the step, clipped to 0 and 1 (its KKT multipliers are the running sums of
    2 (u_k - t_k), non-negative and back to zero after the ramp)."""
    K, s = 20, 0.15
    k = np.arange(K)
    target = (k >= K // 2).astype(float)[:, None]
    ramp = np.clip(0.5 + s * (k - K // 2 + 0.5), 0, 1)[:, None]
    u0 = np.clip(0.5 + s * (k - K // 2 - 2.5), 0, 1)[:, None]  # the same ramp, three stages late
    objective = _sum_of_squares(target)

    def accept(u):
        return objective({"u": u}, None)[0] if np.all(np.abs(np.diff(u[:, 0])) <= s * (1 + 1e-12)) else None

    start = objective({"u": u0}, None)[0]
    u, _ = refine_stages(u0, _evaluate(), -1.0, 2.0, s, start, accept, objective=objective, every=1, maxiter=200)
    assert np.max(np.abs(u - ramp)) < 1e-6


def test_refine_stages_minimax_stops_at_the_bounds():
    """max_k |u_k1 + u_k2 - 3| within 0 <= u <= 1: the optimum 1 at u = (1, 1), reached on the bounds."""
    K = 12
    u0 = np.full((K, 2), 0.4)
    h = (lambda u: u[:, 0] + u[:, 1] - 3, lambda u: np.ones_like(u))

    def accept(u):
        return float(np.max(np.abs(u.sum(axis=1) - 3))) if np.all((u >= 0) & (u <= 1)) else None

    u, info = refine_stages(u0, _evaluate({"h": h}), 0.0, 1.0, 0.3, 2.2, accept, minimax=("h",), every=4)
    assert info["value"] == pytest.approx(1.0, abs=1e-9)
    assert np.max(np.abs(u - 1)) < 1e-9


def test_refine_stages_keeps_nothing_worse():
    u0 = np.zeros((5, 1))
    objective = _sum_of_squares(np.zeros((5, 1)))
    assert refine_stages(u0, _evaluate(), -1, 1, 1, 0.0, lambda u: objective({"u": u}, None)[0],
                         objective=objective) is None
    with pytest.raises(ValueError, match="either an objective or minimax"):
        refine_stages(u0, _evaluate(), -1, 1, 1, 1.0, lambda u: 0.0)
