"""Self-checks of the spatial closed-loop references (tests/oracles/spatial_loops): no mechsym involved.

Pinocchio's constrained dynamics of each problem against the maximal-coordinate Lagrange-multiplier formulation
written independently in numpy; the closure residual of assembled states; energy over the benchmark runs."""
from functools import lru_cache

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


@lru_cache(maxsize=None)
def benchmark_run(name):
    """One reference run per benchmark for the whole module (a few seconds each)."""
    return rr.free_motion(name)


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
    out = benchmark_run(name)
    energy = out["kinetic"] + out["potential"]
    assert np.max(np.abs(energy - energy[0])) < 1e-9 * np.max(out["kinetic"])
    assert out["residual"] < 1e-10
    assert np.max(out["kinetic"]) > 1.0                        # it moves


def test_delta_inverse_dynamics_sympy_against_pinocchio():
    """Motor torques along the circle: sympy.physics.mechanics (Lagrange with constraints, coordinates x, y, z
    and the motor angles) against Pinocchio's rnea on the constrained tree (closure forces through J^T), 1e-10;
    and the round trip: those torques in pin.constraintDynamics give back the path's acceleration."""
    from tests.oracles.spatial_loops import delta_sympy as ds

    times = np.linspace(0.0, 1.0, 7)[:-1] + 0.05
    torques, c, residual, legs = ds.inverse_dynamics(times, forces=True)
    assert np.max(np.abs(residual)) < 1e-14
    ref = pm.build("delta")
    names = ["platform.x", "platform.y", "platform.z"]
    motors = [f"motor{i}" for i in range(3)]
    q = None
    for k in range(len(times)):
        q = pm.assemble(ref, delta_platform_coordinates(c[k, 0:3]), q)
        assert np.max(np.abs(q[[ref.q_index[m] for m in motors]] - c[k, 3:6])) < 1e-12
        v = pm.velocity(ref, q, dict(zip(names, c[k, 6:9])))
        a = pm.acceleration(ref, q, v, dict(zip(names, c[k, 12:15])))
        tau, lam = pm.inverse_dynamics(ref, q, v, a, motors, forces=True)
        assert np.max(np.abs(tau - torques[k])) <= 1e-10 * np.max(np.abs(torques[k]))
        wrists = pm.reactions(ref, q, v, a, lam)                  # forearm on platform, by the multipliers
        on_platform = np.array([wrists[f"wrist{i}"][0] for i in range(3)])
        assert np.max(np.abs(on_platform - legs[k])) <= 1e-10 * np.max(np.abs(legs[k]))
        full = np.zeros(ref.nv)
        full[[ref.coordinate[m] for m in motors]] = torques[k]
        back = pm.forward_dynamics(ref, q, v, full)
        assert np.max(np.abs(back[:3] - c[k, 12:15])) <= 1e-9 * max(1.0, np.max(np.abs(c[k, 12:15])))


def test_stiff_governor_reference_two_integrators():
    """The benchmark's spring-damper governor: LSODA at rtol 1e-12 against BDF at 1e-11 (slider height s)."""
    a = rr.free_motion("governor-springs", t_end=3.0, samples=31)
    b = rr.free_motion("governor-springs", t_end=3.0, samples=31, rtol=1e-11, atol=1e-11, method="BDF")
    assert np.max(np.abs(a["points"]["S"] - b["points"]["S"])) < 1e-8
    assert a["points"]["S"][-1, 2] > 0.51                      # the balls fly out and lift the slider


@pytest.mark.parametrize("name, h, tol", [("bricard", 2e-3, 1e-4), ("governor", 2e-3, 1e-3),
                                          ("governor-springs", 1e-3, 2e-4)])
def test_exudyn_peer_follows_the_reference(name, h, tol):
    """Exudyn's generalized-alpha run (a model of its own from the same geometry) follows the reference's
    points over the benchmark interval, to the accuracy its fixed step allows."""
    exudyn_models = pytest.importorskip("tests.oracles.spatial_loops.exudyn_models")
    pytest.importorskip("exudyn")
    from tests.oracles.spatial_loops.geometry import GOVERNOR

    ref = benchmark_run(name)
    problem, _, _ = rr.initial_state(name)
    omega = GOVERNOR["omega0"] if name.startswith("governor") else None
    t, points, cpu = exudyn_models.run(problem.problem, h, ref["t"][-1], omega=omega)
    index = np.searchsorted(t, ref["t"] - 1e-9)
    assert np.all(np.abs(t[index] - ref["t"]) < 1e-9)
    for key, path in ref["points"].items():
        assert np.max(np.abs(points[key][index] - path)) < tol, key
    assert cpu > 0


@pytest.mark.parametrize("name", ["rssr", "delta"])
def test_reactions_balance_every_body(name):
    """The joint reactions (tree and closing joints) with gravity balance each body's Newton-Euler equations."""
    ref, cases = states(name, 3, seed=5)
    problem = ref.problem
    actuated = [problem.joints[0].name] if name == "rssr" else [f"motor{i}" for i in range(3)]
    rng = np.random.default_rng(6)
    for q, v, _ in cases:
        driven = {k: rng.normal() for k in DRIVEN[name](rng)}
        a = pm.acceleration(ref, q, v, driven)
        _, lam = pm.inverse_dynamics(ref, q, v, a, actuated, forces=True)
        rx = pm.reactions(ref, q, v, a, lam)
        pin.forwardKinematics(ref.model, ref.data, q, v, a)
        where = {j.name: ref.data.oMi[ref.model.getJointId(j.name + (".1" if j.kind == "universal" else ""))]
                 .translation for j in problem.joints}
        for c in problem.closures:
            body, local = c.body_a, c.point - ref.origin[c.body_a]
            where[c.name] = ref.data.oMi[ref.body_joint[body]].act(local)
        for body, b in problem.bodies.items():
            jid = ref.body_joint[body]
            M = ref.data.oMi[jid]
            com = M.act(b.com)
            vel, acc = ref.data.v[jid], ref.data.a[jid]
            a_com = M.rotation @ (acc.linear + np.cross(acc.angular, b.com)
                                  + np.cross(vel.angular, vel.linear + np.cross(vel.angular, b.com)))
            w, alpha = M.rotation @ vel.angular, M.rotation @ acc.angular
            inertia = M.rotation @ b.inertia @ M.rotation.T
            force, moment = b.mass * problem.gravity, np.zeros(3)
            pairs = [(j.name, j.parent, j.child) for j in problem.joints]
            pairs += [(c.name, c.body_a, c.body_b) for c in problem.closures]
            for joint, first, second in pairs:
                sign = 1.0 if second == body else -1.0 if first == body else 0.0
                if sign:
                    f, m = rx[joint]
                    force += sign * f
                    moment += sign * (m + np.cross(where[joint] - com, f))
            scale = max(1.0, np.max(np.abs(rx[problem.joints[0].name][0])))
            assert np.max(np.abs(force - b.mass * a_com)) < 1e-10 * scale, body
            assert np.max(np.abs(moment - inertia @ alpha - np.cross(w, inertia @ w))) < 1e-10 * scale, body


def test_bricard_revolute_closure_against_a_welded_split():
    """The revolute closure as two CONTACT_3D points on its axis against the loop cut elsewhere: link5 in two
    halves welded by one CONTACT_6D, j6 a tree joint. Same configuration, velocity and accelerations."""
    ref, split = pm.build("bricard"), pm.build("bricard", split=True)
    rng = np.random.default_rng(4)
    for j1 in rng.uniform(0.2, 2.9, 4):
        q = pm.assemble(ref, {"j1": j1})
        v = pm.velocity(ref, q, {"j1": rng.normal()})
        qs = pm.assemble(split, {"j1": j1})
        vs = pm.velocity(split, qs, {"j1": v[0]})
        assert np.max(np.abs(qs[:5] - q)) < 1e-12 and np.max(np.abs(vs[:5] - v)) < 1e-12
        a, b = pm.forward_dynamics(ref, q, v), pm.forward_dynamics(split, qs, vs)
        assert np.max(np.abs(b[:5] - a)) <= 1e-9 * np.max(np.abs(a))
        assert np.max(np.abs(mx.joint_accelerations(split.problem, qs, vs) - b)) <= 1e-9 * np.max(np.abs(b))


@pytest.mark.parametrize("name, actuated", [("bricard", ["j1"]), ("rssr", ["crank"]),
                                            ("delta", ["motor0", "motor1", "motor2"])])
def test_static_drive_by_virtual_work(name, actuated):
    """Holding torques at rest (inverse dynamics with v = a = 0) against virtual work: for every consistent
    velocity w, tau . w_actuated = g(q) . w, g the generalized gravity (dV/dq)."""
    ref, cases = states(name, 3, seed=7)
    zero = np.zeros(ref.nv)
    for q, _, _ in cases:
        tau = pm.inverse_dynamics(ref, q, zero, zero, actuated)
        gravity = pin.computeGeneralizedGravity(ref.model, ref.data, q)
        columns = [ref.coordinate[n] for n in actuated]
        W = np.column_stack([pm.velocity(ref, q, dict(zip(actuated, e))) for e in np.eye(len(actuated))])
        assert np.max(np.abs(tau @ W[columns] - gravity @ W)) <= 1e-10 * np.max(np.abs(gravity))
