"""The C continuation takes the numpy continuation's decisions (runtime/ms_kernels.h advance beside
mechsym.planar.solver.Solver._refine): a step that Newton cannot complete from its prediction, or that changes
the sign of det Phi_q or of a declared branch condition, is halved down to the same floor (1e-6 of the
coordinate's scale), and only there does the continuation stop, handing back the angles and configurations
from which the Python side raises numpy's error (Solver.stopped). Every case below is answered by the C
kernels themselves: a spy on the numpy route (its sweep over the samples, its inverse basis) sees no call,
and the results equal numpy's (q to 1e-12, the columns to 1e-9) and the closed-form position analysis."""
import numpy as np
import pytest

from conftest import agree
from mechanisms import fourbar
from mechsym import derive
from mechsym.codegen import c_backend
from mechsym.codegen.constants import Status
from mechsym.core.errors import AssemblyError, SingularError
from mechsym.planar import dynamics
from mechsym.codegen.constants import STEP, STEP_FLOOR
from mechsym.planar.solver import Solver
from test_branch_c import kite
from test_continuation import _closed_form_m, _kite

pytestmark = pytest.mark.skipif(c_backend.compiler() is None, reason="no C compiler")


@pytest.fixture
def numpy_route(monkeypatch):
    """The number of samples of every numpy sweep (its batched pass over the samples) and of every numpy
    inverse basis, while a test runs. A C route's start (one sample, continued from the reference) counts 1."""
    calls = []
    predict, basis = Solver._predict_from_nodes, dynamics._inverse_basis

    def spy_predict(self, nodes_q, nodes_theta, node_dist, dist, theta, step):
        calls.append(len(theta))
        return predict(self, nodes_q, nodes_theta, node_dist, dist, theta, step)

    def spy_basis(system, theta, params, analysis):
        calls.append(("inverse basis", len(theta)))
        return basis(system, theta, params, analysis)

    monkeypatch.setattr(Solver, "_predict_from_nodes", spy_predict)
    monkeypatch.setattr(dynamics, "_inverse_basis", spy_basis)
    return calls


def _answered_by_c(calls):
    return all(c == 1 for c in calls)


@pytest.fixture(scope="module", params=[False, True], ids=["det", "declared"])
def kites(request):
    return derive(_kite(request.param), backend="numpy"), derive(_kite(request.param), "c")


@pytest.mark.parametrize("n", [64, 125, 229, 356, 1000])
def test_the_c_kernels_follow_the_branch_past_a_near_change_point(kites, n, numpy_route):
    """The kite (crank pin 0.5 mm from the ground pivot at theta = pi), bare and with its branch declared:
    the C kernel's step from sample to sample landed on the other branch (status 6) and the C route handed
    the whole call to numpy. Its halved steps now follow the branch: the C sweep, inverse and reduced ODE
    come from the kernels alone, equal numpy's, and M follows the closed-form circle intersection."""
    numpy, c = kites
    assert c.backend.name == "c"
    theta = np.linspace(0.0, 2 * np.pi, n, endpoint=False)
    k_c, t_c = c.kinematics(theta), c.kinematics_table(theta)
    inv_c = c.inverse(theta, 3.0)
    f_c, jac_c = c.ode(theta, 3.0, 0.5)
    assert _answered_by_c(numpy_route), numpy_route
    k_num, t_num = numpy.kinematics(theta), numpy.kinematics_table(theta)
    assert agree(k_c.q, k_num.q, 1e-12) and agree(k_c.dq, k_num.dq, 1e-9) and agree(k_c.ddq, k_num.ddq, 1e-9)
    for col in t_num.columns:
        assert agree(t_c[col], t_num[col], 1e-12), col
    inv_num = numpy.inverse(theta, 3.0)
    for col in inv_num.columns:
        assert agree(inv_c[col], inv_num[col], 1e-9), col
    f_num, jac_num = numpy.ode(theta, 3.0, 0.5)
    assert agree(f_c, f_num, 1e-9) and agree(jac_c, jac_num, 1e-9)
    m = np.stack([t_c["M.x"], t_c["M.y"]], axis=1)
    sides = [_closed_form_m(theta, side=side) for side in (1.0, -1.0)]
    assert agree(m, min(sides, key=lambda e: np.max(np.abs(e[0] - m[0]))), 1e-12)


def test_the_c_kernel_retries_only_the_failing_interval(kites):
    """The kernel's own answer at coarse samples (halved steps across theta = pi) equals its answer at
    samples fine enough that no step is halved, at the same angles."""
    _, c = kites
    from mechsym.planar.kinematics import STEP_TOL

    lib, solver = c.functions, c.solver()
    coarse = np.linspace(0.0, 2 * np.pi, 64, endpoint=False)
    fine = np.union1d(coarse, np.linspace(0.0, 2 * np.pi, 1000, endpoint=False))
    q = {}
    for name, theta in (("coarse", coarse), ("fine", fine)):
        q0 = solver.sweep(theta[:1, None]).q[0]
        failed, _, q[name], *_, stop = lib.kinematics(theta, solver.params, q0, solver.col_scale, STEP_TOL,
                                                      hmax=solver.step[0])
        assert failed == -1 and stop is None
    assert agree(q["coarse"], q["fine"][np.searchsorted(fine, coarse)], 1e-12)


def test_the_c_route_names_a_limit_position_as_numpy(numpy_route):
    """The non-Grashof fourbar (crank 0.2 m) reaches its limit position at cos(theta) = -0.3125. The C
    kernel failed at the first sample past it and the route handed the call to numpy; it now halves down to
    the floor itself and the C route raises numpy's error, naming the same angle (within the floor of the
    closed form); the residual and condition number it quotes are those of its own last interval."""
    numpy, c = derive(fourbar.build(), backend="numpy"), derive(fourbar.build(), "c")
    theta = np.linspace(0.0, 2 * np.pi, 50)
    numpy_route.clear()  # (derive's own checks)
    limit = np.arccos(-0.3125)
    messages = []
    for system in (c, numpy):
        for run in (lambda: system.kinematics(theta, params={"l_crank": 0.2}),
                    lambda: system.inverse(theta, 3.0, params={"l_crank": 0.2})):
            with pytest.raises(AssemblyError) as info:
                run()
            messages.append(str(info.value))
        if system is c:
            assert _answered_by_c(numpy_route), numpy_route
    for message in messages:
        assert "cannot assemble at theta=1.88862" in message and "loop 1" in message
        named = float(message.split("dead point at theta=")[1].split(" ")[0])
        assert abs(named - limit) < STEP_FLOOR + 1e-5
    shape = lambda m: m.split(" (residual")[0] + m.split("there)")[1]
    assert len({shape(m) for m in messages}) == 1


@pytest.mark.parametrize("n", [64, 229, 1000])
def test_the_c_route_names_a_change_point_as_numpy(n, numpy_route):
    """The kite with no gap (the branches cross at theta = pi). Samples offset from pi: the C kernels stop
    within the floor of pi and the C route raises numpy's very error. Samples symmetric about pi put a
    sample (even n) or the first halving point (odd n) exactly on it: the C continuation stands on the
    dead point itself (Phi_q singular to rounding) and names a dead point there, as a singular Jacobian or,
    where rounding leaves the velocity coefficients moderate, as a position it cannot be driven past; the
    numpy continuation, whose nodes do not fall on pi, names the change of branch; both at theta = 3.14159."""
    numpy, c = derive(kite(gap=0.0), backend="numpy"), derive(kite(gap=0.0), "c")
    offset = np.linspace(0.3, 0.3 + 2 * np.pi, n, endpoint=False)
    numpy_route.clear()  # (derive's own checks)
    errors = []
    for system in (c, numpy):
        for run in (lambda: system.kinematics(offset), lambda: system.inverse(offset, 3.0),
                    lambda: system.ode(offset, 3.0)):
            with pytest.raises(AssemblyError) as info:
                run()
            errors.append(str(info.value))
        if system is c:
            assert _answered_by_c(numpy_route), numpy_route
    assert len(set(errors)) == 1 and "at theta=3.14159: det Phi_q changed sign" in errors[0]
    symmetric = np.linspace(0.0, 2 * np.pi, n, endpoint=False)
    with pytest.raises((SingularError, AssemblyError), match=r"dead point at theta=3\.14159"):
        c.kinematics(symmetric)
    with pytest.raises(AssemblyError, match=r"at theta=3\.14159: det Phi_q changed sign"):
        numpy.kinematics(symmetric)


def test_the_kernels_stop_at_the_same_sample():
    """The sequential sweep, the inverse batch on lanes and its columns variant stop at the same sample past
    the no-gap kite's change point, with the same status and the same failure record."""
    from mechsym.planar.kinematics import STEP_TOL

    c = derive(kite(gap=0.0), "c")
    lib, solver = c.functions, c.solver()
    assert lib.meta["lanes"]
    theta = np.linspace(0.3, 0.3 + 2 * np.pi, 229, endpoint=False)
    q0 = solver.sweep(theta[:1, None]).q[0]
    args = (theta, solver.params, q0, solver.col_scale, STEP_TOL)
    k = lib.kinematics(*args, hmax=solver.step[0])
    i = lib.inverse(*args, hmax=solver.step[0])
    j = lib.inverse_columns(*args, coef=np.array([[0.0, 9.0, 1.0]]), hmax=solver.step[0])
    assert k[0] == i[0] == j[0] > 0 and k[1] == i[1] == j[1] == Status.DET_SIGN
    assert theta[k[0] - 1] < np.pi < theta[k[0]]
    stops = [k[-1], i[-1], j[-1]]
    for stop in stops[1:]:
        assert stop.theta_a == stops[0].theta_a and stop.theta_b == stops[0].theta_b
        assert np.array_equal(stop.q_a, stops[0].q_a) and np.array_equal(stop.q_b, stops[0].q_b)
    stop = stops[0]
    assert stop.converged and 0 < stop.theta_b - stop.theta_a < 2 * STEP_FLOOR
    assert stop.theta_a <= np.pi <= stop.theta_b


def test_the_floor_is_numpys():
    """The C floor, relative to the largest step hmax, is the numpy floor relative to the coordinate's scale
    divided by the continuation step, so both are 1e-6 of the scale: ms_continuation.h takes MS_STEP_FLOOR and
    MS_STEP from the one table the numpy route takes STEP_FLOOR and STEP from (mechsym.codegen.constants,
    whose printed header tests/test_constants.py compiles and reads back)."""
    from importlib import resources

    from mechsym.codegen import constants

    header = resources.files("mechsym.codegen").joinpath("runtime/ms_continuation.h").read_text()
    assert "floor = MS_STEP_FLOOR / MS_STEP * hmax" in header
    assert (STEP_FLOOR, STEP) == (constants.STEP_FLOOR, constants.STEP) == (1e-6, 0.1)

