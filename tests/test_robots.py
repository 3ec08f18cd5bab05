"""The URDF files of example-robot-data (every loader) read by mechsym as Pinocchio reads them, a
representative subset derived and compared with Pinocchio at 20 random states (H, bias, gravity, RNEA, ABA,
every link frame's position, rotation, Jacobian and classical-acceleration bias, 1e-10 norm-wise; mimic
joints against G^T (Pinocchio's independent model) G, itself checked against Pinocchio's JointModelMimic);
the readings of small files (mimic chains, exact quarter turns, a floating joint, inertia tolerances); bad
input on the command line. The full set of derivations runs in benchmarks/bench_robots.py."""
import json
import math
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from mechsym.core.errors import InputError
from mechsym.spatial import derive_tree, read_urdf
from mechsym.spatial.system import TreeSystem
from mechsym.spatial.urdf import as_read

pin = pytest.importorskip("pinocchio")
erd = pytest.importorskip("example_robot_data")
from oracles.robots import Reference, errors, loaders, pinocchio_model  # noqa: E402

LOADERS = loaders()
TOL = 1e-10
REPO = Path(__file__).resolve().parents[1]


def cli(*args, timeout=300):
    """`mechsym ARGS` in a fresh interpreter (this checkout's mechsym)."""
    return subprocess.run([sys.executable, "-m", "mechsym", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, cwd=REPO, env=dict(os.environ, PYTHONPATH=str(REPO)))


def quiet_read(path, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return read_urdf(path, **kw)


def pinocchio_reads(path, floating, mimic):
    try:
        return pinocchio_model(path, floating, mimic)
    except InputError:                          # as_read: not a URDF (then Pinocchio is asked the file itself)
        try:
            return pin.buildModelFromUrdf(path, mimic=mimic)
        except (RuntimeError, ValueError):
            return None
    except (RuntimeError, ValueError):
        return None


@pytest.mark.parametrize("name", sorted(LOADERS))
def test_every_loader_reads_as_pinocchio(name):
    """Each file Pinocchio reads, mechsym reads, with Pinocchio's joints in Pinocchio's order (both
    readings of mimic joints); each refusal names the element, and Pinocchio refuses it too."""
    path, floating = LOADERS[name]
    for mimic, pin_mimic in (("independent", False), ("model", True)):
        model = pinocchio_reads(path, floating, pin_mimic)
        try:
            tree = quiet_read(path, floating=floating, mimic=mimic)
            structure = TreeSystem(tree, backend="numpy")          # the merged tree, no derivation
        except InputError as exc:
            assert model is None, f"mechsym refuses what Pinocchio reads: {exc}"
            assert "'" in str(exc) or "<" in str(exc)              # names the element
            continue
        independent = model if not pin_mimic else pinocchio_reads(path, floating, False)
        assert independent is not None
        mimics = tree.mimics()
        names = [n for n in list(independent.names)[1:] if n not in mimics]
        assert structure.joint_names == names
        assert structure.nv == independent.nv - len(mimics)
        continuous = sum(j.nq == 2 for j in independent.joints)
        assert structure.nq == independent.nq - continuous - len(mimics)
        if model is not None and pin_mimic:                       # Pinocchio's own mimic model, same sizes
            assert structure.nv == model.nv


def test_sdf_refused_naming_it():
    path, _ = LOADERS["cassie"]
    with pytest.raises(InputError, match=r"is an SDF file \(<sdf>\)"):
        read_urdf(path)


def test_tiago_antenna_warns_and_strict_refuses():
    path, _ = LOADERS["tiago_no_hand"]
    with pytest.warns(UserWarning, match="link 'base_antenna_left_link' .* negative one .* --strict refuses it"):
        read_urdf(path, floating=False)
    with pytest.raises(InputError, match="link 'base_antenna_left_link'"):
        read_urdf(path, floating=False, strict=True)


def test_icub_roundoff_inertia_passes_silently():
    path, floating = LOADERS["icub_reduced"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tree = read_urdf(path, floating=floating)
    tree.check()
    assert "r_hip_2.ixx" not in tree.parameters          # -5.4e-20 is a number of the code, not a parameter


# -- derived, against Pinocchio --------------------------------------------------------------------------
# an arm (with a mimic finger), a quadruped on a massless base link, a lower-body humanoid, continuous joints
SUBSET = ("panda", "a1", "alexander", "kinova")


@pytest.mark.parametrize("name", SUBSET)
def test_derived_against_pinocchio(name):
    path, floating = LOADERS[name]
    tree = quiet_read(path, floating=floating)
    system = derive_tree(tree, backend="numpy")
    frames = list(tree.bodies)
    e = errors(system, Reference(system, path, floating), frames)
    assert set(e) >= {"H", "bias", "g", "rnea", "aba", "o", "R", "J", "b"}
    assert max(e.values()) <= TOL, e


@pytest.mark.parametrize("name", ("panda", "baxter", "pr2", "tiago_pro"))
def test_mimic_route_is_pinocchios_mimic_model(name):
    """G^T H G, G^T bias and J G of Pinocchio's independent model (the reference of mimic readings) equal
    Pinocchio's own model of the mimic joints (JointModelMimic) at random states."""
    path, floating = LOADERS[name]
    tree = quiet_read(path, floating=floating)
    structure = TreeSystem(tree, backend="numpy")
    ref = Reference(structure, path, floating)
    mm = pinocchio_model(path, floating, mimic=True)
    data = mm.createData()
    assert tree.mimics() and mm.nv == structure.nv
    q, v, a = ref.states(5, seed=3)
    frame = list(tree.bodies)[-1]
    mine = ref.quantities(q, v, a, [frame])
    for k, (qi, vi) in enumerate(zip(q, v)):
        qm = _mimic_q(ref, mm, qi)
        H = pin.crba(mm, data, qm)
        H = np.triu(H) + np.triu(H, 1).T
        assert np.abs(H - mine["H"][k]).max() <= 1e-12 * np.abs(H).max()
        b = pin.nonLinearEffects(mm, data, qm, vi)
        assert np.abs(b - mine["bias"][k]).max() <= 1e-12 * np.abs(b).max()
        pin.computeJointJacobians(mm, data, qm)
        pin.updateFramePlacements(mm, data)
        J = pin.getFrameJacobian(mm, data, mm.getFrameId(frame, pin.BODY), pin.LOCAL_WORLD_ALIGNED)
        assert np.abs(J - mine["J"][k][0]).max() <= 1e-12 * max(np.abs(J).max(), 1)


def _mimic_q(ref, mm, q):
    """The configuration of Pinocchio's mimic model: the independent one without the mimic joints'."""
    qp = ref.pinocchio_q(q)
    out = np.zeros(mm.nq)
    for j, name in zip(mm.joints[1:], list(mm.names)[1:]):
        if j.nq:
            i = ref.model.getJointId(name)
            src = ref.model.joints[i]
            out[j.idx_q:j.idx_q + j.nq] = qp[src.idx_q:src.idx_q + src.nq]
    return out


# -- readings of small files ------------------------------------------------------------------------------
def link(name, m=1.0, inertia=(0.01, 0.02, 0.025, 0.001, 0.0, 0.002), c=(0.05, 0.0, 0.1)):
    ixx, iyy, izz, ixy, ixz, iyz = inertia
    return (f'<link name="{name}"><inertial><origin xyz="{c[0]} {c[1]} {c[2]}" rpy="0.1 0.2 0.3"/><mass value="{m}"/>'
            f'<inertia ixx="{ixx}" iyy="{iyy}" izz="{izz}" ixy="{ixy}" ixz="{ixz}" iyz="{iyz}"/></inertial></link>')


def joint(name, parent, child, kind="revolute", xyz="0 0 0.3", rpy="0 0 0", axis="0 1 0", extra=""):
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{xyz}" rpy="{rpy}"/><axis xyz="{axis}"/>'
            f'<limit lower="-2" upper="2" effort="1" velocity="1"/>{extra}</joint>')


def robot(*parts):
    return '<?xml version="1.0"?><robot name="r">' + "".join(parts) + "</robot>"


def against_pinocchio(text, tmp_path, floating=False, **kw):
    path = tmp_path / "r.urdf"
    path.write_text(text)
    tree = read_urdf(str(path), floating=floating, **kw)
    system = derive_tree(tree, backend="numpy")
    e = errors(system, Reference(system, str(path), floating), list(tree.bodies), n=10)
    assert max(e.values()) <= TOL, e
    return tree, system


def test_mimic_chain_offsets_and_a_mimic_on_a_fixed_joint(tmp_path):
    """c mimics b mimics a (ratios and offsets compose); d is fixed with a mimic element (ignored)."""
    text = robot(link("base"), link("A"), link("B"), link("C"), link("D", m=0.5),
                 joint("a", "base", "A"),
                 joint("b", "A", "B", axis="1 0 0", extra='<mimic joint="a" multiplier="-0.5" offset="0.2"/>'),
                 joint("c", "B", "C", kind="prismatic", axis="0 0 1",
                       extra='<mimic joint="b" multiplier="2" offset="-0.1"/>'),
                 joint("d", "C", "D", kind="fixed", extra='<mimic joint="a"/>'))
    with warnings.catch_warnings():
        warnings.simplefilter("error")                 # the fixed joint's mimic: no message
        tree, system = against_pinocchio(text, tmp_path)
    assert tree.mimics() == {"b": ("a", -0.5, 0.2), "c": ("a", -1.0, 0.30000000000000004)}
    assert system.coordinate_names == ["a"]
    _, independent = against_pinocchio(text, tmp_path, mimic="independent")
    assert independent.coordinate_names == ["a", "b", "c"]


def test_floating_joint_from_a_world_link(tmp_path):
    text = robot('<link name="world"/>', link("base", m=3.0), link("leg"),
                 '<joint name="float" type="floating"><parent link="world"/><child link="base"/>'
                 '<origin xyz="0 0 1"/></joint>', joint("hip", "base", "leg", kind="continuous"))
    tree, system = against_pinocchio(text, tmp_path)
    assert system.floating and system.nq == 8 and system.nv == 7
    with pytest.raises(InputError, match="joint 'float' is floating"):
        read_urdf(text, floating=True)


def test_planar_joint(tmp_path):
    """Pinocchio's planar joint (x, y, cos, sin; speeds in the joint frame) mapped from x, y, theta; a
    simulation refuses it, naming the joint (its x and y rates are not its speeds)."""
    text = robot(link("base"), link("cart", m=2.0), link("arm"),
                 '<joint name="slide" type="planar"><parent link="base"/><child link="cart"/>'
                 '<origin xyz="0.1 0 0.2" rpy="0.3 0 0"/><axis xyz="0 0 1"/></joint>',
                 joint("hinge", "cart", "arm"))
    _, system = against_pinocchio(text, tmp_path)
    assert system.coordinate_names == ["slide.x", "slide.y", "slide.theta", "hinge"]
    from mechsym.spatial.run import simulate

    with pytest.raises(InputError, match="simulate does not support joint 'slide' \\(planar"):
        simulate(system, np.zeros(4), np.zeros(4), 0.1)


def test_exact_quarter_turns(tmp_path):
    """pi/2 printed to 11 digits folds to exact zeros when every such angle of the file is consistent; a
    file with one angle off its printed precision (1.57) is read literally."""
    quarter = robot(link("base"), link("A"), link("B"), joint("a", "base", "A", rpy="1.57079632679 0 0"),
                    joint("b", "A", "B", rpy="0 -1.5708 3.14159265359"))
    tree, _ = against_pinocchio(quarter, tmp_path)
    R = tree.bodies["A"].origin_R
    assert abs(R[1, 1]) < 1e-16 and R[2, 1] == 1.0          # cos(pi/2) round-off, sin exactly 1
    assert "1.5707963267948966" in as_read(quarter)
    literal = quarter.replace("-1.5708", "-1.57")
    assert "1.57079632679" in as_read(literal) and "1.5707963267948966" not in as_read(literal)
    tree, _ = against_pinocchio(literal, tmp_path)
    assert abs(tree.bodies["A"].origin_R[1, 1] - math.cos(1.57079632679)) < 1e-18


def test_massless_link_and_roundoff(tmp_path):
    text = robot('<link name="base"/>', link("A"), '<link name="sensor"/>',
                 link("B", inertia=(0.01, 0.01, 0.02, 0, 0, 0)),
                 joint("a", "base", "A"), joint("s", "A", "sensor", kind="fixed"),
                 joint("b", "sensor", "B", axis="0 0 1"))
    tree, _ = against_pinocchio(text, tmp_path)
    assert tree.bodies["sensor"].mass == 0


# -- bad input on the command line ----------------------------------------------------------------------
def chain(n):
    return robot(*(link(f"l{i}") for i in range(n + 1)), *(joint(f"j{i}", f"l{i}", f"l{i + 1}") for i in range(n)))


BAD = {
    "loop": (robot(link("a"), link("b"), link("c"), joint("j1", "a", "b"), joint("j2", "b", "c"),
                   joint("j3", "a", "c")), "params", "link 'c' is the child of both joints 'j2' and 'j3'"),
    "mimic cycle": (robot(link("a"), link("b"), link("c"), joint("j1", "a", "b", extra='<mimic joint="j2"/>'),
                          joint("j2", "b", "c", extra='<mimic joint="j1"/>')), "params", "mimic cycle j1 -> j2 -> j1"),
    "missing mimic": (robot(link("a"), link("b"), joint("j1", "a", "b", extra='<mimic joint="nope"/>')), "params",
                      "joint 'j1' mimics 'nope', which does not exist"),
    "nan origin": (robot(link("a"), link("b"), joint("j1", "a", "b", xyz="0 nan 0.3")), "params",
                   "joint 'j1' origin: xyz='0 nan 0.3' is not finite"),
    "negative mass": (robot(link("a"), link("b", m=-1.0), joint("j1", "a", "b")), "params",
                      "link 'b' has a negative mass -1 kg"),
    "triangle": (robot(link("a"), link("b", inertia=(0.01, 0.01, 0.05, 0, 0, 0)), joint("j1", "a", "b")),
                 "params --strict", "link 'b' has an inertia .* violate the triangle inequality by 0.03 kg m"),
    "negative moment": (robot(link("a"), link("b", inertia=(0.01, 0.02, -0.01, 0, 0, 0)), joint("j1", "a", "b")),
                        "params", "link 'b' has an inertia .* include a negative one"),
    "long chain": (chain(10000), "export --out OUT", r"tree 'r' \(.* joint columns .* about .* min\) needs about "
                                                     r".* of memory .* --max-memory"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_urdf_on_the_command_line(case, tmp_path):
    text, command, message = BAD[case]
    path = tmp_path / "bad.urdf"
    path.write_text(text)
    words = command.replace("OUT", str(tmp_path / "out")).split()
    run = cli(words[0], path, *words[1:])
    assert run.returncode == 2, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in run.stderr, run.stderr
    assert re.search(message, lines[0]), lines[0]


def test_binary_file_named_urdf(tmp_path):
    path = tmp_path / "robot.urdf"
    path.write_bytes(bytes(range(256)) * 4)
    run = cli("params", path)
    assert run.returncode == 2 and run.stderr.strip() == f"error: URDF '{path}' is not a URDF file (binary data)"


def test_params_and_export_of_a_urdf_file(tmp_path):
    path, _ = LOADERS["ur5"]
    run = cli("params", path, "--json")
    assert run.returncode == 0, run.stderr
    data = json.loads(run.stdout)
    assert data["coordinates"] == list(pin.buildModelFromUrdf(path).names)[1:]
    out = tmp_path / "ur5"
    run = cli("export", path, "--out", out, timeout=600)
    assert run.returncode == 0, run.stderr
    assert (out / "ur5.h").exists() and (out / "ur5.c").exists()
