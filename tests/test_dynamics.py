"""Newton-Euler against independent routes: Lagrange reduced form, power balance, potential energy,
energy conservation, substitution back into the symbolic rows."""
import numpy as np
import pytest
import sympy as sp

from conftest import agree
from mechsym.planar.dynamics import energies
from mechsym.planar.forward import forward_reactions
from mechsym.planar.reduced import reduced
from mechsym.planar.equations import inverse as inverse_analysis, symbolic_system

MODELS = ["fourbar", "slider_crank"]
N = 512
THETA = 2 * np.pi * np.arange(N) / N


def spectral_derivative(values):
    """d/dtheta of a smooth periodic function sampled on THETA (exact for band-limited data)."""
    k = np.fft.rfftfreq(len(values), d=1.0 / len(values))
    return np.fft.irfft(1j * k * np.fft.rfft(values), n=len(values))


@pytest.fixture(params=MODELS)
def system(request):
    return request.getfixturevalue(request.param)


def test_loop_residuals_and_velocity_coefficients(system):
    kin = system.kinematics(THETA)
    r = system.kin.phi(kin.q.T, kin.theta.T, kin.params)
    assert np.max(np.abs(r)) < 1e-12
    # velocity and acceleration coefficients against the spectral derivative of the positions
    for i in range(kin.q.shape[1]):
        unwrapped = kin.q[:, i] - (THETA if i % 3 == 2 and np.ptp(kin.q[:, i]) > 6 else 0)
        d1 = spectral_derivative(unwrapped) + (1 if i % 3 == 2 and np.ptp(kin.q[:, i]) > 6 else 0)
        assert np.max(np.abs(d1 - kin.dq[:, i, 0])) < 1e-8 * max(1, np.max(np.abs(kin.dq[:, i, 0])))
        d2 = spectral_derivative(kin.dq[:, i, 0])
        assert np.max(np.abs(d2 - kin.ddq[:, i])) < 1e-7 * max(1, np.max(np.abs(kin.ddq[:, i])))


def test_newton_euler_equals_lagrange(system):
    kin = system.kinematics(THETA)
    big_m, half_dm, g = reduced(system, kin)
    for omega, alpha in [(0.0, 0.0), (3.0, 0.0), (7.0, -40.0)]:
        torque = system.inverse(THETA, omega, alpha)["torque"]
        assert agree(torque, big_m * alpha + half_dm * omega**2 + g, 1e-9)


def test_power_balance(system):
    """T omega = d(KE + PE)/dt at constant speed, the derivative taken spectrally from the energies."""
    omega = 4.0
    kin = system.kinematics(THETA)
    ke, pe = energies(system, kin, np.full(N, omega))
    de_dt = omega * spectral_derivative(ke + pe)
    torque = system.inverse(THETA, omega)["torque"]
    assert agree(torque * omega, de_dt, 1e-9)


def test_quasi_static_torque_is_potential_gradient(system):
    kin = system.kinematics(THETA)
    _, pe = energies(system, kin, np.zeros(N))
    torque = system.inverse(THETA, 5.0, inertia=False)["torque"]
    assert agree(torque, spectral_derivative(pe), 1e-9)


def test_speed_sweep_uses_linearity(system):
    table = system.inverse(THETA, [1.0, 2.0, 5.0])
    assert len(table) == 3 * N
    single = system.inverse(THETA, 5.0)
    assert np.array_equal(table["torque"][2 * N:], single["torque"])


def test_rows_hold_when_substituted_back(system):
    """Each body's three rows, evaluated with sympy from the printed system, vanish at the solution."""
    idx = [0, 100, 333]
    omega, alpha = 3.0, 11.0
    kin = system.kinematics(THETA[idx])
    sol = system.inverse(THETA[idx], omega, alpha)
    a, u, c = symbolic_system(system.equations, inverse_analysis(system.mechanism))
    con = system.constraints
    qdd = kin.dq[:, :, 0] * alpha + kin.ddq * omega**2
    for k in range(len(idx)):
        subs = dict(zip(con.params, kin.params))
        subs.update(zip(con.q, kin.q[k]))
        subs.update(zip(con.qdd, qdd[k]))
        subs.update({sym: sol[str(sym)][k] for sym in u})
        residual = np.array((a * u - c).subs(subs), dtype=float)
        assert np.max(np.abs(residual)) < 1e-9 * np.max(np.abs(np.array(c.subs(subs), dtype=float)))


def test_energy_conserved_in_free_swing(system):
    table = system.forward(0.0, 0.0, 0.0, 2.0, rtol=1e-10, atol=1e-10)
    theta, omega = table["theta"], table["omega"]
    assert np.ptp(theta) > 0.5  # a real swing
    kin = system.kinematics(theta)
    ke, pe = energies(system, kin, omega)
    assert np.max(np.abs((ke + pe) - (ke[0] + pe[0]))) < 1e-8 * ke.max()


def test_forward_newton_euler_matches_reduced_form(fourbar):
    table = fourbar.forward(0.3, 0.5, 1.0, 0.5, rtol=1e-10, reactions=True)
    kin = fourbar.kinematics(table["theta"])
    big_m, half_dm, g = reduced(fourbar, kin)
    thetadd = (table["torque"] - half_dm * table["omega"] ** 2 - g) / big_m
    assert agree(table["thetadd"], thetadd, 1e-9)
    # round trip: inverse dynamics at the simulated state gives back the applied torque
    k = np.arange(0, len(table), 97)
    back = [fourbar.inverse(table["theta"][[i]], table["omega"][i], table["thetadd"][i])["torque"][0] for i in k]
    assert agree(back, table["torque"][k], 1e-9)


def test_general_solve_agrees_with_inverse_and_forward(slider_crank):
    """The several-coordinate solver reproduces the one-coordinate routes (inverse and forward)."""
    from mechsym.planar.equations import forward as forward_analysis

    theta = THETA[::16]
    omega, alpha = 2.5, -3.0
    inv = slider_crank.inverse(theta, omega, alpha)
    got = slider_crank.solve(theta[:, None], omega, inverse_analysis(slider_crank.mechanism), thetadd=alpha)
    assert agree(got["torque"], inv["torque"], 1e-12)
    fwd = slider_crank.solve(theta[:, None], omega, forward_analysis(slider_crank.mechanism), forces={"torque": inv["torque"]})
    assert agree(fwd["thetadd"], np.full_like(theta, alpha), 1e-9)
    assert agree(fwd["guide.fn"], inv["guide.fn"], 1e-9)


def test_point_force_and_body_torque_by_virtual_work():
    """Loads on a fourbar (a force at the coupler's far end C, a torque on the rocker): the quasi-static
    motor torque equals dV/dtheta minus the loads' generalised force F . dC/dtheta + tau dphi/dtheta,
    with the derivatives taken spectrally from the positions (no Newton-Euler row involved)."""
    from mechanisms import fourbar as model
    from mechsym import derive

    m = model.build()
    fx, fy, tau = 0.3, -1.2, 0.05
    m.force("coupler", "C", fx, fy)
    m.torque("rocker", tau)
    s = derive(m, backend="numpy")
    kin = s.kinematics(THETA)
    _, pe = energies(s, kin, np.zeros(N))
    table = s.kinematics_table(THETA)
    rocker = np.unwrap(table["rocker.angle"])
    generalised = (fx * spectral_derivative(table["C.x"]) + fy * spectral_derivative(table["C.y"])
                   + tau * spectral_derivative(rocker))
    torque = s.inverse(THETA, 0.0, inertia=False)["torque"]
    assert agree(torque, spectral_derivative(pe) - generalised, 1e-9)
    # and with inertia, against the Lagrange reduced form (which carries the loads in G)
    big_m, half_dm, g = reduced(s, kin)
    assert agree(s.inverse(THETA, 4.0, 2.0)["torque"], 2.0 * big_m + 16.0 * half_dm + g, 1e-9)


def test_extended_analysis_extra_unknown_and_row():
    """An analysis the model extends: the vertical force F at C becomes an unknown (a parameter moved
    into U) and an extra row ties the motor torque to zero; F is then what holds the linkage at speed,
    F dCy/dtheta = 1/2 M' omega^2 + G0 from the reduced form without F."""
    from mechanisms import fourbar as model
    from mechsym import derive
    from mechsym.planar.equations import Analysis

    m = model.build()
    f = m.parameter("F", 0.0, "N", "vertical force at C", positive=False)
    m.force("coupler", "C", 0, f)
    s = derive(m, backend="numpy")
    where = (THETA > 0.15) & (THETA < 0.9)  # C falls steeply here (dCy/dtheta passes through 0 elsewhere)
    theta = THETA[where]
    held = Analysis("held", extra_unknowns=("F",), extra_rows=(("no motor", sp.Symbol("torque", real=True)),))
    out = s.solve(theta[:, None], 3.0, held)
    assert np.max(np.abs(out["torque"])) < 1e-12
    kin = s.kinematics(theta)
    _, half_dm, g0 = reduced(s, kin)  # F = 0 (its default): G without the force
    dcy = spectral_derivative(s.kinematics_table(THETA)["C.y"])[where]
    assert agree(out["F"] * dcy, half_dm * 9.0 + g0, 1e-9)


def test_scotch_yoke_slot_and_prismatic_in_closed_form():
    """A crank whose pin P runs in the vertical slot of a yoke that slides along x: x_yoke = l cos(theta).
    Torque, slot force and guide force against the closed forms from Lagrange and Newton."""
    from mechsym import derive
    from mechsym.planar.model import Mechanism

    m = Mechanism("scotch-yoke")
    length = m.parameter("l", 0.08, "m")
    m_yoke = m.parameter("m_yoke", 0.7, "kg")
    g = m.gravity_down()
    m.ground(points={"O": (0, 0)})
    m.bar("crank", ("O", "P"), length, 2.0)
    m.body("yoke", mass=m_yoke, inertia=0.01, com=(0, 0), points={"Y": (0, 0)})
    m.revolute("O", "ground", "O", "crank")
    m.prismatic("guide", "ground", "O", "yoke", "Y", axis=(1, 0))
    m.slot("slot", "yoke", "Y", "crank", "P", axis=(0, 1))
    m.coordinate("theta", "O", force="torque", guess_at=0.3)
    s = derive(m, backend="numpy")
    theta = np.linspace(0.1, 2 * np.pi - 0.1, 50)
    omega, alpha = 3.0, -2.0
    out = s.inverse(theta, omega, alpha)
    l, my, mc, gv = 0.08, 0.7, 0.16, 9.81
    i_o = mc * l**2 / 3
    sin, cos = np.sin(theta), np.cos(theta)
    torque = (i_o + my * l**2 * sin**2) * alpha + my * l**2 * sin * cos * omega**2 + mc * gv * l / 2 * cos
    xdd = -l * (cos * omega**2 + sin * alpha)
    assert agree(out["torque"], torque, 1e-12)
    assert agree(out["slot.fn"], my * xdd, 1e-12)  # slot normal (-1, 0): the yoke's push on the pin
    assert agree(out["guide.fn"], np.full_like(theta, my * gv), 1e-12)  # the ground carries the yoke


@pytest.mark.parametrize("name", MODELS)
def test_forward_event_at_the_turning_point(name, request):
    """From rest at crank angle 0 the mechanism swings back; the rising zero of omega (terminal) is found,
    and a run that simply ends at the event time ends there with omega = 0 and the starting energy."""
    from mechsym.planar.forward import Crossing

    system = request.getfixturevalue(name)
    table = system.forward(0.0, 0.0, 0.0, 2.0, rtol=1e-11, atol=1e-11,
                           events=[Crossing("omega", 0.0, direction=1, terminal=True)])
    assert [e.name for e in table.events] == ["omega = 0 rising"]
    assert table.status == "stopped" and "omega = 0 rising" in table.message
    t_event = table.events[0].t
    assert table["t"][-1] <= t_event < 2.0
    peak = np.max(np.abs(table["omega"]))
    end = system.forward(0.0, 0.0, 0.0, t_event, rtol=1e-11, atol=1e-11)
    assert abs(end["omega"][-1]) < 1e-7 * peak
    kin = system.kinematics(end["theta"][[0, -1]])
    _, pe = energies(system, kin, np.zeros(2))
    ke_peak = energies(system, system.kinematics(table["theta"]), table["omega"])[0].max()
    assert abs(pe[1] - pe[0]) < 1e-8 * ke_peak


def test_reduced_ode_jacobian_is_exact(system):
    """The reduced ODE's exact Jacobian (third-order coefficients from Phi_q q''' = -gamma3): d/dtheta
    against the spectral derivative of f along theta; d/domega against f's quadratic dependence on omega,
    (f(w + 1) - f(w - 1)) / 2 = df/dw exactly; thetadd against the forward Newton-Euler system."""
    f, jac = system.ode(THETA, 3.0, 0.1)
    assert np.all(jac[:, 0, 0] == 0) and np.all(jac[:, 0, 1] == 1) and np.all(f[:, 0] == 3.0)
    assert agree(jac[:, 1, 0], spectral_derivative(f[:, 1]), 1e-9)
    f_up, f_down = system.ode(THETA, 4.0, 0.1)[0], system.ode(THETA, 2.0, 0.1)[0]
    assert agree(jac[:, 1, 1], (f_up[:, 1] - f_down[:, 1]) / 2, 1e-12)
    ne = forward_reactions(system, None, THETA, np.full(N, 3.0), np.full(N, 0.1))["thetadd"]
    assert agree(f[:, 1], ne, 1e-12)


def test_implicit_integration_uses_the_exact_jacobian(fourbar):
    from mechsym.core.errors import InputError

    a = fourbar.forward(0.05, 0.0, 0.0, 0.5, rtol=1e-10, atol=1e-10, method="BDF")
    b = fourbar.forward(0.05, 0.0, 0.0, 0.5, rtol=1e-12, atol=1e-12)
    assert agree(a["theta"], b["theta"], 1e-6) and agree(a["omega"], b["omega"], 1e-6)
    with pytest.raises(InputError, match="needs the exact Jacobian"):
        fourbar.forward(lambda t, th, w: 0.0, 0.0, 0.0, 0.5, method="Radau")


@pytest.mark.parametrize("backend", ["numpy", "c"])
def test_solve_through_the_factorisation_matches_dense_assembly(backend, monkeypatch):
    """solve_at through the factorisation of Phi_q (A bordered: free coordinates, an unknown force, an extra
    unknown, extra rows, a known force) against the dense assembly and LAPACK solve of the same A; and the
    free crank whose torque an extra row fixes to 0.2 N m accelerates as the forward analysis under 0.2 N m."""
    from mechanisms import fourbar as model
    from mechsym import derive
    from mechsym.codegen import c_backend
    from mechsym.planar import dynamics
    from mechsym.planar.dynamics import solve_at
    from mechsym.planar.equations import Analysis, forward as forward_analysis
    from mechsym.planar.kinematics import Kinematics

    if backend == "c" and c_backend.compiler() is None:
        pytest.skip("no C compiler")
    m = model.build()
    f = m.parameter("F", 0.0, "N", "vertical force at C", positive=False)
    m.force("coupler", "C", 0, f)
    s = derive(m, backend)
    torque, f_sym = sp.Symbol("torque", real=True), sp.Symbol("F", real=True)
    analyses = {
        "forward": forward_analysis(s.mechanism),
        "tied": Analysis("tied", free=("theta",), unknown_forces=("torque",), extra_rows=(("set", torque - 0.2),)),
        "held": Analysis("held", extra_unknowns=("F",), extra_rows=(("no motor", torque),)),
        "both": Analysis("both", free=("theta",), unknown_forces=("torque",), extra_unknowns=("F",),
                         extra_rows=(("set", torque - 0.2), ("tie", f_sym - 3 * torque))),
    }
    theta = np.linspace(0.2, 0.8, 5)
    rng = np.random.default_rng(2)
    for count in (1, len(theta)):  # one state (a right-hand side), a batch
        kin = s.kinematics(theta[:count])
        assert kin.factor is not None
        dense = Kinematics(kin.theta, kin.q, kin.dq, kin.ddq, kin.jac, kin.params)
        thetad, thetadd = rng.normal(size=(count, 1)), rng.normal(size=(count, 1))
        out = {}
        for name, analysis in analyses.items():
            forces = {"torque": rng.normal(size=count)} if name == "forward" else {}
            with monkeypatch.context() as mp:  # the factorisation's route assembles no dense A
                mp.setattr(dynamics, "assemble", None)
                out[name] = solve_at(s, kin, thetad, analysis, thetadd, forces)
            want = solve_at(s, dense, thetad, analysis, thetadd, forces)
            assert list(out[name]) == list(want)
            assert agree(np.column_stack(list(out[name].values())), np.column_stack(list(want.values())), 1e-11), name
        assert agree(out["tied"]["torque"], np.full(count, 0.2), 1e-13)
        fwd = solve_at(s, kin, thetad, analyses["forward"], forces={"torque": 0.2})
        assert agree(out["tied"]["thetadd"], fwd["thetadd"], 1e-11)
        assert agree(out["both"]["F"], np.full(count, 0.6), 1e-12)
