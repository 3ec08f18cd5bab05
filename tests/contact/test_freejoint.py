"""The free joint (mechsym.core.freejoint): its maps against Pinocchio's free flyer and R3 x SO3, the exact
conversions of speeds, and the floating body's dynamics against Pinocchio's ABA on the same body."""
import numpy as np
import pytest
import sympy as sp

from mechsym.core.errors import InputError
from mechsym.core.freejoint import FreeJoint
from mechsym.core.quaternion import about as quat_about, product as quat_multiply, rotation_matrix
from mechsym.spatial.floating import FloatingBody
from mechsym import derive

pin = pytest.importorskip("pinocchio")

LOCAL, WORLD = FreeJoint("local"), FreeJoint("world")
INERTIA = np.array([[0.3, 0.02, -0.01], [0.02, 0.25, 0.03], [-0.01, 0.03, 0.4]])
MASS = 2.5


def free_flyer():
    """Pinocchio's model of one free-flyer body with MASS and INERTIA about its origin (the centre)."""
    model = pin.Model()
    j = model.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), "root_joint")
    model.appendBodyToJoint(j, pin.Inertia(MASS, np.zeros(3), INERTIA), pin.SE3.Identity())
    return model


def random_q(rng, n, scale=1.0):
    """n configurations (n, 7): positions and unit quaternions, both signs of w."""
    q = np.concatenate([rng.normal(size=(n, 3)), rng.normal(size=(n, 4))], axis=1)
    q[:, 3:7] /= np.linalg.norm(q[:, 3:7], axis=1, keepdims=True)
    return q


def same_rotation(a, b):
    """Quaternions a, b with b's sign turned to a's (q and -q are the same rotation)."""
    return b * np.sign(np.sum(a * b, axis=-1, keepdims=True))


def test_neutral_and_layout_are_pinocchios():
    model = free_flyer()
    assert np.array_equal(LOCAL.neutral(), pin.neutral(model))
    assert LOCAL.q_names == ("x", "y", "z", "qx", "qy", "qz", "qw")
    # a quarter turn about z: the quaternion's scalar is LAST, and the rotation that Pinocchio puts in q
    q = np.concatenate([[1.0, 2.0, 3.0], quat_about((0, 0, 1), np.pi / 2)])
    data = model.createData()
    pin.forwardKinematics(model, data, q)
    np.testing.assert_allclose(rotation_matrix(q[3:7]), data.oMi[1].rotation, atol=1e-15)
    np.testing.assert_allclose(rotation_matrix(q[3:7]) @ [1, 0, 0], [0, 1, 0], atol=1e-15)
    with pytest.raises(InputError, match="'local' or 'world'"):
        FreeJoint("body")


@pytest.mark.parametrize("scale", [1.0, 1e-9])
def test_local_integrate_and_difference_equal_pinocchio(scale):
    """"local" speeds are Pinocchio's free flyer: integrate and difference equal pin's (the series
    branches at small angles too)."""
    rng = np.random.default_rng(3)
    model = free_flyer()
    q, v = random_q(rng, 30), rng.normal(size=(30, 6)) * scale * 2
    ours = LOCAL.integrate(q, v, 0.7)
    ref = np.array([pin.integrate(model, qi, 0.7 * vi) for qi, vi in zip(q, v)])
    ours[:, 3:7] = same_rotation(ref[:, 3:7], ours[:, 3:7])
    np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-14)
    q1 = random_q(rng, 30) if scale == 1.0 else ref
    diff = LOCAL.difference(q, q1)
    ref = np.array([pin.difference(model, a, b) for a, b in zip(q, q1)])
    np.testing.assert_allclose(diff, ref, rtol=0, atol=1e-12 * max(1.0, np.abs(ref).max()))
    back = LOCAL.integrate(q, diff)
    back[:, 3:7] = same_rotation(q1[:, 3:7], back[:, 3:7])
    np.testing.assert_allclose(back, q1, rtol=0, atol=1e-12)


def test_world_integrate_and_difference_equal_pinocchios_r3_x_so3():
    """"world" speeds move the origin along the world velocity: Pinocchio's R3 x SO3 Lie group."""
    rng = np.random.default_rng(4)
    group = pin.liegroups.R3() * pin.liegroups.SO3()
    q, v, q1 = random_q(rng, 30), rng.normal(size=(30, 6)) * 2, random_q(rng, 30)
    ours = WORLD.integrate(q, v, 0.7)
    ref = np.array([group.integrate(qi, 0.7 * vi) for qi, vi in zip(q, v)])
    ours[:, 3:7] = same_rotation(ref[:, 3:7], ours[:, 3:7])
    np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-14)
    ref = np.array([group.difference(a, b) for a, b in zip(q, q1)])
    np.testing.assert_allclose(WORLD.difference(q, q1), ref, rtol=0, atol=1e-12)
    assert np.array_equal(WORLD.neutral(), group.neutral)


@pytest.mark.parametrize("joint", [LOCAL, WORLD], ids=["local", "world"])
def test_qdot_is_the_rate_of_the_pose(joint):
    """dq/dt: the position's rate is the origin's world velocity that Pinocchio reports for the same
    motion, and d/dt R(q(t)) (sympy's exact derivative of the rotation map along qdot) is R [w]x; the
    inverse map gives the speeds back."""
    rng = np.random.default_rng(5)
    model, qs = free_flyer(), random_q(rng, 8)
    data = model.createData()
    x = sp.symbols("x0:4", real=True)
    dR = sp.lambdify(x, sp.Matrix(rotation_matrix(x)).reshape(9, 1).jacobian(x))
    for q in qs:
        v = rng.normal(size=6)
        qd = joint.qdot(q, v)
        _, v_pin = joint.to_pinocchio(q, v)
        pin.forwardKinematics(model, data, q, v_pin)
        world = pin.getVelocity(model, data, 1, pin.LOCAL_WORLD_ALIGNED)
        np.testing.assert_allclose(qd[:3], world.linear, rtol=0, atol=1e-14)
        R = rotation_matrix(q[3:7])
        w = v[3:6]
        skew = np.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]])
        np.testing.assert_allclose((dR(*q[3:7]) @ qd[3:7]).reshape(3, 3), R @ skew, rtol=0, atol=1e-14)
        np.testing.assert_allclose(joint.velocity(q, qd), v, rtol=0, atol=1e-14)
    # the symbolic map (the generated equations use it) equals the numeric one
    qs_sym, vs_sym = sp.symbols("q0:7", real=True), sp.symbols("v0:6", real=True)
    fn = sp.lambdify((qs_sym, vs_sym), joint.qdot(qs_sym, vs_sym))
    q, v = qs[0], rng.normal(size=6)
    np.testing.assert_allclose(fn(q, v), joint.qdot(q, v), rtol=0, atol=1e-15)


def test_pinocchio_conversions_round_trip_exactly():
    rng = np.random.default_rng(6)
    q, v, a = random_q(rng, 20), rng.normal(size=(20, 6)), rng.normal(size=(20, 6))
    q2, vp, ap = WORLD.to_pinocchio(q, v, a)
    np.testing.assert_array_equal(q2, q)
    np.testing.assert_allclose(np.einsum("nij,nj->ni", rotation_matrix(q[:, 3:7]), vp[:, :3]), v[:, :3], atol=1e-14)
    np.testing.assert_array_equal(vp[:, 3:], v[:, 3:])
    _, vb, ab = WORLD.from_pinocchio(q, vp, ap)
    np.testing.assert_allclose(vb, v, rtol=0, atol=1e-14)
    np.testing.assert_allclose(ab, a, rtol=0, atol=1e-13)
    assert all(np.array_equal(x, y) for x, y in zip(LOCAL.to_pinocchio(q, v, a), (q, v, a)))
    # the speeds' rates: the body-frame velocity's rate along a motion, by Pinocchio's classical and
    # spatial accelerations of the same motion
    model = free_flyer()
    data = model.createData()
    _, vp, ap = WORLD.to_pinocchio(q[0], v[0], a[0])
    pin.forwardKinematics(model, data, q[0], vp, ap)
    classical = pin.getClassicalAcceleration(model, data, 1, pin.LOCAL_WORLD_ALIGNED)
    np.testing.assert_allclose(classical.linear, a[0, :3], rtol=0, atol=1e-13)


def floating_body():
    b = FloatingBody("free")
    m = b.parameter("m", MASS, "kg", "mass")
    b.body(m, INERTIA.tolist())
    return b


@pytest.mark.parametrize("backend", ["numpy", "c"])
def test_floating_body_rates_equal_pinocchios_aba(backend):
    """The FloatingBody's rates (world velocity of the centre) against Pinocchio's ABA on one free-flyer
    body of the same mass and inertia under the same force and moment, converted by to_pinocchio."""
    from mechsym.codegen import c_backend

    if backend == "c" and c_backend.compiler() is None:
        pytest.skip("no C compiler")
    system = derive(floating_body(), backend=backend)
    model = free_flyer()
    data = model.createData()
    rng = np.random.default_rng(7)
    q = random_q(rng, 25)
    v, gen = rng.normal(size=(25, 6)) * 3, rng.normal(size=(25, 6))     # gen: F world, M body
    rates = system.accelerations(np.concatenate([q, v], axis=1).T, gen.T).T
    for i in range(25):
        qp, vp = WORLD.to_pinocchio(q[i], v[i])
        R = rotation_matrix(q[i, 3:7])
        tau = np.concatenate([R.T @ gen[i, :3], gen[i, 3:]])           # the wrench in the body frame
        ap = pin.aba(model, data, qp, vp, tau)
        _, _, a = WORLD.from_pinocchio(qp, vp, ap)
        np.testing.assert_allclose(rates[i, 7:], a, rtol=0, atol=1e-12 * max(1.0, np.abs(a).max()))
        np.testing.assert_allclose(rates[i, :7], LOCAL.qdot(qp, vp), rtol=0, atol=1e-13)


def test_a_state_is_read_in_the_free_joint_layout():
    """y = [x, y, z, qx, qy, qz, qw, v (world), w (body)]: a quarter turn about z given scalar last puts
    the body's x axis along world y; the same numbers read scalar first would be a half turn about x."""
    system = derive(floating_body(), backend="numpy")
    s = np.sqrt(0.5)
    y = system.initial_state((1, 2, 3), quat_xyzw=(0, 0, s, s), omega=(0, 0, 1), omega_frame="body")
    np.testing.assert_allclose(y[3:7], [0, 0, s, s])
    cols = system.world_columns(y)
    assert (cols["qw"], cols["qx"], cols["qy"], cols["qz"]) == pytest.approx((s, 0, 0, s))
    hand = np.array([1, 2, 3, 0, 0, s, s, 0, 0, 0, 1, 0, 0])
    np.testing.assert_allclose([system.world_columns(hand)[c] for c in ("wx", "wy", "wz")], [0, 1, 0], atol=1e-15)
    np.testing.assert_allclose(system.state_from_columns(system.world_columns(hand)), hand, atol=1e-15)
    rng = np.random.default_rng(9)
    ys = np.concatenate([random_q(rng, 6), rng.normal(size=(6, 6))], axis=1).T
    np.testing.assert_allclose(system.state_from_columns(system.world_columns(ys)), ys, atol=1e-14)
    with pytest.raises(TypeError):                     # a quaternion is never taken by position
        system.initial_state((0, 0, 0), (1, 0, 0, 0))
    with pytest.raises(TypeError):                     # nor under its former name
        system.initial_state(quaternion=(1, 0, 0, 0))
    with pytest.raises(InputError, match="lack 'wz'"):
        system.state_from_columns({k: 0.0 for k in ("x", "y", "z", "qw", "qx", "qy", "qz", "vx", "vy", "vz", "wx", "wy")})


def test_one_quaternion_product():
    """Hamilton's product in the (x, y, z, w) layout: i j = k, and the rotation of a product is the
    product of the rotations (numeric and symbolic)."""
    i, j = np.array([1.0, 0, 0, 0]), np.array([0, 1.0, 0, 0])
    np.testing.assert_array_equal(quat_multiply(i, j), [0, 0, 1, 0])
    rng = np.random.default_rng(10)
    a, b = rng.normal(size=(5, 4)), rng.normal(size=(5, 4))
    np.testing.assert_allclose(rotation_matrix(quat_multiply(a, b)), rotation_matrix(a) @ rotation_matrix(b), atol=1e-14)
    x = sp.symbols("x0:4", real=True)
    assert sp.lambdify([x], quat_multiply(x, tuple(b[0])))(a[0]) == pytest.approx(quat_multiply(a[0], b[0]))
