"""Spatial trees against Pinocchio (HyQ and generated random trees, 100 random states each, 1e-10
norm-wise), and against routes that do not use Pinocchio: sympy.physics.mechanics for a 3-link chain,
energy conservation of a free tree, H against the Hessian of the kinetic energy and positive definite,
dH/dt - 2C skew with dH/dt from the exact symbolic derivative of H."""
import numpy as np
import pytest

from conftest import agree, doc_blocks
from mechsym.core.errors import InputError
from mechsym.spatial import read_urdf
from mechsym import derive
from mechsym.spatial import manifold

pin = pytest.importorskip("pinocchio")
FEET = ("lf_foot", "lh_foot", "rf_foot", "rh_foot")
N = 100


@pytest.fixture(scope="module")
def hyq():
    """The shipped HyQ (derived once per session: mechanisms.hyq.system is cached) and Pinocchio's model
    of example-robot-data's URDF."""
    erd = pytest.importorskip("example_robot_data")
    from mechanisms import hyq as shipped

    return shipped.system(), erd.load("hyq").model


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


def check_against_pinocchio(system, model, frames, seed, tol=1e-10, coriolis=True):
    """Our entry points against Pinocchio's at N random states; without `coriolis` (a factorisation C is not
    unique), C v against Pinocchio's bias minus its gravity instead of C itself."""
    q, v, a = random_states(model, N, seed)
    ref, fref = pinocchio_reference(model, q, v, a, frames)
    ours = {"H": system.mass_matrix(q), "bias": system.bias(q, v), "g": system.gravity(q),
            "rnea": system.inverse(q, v, a), "C": system.coriolis(q, v), "com": system.com(q),
            "Jcom": system.com_jacobian(q), "T": system.kinetic_energy(q, v), "V": system.potential_energy(q),
            "aba": system.forward(q, v, a)}
    if not coriolis:
        ours["Cv"], ref["Cv"] = np.einsum("nij,nj->ni", ours.pop("C"), v), ref["bias"] - ref["g"]
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
    numpy_system = derive(system.tree, contact_frames=FEET, backend="numpy")
    q, v, a = random_states(model, 5, 7)
    assert agree(numpy_system.contact_terms(q, v)[2], system.contact_terms(q, v)[2], 1e-13)
    assert agree(numpy_system.forward(q, v, a), system.forward(q, v, a), 1e-12)
    assert agree(numpy_system.bias(q[0], v[0]), system.bias(q[0], v[0]), 1e-13)


def mass_matrix_from_energy(system, q):
    """H = d2T/dv2 from the energy entry alone (T summed over the bodies, 1/2 v_i . I_i v_i, never through H):
    T is quadratic in v, so with T_ij = T(q, e_i + e_j), H_ij = T_ij - (T_ii + T_jj) / 4, for i = j too.
    Symmetric by this construction, it holds both triangles of the printed H to one independent value."""
    q = np.atleast_2d(q)
    n = system.nv
    eye = np.eye(n)
    pairs = (eye[:, None, :] + eye[None, :, :]).reshape(n * n, n)
    T = system.kinetic_energy(np.repeat(q, n * n, axis=0), np.tile(pairs, (len(q), 1))).reshape(len(q), n, n)
    diagonal = np.diagonal(T, axis1=1, axis2=2)
    return T - (diagonal[:, :, None] + diagonal[:, None, :]) / 4


def test_hyq_mass_matrix_symmetric_positive_definite(hyq):
    """Both triangles of H against the Hessian of the kinetic energy, and H positive definite."""
    system, model = hyq
    q, _, _ = random_states(model, N, 3)
    H = system.mass_matrix(q)
    assert agree(H, mass_matrix_from_energy(system, q), 1e-12)
    assert np.linalg.eigvalsh(H).min() > 0


# -- random trees ------------------------------------------------------------------------------------

def random_urdf(seed, n=7, chain=False):
    """A random tree (or a chain): revolute, prismatic and fixed joints with offsets and rotated (unit,
    random) axes."""
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
        parent = i - 1 if chain else int(rng.integers(0, i))
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
    system = derive(tree)
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
    tiny = manifold.integrate(q, v * 1e-8, 0.3)                      # the series branch of the exponential
    ref = np.array([pin.integrate(model, qi, 0.3e-8 * vi) for qi, vi in zip(q, v)])
    tiny[:, 3:7] *= np.sign(np.sum(tiny[:, 3:7] * ref[:, 3:7], axis=1))[:, None]
    assert agree(tiny, ref, 1e-14)
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
    (arm().replace("</robot>", ""), ["not a URDF file"]),
    (arm(axis="0 0 0"), ["j1", "zero axis"]),
    (arm(m=-1), ["l1", "negative mass"]),
    (arm(ixx=-3), ["l1", "include a negative one"]),
    (arm(extra='<mimic joint="j0"/>'), ["j1", "mimic"]),
    (arm().replace('<link name="l1">', '<link name="l1x">').replace("<inertial>", "", 0), ["unknown link"]),
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


@pytest.mark.parametrize("text, words", [
    ("not xml at all\n", ["bad.urdf", "is not a URDF file (XML", "line 1"]),
    ("<robots/>", ["bad.urdf", "root element is <robots>, not <robot>"]),
])
def test_a_urdf_file_that_is_not_a_urdf_is_named_as_such(tmp_path, text, words):
    """A file that is not XML, or XML without <robot>, is refused in those words (the parser's own message
    was 'TypeError: Invalid input object')."""
    path = tmp_path / "bad.urdf"
    path.write_text(text)
    with pytest.raises(InputError) as err:
        read_urdf(str(path), floating=False)
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
    with pytest.raises(InputError, match="parameter 'trunk.m' = -3.0 must be positive"):
        system.params({"trunk.m": -3})


# -- independent of Pinocchio ------------------------------------------------------------------------

def test_free_tree_conserves_energy_without_gravity():
    from mechsym.spatial.run import simulate

    system = derive(read_urdf(random_urdf(12), floating=True))
    rng = np.random.default_rng(4)
    q0 = np.zeros(system.nq)
    q0[3:7] = rng.standard_normal(4)
    q0[3:7] /= np.linalg.norm(q0[3:7])
    v0 = rng.standard_normal(system.nv)
    table = simulate(system, q0, v0, 2.0, dt=0.01, rtol=1e-12, atol=1e-12, params={"g": 0.0})
    q = np.column_stack([table[n] for n in system.coordinate_names])
    v = np.column_stack([table[n if n.startswith("base.") else f"{n}.v"] for n in system.speed_names])
    T = system.kinetic_energy(q, v)
    assert np.abs(T - T[0]).max() < 1e-9 * T[0]
    assert np.abs(v - v0).max() > 0.1                         # the tree did move its joints
    assert np.allclose(np.linalg.norm(q[:, 3:7], axis=1), 1, atol=1e-15)


def _expanded(system, exprs):
    """Expressions of the straight-line program with every temporary substituted (small trees only)."""
    import sympy as sp

    d = system.derivation
    full = {}
    for s, e in d.s.assignments:
        full[s] = e.xreplace(full)
    return [sp.sympify(e).xreplace(full) for e in exprs]


def hdot(system):
    """dH/dt as a function of (q, v): the exact symbolic derivative of the system's H (small trees only)."""
    import sympy as sp

    d = system.derivation
    n = system.nv
    H = sp.Matrix(n, n, _expanded(system, [e for row in d.mass_matrix() for e in row]))
    p = {d.p[k]: v for k, v in zip(system.param_names, system.params())}
    q = sp.symbols(f"q0:{n}")
    v = sp.symbols(f"v0:{n}")
    H = H.xreplace({**{d.q[i]: q[i] for i in range(n)}, **p})
    return sp.lambdify([q, v], sum((H.diff(q[i]) * v[i] for i in range(n)), sp.zeros(n, n)), "numpy")


def test_hdot_minus_2c_is_skew_with_exact_derivative():
    system = derive(read_urdf(random_urdf(21, n=5, chain=True), floating=False, symbolic=()), backend="numpy")
    n = system.nv
    f = hdot(system)
    rng = np.random.default_rng(2)
    for _ in range(20):
        qs, vs = rng.uniform(-1, 1, n), rng.standard_normal(n)
        Hd = np.array(f(qs, vs), float)
        C = system.coriolis(qs, vs)
        S = Hd - 2 * C
        assert np.abs(S + S.T).max() <= 1e-12 * np.abs(Hd).max() and np.abs(Hd).max() > 0.1
        assert agree(C + C.T, Hd, 1e-12)
        Hn = system.mass_matrix(qs)
        assert agree(Hn, mass_matrix_from_energy(system, qs)[0], 1e-12) and np.linalg.eigvalsh(Hn).min() > 0
        assert agree(C @ vs + system.gravity(qs), system.bias(qs, vs), 1e-12)


def test_three_link_chain_against_sympy_mechanics():
    import sympy as sp
    from sympy.physics import mechanics as me

    from mechsym.spatial import Revolute, Tree

    l1, l2, g = 0.7, 0.5, 9.81
    masses = (1.3, 0.9, 0.6)
    coms = ((0.3, 0.05, 0.0), (0.2, 0.0, -0.04), (0.1, 0.03, 0.02))
    inertias = ((0.02, 0.03, 0.025, 0.001, -0.002, 0.0015), (0.01, 0.012, 0.015, 0.0, 0.001, -0.0005),
                (0.004, 0.005, 0.006, 0.0002, 0.0, 0.0003))
    axis3 = np.array([1.0, 1.0, 0.0]) / np.sqrt(2)
    tree = Tree("chain")
    tree.body("ground")
    tree.body("a", "ground", Revolute("j1", (0, 0, 1)), mass=masses[0], com=coms[0], inertia=inertias[0])
    tree.body("b", "a", Revolute("j2", (0, 1, 0)), xyz=(l1, 0, 0), mass=masses[1], com=coms[1], inertia=inertias[1])
    tree.body("c", "b", Revolute("j3", tuple(axis3)), xyz=(l2, 0, 0.1), mass=masses[2], com=coms[2],
              inertia=inertias[2])
    system = derive(tree)

    q = me.dynamicsymbols("q1:4")
    qd = [me.dynamicsymbols(f"q{i}", 1) for i in range(1, 4)]
    N = me.ReferenceFrame("N")
    A, B, C = me.ReferenceFrame("A"), me.ReferenceFrame("B"), me.ReferenceFrame("C")
    A.orient_axis(N, N.z, q[0])
    B.orient_axis(A, A.y, q[1])
    C.orient_axis(B, float(axis3[0]) * B.x + float(axis3[1]) * B.y, q[2])
    O = me.Point("O")
    O.set_vel(N, 0)
    P1 = O.locatenew("P1", l1 * A.x)
    P1.v2pt_theory(O, N, A)
    P2 = P1.locatenew("P2", l2 * B.x + 0.1 * B.z)
    P2.v2pt_theory(P1, N, B)
    bodies = []
    for frame, origin, m, c, I in zip((A, B, C), (O, P1, P2), masses, coms, inertias):
        mc = origin.locatenew("G", c[0] * frame.x + c[1] * frame.y + c[2] * frame.z)
        mc.v2pt_theory(origin, N, frame)
        body = me.RigidBody(str(frame), mc, frame, m, (me.inertia(frame, I[0], I[1], I[2], I[3], I[5], I[4]), mc))
        body.potential_energy = m * g * mc.pos_from(O).dot(N.z)
        bodies.append(body)
    L = me.Lagrangian(N, *bodies)
    lm = me.LagrangesMethod(L, q)
    lm.form_lagranges_equations()
    qs, us = sp.symbols("x0:3"), sp.symbols("u0:3")
    rep = dict(zip(qd, us))
    M = lm.mass_matrix.xreplace(rep).xreplace(dict(zip(q, qs)))
    F = lm.forcing.xreplace(rep).xreplace(dict(zip(q, qs)))
    fm, ff = sp.lambdify([qs, us], M), sp.lambdify([qs, us], F)
    rng = np.random.default_rng(9)
    for _ in range(10):
        x, u = rng.uniform(-2, 2, 3), rng.standard_normal(3)
        assert agree(system.mass_matrix(x), np.array(fm(x, u), float), 1e-10)
        assert agree(system.bias(x, u), -np.array(ff(x, u), float).ravel(), 1e-10)


def docs_arm():
    """The arm of docs/trees.md, declared in Python by the page's own block."""
    scope = {"__name__": "docs_trees"}
    exec(doc_blocks("trees.md", section="Declaring a tree in Python")[0], scope)
    return scope["arm"]


def test_docs_arm_python_equals_urdf_and_pinocchio():
    from pathlib import Path

    urdf = Path(__file__).resolve().parent.parent / "docs" / "examples" / "arm.urdf"
    python, read = derive(docs_arm(), contact_frames=("tip",)), derive(read_urdf(str(urdf), floating=False))
    model = pin.buildModelFromUrdf(str(urdf))
    assert read.joint_names == python.joint_names == list(model.names)[1:]
    check_against_pinocchio(read, model, ["tool", "forearm", "elbow"], seed=5)
    q, v, _ = random_states(model, 20, 6)
    assert agree(python.mass_matrix(q), read.mass_matrix(q), 1e-13)
    assert agree(python.bias(q, v), read.bias(q, v), 1e-13)
    assert agree(python.frame_jacobian(q, "tool"), read.frame_jacobian(q, "tool"), 1e-13)
    longer = python.mass_matrix(q, params={"l_upper": 0.5})            # a link length as a parameter
    assert not agree(longer, python.mass_matrix(q), 1e-3)
    H, b, J, jb = python.contact_terms(q, v)
    assert J.shape == (20, 1, 6, 3) and jb.shape == (20, 1, 6)


def test_python_declaration_errors():
    from mechsym.core.errors import ModelError
    from mechsym.spatial import Free, Revolute, Tree

    t = Tree("t")
    t.body("base")
    with pytest.raises(InputError, match="joint 'j' has a zero axis"):
        t.body("a", "base", Revolute("j", axis=(0, 0, 0)), mass=1, inertia=(1, 1, 1, 0, 0, 0))
    with pytest.raises(InputError, match="unknown parent body 'nowhere'"):
        t.body("a", "nowhere", Revolute("j"), mass=1)
    with pytest.raises(InputError, match="a tree has one root"):
        t.body("b")
    with pytest.raises(InputError, match="unknown parameter 'len'"):
        t.body("a", "base", Revolute("j"), xyz=("len", 0, 0))
    t.body("a", "base", Revolute("j"), mass=-2, inertia=(1, 1, 1, 0, 0, 0))
    with pytest.raises(ModelError, match="body 'a' has a negative mass"):
        derive(t)
    t2 = Tree("t2")
    t2.body("base", joint=Free(), mass=1, inertia=(1, 1, 1, 0, 0, 0))
    t2.body("a", "base", Revolute("j"), mass=1, inertia=(1, 1, -5, 0, 0, 0))
    with pytest.raises(ModelError, match="body 'a' has an inertia that is not positive semi-definite"):
        derive(t2)


@pytest.mark.parametrize("backend", ["c", "numpy"])
def test_forward_with_a_massless_link(backend):
    """A massless last link makes H singular: NaN for those states in a batch, an error for one state."""
    from mechsym.spatial import Revolute, Tree

    t = Tree("massless")
    t.body("base")
    t.body("a", "base", Revolute("j1", (0, 0, 1)), mass=1.0, com=(0.3, 0, 0), inertia=(0.01, 0.01, 0.01, 0, 0, 0))
    t.body("b", "a", Revolute("j2", (0, 1, 0)), xyz=(0.5, 0, 0))
    system = derive(t, backend=backend)
    out = system.forward(np.zeros((3, 2)), np.zeros((3, 2)), np.ones((3, 2)))
    assert out.shape == (3, 2) and np.isnan(out).all()
    if backend == "c":
        with pytest.raises(InputError, match="not positive definite"):
            system.forward(np.zeros(2), np.zeros(2), np.ones(2))


def test_tree_parameters_share_the_planar_rule(capsys):
    """A tree's parameters are checked as a planar mechanism's: a negative length or mass is refused as a
    default (by check, which derive calls) and as an override (params=, set_params, --param), with the
    planar wording; a product of inertia or a centre of mass read from a URDF stays signed."""
    from mechsym.app.cli import main
    from mechsym.core.errors import ModelError
    from mechsym.spatial import Revolute, Tree

    def arm(length, mass):
        t = Tree("arm2")
        t.parameter("l", length, "m", "link length")
        t.parameter("m_link", mass, "kg")
        t.body("base")
        t.body("a", "base", Revolute("j1", (0, 1, 0)), mass="m_link", com=("l", 0, 0),
               inertia=(0.01, 0.01, 0.01, 0, 0, 0))
        return t

    for length, mass, words in ((-0.5, 1.0, "parameter 'l' must be positive (default -0.5)"),
                                (0.5, -1.0, "parameter 'm_link' must be positive (default -1.0)")):
        with pytest.raises(ModelError, match=words.replace("(", r"\(").replace(")", r"\)")):
            derive(arm(length, mass), backend="numpy")
    twice = arm(0.5, 1.0)
    twice.parameter("l", 0.3, "m")
    with pytest.raises(ModelError, match="parameter 'l' declared twice"):
        twice.check()
    system = derive(arm(0.5, 1.0), backend="numpy")
    for overrides, words in (({"l": -0.5}, "tree 'arm2': parameter 'l' = -0.5 must be positive"),
                             ({"m_link": 0.0}, "parameter 'm_link' = 0.0 must be positive"),
                             ({"g": float("nan")}, "parameter 'g' = nan is not finite"),
                             ({"bogus": 1.0}, "unknown parameter 'bogus'")):
        with pytest.raises(InputError, match=words):
            system.mass_matrix(np.zeros(1), params=overrides)
        with pytest.raises(InputError, match=words):
            system.set_params(overrides)
    assert main(["params", "hyq", "--json", "--param", "trunk.m=-60"]) == 2
    assert "'trunk.m' = -60.0 must be positive" in capsys.readouterr().err
    tree = read_urdf(arm_with_signed_values(), floating=False)
    assert tree.parameters["l1.cx"].default < 0 and not tree.parameters["l1.cx"].positive
    assert tree.parameters["l1.ixy"].default < 0 and tree.parameters["l1.ixx"].positive
    assert tree.parameters["j1.x"].default < 0 and tree.parameters["l1.m"].positive
    assert derive(tree, backend="numpy").mass_matrix(np.zeros(1)).shape == (1, 1)


def arm_with_signed_values():
    """A one-link URDF whose centre of mass, product of inertia and joint origin are negative."""
    return """<robot name="signed"><link name="base"/>
      <link name="l1"><inertial><origin xyz="-0.2 0 0"/><mass value="1.5"/>
        <inertia ixx="0.02" iyy="0.03" izz="0.04" ixy="-0.001" ixz="0" iyz="0"/></inertial></link>
      <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><origin xyz="-0.3 0 0.1"/>
        <axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint></robot>"""


def test_tree_gravity_is_a_parameter_that_can_be_renamed_or_dropped():
    """gravity_down and no_gravity as on planar mechanisms and 3-D bodies: g(q) is linear in the gravity
    parameter (the renamed one at 1.62 gives 1.62/9.81 of the default's), zero without gravity, and the
    frame bias (a kinematic quantity: the RNEA's gravity is taken out of it) does not change."""
    from mechsym.spatial import Revolute, Tree

    def arm(setup):
        t = Tree("grav")
        setup(t)
        t.body("base")
        t.body("a", "base", Revolute("j1", (0, 1, 0)), mass=1.0, com=(0.3, 0, 0), inertia=(0.01, 0.01, 0.01, 0, 0, 0))
        t.body("b", "a", Revolute("j2", (0, 1, 0)), xyz=(0.5, 0, 0), mass=0.5, com=(0.2, 0, 0.1),
               inertia=(0.01, 0.02, 0.01, 0, 0, 0))
        return derive(t, backend="numpy")

    default, moon, free = arm(lambda t: None), arm(lambda t: t.gravity_down("g_moon", 1.62)), arm(lambda t: t.no_gravity())
    assert default.param_names == ["g"] and moon.param_names == ["g_moon"] and free.param_names == []
    q, v = np.random.default_rng(3).standard_normal((2, 10, 2))
    assert agree(moon.gravity(q), default.gravity(q) * (1.62 / 9.81), 1e-13)
    assert np.abs(free.gravity(q)).max() == 0.0
    assert agree(free.bias(q, v), default.bias(q, v) - default.gravity(q), 1e-13)
    assert agree(free.frame_bias(q, v, "b"), default.frame_bias(q, v, "b"), 1e-13)
