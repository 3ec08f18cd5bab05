"""Closing joints beyond the revolute family: a planar joint as a closure, each mechanism checked against an
independent route (the same motion declared as an open tree, and its statics by hand)."""
import math

import numpy as np
import pytest

from mechsym.spatial import Planar, Prismatic, Revolute, Tree
from mechsym.spatial import loop_dynamics as dyn
from mechsym.spatial.loop_kinematics import LoopSolver
from mechsym.spatial.loops import LoopSystem
from mechsym.spatial.system import TreeSystem

G = 9.81


def _turntable(closed):
    """A table turning about z on a column; closed: the column slides freely along z (prismatic 'lift') and a
    planar closure holds the table in the plane z = H of the ground; else the table turns on the ground at H."""
    tree = Tree("turntable")
    tree.body("ground")
    parent = "ground"
    if closed:
        tree.body("column", "ground", Prismatic("lift", axis=(0, 0, 1)), xyz=(0, 0, 0.4), mass=3.0,
                  inertia=(0.1, 0.1, 0.05, 0, 0, 0))
        tree.frame("plane", "ground", xyz=(0.3, -0.2, 0.4))
        parent = "column"
    tree.body("table", parent, Revolute("spin", axis=(0, 0, 1)), xyz=(0, 0, 0) if closed else (0, 0, 0.4),
              mass=2.0, com=(0.05, 0.02, 0.01), inertia=(0.2, 0.3, 0.4, 0.01, 0.02, 0.03))
    if closed:
        tree.close("slab", "plane", "table", Planar("glide"))
    tree.drive("spin")
    return tree


def test_planar_closure_holds_a_body_in_its_plane():
    """The planar closure's row along the plane's normal locks the free column, two rows are redundant
    (the table's z stays vertical through its revolute); the table's torque equals the open tree's H a + bias
    with the table on the ground (1e-12), the closure carries the column's and table's weight along z and the
    column's prismatic joint none."""
    s = LoopSystem(_turntable(True), backend="numpy")
    solver = LoopSolver(s)
    kin = solver.sweep(np.linspace(0, 2 * np.pi, 13)[:-1])
    assert s.mobility == 1 and len(s.redundant) == 2
    assert np.abs(kin.q[:, s.coordinate_names.index("lift")]).max() < 1e-12
    omega, alpha = 3.0, 1.5
    v, a = kin.dq[:, :, 0] * omega, kin.ddq * omega ** 2 + kin.dq[:, :, 0] * alpha
    tau, lam = dyn.inverse(solver, kin.q, v, a)
    ref = TreeSystem(_turntable(False), backend="numpy")
    theta = kin.q[:, [s.coordinate_names.index("spin")]]
    expected = np.einsum("nij,nj->ni", ref.mass_matrix(theta), np.full((len(theta), 1), alpha)) \
        + ref.bias(theta, np.full((len(theta), 1), omega))
    assert np.abs(tau - expected).max() <= 1e-12 * np.abs(expected).max()
    reactions = dyn.reactions(solver, kin.q, v, a, tau, lam)
    assert np.abs(reactions["glide.fz"] - 5.0 * G).max() < 1e-10
    assert np.abs(reactions["lift.fz"]).max() < 1e-10


def _yoked_pendulum(closed):
    """A rod swinging about y (revolute 'pitch'); closed: on a yoke free to turn about z (revolute 'yaw') whose
    turning a planar closure in the x-z plane at the rod's tip prevents; else hinged on the ground."""
    tree = Tree("pendulum")
    tree.body("ground")
    parent = "ground"
    if closed:
        tree.body("yoke", "ground", Revolute("yaw", axis=(0, 0, 1)), mass=0.5, com=(0, 0, 0.05),
                  inertia=(0.01, 0.01, 0.02, 0, 0, 0))
        parent = "yoke"
    L, m = 0.6, 1.2
    tree.body("rod", parent, Revolute("pitch", axis=(0, 1, 0)), mass=m, com=(0, 0, -L / 2),
              inertia=(m * L ** 2 / 12, m * L ** 2 / 12, 1e-4, 0, 0, 0))
    if closed:
        tree.frame("tip", "rod", xyz=(0, 0, -L), rpy=(math.pi / 2, 0, 0))
        tree.frame("wall", "ground", xyz=(0.2, 0, -L), rpy=(math.pi / 2, 0, 0))
        tree.close("slot", "wall", "tip", Planar("guide"))
    tree.drive("pitch")
    return tree


def test_planar_closure_keeps_a_pendulum_in_its_plane():
    """A planar closure in the x-z plane keeps the yoke from turning: the yaw stays 0 (1e-12) over the swing, and
    the torque at the pitch hinge equals the open pendulum's H a + bias (1e-12) and, by hand,
    (I + m L^2 / 4) alpha + m g L / 2 sin(pitch)."""
    s = LoopSystem(_yoked_pendulum(True), backend="numpy")
    solver = LoopSolver(s)
    theta = np.linspace(-1.2, 1.2, 9)
    kin = solver.sweep(theta)
    assert s.mobility == 1
    assert np.abs(kin.q[:, s.coordinate_names.index("yaw")]).max() < 1e-12
    omega, alpha = 2.0, -0.8
    v, a = kin.dq[:, :, 0] * omega, kin.ddq * omega ** 2 + kin.dq[:, :, 0] * alpha
    tau, _ = dyn.inverse(solver, kin.q, v, a)
    ref = TreeSystem(_yoked_pendulum(False), backend="numpy")
    pitch = theta[:, None]
    expected = (np.einsum("nij,nj->ni", ref.mass_matrix(pitch), np.full_like(pitch, alpha))
                + ref.bias(pitch, np.full_like(pitch, omega)))
    assert np.abs(tau - expected).max() <= 1e-12 * np.abs(expected).max()
    L, m = 0.6, 1.2
    by_hand = (m * L ** 2 / 12 + m * L ** 2 / 4) * alpha + m * G * L / 2 * np.sin(theta)
    assert np.abs(tau[:, 0] - by_hand).max() <= 1e-12 * np.abs(by_hand).max()


A, B, C, D = 0.05, 0.12, 0.10, 0.11          # crank, coupler, rocker, ground link (m)
MASS = {"crank": 0.3, "coupler": 0.5, "rocker": 0.4}


def _fourbar_points():
    """O, A, B, Q of the four-bar at the crank angle 90 degrees (the declared configuration)."""
    O, Q = np.zeros(3), np.array([D, 0.0, 0.0])
    Ap = np.array([0.0, A, 0.0])
    d = np.linalg.norm(Q - Ap)
    x = (B ** 2 - C ** 2 + d ** 2) / (2 * d)
    h = np.sqrt(B ** 2 - x ** 2)
    e = (Q - Ap) / d
    Bp = Ap + x * e + h * np.array([-e[1], e[0], 0.0])
    return O, Ap, Bp, Q


def _bar(tree, name, parent, joint, origin, ends, parent_origin):
    """A bar between two world points `ends`, its body frame at `origin` (world, parallel to the world axes)."""
    m = MASS[name]
    L = np.linalg.norm(ends[1] - ends[0])
    u = (ends[1] - ends[0]) / L
    tree.body(name, parent, joint, xyz=tuple(origin - parent_origin), mass=m,
              com=tuple((ends[0] + ends[1]) / 2 - origin),
              inertia=(m * L ** 2 / 12 * (np.eye(3) - np.outer(u, u)) + 1e-6 * np.eye(3)).tolist())


def _fourbar(through_closure, closing=Revolute, drive="crank"):
    """The four-bar O-A-B-Q with hinges about z. Driven through the tree: ground-crank-coupler and ground-rocker,
    closed at B, the crank's hinge driven. Driven through the closure: ground-rocker-coupler-crank, closed at O by
    the joint `closing` 'crank' about z (ground's frame a, the crank's frame b), whose own coordinate `drive` is
    driven."""
    O, Ap, Bp, Q = _fourbar_points()
    z = (0, 0, 1)
    tree = Tree("fourbar3d")
    tree.body("ground")
    if not through_closure:
        _bar(tree, "crank", "ground", Revolute("crank", axis=z), O, (O, Ap), O)
        _bar(tree, "coupler", "crank", Revolute("A", axis=z), Ap, (Ap, Bp), O)
        _bar(tree, "rocker", "ground", Revolute("rocker", axis=z), Q, (Q, Bp), O)
        tree.frame("B_coupler", "coupler", xyz=tuple(Bp - Ap))
        tree.frame("B_rocker", "rocker", xyz=tuple(Bp - Q))
        tree.close("loop", "B_coupler", "B_rocker", Revolute("B", axis=z))
    else:
        _bar(tree, "rocker", "ground", Revolute("rocker", axis=z), Q, (Q, Bp), O)
        _bar(tree, "coupler", "rocker", Revolute("B", axis=z), Bp, (Ap, Bp), Q)
        _bar(tree, "crank", "coupler", Revolute("A", axis=z), Ap, (O, Ap), Bp)
        tree.frame("O_crank", "crank", xyz=tuple(O - Ap))
        tree.close("loop", "ground", "O_crank", closing("crank", axis=z))
    tree.drive(drive)
    return tree


def test_driving_a_closure_coordinate_equals_driving_the_tree_coordinate():
    """One four-bar declared twice: driven at the crank's tree hinge, and on another spanning tree whose closing
    hinge is the crank's, driven by that closure's own angle. The rocker's angle (1e-12), the crank torque and
    the crank hinge's in-plane reaction (1e-10), and a forward run under a constant torque (1e-8) agree."""
    from mechsym.spatial import loop_tables

    theta = np.linspace(0, 2 * np.pi, 25)[:-1]
    omega, alpha = 4.0, 2.0
    out = {}
    for through_closure in (False, True):
        s = LoopSystem(_fourbar(through_closure), backend="numpy")
        solver = LoopSolver(s)
        kin = solver.sweep(theta)
        v, a = kin.dq[:, :, 0] * omega, kin.ddq * omega ** 2 + kin.dq[:, :, 0] * alpha
        tau, lam = dyn.inverse(solver, kin.q, v, a)
        reactions = dyn.reactions(solver, kin.q, v, a, tau, lam)
        run = loop_tables.forward(solver, 0.05, 0.0, 3.0, 0.3, rtol=1e-11)
        out[through_closure] = (kin.q[:, s.coordinate_names.index("rocker")], tau[:, 0], reactions, run)
    (rocker, tau, react, run), (rocker2, tau2, react2, run2) = out[False], out[True]
    assert np.abs(rocker2 - rocker).max() < 1e-12 and np.ptp(rocker) > 0.3
    assert np.abs(tau2 - tau).max() <= 1e-10 * np.abs(tau).max()
    forces = np.array([react[f"crank.{x}"] for x in ("fx", "fy")])      # (fz, mx, my: undetermined in a planar
    forces2 = np.array([react2[f"crank.{x}"] for x in ("fx", "fy")])    # linkage whose hinges are all about z)
    assert np.abs(forces2 - forces).max() <= 1e-10 * np.abs(forces).max()
    assert np.abs(react2["crank.mz"]).max() <= 1e-10 * np.abs(tau).max()
    assert np.abs(run2["crank"] - run["crank"]).max() < 1e-8 and run["crank"][-1] > 0.5
    assert np.abs(run2["omega"] - run["omega"]).max() < 1e-8
