"""The C forward route's dense solution (results.DenseSolution over the C integrator's record of every step):
scipy's OdeSolution interface and arithmetic, the numpy route's dense solution, the C table's own grid, a
closed form (the pendulum's elliptic functions) and the event states."""
import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.special import ellipj, ellipk

from conftest import agree
from mechsym import derive
from mechsym.codegen import c_backend
from mechsym.codegen import c_library
from mechsym.codegen.c_library import DENSE_BYTES
from mechsym.core.budget import limit_memory
from mechsym.core.errors import InputError
from mechsym.core.results import DenseSolution
from mechsym.planar.dynamics import energies
from mechsym.planar.forward import Crossing
from mechsym.planar.model import Mechanism

needs_cc = pytest.mark.skipif(c_backend.compiler() is None, reason="no C compiler")


@pytest.fixture(scope="module")
def pair():
    from mechanisms import fourbar

    return derive(fourbar.build(), "numpy"), derive(fourbar.build(), "c")


def pendulum():
    """A uniform bar (1 m, 2 kg) pinned at one end under gravity: psi = phi + pi/2 from hanging down obeys
    psi'' = -(3 g / 2 L) sin psi."""
    m = Mechanism("pendulum")
    m.ground(points={"O": (0, 0)})
    m.bar("bar", ("O", "E"), 1.0, 2.0)
    m.revolute("O", "ground", "O", "bar")
    m.coordinate("phi", "O", "T")
    return m


def test_evaluates_scipys_dop853_interpolant_as_scipy_does():
    """The steps of scipy's own DOP853 run (a Duffing oscillator), kept as DenseSolution coefficients, give
    exactly what scipy's OdeSolution gives: off the steps, on every breakpoint, beyond
    both ends (the first and last polynomial), for a scalar (n_states,) and an unsorted array
    (n_states, len(t))."""
    sol = solve_ivp(lambda t, y: [y[1], -y[0] - y[0] ** 3 - 0.1 * y[1]], (0.0, 7.0), [1.5, 0.0], method="DOP853",
                    rtol=1e-8, dense_output=True).sol
    parts = sol.interpolants
    dense = DenseSolution([p.t_old for p in parts], [p.h for p in parts], [p.y_old for p in parts],
                          [p.F for p in parts], sol.t_max)
    assert (dense.t_min, dense.t_max, dense.n_segments) == (sol.t_min, sol.t_max, sol.n_segments) and sol.n_segments > 10
    assert np.array_equal(dense.ts, sol.ts)
    rng = np.random.default_rng(3)
    t = np.concatenate([rng.uniform(-0.5, 7.5, 3000), sol.ts])
    rng.shuffle(t)
    assert dense(t).shape == (2, len(t))
    assert np.array_equal(dense(t), sol(t))  # the same operations in the same order: the same bits
    for s in (0.0, sol.ts[5], 3.3, 7.0, 8.0):
        assert dense(s).shape == (2,) and np.array_equal(dense(s), sol(s))
    with pytest.raises(ValueError, match="increasing start times"):
        DenseSolution([0.0, 0.0], [1.0, 1.0], np.zeros((2, 2)), np.zeros((2, 7, 2)), 1.0)


@needs_cc
def test_c_solution_agrees_with_the_numpy_route_and_its_own_grid(pair):
    """Off the output grid the C route's dense output agrees with scipy's (numpy route) at a tight rtol; on the
    grid it gives the C table's values to round-off (the same interpolant wrote them); it covers the
    states the numpy route's solution covers, over the same time span."""
    num, c = pair
    a = c.forward(0.2, 0.3, -1.0, 1.0, dt=0.05, rtol=1e-12, atol=1e-12)
    b = num.forward(0.2, 0.3, -1.0, 1.0, dt=0.05, rtol=1e-12, atol=1e-12)
    assert isinstance(a.solution, DenseSolution) and (a.solution.t_min, a.solution.t_max) == (0.0, 1.0)
    assert (b.solution.t_min, b.solution.t_max) == (0.0, 1.0)
    t = np.random.default_rng(0).uniform(0.0, 1.0, 5000)
    ya, yb = a.solution(t), b.solution(t)
    assert ya.shape == yb.shape == (2, len(t)) and np.ptp(ya[0]) > 0.5
    assert agree(ya[0], yb[0], 1e-10) and agree(ya[1], yb[1], 1e-9)
    on_grid = a.solution(a["t"])
    assert agree(on_grid[0], a["theta"], 1e-15) and agree(on_grid[1], a["omega"], 1e-15)
    assert a.solution(0.0) == pytest.approx([0.3, -1.0], abs=1e-15)


@needs_cc
def test_c_solution_follows_the_pendulums_closed_form():
    """Released from rest at psi0 = 2 rad from hanging down: sin(psi/2) = k sn(K(k) - w0 t; k), k = sin(psi0/2),
    w0^2 = 3 g / (2 L), and psi' = -2 k w0 cn dn / cos(psi / 2), over 1.3 periods at 4000 times off the grid;
    the energy along the dense output is constant."""
    system = derive(pendulum(), "c")
    psi0, w0 = 2.0, np.sqrt(1.5 * 9.81)
    k = np.sin(psi0 / 2)
    period = 4 * ellipk(k * k) / w0
    run = system.forward(0.0, psi0 - np.pi / 2, 0.0, 1.3 * period, rtol=1e-11, atol=1e-11)
    t = np.sort(np.random.default_rng(1).uniform(0.0, 1.3 * period, 4000))
    sn, cn, dn, _ = ellipj(ellipk(k * k) - w0 * t, k * k)
    psi = 2 * np.arcsin(k * sn)
    y = run.solution(t)
    assert agree(y[0], psi - np.pi / 2, 1e-9) and agree(y[1], -2 * k * w0 * cn * dn / np.cos(psi / 2), 1e-9)
    ke, pe = energies(system, system.kinematics(y[0]), y[1])
    assert np.max(np.abs(ke + pe - pe[0] - ke[0])) < 1e-9 * np.max(ke)


@needs_cc
def test_event_states_are_the_dense_solution_there_and_a_terminal_event_ends_it(pair):
    """A non-terminal crossing either way and a terminal one: every event's state is the dense solution at its
    time, and the solution ends at the terminal event as scipy's does (t_max), agreeing with it there."""
    num, c = pair
    events = [Crossing("theta", -0.4), Crossing("omega", 0.0, direction=1, terminal=True)]
    a = c.forward(0.0, 0.0, 0.0, 2.0, rtol=1e-12, atol=1e-12, events=events)
    b = num.forward(0.0, 0.0, 0.0, 2.0, rtol=1e-12, atol=1e-12, events=events)
    assert a.status == "stopped" and len(a.events) == 2
    for event in a.events:
        assert np.allclose(a.solution(event.t), event.state, rtol=0, atol=1e-15)
    assert a.solution.t_max == a.events[-1].t == pytest.approx(b.solution.t_max, rel=1e-9)
    t = np.linspace(0.0, a.solution.t_max, 777)
    assert agree(a.solution(t), b.solution(t), 1e-8)


@needs_cc
def test_record_beyond_the_first_buffer_and_under_the_memory_limit(pair, monkeypatch):
    """A run with more steps than the first record holds is run again into a record of the size it reported:
    the same solution; a record above the memory limit is refused with the size and the option, and the same
    run without a dense output (no record) passes under that limit and makes fewer right-hand sides (no
    dense output where neither the grid nor an event needs one)."""
    num, c = pair
    full = c.forward(0.0, 0.0, 0.0, 2.0, dt=0.5, rtol=1e-10, atol=1e-10)
    steps = full.solution.n_segments
    monkeypatch.setattr(c_library, "DENSE_CHUNK", 8)
    grown = c.forward(0.0, 0.0, 0.0, 2.0, dt=0.5, rtol=1e-10, atol=1e-10)
    assert steps > 8 and np.array_equal(grown.solution.ts, full.solution.ts)
    assert np.array_equal(grown.solution.F, full.solution.F)
    with limit_memory(steps * DENSE_BYTES // 2), \
            pytest.raises(InputError, match=rf"dense output of the forward run of 'fourbar' \({steps} steps.*--max-memory"):
        c.forward(0.0, 0.0, 0.0, 2.0, dt=0.5, rtol=1e-10, atol=1e-10)
    with limit_memory(steps * DENSE_BYTES // 2):
        bare = c.forward(0.0, 0.0, 0.0, 2.0, dt=0.5, rtol=1e-10, atol=1e-10, dense_output=False)
    assert bare.solution is None and bare.nfev < full.nfev
    assert agree(bare["theta"], full["theta"], 1e-10)
    assert num.forward(0.0, 0.0, 0.0, 0.5, dense_output=False).solution is None
