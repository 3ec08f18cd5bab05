"""Andrews' squeezing mechanism (mechanisms/andrews.py, its spring a force element) run forward to
t = 0.03 s against the Test Set for IVP Solvers' published reference solution (Mazzia, Magherini,
Iavernaro, release 2.3, problem "andrews": PSIDE at rtol = atol = 1e-14, good to about 1e-10 relative) and
against a DOP853 integration at rtol 1e-14 of the test set's own equations written by hand
(tests/oracles/andrews_testset.py; stored in tests/reference/andrews_dop853.py with how it was made)."""
import numpy as np
import pytest

from mechanisms import andrews
from mechsym import derive
from oracles import andrews_testset as testset
from reference import andrews_dop853


def coordinates(system, beta, omega):
    """The test set's seven coordinates (beta, Theta, gamma, Phi, delta, Omega, epsilon) and their rates
    from the body angles and angular velocities of mechanisms/andrews.py at crank angle beta, speed omega."""
    k = system.kinematics_table([beta], omega=omega)

    def relative(column):
        b = {n: k[f"{n}.{column}"][0] for n in ("crank", "rod", "link3", "link4", "link5", "link6", "link7")}
        return np.array([b["crank"], b["rod"] - b["crank"], b["link3"], b["link4"] - b["link5"], b["link5"],
                         b["link6"] - b["link7"], b["link7"]])

    return relative("angle"), relative("omega")


def turns(a, b):
    """a - b with the angles' whole turns taken out."""
    return (np.asarray(a) - np.asarray(b) + np.pi) % (2 * np.pi) - np.pi


@pytest.mark.parametrize("backend", ["c", "numpy"])
def test_forward_matches_the_test_set_reference(backend):
    system = derive(andrews.build(), backend)
    run = system.forward(andrews.MOM, andrews.BETA0, 0.0, 0.03, dt=0.03, rtol=1e-12, atol=1e-12)
    assert run["t"][-1] == 0.03
    q, qd = coordinates(system, run["beta"][-1], run["omega"][-1])
    assert abs(qd[0] - run["omega"][-1]) <= 1e-12 * abs(qd[0])
    # the published reference, norm-wise (docs/conventions.md) within 2e-9
    assert np.max(np.abs(turns(q, testset.REFERENCE_Q))) <= 2e-9 * np.max(np.abs(testset.REFERENCE_Q))
    assert np.max(np.abs(qd - testset.REFERENCE_QD)) <= 2e-9 * np.max(np.abs(testset.REFERENCE_QD))
    # the stored tight integration of the test set's own equations within 1e-10
    assert np.max(np.abs(turns(q, andrews_dop853.ANGLES))) <= 1e-10 * np.max(np.abs(andrews_dop853.ANGLES))
    assert np.max(np.abs(qd - andrews_dop853.SPEEDS)) <= 1e-10 * np.max(np.abs(andrews_dop853.SPEEDS))
    # the spring's columns: its length from D and C, its force c0 (length - l0)
    length = run["spring.length"][-1]
    assert abs(run["spring.force"][-1] - 4530.0 * (length - 0.07785)) <= 1e-12 * 4530.0 * length


def test_the_oracle_is_consistent():
    """The hand-written test-set equations: G is dg/dq and h is (dG/dq q') q' (complex-step derivatives of
    the oracle's own g and G, exact to rounding), and the initial values close the loops."""
    rng = np.random.default_rng(3)
    q, qd = testset.Q0 + 0.1 * rng.standard_normal(7), rng.standard_normal(7)
    _, _, G, h, g0 = testset.parts(q, qd)
    step = 1e-30
    jac = np.array([testset.parts(q + 1j * step * np.eye(7)[j], qd)[4].imag / step for j in range(7)]).T
    assert np.max(np.abs(jac - G)) < 1e-14
    h_cs = testset.parts(q + 1j * step * qd, qd)[2].imag / step @ qd
    assert np.max(np.abs(h_cs - h)) < 1e-13 * np.max(np.abs(h))
    assert np.max(np.abs(testset.parts(testset.Q0, np.zeros(7))[4])) < 1e-15
    assert np.max(np.abs(g0)) > 1e-3   # (the perturbed state does not close them: the check above can fail)
