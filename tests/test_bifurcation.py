"""The N-four-bar chain (IFToMM benchmark A02): every half turn all bars align, where the parallelogram
branch crosses the others (a bifurcation). The C forward run bridges each pass with the branch's polynomial
and must agree with the motion by quadrature (tests/oracles/parallelogram_chain.py: the energy integral of
the one reduced equation) to a tolerance that scales with rtol, with no energy jump at the passes."""
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import agree
from mechanisms.fourbar_chain import build
from mechsym.codegen import c_backend
from mechsym.system import derive

sys.path.insert(0, str(Path(__file__).parent))
from oracles.parallelogram_chain import ChainMotion  # noqa: E402

pytestmark = pytest.mark.skipif(c_backend.compiler() is None, reason="no C compiler")

T_END = 20.0  # the benchmark's run: every crank vertical, B0 along +x at 1 m/s
THETA0, OMEGA0 = np.pi / 2, -1.0


@pytest.fixture(scope="module")
def chains():
    return {}


def _chain(chains, n):
    if n not in chains:
        chains[n] = derive(build(n), backend="c")
    return chains[n]


@pytest.mark.parametrize("n,rtol", [(2, 1e-12), (2, 1e-8), (40, 1e-10)])
def test_the_chain_follows_the_quadrature_through_every_aligned_position(chains, n, rtol):
    """About 20 aligned passes in 20 s: the run ends (it stopped at t = 14.3 with N = 2, rtol 1e-12, and
    never reached the second pass with N = 40, rtol 1e-10), theta agrees with the quadrature to 100 rtol,
    and the energy changes across no pass by more than 10 rtol of itself (passes jumped by up to 2e-6)."""
    s = _chain(chains, n)
    run = s.forward(0.0, THETA0, OMEGA0, T_END, dt=0.002, rtol=rtol)
    motion = ChainMotion(n, THETA0, OMEGA0)
    t, theta, omega = run["t"], run["theta"], run["omega"]
    assert t[-1] == T_END and theta[-1] < -19 * np.pi  # about ten turns
    coarse = slice(None, None, 50)
    assert agree(theta[coarse], motion.theta(t[coarse]), 100 * rtol)
    energy = motion.energy(theta, omega)
    phase = np.mod(theta, np.pi)
    aligned = (phase < 0.15) | (phase > np.pi - 0.15)
    edges = np.flatnonzero(np.diff(aligned.astype(int)))
    passes = [(a + 1, b + 1) for a, b in zip(edges[::2], edges[1::2])] if aligned[0] == 0 else []
    assert len(passes) >= 19
    worst = max(abs(energy[b] - energy[a]) for a, b in passes)
    assert worst <= 10 * rtol * energy[0]
