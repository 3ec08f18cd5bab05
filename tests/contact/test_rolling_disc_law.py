"""Exudyn's penalty rolling-disc law (mechsym.contact.rolling_disc): values worked out by hand, symmetry,
bad input, and Exudyn's own connector (outputs and generalized forces) on the same states."""
import warnings

import numpy as np
import pytest

from mechsym.contact.rolling_disc import rolling_disc_contact
from mechsym.errors import InputError

R = 0.2
K, D, VMU = 1e5, 1e3, 1e-3
BASE = dict(stiffness=K, damping=D, zone=VMU)
X, Y, Z = np.eye(3)


def law(p, v, axis, omega, **kw):
    args = dict(BASE)
    args.update(kw)
    return rolling_disc_contact(p, v, axis, omega, R, **args)


def upright(depth=1e-3, v=(0.0, 0.0, 0.0), omega=(0.0, 0.0, 0.0), **kw):
    """The untilted disc (axle +x) above the origin, penetrating by depth."""
    return law([0.0, 0.0, R - depth], v, X, omega, **kw)


def tilt_y(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


# ---------------------------------------------------------------- by hand

def test_upright_disc_frames_and_contact_point():
    c = upright(depth=1e-3)
    np.testing.assert_allclose(c.e_lat, X, atol=1e-15)
    np.testing.assert_allclose(c.e_long, Y, atol=1e-15)       # rolling direction +y for the axle +x
    np.testing.assert_allclose(c.e_n, Z, atol=1e-15)
    np.testing.assert_allclose(c.to_contact, -Z, atol=1e-15)
    np.testing.assert_allclose(c.contact_point, [0, 0, -1e-3], atol=1e-15)
    assert c.gap == pytest.approx(-1e-3, rel=1e-12) and c.in_contact
    # frame right-handed
    assert np.dot(np.cross(c.e_lat, c.e_long), c.e_n) == pytest.approx(1.0)


def test_static_normal_force_and_no_friction_at_rest():
    c = upright(depth=9.81e-5, mu=0.3)                        # m g / k for 1 kg
    assert c.f_n == pytest.approx(9.81, rel=1e-10)
    assert c.f_lat == 0 and c.f_long == 0
    np.testing.assert_allclose(c.force, [0, 0, 9.81], rtol=1e-10)
    np.testing.assert_allclose(c.torque, 0, atol=1e-15)


def test_pure_rolling_has_no_slip_and_no_friction():
    c = upright(v=(0, 1, 0), omega=(-5, 0, 0), mu=0.3)       # v = -r omega_x
    assert c.slip_lat == 0 and abs(c.slip_long) < 1e-15 and c.slip_n == 0
    assert c.f_long == 0 and c.f_n == pytest.approx(100.0)


def test_sliding_disc_friction_opposes_slip_and_spins_it_up():
    c = upright(v=(0, 2, 0), mu=0.2)                          # slides along +y, no spin
    assert c.slip_long == pytest.approx(2.0)
    assert c.f_long == pytest.approx(-0.2 * 100.0)
    np.testing.assert_allclose(c.force, [0, -20, 100], rtol=1e-14)
    # (r w3) x f = (0, 0, -0.2) x (0, -20, 100) = (-4, 0, 0): spins omega_x negative = rolling +y
    np.testing.assert_allclose(c.torque, [-4, 0, 0], rtol=1e-14)


def test_spinning_disc_in_place_is_pushed_forward():
    c = upright(omega=(-5, 0, 0), mu=0.3)                     # contact point moves -y
    assert c.slip_long == pytest.approx(-1.0)
    assert c.f_long == pytest.approx(30.0)


@pytest.mark.parametrize("linear, phi", [(False, 0.75), (True, 0.5)])
def test_regularisation_zone(linear, phi):
    c = upright(v=(0, 0.5 * VMU, 0), mu=0.3, linear_zone=linear)
    assert c.f_long == pytest.approx(-phi * 0.3 * 100.0, rel=1e-12)
    # at the edge of the zone both give full friction, continuously
    c = upright(v=(0, VMU, 0), mu=0.3, linear_zone=linear)
    assert c.f_long == pytest.approx(-30.0, rel=1e-12)
    c = upright(v=(0, VMU * (1 + 1e-12), 0), mu=0.3, linear_zone=linear)
    assert c.f_long == pytest.approx(-30.0, rel=1e-10)


def test_zero_and_tiny_slip_give_zero_friction_without_nan():
    for s in (0.0, 1e-300, 5e-324):
        c = upright(v=(s, s, 0), mu=0.3)
        assert np.isfinite(c.force).all() and np.isfinite(c.torque).all()
        assert abs(c.f_lat) < 1e-200 and abs(c.f_long) < 1e-200


def test_anisotropic_and_viscous_friction():
    # slip (0.3, 0.4) m/s, |s| = 0.5; mu = (0.1, 0.4); viscous (2, 3) s/m; f_n = 100
    c = upright(v=(0.3, 0.4, 0), mu=(0.1, 0.4), viscous=(2.0, 3.0))
    assert c.f_lat == pytest.approx(-(0.1 + 2 * 0.5) * 100 * 0.6, rel=1e-13)
    assert c.f_long == pytest.approx(-(0.4 + 3 * 0.5) * 100 * 0.8, rel=1e-13)


def test_scalar_mu_means_isotropic():
    a = upright(v=(0.3, 0.4, 0), mu=0.25, viscous=0.5)
    b = upright(v=(0.3, 0.4, 0), mu=(0.25, 0.25), viscous=(0.5, 0.5))
    np.testing.assert_array_equal(a.force, b.force)


def test_friction_angle_rotates_the_principal_directions():
    # with the angle a, mu_x acts along e_lat rotated by a towards e_long
    a = 0.3
    d = np.array([np.cos(a), np.sin(a)])                      # (lat, long) components
    c = upright(v=(d[0], d[1], 0), mu=(0.1, 0.4), friction_angle=a)
    np.testing.assert_allclose([c.f_lat, c.f_long], -0.1 * 100 * d, rtol=1e-13)
    dp = np.array([-np.sin(a), np.cos(a)])
    c = upright(v=(dp[0], dp[1], 0), mu=(0.1, 0.4), friction_angle=a)
    np.testing.assert_allclose([c.f_lat, c.f_long], -0.4 * 100 * dp, rtol=1e-13, atol=1e-13)
    # a = pi/2 swaps the roles of mu_x and mu_y
    c = upright(v=(1, 0, 0), mu=(0.1, 0.4), friction_angle=np.pi / 2)
    assert c.f_lat == pytest.approx(-40.0, rel=1e-13)
    # a lateral slip with an oblique angle gives a longitudinal force (a Mecanum wheel's roller)
    c = upright(v=(1, 0, 0), mu=(0.1, 0.4), friction_angle=a)
    assert c.f_long == pytest.approx(-(0.1 - 0.4) * np.cos(a) * np.sin(a) * 100, rel=1e-13)


def test_damping_and_tension():
    c = upright(depth=1e-3, v=(0, 0, -0.01))                  # approaching: d adds 10 N
    assert c.f_n == pytest.approx(110.0)
    assert c.slip_n == pytest.approx(-0.01)
    c = upright(depth=1e-3, v=(0, 0, 0.2), mu=0.3, omega=(-1, 0, 0))  # leaving faster than k/d * depth
    assert c.f_n == pytest.approx(100.0 - 200.0)              # Exudyn's law pulls
    assert c.f_long == pytest.approx(0.3 * 100.0)             # friction from |f_n|
    c = upright(depth=1e-3, v=(0, 0, 0.2), mu=0.3, omega=(-1, 0, 0), no_tension=True)
    assert c.f_n == 0 and c.f_long == 0 and np.all(c.force == 0)


def test_out_of_contact_no_force_but_slip_reported():
    c = upright(depth=-1e-3, v=(0.1, 2, -3), omega=(1, 2, 3), mu=0.3, rolling_friction=0.1)
    assert not c.in_contact and c.gap == pytest.approx(1e-3)
    assert np.all(c.force == 0) and np.all(c.torque == 0)
    assert c.slip_long == pytest.approx(2 + R * 1)            # v_y + (omega x (0,0,-r))_y = 2 + r wx
    c = upright(depth=0.0, mu=0.3, v=(0, 1, 0))               # touching: gap 0 is not contact
    assert not c.in_contact and np.all(c.force == 0)


def test_rolling_friction_acts_at_the_centre_against_the_planar_velocity():
    c = upright(v=(0.3, 1, -0.01), omega=(-5, 0, 0), mu=0.3, rolling_friction=0.05)
    fn = 100.0 + 10.0
    np.testing.assert_allclose(c.rolling_force, [-0.05 * fn * 0.3, -0.05 * fn * 1.0, 0], rtol=1e-13)
    np.testing.assert_allclose(c.contact_force, c.force - c.rolling_force)
    # the torque comes from the contact force alone
    np.testing.assert_allclose(c.torque, np.cross(R * c.to_contact, c.contact_force), rtol=1e-14)


def test_tilted_disc():
    a = 0.3                                                   # positive tilt lowers the axle's +x end
    rot = tilt_y(a)
    w1 = rot @ X
    assert w1[2] < 0
    h = R * np.cos(a) - 1e-3
    c = law([0, 0, h], [0, 0, 0], w1, [0, 0, 0], mu=0.3)
    np.testing.assert_allclose(c.to_contact, [-np.sin(a), 0, -np.cos(a)], atol=1e-15)
    np.testing.assert_allclose(c.contact_point, [-R * np.sin(a), 0, -1e-3], atol=1e-15)
    np.testing.assert_allclose(c.e_lat, X, atol=1e-15)
    np.testing.assert_allclose(c.e_long, Y, atol=1e-15)
    assert c.f_n == pytest.approx(100.0)
    # normal force at the contact point, left of the centre: torque r sin(a) f_n about +y
    np.testing.assert_allclose(c.torque, [0, R * np.sin(a) * 100.0, 0], rtol=1e-12, atol=1e-13)


def test_axis_length_and_sign_conventions():
    rng = np.random.default_rng(3)
    p = [0.1, -0.2, 0.195]
    v, om = rng.normal(size=3), rng.normal(size=3)
    a = law(p, v, [1.0, 0.2, -0.1], om, mu=(0.2, 0.3))
    b = law(p, v, 7 * np.array([1.0, 0.2, -0.1]), om, mu=(0.2, 0.3))
    np.testing.assert_allclose(a.force, b.force, rtol=1e-13)
    # reversing the axis reverses e_long (and e_lat): forces in the world are unchanged
    c = law(p, v, -np.array([1.0, 0.2, -0.1]), om, mu=(0.2, 0.3))
    np.testing.assert_allclose(c.e_long, -a.e_long, atol=1e-15)
    np.testing.assert_allclose(c.force, a.force, rtol=1e-13)
    np.testing.assert_allclose(c.torque, a.torque, rtol=1e-13)


def test_rotating_the_whole_scene_rotates_the_result():
    rng = np.random.default_rng(11)
    from scipy.spatial.transform import Rotation

    Q = Rotation.random(random_state=rng).as_matrix()
    p0 = rng.normal(size=3)
    p = np.array([0.05, -0.02, 0.19])
    v, om, w1 = rng.normal(size=3), rng.normal(size=3) * 4, np.array([1.0, 0.3, 0.2])
    kw = dict(mu=(0.2, 0.5), viscous=(0.3, 0.1), friction_angle=0.4, rolling_friction=0.02)
    a = law(p, v, w1, om, **kw)
    b = law(p0 + Q @ p, Q @ v, Q @ w1, Q @ om, plane_point=p0, plane_normal=Q @ Z, **kw)
    assert a.in_contact and b.in_contact
    for name in ("f_lat", "f_long", "f_n", "slip_lat", "slip_long", "gap"):
        assert getattr(b, name) == pytest.approx(getattr(a, name), rel=1e-10, abs=1e-12), name
    np.testing.assert_allclose(b.force, Q @ a.force, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(b.torque, Q @ a.torque, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(b.contact_point, p0 + Q @ a.contact_point, atol=1e-12)


def test_friction_never_does_positive_work():
    rng = np.random.default_rng(5)
    n = 2000
    p = np.column_stack([rng.normal(size=(n, 2)), rng.uniform(0.15, 0.21, n)])
    v, om = rng.normal(size=(n, 3)), rng.normal(size=(n, 3)) * 5
    ax = rng.normal(size=(n, 3))
    ax[:, 2] *= 0.5
    for lin in (False, True):
        c = law(p, v, ax, om, mu=(0.2, 0.6), viscous=(0.5, 0.1), friction_angle=0.7, linear_zone=lin)
        power = c.f_lat * c.slip_lat + c.f_long * c.slip_long
        assert np.all(power <= 1e-12 * np.abs(c.f_n))
        assert np.isfinite(c.force).all() and np.isfinite(c.torque).all()


def test_vectorised_equals_one_by_one_and_broadcasts():
    rng = np.random.default_rng(7)
    n = 25
    p = np.column_stack([rng.normal(size=(n, 2)), rng.uniform(0.19, 0.201, n)])
    v, om, ax = rng.normal(size=(n, 3)), rng.normal(size=(n, 3)), rng.normal(size=(n, 3)) + [2, 0, 0]
    kw = dict(mu=(0.2, 0.3), viscous=(0.1, 0.2), friction_angle=0.2, rolling_friction=0.01)
    c = law(p, v, ax, om, **kw)
    assert c.force.shape == (n, 3) and c.f_n.shape == (n,) and c.e_n.shape == (n, 3)
    for i in range(n):
        ci = law(p[i], v[i], ax[i], om[i], **kw)
        assert ci.f_n.shape == ()
        np.testing.assert_allclose(c.force[i], ci.force, rtol=1e-14, atol=1e-14)
        np.testing.assert_allclose(c.torque[i], ci.torque, rtol=1e-14, atol=1e-14)
    # one axis for a grid of states
    g = law(p.reshape(5, 5, 3), v.reshape(5, 5, 3), X, om.reshape(5, 5, 3), **kw)
    assert g.torque.shape == (5, 5, 3) and g.slip_long.shape == (5, 5)
    assert not g.force.flags.writeable


# ---------------------------------------------------------------- bad input

@pytest.mark.parametrize("axis", [[0, 0, 1], [0, 0, -3], [1e-12, 0, 1]])
def test_axis_parallel_to_normal(axis):
    with pytest.raises(InputError, match="axis is parallel to the plane normal"):
        law([0, 0, 0.19], [0, 0, 0], axis, [0, 0, 0])


def test_axis_parallel_to_normal_in_a_batch_names_the_index():
    ax = np.tile(X, (4, 1))
    ax[2] = [0, 0, 2]
    with pytest.raises(InputError, match=r"axis is parallel to the plane normal at index \(2,\)"):
        law(np.tile([0, 0, 0.19], (4, 1)), 0 * ax, ax, 0 * ax)
    with pytest.raises(InputError, match="axis is parallel"):
        law([0, 0, 0.19], [0, 0, 0], [1, 0, 0], [0, 0, 0], plane_normal=[5, 0, 0])


@pytest.mark.parametrize("name, value", [("radius", 0.0), ("radius", -0.2), ("stiffness", 0.0),
                                         ("stiffness", -1e5), ("zone", 0.0), ("zone", -1e-3),
                                         ("radius", np.nan), ("zone", np.inf), ("damping", -1.0),
                                         ("rolling_friction", -0.1), ("friction_angle", np.nan)])
def test_bad_parameters(name, value):
    kw = dict(BASE, mu=0.3)
    radius = R
    if name == "radius":
        radius = value
    else:
        kw[name] = value
    with pytest.raises(InputError, match=name):
        rolling_disc_contact([0, 0, 0.19], [0, 0, 0], X, [0, 0, 0], radius, **kw)


@pytest.mark.parametrize("name, value", [("mu", -0.1), ("mu", (0.1, -0.2)), ("mu", (0.1, 0.2, 0.3)),
                                         ("viscous", (np.nan, 0)), ("mu", "abc")])
def test_bad_friction_coefficients(name, value):
    with pytest.raises(InputError, match=name):
        law([0, 0, 0.19], [0, 0, 0], X, [0, 0, 0], **{name: value})


@pytest.mark.parametrize("arg", ["position", "velocity", "axis", "omega"])
def test_bad_states(arg):
    good = dict(position=[0, 0, 0.19], velocity=[0, 0, 0], axis=X, omega=[0, 0, 0])
    for bad in ([0, np.nan, 0], [1, 2], [[0, 0, np.inf]], "x"):
        s = dict(good, **{arg: bad})
        with pytest.raises(InputError, match=arg):
            rolling_disc_contact(s["position"], s["velocity"], s["axis"], s["omega"], R, **BASE)
    with pytest.raises(InputError, match="broadcast"):
        s = dict(good, **{arg: np.zeros((2, 3))})
        s["position"] = np.zeros((3, 3)) if arg != "position" else np.zeros((2, 3))
        s["velocity"] = np.zeros((3, 3)) if arg != "velocity" else np.zeros((2, 3))
        rolling_disc_contact(s["position"], s["velocity"], s["axis"], s["omega"], R, **BASE)


def test_zero_axis_and_zero_normal():
    with pytest.raises(InputError, match="axis must not be the zero vector"):
        law([0, 0, 0.19], [0, 0, 0], [0, 0, 0], [0, 0, 0])
    with pytest.raises(InputError, match="plane_normal must not be the zero vector"):
        law([0, 0, 0.19], [0, 0, 0], X, [0, 0, 0], plane_normal=[0, 0, 0])


def test_overflow_is_an_input_error_not_inf():
    with pytest.raises(InputError, match="overflowed"):
        law([0, 0, -1e300], [0, 0, -1e300], X, [0, 0, 0], mu=0.3)


# ---------------------------------------------------------------- against Exudyn itself

from tests.reference import exudyn_disc  # noqa: E402  (imports exudyn lazily)

needs_exudyn = pytest.mark.skipif(not exudyn_disc.exudyn_available(), reason="exudyn is not installed")


def _law_for(case, p, v, rot, om):
    return rolling_disc_contact(p, v, np.asarray(rot)[..., :, 0], om, case.radius,
                                stiffness=case.stiffness, damping=case.damping, zone=case.zone,
                                mu=case.mu, viscous=case.viscous, friction_angle=case.friction_angle,
                                rolling_friction=case.rolling_friction, linear_zone=case.linear_zone)


def _random_states(n, seed):
    from scipy.spatial.transform import Rotation

    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        i = len(out)
        case = exudyn_disc.DiscCase(
            mu=tuple(rng.uniform(0, 0.6, 2)), viscous=tuple(rng.uniform(0, 2, 2)) if i % 2 else (0.0, 0.0),
            friction_angle=float(rng.uniform(-1, 1)) if i % 3 else 0.0,
            rolling_friction=float(rng.uniform(0, 0.1)) if i % 4 else 0.0, linear_zone=bool(i % 5 == 0),
            zone=float(10 ** rng.uniform(-3, -0.5)), damping=float(rng.uniform(0, 2e3)))
        rot = Rotation.random(random_state=rng).as_matrix()
        if abs(rot[2, 0]) > 0.95:                             # axle too close to vertical
            continue
        w1 = rot[:, 0]
        w2 = np.cross(w1, Z)
        w2 /= np.linalg.norm(w2)
        w3 = np.cross(w1, w2)
        depth = rng.uniform(-2e-4, 2e-3)
        p = np.array([rng.uniform(-1, 1), rng.uniform(-1, 1), -case.radius * w3[2] - depth])
        v = rng.normal(size=3) * rng.choice([1e-4, 1e-3, 1e-1, 1.0])
        om = rng.normal(size=3) * rng.choice([1e-2, 1.0, 5.0])
        out.append((case, p, v, rot, om))
    return out


@needs_exudyn
@pytest.mark.parametrize("seed", [1, 2])
def test_matches_exudyn_connector_on_random_states(seed):
    """Exudyn's ForceLocal, VelocityLocal, Position and RotationMatrix outputs, and the generalized forces
    its connector puts on the disc's node, on random orientations, penetrations, velocities and
    parameters (its data coordinates set to the state, as after a converged discontinuous iteration)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for case, p, v, rot, om in _random_states(30, seed):
            _, mbs, it = exudyn_disc.build_disc(case, position=p, velocity=v, rotation=rot, omega=om,
                                                gravity=False)
            o = exudyn_disc.connector_outputs(mbs, it["connector"])
            q = exudyn_disc.generalized_forces(mbs, it["connector"])
            c = _law_for(case, p, v, rot, om)
            scale = max(1.0, float(np.max(np.abs(c.force))))
            np.testing.assert_allclose(o["ForceLocal"], [c.f_lat, -c.f_long, c.f_n], rtol=0,
                                       atol=1e-11 * scale)
            np.testing.assert_allclose(o["VelocityLocal"], [c.slip_lat, -c.slip_long, c.slip_n], atol=1e-12)
            np.testing.assert_allclose(o["Position"], c.contact_point, atol=1e-13)
            np.testing.assert_allclose(o["RotationMatrix"], np.column_stack([c.e_lat, -c.e_long, c.e_n]),
                                       atol=1e-13)
            np.testing.assert_allclose(q[:3], c.force, rtol=0, atol=1e-11 * scale)
            tau = exudyn_disc.euler_parameter_torque(rot, q[3:])
            np.testing.assert_allclose(tau, c.torque, rtol=0, atol=1e-11 * scale)


@needs_exudyn
def test_matches_exudyn_on_an_inclined_offset_plane():
    n = np.array([0.0, np.sin(0.2), np.cos(0.2)])
    p0 = np.array([0.01, -0.02, 0.01])
    case = exudyn_disc.DiscCase(mu=(0.3, 0.2), viscous=(0.5, 0.2), rolling_friction=0.05, friction_angle=0.2)
    p, v, om, rot = [0.0, 0.1, 0.15], [0.1, 0.3, -0.2], [1.0, 2.0, 3.0], tilt_y(0.3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        _, mbs, it = exudyn_disc.build_disc(case, position=p, velocity=v, rotation=rot, omega=om,
                                            gravity=False, plane_point=p0, plane_normal=n)
        o = exudyn_disc.connector_outputs(mbs, it["connector"])
        q = exudyn_disc.generalized_forces(mbs, it["connector"])
    c = rolling_disc_contact(p, v, rot[:, 0], om, case.radius, stiffness=case.stiffness,
                             damping=case.damping, zone=case.zone, mu=case.mu, viscous=case.viscous,
                             friction_angle=case.friction_angle, rolling_friction=case.rolling_friction,
                             plane_point=p0, plane_normal=n)
    assert c.in_contact and c.f_n > 0
    np.testing.assert_allclose(o["ForceLocal"], [c.f_lat, -c.f_long, c.f_n], rtol=1e-12)
    np.testing.assert_allclose(o["Position"], c.contact_point - p0, atol=1e-14)   # relative to p0
    np.testing.assert_allclose(q[:3], c.force, rtol=1e-12)
    np.testing.assert_allclose(exudyn_disc.euler_parameter_torque(rot, q[3:]), c.torque, rtol=1e-11)


@needs_exudyn
def test_exudyn_output_conventions():
    """The mapping of docs/rolling-disc.md, read off Exudyn for the upright disc sliding along +y."""
    case = exudyn_disc.DiscCase(mu=(0.1, 0.4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        _, mbs, it = exudyn_disc.build_disc(case, position=[0, 0, R - 1e-3], velocity=[0.5, 2, 0],
                                            rotation=np.eye(3), omega=[0, 0, 0], gravity=False)
        o = exudyn_disc.connector_outputs(mbs, it["connector"])
        q = exudyn_disc.generalized_forces(mbs, it["connector"])
    A = o["RotationMatrix"]
    np.testing.assert_allclose(A, np.diag([1, -1, 1]), atol=1e-15)   # J1 = (+x, -y, +z): left-handed
    assert np.linalg.det(A) == pytest.approx(-1)
    fl = o["ForceLocal"]
    assert fl[2] == pytest.approx(100.0)                              # pressing: positive
    np.testing.assert_allclose(o["VelocityLocal"], [0.5, -2, 0], atol=1e-15)  # slip, in J1
    np.testing.assert_allclose(o["Velocity"], [0.5, 2, 0], atol=1e-15)       # trail velocity, world
    np.testing.assert_allclose(A @ fl, q[:3], atol=1e-12)             # ForceLocal = force on the disc in J1
    assert fl[1] > 0 and q[1] < 0                                     # friction along -y on the disc
    s = np.hypot(0.5, 2)
    assert fl[0] == pytest.approx(-0.1 * 100 * 0.5 / s)              # dryFriction[0] is lateral
    assert fl[1] == pytest.approx(0.4 * 100 * 2 / s)                  # dryFriction[1] longitudinal


@needs_exudyn
@pytest.mark.parametrize("name", ["a_rolling", "b_sliding", "c_driven", "d_tilted"])
def test_law_reproduces_exudyn_along_its_trajectories(name):
    case = {**exudyn_disc.CASES, **exudyn_disc.EXTRA_CASES}[name]
    run = exudyn_disc.run_disc(case)
    c = _law_for(case, run.position, run.velocity, run.rotation, run.omega)
    fe = np.column_stack([run.f_lat, run.f_long, run.f_n])
    f = np.column_stack([c.f_lat, c.f_long, c.f_n])
    assert np.max(np.abs(f - fe)) <= 1e-9 * np.max(np.abs(fe))
    np.testing.assert_allclose(np.column_stack([c.slip_lat, c.slip_long]),
                               np.column_stack([run.slip_lat, run.slip_long]), atol=1e-12)
    np.testing.assert_allclose(c.contact_point, run.contact_point, atol=1e-12)


# ---- the reference runs themselves: the analytic facts of issue 7

G = 9.81


@needs_exudyn
def test_reference_rest_penetration_and_steady_rolling():
    run = exudyn_disc.run_disc(exudyn_disc.CASES["a_rolling"])
    np.testing.assert_allclose(run.position[:, 2], R - 1.0 * G / K, rtol=0, atol=1e-12)  # m g / k
    np.testing.assert_allclose(run.velocity, np.tile([0, 1, 0], (len(run.t), 1)), atol=1e-10)
    np.testing.assert_allclose(run.omega, np.tile([-5, 0, 0], (len(run.t), 1)), atol=1e-9)
    np.testing.assert_allclose(run.f_n, G, rtol=1e-10)


@needs_exudyn
def test_reference_sliding_disc_rolls_at_four_thirds():
    case = exudyn_disc.CASES["b_sliding"]
    run = exudyn_disc.run_disc(case)
    v0, mu, m, r, ixx = 2.0, 0.2, 1.0, R, 0.02
    vf = v0 / (1 + ixx / (m * r * r))
    assert vf == pytest.approx(4 / 3)
    t_star = (v0 - vf) / (mu * G)
    # slip phase: v = v0 - mu g t, exact until the slip enters the zone v_mu
    t_zone = (v0 - VMU) / (mu * G * (1 + m * r * r / ixx))
    slip = run.t < t_zone
    np.testing.assert_allclose(run.velocity[slip, 1], v0 - mu * G * run.t[slip], atol=1e-9)
    np.testing.assert_allclose(run.f_long[slip], -mu * G, rtol=1e-9)
    # rolling starts at t*: the slip phase's straight line through the samples hits zero there
    tt, ss = run.t[slip][-50:], run.slip_long[slip][-50:]
    slope, icpt = np.polyfit(tt, ss, 1)
    assert -icpt / slope == pytest.approx(t_star, abs=1e-9)
    # then it rolls at vf (the zone's transient has died out 3 ms later)
    rolling = run.t > t_star + 3e-3
    np.testing.assert_allclose(run.velocity[rolling, 1], vf, atol=1e-8)
    np.testing.assert_allclose(run.omega[rolling, 0], -vf / r, atol=1e-7)
    assert abs(run.velocity[-1, 1] - vf) <= 1e-8


@needs_exudyn
def test_reference_driven_disc_accelerates_with_creep_slip():
    case = exudyn_disc.CASES["c_driven"]
    run = exudyn_disc.run_disc(case)
    a = case.torque * R / (0.02 + 1.0 * R * R)              # rolling: T r / (I + m r^2) = 5/3 m/s^2
    late = run.t > 0.05
    accel = np.gradient(run.velocity[:, 1], run.t)
    np.testing.assert_allclose(accel[late], a, rtol=1e-6)
    np.testing.assert_allclose(run.f_long[late], 1.0 * a, rtol=1e-6)   # f_long = m a drives it
    # creep slip: the quadratic zone carries f_long = mu m g phi(s): (2 - s/v_mu) s/v_mu = a/(mu g)
    phi = a / (0.3 * G)
    creep = VMU * (1 - np.sqrt(1 - phi))
    np.testing.assert_allclose(run.slip_long[late], -creep, rtol=1e-6)


@needs_exudyn
@pytest.mark.parametrize("name", ["a_rolling", "b_sliding", "c_driven"])
def test_reference_step_is_converged(name):
    """Halving Exudyn's reference step 3.125e-5 s changes trajectories by less than 1e-6 and contact
    forces by less than 1e-3 (norm-wise)."""
    case = exudyn_disc.CASES[name]
    a = exudyn_disc.run_disc(case, exudyn_disc.REFERENCE_STEP)
    b = exudyn_disc.run_disc(case, exudyn_disc.REFERENCE_STEP / 2)
    ta, tb = (np.hstack([r.position, r.velocity, r.omega]) for r in (a, b))
    fa, fb = (np.column_stack([r.f_lat, r.f_long, r.f_n]) for r in (a, b))
    assert np.max(np.abs(ta - tb)) <= 1e-6 * np.max(np.abs(tb))
    assert np.max(np.abs(fa - fb)) <= 1e-3 * np.max(np.abs(fb))
