"""Tracks (mechsym.planar.track) and the rear-wheel position problem (mechsym.planar.wheels.rear_contact)."""
import math

import numpy as np
import pytest
import sympy as sp

from mechsym.core.errors import InputError
from mechsym.planar.wheels import rear_contact
from mechanisms.tracks import SHIPPED, bump, load, ramp, step, washboard
from mechsym.planar.track import X, Track, load_track


def fd(fun, x, h=1e-5):
    return (fun(x + h) - fun(x - h)) / (2 * h)


@pytest.mark.parametrize("name", list(SHIPPED))
def test_shipped_derivatives_are_exact(name):
    track = load(name)
    x = np.linspace(-1, 9, 2001) + 1e-3 * np.sqrt(2)  # off the joins
    f, d1, d2 = track.eval(x)
    assert np.allclose(fd(track, x), d1, atol=1e-8)
    assert np.allclose(fd(lambda s: track.eval(s)[1], x), d2, atol=5e-6)
    track.check_curvature(0.30, -2, 10)  # every shipped profile can be followed by the default wheel


def test_shipped_shapes():
    b = bump()
    assert b(np.array([4.0]))[0] == pytest.approx(0.1)
    assert b(np.array([5.0]))[0] == pytest.approx(0.1 * math.exp(-1))
    s = step()
    f, d1, _ = s.eval(np.array([0.0, 3.7, 4.0, 4.3, 9.0]))
    assert f[[0, 1]] == pytest.approx([0, 0]) and f[[3, 4]] == pytest.approx([0.1, 0.1]) and f[2] == pytest.approx(0.05)
    # rounded to 0.5 m: curvature +-2 1/m on the riser, continuous slope at the joins
    assert s.curvature(np.array([3.9]))[0] == pytest.approx(2.0) and s.curvature(np.array([4.1]))[0] == pytest.approx(-2.0)
    joins = np.array([4 - 0.5 * math.sqrt(1 - 0.9**2), 4.0, 4 + 0.5 * math.sqrt(1 - 0.9**2)])
    for xj in joins:
        a, b_ = s.eval(np.array([xj - 1e-9, xj + 1e-9]))[:2]
        assert abs(a[1] - a[0]) < 1e-7 and abs(b_[1] - b_[0]) < 1e-6
    w = washboard()
    xs = np.linspace(2, 6, 4001)
    assert w(xs).max() == pytest.approx(0.04) and w(xs).min() == pytest.approx(0.0)
    assert np.all(w(np.array([1.0, 6.5])) == 0)
    assert w.eval(np.array([2.0, 6.0]))[1] == pytest.approx([0, 0], abs=1e-12)  # slope continuous at the ends
    r = ramp()
    f, d1, _ = r.eval(np.array([2.0, 5.0, 8.0]))
    assert f == pytest.approx([0.0, 0.2, 0.5]) and d1[1:] == pytest.approx([0.1, 0.1])


def test_expression_callable_and_errors():
    t = Track.from_expr("0.05*sin(x)")
    f, d1, d2 = t.eval(np.array([0.3]))
    assert (f[0], d1[0], d2[0]) == pytest.approx((0.05 * math.sin(0.3), 0.05 * math.cos(0.3), -0.05 * math.sin(0.3)))
    assert load_track("0.05*sin(x)").name == "0.05*sin(x)"
    t2 = Track.from_callable(lambda x: (0 * x, 0 * x, 0 * x), "flat")
    assert np.all(t2.eval(np.arange(3.0))[0] == 0)
    with pytest.raises(InputError, match="uses .a., which is not allowed"):
        Track.from_expr("a*x")
    with pytest.raises(InputError, match="not finite at x = 3"):
        Track.from_expr(1 / (X - 3)).eval(np.array([2.0, 3.0]))
    with pytest.raises(InputError, match="f, f', f''"):
        Track.from_callable(lambda x: x, "bad").eval(np.arange(3.0))
    with pytest.raises(InputError, match="unknown track"):
        load_track("nope")
    with pytest.raises(InputError, match="uses 'nan', which is not allowed"):
        load_track("nan*x")
    with pytest.raises(InputError, match="concave curvature .* at x = "):
        Track.from_expr(0.3 * sp.exp(-100 * (X - 4) ** 2), "sharp").check_curvature(0.3, 0, 8)


def test_offset_curve_and_rolling(tmp_path):
    t = bump()
    r = 0.3
    x = np.linspace(0, 8, 501)
    wx, wy, dwx, dwy, beta = t.offset(x, r)
    assert np.allclose(fd(lambda s: t.offset(s, r)[0], x), dwx, atol=1e-8)
    assert np.allclose(fd(lambda s: t.offset(s, r)[1], x), dwy, atol=1e-8)
    assert np.allclose(np.hypot(wx - x, wy - t(x)), r)  # the centre is r from the contact, along the normal
    assert np.allclose((wx - x) * np.cos(beta) + (wy - t(x)) * np.sin(beta), 0, atol=1e-14)
    # arc length: Gauss-Legendre against a fine trapezoid; the table version against the cumulative one
    xs = np.linspace(0, 8, 200001)
    ref = np.trapezoid(np.sqrt(1 + t.eval(xs)[1] ** 2), xs)
    assert t.arc_length(x)[-1] == pytest.approx(ref, rel=1e-10)
    assert np.allclose(t.arc_length_from(x, 0.0), t.arc_length(x), atol=1e-12)
    # a wheel rolling without slip turns by beta - s/r: its rate is -|W'|/r
    from mechsym.planar.wheels import wheel_rotation

    theta = wheel_rotation(t, r, x)
    dtheta = fd(lambda s: t.slope(s) - t.arc_length_from(s, 0.0) / r, x)
    assert np.allclose(dtheta, -np.hypot(dwx, dwy) / r, atol=1e-8)
    assert theta[0] == 0 and theta[-1] == pytest.approx(-(ref / r))


def test_csv_track(tmp_path):
    x = np.arange(-2, 9.0001, 0.05)
    path = tmp_path / "bump.csv"
    np.savetxt(path, np.c_[x, 0.1 * np.exp(-(x - 4) ** 2)], delimiter=",", header="x,y", comments="")
    t = load_track(str(path))
    assert t.domain == (-2.0, pytest.approx(9.0))
    xs = np.linspace(0, 8, 161)
    f, d1, d2 = t.eval(xs)
    g, e1, e2 = bump().eval(xs)
    assert np.max(np.abs(f - g)) < 2e-4 and np.max(np.abs(d1 - e1)) < 2e-3 and np.max(np.abs(d2 - e2)) < 2e-2
    with pytest.raises(InputError, match="outside"):
        t.eval(np.array([10.0]))
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n0,1\n1,2\n")
    with pytest.raises(InputError, match="columns x and y"):
        load_track(str(bad))
    bad.write_text("x,y\n0,1\n1,nan\n2,0\n3,0\n4,0\n")
    with pytest.raises(InputError, match="not finite"):
        load_track(str(bad))
    bad.write_text("x,y\n0,1\n1,2\n1,0\n3,0\n4,0\n")
    with pytest.raises(InputError, match="x must increase from row to row"):
        load_track(str(bad))
    with pytest.raises(InputError, match="does not exist"):
        load_track(str(tmp_path / "none.csv"))


def test_rear_contact_nearest_root_vectorised():
    t = bump()
    r = 0.3
    xf = np.linspace(0, 8, 301)
    R = np.array([0.65, 0.83, 1.2])
    xr = rear_contact(t, r, xf, R)
    assert xr.shape == (301, 3) and np.all(xr < xf[:, None])
    wfx, wfy, *_ = t.offset(xf, r)
    wrx, wry, *_ = t.offset(xr, r)
    assert np.max(np.abs(np.hypot(wrx - wfx[:, None], wry - wfy[:, None]) - R)) < 1e-12
    # nearest root: no point of the centre curve between x_r and x_f is as far as R (brute force)
    for i in range(0, 301, 37):
        for p in range(3):
            s = np.linspace(xr[i, p] + 1e-9, xf[i], 4001)
            wx, wy, *_ = t.offset(s, r)
            assert np.all(np.hypot(wx - wfx[i], wy - wfy[i]) < R[p])
    # one distance per sample, and a continuation from a guess, give the same roots
    xr1 = rear_contact(t, r, xf, np.full((301, 1), 0.83))
    assert np.allclose(xr1[:, 0], xr[:, 1], atol=1e-12)
    xr2 = rear_contact(t, r, xf, np.full((301, 1), 0.83), guess=xr[:, 1:2] + 1e-3)
    assert np.allclose(xr2, xr1, atol=1e-12)
    with pytest.raises(InputError, match="positive"):
        rear_contact(t, r, xf, [-1.0])
