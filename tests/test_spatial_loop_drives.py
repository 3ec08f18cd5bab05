"""Driving a closing joint's own coordinates beyond a hinge's angle and a slide's travel: a closing cylindrical's
angle and travel, a closing universal's two angles, each against an independent route (the same motion
driven through a tree coordinate, a closed form, the relative rotation of the two frames decomposed in numpy,
the virtual power of the driving forces), and a coordinate a closing joint does not have."""
import numpy as np
import pytest
import sympy as sp

from mechanisms import rssr
from mechsym.core.errors import InputError
from mechsym.spatial import Cylindrical, Revolute, Tree
from mechsym.spatial import loop_dynamics as dyn
from mechsym.spatial.loop_kinematics import LoopSolver
from mechsym.spatial.loops import LoopSystem
from tests.test_spatial_loops_closures import _fourbar


def _route(tree, values, omega=3.0, alpha=1.5):
    """(system, kin, v, a, tau) of `tree` swept over its one drive's `values` at driven speed omega."""
    s = LoopSystem(tree, backend="numpy")
    solver = LoopSolver(s)
    kin = solver.sweep(values)
    v, a = kin.dq[:, :, 0] * omega, kin.ddq * omega ** 2 + kin.dq[:, :, 0] * alpha
    return s, kin, v, a, dyn.inverse(solver, kin.q, v, a)[0][:, 0]


def _rodrigues(u, t):
    """Rotations (N, 3, 3) by the angles t (N,) about the unit axis u."""
    K = np.array([[0, -u[2], u[1]], [u[2], 0, -u[0]], [-u[1], u[0], 0]])
    return np.eye(3) + np.sin(t)[:, None, None] * K + (1 - np.cos(t))[:, None, None] * (K @ K)


def test_a_closing_cylindrical_driven_by_its_angle_equals_the_tree_crank():
    """The four-bar closed at the crank's pivot O by a cylindrical joint about z (its slide held by the z
    hinges) and driven by `crank.angle` moves as the four-bar driven at its tree crank hinge: the rocker's angle
    (1e-12) and the crank torque (1e-10)."""
    tree = _fourbar(through_closure=True, closing=Cylindrical, drive="crank.angle")
    theta = np.linspace(0, 2 * np.pi, 25)[:-1]
    s, kin, _, _, tau = _route(tree, theta)
    s0, kin0, _, _, tau0 = _route(_fourbar(through_closure=False), theta)
    rocker, rocker0 = (k.q[:, x.coordinate_names.index("rocker")] for k, x in ((kin, s), (kin0, s0)))
    assert np.abs(rocker - rocker0).max() < 1e-12 and np.ptp(rocker) > 0.3
    assert np.abs(tau - tau0).max() <= 1e-10 * np.abs(tau0).max()


R_CRANK, L_ROD, OFFSET = 0.1, 0.35, 0.04


def _slider_crank(drive):
    """An offset slider-crank in the plane z = 0: the crank hinged about z at the origin (at rest along +y), the
    rod hinged to it, the slider hinged to the rod at B; a closing cylindrical joint along x at height OFFSET
    (ground frame a, the slider's frame b) guides the slider: its travel is B's x."""
    A = np.array([0.0, R_CRANK, 0.0])
    B = np.array([np.sqrt(L_ROD ** 2 - (R_CRANK - OFFSET) ** 2), OFFSET, 0.0])
    z = (0, 0, 1)
    tree = Tree("slider_crank")
    tree.body("ground")
    tree.body("crank", "ground", Revolute("crank", axis=z), mass=0.5, com=tuple(A / 2),
              inertia=(1e-3, 1e-4, 1e-3, 0, 0, 0))
    tree.body("rod", "crank", Revolute("pin", axis=z), xyz=tuple(A), mass=0.8, com=tuple((B - A) / 2),
              inertia=(2e-3, 1e-2, 1e-2, 0, 0, 0))
    tree.body("slider", "rod", Revolute("wrist", axis=z), xyz=tuple(B - A), mass=1.2,
              inertia=(1e-3, 1e-3, 1e-3, 0, 0, 0))
    tree.frame("guide", "ground", xyz=(0.0, OFFSET, 0.0))
    tree.close("slide", "guide", "slider", Cylindrical("S", axis=(1, 0, 0)))
    tree.drive(drive, force="force" if drive == "S.slide" else "torque")
    return tree


def test_a_closing_cylindrical_driven_by_its_travel_against_the_closed_form():
    """Driven by `S.slide` = x: the crank angle phi solves x = -r sin phi + sqrt(L^2 - (c - r cos phi)^2)
    (1e-12), dphi/dx = 1 / (dx/dphi) of that closed form (sympy's exact derivative, 1e-10), and the slider's
    force F does the crank torque's work: F dx/dphi = tau of the same mechanism driven at its crank (1e-9)."""
    phi_s = sp.Symbol("phi")
    x_of = -R_CRANK * sp.sin(phi_s) + sp.sqrt(L_ROD ** 2 - (OFFSET - R_CRANK * sp.cos(phi_s)) ** 2)
    x_f, dx_f = sp.lambdify(phi_s, x_of), sp.lambdify(phi_s, sp.diff(x_of, phi_s))
    phi0 = np.linspace(0.3, 1.2, 10)                       # dx/dphi < 0 there: x decreasing with phi
    x = x_f(phi0)
    s, kin, v, a, force = _route(_slider_crank("S.slide"), x, omega=-2.0, alpha=0.5)
    phi = kin.q[:, s.coordinate_names.index("crank")]
    assert np.abs(x_f(phi) - x).max() < 1e-12 and np.abs(phi - phi0).max() < 1e-10
    dphi_dx = kin.dq[:, s.speed_names.index("crank"), 0]
    np.testing.assert_allclose(dphi_dx * dx_f(phi), 1.0, rtol=0, atol=1e-10)
    # the same motion driven at the crank: phi' = -2 dphi/dx, phi'' = d(phi')/dt
    s0 = LoopSystem(_slider_crank("crank"), backend="numpy")
    solver0 = LoopSolver(s0)
    tau0 = dyn.inverse(solver0, kin.q, v, a)[0][:, 0]
    np.testing.assert_allclose(force * dx_f(phi), tau0, rtol=1e-9, atol=1e-12 * np.abs(tau0).max())


@pytest.mark.parametrize("angle, theta", [("B.angle1", np.linspace(0.1, 1.3, 9)),
                                          ("B.angle2", np.linspace(0.1, 2.2, 9))])
def test_a_closing_universal_driven_by_either_angle_equals_the_crank_route(angle, theta):
    """The RSSR driven by one angle of its closing universal joint B instead of its crank: the angles are
    those of the frames' relative rotation R_a^T R_b = rot(axis, angle1) rot(axis2, angle2) decomposed in
    numpy (the decomposition rebuilds it to 1e-12); driven at those values it passes through the crank route's
    configurations (1e-10); its rate is 1 / (d angle / d crank) with that derivative taken from the atan2 of
    the decomposition and the frames' angular velocities and accelerations (1e-9), which the generated drive
    row and gamma reproduce (1e-12, 1e-10); its torque does the crank torque's work (1e-9)."""
    base = rssr.build()
    joint = base.closures["loop"].joint
    u1, u2 = np.array(joint.axis), np.array(joint.axis2)
    u3 = np.cross(u1, u2)
    s0, kin0, v0, a0, tau0 = _route(base, theta, omega=1.0, alpha=0.0)
    Ra, Rb = (s0.tree.frame_rotation(kin0.q, f) for f in ("B_coupler", "B_rocker"))
    R = np.einsum("nji,njk->nik", Ra, Rb)                  # R_a^T R_b
    y1, x1 = np.einsum("i,nij,j->n", u3, R, u2), np.einsum("i,nij,j->n", u2, R, u2)
    y2, x2 = np.einsum("i,nji,j->n", u3, R, u1), np.einsum("i,nji,j->n", u1, R, u1)
    t1, t2 = np.arctan2(y1, x1), np.arctan2(y2, x2)
    assert np.abs(_rodrigues(u1, t1) @ _rodrigues(u2, t2) - R).max() < 1e-12
    # the angle's first and second time derivatives at unit crank speed, zero crank acceleration, from the
    # atan2: (R u)' = w x R u, (R u)'' = alpha x R u + w x (w x R u), each frame's w = J_ang v and its angular
    # acceleration alpha = J_ang a + its bias
    motion = {}
    for f, Rf in (("B_coupler", Ra), ("B_rocker", Rb)):
        Jf = s0.tree.frame_jacobian(kin0.q, f)[:, 3:]
        motion[f] = (Rf, np.einsum("nij,nj->ni", Jf, v0),
                     np.einsum("nij,nj->ni", Jf, a0) + s0.tree.frame_bias(kin0.q, v0, f)[:, 3:])

    def turning(frame, u):
        """(R u, its first and second time derivatives) for the frame's rotation R."""
        Rf, w, al = motion[frame]
        p = np.einsum("nij,j->ni", Rf, u)
        return p, np.cross(w, p), np.cross(al, p) + np.cross(w, np.cross(w, p))

    def dot3(first, second):
        """(f . g, its first and second time derivatives)."""
        (p, dp, ddp), (r, dr, ddr) = first, second
        d = lambda x, y: np.einsum("ni,ni->n", x, y)       # noqa: E731
        return d(p, r), d(dp, r) + d(p, dr), d(ddp, r) + 2 * d(dp, dr) + d(p, ddr)

    if angle == "B.angle1":
        values = t1
        (y, dy, ddy), (x, dx, ddx) = (dot3(turning("B_coupler", n), turning("B_rocker", u2)) for n in (u3, u2))
    else:
        values = t2
        (y, dy, ddy), (x, dx, ddx) = (dot3(turning("B_rocker", n), turning("B_coupler", u1)) for n in (u3, u1))
    n2 = x ** 2 + y ** 2
    dvalue = (x * dy - y * dx) / n2                         # d angle / d crank
    ddvalue = (x * ddy - y * ddx) / n2 - dvalue * 2 * (x * dx + y * dy) / n2
    assert np.abs(np.arctan2(y, x) - values).max() < 1e-14
    assert np.all(np.abs(dvalue) > 0.05)                   # no fold of the angle over these samples
    tree = rssr.build()
    tree.drives.clear()
    tree.drive(angle)
    s, kin, v, a, tau = _route(tree, values, omega=1.0, alpha=0.0)
    assert np.abs(kin.q - kin0.q).max() < 1e-10
    np.testing.assert_allclose(kin.dq[:, s.speed_names.index("crank"), 0] * dvalue, 1.0, rtol=0, atol=1e-9)
    _, D, gamma, _ = s.drive_rows(kin0.q, v0)              # the generated row and gamma of the driven angle
    np.testing.assert_allclose(np.einsum("ni,ni->n", D[:, 0], v0), dvalue, rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.einsum("ni,ni->n", D[:, 0], a0) + gamma[:, 0], ddvalue, rtol=0, atol=1e-10)
    # the same motion at crank speed 1: the angle's speed is dvalue
    tau_same = dyn.inverse(LoopSolver(s), kin0.q, v0, a0)[0][:, 0]
    np.testing.assert_allclose(tau_same * dvalue, tau0, rtol=0, atol=1e-9 * np.abs(tau0).max())


@pytest.mark.parametrize("coordinate, offered", [("B", "B.angle1, B.angle2"), ("B.angle3", "B.angle1, B.angle2")])
def test_a_coordinate_the_closing_joint_does_not_have_is_named(coordinate, offered):
    tree = rssr.build()
    tree.drives.clear()
    tree.drive(coordinate)
    with pytest.raises(InputError, match=rf"tree 'rssr': loop 'loop': the closing joint 'B' \(Universal\) has no "
                                         rf"coordinate '{coordinate}' to drive \(its coordinates: {offered}\)"):
        LoopSystem(tree, backend="numpy")
