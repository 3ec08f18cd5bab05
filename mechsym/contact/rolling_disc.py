"""Exudyn's penalty rolling-disc connector (ObjectConnectorRollingDiscPenalty) as a vectorised law.

A thin rigid disc (centre p, unit axis w1, radius r) touches a flat plane (point p0, unit normal n). The
law is written once (`_law`, on the components of its vectors) and run two ways: `rolling_disc_contact`
evaluates it in numpy for any number of disc states at once (outputs, and the route that is checked
against Exudyn's connector), and `rolling_disc_program` evaluates it on the symbols of a generated program
with exact derivatives (mechsym.spatial.floating), which is how `RollingDisc` puts the connector on a floating body
for simulation.

Geometry (the seed's formulas, Exudyn's names in brackets)
    e_long = n x w1 / |n x w1|          direction of rolling           [= -w2, Exudyn's longitudinal]
    e_lat  = e_long x n                 the axle's projection on the plane, normalised      [= w_lat]
    w3     = w1 x (w1 x n)/|n x w1|     unit vector from the centre to the lowest rim point   [= w3]
    contact point  pC = p + r w3
    gap            g  = (pC - p0) . n            (negative = penetration)
    contact point velocity (the disc's material point)  vC = v + omega x (r w3)
    slip           s_lat = vC . e_lat,  s_long = vC . e_long,  s = |(s_lat, s_long)|
(e_lat, e_long, n) is right-handed; Exudyn's joint frame J1 = (w_lat, w2, n) is left-handed.

Forces on the disc (all zero unless g < 0)
    normal     f_n = -(k g + d vC . n)          positive when pressing; negative (adhesive) while the
               disc leaves the plane faster than the spring recovers, exactly as Exudyn (no_tension=True
               clamps it at 0)
    friction   (f_lat, f_long) = -phi(s) |f_n| M(s) (s_lat, s_long) / s
               phi(s) = (2 - s/v_mu) s/v_mu (quadratic zone) or s/v_mu (linear zone) for s <= v_mu, else 1
               M(s) = R(a) diag(mu_x + d_x s, mu_y + d_y s) R(a)^T, R(a) the rotation by the friction
               angle a about n (from e_lat towards e_long): mu_x, d_x act along e_lat rotated by a,
               mu_y, d_y along e_long rotated by a. The same numbers as Exudyn's dryFriction,
               viscousFriction and dryFrictionAngle give the same forces.
    rolling    f_roll = -c_r |f_n| (v - (v . n) n): rolling friction, a force at the centre against the
               centre's velocity in the plane (Exudyn's rollingViscousFriction, SI s/m; Exudyn's manual
               calls it an approximation for an axle parallel to the ground)
    total      force = f_lat e_lat + f_long e_long + f_n n + f_roll   (on the disc)
               torque = (r w3) x (f_lat e_lat + f_long e_long + f_n n)   (on the disc, about its centre)
The reaction on the plane body is -force through pC (for a moving ground body, not part of this law).

Relation to Exudyn 1.13.6 (checked against its connector outputs and generalized forces on random
states, tests/contact/test_rolling_disc_law.py): the same forces and torques. Exudyn decides contact and
the slip direction outside the zone from values stored at its previous discontinuous iteration; this law
uses the current state (they agree once Exudyn's discontinuous iteration has converged). Exudyn's
Position output is pC - p0, its axis and normal must be unit vectors (here they are normalised), and it
reports (f_lat, -f_long, f_n) and (s_lat, -s_long, s_n) in its left-handed frame J1 (docs/rolling-disc.md).
The seed's printed formulas read f_n = (k pC + d vC) . n (negative when pressing) and f_t = mu phi f_n e_t;
Exudyn's code, its ForceLocal output and this law use f_n = -(k pC + d vC) . n (positive when pressing)
and f_t = -mu phi |f_n| e_t: forces on the disc.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from mechsym.core.errors import InputError

__all__ = ["RollingDiscContact", "rolling_disc_contact", "RollingDisc", "rolling_disc_program",
           "PARALLEL_TOLERANCE"]

#: An axis whose angle to the plane normal has a sine below this is "parallel to the normal".
PARALLEL_TOLERANCE = 1e-9


# ---------------------------------------------------------------- validation

def _vectors(x, name):
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name} must be numeric: {exc}") from None
    if a.ndim == 0 or a.shape[-1] != 3:
        raise InputError(f"{name} must be a 3-vector or an (..., 3) array of them, got shape {a.shape}")
    bad = np.argwhere(~np.isfinite(a))
    if bad.size:
        idx = tuple(int(i) for i in bad[0])
        raise InputError(f"{name} has a non-finite value {float(a[idx])} at index {idx}")
    return a


def _number(x, name, *, positive=False, nonnegative=False):
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name} must be a number: {exc}") from None
    if a.ndim != 0:
        raise InputError(f"{name} must be a scalar, got an array of shape {a.shape}")
    v = float(a)
    if not np.isfinite(v):
        raise InputError(f"{name} must be finite, got {v!r}")
    if positive and v <= 0:
        raise InputError(f"{name} must be positive, got {v!r}")
    if nonnegative and v < 0:
        raise InputError(f"{name} must be non-negative, got {v!r}")
    return v


def _pair(x, name):
    """A scalar (the same value in both directions) or a pair (x = lateral, y = longitudinal), >= 0."""
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name} must be a number or a pair of numbers: {exc}") from None
    if a.ndim == 0:
        a = np.array([a, a], dtype=float)
    if a.shape != (2,):
        raise InputError(f"{name} must be a number or a pair (x, y), got shape {a.shape}")
    if not np.isfinite(a).all() or (a < 0).any():
        raise InputError(f"{name} must be finite and non-negative, got {a.tolist()!r}")
    return a


def _unit(a, name):
    norm = np.linalg.norm(a, axis=-1, keepdims=True)
    if (norm == 0).any():
        idx = np.argwhere(norm[..., 0] == 0)
        where = f" at index {tuple(int(i) for i in idx[0])}" if a.ndim > 1 else ""
        raise InputError(f"{name} must not be the zero vector{where}")
    return a / norm


def _frozen(a):
    a = np.array(a, copy=True)          # a fresh, writeable-owned copy of broadcast views
    a.flags.writeable = False
    return a


# ---------------------------------------------------------------- result

@dataclass(frozen=True)
class RollingDiscContact:
    """Outputs of `rolling_disc_contact`; every array has the broadcast state shape S (+ (3,) for vectors).

    Forces and torques act on the disc, in the world frame. f_lat, f_long, f_n are the components of the
    contact force (without rolling friction) in (e_lat, e_long, n); Exudyn's ForceLocal is
    (f_lat, -f_long, f_n)."""

    contact_point: np.ndarray   # S x 3: pC = p + r w3, the disc's lowest rim point
    e_lat: np.ndarray           # S x 3: the axle's projection on the plane (unit)
    e_long: np.ndarray          # S x 3: n x axis, normalised: the direction of rolling
    e_n: np.ndarray             # S x 3: the plane normal (unit)
    to_contact: np.ndarray      # S x 3: w3, unit vector from the centre to pC
    gap: np.ndarray             # S: (pC - p0) . n; < 0 means penetration
    contact_velocity: np.ndarray  # S x 3: vC = v + omega x (r w3), the disc's material point at pC
    slip_lat: np.ndarray        # S: vC . e_lat
    slip_long: np.ndarray       # S: vC . e_long
    slip_n: np.ndarray          # S: vC . n (the damping acts on it)
    trail_velocity: np.ndarray  # S x 3: v + r dw3/dt, the velocity of the (geometric) contact point
    in_contact: np.ndarray      # S: gap < 0
    f_lat: np.ndarray           # S: contact force along e_lat
    f_long: np.ndarray          # S: contact force along e_long
    f_n: np.ndarray             # S: contact force along n, positive when pressing
    rolling_force: np.ndarray   # S x 3: rolling-friction force, acting at the centre
    force: np.ndarray           # S x 3: total force on the disc (contact force + rolling force)
    torque: np.ndarray          # S x 3: torque on the disc about its centre

    @property
    def contact_force(self):
        """The contact force at pC in the world frame (force without the rolling friction)."""
        return self.force - self.rolling_force

    @property
    def slip_speed(self):
        """Magnitude of the contact point's slip velocity [m/s]."""
        return np.hypot(self.slip_lat, self.slip_long)


# ---------------------------------------------------------------- the law

def rolling_disc_contact(position, velocity, axis, omega, radius, *, stiffness, zone, damping=0.0,
                         mu=0.0, linear_zone=False, viscous=0.0, friction_angle=0.0,
                         rolling_friction=0.0, plane_point=(0.0, 0.0, 0.0),
                         plane_normal=(0.0, 0.0, 1.0), no_tension=False):
    """Evaluate Exudyn's penalty rolling-disc law on one or many disc states (see the module docstring).

    position, velocity: the disc centre's position and velocity, world frame, shape (..., 3).
    axis: the disc axis in the world frame (any length > 0), (..., 3); must not be parallel to the normal.
    omega: the disc's angular velocity, world frame, (..., 3).
    radius (m), stiffness k (N/m), zone v_mu (m/s): positive. damping d (N s/m) >= 0.
    mu, viscous (s/m): a number or a pair (x = lateral, y = longitudinal before the friction angle), >= 0.
    linear_zone: the linear instead of the quadratic regularisation. friction_angle (rad).
    rolling_friction c_r (s/m) >= 0. plane_point, plane_normal: the plane (the normal need not be unit).
    no_tension: clamp f_n at zero (Exudyn lets a penetrating, fast-separating disc be pulled).
    The state arrays broadcast against each other. Returns a `RollingDiscContact`.
    """
    p = _vectors(position, "position")
    v = _vectors(velocity, "velocity")
    w1 = _vectors(axis, "axis")
    om = _vectors(omega, "omega")
    r = _number(radius, "radius", positive=True)
    k = _number(stiffness, "stiffness", positive=True)
    vmu = _number(zone, "zone", positive=True)
    d = _number(damping, "damping", nonnegative=True)
    mus = _pair(mu, "mu")
    visc = _pair(viscous, "viscous")
    alpha = _number(friction_angle, "friction_angle")
    cr = _number(rolling_friction, "rolling_friction", nonnegative=True)
    p0 = _vectors(plane_point, "plane_point")
    n = _unit(_vectors(plane_normal, "plane_normal"), "plane_normal")
    if p0.ndim != 1 or n.ndim != 1:
        raise InputError("plane_point and plane_normal must be single 3-vectors")
    try:
        shape = np.broadcast_shapes(p.shape, v.shape, w1.shape, om.shape)
    except ValueError:
        raise InputError(f"position {p.shape}, velocity {v.shape}, axis {w1.shape} and omega {om.shape} "
                         "do not broadcast to one shape") from None
    w1 = _unit(w1, "axis")

    params = dict(radius=r, stiffness=k, damping=d, zone=vmu, linear=float(linear_zone), mu_x=mus[0],
                  mu_y=mus[1], viscous_x=visc[0], viscous_y=visc[1], angle=alpha, rolling=cr,
                  normal_x=n[0], normal_y=n[1], normal_z=n[2], plane_x=p0[0], plane_y=p0[1], plane_z=p0[2])
    with np.errstate(all="ignore"):  # 1/s where s <= v_mu is discarded; overflow is checked below
        law = _law(_NUMPY, *(tuple(a[..., i] for i in range(3)) for a in (p, v, w1, om)), params, no_tension)
    sin_axis = np.asarray(law["sin_axis"])          # the axis's shape: an error names its index
    if (sin_axis <= PARALLEL_TOLERANCE).any():
        idx = np.argwhere(np.atleast_1d(sin_axis <= PARALLEL_TOLERANCE))[0]
        where = f" at index {tuple(int(i) for i in idx)}" if sin_axis.ndim else ""
        raise InputError(f"axis is parallel to the plane normal{where} (sine of their angle "
                         f"{float(np.atleast_1d(sin_axis)[tuple(idx)]):.3g}): the disc lies flat, where the contact point is "
                         "undefined and the rolling contact law degenerates")

    def vector(components):
        return np.stack(np.broadcast_arrays(*components, np.zeros(shape[:-1])), axis=-1)[..., :3]

    def scalar(value):
        return np.broadcast_to(value, shape[:-1])

    w2, rw3, e_lat, vc = (vector(law[name]) for name in ("w2", "rw3", "e_lat", "vc"))
    e_long, w3, e_n = -w2, rw3 / r, np.broadcast_to(n, shape)
    pc = np.broadcast_to(p, shape) + rw3
    gap, s_lat, s_long, s_n, fn, f_lat, f_long = (scalar(law[name]) for name in
                                                  ("gap", "s_lat", "s_long", "s_n", "fn", "f_lat", "f_long"))
    force, torque, f_roll = (vector(law[name]) for name in ("force", "torque", "rolling_force"))
    with np.errstate(all="ignore"):
        # the trail: d(pC)/dt for the plane at rest, with w1' = omega x w1 (Exudyn's Velocity output)
        vb = np.broadcast_to(v, shape)
        dw1 = np.cross(om, w1)
        dx = np.cross(dw1, n)
        dw2 = (dx - w2 * np.einsum("...i,...i->...", w2, dx)[..., None]) / sin_axis[..., None]
        trail = vb + r * (np.cross(dw1, w2) + np.cross(w1, dw2))
    if not all(np.isfinite(a).all() for a in (force, torque, pc, vc, gap, s_lat, s_long, trail)):
        raise InputError("rolling-disc contact overflowed: stiffness, damping, friction or the state "
                         "are too large")

    return RollingDiscContact(
        contact_point=_frozen(pc), e_lat=_frozen(e_lat), e_long=_frozen(e_long), e_n=_frozen(e_n),
        to_contact=_frozen(w3), gap=_frozen(gap), contact_velocity=_frozen(vc),
        slip_lat=_frozen(s_lat), slip_long=_frozen(s_long), slip_n=_frozen(s_n),
        trail_velocity=_frozen(np.broadcast_to(trail, shape)), in_contact=_frozen(gap < 0),
        f_lat=_frozen(f_lat), f_long=_frozen(f_long), f_n=_frozen(fn),
        rolling_force=_frozen(f_roll), force=_frozen(force), torque=_frozen(torque))


# ---------------------------------------------------------------- the law, once

def _cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


class _NumpyOps:
    """The law's operations on numpy arrays (any broadcast shape)."""

    sqrt, cos, sin, where = (staticmethod(f) for f in (np.sqrt, np.cos, np.sin, np.where))

    @staticmethod
    def let(x):
        return x

    @staticmethod
    def hypot(a, b):
        return np.hypot(a, b)                 # (no overflow of the squares at huge speeds)


class _ProgramOps:
    """The law's operations as assignments of a `mechsym.codegen.program.Program` (exact derivatives)."""

    def __init__(self, prog):
        import sympy

        self.let, self.sqrt, self.cos, self.sin = prog.let, prog.norm, sympy.cos, sympy.sin
        self._piecewise = sympy.Piecewise

    def where(self, condition, a, b):
        return self._piecewise((a, condition), (b, True))

    def hypot(self, a, b):
        return self.sqrt(a**2 + b**2)


_NUMPY = _NumpyOps()


def _law(ops, position, velocity, axis, omega, p, no_tension):
    """The law (see the module docstring) on 3-tuples of components: numpy arrays (`_NumpyOps`) or the
    symbols of a program (`_ProgramOps`). axis: unit; p: the parameters of `RollingDisc.parameters()`
    (numbers or symbols; unit plane normal, linear = 0 or 1). Returns a dict of the intermediate and the
    resulting quantities (vectors as 3-tuples): the forces act on the disc, the torque about its centre."""
    let = ops.let

    def vec(components):
        return tuple(let(c) for c in components)

    r, k, d, vmu, lin = p["radius"], p["stiffness"], p["damping"], p["zone"], p["linear"]
    n = (p["normal_x"], p["normal_y"], p["normal_z"])
    p0 = (p["plane_x"], p["plane_y"], p["plane_z"])
    x = vec(_cross(axis, n))                                   # Exudyn's helper; e_long = -x/|x|
    sin_axis = ops.sqrt(_dot(x, x))
    w2 = vec(c / sin_axis for c in x)                          # Exudyn's w2 = -e_long
    rw3 = vec(r * c for c in _cross(axis, w2))                 # centre -> contact point, times r
    e_lat = vec(_cross(n, w2))                                 # Exudyn's w_lat
    gap = let(_dot([a + b - c for a, b, c in zip(position, rw3, p0)], n))
    vc = vec(a + b for a, b in zip(velocity, _cross(omega, rw3)))
    s_lat, s_long, s_n = let(_dot(vc, e_lat)), let(-_dot(vc, w2)), let(_dot(vc, n))
    fn_raw = let(-(k * gap + d * s_n))
    contact = gap < 0
    if no_tension:
        fn = afn = let(ops.where(contact & (fn_raw > 0), fn_raw, 0))
    else:
        fn = let(ops.where(contact, fn_raw, 0))
        afn = let(ops.where(contact & (fn_raw >= 0), fn_raw, ops.where(contact, -fn_raw, 0)))
    # friction: -phi(s)/s |fn| M(s) u, without dividing by s inside the zone: phi(s)/s is the quadratic
    # zone's (lin = 0) or the linear zone's (lin = 1) inside, 1/s outside
    s = ops.hypot(s_lat, s_long)
    phi_over_s = let(ops.where(s <= vmu, (2 - lin - (1 - lin) * s / vmu) / vmu, 1 / s))
    c, sn = let(ops.cos(p["angle"])), let(ops.sin(p["angle"]))
    u_lat, u_long = let(c * s_lat + sn * s_long), let(-sn * s_lat + c * s_long)    # R(a)^T u
    g_lat = let(-afn * phi_over_s * (p["mu_x"] + p["viscous_x"] * s) * u_lat)
    g_long = let(-afn * phi_over_s * (p["mu_y"] + p["viscous_y"] * s) * u_long)
    f_lat, f_long = let(c * g_lat - sn * g_long), let(sn * g_lat + c * g_long)      # back: R(a) g
    contact_force = vec(f_lat * a - f_long * b + fn * m for a, b, m in zip(e_lat, w2, n))
    vn = _dot(velocity, n)
    rolling_force = tuple(-p["rolling"] * afn * (a - vn * m) for a, m in zip(velocity, n))
    force = vec(a + b for a, b in zip(contact_force, rolling_force))
    return dict(sin_axis=sin_axis, w2=w2, rw3=rw3, e_lat=e_lat, gap=gap, vc=vc, s_lat=s_lat, s_long=s_long,
                s_n=s_n, fn=fn, f_lat=f_lat, f_long=f_long, rolling_force=rolling_force, force=force,
                torque=vec(_cross(rw3, contact_force)))


def rolling_disc_program(prog, position, velocity, axis, omega, p, no_tension=False):
    """The law as assignments of a `mechsym.codegen.program.Program` (symbolic, with exact derivatives):
    position, velocity, omega: sympy 3-vectors in the world frame; axis: the unit disc axis (world); p: the
    symbols of `RollingDisc.parameters()` (unit plane normal, linear = 0 or 1). Returns the force on the
    disc (world) and the torque about the disc centre (world), as sympy 3-vectors."""
    from sympy import Matrix

    law = _law(_ProgramOps(prog), tuple(position), tuple(velocity), tuple(axis), tuple(omega), p, no_tension)
    return Matrix(law["force"]), Matrix(law["torque"])


@dataclass(frozen=True)
class RollingDisc:
    """Exudyn's ObjectConnectorRollingDiscPenalty on a mechsym floating body: a load for
    `mechsym.spatial.floating.FloatingSystem.loaded`.

    A disc of `radius` centred at `centre` (body frame, from the centre of mass; Exudyn's disc centre is
    the body's reference point, centre = 0) with its axis `axis` (body frame, Exudyn's discAxis), on the
    fixed plane through `plane_point` with normal `plane_normal` (Exudyn's ground marker and planeNormal).
    stiffness, damping (contactStiffness, contactDamping), mu (dryFriction: a number or (lateral,
    longitudinal)), zone (dryFrictionProportionalZone), linear_zone (useLinearProportionalZone), viscous
    (viscousFriction), friction_angle (dryFrictionAngle, rad), rolling_friction (rollingViscousFriction),
    active (activeConnector) and no_tension (clamp f_n at 0; not in Exudyn) as in `rolling_disc_contact`.
    """

    name: str
    radius: float
    stiffness: float
    zone: float
    damping: float = 0.0
    mu: object = 0.0
    linear_zone: bool = False
    viscous: object = 0.0
    friction_angle: float = 0.0
    rolling_friction: float = 0.0
    axis: tuple = (1.0, 0.0, 0.0)
    centre: tuple = (0.0, 0.0, 0.0)
    plane_point: tuple = (0.0, 0.0, 0.0)
    plane_normal: tuple = (0.0, 0.0, 1.0)
    no_tension: bool = False
    active: bool = True

    def __post_init__(self):
        what = f"rolling disc '{self.name}'"
        try:
            for name, kw in (("radius", dict(positive=True)), ("stiffness", dict(positive=True)),
                             ("zone", dict(positive=True)), ("damping", dict(nonnegative=True)),
                             ("friction_angle", {}), ("rolling_friction", dict(nonnegative=True))):
                object.__setattr__(self, name, _number(getattr(self, name), name, **kw))
            for name in ("mu", "viscous"):
                object.__setattr__(self, name, tuple(_pair(getattr(self, name), name).tolist()))
            for name in ("axis", "centre", "plane_point", "plane_normal"):
                v = _vectors(getattr(self, name), name)
                if v.shape != (3,):
                    raise InputError(f"{name} must be one 3-vector, got shape {v.shape}")
                object.__setattr__(self, name, tuple((_unit(v, name) if name in ("axis", "plane_normal")
                                                      else v).tolist()))
        except InputError as exc:
            raise InputError(f"{what}: {exc}") from None

    # -- the load protocol of mechsym.spatial.floating_loads.LoadedODE ----------------------------------------------
    def parameters(self) -> dict:
        """The run-time parameters of the generated code (axis and normal unit)."""
        out = dict(radius=self.radius, stiffness=self.stiffness, damping=self.damping, zone=self.zone,
                   linear=float(self.linear_zone), mu_x=self.mu[0], mu_y=self.mu[1], viscous_x=self.viscous[0],
                   viscous_y=self.viscous[1], angle=self.friction_angle, rolling=self.rolling_friction)
        for prefix, v in (("axis", self.axis), ("centre", self.centre), ("plane", self.plane_point),
                          ("normal", self.plane_normal)):
            out.update({f"{prefix}_{c}": float(x) for c, x in zip("xyz", v)})
        return out

    def structure(self) -> str:
        """The text that the generated code's cache key takes from this contact."""
        return f"rolling disc no_tension={self.no_tension} active={self.active}"

    def build(self, prog, frame, p):
        """The contact's force and torque on the body (world frame) as expressions in `prog`, for the body `frame`
        and parameters `p`."""
        from sympy import Matrix, zeros

        if not self.active:
            return zeros(3, 1), zeros(3, 1)
        arm = prog.vector(frame.rotation * Matrix([p["centre_x"], p["centre_y"], p["centre_z"]]))
        axis = prog.vector(frame.rotation * Matrix([p["axis_x"], p["axis_y"], p["axis_z"]]))
        centre = prog.vector(frame.position + arm)
        velocity = prog.vector(frame.velocity + frame.omega.cross(arm))
        force, torque = rolling_disc_program(prog, centre, velocity, axis, frame.omega, p, self.no_tension)
        return force, torque + arm.cross(force)

    def check_state(self, system, y):
        """InputError (naming the disc) where the law is undefined: the axis parallel to the normal."""
        try:
            self.contact(system, y)
        except InputError as exc:
            raise InputError(f"rolling disc '{self.name}': {exc}") from None

    # -- outputs --------------------------------------------------------------------------------------
    def disc_states(self, y):
        """The disc centre's position and velocity, the axis and the angular velocity (world, (N, 3)) of
        body states y (13, N) (mechsym.spatial.floating's layout)."""
        from mechsym.core.quaternion import rotation_matrix

        y = np.asarray(y, float).reshape(13, -1)
        rot = rotation_matrix(y[3:7].T)                                        # N x 3 x 3
        arm = rot @ np.asarray(self.centre)
        omega = np.einsum("nij,jn->ni", rot, y[10:13])
        return y[:3].T + arm, y[7:10].T + np.cross(omega, arm), rot @ np.asarray(self.axis), omega

    def contact(self, system, y) -> RollingDiscContact:
        """The law's outputs (forces on the disc, slips, frames) at body states y (13, N)."""
        position, velocity, axis, omega = self.disc_states(y)
        c = rolling_disc_contact(position, velocity, axis, omega, self.radius, stiffness=self.stiffness,
                                    zone=self.zone, damping=self.damping, mu=self.mu,
                                    linear_zone=self.linear_zone, viscous=self.viscous,
                                    friction_angle=self.friction_angle, rolling_friction=self.rolling_friction,
                                    plane_point=self.plane_point, plane_normal=self.plane_normal,
                                    no_tension=self.no_tension)
        if self.active:
            return c
        zero = {name: _frozen(np.zeros_like(getattr(c, name))) for name in
                ("f_lat", "f_long", "f_n", "rolling_force", "force", "torque")}
        return dataclasses.replace(c, **zero)
