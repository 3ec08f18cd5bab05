"""The compiled forward dynamics of spatial closed loops (mechsym.spatial.loop_compiled: one generated C call a
state, a pivoted QR of J^T and the null space of the closure rows) against the Python route
(loop_dynamics.kkt_accelerations: the KKT system by LU or its pseudo-inverse) at consistent states of the shipped
models; against Pinocchio's constraintDynamics in tests/test_spatial_loops_oracles.py (both backends)."""
import numpy as np
import pytest

from mechanisms import bricard, governor, rssr
from mechsym.spatial import loop_dynamics as dyn
from mechsym.spatial.loop_kinematics import LoopSolver
from mechsym.spatial.loops import LoopSystem

pytestmark = pytest.mark.skipif(__import__("mechsym.codegen.c_backend", fromlist=["x"]).compiler() is None,
                                reason="no C compiler")

MODELS = {"bricard": bricard, "governor": governor, "rssr": rssr}


def _states(solver, n, seed):
    """n consistent states (q, v) and generalised forces tau at random driven values and rates."""
    s = solver.s
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        theta = rng.uniform(-0.3, 0.3, solver.k) * solver.theta_scale
        q = solver.assemble(theta)
        v = solver.velocities(q[None], rng.normal(size=(1, solver.k)) * solver.theta_scale)[0]
        out.append((q, v, rng.normal(size=s.nv)))
    return out


@pytest.mark.parametrize("name", sorted(MODELS))
def test_compiled_accelerations_equal_the_python_route(name):
    solver = LoopSolver(LoopSystem(MODELS[name].build(), backend="c"))
    worst = 0.0
    for q, v, tau in _states(solver, 5, 3):
        _, J, gamma = solver.s.closure(q[None], v[None])
        a = dyn.accelerations(solver, q, v, tau)
        expected = dyn.kkt_accelerations(solver, q, v, tau)
        worst = max(worst, np.abs(a - expected).max() / np.abs(expected).max())
        assert np.abs(J[0] @ a + gamma[0]).max() < 1e-9 * max(1.0, np.abs(gamma).max())   # the rows' accelerations
    assert worst < 1e-12


def test_compiled_accelerations_where_closure_rows_vanish():
    """The governor at rest with its rods hanging: rows of J are zero there (rank decided on J as it is, not
    on rows scaled to unit length), the result still the Python route's."""
    system = LoopSystem(governor.build(), backend="c")
    solver = LoopSolver(system)
    q0, v0 = governor.initial_state(system)
    q = solver.close(q0)
    v, _ = dyn.consistent_velocity(solver, q, v0)
    _, J, _ = system.closure(q[None])
    assert np.linalg.norm(J[0], axis=1).min() < 1e-12                  # (the case this checks)
    zero = np.zeros(system.nv)
    expected = dyn.kkt_accelerations(solver, q, v, zero)
    assert np.abs(dyn.accelerations(solver, q, v, zero) - expected).max() < 1e-12 * np.abs(expected).max()


def test_compiled_accelerations_of_many_states_in_one_call():
    solver = LoopSolver(LoopSystem(bricard.build(), backend="c"))
    states = _states(solver, 6, 5)
    q, v, tau = (np.array(x) for x in zip(*states))
    dyn.accelerations(solver, q[0], v[0], tau[0])
    many = solver.constrained_accelerations(q, v, tau)
    assert many.shape == (6, solver.s.nv)
    for i in range(6):
        expected = dyn.kkt_accelerations(solver, q[i], v[i], tau[i])
        assert np.abs(many[i] - expected).max() < 1e-12 * np.abs(expected).max()


def test_compiled_accelerations_take_the_solver_parameters():
    """A solver at other parameter values: the compiled call reads its vector, as the Python route does."""
    system = LoopSystem(rssr.build(), backend="c")
    name = system.param_names[0]
    solver = LoopSolver(system, params={name: 1.3 * system.params()[0]})
    q, v, tau = _states(solver, 1, 11)[0]
    expected = dyn.kkt_accelerations(solver, q, v, tau)
    assert np.abs(dyn.accelerations(solver, q, v, tau) - expected).max() < 1e-12 * np.abs(expected).max()
    default = LoopSolver(system)
    assert np.abs(dyn.kkt_accelerations(default, q, v, tau) - expected).max() > 1e-6 * np.abs(expected).max()


def test_a_state_the_compiled_call_cannot_read_goes_the_python_route():
    """Lists and integer arrays are converted by the Python route, with the same result."""
    solver = LoopSolver(LoopSystem(rssr.build(), backend="c"))
    q, v, tau = _states(solver, 1, 2)[0]
    a = dyn.accelerations(solver, q, v, tau)
    assert np.array_equal(dyn.accelerations(solver, list(q), list(v), list(tau)), dyn.kkt_accelerations(solver, q, v, tau))
    assert np.abs(a - dyn.accelerations(solver, list(q), list(v), list(tau))).max() < 1e-12 * np.abs(a).max()


def test_compiled_accelerations_against_the_exact_solution_of_the_same_terms():
    """The RSSR (no redundant row: the KKT matrix is square) solved in 40 digits from the same floating-point
    H, bias, J and gamma: the compiled route within 1e-12 of that solution's size."""
    mp = pytest.importorskip("mpmath")
    solver = LoopSolver(LoopSystem(rssr.build(), backend="c"))
    s = solver.s
    for q, v, tau in _states(solver, 3, 13):
        H, bias = s.tree.mass_matrix(q), s.tree.bias(q, v)
        _, J, gamma = s.closure(q[None], v[None])
        K = np.block([[H, J[0].T], [J[0], np.zeros((s.nrows, s.nrows))]])
        with mp.workdps(40):
            x = mp.lu_solve(mp.matrix(K.tolist()), mp.matrix([*(tau - bias), *(-gamma[0])]))
            exact = np.array([float(x[i]) for i in range(s.nv)])
        a = dyn.accelerations(solver, q, v, tau)
        assert np.abs(a - exact).max() < 1e-12 * np.abs(exact).max()


@pytest.mark.parametrize("name", ["bricard", "governor", "rssr"])
def test_compiled_dependent_coordinates_equal_the_python_route(name):
    """A partition's configuration from independent coordinates and speeds near an assembly (Newton on the
    dependent ones, then the speeds): the C route (the RSSR's spherical joint's quaternion turned in C too)
    against Partition.numpy_configuration, to 1e-12; independent coordinates where the loops cannot close are
    refused alike."""
    from mechsym.core.runner import StepRejected

    module = MODELS[name]
    system = LoopSystem(module.build(), backend="c")
    solver = LoopSolver(system)
    q0 = solver.close(module.initial_state(system)[0] if name == "governor" else None)
    part = dyn.Partition(solver, q0)
    rng = np.random.default_rng(17)
    for _ in range(4):
        q_ind = q0[part.q_ind] + rng.normal(size=len(part.q_ind)) * 0.05 * solver.col[part.v_ind]
        v_ind = rng.normal(size=len(part.v_ind))
        part.q = q0
        q, v = part.configuration(q_ind, v_ind)
        part.q = q0
        q_py, v_py = part.numpy_configuration(q_ind, v_ind)
        assert np.abs(q - q_py).max() < 1e-12 and np.abs(v - v_py).max() < 1e-12 * np.abs(v_py).max()
        assert np.abs(system.closure(q[None])[0]).max() < 1e-12
    messages = []
    for call in (part.configuration, part.numpy_configuration):
        part.q = q0
        with pytest.raises(StepRejected) as err:
            call(q0[part.q_ind] + 2.0, np.zeros(len(part.q_ind)))
        messages.append(str(err.value))
    assert messages[0] == messages[1] and "do not close on the branch" in messages[0]


def test_forward_run_on_both_backends():
    """Bricard's first second of free motion at rtol 1e-12, right-hand sides in C (accelerations and dependent
    coordinates) and in numpy: the same coordinates to 1e-9 rad."""
    runs = []
    for backend in ("c", "numpy"):
        system = LoopSystem(bricard.build(), backend=backend)
        runs.append(dyn.forward(LoopSolver(system), np.zeros(system.nq), np.zeros(system.nv), 1.0, dt=0.05,
                                rtol=1e-12))
    names = LoopSystem(bricard.build(), backend="numpy").coordinate_names
    assert max(np.abs(runs[0][n] - runs[1][n]).max() for n in names) < 1e-9


def _numpy_sweep(solver, theta, start=None):
    """LoopSolver.sweep's numpy route at theta (N,) from the guess `start`: its nodes as `sweep` chooses them."""
    from mechsym.codegen.constants import STEP

    q0 = solver.assemble(theta[:1], start)
    dist = np.concatenate([[0.0], np.cumsum(np.abs(np.diff(theta)) / solver.theta_scale[0])])
    nodes = np.flatnonzero(np.diff(np.floor(dist / STEP).astype(int), prepend=-1))
    return solver.numpy_sweep(theta[:, None], nodes, q0)


def _fourbar():
    """The planar crank-rocker declared in 3-D (tests/test_spatial_loops.py), and a guess of its assembly at a
    zero crank angle (the coupler and the rocker up, the loop's point above the ground's middle)."""
    from tests.test_spatial_loops import spatial_fourbar

    return spatial_fourbar(), np.array([0.0, 1.37, 1.77])


@pytest.mark.parametrize("name, theta", [("bricard", np.linspace(0.0, 1.5, 300)),
                                         ("bricard", np.linspace(0.2, -0.5, 50)),
                                         ("fourbar3d", np.linspace(0.0, 2 * np.pi, 400)),
                                         ("rssr", np.linspace(0.0, -2 * np.pi, 400))])
def test_compiled_sweep_equals_the_numpy_route(name, theta):
    """A sweep of one driven coordinate in C (continuation, Newton, branch and dead-point checks, derivatives;
    the RSSR's spherical joint's quaternion turned in C too) against the numpy route from the same assembly: q,
    dq and ddq to 1e-12 of their size."""
    tree, start = (MODELS[name].build(), None) if name in MODELS else _fourbar()
    solver = LoopSolver(LoopSystem(tree, backend="c"))
    kin = solver.sweep(theta, start)
    q, dq, ddq = _numpy_sweep(solver, theta, start)
    assert np.abs(kin.q - q).max() < 1e-12
    assert np.abs(kin.dq - dq).max() < 1e-12 * np.abs(dq).max()
    assert np.abs(kin.ddq - ddq).max() < 1e-12 * np.abs(ddq).max()
    assert np.abs(solver.s.closure(kin.q)[0]).max() < 1e-12


@pytest.mark.parametrize("end", [2 * np.pi, -2 * np.pi])
def test_compiled_sweep_stops_where_the_numpy_route_stops(end):
    """Bricard's J1 turns no full revolution: both routes stop with the same one-line error, naming the loop and
    the last driven value reached."""
    from mechsym.core.errors import SingularError

    solver = LoopSolver(LoopSystem(bricard.build(), backend="c"))
    theta = np.linspace(0.0, end, 200)
    messages = []
    for run in (lambda: solver.sweep(theta), lambda: _numpy_sweep(solver, theta)):
        with pytest.raises(SingularError) as err:
            run()
        messages.append(str(err.value))
    assert messages[0] == messages[1]
    assert "the continuation stops near J1=" in messages[0] and "loop 'loop' (joint 'J6'" in messages[0]
