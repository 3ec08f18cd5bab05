"""A universal joint in a tree: a chain with a universal joint on skew perpendicular axes against Pinocchio's
JointModelUniversal (H, bias, gravity, RNEA, ABA, centre of mass, energies, frame poses, Jacobians and
biases; 100 random states, 1e-10 norm-wise; the Coriolis matrix, not unique, by C v = bias - gravity and
C + C^T = dH/dt from the exact derivative of H: Pinocchio 4.1's computeCoriolisMatrix of this joint fails
both) on the generated C and the numpy rendering; the
RSSR crank-rocker with its universal joint in the tree (the spherical joint closing the loop) moves and is
driven as the shipped one, whose universal joint closes the loop (1e-10); non-perpendicular axes refused."""
import numpy as np
import pytest

from mechanisms import rssr
from mechsym import derive
from mechsym.app.cli import main
from mechsym.core.errors import InputError
from mechsym.spatial import Revolute, Spherical, Tree, Universal
from mechsym.spatial import loop_dynamics as dyn
from mechsym.spatial.loop_kinematics import LoopSolver
from mechsym.spatial.loops import LoopSystem
from test_spatial_loop_drives import _route
from conftest import agree
from test_tree_joint_type import pinocchio_chain
from test_trees import check_against_pinocchio, hdot

pin = pytest.importorskip("pinocchio")

U1 = np.array([1.0, 2.0, 2.0]) / 3.0                  # the cross's axes: skew, perpendicular
U2 = np.array([2.0, -1.0, 0.0]) / np.sqrt(5.0)
BODIES = [  # name, parent, xyz, rpy, mass, com, inertia (ixx, iyy, izz, ixy, ixz, iyz)
    ("link1", "base", (0.0, 0.0, 0.1), (0.0, 0.0, 0.0), 1.5, (0.1, 0.0, 0.05), (0.02, 0.03, 0.025, 0.001, 0.0, 0.002)),
    ("link2", "link1", (0.3, 0.05, 0.0), (0.2, -0.3, 0.4), 0.8, (0.0, 0.04, -0.02), (0.004, 0.005, 0.006, 0.0, 0.0005, 0.0)),
    ("link3", "link2", (0.0, 0.2, 0.1), (0.0, 0.5, 0.0), 0.6, (0.12, 0.0, 0.0), (0.001, 0.007, 0.007, 0.0, 0.0, 0.0)),
]
TIP = (0.25, 0.0, 0.02)


def chain():
    """A hinge, the universal joint, a hinge, a frame on the last link."""
    t = Tree("universal_chain")
    t.body("base")
    joints = (Revolute("j1", (0, 0, 1)), Universal("U", tuple(U1), tuple(U2)), Revolute("j3", (0, 1, 0)))
    for joint, (name, parent, xyz, rpy, m, com, inertia) in zip(joints, BODIES):
        t.body(name, parent, joint, xyz=xyz, rpy=rpy, mass=m, com=com, inertia=inertia)
    t.frame("tip", "link3", xyz=TIP)
    return t


def pinocchio_model():
    """The same chain in Pinocchio, its universal joint JointModelUniversal(axis, axis2)."""
    kinds = (pin.JointModelRZ(), pin.JointModelUniversal(U1, U2), pin.JointModelRY())
    return pinocchio_chain(BODIES, kinds, ("j1", "U", "j3"), TIP)


@pytest.mark.parametrize("backend", ["c", "numpy"])
def test_universal_joint_in_a_tree_against_pinocchio(backend):
    system = derive(chain(), contact_frames=("tip",), backend=backend)
    assert system.coordinate_names == system.speed_names == ["j1", "U.angle1", "U.angle2", "j3"]
    q, v = check_against_pinocchio(system, pinocchio_model(), ["tip", "link2", "link3"], seed=23, coriolis=False)
    if backend == "numpy":                              # C + C^T = dH/dt (exact symbolic derivative of H)
        f = hdot(system)
        Hd = np.array([f(qi, vi) for qi, vi in zip(q[:10], v[:10])], float)
        C = system.coriolis(q[:10], v[:10])
        assert agree(C + C.transpose(0, 2, 1), Hd, 1e-12) and np.abs(Hd).max() > 0.01


def rssr_universal_in_tree():
    """mechanisms/rssr.py's crank-rocker with the coupler hung from the rocker's tip B by the universal joint
    (axis y on the rocker, the normal to AB and y on the coupler) and the loop closed at the crank's end A by
    the spherical joint."""
    a = np.array([rssr.CRANK, 0.0, 0.0])
    b = rssr.PIVOT + np.array([0.0, 0.0, -rssr.ROCKER])
    ab = b - a
    normal = np.cross((0, 1, 0), ab)
    tree = Tree("rssr_universal_in_tree")
    m = {name: tree.parameter(f"m_{name}", value, "kg", f"{name} mass") for name, value in rssr.MASSES.items()}
    tree.body("ground")
    tree.body("crank", "ground", Revolute("crank", axis=(0, 0, 1)), **rssr._rod(m["crank"], a))
    tree.body("rocker", "ground", Revolute("rocker", axis=(0, 1, 0)), xyz=tuple(rssr.PIVOT),
              **rssr._rod(m["rocker"], b - rssr.PIVOT))
    tree.body("coupler", "rocker", Universal("B", axis=(0, 1, 0), axis2=tuple(normal / np.linalg.norm(normal))),
              xyz=tuple(b - rssr.PIVOT), **rssr._rod(m["coupler"], -ab, rssr.COUPLER_RADIUS))
    tree.frame("A_crank", "crank", xyz=tuple(a))
    tree.frame("A_coupler", "coupler", xyz=tuple(-ab))
    tree.close("loop", "A_crank", "A_coupler", Spherical("A"))
    tree.drive("crank")
    return tree


def test_rssr_with_its_universal_joint_in_the_tree_equals_the_closing_one():
    """Over a crank revolution at crank speed 3 rad/s and acceleration 1.5 rad/s^2: the rocker's angle and the
    crank torque equal the shipped mechanism's (1e-10), and the coupler's pose too."""
    theta = np.linspace(0, 2 * np.pi, 25)[:-1]
    s, kin, _, _, tau = _route(rssr_universal_in_tree(), theta)
    s0, kin0, _, _, tau0 = _route(rssr.build(), theta)
    assert s.coordinate_names == ["crank", "rocker", "B.angle1", "B.angle2"]
    rocker, rocker0 = (k.q[:, x.coordinate_names.index("rocker")] for k, x in ((kin, s), (kin0, s0)))
    assert np.abs(rocker - rocker0).max() < 1e-10 and np.ptp(rocker) > 1.0
    assert np.abs(tau - tau0).max() <= 1e-10 * np.abs(tau0).max()
    R, R0 = s.tree.frame_rotation(kin.q, "coupler"), s0.tree.frame_rotation(kin0.q, "coupler")
    assert np.abs(R - R0).max() < 1e-10


def test_non_perpendicular_axes_in_a_tree_are_refused():
    t = Tree("skew")
    t.body("base")
    with pytest.raises(InputError, match=r"^tree 'skew': joint 'U': the universal joint's axes .* are not "
                                         r"perpendicular$"):
        t.body("link", "base", Universal("U", (1, 0, 0), (1, 1, 0)), mass=1.0, inertia=(1, 1, 1, 0, 0, 0))


def test_rssr_reactions_with_the_universal_joint_in_the_tree_equal_the_closing_ones():
    """Every joint's reaction (world axes, at the joint's origin) equals the shipped mechanism's (1e-10): the
    crank's, the rocker's and A's alike, and B's opposite (in the tree the rocker is B's first body, the
    closure's first body is the coupler); none is reported for the cross."""
    theta = np.linspace(0, 2 * np.pi, 13)[:-1]
    out = []
    for tree in (rssr_universal_in_tree(), rssr.build()):
        solver = LoopSolver(LoopSystem(tree, backend="numpy"))
        kin = solver.sweep(theta)
        v, a = kin.dq[:, :, 0] * 3.0, kin.ddq * 9.0 + kin.dq[:, :, 0] * 1.5
        tau, lam = dyn.inverse(solver, kin.q, v, a)
        out.append(dyn.reactions(solver, kin.q, v, a, tau, lam))
    ours, shipped = out
    assert sorted(ours) == sorted(shipped) and not any(k.startswith("B.angle") or "cross" in k for k in ours)
    for kind in "fm":                                   # the forces together, the moments together
        names = [n for n in shipped if n.split(".")[1][0] == kind]
        ref = np.array([shipped[n] * (-1.0 if n.startswith("B.") else 1.0) for n in names])
        assert agree(np.array([ours[n] for n in names]), ref, 1e-10) and np.abs(ref).max() > 0.1


def test_a_model_file_with_non_perpendicular_axes_exits_2_naming_the_joint(tmp_path, capsys):
    model = tmp_path / "skew.py"
    model.write_text("from mechsym.spatial import Tree, Universal\n\n\ndef build():\n    t = Tree('skew')\n"
                     "    t.body('base')\n    t.body('link', 'base', Universal('U', (1, 0, 0), (1, 1, 0)), mass=1.0)\n"
                     "    return t\n")
    assert main(["params", str(model)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: tree 'skew': joint 'U': the universal joint's axes")


def test_a_body_named_like_the_cross_is_refused():
    t = chain()
    t.frame("U.cross", "link1")
    with pytest.raises(InputError, match=r"^tree 'universal_chain': 'U.cross', the cross of joint 'U', is also "
                                         r"declared as a body or frame$"):
        derive(t, backend="numpy")
