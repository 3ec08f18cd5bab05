"""The spatial_v2 ground-contact laws, checked against values worked out by hand."""
import numpy as np
import pytest

from mechsym.contact import (NO_CONTACT, SLIP, STICK, Fpt, GroundContact, gcontact,
                             static_penetration)
from mechsym.core.errors import InputError

K, D = 1e6, 2000.0  # example 7's ground: decay rate K/D = 500 1/s


def col(*x):
    return np.array(x, float).reshape(-1, 1)


# ---------------------------------------------------------------- normal direction

def point(nd, tangential, normal):
    """One point as an nd x 1 column: the first nd-1 tangential values, then the normal one."""
    return col(*tangential[:nd - 1], normal)


@pytest.mark.parametrize("nd", [2, 3])
@pytest.mark.parametrize("z", [0.01, 0.0, -0.0])
@pytest.mark.parametrize("zdot", [-3.0, -10.0])
def test_on_or_above_ground_no_force_and_deflection_decays(nd, z, zdot):
    u = col(1e-4, -3e-4)[:nd - 1]
    f, ud, fcone = gcontact(K, D, 0.5, point(nd, (0.3, -0.2), z), point(nd, (1.0, 2.0), zdot), u)
    assert f.shape == (nd, 1) and np.all(f == 0)
    np.testing.assert_allclose(ud, -500.0 * u, rtol=1e-15)      # u' = -(K/D) u
    assert fcone[0] == 2


@pytest.mark.parametrize("nd", [2, 3])
def test_rising_faster_than_recovery_separates(nd):
    # d = 1 mm: the unloaded surface rises at K d / D = 0.5 m/s
    u = col(2e-4, 1e-4)[:nd - 1]
    f, ud, fcone = gcontact(K, D, 0.5, point(nd, (0.0, 0.0), -1e-3), point(nd, (0.7, 0.1), 0.6), u)
    assert np.all(f == 0) and fcone[0] == 2
    np.testing.assert_allclose(ud, -500.0 * u, rtol=1e-15)      # out of contact: the deflection decays
    f, ud, fcone = gcontact(K, D, 0.5, point(nd, (0.0, 0.0), -1e-3), point(nd, (0.0, 0.0), 0.4))
    # fn = sqrt(d) (K d - D zdot) = sqrt(1e-3) (1000 - 800); rising slower than K d / D: in contact
    assert f[-1, 0] == pytest.approx(200.0 * np.sqrt(1e-3), rel=1e-13)
    assert np.all(f[:-1, 0] == 0) and np.all(ud == 0) and fcone[0] == 0


def test_exact_recovery_rate_is_not_contact():
    # K = D = 1, d = 0.25, zdot = K d / D = 0.25: -K z - D zdot is exactly 0
    f, _, fcone = gcontact(1.0, 1.0, 1.0, col(0.0, -0.25), col(0.0, 0.25))
    assert np.all(f == 0) and fcone[0] == 2


def test_static_normal_force_is_k_d_to_the_1_5():
    f, _, _ = gcontact(K, D, 0.5, col(0.0, -0.004), col(0.0, 0.0))
    assert f[1, 0] == pytest.approx(1e6 * 0.004 ** 1.5, rel=1e-13)


# ---------------------------------------------------------------- friction, 3-D

def test_stick_3d():
    d = 0.004
    r = np.sqrt(d)
    u, v = col(1e-5, -2e-5), col(1e-3, 2e-3)
    f, ud, fcone = gcontact(K, D, 0.5, np.vstack([col(0.1, 0.2), [[-d]]]), np.vstack([v, [[0.0]]]), u)
    # K u + D v = (10 + 2, -20 + 4) = (12, -16); |ft| = 20 r; mu fn = 0.5 K d r = 2000 r
    np.testing.assert_allclose(f[:2, 0], -r * np.array([12.0, -16.0]), rtol=1e-12)
    assert f[2, 0] == pytest.approx(K * d * r, rel=1e-13)
    np.testing.assert_array_equal(ud, v)
    assert fcone[0] == pytest.approx(0.01, rel=1e-12)


def test_slip_3d_truncated_onto_circular_cone():
    d, mu = 0.004, 0.1
    r = np.sqrt(d)
    u, v = col(1e-4, 0.0), col(0.3, 0.4)
    f, ud, fcone = gcontact(K, D, mu, col(0.0, 0.0, -d), np.vstack([v, [[0.0]]]), u)
    fn = K * d * r                                     # 4000 r
    stick = -r * np.array([700.0, 800.0])              # -r (K u + D v)
    ratio = np.hypot(700.0, 800.0) * r / (mu * fn)     # 1063.01 / 400
    ft = stick / ratio
    np.testing.assert_allclose(f[:2, 0], ft, rtol=1e-12)
    assert np.linalg.norm(f[:2, 0]) == pytest.approx(mu * f[2, 0], rel=1e-13)
    # same direction as the sticking force
    assert f[0, 0] * stick[1] - f[1, 0] * stick[0] == pytest.approx(0.0, abs=1e-12)
    assert f[:2, 0] @ stick > 0
    expected_ud = (np.array([700.0, 800.0]) / ratio - np.array([100.0, 0.0])) / D
    np.testing.assert_allclose(ud[:, 0], expected_ud, rtol=1e-12)
    # the spring-damper at that rate gives exactly the truncated force; ud is not v
    np.testing.assert_allclose(-r * (K * u[:, 0] + D * ud[:, 0]), ft, rtol=1e-10)
    assert not np.allclose(ud, v)
    assert fcone[0] == 2


def test_mild_slip_reports_ratio_and_boundary_is_stick():
    d = 0.004
    # u = 0, v = (0.3, 0.4): |ft| = 1000 r, mu fn = 0.2 * 4000 r = 800 r
    _, _, fcone = gcontact(K, D, 0.2, col(0.0, 0.0, -d), col(0.3, 0.4, 0.0))
    assert fcone[0] == pytest.approx(1.25, rel=1e-13)
    # ratio exactly 1 (K = D = mu = 1, d = 0.25, v = 0.25): sticking
    res = GroundContact(1.0, 1.0, 1.0).evaluate([[0.0, -0.25]], [[0.25, 0.0]])
    assert res.cone_ratio[0] == 1.0 and res.state[0] == STICK and res.stick_signal[0] == 0.0
    assert res.deflection_rate[0, 0] == 0.25


# ---------------------------------------------------------------- friction, 2-D

def test_stick_and_slip_2d():
    d = 0.0025
    r = 0.05
    p = np.array([[0.0, 1.0], [-d, -d]])
    pd = np.array([[0.01, -1.0], [0.0, 0.0]])
    u = np.array([[2e-5, 0.0]])
    f, ud, fcone = gcontact(K, D, 0.5, p, pd, u)
    fn = K * d * r                                      # 125
    assert f[1] == pytest.approx([fn, fn], rel=1e-13)
    # point 0 sticks: ft = -r (20 + 20) = -2
    assert f[0, 0] == pytest.approx(-2.0, rel=1e-13) and ud[0, 0] == 0.01
    assert fcone[0] == pytest.approx(2.0 / (0.5 * fn), rel=1e-13)
    # point 1 slips: ft_stick = -r D (-1) = +100 > 62.5, truncated to +62.5
    assert f[0, 1] == pytest.approx(62.5, rel=1e-13)
    assert ud[0, 1] == pytest.approx(-62.5 / (D * r), rel=1e-13)
    assert fcone[1] == pytest.approx(100.0 / 62.5, rel=1e-13)


def test_many_points_equal_points_one_by_one():
    rng = np.random.default_rng(1)
    for nd in (2, 3):
        n = 200
        p = rng.uniform(-3e-3, 1e-3, (nd, n))
        pd = rng.uniform(-1.0, 1.0, (nd, n))
        u = rng.uniform(-1e-3, 1e-3, (nd - 1, n))
        f, ud, fcone = gcontact(K, D, 0.3, p, pd, u)
        for i in range(n):
            fi, udi, fci = gcontact(K, D, 0.3, p[:, i:i + 1], pd[:, i:i + 1], u[:, i:i + 1])
            np.testing.assert_array_equal(f[:, i:i + 1], fi)
            np.testing.assert_array_equal(ud[:, i:i + 1], udi)
            assert fcone[i] == fci[0]
        states = GroundContact(K, D, 0.3).evaluate(p.T, pd.T, u.T).state
        assert set(states) == {NO_CONTACT, STICK, SLIP}


def test_frictionless_full_shape():
    p = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.01, -0.004, -0.004]])
    pd = np.array([[0.0, 0.3, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    u = np.array([[1e-4, 1.234567e-4, 0.0], [0.0, -7e-5, 0.0]])
    f, ud, fcone = gcontact(K, D, 0.0, p, pd, u)
    assert f.shape == (3, 3) and np.all(f[:2] == 0)
    assert f[2, 0] == 0 and f[2, 1:] == pytest.approx(K * 0.004 ** 1.5, rel=1e-13)
    np.testing.assert_array_equal(ud, -500.0 * u)
    np.testing.assert_array_equal(fcone, [2.0, 2.0, 0.0])
    state = GroundContact(K, D, 0.0).evaluate(p.T, pd.T, u.T).state
    np.testing.assert_array_equal(state, [NO_CONTACT, SLIP, STICK])
    # u may be omitted
    f0, ud0, _ = gcontact(K, D, 0.0, p, pd)
    assert np.all(ud0 == 0) and f0.shape == (3, 3)


# ---------------------------------------------------------------- Fpt

def test_fpt_hand_values():
    np.testing.assert_array_equal(Fpt(col(4, 5, 6), col(1, 2, 3))[:, 0], [-3, 6, -3, 4, 5, 6])
    np.testing.assert_array_equal(Fpt(col(3, 4), col(1, 2))[:, 0], [-2, 3, 4])


@pytest.mark.parametrize("nd", [2, 3])
def test_fpt_virtual_power(nd):
    rng = np.random.default_rng(nd)
    p, fp = rng.normal(size=(nd, 7)), rng.normal(size=(nd, 7))
    if nd == 3:
        w, v = rng.normal(size=3), rng.normal(size=3)
        vp = v[:, None] + np.cross(w, p, axis=0)
    else:
        w, v = rng.normal(size=1), rng.normal(size=2)
        vp = v[:, None] + w[0] * np.vstack([-p[1], p[0]])
    power = np.sum(fp * vp)
    assert np.sum(Fpt(fp, p), axis=1) @ np.concatenate([w, v]) == pytest.approx(power, rel=1e-12)


# ---------------------------------------------------------------- Pythonic interface

def test_interface_agrees_with_gcontact():
    rng = np.random.default_rng(7)
    p = rng.uniform(-3e-3, 1e-3, (3, 50))
    pd = rng.uniform(-1.0, 1.0, (3, 50))
    u = rng.uniform(-1e-3, 1e-3, (2, 50))
    f, ud, fcone = gcontact(K, D, 0.3, p, pd, u)
    ground = GroundContact(K, D, 0.3)
    res = ground.evaluate(p.T, pd.T, u.T)
    np.testing.assert_array_equal(res.force, f.T)
    np.testing.assert_array_equal(res.deflection_rate, ud.T)
    np.testing.assert_array_equal(res.cone_ratio, fcone)
    np.testing.assert_array_equal(res.contact_signal, f[2])
    np.testing.assert_array_equal(res.in_contact, f[2] > 0)
    np.testing.assert_array_equal(res.sticking, (f[2] > 0) & (res.stick_signal >= 0))
    np.testing.assert_array_equal(res.state == SLIP, (f[2] > 0) & (fcone > 1))
    assert ground.time_constant == pytest.approx(2e-3)
    with pytest.raises(ValueError):
        res.force[0, 0] = 1.0


def test_static_penetration():
    assert static_penetration(1e3, 8.0) == pytest.approx(0.04, rel=1e-14)
    np.testing.assert_allclose(static_penetration(1e3, [8.0, 1.0]), [0.04, 0.01], rtol=1e-14)


# ---------------------------------------------------------------- bad input

@pytest.mark.parametrize("args, words", [
    ((0.0, D, 0.5), "K"), ((K, -1.0, 0.5), "D"), ((K, D, -0.1), "mu"),
    ((np.nan, D, 0.5), "K"), ((K, D, np.inf), "mu"),
])
def test_bad_coefficients(args, words):
    with pytest.raises(InputError, match=rf"^{words} "):
        gcontact(*args, col(0.0, -1e-3), col(0.0, 0.0))


def test_bad_arrays_name_argument_and_point():
    p = np.zeros((3, 4))
    p[2, 2] = np.nan
    with pytest.raises(InputError, match=r"^p .*point 2"):
        gcontact(K, D, 0.5, p, np.zeros((3, 4)))
    with pytest.raises(InputError, match=r"^pd "):
        gcontact(K, D, 0.5, np.zeros((3, 4)), np.zeros((3, 3)))
    with pytest.raises(InputError, match=r"^u "):
        gcontact(K, D, 0.5, np.zeros((3, 4)), np.zeros((3, 4)), np.zeros((3, 4)))
    with pytest.raises(InputError, match=r"^p "):
        gcontact(K, D, 0.5, np.zeros((4, 2)), np.zeros((4, 2)))
    with pytest.raises(InputError, match=r"^stiffness "):
        GroundContact(0.0, D, 0.5)
    with pytest.raises(InputError, match=r"^velocities .*point 1"):
        GroundContact(K, D, 0.5).evaluate(np.zeros((2, 3)), [[0, 0, 0], [0, np.nan, 0]])
    with pytest.raises(InputError, match=r"^fp "):
        Fpt(np.zeros((3, 2)), np.zeros((3, 3)))
    with pytest.raises(InputError, match=r"^weight_per_point "):
        static_penetration(K, -1.0)
