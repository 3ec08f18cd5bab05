"""Force elements on a planar linkage (docs/force-elements.md), each checked against an independent route:
the quasi-static torque and equilibrium against the derivative of the potential written by hand in closed
form; energy conservation without damping; the damper's dissipated work against the energy lost; the
inverse analysis against the forward run's accelerations; a hand-written load in named quantities against
the element; numpy against C; bad declarations refused by name."""
import numpy as np
import pytest
import sympy as sp
from scipy.optimize import brentq

from mechanisms import fourbar
from mechsym import derive
from mechsym.app.cli import main
from mechsym.core.errors import InputError, ModelError
from mechsym.core.forces import LENGTH, RATE, TIME
from mechsym.planar.dynamics import energies
from mechsym.planar.equations import inverse as inverse_analysis

E = (0.02, 0.2)          # the spring's ground point
K, L0, C = 40.0, 0.05, 0.02


def sprung(damping=None, backend="numpy"):
    """The lambda four-bar with a spring (or spring-damper) from the coupler tip C to the ground point E."""
    m = fourbar.build()
    m.bodies["ground"].points["E"] = tuple(sp.sympify(v) for v in E)  # a point added to the ground's frame
    if damping is None:
        m.spring("S", ("coupler", "C"), ("ground", "E"), K, free_length=L0)
    else:
        m.spring_damper("S", ("coupler", "C"), ("ground", "E"), K, damping, free_length=L0)
    return derive(m, backend)


def potential_derivative():
    """dV/dtheta of gravity and the spring, from the four-bar's closed-form geometry (M where the circles
    about P and B meet, above AB): written here, not by mechsym, and differentiated by sympy."""
    th = sp.Symbol("theta", real=True)
    l1, l2, l3, d, rho, g = 0.05, 0.125, 0.25, 0.1, 1.0, 9.81
    P = sp.Matrix([l1 * sp.cos(th), l1 * sp.sin(th)])
    B = sp.Matrix([d, 0])
    D = B - P
    dist = sp.sqrt(D.dot(D))
    r1, r2 = l3 / 2, l2
    a = (r1**2 - r2**2 + dist**2) / (2 * dist)
    h = sp.sqrt(r1**2 - a**2)
    perp = sp.Matrix([-D[1], D[0]]) / dist
    M = P + a * D / dist + h * perp   # the + side of P->B lies above AB for this linkage (checked below)
    Cp = 2 * M - P
    y_crank, y_coupler, y_rocker = P[1] / 2, M[1], M[1] / 2
    spring = Cp - sp.Matrix(E)
    V = g * rho * (l1 * y_crank + l3 * y_coupler + l2 * y_rocker) + K * (sp.sqrt(spring.dot(spring)) - L0) ** 2 / 2
    dV = sp.diff(V, th)
    return (lambda t: np.array([float(dV.subs(th, v)) for v in np.atleast_1d(t)]),
            lambda t: np.array([float(M[1].subs(th, v)) for v in np.atleast_1d(t)]))


def test_quasi_static_torque_and_equilibrium_are_the_potential_s_derivative():
    system = sprung()
    dV, m_y = potential_derivative()
    theta = np.linspace(0, 2 * np.pi, 37)[:-1]
    assert (m_y(theta) > 0).all()                        # the branch the model declares
    table = system.inverse(theta, 0.0, params=None, inertia=False)
    assert np.max(np.abs(table["torque"] - dV(theta))) <= 1e-10 * np.max(np.abs(dV(theta)))
    # the equilibria (torque 0) found on each route separately
    signs = np.sign(dV(theta))
    brackets = [(theta[i], theta[i + 1]) for i in range(len(theta) - 1) if signs[i] != signs[i + 1]]
    assert brackets
    for lo, hi in brackets:
        ours = brentq(lambda t: system.inverse([t], 0.0, inertia=False)["torque"][0], lo, hi, xtol=1e-14)
        theirs = brentq(lambda t: dV(t)[0], lo, hi, xtol=1e-14)
        assert abs(ours - theirs) < 1e-10


def spring_energy(table):
    return K * (table["S.length"] - L0) ** 2 / 2


def test_energy_is_conserved_without_damping():
    system = sprung(backend="c")
    run = system.forward(0.0, 0.3, 8.0, 10.0, dt=0.01, rtol=1e-12, atol=1e-12)
    kin = system.kinematics(run["theta"])
    kinetic, gravity = energies(system, kin, run["omega"])
    total = kinetic + gravity + spring_energy(run)
    assert np.ptp(kinetic) > 0.1 * np.max(kinetic)       # energy is exchanged, not a rest
    assert np.max(np.abs(total - total[0])) <= 1e-9 * np.max(kinetic)


def test_damper_dissipates_the_energy_lost():
    """E(0) - E(T) = integral of c rate^2 dt, the integral by Gauss-Legendre on the run's dense output."""
    system = sprung(damping=C)
    T = 1.0
    run = system.forward(0.0, 0.3, 8.0, T, rtol=1e-12, atol=1e-12)
    x, w = np.polynomial.legendre.leggauss(8)
    edges = np.linspace(0, T, 4001)  # the motion has fast phases near the linkage's dead points
    h = np.diff(edges)[:, None] / 2
    t = ((edges[:-1, None] + edges[1:, None]) / 2 + h * x).ravel()
    y = run.solution(t)
    kin = system.kinematics(y[0])
    rate = system.loads.columns(kin.q, kin.dq[:, :, 0] * y[1][:, None], t, kin.params)["S.rate"]
    dissipated = float(np.sum((h * w).ravel() * C * rate**2))
    ends = system.kinematics(run["theta"][[0, -1]])
    energy = np.sum(energies(system, ends, run["omega"][[0, -1]]), axis=0) + spring_energy(
        {"S.length": run["S.length"][[0, -1]]})
    lost = energy[0] - energy[1]
    assert lost > 0.05 * energy[0] and abs(lost - dissipated) <= 1e-8 * lost


def test_inverse_gives_back_the_forward_run_s_torque():
    """Forward under a constant torque with a spring-damper, the accelerations from the forward
    Newton-Euler system along it; the inverse analysis at those states gives the torque and reactions."""
    system = sprung(damping=C)
    run = system.forward(0.02, 0.3, 5.0, 0.5, dt=0.01, rtol=1e-11, reactions=True)
    theta, omega, alpha = run["theta"], run["omega"], run["thetadd"]
    u = system.solve(theta[:, None], omega[:, None], inverse_analysis(system.mechanism), alpha[:, None])
    assert np.max(np.abs(u["torque"] - 0.02)) < 1e-10
    assert np.max(np.abs(u["A.fx"] - run["A.fx"])) <= 1e-9 * np.max(np.abs(run["A.fx"]))


def test_a_load_in_named_quantities_equals_the_element():
    """The spring-damper written by hand as a force at C and its reaction at E from the named quantities
    (positions, velocities) gives the inverse analysis of the element to rounding, on numpy and C."""
    m = fourbar.build()
    m.bodies["ground"].points["E"] = tuple(sp.sympify(v) for v in E)
    c, e = m.position("coupler", "C"), sp.Matrix(E)
    vc = m.velocity("coupler", "C")
    d = e - c
    length = sp.sqrt(d.dot(d))
    tension = K * (length - L0) + C * (-d.dot(vc) / length)
    m.force("coupler", "C", *(tension * d / length))
    by_hand = derive(m)
    theta = np.linspace(0, 6, 13)
    want = sprung(damping=C).inverse(theta, [0.0, 7.0])
    got = by_hand.inverse(theta, [0.0, 7.0])
    assert np.max(np.abs(got["torque"] - want["torque"])) <= 1e-12 * np.max(np.abs(want["torque"]))
    assert np.ptp(want["S.rate"]) > 0 and np.allclose(want["S.force"][:13], K * (want["S.length"][:13] - L0))
    c_side = sprung(damping=C, backend="c").inverse(theta, [0.0, 7.0])
    for name in ("torque", "A.fx", "S.length", "S.rate", "S.force"):
        assert np.max(np.abs(c_side[name] - want[name])) <= 1e-12 * np.max(np.abs(want[name]))


def test_torsional_spring_damper_and_actuator():
    """A torsional spring-damper at the rocker's pivot and an actuator in time: the quasi-static torque
    balances k (angle - angle0) times the rocker's angle coefficient; the actuator's force is the column."""
    m = fourbar.build()
    m.torsional("T", "B", stiffness=0.5, free_angle=1.0, damping=0.01)
    m.actuator("F", ("crank", "P"), ("rocker", "M"), 0.3 * sp.sin(2 * TIME))
    system = derive(m)
    run = system.forward(0.0, 0.0, 0.0, 0.5, dt=0.05)
    assert np.allclose(run["F.force"], 0.3 * np.sin(2 * run["t"]), rtol=0, atol=1e-14)
    with pytest.raises(InputError, match="actuator 'F' depends on the time"):
        system.inverse([0.1], 1.0)
    m2 = fourbar.build()
    m2.torsional("T", "B", stiffness=0.5, free_angle=1.0)
    plain, sprung_t = derive(fourbar.build()), derive(m2)
    theta = np.linspace(0, 6, 7)
    kt = sprung_t.kinematics_table(theta, rates=True)
    extra = sprung_t.inverse(theta, 0.0, inertia=False)["torque"] - plain.inverse(theta, 0.0, inertia=False)["torque"]
    # the rocker's absolute angle is the joint's relative angle (the ground does not turn)
    assert np.allclose(kt["T.angle"], kt["rocker.angle"], atol=1e-14)
    assert np.max(np.abs(extra - 0.5 * (kt["rocker.angle"] - 1.0) * kt["rocker.angle'"])) < 1e-12


def test_equations_show_the_element():
    system = sprung(damping=C)
    text = system.equations_text(latex=True)
    assert "S_{k}" in text and "S_{c}" in text and "S_{l0}" in text


MODEL = """
import sympy as sp
from mechanisms import fourbar


def build():
    m = fourbar.build()
    {line}
    return m
"""


@pytest.mark.parametrize("line, message", [
    ('m.spring("S", ("coupler", "P"), ("coupler", "C"), 10.0)',
     "spring 'S' joins two points of body 'coupler'"),
    ('m.spring("S", ("coupler", "C"), ("ground", "A"), -10.0)', "spring 'S': stiffness -10 N/m must not be negative"),
    ('m.spring("S", ("coupler", "C"), ("ground", "A"), 10.0, free_length=-0.1)',
     "spring 'S': free length -0.1 m must not be negative"),
    ('m.damper("D", ("coupler", "C"), ("ground", "Q"), 1.0)', "damper 'D' names unknown point 'Q' of body 'ground'"),
    ('m.force("coupler", "C", sp.Symbol("x_coupler") * 3, 0)', "the force at point 'C' of body 'coupler' uses ['x_coupler']"),
    ('m.spring("S", ("coupler", "C"), ("ground", "A"), law=sp.Symbol("kk") * sp.Symbol("length"))',
     "spring 'S' uses ['kk']"),
    ('m.torsional("T", "nope", 1.0)', "torsional spring-damper 'T' names 'nope', which is not a revolute joint"),
])
def test_bad_declarations_are_refused_by_name(tmp_path, capsys, line, message):
    model = tmp_path / "model.py"
    model.write_text(MODEL.format(line=line))
    code = main(["inverse", str(model), "--omega", "1"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and message in err and err.count("\n") == 1


def test_parameters_of_elements_are_overridden_and_checked(capsys):
    system = sprung()
    stiffer = system.inverse([0.4], 0.0, inertia=False, params={"S_k": 2 * K})["torque"][0]
    base = system.inverse([0.4], 0.0, inertia=False)["torque"][0]
    soft = system.inverse([0.4], 0.0, inertia=False, params={"S_k": 0.0})["torque"][0]
    assert abs((stiffer - soft) - 2 * (base - soft)) < 1e-12 * abs(stiffer)
    with pytest.raises(InputError, match="'S_k' = -1.0 must not be negative"):
        system.params({"S_k": -1})


def test_the_page_s_examples_run():
    """docs/force-elements.md's code, run as it stands: every element and a drag load in named quantities."""
    import re
    from pathlib import Path

    page = Path(__file__).resolve().parent.parent / "docs" / "force-elements.md"
    scope = {}
    for block in re.findall(r"```python\n(.*?)```", page.read_text(), re.S):
        exec(block, scope)
    run, table = scope["run"], scope["table"]
    assert np.isfinite(run["S.force"]).all() and np.allclose(run["F.force"], 0.3 * np.sin(2 * run["t"]), atol=1e-14)
    assert np.allclose(run["H.force"], 1e3 * (run["H.length"] - 0.12) ** 3 + 0.1 * run["H.rate"], rtol=1e-12, atol=1e-14)
    assert np.isfinite(table["torque"]).all()


def test_export_refuses_loads_it_cannot_carry():
    from mechsym.codegen.export import export_files

    with pytest.raises(InputError, match="the standalone export carries the loads of position alone"):
        export_files(sprung(damping=C))
    assert any(name.endswith(".c") for name in export_files(sprung()))


def test_command_line_columns_parameters_and_equations(tmp_path, capsys):
    """forward --all writes the spring's columns; --param reaches its stiffness (a negative one refused by
    name, exit 2); `equations --latex` shows it."""
    from mechsym.core.results import read_csv

    out = tmp_path / "run.csv"
    assert main(["forward", "andrews", "--torque", "0.033", "--theta0=-0.0617138900142764", "--t-end", "0.002",
                 "--all", "--out", str(out), "--backend", "numpy"]) == 0
    run = read_csv(out)
    assert np.allclose(run["spring.force"], 4530.0 * (run["spring.length"] - 0.07785), rtol=1e-12)
    capsys.readouterr()
    assert main(["inverse", "andrews", "--quasi-static", "--samples", "2", "--param", "spring_k=-1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "'spring_k' = -1.0 must not be negative" in err and err.count("\n") == 1
    assert main(["equations", "andrews", "--latex"]) == 0
    assert "spring_{k}" in capsys.readouterr().out


@pytest.mark.parametrize("backend", ["numpy", "c"])
def test_simulate_carries_the_elements_as_forward_does(backend):
    """simulate (any number of coordinates; C tracker rows on C) and forward (the reduced form) integrate the
    spring-damper's loads alike: the same motion to the integration tolerance."""
    from mechsym.planar.simulate import simulate

    system = sprung(damping=C, backend=backend)
    ours = simulate(system, [0.3], [8.0], 0.5, dt=0.05, rtol=1e-11, atol=1e-11, forces={"torque": 0.0})
    ref = system.forward(0.0, 0.3, 8.0, 0.5, dt=0.05, rtol=1e-11, atol=1e-11)
    assert np.max(np.abs(ours["theta"] - ref["theta"])) < 1e-8
    assert np.max(np.abs(ours["thetad"] - ref["omega"])) < 1e-6 * np.max(np.abs(ref["omega"]))
