"""The run-time block of the sparse elimination: its static order (chosen on solved configurations, each
pivot checked at run time) against the dense LU it falls back to, and the one-call C kinematics sweep
against the numpy route."""
import numpy as np
import pytest

from mechanisms import pasibot as pb
from mechanisms import fourbar
from mechsym import derive
from mechsym.codegen import c_backend, sparse_plan
from mechsym.planar.solver import Solver

needs_c = pytest.mark.skipif(c_backend.compiler() is None, reason="no C compiler")


def rel(a, b):
    return np.max(np.abs(a - b)) / np.max(np.abs(b))


@needs_c
def test_pasibot_block_is_factorised_by_its_static_order_over_a_turn():
    """PASIBOT's 22 x 22 block (parallelograms make entries of its pattern vanish identically): every
    sample of a crank turn takes the static order, and both solves match LAPACK on the dense Phi_q."""
    c, ref = pb.system("hip", "unprimed", "c"), pb.system("hip", "unprimed")
    theta = np.linspace(0.0, 2 * np.pi, 181)
    kin = c.kinematics(theta)
    fac = c.functions.factor(kin.q.T, kin.params)
    assert np.all(fac.piv[:, 0] < 0)
    b = np.random.default_rng(1).standard_normal(kin.q.shape)
    jac = ref.kin.jac(kin.q.T, kin.params)
    assert rel(fac.solve(b), np.linalg.solve(jac, b[:, :, None])[:, :, 0]) < 1e-11
    assert rel(fac.solve_t(b), np.linalg.solve(np.swapaxes(jac, 1, 2), b[:, :, None])[:, :, 0]) < 1e-11


@needs_c
def test_a_pivot_refused_at_run_time_falls_back_to_the_dense_lu(tmp_path, monkeypatch):
    """With a threshold no pivot meets, every sample goes the dense route: the inverse dynamics agrees with
    the static route's to rounding."""
    theta = np.linspace(0.0, 2 * np.pi, 73)
    fast = derive(fourbar.build(), backend="c")
    monkeypatch.setenv("MECHSYM_CACHE", str(tmp_path))
    monkeypatch.setattr(sparse_plan, "TAU", 1e300)
    dense = derive(fourbar.build(), backend="c")
    q = fast.kinematics(theta).q
    assert np.all(fast.functions.factor(q.T, fast.params()).piv[:, 0] < 0)
    assert np.all(dense.functions.factor(q.T, dense.params()).piv[:, 0] >= 0)
    a, b = fast.inverse(theta, 3.0, 1.0), dense.inverse(theta, 3.0, 1.0)
    for name in a.names:
        assert np.allclose(a[name], b[name], rtol=0, atol=1e-12 * np.max(np.abs(b[name])) + 1e-300), name


@needs_c
def test_c_sweep_in_one_call_equals_the_numpy_route(monkeypatch):
    """System.kinematics of one coordinate on C runs no Python Newton (one ms_kinematics call) and gives the
    numpy route's q, q', q'' to 1e-12 (PASIBOT on its support foot over a step)."""
    theta = np.linspace(np.pi / 2, 1.5 * np.pi, 401)
    ref = pb.system("foot", "unprimed").kinematics(theta)
    calls = []
    newton = Solver.newton
    monkeypatch.setattr(Solver, "newton", lambda self, *a: calls.append(1) or newton(self, *a))
    c = pb.system("foot", "unprimed", "c")
    c.kinematics(theta[:1])
    calls.clear()
    kin = c.kinematics(theta)
    assert not calls
    for name in ("q", "dq", "ddq"):
        assert rel(getattr(kin, name), getattr(ref, name)) < 1e-12, name
