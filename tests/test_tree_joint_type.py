"""A joint type is one class: a helical (screw) joint declared outside mechsym (the class of docs/trees.md,
run from the page), used in a small tree
(a fixed base, a hinge, the screw on a skew axis, a hinge after it, a frame on the last link), checked
against Pinocchio's JointModelHelicalUnaligned (H, bias, gravity, RNEA, Coriolis, ABA, centre of mass and
its Jacobian, energies, frame poses, Jacobians and biases; 100 random states, 1e-10 norm-wise) on the
generated C and on the numpy rendering; with pitch 0 it is the same tree as with a Revolute."""
import re
from pathlib import Path

import numpy as np
import pytest

from conftest import agree
from mechsym.core.errors import InputError
from mechsym.spatial import Revolute, Tree
from mechsym import derive
from mechsym.spatial.declare import rpy_matrix
from test_trees import check_against_pinocchio, random_states

pin = pytest.importorskip("pinocchio")


def _helical():
    """The Helical class of docs/trees.md ("Adding a joint type"), executed from the page."""
    page = (Path(__file__).resolve().parent.parent / "docs" / "trees.md").read_text()
    section = page.split("## Adding a joint type")[1].split("\n## ")[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 1
    scope = {"__name__": "docs_trees"}
    exec(blocks[0], scope)
    return scope["Helical"]


Helical = _helical()


AXIS = (1.0, 2.0, 2.0)                       # not a unit vector: the joint normalises it (to (1, 2, 2)/3)
PITCH = 0.05
BODIES = [  # name, parent, xyz, rpy, mass, com, inertia (ixx, iyy, izz, ixy, ixz, iyz)
    ("link1", "base", (0.0, 0.0, 0.1), (0.0, 0.0, 0.0), 1.5, (0.1, 0.0, 0.05), (0.02, 0.03, 0.025, 0.001, 0.0, 0.002)),
    ("nut", "link1", (0.3, 0.05, 0.0), (0.2, -0.3, 0.4), 0.8, (0.0, 0.04, -0.02), (0.004, 0.005, 0.006, 0.0, 0.0005, 0.0)),
    ("link3", "nut", (0.0, 0.2, 0.1), (0.0, 0.5, 0.0), 0.6, (0.12, 0.0, 0.0), (0.001, 0.007, 0.007, 0.0, 0.0, 0.0)),
]
TIP = (0.25, 0.0, 0.02)


def screw_tree(pitch=PITCH, screw=True):
    """The tree, its second joint a Helical of `pitch` (or, with screw=False, a Revolute on the same axis)."""
    t = Tree("screw_chain" if screw else "screw_chain_hinge")
    t.body("base")
    joints = [Revolute("j1", (0, 0, 1)), Helical("screw", AXIS, pitch) if screw else Revolute("screw", AXIS),
              Revolute("j3", (0, 1, 0))]
    for joint, (name, parent, xyz, rpy, m, com, inertia) in zip(joints, BODIES):
        t.body(name, parent, joint, xyz=xyz, rpy=rpy, mass=m, com=com, inertia=inertia)
    t.frame("tip", "link3", xyz=TIP)
    return t


def pinocchio_model(pitch=PITCH):
    """The same tree built joint by joint in Pinocchio."""
    kinds = [pin.JointModelRZ(), pin.JointModelHelicalUnaligned(np.array(AXIS) / 3.0, pitch), pin.JointModelRY()]
    return pinocchio_chain(BODIES, kinds, ("j1", "screw", "j3"), TIP)


def pinocchio_chain(bodies, kinds, joint_names, tip):
    """A chain in Pinocchio: each of `bodies` (name, parent, xyz, rpy, mass, com, inertia (ixx, iyy, izz, ixy,
    ixz, iyz)) on the joint of its kind and name, a frame per body, and the frame "tip" at `tip` on the last."""
    model = pin.Model()
    parent = 0
    for (name, _, xyz, rpy, m, com, (ixx, iyy, izz, ixy, ixz, iyz)), kind, jname in zip(bodies, kinds, joint_names):
        placement = pin.SE3(rpy_matrix(rpy), np.array(xyz))
        parent = model.addJoint(parent, kind, placement, jname)
        inertia = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
        model.appendBodyToJoint(parent, pin.Inertia(m, np.array(com), inertia), pin.SE3.Identity())
        model.addFrame(pin.Frame(name, parent, 0, pin.SE3.Identity(), pin.FrameType.BODY))
    model.addFrame(pin.Frame("tip", parent, 0, pin.SE3(np.eye(3), np.array(tip)), pin.FrameType.OP_FRAME))
    return model


@pytest.mark.parametrize("backend", ["c", "numpy"])
def test_helical_joint_against_pinocchio(backend):
    system = derive(screw_tree(), contact_frames=("tip",), backend=backend)
    assert system.nq == system.nv == 3 and system.coordinate_names == ["j1", "screw", "j3"]
    assert system.backend.name == backend
    check_against_pinocchio(system, pinocchio_model(), ["tip", "nut", "link3"], seed=21)


def test_helical_joint_translates_pitch_per_radian():
    """One turn of the screw moves the nut by 2 pi pitch along the axis, as the joint's motion says."""
    system = derive(screw_tree(), backend="numpy")
    q0, q1 = np.zeros(3), np.array([0.0, 2 * np.pi, 0.0])
    moved = system.frame_position(q1, "nut") - system.frame_position(q0, "nut")
    R = system.frame_rotation(q0, "nut")
    assert agree(moved, 2 * np.pi * PITCH * (R @ (np.array(AXIS) / 3.0)), 1e-13)
    assert agree(system.frame_rotation(q1, "nut"), R, 1e-13)


def test_helical_joint_of_pitch_zero_is_a_hinge():
    """With pitch 0 the screw's tree and the Revolute's have the same dynamics (two declarations)."""
    screw, hinge = (derive(screw_tree(0.0, s), backend="numpy") for s in (True, False))
    q, v, a = random_states(pinocchio_model(0.0), 20, 4)
    assert agree(screw.mass_matrix(q), hinge.mass_matrix(q), 1e-14)
    assert agree(screw.inverse(q, v, a), hinge.inverse(q, v, a), 1e-14)
    assert agree(screw.frame_jacobian(q, "tip"), hinge.frame_jacobian(q, "tip"), 1e-14)


def test_a_joint_type_is_checked_where_it_is_used():
    t = Tree("t")
    t.body("base")
    with pytest.raises(InputError, match="joint 'h' has a zero axis"):
        t.body("a", "base", Helical("h", (0, 0, 0), 0.1), mass=1, inertia=(1, 1, 1, 0, 0, 0))
    with pytest.raises(InputError, match="the root body 'r' takes no joint"):
        Tree("u").body("r", joint=Helical("h"))
