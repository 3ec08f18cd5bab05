"""Several-coordinate simulation: energy conservation, agreement with the one-coordinate route, loads."""
import numpy as np
import pytest

from conftest import agree
from mechsym import derive
from mechsym.codegen import c_backend
from mechsym.planar.dynamics import energies
from mechsym.planar.model import Mechanism
from mechsym.planar.simulate import EquationsOfMotion, simulate
from mechsym.planar.tracking import CompiledTracker

BACKENDS = ["numpy", pytest.param("c", marks=pytest.mark.skipif(c_backend.compiler() is None, reason="no C compiler"))]


def double_pendulum(backend="numpy"):
    m = Mechanism("double-pendulum")
    l1 = m.parameter("l1", 1.0, "m")
    l2 = m.parameter("l2", 0.7, "m")
    m.gravity_down()
    m.ground(points={"O": (0, 0)})
    m.bar("upper", ("O", "A"), l1, 1.0, guess=-1.2)
    m.bar("lower", ("A", "B"), l2, 2.0, guess=-0.5)
    m.revolute("O", "ground", "O", "upper")
    m.revolute("A", "upper", "A", "lower")
    m.coordinate("phi1", "O", force="T1")
    m.coordinate("phi2", "A")  # passive
    return derive(m, backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_double_pendulum_conserves_energy(backend):
    s = double_pendulum(backend)
    assert s.backend.name == backend
    table = simulate(s, [0.3, 1.0], [0.0, 0.0], 3.0, rtol=1e-11, atol=1e-11)
    theta = np.column_stack([table["phi1"], table["phi2"]])
    rates = np.column_stack([table["phi1d"], table["phi2d"]])
    kin = s.kinematics(theta)
    ke, pe = energies(s, kin, rates)
    assert np.ptp(table["phi2"]) > 1.0
    assert np.max(np.abs(ke + pe - ke[0] - pe[0])) < 1e-8 * ke.max()


def test_one_coordinate_agrees_with_forward(fourbar):
    a = simulate(fourbar, [0.2], [1.0], 0.4, rtol=1e-11, atol=1e-11, forces={"torque": 0.05})
    b = fourbar.forward(0.05, 0.2, 1.0, 0.4, rtol=1e-11, atol=1e-11)
    assert agree(a["theta"], b["theta"], 1e-8) and agree(a["thetad"], b["omega"], 1e-7)


@pytest.mark.parametrize("backend", BACKENDS)
def test_load_work_balance(backend):
    """A viscous torque on the lower joint through `load`: energy lost equals the damping work (an extra state)."""
    s = double_pendulum(backend)
    c = 0.3
    i_upper, i_lower = s.constraints.body_slice("upper"), s.constraints.body_slice("lower")

    def load(t, q, qd, state):
        rel = qd[i_lower][2] - qd[i_upper][2]
        gen = np.zeros(len(q))
        gen[i_lower.start + 2] -= c * rel
        gen[i_upper.start + 2] += c * rel
        return gen, [c * rel**2]  # dissipated power

    table = simulate(s, [0.5, -0.5], [0.0, 2.0], 2.0, rtol=1e-11, atol=1e-11, load=load, state0=[0.0],
                     state_names=["dissipated"])
    kin = s.kinematics(np.column_stack([table["phi1"], table["phi2"]]))
    ke, pe = energies(s, kin, np.column_stack([table["phi1d"], table["phi2d"]]))
    e = ke + pe
    assert table["dissipated"][-1] > 0.1
    assert np.max(np.abs(e[0] - e - table["dissipated"])) < 1e-8 * table["dissipated"][-1]


@pytest.mark.skipif(c_backend.compiler() is None, reason="no C compiler")
def test_c_right_hand_side_agrees_with_numpy(monkeypatch):
    """The C route of a right-hand side (ms_track: Newton, J, a0 and the applied forces in one call) against
    the numpy route (dense Jacobian inverse) along a path of states, and its fallback (the numpy tracker,
    taken where C does not converge) giving the same values."""
    num, c = double_pendulum("numpy"), double_pendulum("c")
    rng = np.random.default_rng(5)
    path = np.cumsum(rng.normal(scale=0.05, size=(60, 2)), axis=0) + [0.3, 1.0]
    states = np.column_stack([path, rng.normal(size=(60, 2))])
    a, b = EquationsOfMotion(num, path[0]), EquationsOfMotion(c, path[0])
    assert isinstance(b.tracker, CompiledTracker)
    fa = np.array([a.rhs(0.0, y) for y in states])
    fb = np.array([b.rhs(0.0, y) for y in states])
    assert agree(fb, fa, 1e-12)
    q_a, qd_a = a.coordinates(states[-1])
    q_b, qd_b = b.coordinates(states[-1])
    assert agree(q_b, q_a, 1e-13) and agree(qd_b, qd_a, 1e-12)
    track = b.tracker.track
    monkeypatch.setattr(b.tracker, "track", lambda *args: (1,) + track(*args)[1:])
    fc = np.array([b.rhs(0.0, y) for y in states[::-1]])
    assert agree(fc, fa[::-1], 1e-12)


@pytest.mark.parametrize("count", [3, 40])
def test_dense_factor_solves_as_numpy(fourbar, count):
    """The numpy backend's dense factorisation (LAPACK LU per sample for a few samples, as in a right-hand
    side; the batched inverse for many) against numpy.linalg.solve: Phi_q x = b and Phi_q^T y = c, one and
    several right-hand sides; a singular sample (a zero row, or NaN) gives NaN in its own solution only."""
    from mechsym.planar.kinematics import DenseFactor

    rng = np.random.default_rng(8)
    n = fourbar.constraints.n
    q, p = rng.normal(size=(n, count)), fourbar.params()
    jac = fourbar.kin.jac(q, p)
    jac[1, 2] = 0.0
    jac[2, 0] = np.nan
    fac = DenseFactor(jac)
    assert (fac.lu is not None) == (count <= DenseFactor.FEW)
    good = np.arange(count) > 2
    assert fac.ok[:3].tolist() == [True, False, False] and fac.ok[good].all()
    good[0] = True
    b, bm = rng.normal(size=(count, n)), rng.normal(size=(count, n, 3))
    jt = np.swapaxes(jac, 1, 2)
    for got, want in ((fac.solve(b), np.linalg.solve(jac[good], b[good][..., None])[..., 0]),
                      (fac.solve(bm), np.linalg.solve(jac[good], bm[good])),
                      (fac.solve_t(b), np.linalg.solve(jt[good], b[good][..., None])[..., 0]),
                      (fac.solve_t(bm), np.linalg.solve(jt[good], bm[good]))):
        assert not np.isfinite(got[1]).all() and not np.isfinite(got[2]).all()
        np.testing.assert_allclose(got[good], want, rtol=1e-10, atol=1e-10 * np.abs(want).max())
    np.testing.assert_array_equal(fac.take(good).solve(b[good]), fac.solve(b)[good])


@pytest.mark.parametrize("backend", BACKENDS)
def test_tracking_from_a_given_configuration(backend):
    """EquationsOfMotion from q0 (Newton from coordinates near the configuration, in place of the
    continuation) gives the continuation's configuration and right-hand side; q0 on the other assembly
    branch (M mirrored about the line P-B: the loops close there too), or not a configuration, is refused
    with the reason."""
    from mechanisms import fourbar as model
    from mechsym.core.errors import AssemblyError, InputError

    s = derive(model.build(), backend)
    a = EquationsOfMotion(s, [0.4])
    q = a.tracker.q
    b = EquationsOfMotion(s, [0.4], q0=q + 1e-4)
    assert agree(b.tracker.q, q, 1e-13)
    for y in ([0.4, 1.3], [0.43, -0.7]):
        assert agree(b.rhs(0.0, np.array(y)), a.rhs(0.0, np.array(y)), 1e-12)
    p, m, pivot = q[:2] * 2, q[3:5], np.array([0.1, 0.0])     # crank end P, coupler centre M, rocker pivot B
    u = (pivot - p) / np.linalg.norm(pivot - p)
    mirrored = p + 2 * np.dot(m - p, u) * u - (m - p)
    other = np.concatenate([q[:3], mirrored, [np.arctan2(*(mirrored - p)[::-1])], (pivot + mirrored) / 2,
                            [np.arctan2(*(mirrored - pivot)[::-1])]])
    assert np.max(np.abs(s.solver().f.phi(other, [0.4], s.params()))) < 1e-14
    with pytest.raises(AssemblyError, match="rocker tip M above line AB"):
        EquationsOfMotion(s, [0.4], q0=other)
    for bad in (q[:5], np.full_like(q, np.nan)):
        with pytest.raises(InputError, match="start configuration needs 9 finite coordinates"):
            EquationsOfMotion(s, [0.4], q0=bad)
