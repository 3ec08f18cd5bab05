"""PASIBOT (issue 4): geometry against the spec's numbers and closed forms, the 69 x 69 Newton-Euler system
against virtual power and the symbolic rows, forward/inverse round trip, support switching, slip with its
energy balance, the start torque and the minimum friction, the command line."""

import numpy as np
import pytest
import sympy as sp

from conftest import agree
from mechanisms import pasibot as pb
from mechanisms import pasibot_study as st
from mechsym.codegen import c_backend
from mechsym.planar.dynamics import energies
from mechsym.planar.reduced import reduced

L8 = 0.030
needs_c = pytest.mark.skipif(c_backend.compiler() is None, reason="no C compiler")


STEP = np.linspace(np.pi / 2, 1.5 * np.pi, 241)


@pytest.fixture(scope="module")
def hip():
    return pb.system("hip")


@pytest.fixture(scope="module")
def foot():
    return pb.system("foot", "unprimed")


def spectral_derivative(values):
    k = np.fft.rfftfreq(len(values), d=1.0 / len(values))
    return np.fft.irfft(1j * k * np.fft.rfft(values), n=len(values))


# -- the spec's closed forms (section 2.3), used only here ------------------------------------------------
def closed_forms(t8):
    c, s = np.cos(t8), np.sin(t8)
    rho = np.sqrt(100 - 60 * c - 16 * c**2)
    th7 = np.arccos((-4 * c**2 + 13 * c - 10 + s * rho) / (25 - 20 * c))
    th9 = np.arccos((4 * c**2 - 13 * c + 10 + s * rho) / (25 - 20 * c))
    wx, wy = 2.5 * (np.cos(th7) + np.cos(th9)), 2.5 * (np.sin(th7) + np.sin(th9)) - 12
    a = wx**2 + wy**2
    th6 = np.arccos((wx * (-27 - a) - wy * np.sqrt(144 * a - (27 + a) ** 2)) / (12 * a))
    th3 = np.arccos((wx * (27 - a) + wy * np.sqrt(36 * a - (27 - a) ** 2)) / (6 * a))
    th10 = np.arcsin((5 * np.sin(th7) - np.sin(t8) - 4) / 4.2)
    return {"7": th7, "9": th9, "6": th6, "3": th3, "10": th10}


def wrap(a):
    return np.angle(np.exp(1j * a))


def test_declaration_counts(foot):
    mech = foot.mechanism
    assert len(mech.bodies) == 24 and mech.fixed == "1"
    assert len(foot.constraints.bodies) == 23 and foot.constraints.n == 69
    pins = [j for j in mech.joints.values() if type(j).__name__ == "Revolute"]
    slots = [j for j in mech.joints.values() if type(j).__name__ == "Slot"]
    assert len(pins) == 33 and len(slots) == 2
    assert foot.topology.grubler == 1


def test_geometry_reproduces_the_spec(hip):
    theta = np.array([np.pi / 2, np.pi, 1.5 * np.pi])
    t = hip.kinematics_table(theta)
    assert np.allclose(np.c_[t["C.x"], t["C.y"]] / L8, [(0, -4), (2, -4), (4, -4)], atol=1e-12, rtol=0)
    assert np.allclose(np.c_[t["E.x"], t["E.y"]] / L8, [(6, -28), (2, -28), (-2, -28)], atol=1e-12, rtol=0)
    # the flying leg is the same leg half a turn later (Eq. 10)
    t2 = hip.kinematics_table(theta + np.pi)
    assert np.allclose(t2["E_f.x"], t["E.x"], atol=1e-14) and np.allclose(t2["C_f.y"], t["C.y"], atol=1e-14)
    assert pb.step_length() / L8 == pytest.approx(8.0, abs=1e-12)
    support = hip.kinematics_table(STEP)
    assert np.ptp(support["E.y"]) / L8 == pytest.approx(0.0195, abs=5e-5)
    assert np.max(np.abs(support["10.angle"])) == pytest.approx(0.00232, abs=5e-6)
    swing = hip.kinematics_table(np.linspace(-np.pi / 2, np.pi / 2, 721))
    assert (np.max(swing["E.y"]) / L8 + 28) == pytest.approx(1.798, abs=5e-4)
    # the pantograph: E - D = -2 (C - D) identically
    full = hip.kinematics_table(np.linspace(0, 2 * np.pi, 73))
    d = np.array([2.0, -12.0]) * L8
    assert np.allclose(full["E.x"] - d[0], -2 * (full["C.x"] - d[0]), atol=1e-14)
    assert np.allclose(full["E.y"] - d[1], -2 * (full["C.y"] - d[1]), atol=1e-14)


def test_angles_match_the_closed_forms_and_loops_close(hip):
    theta = np.linspace(0, 2 * np.pi, 181)
    kin = hip.kinematics(theta)
    assert np.max(np.abs(hip.kin.phi(kin.q.T, kin.theta.T, kin.params))) < 1e-12
    t = hip.kinematics_table(theta)
    for link, ref in closed_forms(theta).items():
        assert np.max(np.abs(wrap(t[f"{link}.angle"] - ref))) < 1e-10, link
    # parallel groups (Eq. 9 under H1): 1 = 5 = 10, 2 = 6 = 12, 3 = 4 = 11, on both legs
    for sfx in ("", "_f"):
        for group in (("1", "5", "10"), ("2", "6", "12"), ("3", "4", "11")):
            for b in group[1:]:
                assert np.max(np.abs(wrap(t[f"{b}{sfx}.angle"] - t[f"{group[0]}{sfx}.angle"]))) < 1e-12


def test_ground_frame_accumulates_steps():
    theta = np.linspace(0.1, 0.1 + 2 * np.pi, 17)
    t = pb.kinematics_table(theta, frame="ground")
    k = pb.step_index(theta)
    support_x = np.where(t["support"] == 0, t["E.x"], t["E_f.x"])
    support_y = np.where(t["support"] == 0, t["E.y"], t["E_f.y"])
    assert np.allclose(support_x, 8 * L8 * k, atol=1e-13) and np.allclose(support_y, 0, atol=1e-13)
    assert np.allclose(np.where(t["support"] == 0, t["1.angle"], t["1_f.angle"]), 0, atol=1e-15)
    # Eq. 11: ground angles are hip angles minus theta1 of the supporting foot
    hipt = pb.kinematics_table(theta, frame="hip")
    th1 = np.where(t["support"] == 0, hipt["1.angle"], hipt["1_f.angle"])
    assert np.max(np.abs(wrap(t["3.angle"] - (hipt["3.angle"] - th1)))) < 1e-12


def test_landing_foot_has_zero_velocity(foot):
    kin = foot.kinematics(np.array([1.5 * np.pi]))
    i = foot.constraints.bodies.index("1_f")
    assert np.max(np.abs(kin.dq[0, 3 * i:3 * i + 3, 0])) < 1e-12
    other = pb.system("foot", "primed")
    m_u, _, g_u = reduced(foot, kin)
    m_p, _, g_p = reduced(other, other.kinematics(np.array([1.5 * np.pi])))
    assert m_u[0] == pytest.approx(m_p[0], rel=1e-12) and g_u[0] == pytest.approx(g_p[0], rel=1e-12)


def test_the_69_unknowns(foot):
    from mechsym.planar.equations import inverse

    names = inverse(foot.mechanism).unknown_names(foot.constraints)
    assert len(names) == 69 and len(set(names)) == 69
    assert names[-1] == "T8" and "j13_8.fx" in names and "j13_10.fn" in names and "j13_10_f.fn" in names
    assert sum(n.endswith(".fn") for n in names) == 2
    table = foot.inverse(STEP[:5], 3.0)
    assert set(names) <= set(table.names)


def test_T8_equals_virtual_power(foot):
    """T8 from A U = C against d(KE + PE)/dt / omega (spectral, over a full turn of one build) and against
    the Lagrange reduced form (exact coefficients) with an acceleration."""
    n, omega = 512, 3.0
    theta = 2 * np.pi * np.arange(n) / n
    kin = foot.kinematics(theta)
    ke, pe = energies(foot, kin, np.full(n, omega))
    torque = foot.inverse(theta, omega)["T8"]
    assert agree(torque * omega, omega * spectral_derivative(ke + pe), 1e-9)
    big_m, half_dm, g = reduced(foot, kin)
    alpha = -7.0
    assert agree(foot.inverse(theta, omega, alpha)["T8"], big_m * alpha + half_dm * omega**2 + g, 1e-9)


def test_each_body_balances_when_substituted_back(foot):
    from mechsym.planar.equations import inverse, symbolic_system

    a, u, c = symbolic_system(foot.equations, inverse(foot.mechanism))
    con = foot.constraints
    residual = sp.lambdify([list(con.q), list(con.qdd), list(u), list(con.params)], list(a * u - c), "numpy")
    scale = sp.lambdify([list(con.q), list(con.qdd), list(con.params)], list(c), "numpy")
    theta, omega, alpha = np.array([1.9, 2.8, 4.1]), 3.0, 2.0
    kin = foot.kinematics(theta)
    sol = foot.inverse(theta, omega, alpha)
    qdd = kin.dq[:, :, 0] * alpha + kin.ddq * omega**2
    for k in range(len(theta)):
        r = np.array(residual(kin.q[k], qdd[k], [sol[str(s)][k] for s in u], kin.params), float)
        size = np.max(np.abs(np.array(scale(kin.q[k], qdd[k], kin.params), float)))
        per_body = np.abs(r).reshape(-1, 3).max(axis=1)
        assert per_body.max() < 1e-9 * size, dict(zip(con.bodies, per_body))


@pytest.mark.parametrize("leg", ["unprimed", "primed"])
def test_reactions_by_joint_name_balance_every_body(leg):
    """Newton-Euler for each moving body written here by hand from the reaction columns and the joint
    declarations (f of jI_J acts on J at the joint point, -f on I; the slot normal along the hip's +y; T8 on
    the crank, -T8 on the hip; gravity): independent of the assembled A U = C and its sign conventions."""
    sys = pb.system("foot", leg)
    mech, con = sys.mechanism, sys.constraints
    p = mech.resolve_parameters(None)
    subs = {mech.parameters[n].symbol: v for n, v in p.items()}
    theta = np.array([1.9, 2.8, 4.1]) + (np.pi if leg == "primed" else 0.0)
    omega, alpha = 3.0, -2.0
    kin = sys.kinematics(theta)
    pts = sys.kinematics_table(theta)
    sol = sys.inverse(theta, omega, alpha)
    qdd = kin.dq[:, :, 0] * alpha + kin.ddq * omega**2
    n = len(theta)
    force = {b: np.zeros((n, 2)) for b in con.bodies}
    moment = {b: np.zeros(n) for b in con.bodies}
    com = {b: kin.q[:, 3 * i:3 * i + 2] for i, b in enumerate(con.bodies)}

    def apply(body, f, at):
        if body in force:
            r = at - com[body]
            force[body] += f
            moment[body] += r[:, 0] * f[:, 1] - r[:, 1] * f[:, 0]

    for j in mech.joints.values():
        at = np.c_[pts[f"{j.point2}.x"], pts[f"{j.point2}.y"]]
        if type(j).__name__ == "Revolute":
            f = np.c_[sol[f"{j.name}.fx"], sol[f"{j.name}.fy"]]
        else:  # the slot: normal = the hip's x axis turned +90 degrees
            hip_angle = kin.q[:, 3 * con.bodies.index(j.body1) + 2]
            f = sol[f"{j.name}.fn"][:, None] * np.c_[-np.sin(hip_angle), np.cos(hip_angle)]
        apply(j.body2, f, at)
        apply(j.body1, -f, at)
    moment["8"] += sol["T8"]
    moment["13"] -= sol["T8"]
    scale = max(np.max(np.abs(sol[c])) for c in sol.names if c != "theta8")
    for i, b in enumerate(con.bodies):
        m, inertia = float(mech.bodies[b].mass.subs(subs)), float(mech.bodies[b].inertia.subs(subs))
        gravity = np.array([0.0, -m * p["g"]])
        assert np.max(np.abs(force[b] + gravity - m * qdd[:, 3 * i:3 * i + 2])) < 1e-9 * scale, b
        assert np.max(np.abs(moment[b] - inertia * qdd[:, 3 * i + 2])) < 1e-9 * scale * L8, b


def test_sliding_build_carries_x1_in_every_x_row():
    """Eq. 16: every centre-of-mass x is x1 + X_i(theta8), so the x1 column of Eq. 34 holds m_i in each
    x row and nothing elsewhere (dq/dx1 = 1 on x, 0 on y and angle)."""
    slide = pb.system("slide", "unprimed")
    kin = slide.kinematics(np.c_[[1.9, 3.3], [0.0, 0.02]])
    dq_dx1 = kin.dq[:, :, 1]
    assert np.allclose(dq_dx1[:, 0::3], 1.0, atol=1e-12, rtol=0)
    assert np.allclose(dq_dx1[:, 1::3], 0.0, atol=1e-12) and np.allclose(dq_dx1[:, 2::3], 0.0, atol=1e-12)


def test_forward_driven_by_inverse_torque_keeps_the_speed(foot):
    from scipy.interpolate import CubicSpline

    omega = 3.0
    big_t = np.pi / omega
    t = np.linspace(0, big_t, 3001)
    torque = CubicSpline(t, foot.inverse(np.pi / 2 + omega * t, omega)["T8"])
    run = st.forward_run(lambda tt, th, w: torque(tt), np.pi / 2, omega, big_t, rtol=1e-11, atol=1e-11)
    y, _ = run.sample(t)
    assert np.max(np.abs(y[:, 0] - (np.pi / 2 + omega * t))) < 1e-6
    assert run.status == "done"


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_forward_reduced_form_agrees_with_eq28():
    """Forward dynamics two ways from rest at pi/2 under T8 = 1 N m, through a support change: the reduced
    form on the fixed-foot build (forward_run) and Eq. 28, the Newton-Euler A U = C with the theta8dd column
    and T8 on the right, on the sliding build held by friction (stick mode)."""
    t_end = 0.9
    ref = st.forward_run(1.0, np.pi / 2, 0.0, t_end, rtol=1e-11, atol=1e-11)
    eq28 = st.SlipModel(1.0, torque=1.0).run(t_end=t_end, rtol=1e-11, atol=1e-11, samples_per_step=4)
    assert [e.transition for e in eq28.events] == ["support"] and not eq28.slips()
    assert eq28.events[0].t == pytest.approx(ref.events[0].t, abs=1e-9)
    t = np.linspace(0, t_end, 91)
    y_ref, y28 = ref.sample(t)[0], eq28.result.sample(t)[0]
    assert np.max(np.abs(y28[:, 0] - y_ref[:, 0])) < 1e-8
    assert agree(y28[:, 1], y_ref[:, 1], 1e-8)


@needs_c
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_c_backend_runs_agree_with_numpy():
    """The runs tracked by the generated ms_track (one C call per state) against the numpy tracker: the
    forward run through a support change, and a slip run through stick->slip, slip stops and a support
    change, with its energy balance."""
    t_end = 0.9
    t = np.linspace(0, t_end, 91)
    runs = {b: st.forward_run(1.0, np.pi / 2, 0.0, t_end, rtol=1e-11, atol=1e-11, backend=b) for b in ("numpy", "c")}
    assert pb.system("foot", "primed", "c").backend.name == "c"
    assert [e.transition for e in runs["c"].events] == ["support"]
    assert runs["c"].events[0].t == pytest.approx(runs["numpy"].events[0].t, abs=1e-9)
    y = {b: r.sample(t)[0] for b, r in runs.items()}
    assert np.max(np.abs(y["c"][:, 0] - y["numpy"][:, 0])) < 1e-9 and agree(y["c"][:, 1], y["numpy"][:, 1], 1e-9)
    slip = {b: st.SlipModel(0.05, omega=3.0, backend=b).run(t_end=1.1 * st.period(3.0), samples_per_step=20)
            for b in ("numpy", "c")}
    kinds = [e.transition for e in slip["c"].events]
    assert {"stick->slip", "slip stops", "support"} <= set(kinds)
    assert kinds == [e.transition for e in slip["numpy"].events]
    assert np.allclose([e.t for e in slip["c"].events], [e.t for e in slip["numpy"].events], atol=1e-9, rtol=0)
    for col in ("theta8", "x1", "slip", "T8", "friction", "fn"):
        assert agree(slip["c"][col], slip["numpy"][col], 1e-8), col
    w, de, d = slip["c"].energy_balance()
    assert abs(w - de - d) <= 1e-6 * max(abs(w), abs(de), d)


def test_inverse_table_switches_support():
    theta = np.array([0.3, 2.0, 4.0, 5.5])
    table = pb.inverse_table(theta, [1.0, 3.0])
    assert list(table["support"]) == [1, 0, 0, 1] * 2
    # a half-turn apart the roles swap and the torque repeats (the gait has period pi)
    again = pb.inverse_table(theta + np.pi, [1.0, 3.0])
    assert agree(again["T8"], table["T8"], 1e-9)
    assert agree(again["j13_10_f.fn"], table["j13_10.fn"], 1e-9)


def test_forward_run_switches_support_both_ways():
    """Thrown backwards from pi/2 under a small torque, the crank enters the primed support (theta8 < pi/2),
    turns round and comes back into the unprimed one; energy is conserved across both switches."""
    run = st.forward_run(0.3, np.pi / 2 + 0.05, -1.5, 1.5, rtol=1e-10)
    kinds = [(e.source, e.target) for e in run.events]
    assert kinds[:2] == [("unprimed", "primed"), ("primed", "unprimed")]
    t = np.linspace(0, run.t_end, 301)
    y, modes = run.sample(t)
    assert np.all((modes == "primed") == (y[:, 0] < np.pi / 2 - 1e-12) | (modes == "primed") & np.isclose(y[:, 0], np.pi / 2))
    energy = np.empty(len(t))
    for leg in pb.LEGS:
        sel = modes == leg
        sys = pb.system("foot", leg)
        ke, pe = energies(sys, sys.kinematics(y[sel, 0]), y[sel, 1])
        energy[sel] = ke + pe - 0.3 * (y[sel, 0] - np.pi / 2)
    assert np.ptp(energy) < 1e-8 * np.max(np.abs(energy))


def test_support_change_hands_the_configuration_over(monkeypatch):
    """At a support change the new leg's build starts from the old one's configuration re-expressed in its
    frame (the rigid motion taking the landing foot to its own frame): that is the configuration its own
    continuation finds, to rounding, in the foot and the slide builds; a forward run through two support
    changes runs the continuation only at its start."""
    from mechsym.planar.solver import Solver

    theta = 1.5 * np.pi
    src, dst = pb.system("foot", "unprimed"), pb.system("foot", "primed")
    q = src.handover(src.kinematics([theta]).q[0], dst, src.params())
    assert np.max(np.abs(q - dst.kinematics([theta]).q[0])) < 1e-12
    src, dst = pb.system("slide", "unprimed"), pb.system("slide", "primed")
    x1 = src.kinematics_table(np.array([[theta, 0.0]]))["E_f.x"][0]
    q = src.handover(src.kinematics(np.array([[theta, 0.0]])).q[0], dst, src.params())
    assert np.max(np.abs(q - dst.kinematics(np.array([[theta, x1]])).q[0])) < 1e-12
    sweeps = []
    sweep = Solver.sweep
    monkeypatch.setattr(Solver, "sweep", lambda self, *a, **k: sweeps.append(1) or sweep(self, *a, **k))
    run = st.forward_run(0.3, np.pi / 2 + 0.05, -1.5, 1.5, rtol=1e-10)
    assert len(run.events_named("support")) >= 2 and len(sweeps) == 1


def test_start_torque_bracket():
    """Independent check: the energy bound max (PE - PE0) / (theta8 - pi/2) over the step (statics only) is
    bracketed by forward simulations (dynamics), which fail to finish a step 0.5 % below it and finish it
    0.5 % above it."""
    bound = st.energy_start_threshold()
    assert not st.reaches_step_end(bound * 0.995, rtol=1e-9)[0]
    assert st.reaches_step_end(bound * 1.005, rtol=1e-9)[0]


def test_start_torque_regression_of_the_calibrated_value():
    """Regression, not a physical check: the link density 1.47 kg/m was calibrated so that the start torque
    is 0.840 N m (docs/pasibot.md, the reference model's value); a change of the model or of the potential
    energy's derivation moves it. The physics is checked by test_start_torque_bracket."""
    assert st.energy_start_threshold() == pytest.approx(0.8403, abs=1e-4)


@pytest.mark.slow
def test_start_torque_by_bisection():
    """The bisection on forward runs with terminal events (the command's route) meets the energy bound,
    found without any simulation."""
    value = st.start_torque(tol=1e-4)
    assert value == pytest.approx(st.energy_start_threshold(), abs=2e-4)


def foot_equilibrium(theta8, omega, params=None):
    """The ground's force on the supporting foot and the ZMP (Eqs. 29-30) written by hand from the 69 x 69
    reactions on the foot (f of the foot on the tibia at E and on bar 12 at E') and the foot's weight: the
    independent route for ground_force, which solves the sliding build's stick mode."""
    inv = pb.inverse_table(theta8, omega, params=params)
    p = pb.system("foot").mechanism.resolve_parameters(params)
    l8, g = p["l8"], p["g"]
    m1 = p["density"] * (p["heel"] + p["toe"]) * l8
    xc, xep = (p["toe"] - p["heel"]) * l8 / 2, p["off_t"] * l8
    fx, fy, zmp = (np.empty(len(theta8)) for _ in range(3))
    primed = inv["support"] == 1
    for leg, sel in (("unprimed", ~primed), ("primed", primed)):
        s = pb.LEGS[leg]
        f12y = inv[f"j1_12{s}.fy"][sel]
        fx[sel] = inv[f"j1_2{s}.fx"][sel] + inv[f"j1_12{s}.fx"][sel]
        fy[sel] = inv[f"j1_2{s}.fy"][sel] + f12y + m1 * g
        zmp[sel] = (xep * f12y + xc * m1 * g) / fy[sel]  # moments about the ankle E, the foot on y = 0
    return {"f01x": fx, "f01y": fy, "zmp": zmp, "T8": inv["T8"]}


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_slide_model_agrees_with_the_fixed_foot():
    """Stick mode of the sliding build (72 x 72), tracked and batched (ground_force, on either support leg),
    against the foot's equilibrium written by hand from the 69 x 69 reactions (Eqs. 29-30)."""
    model = st.SlipModel(0.1, omega=3.0)
    theta = np.array([1.7, 2.5, 3.3, 4.4, 5.0, 0.4])
    ref = foot_equilibrium(theta, 3.0, {"m_load": 2.0})
    batch = st.ground_force(theta, 3.0, {"m_load": 2.0})
    for name in ("f01x", "f01y", "zmp", "T8"):
        assert agree(batch[name], ref[name], 1e-9), name
    ref = foot_equilibrium(theta[:4], 3.0)
    got = [model.solve("unprimed", "stick", 0.0, np.array([x, 3.0, 0.0, 0.0, 0, 0])) for x in theta[:4]]
    assert agree([u["friction"] for u in got], ref["f01x"], 1e-9)
    assert agree([u["fn"] for u in got], ref["f01y"], 1e-9)
    assert agree([u["T"] for u in got], ref["T8"], 1e-9)
    assert agree([u["m"] / u["fn"] for u in got], ref["zmp"], 1e-9)


def test_friction_demand_near_the_chapter():
    """The chapter's minimum friction (about 0.077 at 3 rad/s); and, as a regression of the headline
    figure, not a physical check, docs/pasibot.md's 0.0772 (friction demand 0.07725) to its last digit. The
    physics is checked by test_min_friction_bracket (slip runs either side) and the bisection below."""
    demand = st.friction_demand(3.0)
    assert demand == pytest.approx(0.077, abs=1e-3)
    assert demand == pytest.approx(0.07725, abs=5e-6)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_min_friction_bracket():
    demand = st.friction_demand(3.0)
    below = st.SlipModel(demand - 0.002, omega=3.0).run(steps=1, samples_per_step=4)
    above = st.SlipModel(demand + 0.002, omega=3.0).run(steps=1, samples_per_step=4)
    assert below.slips() and not above.slips()


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:.*falling back to the numpy backend:UserWarning")
def test_min_friction_by_bisection():
    """Slip runs (on the C backend where a compiler exists) against the 69 x 69 equilibrium (numpy)."""
    value = st.min_friction(3.0, tol=2e-4, backend="c")
    assert value == pytest.approx(st.friction_demand(3.0), abs=5e-4)


def test_slip_run_energy_balance_and_events():
    """Work in = delta(KE + PE) + friction dissipation along the whole run (norm-wise 1e-6), through
    stick->slip, slip stops and a support change."""
    omega = 3.0
    big_t = st.period(omega)
    model = st.SlipModel(0.05, 0.05, omega=omega)
    with pytest.warns(UserWarning, match="zero moment point"):
        run = model.run(t_end=1.25 * big_t, samples_per_step=40)
    kinds = {e.transition for e in run.events}
    assert {"stick->slip", "slip stops", "support"} <= kinds
    tab = run
    energy = np.array([model.energy("primed" if s else "unprimed", np.array([a, w, x, v, 0, 0]))
                       for s, a, w, x, v in zip(tab["support"], tab["theta8"], tab["omega"], tab["x1"], tab["x1d"])])
    assert agree(tab["work"], energy - energy[0] + tab["dissipation"], 1e-6)
    assert np.all(np.diff(tab["dissipation"]) >= -1e-15)
    # Coulomb in the slip modes, the static bound in the stick modes
    sliding = tab["sliding"] == 1
    assert np.allclose(np.abs(tab["friction"][sliding]), 0.05 * tab["fn"][sliding], rtol=1e-9)
    assert np.all(np.abs(tab["friction"][~sliding]) <= 0.05 * tab["fn"][~sliding] * (1 + 1e-9))
    w, de, d = run.energy_balance()
    assert abs(w - de - d) <= 1e-6 * max(abs(w), abs(de), d)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_slip_stops_where_the_slip_speed_vanishes():
    run = st.SlipModel(0.05, omega=3.0).run(t_end=0.8, samples_per_step=4)
    stops = run.result.events_named("slip stops")
    assert stops and all(e.y[3] == 0.0 for e in stops)
    for seg in run.result.segments:
        if seg.mode.endswith("slip+"):
            assert seg.y1[3] == pytest.approx(0.0, abs=1e-9) or seg is run.result.segments[-1]


@pytest.mark.filterwarnings("ignore:pasibot. the zero moment point:UserWarning")
def test_lift_off_ends_the_run():
    """At 10 rad/s the ground would have to pull the foot down within the step: the run stops where f01y
    reaches zero, with a warning; the friction bisection refuses such a speed."""
    from mechsym.core.errors import InputError

    model = st.SlipModel(0.5, omega=10.0)
    with pytest.warns(UserWarning, match="lifts off"):
        run = model.run(steps=1, samples_per_step=8)
    end = run.events[-1]
    assert run.result.status == "stopped" and end.transition == "lift-off" and end.target is None
    assert run.result.t_end < st.period(10.0)
    leg, contact = end.source.split("/")
    assert abs(model.solve(leg, contact, end.t, end.y)["fn"]) < 1e-6 * np.max(run["fn"])
    with pytest.raises(InputError, match="lifts off"):
        st.min_friction(10.0, hi=0.9)


@pytest.mark.parametrize("make, message", [
    (lambda: st.SlipModel(-0.1, omega=3.0), "must not be negative"),
    (lambda: st.SlipModel(0.05, 0.1, omega=3.0), "exceeds static friction"),
    (lambda: st.SlipModel(0.1, omega=0.0), "no step period"),
    (lambda: st.min_friction(0.0), "no step period"),
    (lambda: pb.inverse_table(STEP[:3], 1.0, params={"m_load": -5}), "must not be negative"),
    (lambda: pb.build("knee"), "unknown frame"),
])
def test_bad_input(make, message):
    from mechsym.core.errors import InputError

    with pytest.raises(InputError, match=message):
        make()


# -- command line ---------------------------------------------------------------------------------------
def run_cli(capsys, *args):
    from mechsym.app.cli import main

    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("args, message", [
    (["inverse", "pasibot", "--omega", "1", "--param", "m_load=-5"], "'m_load' = -5.0 must not be negative"),
    (["pasibot", "slip", "--mu-s", "-0.1", "--omega", "3"], "must not be negative"),
    (["pasibot", "slip", "--mu-s", "0.05", "--mu-k", "0.1", "--omega", "3"], "exceeds static friction"),
    (["pasibot", "min-friction", "--omega", "0"], "no step period"),
    (["pasibot", "slip", "--mu-s", "0.1", "--omega", "0"], "no step period"),
    (["kinematics", "pasibot", "--frame", "moon"], "unknown frame 'moon'"),
    (["inverse", "pasibot", "--omega", "1", "--param", "mu_k=0.5"], "mu_k = 0.5 exceeds static friction"),
    (["pasibot", "start-torque", "--param", "m_load=-1"], "'m_load' = -1.0 must not be negative"),
])
def test_cli_bad_input(capsys, args, message):
    code, _, err = run_cli(capsys, *args)
    assert code == 2 and err.startswith("error: ") and message in err and err.count("\n") == 1


def test_cli_generic_commands(tmp_path, capsys):
    from mechsym.core.results import read_csv

    code, _, err = run_cli(capsys, "kinematics", "pasibot", "--samples", "8", "--frame", "ground", "--out",
                           str(tmp_path / "k.csv"))
    assert code == 0, err
    k = read_csv(tmp_path / "k.csv")
    assert {"theta8", "E.x", "E_f.y", "13.angle", "support"} <= set(k.names)
    code, _, err = run_cli(capsys, "inverse", "pasibot", "--omega", "3", "--samples", "8", "--theta0", "90deg",
                           "--out", str(tmp_path / "i.csv"))
    assert code == 0, err
    i = read_csv(tmp_path / "i.csv")
    assert i.names[0] == "theta8" and "T8" in i.names and "j1_2.fx" in i.names and len(i) == 8
    code, _, err = run_cli(capsys, "forward", "pasibot", "--torque", "1", "--theta0", "90deg", "--t-end", "0.2",
                           "--dt", "0.05", "--out", str(tmp_path / "f.csv"))
    assert code == 0, err
    f = read_csv(tmp_path / "f.csv")
    assert f.names == ["t", "theta8", "omega"] and len(f) == 5 and f["omega"][-1] > 0
    code, out, err = run_cli(capsys, "params", "pasibot", "--json")
    import json

    data = json.loads(out)
    assert code == 0 and data["parameters"]["l8"] == 0.03 and "1" in data["bodies"] and "13" in data["bodies"]
    total = sum(b["mass"] for b in data["bodies"].values())
    assert total == pytest.approx(9.156, abs=1e-3)


def test_cli_figure(tmp_path, capsys, plotted):
    """Figure 11 draws the torque curves its CSV holds, one per crank speed, against t/T."""
    from mechsym.core.results import read_csv

    code, out, err = run_cli(capsys, "pasibot", "figures", "--out", str(tmp_path), "--only", "11")
    assert code == 0, err
    assert (tmp_path / "fig11.png").stat().st_size > 1000
    table = read_csv(tmp_path / "fig11.csv")
    lines = {label: (x, y) for _, label, x, y in plotted["fig11.png"]}
    speeds = [name[len("T8_omega"):] for name in table.names if name.startswith("T8_omega")]
    assert speeds == ["1", "2", "3", "4", "5"]
    for w in speeds:
        x, y = lines[f"ω8 = {w} rad/s"]
        assert np.array_equal(x, table["t/T"]) and np.allclose(y, table[f"T8_omega{w}"], rtol=1e-15, atol=0)


@pytest.mark.parametrize("backend", ["numpy", pytest.param("c", marks=needs_c)])
def test_cli_slip_run(tmp_path, capsys, backend):
    """Imposed torque from rest with little friction: the foot slides at once; the command prints the ZMP
    warning, the timeline from the initial mode, the energy balance and the total slip."""
    code, out, err = run_cli(capsys, "pasibot", "slip", "--mu-s", "0.05", "--torque", "1", "--t-end", "0.1",
                             "--backend", backend, "--out", str(tmp_path / "s.csv"))
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("warning: pasibot: the zero moment point leaves the supporting foot")
    assert "t=0: start in unprimed/slip-" in lines
    balance = next(line for line in lines if line.startswith("work in"))
    assert abs(float(balance.split("residual ")[1].split()[0])) < 1e-9
    assert lines[-2].startswith("total_slip_m=-") and (tmp_path / "s.csv").exists()
    assert lines[-1].startswith(f"wrote {tmp_path / 's.csv'}")  # said once the file is in place


@pytest.mark.slow
def test_cli_start_torque_last_line(capsys):
    code, out, err = run_cli(capsys, "pasibot", "start-torque", "--tol", "1e-4")
    assert code == 0, err
    name, value = out.strip().splitlines()[-1].split("=")
    assert name == "start_torque_Nm" and float(value) == pytest.approx(0.840, abs=1e-3)


@pytest.mark.slow
def test_forward_slip_run_energy_balance():
    """Imposed torque with slip (Eq. 37): theta8dd and x1dd both unknown; work balance along the run."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        run = st.SlipModel(0.05, torque=1.0).run(t_end=1.0, samples_per_step=50)
    assert {e.transition for e in run.events} >= {"slip stops"}
    w, de, d = run.energy_balance()
    assert abs(w - de - d) <= 1e-6 * max(abs(w), abs(de), d)


def test_kinematics_rates_are_exact(hip):
    """The x', x'' columns against the spectral derivative of the positions over a full turn."""
    n = 256
    theta = 2 * np.pi * np.arange(n) / n
    t = pb.kinematics_table(theta, frame="hip")
    for col in ("7.x", "2.y", "11.angle", "1_f.x"):
        assert agree(t[col + "'"], spectral_derivative(t[col]), 1e-8), col
        assert agree(t[col + "''"], spectral_derivative(t[col + "'"]), 1e-7), col
    ground = pb.kinematics_table(theta[:8], frame="ground")
    assert {"13.angle'", "1.x''", "1_f.y'"} <= set(ground.names)


def test_torque_against_crank_speed_while_walking_and_the_held_foot_route_warns(capsys):
    """`mechsym pasibot torque` (pasibot.torque_curve): per speed, the peak, RMS and mean of T8 over a turn
    of walking, the reductions of that speed's rows of `mechsym inverse pasibot`; the mean is the average
    power over omega, which vanishes over a period of the conservative gait (virtual work: PE and KE
    return). The held-foot System over a whole turn warns and names the route to use; over its own step
    it does not, and gives the walking table's torque there."""
    import warnings

    from mechsym.app.cli import main
    from mechsym.core.results import read_csv

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        curve, table = pb.torque_curve([1.0, 3.0], samples=720)
    assert main(["pasibot", "torque", "--omega", "1", "--omega", "3", "--samples", "720"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "omega,absmax_T8,rms_T8,mean_T8" and len(printed) == 3
    assert np.allclose(np.array([line.split(",") for line in printed[1:]], float),
                       np.column_stack([curve[n] for n in curve.names]), rtol=1e-12, atol=0)
    for k, w in enumerate((1.0, 3.0)):
        t8 = table["T8"][table["omega"] == w]
        assert len(t8) == 720 and curve["absmax_T8"][k] == np.max(np.abs(t8))
        assert abs(curve["mean_T8"][k]) < 2e-3 * curve["rms_T8"][k]
    assert 2.6 < curve["absmax_T8"][0] < 2.75          # docs/pasibot.md: about 2.67 N m at 1 rad/s

    held = pb.system("foot", "unprimed")
    turn = 2 * np.pi * np.arange(72) / 72
    with pytest.warns(UserWarning, match=r"unprimed foot is held on the ground for its step only.*torque_curve"):
        whole = held.inverse(turn, 1.0)
    assert np.max(np.abs(whole["T8"])) > 2 * curve["absmax_T8"][0]   # what the warning is about
    step = turn[(turn >= np.pi / 2) & (turn <= 1.5 * np.pi)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        own = held.inverse(step, 1.0)
    walking = pb.inverse_table(step[:-1], 1.0)                   # 3 pi / 2 itself belongs to the next step
    assert agree(own["T8"][:-1], walking["T8"], 1e-12)
