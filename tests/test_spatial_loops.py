"""Spatial closed loops (mechsym.spatial.loops): each figure against an independent route.

* a planar four-bar declared as a spatial mechanism equals the planar route (kinematics, torque, reactions);
* the reactions balance every body's Newton-Euler equations, written from the tree's frame Jacobians and
  biases (not from the recursions that gave the reactions);
* Bricard's free motion conserves energy and keeps its loop closed;
* the closure Jacobian and gamma agree with the derivatives of a path of solved configurations;
* bad input is one line naming the loop and joints.
"""
import math
import os

import numpy as np
import pytest
import sympy as sp

from mechanisms import bricard, fourbar
from mechsym.core.errors import InputError
from mechsym.spatial import Revolute, Spherical, Tree
from mechsym.spatial import loop_dynamics as dyn
from mechsym.spatial.loop_kinematics import LoopSolver
from mechsym.spatial.loops import LoopSystem


@pytest.fixture(scope="module")
def bricard_system():
    return LoopSystem(bricard.build(), backend="numpy")


def spatial_fourbar():
    """mechanisms/fourbar.py in the world's x-z plane: planar (x, y) is (x, 0, y) here, a planar angle
    (counter-clockwise) a turn about -y."""
    tree = Tree("fourbar3d")
    l1 = tree.parameter("l_crank", 0.05, "m")
    l2 = tree.parameter("l_rocker", 0.125, "m")
    l3 = tree.parameter("l_coupler", 0.25, "m")
    d = tree.parameter("d_ground", 0.1, "m")
    axis = (0, -1, 0)

    def rod(length):
        m = 1.0 * length
        return dict(mass=m, com=(length / 2, 0, 0), inertia=(0, m * length ** 2 / 12, m * length ** 2 / 12, 0, 0, 0))

    tree.body("ground")
    tree.body("crank", "ground", Revolute("A", axis=axis), **rod(l1))
    tree.body("coupler", "crank", Revolute("P", axis=axis), xyz=(l1, 0, 0), **rod(l3))
    tree.body("rocker", "ground", Revolute("B", axis=axis), xyz=(d, 0, 0), **rod(l2))
    tree.frame("M_coupler", "coupler", xyz=(l3 / 2, 0, 0))
    tree.frame("M_rocker", "rocker", xyz=(l2, 0, 0))
    tree.close("loop", "M_coupler", "M_rocker", Revolute("M", axis=axis))
    tree.drive("A")
    return tree


def test_bricard_mobility_and_redundant_row(bricard_system):
    s = bricard_system
    LoopSolver(s).close()
    assert (s.grubler, s.mobility, len(s.redundant)) == (0, 1, 1)


def test_closure_derivatives_match_a_solved_path(bricard_system):
    """J v = 0 and J a + gamma = 0 along a path of configurations solved from J4 = 0.3 sin t (the path's
    velocity and acceleration from its own solved points, central differences of step 1e-4: 1e-7)."""
    s = bricard_system
    solver = LoopSolver(s)
    part = dyn.Partition(solver, solver.close())
    h = 1e-4
    q = [part.configuration(np.array([0.3 * math.sin(t)]), np.array([0.3 * math.cos(t)]))[0] for t in (0.5 - h, 0.5, 0.5 + h)]
    v = (q[2] - q[0]) / (2 * h)                                       # revolute joints: v = dq/dt
    a = (q[2] - 2 * q[1] + q[0]) / h ** 2
    _, J, gamma = s.closure(q[1][None], v[None])
    assert np.abs(J[0] @ v).max() < 1e-7
    assert np.abs(J[0] @ a + gamma[0]).max() < 1e-6 * np.abs(gamma).max()


def test_planar_fourbar_equals_the_planar_route():
    from mechsym import derive

    planar = derive(fourbar.build(), backend="numpy")
    theta = np.linspace(0, 2 * np.pi, 73)[:-1]
    omega, alpha = 3.0, 2.0
    kin = planar.kinematics(theta)
    table = planar.inverse(theta, omega, alpha)
    con = planar.constraints
    angle = {b: kin.q[:, con.body_slice(b)][:, 2] for b in ("crank", "coupler", "rocker")}
    s = LoopSystem(spatial_fourbar(), backend="numpy")
    solver = LoopSolver(s)
    guess = np.array([theta[0], angle["coupler"][0] - theta[0], angle["rocker"][0]]) + 0.05
    ours = solver.sweep(theta, start=guess)
    expected = np.column_stack([angle["crank"], angle["coupler"] - angle["crank"], angle["rocker"]])
    turn = np.round((ours.q - expected) / (2 * np.pi))
    assert np.abs(ours.q - expected - 2 * np.pi * turn).max() < 1e-12
    assert np.all(s.redundant) and len(s.redundant) == 3          # the loop's out-of-plane rows
    v = ours.dq[:, :, 0] * omega
    a = ours.ddq * omega ** 2 + ours.dq[:, :, 0] * alpha
    tau, lam = dyn.inverse(solver, ours.q, v, a)
    assert np.abs(tau[:, 0] - table["torque"]).max() <= 1e-10 * np.abs(table["torque"]).max()
    react = dyn.reactions(solver, ours.q, v, a, tau, lam)
    for joint in ("A", "P", "M", "B"):
        for mine, theirs in (("fx", "fx"), ("fz", "fy")):
            ref = table[f"{joint}.{theirs}"]
            assert np.abs(react[f"{joint}.{mine}"] - ref).max() <= 1e-10 * np.abs(ref).max(), (joint, mine)


def _body_inertia(tree, name, values):
    """(mass, centre of mass (body frame), inertia about it (body frame)) at the parameter values."""
    b = tree.bodies[name]
    subs = {tree.parameters[n].symbol: v for n, v in values.items()}
    num = lambda e: float(sp.sympify(e).xreplace(subs))
    return num(b.mass), np.array([num(c) for c in b.com]), np.array(b.inertia.xreplace(subs), float)


def test_reactions_balance_every_body(bricard_system):
    """Each rod's Newton-Euler equations with every reaction, its drive and gravity, written with the
    tree's frame Jacobians and biases and the declared inertia: residual below 1e-10 of the forces."""
    tree = bricard.build()
    s = LoopSystem(tree, backend="numpy")
    solver = LoopSolver(s)
    kin = solver.sweep(np.linspace(0.2, 2.6, 7))
    rng = np.random.default_rng(1)
    thetad, thetadd = rng.normal(size=(7, 1)), rng.normal(size=(7, 1))
    v = kin.velocities(thetad)
    a = solver.accelerations(kin.q, v, thetadd)
    tau, lam = dyn.inverse(solver, kin.q, v, a)
    react = dyn.reactions(solver, kin.q, v, a, tau, lam)
    values = tree.resolve_parameters()
    g = values["g"]
    wrench = lambda joint: np.column_stack([react[f"{joint}.{x}"] for x in dyn.AXES])
    worst = scale = 0.0
    for k in range(5):
        body = f"rod{k + 1}"
        m, c, inertia = _body_inertia(tree, body, values)
        R = s.tree.frame_rotation(kin.q, body)
        o = s.tree.frame_position(kin.q, body)
        J = s.tree.frame_jacobian(kin.q, body)
        bias = s.tree.frame_bias(kin.q, v, body)
        acc = np.einsum("nij,nj->ni", J, a) + bias
        w = np.einsum("nij,nj->ni", J[:, 3:], v)
        r = np.einsum("nij,j->ni", R, c)
        a_c = acc[:, :3] + np.cross(acc[:, 3:], r) + np.cross(w, np.cross(w, r))
        Iw = R @ inertia @ np.swapaxes(R, 1, 2)
        need_f = m * (a_c + [0, 0, g])
        need_m = np.einsum("nij,nj->ni", Iw, acc[:, 3:]) + np.cross(w, np.einsum("nij,nj->ni", Iw, w))
        com = o + r
        applied = [(wrench(f"J{k + 1}"), o, 1.0)]                      # the parent's joint on this rod
        if k + 1 < 5:                                                  # this rod's joint on its child
            applied.append((wrench(f"J{k + 2}"), s.tree.frame_position(kin.q, f"rod{k + 2}"), -1.0))
        if k == 0:                                                      # the drive on rod1, about J1's axis
            applied.append((np.column_stack([J[:, :3, 0], J[:, 3:, 0]]) * tau, o, 1.0))
        if k == 4:                                                      # the closure J6 (ground on rod5)
            applied.append((wrench("J6"), s.tree.frame_position(kin.q, "P5_rod5"), 1.0))
        force = sum(sign * w6[:, :3] for w6, _, sign in applied)
        moment = sum(sign * (w6[:, 3:] + np.cross(at - com, w6[:, :3])) for w6, at, sign in applied)
        worst = max(worst, np.abs(force - need_f).max(), np.abs(moment - need_m).max())
        scale = max(scale, np.abs(need_f).max())
    assert worst <= 1e-10 * scale


def test_bricard_free_motion_conserves_energy(bricard_system):
    """10 s from rest (the benchmark's interval) at rtol 1e-12: the energy to 1e-9 of the largest kinetic
    energy, the closure rows below 1e-10 at every output sample (MECHSYM_SLOW: 1 s otherwise)."""
    s = bricard_system
    solver = LoopSolver(s)
    t_end = 10.0 if os.environ.get("MECHSYM_SLOW") else 1.0
    run = dyn.forward(solver, solver.close(), np.zeros(s.nv), t_end, dt=0.01, rtol=1e-12)
    q = np.column_stack([run[n] for n in s.coordinate_names])
    v = np.column_stack([run[f"{n}.v"] for n in s.speed_names])
    kinetic = s.tree.kinetic_energy(q, v)
    energy = kinetic + s.tree.potential_energy(q)
    assert kinetic.max() > 0.5                                          # it moves
    assert np.abs(energy - energy[0]).max() <= 1e-9 * kinetic.max()
    phi, J, _ = s.closure(q, v)
    assert np.abs(phi).max() < 1e-10 and np.abs(np.einsum("nij,nj->ni", J, v)).max() < 1e-10


def test_inconsistent_initial_speeds_are_projected(bricard_system):
    s = bricard_system
    solver = LoopSolver(s)
    with pytest.warns(UserWarning, match="projected"):
        run = dyn.forward(solver, solver.close(), np.ones(s.nv), 0.05, rtol=1e-9)
    v = np.array([run[f"{n}.v"][0] for n in s.speed_names])
    _, J, _ = s.closure(solver.close()[None])
    assert np.abs(J[0] @ v).max() < 1e-12


def test_bad_input_names_the_loop_and_joints():
    tree = bricard.build()
    with pytest.raises(InputError, match="loop 'again'.*one body 'rod1'"):
        tree.frame("other_end", "rod1", xyz=(1, 0, 0))
        tree.close("again", "rod1", "other_end", Revolute("J7"))
    tree = bricard.build()
    tree.drive("J2")
    with pytest.raises(InputError, match=r"mobility is 1 .* 2 coordinate\(s\) are driven \[J1, J2\]; loop 'loop' "
                                         r"\(joint 'J6'"):
        LoopSolver(LoopSystem(tree, backend="numpy")).assemble([0.1, 0.2])
    tree = bricard.build()
    tree.frames["P5_ground"] = tree.frames["P5_ground"].__class__("P5_ground", "ground", (0, -10, 0), np.eye(3))
    with pytest.raises(InputError, match="cannot assemble: loop 'loop' \\(joint 'J6' between frames 'P5_ground' "
                                         "and 'P5_rod5'\\) does not close"):
        LoopSolver(LoopSystem(tree, backend="numpy")).close()
    ball = Tree("ball")
    ball.body("ground")
    ball.body("arm", "ground", Spherical("S"), mass=1, inertia=(1, 1, 1, 0, 0, 0))
    ball.drive("S.qx")
    with pytest.raises(InputError, match="coordinate 'S.qx' of joint 'S' \\(Spherical\\) cannot be driven"):
        ball.close("loop", "ground", "arm", Revolute("R"))
        LoopSystem(ball, backend="numpy")


def test_command_line_runs_a_closed_loop_model(tmp_path, capsys):
    from mechsym.app.cli import main

    out = tmp_path / "rssr.csv"
    assert main(["inverse", "rssr", "--omega", "10", "--samples", "12", "--backend", "numpy", "--out", str(out)]) == 0
    from mechsym.core.results import read_csv

    table = read_csv(out)
    assert {"crank", "omega", "torque", "B.fx", "B.mz", "rocker.my", "A.fz"} <= set(table.names)
    assert len(table["crank"]) == 12
    assert main(["params", "bricard"]) == 0
    assert '"redundant_rows": [\n    "J6.along2"' in capsys.readouterr().out


def test_command_line_names_the_loop_where_the_drive_stops(capsys):
    from mechsym.app.cli import main

    assert main(["kinematics", "bricard", "--samples", "8", "--backend", "numpy"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: mechanism 'bricard': the continuation stops near J1=")
    assert "loop 'loop' (joint 'J6'" in err


def test_a_redundant_closure_that_locks_the_motion_is_refused():
    """Bricard's last hinge turned 10 degrees off its axis: the loop still closes at the declared configuration,
    but the rows are independent there (mobility 0), so the driven J1 cannot move; one error naming both."""
    tree = bricard.build()
    c = tree.closures.pop("loop")
    tree._joint_names.discard("J6")
    tilted = (math.cos(math.radians(10)), math.sin(math.radians(10)), 0)
    tree.close("loop", c.frame_a, c.frame_b, Revolute("J6", axis=tilted))
    with pytest.raises(InputError, match=r"mobility is 0 .*Grübler's count 0\) but 1 coordinate\(s\) are driven \[J1\]; "
                                         r"loop 'loop' \(joint 'J6'"):
        LoopSolver(LoopSystem(tree, backend="numpy")).assemble([0.1])


def test_a_closure_between_rigidly_joined_bodies_is_refused():
    from mechsym.spatial import Fixed

    tree = Tree("welded")
    tree.body("ground")
    tree.body("arm", "ground", Revolute("hinge"), mass=1, com=(0.5, 0, 0), inertia=(0, 0.1, 0.1, 0, 0, 0))
    tree.body("plate", "arm", Fixed("weld"), xyz=(1, 0, 0), mass=1, inertia=(0.1, 0.1, 0.1, 0, 0, 0))
    tree.close("loop", "arm", "plate", Revolute("extra"))
    with pytest.raises(InputError, match="loop 'loop': joint 'extra' joins frames 'arm' and 'plate', which are "
                                         "rigidly joined"):
        LoopSystem(tree, backend="numpy")


def test_derive_gives_a_loop_system_with_the_one_interface():
    from mechsym import derive
    from mechsym.core.derived import DerivedSystem

    system = derive(bricard.build(), backend="numpy")
    assert isinstance(system, LoopSystem) and isinstance(system, DerivedSystem)
    system.set_params({"m": 2.0})
    assert system.param_values[system.param_names.index("m")] == 2.0
    assert set(system.flops) >= {"closure", "wrenches", "mass", "bias"}
    with pytest.raises(InputError, match="contact frames on a closed-loop mechanism"):
        derive(bricard.build(), backend="numpy", contact_frames=("rod1",))
