"""Self-checks of the spatial closed-loop references (tests/oracles/spatial_loops): no mechsym involved.

Pinocchio's constrained dynamics of each problem against the maximal-coordinate Lagrange-multiplier formulation
written independently in numpy; the closure residual of assembled states; energy over the benchmark runs."""
import numpy as np
import pytest

pin = pytest.importorskip("pinocchio")

from tests.oracles.spatial_loops import maximal as mx  # noqa: E402
from tests.oracles.spatial_loops import pinocchio_models as pm  # noqa: E402
from tests.oracles.spatial_loops import reference_runs as rr  # noqa: E402
from tests.oracles.spatial_loops.geometry import DELTA, delta_platform_coordinates  # noqa: E402

DRIVEN = {
    "bricard": lambda rng: {"j1": rng.uniform(0.2, 2.9)},       # its motion from rest spans j1 in [0, pi]
    "governor": lambda rng: {"shaft": rng.uniform(-3, 3), "slider": rng.uniform(0.35, 0.6)},
    "rssr": lambda rng: {"crank": rng.uniform(0, 2 * np.pi)},
    "delta": lambda rng: delta_platform_coordinates(np.r_[rng.uniform(-0.06, 0.06, 2), rng.uniform(-0.36, -0.30)]),
}


def states(name, count, seed=0):
    """Random assembled states (q, v, tau) near the reference branch, with random driven rates and joint forces."""
    rng = np.random.default_rng(seed)
    ref = pm.build(name)
    out = []
    for _ in range(count):
        driven = DRIVEN[name](rng)
        q = pm.assemble(ref, driven)
        v = pm.velocity(ref, q, {k: rng.normal() for k in driven})
        out.append((q, v, rng.normal(size=ref.nv)))
    return ref, out


@pytest.mark.parametrize("name", sorted(DRIVEN))
def test_assembly_closes_every_loop(name):
    ref, cases = states(name, 5)
    for q, v, _ in cases:
        assert np.max(np.abs(pm.residual(ref, q))) < 1e-12
        assert np.max(np.abs(pm.jacobian(ref, q) @ v)) < 1e-12


@pytest.mark.parametrize("name", sorted(DRIVEN))
def test_pinocchio_against_maximal_formulation(name):
    """pin.constraintDynamics (proximal settings PROXIMAL) equals the numpy maximal-coordinate solution."""
    ref, cases = states(name, 6, seed=1)
    for q, v, tau in cases:
        for t in (np.zeros(ref.nv), tau):
            a = pm.forward_dynamics(ref, q, v, t)
            b = mx.joint_accelerations(ref.problem, q, v, t)
            assert np.max(np.abs(a - b)) <= 1e-9 * np.max(np.abs(b))
            # and the constraints hold at acceleration level
            assert np.max(np.abs(pm.jacobian(ref, q) @ a + pm.drift(ref, q, v))) < 1e-9 * max(1.0, np.max(np.abs(a)))


def test_mobility_from_the_jacobian_rank():
    """Bricard: 5 tree joints, 6 independent closure rows counted by Gruebler, yet mobility 1."""
    for name, mobility in (("bricard", 1), ("governor", 2), ("delta", 3)):
        ref, [(q, _, _)] = states(name, 1, seed=3)
        assert ref.nv - np.linalg.matrix_rank(pm.jacobian(ref, q), 1e-9) == mobility
    ref, [(q, _, _)] = states("rssr", 1, seed=3)             # crank and the coupler's spin
    assert ref.nv - np.linalg.matrix_rank(pm.jacobian(ref, q), 1e-9) == 2


@pytest.mark.parametrize("name", ["bricard", "governor"])
def test_benchmark_run_conserves_energy(name):
    out = rr.free_motion(name)
    energy = out["kinetic"] + out["potential"]
    assert np.max(np.abs(energy - energy[0])) < 1e-9 * np.max(out["kinetic"])
    assert out["residual"] < 1e-10
    assert np.max(out["kinetic"]) > 1.0                        # it moves
