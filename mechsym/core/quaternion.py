"""Quaternions: the one module every rotation of mechsym is written with.

A quaternion is stored (x, y, z, w), scalar LAST (Pinocchio's and scipy's layout); a unit quaternion q
stands for the body-to-world rotation R(q). Numeric arrays carry the four components on the LAST axis
(..., 4); rotations are (..., 3, 3), rotation vectors (..., 3). `product`, `conjugate`, `rotation_matrix`
and `rate` also take sequences of sympy expressions (then they return sympy), so that the generated
equations use the same maps as the numeric code.

  product(a, b)            the Hamilton product a (x) b
  conjugate(q)             (-x, -y, -z, w): the inverse rotation of a unit quaternion
  rotation_matrix(q)       R of q/|q| (a quaternion a little off the unit sphere, as an integrator carries
                           it, still gives a rotation)
  rate(q, w)               dq/dt = 1/2 q (x) (w, 0) for the angular velocity w in the BODY frame
  exp(w)                   the unit quaternion of the rotation vector w (SO(3)'s exponential map)
  log(q)                   the rotation vector of the unit quaternion q, angle in [0, pi] (its inverse)
  integrate(q, w, dt)      q (x) exp(w dt), normalised: the rotation after turning with the constant
                           body-frame angular velocity w for dt
  about(axis, angle)       the unit quaternion of a rotation by angle (rad) about axis
  normalise(q)             q / |q|
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp

from mechsym.core.errors import InputError

__all__ = ["product", "conjugate", "rotation_matrix", "rate", "exp", "log", "integrate", "about", "normalise"]


def symbolic(*values) -> bool:
    """Whether any of the sequences holds a sympy expression (then the maps build sympy)."""
    for v in values:
        if isinstance(v, np.ndarray) and v.dtype != object:
            continue
        if isinstance(v, sp.MatrixBase) or any(isinstance(c, sp.Basic) for c in v):
            return True
    return False


def components(a):
    """The components of vectors a (..., n) as n contiguous arrays (arithmetic on them runs faster than on
    strided views)."""
    return np.ascontiguousarray(np.moveaxis(a, -1, 0))


def product(a, b):
    """The Hamilton product a (x) b of quaternions (x, y, z, w): numeric over leading axes, or a tuple of
    sympy expressions."""
    if symbolic(a, b):
        return _hamilton(*a, *b)
    a, b = np.asarray(a, float), np.asarray(b, float)
    if a.ndim == b.ndim == 1:                              # one quaternion: plain floats, no array per term
        return np.array(_hamilton(*a.tolist(), *b.tolist()))
    return np.stack(_hamilton(*components(a), *components(b)), axis=-1)


def _hamilton(ax, ay, az, aw, bx, by, bz, bw):
    return (aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
            aw * bw - ax * bx - ay * by - az * bz)


def conjugate(q):
    """(-x, -y, -z, w): for a unit quaternion, the inverse rotation."""
    if symbolic(q):
        x, y, z, w = tuple(q)
        return (-x, -y, -z, w)
    return np.asarray(q, float) * np.array([-1.0, -1.0, -1.0, 1.0])


def rotation_matrix(q, let=None):
    """The body-to-world rotation of the quaternion q (x, y, z, w) divided by its norm: numeric (..., 4) ->
    (..., 3, 3), or a sympy Matrix for sympy entries (`let`, if given, names the scale and each entry, as
    a straight-line program does)."""
    if symbolic(q):
        let = let or (lambda e: e)
        x, y, z, w = tuple(q)
        s = let(2 / (x * x + y * y + z * z + w * w))
        return sp.Matrix([[let(e) for e in row] for row in _rotation_rows(x, y, z, w, s)])
    q = np.asarray(q, float)
    if q.ndim == 1:
        x, y, z, w = q.tolist()
        return np.array(_rotation_rows(x, y, z, w, 2.0 / (x * x + y * y + z * z + w * w)))
    x, y, z, w = components(q)
    s = 2.0 / (x * x + y * y + z * z + w * w)
    return np.stack([np.stack(row, -1) for row in _rotation_rows(x, y, z, w, s)], -2)


def _rotation_rows(x, y, z, w, s):
    return ((1 - s * (y * y + z * z), s * (x * y - z * w), s * (x * z + y * w)),
            (s * (x * y + z * w), 1 - s * (x * x + z * z), s * (y * z - x * w)),
            (s * (x * z - y * w), s * (y * z + x * w), 1 - s * (x * x + y * y)))


def rate(q, w):
    """dq/dt = 1/2 q (x) (w, 0) for the angular velocity w (..., 3) in the body frame: numeric (..., 4), or a
    tuple of sympy expressions."""
    if symbolic(q, w):
        return tuple(c / 2 for c in product(tuple(q), (*tuple(w), 0)))
    w = np.asarray(w, float)
    return 0.5 * product(q, np.concatenate([w, np.zeros(w.shape[:-1] + (1,))], axis=-1))


def exp(w, angle=None):
    """The unit quaternion (..., 4) of the rotation vector w (..., 3) (SO(3)'s exponential map); `angle` is
    |w| where the caller has it."""
    w = np.asarray(w, float)
    th = np.linalg.norm(w, axis=-1) if angle is None else angle
    small = th < 1e-6
    sinc = np.where(small, 0.5 - th ** 2 / 48, np.sin(th / 2) / np.where(small, 1.0, th))
    return np.concatenate([w * sinc[..., None], np.cos(th / 2)[..., None]], axis=-1)


def log(q):
    """The rotation vector (..., 3) of the unit quaternion q (..., 4), angle in [0, pi] (SO(3)'s logarithm:
    of q and -q, the same rotation, the one with w >= 0)."""
    q = np.asarray(q, float)
    q = np.where(q[..., 3:] < 0, -q, q)
    vec, w = q[..., :3], q[..., 3]
    sn = np.linalg.norm(vec, axis=-1)
    th = 2 * np.arctan2(sn, w)
    small = sn < 1e-8                                          # then w is about 1: a series in sn / w
    ws, sns = np.where(small, w, 1.0), np.where(small, 1.0, sn)
    scale = np.where(small, 2 / ws * (1 - sn ** 2 / (3 * ws * ws)), th / sns)
    return vec * scale[..., None]


def integrate(q, w, dt=1.0, angle=None):
    """q (x) exp(w dt), normalised: the rotation after turning with the constant body-frame angular velocity
    w for the time dt (`angle`: |w dt| where the caller has it)."""
    return normalise(product(q, exp(np.asarray(w, float) * dt, angle)))


def about(axis, angle):
    """The unit quaternion (x, y, z, w) of a rotation by `angle` (rad) about `axis` (numeric)."""
    axis = np.asarray(axis, float)
    n = np.linalg.norm(axis)
    if axis.shape != (3,) or not n > 0:
        raise InputError(f"rotation axis must be a non-zero 3-vector, got {axis}")
    s = math.sin(angle / 2) / n
    return np.array([axis[0] * s, axis[1] * s, axis[2] * s, math.cos(angle / 2)])


def normalise(q):
    """Quaternions (..., 4) divided by their norm."""
    q = np.asarray(q, float)
    return q / np.linalg.norm(q, axis=-1, keepdims=True)
