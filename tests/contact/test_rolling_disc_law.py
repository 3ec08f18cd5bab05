"""Exudyn's penalty rolling-disc law (mechsym.contact.rolling_disc): values worked out by hand, symmetry,
bad input, and Exudyn's own connector (outputs and generalized forces) on the same states."""
import os
import warnings

import numpy as np
import pytest

from mechsym.contact.rolling_disc import rolling_disc_contact
from mechsym.core.errors import InputError

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
            np.testing.assert_allclose(o["Velocity"], c.trail_velocity, atol=1e-12)
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
    np.testing.assert_allclose(o["Velocity"], c.trail_velocity, atol=1e-13)
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
    rolling = exudyn_disc.build_disc(case, position=[0, 0, R - 1e-3], velocity=[0, 1, 0], rotation=np.eye(3),
                                     omega=[-5, 0, 0], gravity=False)
    o_roll = exudyn_disc.connector_outputs(rolling[1], rolling[2]["connector"])
    np.testing.assert_allclose(o_roll["Velocity"], [0, 1, 0], atol=1e-15)   # the trail, not the slip (0)
    np.testing.assert_allclose(o_roll["VelocityLocal"], 0, atol=1e-15)
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


# ---------------------------------------------------------------- on a floating body: generated rhs, exact Jacobian

from mechsym.contact.rolling_disc import RollingDisc  # noqa: E402
from mechsym import derive  # noqa: E402
from mechsym.spatial.floating import K_STAB, FloatingBody  # noqa: E402
from mechsym.spatial.floating_loads import BodyTorque  # noqa: E402

BODY_VALUES = dict(mass=1.3, Ixx=0.021, Iyy=0.012, Izz=0.014, Ixy=0.002)
DRIVE = (-0.5, 0.2, 0.1)


@pytest.fixture(scope="module")
def body():
    """A floating body with a full inertia matrix (one product of inertia) as run-time parameters."""
    import sympy as sp

    b = FloatingBody("wheel")
    m = b.parameter("mass", 1.0, "kg")
    ixx, iyy, izz = (b.parameter(n, 0.01, "kg m^2") for n in ("Ixx", "Iyy", "Izz"))
    ixy = b.parameter("Ixy", 0.0, "kg m^2", positive=False)
    b.body(m, sp.Matrix([[ixx, ixy, 0], [ixy, iyy, 0], [0, 0, izz]]))
    return derive(b, backend="numpy")


def _random_connector(rng, i, no_tension=False):
    return RollingDisc("rim", radius=float(rng.uniform(0.1, 0.3)), stiffness=float(10 ** rng.uniform(3, 5)),
                       damping=float(rng.uniform(0, 1e3)), zone=float(10 ** rng.uniform(-3, 0)),
                       mu=tuple(rng.uniform(0.1, 0.6, 2)), linear_zone=bool(i % 2),
                       viscous=tuple(rng.uniform(0, 2, 2)) if i % 3 else 0.0,
                       friction_angle=float(rng.uniform(-1, 1)) if i % 4 else 0.0,
                       rolling_friction=float(rng.uniform(0, 0.1)) if i % 5 else 0.0,
                       axis=tuple(rng.normal(size=3) * [1, 0.3, 0.3] + [1, 0, 0]),
                       centre=tuple(rng.normal(size=3) * 0.05) if i % 2 else (0.0, 0.0, 0.0),
                       plane_point=tuple(rng.normal(size=3) * 0.01), no_tension=no_tension,
                       plane_normal=tuple([0, 0, 1] + rng.normal(size=3) * 0.1))


def independent_rates(y, con, values=BODY_VALUES, drive=DRIVE):
    """The body's rates under the connector and a body-frame torque, written again from the seed's
    formulas in Exudyn's own joint frame J1 = (w_lat, w2, n), with plain numpy that also runs on complex
    states (branches decided on real parts): a route independent of mechsym's, for complex-step
    derivatives."""
    y = np.asarray(y)
    x, q, v, wb = y[:3], y[3:7], y[7:10], y[10:13]
    w1_, w2_, w3_, w0 = q                                    # mechsym's layout: scalar last
    n2 = q @ q
    rot = np.array([[w0 * w0 + w1_ * w1_ - w2_ * w2_ - w3_ * w3_, 2 * (w1_ * w2_ - w0 * w3_),
                     2 * (w1_ * w3_ + w0 * w2_)],
                    [2 * (w1_ * w2_ + w0 * w3_), w0 * w0 - w1_ * w1_ + w2_ * w2_ - w3_ * w3_,
                     2 * (w2_ * w3_ - w0 * w1_)],
                    [2 * (w1_ * w3_ - w0 * w2_), 2 * (w2_ * w3_ + w0 * w1_),
                     w0 * w0 - w1_ * w1_ - w2_ * w2_ + w3_ * w3_]]) / n2
    omega = rot @ wb
    arm = rot @ np.array(con.centre)
    p, vp = x + arm, v + np.cross(omega, arm)
    axis = rot @ np.array(con.axis)
    nv, p0, r = np.array(con.plane_normal), np.array(con.plane_point), con.radius
    xh = np.cross(axis, nv)
    w2 = xh / np.sqrt(xh @ xh)
    w3 = np.cross(axis, w2)
    wlat = np.cross(nv, w2)
    gap = (p + r * w3 - p0) @ nv
    vc = vp + np.cross(omega, r * w3)
    fn = -(con.stiffness * gap + con.damping * (vc @ nv))
    if gap.real >= 0 or (con.no_tension and fn.real <= 0):
        fn = 0 * fn
    vt = np.array([vc @ wlat, vc @ w2])                      # in J1
    s = np.sqrt(vt @ vt)
    z = s / con.zone
    phi = (z if con.linear_zone else (2 - z) * z) if s.real <= con.zone else 1 + 0 * s
    c, sn = np.cos(con.friction_angle), np.sin(con.friction_angle)
    rot_a = np.array([[c, sn], [-sn, c]])
    mu = rot_a @ np.diag([con.mu[0] + con.viscous[0] * s, con.mu[1] + con.viscous[1] * s]) @ rot_a.T
    afn = fn if fn.real >= 0 else -fn
    ft = -(mu @ (vt / s)) * phi * afn
    f_contact = ft[0] * wlat + ft[1] * w2 + fn * nv
    force = f_contact - con.rolling_friction * afn * (vp - (vp @ nv) * nv)     # rolling friction at the centre
    torque = np.cross(r * w3, f_contact) + np.cross(arm, force) + rot @ np.array(drive)
    # rigid body (mechsym.spatial.floating's equations)
    m = values["mass"]
    inertia = np.array([[values["Ixx"], values["Ixy"], 0], [values["Ixy"], values["Iyy"], 0], [0, 0, values["Izz"]]])
    qdot = 0.5 * np.array([w0 * wb[0] + w2_ * wb[2] - w3_ * wb[1], w0 * wb[1] - w1_ * wb[2] + w3_ * wb[0],
                           w0 * wb[2] + w1_ * wb[1] - w2_ * wb[0], -w1_ * wb[0] - w2_ * wb[1] - w3_ * wb[2]])
    qdot = qdot + K_STAB * np.sqrt(wb @ wb) * (1 - np.sqrt(n2)) * q
    vdot = np.array([0, 0, -9.81]) + force / m
    wdot = np.linalg.solve(inertia, rot.T @ torque - np.cross(wb, inertia @ wb))
    return np.concatenate([v, qdot, vdot, wdot])


def _state(rng, sys3, con, depth, slip, normal_speed, omega_scale=3.0, q_norm=1.0):
    """A body state whose disc penetrates by `depth` (negative: above the plane) with a contact-point
    slip of magnitude `slip` in a random tangential direction and `normal_speed` along the normal."""
    n = np.array(con.plane_normal)
    while True:
        q = rng.normal(size=4)[[1, 2, 3, 0]]                      # drawn (w, x, y, z), stored scalar last
        q /= np.linalg.norm(q)
        from mechsym.core.quaternion import rotation_matrix

        if abs(rotation_matrix(q) @ np.array(con.axis) @ n) < 0.9:
            break
    y = np.concatenate([rng.normal(size=3) * 0.1, q * q_norm, rng.normal(size=3), rng.normal(size=3) * omega_scale])
    c = con.contact(sys3, y)
    y[:3] -= (c.gap[0] + depth) * n
    c = con.contact(sys3, y)
    a = rng.uniform(0, 2 * np.pi)
    target = slip * (np.cos(a) * c.e_lat[0] + np.sin(a) * c.e_long[0]) + normal_speed * n
    y[7:10] += target - c.contact_velocity[0]
    return y


def complex_step_jacobian(y, con, h=1e-30):
    return np.stack([independent_rates(y + 1j * h * e, con).imag / h for e in np.eye(13)], axis=1)


@pytest.mark.parametrize("no_tension", [False, True])
def test_generated_rates_and_exact_jacobian_against_complex_step(body, no_tension):
    """The generated rhs and Jacobian (C, and the numpy fallback from the same program) against an
    independent route: the seed's formulas in Exudyn's frame, differentiated by complex step, on random
    states covering every branch (no contact, contact, slip inside and outside the zone, tension)."""
    rng = np.random.default_rng(17 + no_tension)
    seen = set()
    for i in range(24):
        con = _random_connector(rng, i, no_tension)
        ode = body.loaded([con, BodyTorque("drive", DRIVE)])
        numpy_ode = body.loaded([con, BodyTorque("drive", DRIVE)], backend="numpy")
        assert ode.backend == "c" and numpy_ode.backend == "numpy"
        p = ode.params(BODY_VALUES)
        depth = [-1e-3, 2e-4, 1e-3, 3e-3][i % 4]
        slip = con.zone * [0.3, 3.0, 0.9, 20.0][(i // 4) % 4]
        k_over_d = con.stiffness / max(con.damping, 1.0)
        normal_speed = [0.0, -0.01, 3 * k_over_d * depth][i % 3] if depth > 0 else 0.3
        y = _state(rng, body, con, depth, slip, normal_speed, q_norm=[1.0, 1.02][i % 2])
        c = con.contact(body, y)
        seen.add(("contact" if c.in_contact[0] else "free", "zone" if c.slip_speed[0] <= con.zone else "slip",
                  "tension" if c.f_n[0] < 0 else ("clamped" if no_tension and normal_speed > 0 else "press")))
        ref = independent_rates(y, con)
        rates = ode.rates(y, p)
        np.testing.assert_allclose(rates, ref, rtol=0, atol=1e-12 * np.abs(ref).max())
        jac = ode.jacobians(y, p)
        jcs = complex_step_jacobian(y, con)
        assert np.abs(jac - jcs).max() <= 1e-10 * np.abs(jcs).max(), (i, np.abs(jac - jcs).max())
        np.testing.assert_allclose(numpy_ode.rates(y, p), rates, rtol=0, atol=1e-13 * np.abs(ref).max())
        np.testing.assert_allclose(numpy_ode.jacobians(y, p), jac, rtol=0, atol=1e-12 * np.abs(jac).max())
        # vectorised over states: the same numbers
        ys = np.stack([y, y + 1e-3], axis=1)
        np.testing.assert_array_equal(ode.rates(ys, p)[:, 0], rates)
        np.testing.assert_array_equal(ode.jacobians(ys, p)[:, :, 0], jac)
    kinds = {k[:2] for k in seen}
    assert {("free", "slip"), ("contact", "zone"), ("contact", "slip")} <= kinds | {("free", "zone")}
    assert any(k[2] == ("clamped" if no_tension else "tension") for k in seen)


def test_jacobian_where_the_slip_or_the_spin_is_exactly_zero(body):
    """Zero slip (a disc rolling exactly) and zero spin (a disc at rest): the norms |s| and |w| are not
    differentiable there, their products with the slip direction and the quaternion drift are; the
    Jacobian is finite and is the limit of the complex-step Jacobians at slip and spin 1e-9."""
    con = RollingDisc("rim", radius=0.2, stiffness=1e5, damping=1e3, zone=1e-3, mu=(0.3, 0.2),
                      viscous=(0.5, 0.2), friction_angle=0.3)
    ode = body.loaded([con, BodyTorque("drive", DRIVE)])
    p = ode.params(BODY_VALUES)
    rng = np.random.default_rng(4)
    y = _state(rng, body, con, 1e-4, 0.0, 0.0)
    assert con.contact(body, y).slip_speed[0] < 1e-15
    near = _state(np.random.default_rng(4), body, con, 1e-4, 1e-9, 0.0)
    jac = ode.jacobians(y, p)
    assert np.isfinite(jac).all()
    jcs = complex_step_jacobian(near, con)
    assert np.abs(jac - jcs).max() <= 1e-5 * np.abs(jcs).max()
    rest = y.copy()
    rest[10:13] = 0.0
    jac = ode.jacobians(rest, p)
    assert np.isfinite(jac).all()
    near = rest.copy()
    near[10:13] = 1e-9
    near[3:7] *= 1.01                                              # |q| != 1: the drift term matters
    rest[3:7] *= 1.01
    jac = ode.jacobians(rest, p)
    jcs = complex_step_jacobian(near, con)
    assert np.isfinite(jac).all() and np.abs(jac - jcs).max() <= 1e-5 * np.abs(jcs).max()


def test_inactive_connector_applies_nothing(body):
    con = RollingDisc("rim", radius=0.2, stiffness=1e5, damping=1e3, zone=1e-3, mu=0.3, active=False)
    ode = body.loaded([con])
    y = _state(np.random.default_rng(2), body, con, 1e-3, 0.5, 0.0)
    free = body.accelerations(y, np.zeros(6), body.params(BODY_VALUES))
    np.testing.assert_allclose(ode.rates(y, ode.params(BODY_VALUES)), free, rtol=1e-13, atol=1e-13)
    c = con.contact(body, y)
    assert c.in_contact[0] and c.f_n[0] == 0 and np.all(c.force == 0) and c.slip_speed[0] > 0


def test_body_torque_alone_matches_the_lambdified_body(body):
    """A tumbling body under a constant body-frame torque: the generated program integrated with BDF
    and its Jacobian, against mechsym.spatial.floating's lambdified rates integrated by DOP853."""
    drive = BodyTorque("drive", DRIVE)
    ode = body.loaded([drive])
    y0 = body.initial_state((0, 0, 1), quat_xyzw=(0.2, -0.1, 0.3, 1), velocity=(0.5, 0, 2), omega=(3, -2, 5))
    run = ode.simulate(y0, 1.0, rtol=1e-11, params=ode.params(BODY_VALUES))
    assert run.stats["jacobians"] >= 1 and run.stats["backend"] == "c"
    table = body.simulate(y0, 1.0, rtol=1e-12, params=BODY_VALUES,
                          load=lambda t, q, qd, s: (np.array([0, 0, 0, *DRIVE]), ()))
    ours = body.world_columns(run.solution(run["t"]))
    for c in ("x", "z", "qw", "qx", "qy", "qz", "vz", "wx", "wy", "wz"):
        np.testing.assert_allclose(ours[c], table[c], rtol=0, atol=1e-8 * max(1.0, np.abs(table[c]).max()))


def test_program_prints_powers_in_denominators(tmp_path):
    """a / b**2 and friends in C: the products that stand for small powers must be parenthesised where they
    divide (a/b*b is (a/b)*b in C); values and Jacobian against sympy's own."""
    import ctypes
    import subprocess

    import sympy as sp

    from mechsym.codegen import c_backend, c_runtime
    from mechsym.codegen.program import Program

    if c_backend.compiler() is None:
        pytest.skip("no C compiler")
    a, b, c = y = sp.symbols("a b c", real=True)
    prog = Program(y)
    k = prog.param("k")
    exprs = [a / b**2, a / (b + c)**3 * k, a * b**-4 + sp.sqrt(c), 1 / (k * b)]
    prog.output(exprs)
    (tmp_path / "p.c").write_text(c_runtime.amalgamate(prog.c_source()))
    subprocess.run([c_backend.compiler(), *c_backend.CFLAGS, "-o", str(tmp_path / "p.so"), str(tmp_path / "p.c"),
                    "-lm"],
                   check=True)
    dll, ptr = ctypes.CDLL(str(tmp_path / "p.so")), ctypes.POINTER(ctypes.c_double)
    yv, pv, out, jac = np.array([1.5, 0.7, 0.4]), np.array([2.5]), np.empty(4), np.empty((4, 3))
    dll.ms3_rhs(1, yv.ctypes.data_as(ptr), pv.ctypes.data_as(ptr), out.ctypes.data_as(ptr))
    dll.ms3_jac(1, yv.ctypes.data_as(ptr), pv.ctypes.data_as(ptr), jac.ctypes.data_as(ptr))
    at = {a: 1.5, b: 0.7, c: 0.4, k: 2.5}
    np.testing.assert_allclose(out, [float(e.subs(at)) for e in exprs], rtol=1e-14)
    exact = np.array(sp.Matrix(exprs).jacobian(y).subs(at), float)
    np.testing.assert_allclose(jac, exact, rtol=1e-14)
    rates, jacobians = prog.numpy_functions()
    np.testing.assert_allclose(rates(yv, pv), out, rtol=1e-14)
    np.testing.assert_allclose(jacobians(yv, pv), exact, rtol=1e-14)


def test_trail_velocity_is_the_derivative_of_the_contact_point():
    """The trail velocity (Exudyn's Velocity output) is d(pC)/dt of a disc moving rigidly: checked against
    the contact point of the exactly rotated and shifted disc, by complex step in time."""
    from scipy.spatial.transform import Rotation

    rng = np.random.default_rng(8)
    for _ in range(5):
        rot0 = Rotation.random(random_state=rng).as_matrix()
        w1, p, v, om = rot0 @ X, rng.normal(size=3), rng.normal(size=3), rng.normal(size=3) * 3
        c = law(p, v, w1, om)

        def contact_point(t):                                  # complex t: Rodrigues' formula stays analytic
            k = om / np.linalg.norm(om)
            a = np.linalg.norm(om) * t
            w = w1 * np.cos(a) + np.cross(k, w1) * np.sin(a) + k * (k @ w1) * (1 - np.cos(a))
            x = np.cross(w, Z)
            w2 = x / np.sqrt(x @ x)
            return p + v * t + R * np.cross(w, w2)

        h = 1e-30
        np.testing.assert_allclose(c.trail_velocity, contact_point(1j * h).imag / h, rtol=1e-12, atol=1e-13)


def test_generated_code_is_cached_by_structure_and_rebuilt_when_corrupt(body, tmp_path, monkeypatch):
    from mechsym.spatial import floating_loads

    monkeypatch.setenv("MECHSYM_CACHE", str(tmp_path))
    monkeypatch.setattr(floating_loads, "_GENERATED", {})
    y = body.initial_state((0, 0, 1), quat_xyzw=(0.1, 0.2, 0.3, 1), omega=(1, 2, 3))
    first = body.loaded([BodyTorque("drive", DRIVE)])
    rates = first.rates(y, first.params(BODY_VALUES))
    (entry,) = tmp_path.glob("floating-*")
    monkeypatch.setattr(floating_loads, "_GENERATED", {})
    other = body.loaded([BodyTorque("drive", (1.0, 2.0, 3.0))])        # values are run-time parameters
    assert sorted(tmp_path.glob("floating-*")) == [entry]
    np.testing.assert_array_equal(other.rates(y, first.params(BODY_VALUES)), rates)
    body.loaded([BodyTorque("drive", DRIVE), BodyTorque("brake", DRIVE)])   # another structure: another entry
    assert len(list(tmp_path.glob("floating-*"))) == 2
    lib = entry / "lib.so"
    cut = entry / "cut.so"                              # a truncated library (a new file: the old is mapped)
    cut.write_bytes(lib.read_bytes()[:1000])
    os.replace(cut, lib)
    monkeypatch.setattr(floating_loads, "_GENERATED", {})
    again = body.loaded([BodyTorque("drive", DRIVE)])
    assert lib.stat().st_size > 1000
    np.testing.assert_array_equal(again.rates(y, again.params(BODY_VALUES)), rates)


# ---------------------------------------------------------------- the generated program evaluates the same law

@pytest.mark.parametrize("linear_zone, no_tension", [(False, False), (True, True)])
def test_generated_program_evaluates_the_same_law(linear_zone, no_tension):
    """The rates of a floating disc under the connector, from its generated program (C and numpy
    renderings), equal Newton-Euler under the forces of rolling_disc_contact (the numpy evaluation) on random
    states: in and out of contact, inside and outside the zone, a pulling normal force, an offset centre,
    anisotropic and viscous friction, a friction angle and rolling friction."""
    from mechanisms import disc as disc_model

    from mechsym.codegen import c_backend
    from mechsym.contact.rolling_disc import RollingDisc
    from mechsym.core.quaternion import rotation_matrix

    system = disc_model.system()
    load = RollingDisc("contact", radius=R, stiffness=K, zone=0.05, damping=D, mu=(0.3, 0.5), viscous=(0.1, 0.2),
                       friction_angle=0.4, rolling_friction=0.05, linear_zone=linear_zone, no_tension=no_tension,
                       centre=(0.01, -0.02, 0.005), axis=(1.0, 0.1, 0.0), plane_normal=(0.05, 0.0, 1.0),
                       plane_point=(0.0, 0.0, 0.01))
    rng = np.random.default_rng(3)
    n = 400
    quat = rng.normal(size=(4, n)) * [[0.2], [0.2], [0.2], [1.0]]
    y = np.vstack([rng.normal(scale=0.2, size=(2, n)), R + 0.01 + rng.normal(scale=2e-3, size=(1, n)),
                   quat / np.linalg.norm(quat, axis=0), rng.normal(scale=0.05, size=(3, n)),
                   rng.normal(scale=0.3, size=(3, n))])
    c = load.contact(system, y)
    assert 0.1 < c.in_contact.mean() < 0.9 and (c.f_n < 0).any() != no_tension
    assert (c.slip_speed[c.in_contact] < 0.05).any() and (c.slip_speed[c.in_contact] > 0.05).any()
    rot = rotation_matrix(y[3:7].T)
    arm = rot @ np.asarray(load.centre)
    moment = np.einsum("nji,nj->in", rot, c.torque + np.cross(arm, c.force))
    expected = system.accelerations(y, np.vstack([c.force.T, moment]))
    backends = ["numpy"] + (["c"] if c_backend.compiler() is not None else [])
    for backend in backends:
        ode = system.loaded([load], backend)
        rates = ode.rates(y)
        scale = np.abs(expected).max(axis=1, keepdims=True)
        assert np.abs(rates - expected).max(axis=1, keepdims=True).max() <= 1e-11 * scale.max(), backend
