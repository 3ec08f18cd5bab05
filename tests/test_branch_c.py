"""The C routes check the branch as the numpy route does where no branch condition is declared: by the
sign of det Phi_q, which changes only through a dead point, so a change between two solved states means
the other assembly branch (a step that changes it is halved, as numpy's: tests/test_continuation_c.py). The C sweep, the C inverse batch (its lanes and its sequential route), the C
forward run and the C tracker give what the numpy route gives, and a legitimate revolution of the
shipped linkages is unchanged."""
import ctypes

import numpy as np
import pytest

from conftest import agree
from mechanisms import fourbar, pasibot, slider_crank
from mechsym import derive
from mechsym.codegen import c_backend
from mechsym.planar.model import Mechanism
from mechsym.planar.simulate import simulate

pytestmark = pytest.mark.skipif(c_backend.compiler() is None, reason="no C compiler")



def kite(gap=0.0005):
    """A four-bar without branch conditions close to a change point: crank A-P (0.05 m), ground pivot B at
    x = -(0.05 + gap), coupler P-M and rocker B-M of 0.125 m. At theta = pi the crank pin P passes within
    `gap` of B, where the two assembly branches (M on either side of P-B's bisector) nearly meet: a
    continuation step of 0.1 rad from there lands on the other one."""
    m = Mechanism("kite")
    a = m.parameter("l_crank", 0.05, "m", "crank length A-P")
    d = m.parameter("d_ground", 0.05 + gap, "m", "ground pivot distance A-B")
    b = m.parameter("l_link", 0.125, "m", "coupler P-M and rocker B-M length")
    rho = m.parameter("density", 1.0, "kg/m", "linear density of every link")
    m.gravity_down("g")
    m.ground(points={"A": (0, 0), "B": (-d, 0)})
    m.bar("crank", ("A", "P"), a, rho)
    m.bar("coupler", ("P", "M"), b, rho, guess=1.98)
    m.bar("rocker", ("B", "M"), b, rho, guess=1.15)
    m.revolute("A", "ground", "A", "crank")
    m.revolute("P", "crank", "P", "coupler")
    m.revolute("M", "coupler", "M", "rocker")
    m.revolute("B", "ground", "B", "rocker")
    m.coordinate("theta", "A", force="torque")
    return m


@pytest.fixture(scope="module")
def kites():
    return derive(kite(), backend="numpy"), derive(kite(), "c")


# Sample spacings at which the C continuation's step from sample to sample (at most hmax = 0.1 rad) lands on
# the other branch past theta = pi unless it is halved: 64 samples a revolution, where every block of 8 spans
# more than 2 hmax and the inverse batch runs sample by sample; 229, where its blocks run on lanes.
COARSE = [64, 229]


def _fine_with(theta):
    """theta merged into 1000 samples a revolution: steps of at most 2 pi / 1000, which the C kernels'
    continuation follows on the branch."""
    return np.union1d(theta, np.linspace(0.0, 2 * np.pi, 1000, endpoint=False))


@pytest.mark.parametrize("n", COARSE)
def test_c_and_numpy_sweeps_follow_the_branch_at_coarse_samples(kites, n):
    """Both routes raised 'det Phi_q changed sign: a dead point lies between' here, where there is no dead
    point (the crank pin passes 0.5 mm from the ground pivot). Both now halve the failing interval: the C
    kernel itself follows the branch (no failure), and both equal the C kernel's own sweep over samples
    fine enough that no step is halved (2 pi / 1000 apart), at the same angles."""
    numpy, c = kites
    assert c.backend.name == "c"
    theta = np.linspace(0.0, 2 * np.pi, n, endpoint=False)
    (failed, _, _), _, _ = _kernels(c, theta)
    assert failed == -1
    fine = _fine_with(theta)
    (failed_fine, _, q_fine), _, _ = _kernels(c, fine)
    assert failed_fine == -1
    expected = q_fine[np.searchsorted(fine, theta)]
    k_num, k_c = numpy.kinematics(theta), c.kinematics(theta)
    assert agree(k_num.q, expected, 1e-12) and agree(k_c.q, k_num.q, 1e-12) and agree(k_c.dq, k_num.dq, 1e-9)
    t_num, t_c = numpy.kinematics_table(theta), c.kinematics_table(theta)
    for col in t_num.columns:
        assert agree(t_c[col], t_num[col], 1e-12), col


@pytest.mark.parametrize("n", COARSE)
@pytest.mark.parametrize("inertia", [True, False])
def test_c_and_numpy_inverse_follow_the_branch_at_coarse_samples(kites, n, inertia):
    """The inverse batch (sample by sample, and on lanes) raised numpy's branch change too; now both routes
    give the same columns, equal to the C inverse over samples fine enough for its kernel to follow the
    branch, at the same angles."""
    numpy, c = kites
    theta = np.linspace(0.0, 2 * np.pi, n, endpoint=False)
    fine = _fine_with(theta)
    _, (failed_fine, _, _), _ = _kernels(c, fine)
    assert failed_fine == -1
    at = np.searchsorted(fine, theta)
    t_fine = c.inverse(fine, 3.0, inertia=inertia)
    t_num, t_c = numpy.inverse(theta, 3.0, inertia=inertia), c.inverse(theta, 3.0, inertia=inertia)
    for col in t_num.columns:
        assert agree(t_c[col], t_num[col], 1e-9) and agree(t_num[col], t_fine[col][at], 1e-9), col


def _kernels(c, theta):
    """(failed, status, q) of the C kinematics sweep (sample by sample), the inverse batch and its columns
    variant along theta from the reference's branch."""
    from mechsym.planar.kinematics import STEP_TOL

    lib, solver = c.functions, c.solver()
    q0 = solver.sweep(theta[:1, None]).q[0]
    args = (theta, solver.params, q0, solver.col_scale, STEP_TOL)
    failed_k, status_k, q_k, *_ = lib.kinematics(*args, hmax=solver.step[0])
    failed_i, status_i, q_i, *_ = lib.inverse(*args, hmax=solver.step[0], want_q=True)
    failed_c, status_c, *_ = lib.inverse_columns(*args, coef=np.array([[0.0, 9.0, 1.0]]), hmax=solver.step[0])
    return (failed_k, status_k, q_k), (failed_i, status_i, q_i), (failed_c, status_c)


def test_lanes_and_sequential_route_agree_past_the_near_change_point(kites):
    """In the kernels, at 229 samples: the inverse batch on lanes sends the blocks whose anchor or lanes
    left the branch to the sequential route, whose continuation halves its steps there as the sequential
    kinematics sweep does: none of the three stops, and their q are the sweep's."""
    numpy, c = kites
    assert c.functions.meta["lanes"]
    theta = np.linspace(0.0, 2 * np.pi, 229, endpoint=False)
    (failed_k, _, q_k), (failed_i, _, q_i), (failed_c, _) = _kernels(c, theta)
    assert failed_k == failed_i == failed_c == -1
    assert np.max(np.abs(q_i - q_k)) < 1e-12


def test_lanes_keep_the_anchor_branch(kites):
    """At 1000 samples the lanes' third-order predictions past the near change point converged on the other
    branch (their q differed from the sample-by-sample sweep's by 10 rad, det Phi_q had both signs), and the
    inverse batch returned that without an error. Now a lane off its anchor's branch sends its block to the
    sequential route: every sample keeps the reference's sign, and the batch's q are the sweep's. The
    samples are fine enough that C's own continuation follows the branch; numpy's nodes, 0.1 rad apart
    whatever the samples, jumped and raised here, and now follow the branch in halved steps: numpy's
    sweep and inverse equal C's (q to 1e-12, every column to 1e-9)."""
    numpy, c = kites
    theta = np.linspace(0.0, 2 * np.pi, 1000, endpoint=False)
    (failed_k, _, q_k), (failed_i, _, q_i), (failed_c, _) = _kernels(c, theta)
    assert failed_k == failed_i == failed_c == -1
    solver = c.solver()
    reference = np.sign(np.linalg.det(solver.f.jac(solver.reference()[1], solver.params)))
    for q in (q_k, q_i):
        assert np.all(np.sign(np.linalg.det(solver.f.jac(q.T, solver.params))) == reference)
    assert np.max(np.abs(q_i - q_k)) < 1e-12
    table = c.inverse(theta, 3.0)
    assert np.all(np.isfinite(table["torque"]))
    assert agree(numpy.kinematics(theta).q, q_k, 1e-12)
    t_num = numpy.inverse(theta, 3.0)
    for col in t_num.columns:
        assert agree(table[col], t_num[col], 1e-9), col


def test_c_parameter_sets_follow_the_branch(kites):
    """ms_inverse_sets, started from the reference assembly, follows the branch past the near change point as
    ms_inverse does from the Python solver's start (the same halved steps): the same unknowns for the set as
    the single call."""
    numpy, c = kites
    from mechsym.codegen.c_sets import inverse_sets
    from mechsym.planar.kinematics import STEP_TOL

    solver = c.solver()
    theta = np.linspace(0.0, 2 * np.pi, 229, endpoint=False)
    q0 = solver.sweep(theta[:1, None]).q[0]
    theta_ref, q_ref = solver.reference()
    sign = 1 if np.linalg.det(c.kin.jac(q_ref, solver.params)) > 0 else -1
    failed, status, _, _, _, u = inverse_sets(c.functions, theta, solver.params[None], (theta_ref[0], q_ref, sign),
                                               solver.col_scale[None], np.array([solver.step[0]]), STEP_TOL)
    single = c.functions.inverse(theta, solver.params, q0, solver.col_scale, STEP_TOL, hmax=solver.step[0])
    assert failed[0] == single[0] == -1 and np.max(np.abs(u[0] - single[5])) <= 1e-9 * np.max(np.abs(single[5]))


def test_c_forward_does_not_continue_on_the_other_branch(kites):
    """A forward run through the near change point: the C integrator's tracker (continuation steps of up
    to hmax between stages) jumped to the other branch; now its steps are checked, a step that would leave
    the branch is rejected, and the run follows numpy's within its rtol."""
    numpy, c = kites
    ref = numpy.forward(0.0, 2.0, 100.0, 0.3, dt=0.005, rtol=1e-10, atol=1e-10)
    assert ref["theta"][-1] > 3 * np.pi  # (through theta = pi and 3 pi)
    run = c.forward(0.0, 2.0, 100.0, 0.3, dt=0.005, rtol=1e-10, atol=1e-10)
    assert agree(run["theta"], ref["theta"], 1e-7) and agree(run["omega"], ref["omega"], 1e-6)


def test_c_tracker_keeps_the_branch(kites):
    """simulate on C (CompiledTracker: one ms_track call per state, a state far from its prediction checked by the
    sign of det Phi_q) through the near change point follows the numpy route's tracker: the same
    motion (another branch has another inertia)."""
    numpy, c = kites
    runs = [simulate(s, [2.0], [100.0], 0.3, dt=0.005, rtol=1e-10) for s in (numpy, c)]
    assert runs[0]["theta"][-1] > 3 * np.pi
    assert agree(runs[1]["theta"], runs[0]["theta"], 1e-7) and agree(runs[1]["thetad"], runs[0]["thetad"], 1e-6)


def _without_branches(build):
    m = build()
    m.branches.clear()
    return m


SHIPPED = {"fourbar": fourbar.build, "slider-crank": slider_crank.build, "pasibot": pasibot.build}


@pytest.mark.parametrize("name", sorted(SHIPPED))
@pytest.mark.parametrize("declared", [True, False])
def test_a_full_revolution_of_the_shipped_linkages_is_unchanged(name, declared):
    """A legitimate revolution (from the declaration's reference) is no false alarm: with or without their
    declared branch conditions (without, det Phi_q is checked), the C sweep and the C inverse, on lanes and
    sample by sample, equal the numpy route's."""
    build = SHIPPED[name] if declared else (lambda: _without_branches(SHIPPED[name]))
    numpy, c = derive(build(), backend="numpy"), derive(build(), "c")
    assert c.backend.name == "c"
    ref = numpy.mechanism.coordinates[0].guess_at
    for n in (48, 2000):
        theta = ref + np.linspace(0.0, 2 * np.pi, n, endpoint=False)
        k_num, k_c = numpy.kinematics(theta), c.kinematics(theta)
        assert agree(k_c.q, k_num.q, 1e-12) and agree(k_c.dq, k_num.dq, 1e-9)
        t_num, t_c = numpy.inverse(theta, 3.0), c.inverse(theta, 3.0)
        for col in t_num.columns:
            assert agree(t_c[col], t_num[col], 1e-9), (name, n, col)


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_the_factorisation_gives_the_sign_of_det_phi_q(name):
    """ms_factor's ok flag is the sign of det Phi_q from the static sparse elimination (its constant pivots
    and order, the run-time block's static order or its dense LU with row swaps); checked against numpy's
    determinant of the dense Jacobian at configurations on and off the constraint manifold, where the
    block's static pivots pass and where they fail."""
    c = derive(SHIPPED[name](), "c")
    lib, solver = c.functions, c.solver()
    rng = np.random.default_rng(7)
    on = c.kinematics(solver.reference()[0][0] + np.linspace(0.0, 2 * np.pi, 16, endpoint=False)).q
    off = on + rng.normal(0.0, 1.0, on.shape) * np.tile([0.01, 0.01, 0.7], on.shape[1] // 3)
    qs = np.ascontiguousarray(np.vstack([on, off, rng.normal(0.0, 2.0, (200, on.shape[1]))]))
    n = len(qs)
    a, piv = np.empty((n, lib.nslot)), np.empty((n, lib.nblock), dtype=np.intc)
    ok = np.empty(n, dtype=np.intc)
    ptr = lambda x: x.ctypes.data_as(ctypes.POINTER(ctypes.c_double))
    ip = lambda x: x.ctypes.data_as(ctypes.POINTER(ctypes.c_int))
    assert lib.dll.ms_factor(n, ptr(qs), ptr(np.ascontiguousarray(solver.params)), ptr(a), ip(piv), ip(ok)) == 0
    det = np.linalg.det(solver.f.jac(qs.T, solver.params))
    assert set(np.unique(ok)) <= {-1, 1} and set(np.unique(ok)) == {-1, 1}
    assert np.array_equal(ok, np.sign(det).astype(int))
    if lib.meta["block"] > 1:  # both ways of factorising the block were taken (one row: never a small pivot)
        assert (piv[:, 0] < 0).any() and (piv[:, 0] >= 0).any()
