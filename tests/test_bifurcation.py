"""The N-four-bar chain (IFToMM benchmark A02): every half turn all bars align, where the parallelogram
branch crosses the others (a bifurcation). The forward run (C, and numpy for N = 2) bridges each pass with
the branch's polynomial and must agree with the motion by quadrature (tests/oracles/parallelogram_chain.py:
the energy integral of the one reduced equation) to a tolerance that scales with rtol, with no energy jump at
the passes."""
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import agree
from mechanisms.fourbar_chain import build
from mechsym import derive
from mechsym.codegen import c_backend
from mechsym.core.errors import InputError

sys.path.insert(0, str(Path(__file__).parent))
from oracles.parallelogram_chain import ChainMotion  # noqa: E402

pytestmark = pytest.mark.skipif(c_backend.compiler() is None, reason="no C compiler")

T_END = 20.0  # the benchmark's run: every crank vertical, B0 along +x at 1 m/s
THETA0, OMEGA0 = np.pi / 2, -1.0


@pytest.fixture(scope="module")
def chains():
    return {}


def _chain(chains, n, backend="c"):
    if (n, backend) not in chains:
        chains[n, backend] = derive(build(n), backend=backend)
    return chains[n, backend]


@pytest.mark.parametrize("n,rtol,backend", [(2, 1e-12, "c"), (2, 1e-8, "c"), (40, 1e-10, "c"),
                                            (2, 1e-12, "numpy"), (2, 1e-8, "numpy")])
def test_the_chain_follows_the_quadrature_through_every_aligned_position(chains, n, rtol, backend):
    """About 20 aligned passes in 20 s: the run ends (C stopped at t = 14.3 with N = 2, rtol 1e-12, and
    never reached the second pass with N = 40, rtol 1e-10; numpy's scalar tracker collapsed its step at
    1e-12 and erred by 1.5e-4 at 1e-8), theta agrees with the quadrature to 100 rtol, and the energy
    changes across no pass by more than 10 rtol of itself (passes jumped by up to 2e-6)."""
    s = _chain(chains, n, backend)
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


def _parallelogram(n, theta):
    """The parallelogram branch in closed form: q, q', q'' per body (crank i: angle theta, centre at
    (i + cos/2, sin/2); coupler i: level, centre at (i - 1/2 + cos, sin)), in the declaration's body order."""
    c, s = np.cos(theta)[:, None], np.sin(theta)[:, None]
    one, zero = np.ones_like(c), np.zeros_like(c)
    q, d1, d2 = [], [], []
    for i in range(n + 1):
        q += [i + c / 2, s / 2, theta[:, None]]
        d1 += [-s / 2, c / 2, one]
        d2 += [-c / 2, -s / 2, zero]
    for i in range(1, n + 1):
        q += [i - 0.5 + c, s, zero]
        d1 += [-s, c, zero]
        d2 += [-c, -s, zero]
    return (np.hstack(q), np.hstack(d1), np.hstack(d2))


@pytest.mark.parametrize("backend", ["numpy", "c"])
def test_kinematics_at_the_aligned_position_is_the_branch_followed(backend):
    """Samples at and around the aligned positions (theta = 0, pi), the first exactly at one (the default
    start of `mechsym kinematics`, which was a SingularError): q, q' and q'' are the parallelogram's."""
    s = derive(build(2), backend=backend)
    order = [f"crank{i}" for i in range(3)] + [f"coupler{i}" for i in range(1, 3)]
    perm = np.concatenate([3 * s.constraints.bodies.index(b) + np.arange(3) for b in order])
    theta = np.concatenate([[0.0, 1e-12, 1e-6, 1e-3], np.linspace(0.05, 2 * np.pi, 125)])
    kin = s.kinematics(theta)
    q, d1, d2 = _parallelogram(2, theta)
    assert np.max(np.abs(kin.q[:, perm] - q)) < 1e-11
    assert np.max(np.abs(kin.dq[:, perm, 0] - d1)) < 1e-10
    assert np.max(np.abs(kin.ddq[:, perm] - d2)) < 1e-8


@pytest.mark.parametrize("backend", ["numpy", "c"])
def test_a_start_at_rest_exactly_at_the_aligned_position_names_the_point_and_the_branches(chains, backend):
    """At rest at theta = 0 or pi every bar is aligned (the oracle's closed form): the branch followed and the
    others through the point (Phi_q loses rank N there) share the position and no velocity tells them apart,
    so the run stops naming the point (C ran on for over two minutes at theta = pi). At rest a little off it, the motion is on the
    branch followed: it falls through theta = 0 with the oracle's energy conserved."""
    s = _chain(chains, 2, backend)
    for theta0, shown in ((0.0, "0"), (np.pi, "3.14159")):
        with pytest.raises(InputError, match=rf"at theta = {shown} \(the start, at rest\) .* bifurcation: Phi_q "
                                             r"loses rank 2 there\), and the motion could continue along any of them"):
            s.forward(0.0, theta0, 0.0, 1.0, dt=0.01, rtol=1e-10)
    theta0 = 0.05
    run = s.forward(0.0, theta0, 0.0, 1.0, dt=0.01, rtol=1e-10)
    energy = ChainMotion(2).energy(run["theta"], run["omega"])
    assert run["theta"][-1] < -3.0  # falls through theta = 0 towards -pi
    assert np.all(np.abs(energy - energy[0]) <= 1e-7 * abs(energy[0]))
