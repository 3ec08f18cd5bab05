"""mechsym.optimize.staged_dp against exhaustive enumeration of every admissible path."""
import itertools

import numpy as np
import pytest

from mechsym.optimize import staged_dp


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
