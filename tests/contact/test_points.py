"""Contact points on derived models: positions, velocities and J^T f, checked independently."""
import numpy as np
import pytest

from mechsym.contact import ContactPoints, Fpt, GroundContact, gcontact
from mechsym.contact import points as points_module
from mechsym.core.errors import InputError
from mechsym.core.quaternion import product as quat_multiply


@pytest.fixture(scope="module")
def chain():
    from mechanisms import chain3

    return chain3.model()


@pytest.fixture(scope="module")
def disc():
    from mechanisms import polydisc

    return polydisc.model()


def random_planar(points, rng):
    n = points.n_speeds
    return rng.normal(size=n), rng.normal(size=n)


def random_floating(rng):
    q = np.concatenate([rng.normal(size=3), rng.normal(size=4)])
    return q, rng.normal(size=6)


def advance_floating(q, qd, h):
    """The pose after moving for h at constant (v, w_body): exact rotation increment."""
    w = qd[3:]
    angle = np.linalg.norm(w) * h
    dq = np.concatenate([np.sin(angle / 2) * w / np.linalg.norm(w), [np.cos(angle / 2)]])
    qn = q[3:] / np.linalg.norm(q[3:])
    return np.concatenate([q[:3] + h * qd[:3], quat_multiply(qn, dq)])


# ---------------------------------------------------------------- J^T f is the virtual power

@pytest.mark.parametrize("seed", range(3))
def test_virtual_power_planar(chain, seed):
    _, points, _ = chain
    rng = np.random.default_rng(seed)
    q, qd = random_planar(points, rng)
    f = rng.normal(size=(2, points.n))
    gen = points.generalised_forces(q, f)
    _, v = points.kinematics(q, qd)
    assert gen @ qd == pytest.approx(np.sum(f * v), rel=1e-13, abs=1e-13)


@pytest.mark.parametrize("seed", range(3))
def test_virtual_power_floating(disc, seed):
    _, points, _ = disc
    rng = np.random.default_rng(seed)
    q, qd = random_floating(rng)
    f = rng.normal(size=(3, points.n))
    gen = points.generalised_forces(q, f)
    _, v = points.kinematics(q, qd)
    assert gen @ qd == pytest.approx(np.sum(f * v), rel=1e-13, abs=1e-13)


def test_velocities_are_rates_of_positions(chain, disc):
    """Independent of the Jacobians: central differences of the positions along the motion."""
    rng = np.random.default_rng(7)
    _, points, _ = chain
    q, qd = random_planar(points, rng)
    h = 1e-6
    fd = (points.positions(q + h * qd) - points.positions(q - h * qd)) / (2 * h)
    np.testing.assert_allclose(points.kinematics(q, qd)[1], fd, atol=1e-8)
    _, points, _ = disc
    q, qd = random_floating(rng)
    fd = (points.positions(advance_floating(q, qd, h)) - points.positions(advance_floating(q, qd, -h))) / (2 * h)
    np.testing.assert_allclose(points.kinematics(q, qd)[1], fd, atol=1e-8)


def test_kinematics_over_samples_in_one_call(chain, disc):
    """q (n_coords, N), qd (n_speeds, N) give nd x np x N, equal to N single calls."""
    rng = np.random.default_rng(11)
    for (_, points, _), planar in ((chain, True), (disc, False)):
        samples = [random_planar(points, rng) if planar else random_floating(rng) for _ in range(5)]
        q, qd = np.array([s[0] for s in samples]).T, np.array([s[1] for s in samples]).T
        p, v = points.kinematics(q, qd)
        assert p.shape == v.shape == (points.nd, points.n, 5)
        for k, (qk, qdk) in enumerate(samples):
            pk, vk = points.kinematics(qk, qdk)
            np.testing.assert_allclose(p[..., k], pk, rtol=1e-14, atol=1e-14)
            np.testing.assert_allclose(v[..., k], vk, rtol=1e-14, atol=1e-14)


def test_generalised_forces_agree_with_fpt_floating(disc):
    """spatial_v2's route: Fpt gives [p x f; f] about the origin; shift to the centre, rotate to the body."""
    system, points, _ = disc
    rng = np.random.default_rng(3)
    q, _ = random_floating(rng)
    f = rng.normal(size=(3, points.n))
    p = points.positions(q)
    spatial = Fpt(f, p).sum(axis=1)
    moment_o, force = spatial[:3], spatial[3:]
    from mechsym.core.quaternion import rotation_matrix

    rot = rotation_matrix(q[3:])
    expected = np.concatenate([force, rot.T @ (moment_o - np.cross(q[:3], force))])
    np.testing.assert_allclose(points.generalised_forces(q, f), expected, rtol=1e-12, atol=1e-12)


def test_generalised_forces_agree_with_fpt_planar(chain):
    system, points, _ = chain
    rng = np.random.default_rng(4)
    q, _ = random_planar(points, rng)
    f = rng.normal(size=(2, points.n))
    planar = Fpt(f, points.positions(q))          # [px fy - py fx; fx; fy] about the origin
    expected = np.zeros(len(q))
    for j, body in enumerate(points.bodies):
        sl = system.constraints.body_slice(body)
        x, y = q[sl][:2]
        m_o, fx, fy = planar[:, j]
        expected[sl] += [fx, fy, m_o - (x * fy - y * fx)]
    np.testing.assert_allclose(points.generalised_forces(q, f), expected, rtol=1e-12, atol=1e-12)


def test_points_at_assembly_match_the_declaration(chain):
    """The contact points A, B, C sit where the mechanism's own named points are."""
    system, points, _ = chain
    theta = np.array([[0.3, -0.4, 0.9]])
    table = system.kinematics_table(theta)
    kin = system.kinematics(theta)
    p = points.positions(kin.q[0])
    for j, name in enumerate(points.names):
        assert p[0, j] == pytest.approx(table[f"{name}.x"][0], abs=1e-12)
        assert p[1, j] == pytest.approx(table[f"{name}.y"][0], abs=1e-12)


# ---------------------------------------------------------------- one law evaluation for all points

def test_load_evaluates_the_law_once_for_all_points(disc, monkeypatch):
    """One vectorised law evaluation for all 32 points per call, equal to the public gcontact followed by
    J^T f. The count is a spy: a loop over the points would give the same forces (the result cannot show
    the one evaluation, which is the property that keeps the runner's per-call cost flat in the points)."""
    _, points, ground = disc
    calls = []
    real = points_module._laws_unchecked

    def counting(*args):
        calls.append(args[3].shape)
        return real(*args)

    monkeypatch.setattr(points_module, "_laws_unchecked", counting)
    load = points.load(ground)
    rng = np.random.default_rng(5)
    q = np.array([0, 0, 0.049, 1, 0, 0, 0.0])
    qd = rng.normal(size=6)
    u = rng.normal(scale=1e-5, size=2 * points.n)
    gen, ud = load(0.0, q, qd, u)
    assert calls == [(3, 32)]
    # and it is exactly the public gcontact followed by J^T f
    p, v = points.kinematics(q, qd)
    f, ud_ref, _ = gcontact(ground.stiffness, ground.damping, ground.mu, p, v, u.reshape(2, -1))
    assert np.any(f[2] > 0)
    np.testing.assert_array_equal(ud, ud_ref.ravel())
    np.testing.assert_allclose(gen, points.generalised_forces(q, f), rtol=1e-14, atol=1e-14)


def test_held_load_evaluates_once_too(disc, monkeypatch):
    """With held states (the runner's default) it is one evaluation of laws_in_states per call (a spy, as
    above: the count is the property), and holding the states the law itself classifies gives the forces
    of the unheld load (which classifies them afresh) and of gcontact followed by J^T f."""
    from mechsym.contact.points import classify, contact_signals

    _, points, ground = disc
    calls = []
    real = points_module.laws_in_states
    monkeypatch.setattr(points_module, "laws_in_states", lambda *a: calls.append(a[3].shape) or real(*a))
    rng = np.random.default_rng(7)
    q, qd = np.array([0, 0, 0.049, 1, 0, 0, 0.0]), rng.normal(size=6)
    u = rng.normal(scale=1e-5, size=2 * points.n)
    p, v = points.kinematics(q, qd)

    class Held:
        state = classify(*contact_signals(ground, p, v, u.reshape(2, -1)))

    gen, ud = points.load(ground, Held)(0.0, q, qd, u)
    assert calls == [(3, 32)]
    f, ud_ref, _ = gcontact(ground.stiffness, ground.damping, ground.mu, p, v, u.reshape(2, -1))
    assert np.any(f[2] > 0)
    np.testing.assert_allclose(ud, ud_ref.ravel(), rtol=1e-14, atol=1e-18)
    np.testing.assert_allclose(gen, points.generalised_forces(q, f), rtol=1e-14, atol=1e-14)


def test_named_point_and_coordinates_agree(chain):
    system, points, _ = chain
    by_name = ContactPoints(system, {"tip": ("link3", "C")})
    by_value = ContactPoints(system, [("link3", (1.0, 0.0))])
    q = np.random.default_rng(2).normal(size=9)
    np.testing.assert_array_equal(by_name.positions(q), by_value.positions(q))
    assert by_value.names == ("gc0",)


def test_point_coordinates_follow_parameters(chain):
    """A point given by a parameter expression moves with the parameter value."""
    system, _, _ = chain
    l_sym = system.mechanism.parameters["l"].symbol
    long = ContactPoints(system, {"tip": ("link3", (l_sym, 0))}, params={"l": 2.0})
    q = np.zeros(9)
    # link3's centre of mass is at l/2 = 1 along x: the tip is 1 further at l = 2
    assert long.positions(q)[0, 0] == pytest.approx(1.0)


# ---------------------------------------------------------------- bad input

@pytest.mark.parametrize("spec, message", [
    ({"p": ("link9", (0, 0))}, "unknown body 'link9'"),
    ({"p": ("ground", (0, 0))}, "fixed body 'ground'"),
    ({"p": ("link1", "Z")}, "no point 'Z'"),
    ({"p": ("link1", (0, 0, 0))}, "expected (x, y)"),
    ({"p": ("link1", (np.nan, 0))}, "finite"),
    ({"p": "link1"}, "expected (body, coordinates)"),
    ({}, "no contact points"),
])
def test_bad_points_planar(chain, spec, message):
    system, _, _ = chain
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        ContactPoints(system, spec)


@pytest.mark.parametrize("spec, message", [
    ({"p": ("disc", (0, 0, 0))}, "unknown body 'disc'"),
    ({"p": ("polydisc", (0, 0))}, "three coordinates"),
    ({"p": ("polydisc", "nowhere")}, "no point 'nowhere'"),
])
def test_bad_points_floating(disc, spec, message):
    system, _, _ = disc
    with pytest.raises(InputError, match=message):
        ContactPoints(system, spec)


def test_bad_model_ground_and_forces(chain):
    system, points, _ = chain
    with pytest.raises(InputError, match="derived planar System or a FloatingSystem"):
        ContactPoints(object(), {"p": ("link1", (0, 0))})
    with pytest.raises(InputError, match="GroundContact"):
        points.load((1e6, 2000, 0.5))
    with pytest.raises(InputError, match="shape"):
        points.generalised_forces(np.zeros(9), np.zeros((3, 3)))
    with pytest.raises(InputError, match="unknown parameter"):
        ContactPoints(system, {"p": ("link1", (0, 0))}, params={"length": 2})
    with pytest.raises(InputError, match="stiffness"):
        GroundContact(-1.0, 2000.0, 0.5)
