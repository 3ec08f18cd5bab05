"""The C tracker walks on its own: a state of a one-coordinate mechanism that ms_track cannot settle at once
(an integrator's trial stage far from the last solved state, a state Newton moved far from its prediction)
is reached by ms_walk (advance's checked continuation in C), never handed to ConfigurationTracker; the runs
equal the numpy route's, and a walk that stops is a rejected step named as the numpy route names it."""
import numpy as np
import pytest

from conftest import agree
from mechanisms import fourbar, slider_crank
from mechsym import derive
from mechsym.codegen import c_backend
from mechsym.core.runner import StepRejected
from mechsym.planar.simulate import simulate
from mechsym.planar.tracking import CompiledTracker, ConfigurationTracker, tracker
from test_branch_c import kite
from test_simulate import double_pendulum

pytestmark = pytest.mark.skipif(c_backend.compiler() is None, reason="no C compiler")


@pytest.fixture
def spy(monkeypatch):
    """Counts of ConfigurationTracker.state calls (hand-overs from CompiledTracker) and of CompiledTracker's walks. A spy
    because the property is the route, not the result: a state handed over to the Python tracker gets the
    same configuration as one walked in C (each test also compares the results with the numpy route's)."""
    count = {"at": 0, "walk": 0}
    state, walked = ConfigurationTracker.state, CompiledTracker._walked

    def counting_at(self, theta, thetad):
        count["at"] += 1
        return state(self, theta, thetad)

    def counting_walk(self, *args):
        count["walk"] += 1
        return walked(self, *args)

    monkeypatch.setattr(ConfigurationTracker, "state", counting_at)
    monkeypatch.setattr(CompiledTracker, "_walked", counting_walk)
    return count


def _reference(omega):
    return derive(fourbar.build(), backend="numpy").forward(0.0, 0.0, omega, 0.3, dt=0.01, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("rtol", [1e-6, 1e-3])
def test_far_trial_stages_are_walked_in_c(spy, rtol):
    """fourbar at 20 rad/s (tests/test_tracking.py's far trial stages): simulate on C walks to every stage
    ms_track cannot settle, with no hand-over, within the accuracy documented for the rtol (30 rtol in the
    angle, 300 rtol in the speed); at rtol 1e-6 it equals the numpy route's run. (At rtol 1e-3 the run's
    trial stages reach 1e7 rad/s^2, where the two routes' right-hand sides, equal to 1e-10, part by rounding
    growth: 2e-4 apart, as before the walk.)"""
    ref = _reference(20.0)
    c = simulate(derive(fourbar.build(), "c"), [0.0], [20.0], 0.3, dt=0.01, rtol=rtol)
    assert spy["at"] == 0 and spy["walk"] > 0
    for col, tol in (("theta", 30 * rtol), ("thetad", 300 * rtol)):
        assert agree(c[col], ref["theta" if col == "theta" else "omega"], tol)
    if rtol == 1e-6:
        num = simulate(derive(fourbar.build(), backend="numpy"), [0.0], [20.0], 0.3, dt=0.01, rtol=rtol)
        assert agree(c["theta"], num["theta"], 1e-9) and agree(c["thetad"], num["thetad"], 1e-9)


def test_a_trial_state_far_from_every_solved_one_is_walked_from_a_period_away(spy):
    """fourbar at 20 rad/s for 1 s, rtol 1e-3: stages more than 64 continuation steps from every solved state
    are walked from one shifted by whole crank turns; the run ends, and over the first 0.3 s keeps the
    accuracy documented for rtol 1e-3 (before, the hand-overs left the C run 0.4 of the angle's range away
    from the numpy run at 1 s)."""
    c = simulate(derive(fourbar.build(), "c"), [0.0], [20.0], 1.0, dt=0.01, rtol=1e-3)
    ref = derive(fourbar.build(), backend="numpy").forward(0.0, 0.0, 20.0, 0.3, dt=0.01, rtol=1e-10, atol=1e-10)
    assert spy["at"] == 0 and spy["walk"] > 0
    assert len(c["t"]) == 101 and np.all(np.isfinite(c["thetad"]))
    assert np.max(np.abs(c["theta"][:31] - ref["theta"])) < 30e-3 * np.max(np.abs(ref["theta"]))


@pytest.mark.parametrize("case", ["slider-crank", "kite"])
def test_walks_follow_the_numpy_route(spy, case):
    """slider-crank at 40 rad/s, rtol 1e-3 (far trial stages) and the kite through its near change point
    (tests/test_branch_c.py: a state Newton moved far from its prediction, checked for the branch): no
    hand-over, and the run equals the numpy route's to 1e-9."""
    build, th0, om0, dt, rtol = ((slider_crank.build, 0.0, 40.0, 0.01, 1e-3) if case == "slider-crank"
                                 else (kite, 2.0, 100.0, 0.005, 1e-10))
    num = simulate(derive(build(), backend="numpy"), [th0], [om0], 0.3, dt=dt, rtol=rtol)
    spy["at"] = 0
    runs = [num, simulate(derive(build(), "c"), [th0], [om0], 0.3, dt=dt, rtol=rtol)]
    assert spy["at"] == 0 and spy["walk"] > 0
    if case == "kite":
        assert runs[0]["theta"][-1] > 3 * np.pi
    assert agree(runs[1]["theta"], runs[0]["theta"], 1e-9) and agree(runs[1]["thetad"], runs[0]["thetad"], 1e-9)


def test_a_walk_that_stops_is_a_rejected_step_named_as_on_numpy(spy):
    """On the kite without a gap (a dead point at pi): a state at the dead point, past it, more than 64
    continuation steps away or non-finite (a stage after a rejected one) is StepRejected with the numpy tracker's message, the tracker left at its last
    solved state; a reachable state gives the numpy tracker's configuration."""
    trackers = []
    for backend in ("numpy", "c"):
        s = derive(kite(0.0), backend)
        trackers.append(tracker(s, s.solver(), [2.0]))
    num, c = trackers
    assert isinstance(c, CompiledTracker)
    q_num = num.state([2.9], [1.0])[0]
    spy["at"] = 0
    q_c = c.state([2.9], [1.0])[0]
    assert agree(q_c, q_num, 1e-12) and spy["at"] == 0
    for th in (np.pi, 3.5, 60.0, np.nan):
        messages = []
        for t in (num, c):
            at, walks = spy["at"], spy["walk"]
            with pytest.raises(StepRejected) as exc:
                t.state([th], [1.0])
            messages.append(str(exc.value).split(" (condition number")[0])
            assert t.theta[0] == 2.9
        assert spy["at"] == at and spy["walk"] > walks, th  # the C tracker's own walk, no hand-over
        assert messages[0] == messages[1], th


def test_several_coordinates_still_hand_over(spy, monkeypatch):
    """advance is one-coordinate: on the double pendulum a state ms_track does not settle goes to
    ConfigurationTracker (no walk), with the numpy route's values."""
    from mechsym.planar.simulate import EquationsOfMotion

    num, c = EquationsOfMotion(double_pendulum("numpy"), [0.3, 1.0]), EquationsOfMotion(double_pendulum("c"), [0.3, 1.0])
    assert isinstance(c.tracker, CompiledTracker) and c.tracker.walk is None
    track = c.tracker.track
    monkeypatch.setattr(c.tracker, "track", lambda *args: (1,) + track(*args)[1:])
    y = np.array([0.35, 0.95, 0.2, -0.1])
    spy["at"] = 0
    assert agree(c.rhs(0.0, y), num.rhs(0.0, y), 1e-12)
    assert spy["at"] >= 1 and spy["walk"] == 0


def test_ms_walk_refuses_a_target_it_cannot_step_to():
    """ms_walk returns status 1, q untouched, for a non-finite target or one more than 10^6 steps away
    (its step count would overflow), and reaches a target within reach as the numpy sweep does."""
    from mechsym.planar.kinematics import STEP_TOL

    s = derive(fourbar.build(), "c")
    solver = s.solver()
    q0 = solver.sweep(np.array([[0.0]])).q[0]
    walk = s.functions.walker(solver.params, solver.col_scale, STEP_TOL, solver.step[0])
    for target in (np.nan, np.inf, 2e6 * solver.step[0]):
        status, q, *_ = walk(q0, 0.0, target, [1.0])
        assert status == 1 and np.array_equal(q, q0), target
    status, q, *_ = walk(q0, 0.0, 2.5, [1.0])
    assert status == 0 and agree(q, solver.sweep(np.array([[2.5]])).q[0], 1e-12)
