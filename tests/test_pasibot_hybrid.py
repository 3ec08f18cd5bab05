"""mechsym.core.hybrid, the general event runner PASIBOT's slip and support switching use: located switches,
resets, deciding targets, the timeline, sampling, and the chattering guard."""
import math

import numpy as np
import pytest

from mechsym.core import hybrid
from mechsym.core.errors import InputError

G = 9.81


def ball(e=0.8, stop_below=None):
    def fall(t, y):
        return [y[1], -G]

    def bounce(t, y):
        return [0.0, -e * y[1]]

    def after(t, y):
        return None if stop_below is not None and y[1] < stop_below else "flight"

    return [hybrid.Mode("flight", fall, (hybrid.Transition("impact", lambda t, y: y[0], after, -1, bounce),))]


def test_bouncing_ball_events_are_exact():
    h, e = 1.0, 0.8
    res = hybrid.run(ball(e), "flight", [h, 0.0], (0.0, 3.0), rtol=1e-12, atol=1e-12)
    times = [ev.t for ev in res.events]
    v1 = math.sqrt(2 * G * h)
    expected = [v1 / G]
    while True:
        nxt = expected[-1] + 2 * e ** len(expected) * v1 / G
        if nxt > 3.0:
            break
        expected.append(nxt)
    assert np.allclose(times, expected, rtol=0, atol=1e-9)
    assert res.status == "done" and res.t_end == 3.0
    # sampling from the dense outputs: the analytic flight between the first two impacts
    t = np.linspace(expected[0], expected[1], 7)
    y, modes = res.sample(t)
    v = e * v1
    assert np.allclose(y[1:, 0], (v * (t - expected[0]) - 0.5 * G * (t - expected[0]) ** 2)[1:], atol=1e-9)
    assert set(modes) == {"flight"}


def test_run_result_table_and_dense_solution_against_free_fall():
    """The hybrid run's table: named columns on the output grid, up to where the run stopped; before the
    first impact the height is the free fall h - g t^2 / 2, both in the table and from the dense solution."""
    h = 1.0
    res = hybrid.run(ball(0.5, stop_below=1.0), "flight", [h, 0.0], (0.0, 10.0), rtol=1e-12, atol=1e-12,
                     n=501, names=["height", "speed"])
    assert res.names == ["t", "height", "speed"] and len(res) == 501
    assert res["t"][-1] == res.t_end and "stopped by impact" in res.message
    first = res.events[0].t
    fall = res["t"] < first
    assert np.allclose(res["height"][fall], h - 0.5 * G * res["t"][fall] ** 2, rtol=0, atol=1e-10)
    t = np.linspace(0.0, first, 9)
    assert np.allclose(res.solution(t)[0], h - 0.5 * G * t ** 2, rtol=0, atol=1e-10)
    assert [e.name for e in res.events] == ["impact"] * len(res.events)
    assert res.events[0].state[1] == pytest.approx(0.5 * math.sqrt(2 * G * h), rel=1e-9)  # after the bounce
    with pytest.raises(InputError, match="3 names for a state of 2"):
        hybrid.run(ball(), "flight", [1.0, 0.0], (0.0, 1.0), names=["a", "b", "c"])


def test_ending_transition_and_timeline():
    res = hybrid.run(ball(0.5, stop_below=1.0), "flight", [1.0, 0.0], (0.0, 10.0), rtol=1e-10)
    assert res.status == "stopped" and res.stopped_by == "impact"
    assert res.events[-1].target is None and res.t_end == res.events[-1].t < 10.0
    assert "flight -> end (impact)" in res.events[-1].describe()
    with pytest.raises(InputError, match="run ended"):
        res.sample([res.t_end + 1.0])


def test_target_decided_by_the_state():
    """A thermostat: heating until 21, cooling until 19; the target function reads the state."""
    def heat(t, y):
        return [1.0]

    def cool(t, y):
        return [-0.5]

    modes = [hybrid.Mode("heat", heat, (hybrid.Transition("hot", lambda t, y: y[0] - 21, lambda t, y: "cool", 1),)),
             hybrid.Mode("cool", cool, (hybrid.Transition("cold", lambda t, y: y[0] - 19, "heat", -1),))]
    res = hybrid.run(modes, lambda t, y: "heat" if y[0] < 20 else "cool", [20.0], (0.0, 20.0))
    times = [e.t for e in res.events]
    assert np.allclose(times[:3], [2.0, 4.0, 8.0], atol=1e-9)  # 20 -> 19 (cool), -> 21, -> 19
    assert list(res.mode_at([0.5, 3.0, 6.0, 8.5])) == ["cool", "heat", "cool", "heat"]


def test_guard_zero_at_start_does_not_fire_against_its_direction():
    mode = hybrid.Mode("up", lambda t, y: [1.0], (hybrid.Transition("back", lambda t, y: y[0], None, -1),))
    res = hybrid.run([mode], "up", [0.0], (0.0, 1.0))
    assert res.status == "done" and not res.events


def test_chattering_is_an_error():
    still = lambda t, y: [0.0]  # noqa: E731
    modes = [hybrid.Mode("a", still, (hybrid.Transition("flip", lambda t, y: y[0], "b", 0),)),
             hybrid.Mode("b", still, (hybrid.Transition("flop", lambda t, y: y[0], "a", 0),))]
    with pytest.raises(InputError, match="without time advancing"):
        hybrid.run(modes, "a", [0.0], (0.0, 1.0))


def test_bad_input():
    with pytest.raises(InputError, match="unknown mode 'nope'"):
        hybrid.run(ball(), "nope", [1.0, 0.0], (0.0, 1.0))
    with pytest.raises(InputError, match="increasing"):
        hybrid.run(ball(), "flight", [1.0, 0.0], (1.0, 0.0))
