"""The numpy backend's one-state tracker on floats (mechsym.codegen.scalar_python) against the batched
numpy kinematics (a different Newton and LAPACK's dense LU) and the simulation route it replaces."""
import numpy as np
import pytest

from conftest import agree
from mechsym.planar.kinematics import STEP_TOL


@pytest.mark.parametrize("name", ["fourbar", "slider_crank"])
def test_state_matches_batched_kinematics(name, request):
    system = request.getfixturevalue(name)
    solver = system.solver()
    track = system.state_step(floats=True).tracker(solver.params, solver.col_scale, STEP_TOL)
    theta = np.linspace(0.1, 2 * np.pi - 0.1, 37)
    kin = system.kinematics(theta)
    omega = 2.5
    for i, th in enumerate(theta):
        pred = kin.q[i] + 1e-3 * solver.col_scale * np.cos(np.arange(len(kin.q[i])))  # a prediction near q
        status, q, jq, a0, app, _ = track(pred, [th], [omega])
        assert status == 0
        assert agree(q, kin.q[i], 1e-12)
        assert agree(jq[:, 0], kin.dq[i, :, 0], 1e-10)
        assert agree(a0, kin.ddq[i] * omega**2, 1e-10)       # gamma is quadratic in the rates
        assert agree(app, system.applied(kin.q[i], solver.params), 1e-12)


def test_singular_or_unreachable_is_a_status(fourbar):
    solver = fourbar.solver()
    track = fourbar.state_step(floats=True).tracker(solver.params, solver.col_scale, STEP_TOL, maxit=3)
    q = fourbar.kinematics([0.5]).q[0]
    status = track(q + 1e3, [0.5], [0.0])[0]
    assert status in (1, 2)
    status = track(np.full_like(q, np.inf), [0.5], [0.0])[0]
    assert status in (1, 2)


def test_forward_matches_the_configuration_tracker_route(fourbar):
    """The reduced ODE through the scalar tracker against the same ODE through ConfigurationTracker
    (the route the implicit methods keep): same motion within the rtol's accuracy."""
    fast = fourbar.forward(0.2, 0.3, 1.0, 0.5, rtol=1e-11, atol=1e-11)
    slow = fourbar.forward(0.2, 0.3, 1.0, 0.5, rtol=1e-11, atol=1e-11, method="Radau")
    assert agree(fast["theta"], slow["theta"], 1e-7)
    assert agree(fast["omega"], slow["omega"], 1e-6)
