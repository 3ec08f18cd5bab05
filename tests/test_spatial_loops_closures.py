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
