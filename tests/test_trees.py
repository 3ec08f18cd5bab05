"""Spatial trees against Pinocchio (HyQ and generated random trees, 100 random states each, 1e-10
norm-wise), and against routes that do not use Pinocchio: sympy.physics.mechanics for a 3-link chain,
energy conservation of a free tree, H symmetric positive definite, dH/dt - 2C skew with dH/dt from the
exact symbolic derivative of H."""
import numpy as np
import pytest

from conftest import agree
from mechsym.errors import InputError
from mechsym.spatial import derive_tree, read_urdf
from mechsym.spatial import manifold

pin = pytest.importorskip("pinocchio")
FEET = ("lf_foot", "lh_foot", "rf_foot", "rh_foot")
N = 100


@pytest.fixture(scope="module")
def hyq():
    erd = pytest.importorskip("example_robot_data")
    robot = erd.load("hyq")
    tree = read_urdf(robot.urdf)
    return derive_tree(tree, contact_frames=FEET), robot.model


def random_states(model, n, seed):
    rng = np.random.default_rng(seed)
    lo = np.where(np.isfinite(model.lowerPositionLimit), model.lowerPositionLimit, -1.0)
    hi = np.where(np.isfinite(model.upperPositionLimit), model.upperPositionLimit, 1.0)
    lo, hi = np.maximum(lo, -3.0), np.minimum(hi, 3.0)
    np.random.seed(seed)
    pin.seed(seed)
    q = np.array([pin.randomConfiguration(model, lo, hi) for _ in range(n)])
    return q, rng.standard_normal((n, model.nv)), rng.standard_normal((n, model.nv))


def pinocchio_reference(model, q, v, a, frames):
    data = model.createData()
    out = {k: [] for k in ("H", "bias", "g", "rnea", "C", "com", "Jcom", "T", "V", "aba")}
    fr = {f: {"o": [], "R": [], "J": [], "b": []} for f in frames}
    for qi, vi, ai in zip(q, v, a):
        H = pin.crba(model, data, qi)
        out["H"].append(np.triu(H) + np.triu(H, 1).T)
        out["bias"].append(pin.nonLinearEffects(model, data, qi, vi))
        out["g"].append(pin.computeGeneralizedGravity(model, data, qi))
        out["rnea"].append(pin.rnea(model, data, qi, vi, ai))
        out["C"].append(pin.computeCoriolisMatrix(model, data, qi, vi).copy())
        out["com"].append(pin.centerOfMass(model, data, qi).copy())
        out["Jcom"].append(pin.jacobianCenterOfMass(model, data, qi).copy())
        out["T"].append(pin.computeKineticEnergy(model, data, qi, vi))
        out["V"].append(pin.computePotentialEnergy(model, data, qi))
        out["aba"].append(pin.aba(model, data, qi, vi, ai).copy())
        pin.forwardKinematics(model, data, qi, vi, 0 * vi)
        pin.updateFramePlacements(model, data)
        pin.computeJointJacobians(model, data, qi)
        for f in frames:
            fid = model.getFrameId(f)
            fr[f]["o"].append(data.oMf[fid].translation.copy())
            fr[f]["R"].append(data.oMf[fid].rotation.copy())
            fr[f]["J"].append(pin.getFrameJacobian(model, data, fid, pin.LOCAL_WORLD_ALIGNED).copy())
            fr[f]["b"].append(pin.getFrameClassicalAcceleration(model, data, fid, pin.LOCAL_WORLD_ALIGNED).vector.copy())
    return {k: np.array(x) for k, x in out.items()}, {f: {k: np.array(x) for k, x in d.items()} for f, d in fr.items()}


def close(a, b, tol):
    """Norm-wise agreement, on a scale of at least 1 in SI units: a quantity that is zero in exact
    arithmetic (the bias of a frame on the first joint of a fixed base) carries Pinocchio's round-off."""
    return float(np.max(np.abs(np.asarray(a) - b))) <= tol * max(float(np.max(np.abs(b))), 1.0)


def check_against_pinocchio(system, model, frames, seed, tol=1e-10):
    q, v, a = random_states(model, N, seed)
    ref, fref = pinocchio_reference(model, q, v, a, frames)
    ours = {"H": system.mass_matrix(q), "bias": system.bias(q, v), "g": system.gravity(q),
            "rnea": system.inverse(q, v, a), "C": system.coriolis(q, v), "com": system.com(q),
            "Jcom": system.com_jacobian(q), "T": system.kinetic_energy(q, v), "V": system.potential_energy(q),
            "aba": system.forward(q, v, a)}
    for k, x in ours.items():
        assert agree(x, ref[k], tol), f"{k}: {np.abs(x - ref[k]).max():.3g} of {np.abs(ref[k]).max():.3g}"
    for f in frames:
        for k, x in (("o", system.frame_position(q, f)), ("R", system.frame_rotation(q, f)),
                     ("J", system.frame_jacobian(q, f)), ("b", system.frame_bias(q, v, f))):
            assert close(x, fref[f][k], tol), f"frame {f} {k}: {np.abs(x - fref[f][k]).max():.3g}"
    return q, v


def test_hyq_names_and_order(hyq):
    system, model = hyq
    assert system.joint_names == list(model.names)[1:]
    assert system.coordinate_names[7:] == list(model.names)[2:]
    assert (system.nq, system.nv) == (model.nq, model.nv)


def test_hyq_against_pinocchio(hyq):
    system, model = hyq
    frames = list(FEET) + ["trunk", "lf_upperleg", "rh_kfe_joint", "trunk_imu", "base_link"]
    q, v = check_against_pinocchio(system, model, frames, seed=1)
    H, b, J, jb = system.contact_terms(q, v)           # the combined call equals the single ones
    assert agree(H, system.mass_matrix(q), 1e-14) and agree(b, system.bias(q, v), 1e-14)
    for i, f in enumerate(FEET):
        assert agree(J[:, i], system.frame_jacobian(q, f), 1e-14)
        assert agree(jb[:, i], system.frame_bias(q, v, f), 1e-14)


def test_hyq_numpy_rendering_equals_c(hyq):
    system, model = hyq
    numpy_system = derive_tree(system.tree, contact_frames=FEET, backend="numpy")
    q, v, a = random_states(model, 5, 7)
    assert agree(numpy_system.contact_terms(q, v)[2], system.contact_terms(q, v)[2], 1e-13)
    assert agree(numpy_system.forward(q, v, a), system.forward(q, v, a), 1e-12)
    assert agree(numpy_system.bias(q[0], v[0]), system.bias(q[0], v[0]), 1e-13)


def test_hyq_mass_matrix_symmetric_positive_definite(hyq):
    system, model = hyq
    q, _, _ = random_states(model, N, 3)
    H = system.mass_matrix(q)
    assert np.array_equal(H, np.swapaxes(H, 1, 2))
    assert np.linalg.eigvalsh(H).min() > 0


# -- random trees ------------------------------------------------------------------------------------

def random_urdf(seed, n=7):
    """A random tree: revolute, prismatic and fixed joints with offsets and rotated (unit, random) axes."""
    rng = np.random.default_rng(seed)
    kinds = ["revolute", "prismatic", "fixed"]
    links, joints = [], []

    def inertial():
        m = rng.uniform(0.5, 3.0)
        A = rng.standard_normal((3, 3))
        I = A @ A.T * 0.05 + 0.01 * np.eye(3)
        c, rpy = rng.uniform(-0.2, 0.2, 3), rng.uniform(-1, 1, 3)
        return (f'<inertial><origin xyz="{c[0]} {c[1]} {c[2]}" rpy="{rpy[0]} {rpy[1]} {rpy[2]}"/>'
                f'<mass value="{m}"/><inertia ixx="{I[0, 0]}" iyy="{I[1, 1]}" izz="{I[2, 2]}" ixy="{I[0, 1]}" '
                f'ixz="{I[0, 2]}" iyz="{I[1, 2]}"/></inertial>')

    links.append(f'<link name="l0">{inertial()}</link>')
    for i in range(1, n):
        parent = int(rng.integers(0, i))
        kind = kinds[i % 3] if i > 2 else ("revolute" if i == 1 else "prismatic")
        xyz, rpy, axis = rng.uniform(-0.5, 0.5, 3), rng.uniform(-2, 2, 3), rng.standard_normal(3)
        if i == 3:
            axis = np.array([0.0, 1.0, 0.0])        # an axis-aligned one
        limit = '<limit lower="-1" upper="1" effort="10" velocity="5"/>' if kind != "fixed" else ""
        joints.append(f'<joint name="j{i}" type="{kind}"><parent link="l{parent}"/><child link="l{i}"/>'
                      f'<origin xyz="{xyz[0]} {xyz[1]} {xyz[2]}" rpy="{rpy[0]} {rpy[1]} {rpy[2]}"/>'
                      f'<axis xyz="{axis[0]} {axis[1]} {axis[2]}"/>{limit}</joint>')
        links.append(f'<link name="l{i}">{inertial()}</link>')
    return f'<robot name="random{seed}">' + "".join(links + joints) + "</robot>"


@pytest.mark.parametrize("seed,floating", [(11, False), (12, True)])
def test_random_tree_against_pinocchio(seed, floating):
    xml = random_urdf(seed)
    tree = read_urdf(xml, floating=floating)
    system = derive_tree(tree)
    model = pin.buildModelFromXML(xml, pin.JointModelFreeFlyer()) if floating else pin.buildModelFromXML(xml)
    assert system.joint_names == list(model.names)[1:]
    frames = [f"l{i}" for i in range(1, 7)] + ["j2", "j4"]
    check_against_pinocchio(system, model, frames, seed=seed)


def test_integrate_equals_pinocchio(hyq):
    system, model = hyq
    q, v, _ = random_states(model, 20, 5)
    ours = manifold.integrate(q, v, 0.3)
    ref = np.array([pin.integrate(model, qi, 0.3 * vi) for qi, vi in zip(q, v)])
    sign = np.sign(np.sum(ours[:, 3:7] * ref[:, 3:7], axis=1))[:, None]
    ours[:, 3:7] *= sign
    assert agree(ours, ref, 1e-12)
    qd = manifold.qdot(q, v)
    assert agree(manifold.velocity(q, qd), v, 1e-13)
    assert np.allclose(np.linalg.norm(ours[:, 3:7], axis=1), 1, atol=1e-15)


# -- bad input ---------------------------------------------------------------------------------------

ARM = """<robot name="arm"><link name="base"/>
<link name="l1"><inertial><mass value="{m}"/><inertia ixx="{ixx}" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>
<joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="{axis}"/>{extra}</joint></robot>"""


def arm(m=1.0, ixx=1.0, axis="0 0 1", extra=""):
    return ARM.format(m=m, ixx=ixx, axis=axis, extra=extra)


@pytest.mark.parametrize("xml,words", [
    (arm().replace("</robot>", ""), ["malformed"]),
    (arm(axis="0 0 0"), ["j1", "zero axis"]),
    (arm(m=-1), ["l1", "negative mass"]),
    (arm(ixx=-3), ["l1", "positive semi-definite"]),
    (arm(extra='<mimic joint="j0"/>'), ["j1", "mimic"]),
    (arm().replace('<link name="l1">', '<link name="l1x">').replace("<inertial>", "", 0), ["unknown link"]),
    (arm().replace("<inertial><mass", "<foo><mass").replace("</inertial>", "</foo>"), ["l1", "no inertial"]),
    (arm().replace("</robot>", '<link name="l2"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" '
                   'ixy="0" ixz="0" iyz="0"/></inertial></link><joint name="j2" type="revolute"><parent '
                   'link="base"/><child link="l2"/></joint><joint name="j3" type="revolute"><parent link="l2"/>'
                   '<child link="l1"/></joint></robot>'), ["closed loop"]),
])
def test_bad_urdf(xml, words):
    with pytest.raises(InputError) as err:
        read_urdf(xml, floating=False)
    for w in words:
        assert w in str(err.value), str(err.value)


def test_bad_states_and_frames(hyq):
    system, model = hyq
    q = pin.neutral(model)
    q[3:7] = [0, 0, 0, 1.01]
    with pytest.raises(InputError, match="quaternion of sample 0 has norm 1.01"):
        system.mass_matrix(q)
    with pytest.raises(InputError, match="unknown frame 'lf_toe'"):
        system.frame_jacobian(pin.neutral(model), "lf_toe")
    with pytest.raises(InputError, match="shape"):
        system.bias(np.zeros(5), np.zeros(18))
    with pytest.raises(InputError, match="not finite"):
        system.bias(pin.neutral(model), np.full(18, np.nan))
    with pytest.raises(InputError, match="unknown parameter 'trunk.mass'"):
        system.params({"trunk.mass": 3})
    with pytest.raises(InputError, match="trunk.*negative mass"):
        system.params({"trunk.m": -3})
