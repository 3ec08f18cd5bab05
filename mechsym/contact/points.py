"""Ground-contact points on any derived model: spatial_v2's gcPosVel, Fpt and gcFD roles, generated.

Declare points as (body, coordinates in the body frame) on a planar `System` (mechsym.derive of a
Mechanism; coordinates in the declaration's body frame, or the name of a declared point) or on a
`FloatingSystem` (mechsym.spatial.floating; body frame with its origin at the centre of mass). Then

* `kinematics(q, qd)` -> (P, V): positions and velocities of every point, nd x np with the normal
  coordinate last (gcPosVel's output, split);
* `generalised_forces(q, f)` -> Q: the generalised forces of point forces f (nd x np) on the model's
  speeds, Q = sum_i J_i^T f_i (what Fpt followed by gcFD feeds to the dynamics);
* `load(ground, states=None)`: a load callable (t, q, qd, s) -> (Q, du/dt) for `mechsym.planar.simulate` /
  `FloatingSystem.ode`, in which the tangential deflections u ride along as extra states (s = u.ravel(),
  u of shape (nd-1) x np as in spatial_v2) and ONE evaluation of the law covers all points (with
  `states`, the law's formulas in held states: `laws_in_states`, used by mechsym.contact.run);
* `signals(ground, q, qd, u)`: the zero-crossing signals of contact and of sticking (mechsym.contact.run).

Generated code, exactly (the structure of spatial_v2's gcPosVel / Fpt / gcFD). Each model supplies, per
body, the symbolic frame of the body's reference point: its position o(q_b), rotation R(q_b), velocity
v_o and angular velocity w (world frame), the last two linear in the body's speeds. From these sympy
forms mechsym derives B = dv_o/d(speeds) and W = dw/d(speeds) (exact symbolic derivatives) and the map
from a body's resultant point force F and moment M about its reference point (world frame) to its
generalised forces, Q_b = B^T F + W^T M. Both the frames and that map are lambdified with CSE
(mechsym.codegen.VectorFunction) and evaluated for all bodies in one call. Per point only the exact
rigid-body formulas remain, vectorised over all points with index arrays (Xpt, Vpt, Fpt):

    p_i = o_b + R_b c_i,    v_i = v_o,b + w_b x (R_b c_i),    M_b = sum_i (R_b c_i) x f_i,  F_b = sum_i f_i

so the generalised force is sum_i J_i^T f_i with J_i = dv_i/d(speeds). No Python loop runs over points
or bodies on the hot path.

* planar: q_b = (x, y, theta) of the body's centre of mass (o), c measured from it in the body frame,
  w = thetadot (about +z: w x a = w (-a_y, a_x));
* 3-D floating body: q_b = (r, quaternion), speeds (v, w_body): o = r, R = R(q), v_o = v, w = R w_body;
  generalised forces (F world, M body).
"""
from __future__ import annotations

from typing import Any, Protocol

import numpy as np
import sympy as sp

from mechsym.codegen import VectorFunction
from mechsym.contact.spatial_v2 import NO_CONTACT, SLIP, STICK, GroundContact, _laws, _laws_unchecked, laws_in_states
from mechsym.core.errors import InputError

__all__ = ["ContactModel", "ContactPoints", "contact_signals", "laws_in_states", "classify"]


def _planar_frame():
    """Body frame of a planar body: (coords, speeds, origin, R, v_origin, omega)."""
    x, y, th = sp.symbols("x y theta", real=True)
    xd, yd, thd = sp.symbols("xd yd thetad", real=True)
    c, s = sp.cos(th), sp.sin(th)
    return (x, y, th), (xd, yd, thd), sp.Matrix([x, y]), sp.Matrix([[c, -s], [s, c]]), sp.Matrix([xd, yd]), \
        sp.Matrix([thd])


class ContactModel(Protocol):
    """What contact points and their run (mechsym.contact.run) need of the model that carries them, one
    class per kind of model (`_model` picks it): nd, the dimension of space (2 or 3); n_speeds, the model's
    speeds; overrides, the parameter overrides bound; title, the name a run's table carries; point_columns:
    whether a run reports the points' positions (POINT.x, POINT.y: a planar model's); c_run: whether the
    compiled contact run (mechsym.contact.c_run) covers it."""

    system: Any
    nd: int
    n_speeds: int
    overrides: dict
    title: str
    point_columns: bool
    c_run: bool

    def body_frame(self):
        """(coords, speeds, origin, R, v_origin, omega) of a body's reference frame, sympy."""

    def body_blocks(self) -> dict:
        """body name -> (indices of its coordinates, of its speeds) among the model's."""

    def local_point(self, body_name, coords) -> np.ndarray:
        """A point's coordinates (nd,) in the body's reference frame, checked (a one-line error naming it)."""

    def equations(self, state0, forces, load, n_extra):
        """(ode with rhs(t, y), project(y), state0 projected): the model's equations of motion from the
        checked state0 under `load` (mechsym.contact.points.ContactPoints.load), with n_extra states riding
        along; `forces` the coordinate forces of a planar model (refused elsewhere)."""

    def state_columns(self, y) -> dict:
        """The run's table columns of the model's states y (N, model states)."""

    def motion(self, y):
        """(q, qd) of every body, rows of samples, at the model's states y (N, model states)."""


class _PlanarModel:
    """What ContactPoints needs from a planar System (absolute coordinates (x, y, theta) per body)."""

    nd = 2
    point_columns = True
    c_run = False

    def __init__(self, system, params):
        con = system.constraints
        self.system, self.con, self.mech = system, con, system.mechanism
        self.overrides = params
        self.values = self.mech.resolve_parameters(params)
        self.n_speeds = len(con.q)
        self.title = self.mech.name
        self.k = len(system.coordinate_names)

    def body_frame(self):
        return _planar_frame()

    def body_blocks(self):
        return {b: (np.arange(3 * i, 3 * i + 3), np.arange(3 * i, 3 * i + 3)) for i, b in enumerate(self.con.bodies)}

    def local_point(self, body_name, coords):
        mech = self.mech
        if body_name not in mech.bodies:
            raise InputError(f"unknown body '{body_name}' (bodies: {', '.join(mech.bodies)})")
        if body_name == mech.fixed:
            raise InputError(f"a contact point on the fixed body '{body_name}' cannot move; declare it on a moving body")
        body = mech.bodies[body_name]
        if isinstance(coords, str):
            if coords not in body.points:
                raise InputError(f"body '{body_name}' has no point '{coords}' (points: {', '.join(body.points)})")
            coords = body.points[coords]
        try:
            cx, cy = coords
        except (TypeError, ValueError):
            raise InputError(f"contact point on body '{body_name}': expected (x, y), got {coords!r}") from None
        subs = {mech.parameters[n].symbol: v for n, v in self.values.items()}
        try:
            local = [float(sp.sympify(a).subs(subs)) - float(sp.sympify(b).subs(subs))
                     for a, b in zip((cx, cy), body.com)]
        except (TypeError, sp.SympifyError):
            raise InputError(f"contact point {coords!r} on body '{body_name}' is not a number or an expression "
                             "in the mechanism's parameters") from None
        return np.array(local)

    def equations(self, state0, forces, load, n_extra):
        from mechsym.planar.simulate import EquationsOfMotion

        k = self.k
        if state0.shape != (2 * k,):
            raise InputError(f"state0 of mechanism '{self.mech.name}' must be [theta, thetad] "
                             f"({2 * k} values), got {state0.shape}")
        return EquationsOfMotion(self.system, state0[:k], self.overrides, forces, load, n_extra), np.array, state0

    def state_columns(self, y):
        names = list(self.system.coordinate_names) + [f"{c}d" for c in self.system.coordinate_names]
        return {name: y[:, i] for i, name in enumerate(names)}

    def motion(self, y):
        kin = self.system.kinematics(y[:, :self.k], self.overrides)
        return kin.q, kin.velocities(y[:, self.k:2 * self.k])


class _FloatingModel:
    """What ContactPoints needs from a FloatingSystem (the body's position and quaternion, its speeds)."""

    nd = 3
    n_speeds = 6
    point_columns = False
    c_run = True
    title = "model"

    def __init__(self, system, params):
        self.system = system
        self.overrides = params
        self.values = system.body.resolve_parameters(params)

    def body_frame(self):
        return self.system.body_frame()

    def body_blocks(self):
        return self.system.body_blocks()

    def local_point(self, body_name, coords):
        return self.system.local_point(body_name, coords, self.values)

    def equations(self, state0, forces, load, n_extra):
        from mechsym.spatial.floating import LAYOUT

        if forces:
            raise InputError("forces apply to planar coordinates; a floating body takes a load instead")
        if state0.shape != (13,):
            raise InputError(f"state0 of a floating body must have 13 values {LAYOUT}, got {state0.shape}")
        ode = self.system.ode(self.overrides, load, n_extra)
        return ode, ode.project, ode.project(state0)

    def state_columns(self, y):
        return self.system.world_columns(y[:, :13].T)

    def motion(self, y):
        return y[:, :7], y[:, 7:13]


def _model(system, params) -> ContactModel:
    """The contact model of a derived planar System or FloatingSystem: the one place that names the kinds."""
    from mechsym.planar.system import System
    from mechsym.spatial.floating import FloatingSystem

    if isinstance(system, FloatingSystem):
        return _FloatingModel(system, params)
    if isinstance(system, System):
        return _PlanarModel(system, params)
    raise InputError(f"contact points need a derived planar System or a FloatingSystem, got {type(system).__name__}")


class ContactPoints:
    """Ground-contact points on a derived model, with parameter values bound (None: the defaults).

    points: a dict name -> (body, coordinates) or a sequence of (body, coordinates) (named gc0, gc1, ...);
    coordinates are in the body frame: numbers or expressions in the model's parameters, or the name of a
    declared point of that body.
    """

    def __init__(self, system, points, params=None):
        self.system = system
        self.param_overrides = dict(params or {})
        self.model = model = _model(system, self.param_overrides)
        self.nd = model.nd
        if isinstance(points, dict):
            items = list(points.items())
        else:
            try:
                items = [(f"gc{i}", p) for i, p in enumerate(points)]
            except TypeError:
                raise InputError(f"points must be a dict name -> (body, coordinates) or a list of (body, coordinates), "
                                 f"got {type(points).__name__}") from None
        if not items:
            raise InputError("no contact points given")
        blocks = model.body_blocks()
        names, bodies, local = [], [], []
        for name, spec in items:
            try:
                body, coords = spec
            except (TypeError, ValueError):
                raise InputError(f"contact point '{name}': expected (body, coordinates), got {spec!r}") from None
            if body not in blocks:
                known = ", ".join(blocks)
                fixed = getattr(getattr(model, "mech", None), "fixed", None)
                if body == fixed:
                    raise InputError(f"contact point '{name}': a point on the fixed body '{body}' cannot move")
                raise InputError(f"contact point '{name}': unknown body '{body}' (moving bodies: {known})")
            try:
                c = model.local_point(body, coords)
            except InputError as exc:
                raise InputError(f"contact point '{name}': {exc}") from None
            if c.shape != (self.nd,) or not np.all(np.isfinite(c)):
                raise InputError(f"contact point '{name}': coordinates must be {self.nd} finite numbers, got {coords!r}")
            names.append(str(name))
            bodies.append(body)
            local.append(c)
        if len(set(names)) != len(names):
            raise InputError(f"contact point names must be unique, got {names}")
        self.names, self.bodies = tuple(names), tuple(bodies)
        self.local = np.array(local).T.copy()          # nd x np, from each body's reference point
        self.n = len(names)
        self.n_speeds = model.n_speeds
        self.body_names = tuple(dict.fromkeys(bodies))           # bodies carrying points, in order
        self.point_body = np.array([self.body_names.index(b) for b in bodies])
        self.body_coord_index = np.stack([blocks[b][0] for b in self.body_names], axis=1)  # (coords per body, nb)
        self.body_speed_index = np.stack([blocks[b][1] for b in self.body_names], axis=1)  # (speeds per body, nb)
        self._single = len(self.body_names) == 1
        self._incidence = (self.point_body[None, :] == np.arange(len(self.body_names))[:, None]).astype(float)

        coords, speeds, origin, rot, v_origin, omega = model.body_frame()
        nd = self.nd
        force = sp.Matrix(sp.symbols(" ".join(f"F{i}" for i in range(nd)), real=True, seq=True))
        moment = sp.Matrix(sp.symbols(" ".join(f"M{i}" for i in range(len(omega))), real=True, seq=True))
        b_mat = v_origin.jacobian(sp.Matrix(speeds))             # exact: linear in the speeds
        w_mat = omega.jacobian(sp.Matrix(speeds))
        self.frame_expressions = (origin, rot, v_origin, omega)
        self.generalised_expression = b_mat.T * force + w_mat.T * moment
        frame = [*origin, *rot, *v_origin, *omega]
        self._frame = VectorFunction((coords, speeds), frame)
        self._frame_pos = VectorFunction((coords,), [*origin, *rot])
        self._gen = VectorFunction((coords, force, moment), list(self.generalised_expression))
        self._rows = (slice(0, nd), slice(nd, nd + nd * nd), slice(nd + nd * nd, 2 * nd + nd * nd),
                      slice(2 * nd + nd * nd, None))
        if self._single:  # one body: the same functions called on plain floats (no per-call array overhead)
            self._ci0, self._si0 = self.body_coord_index[:, 0], self.body_speed_index[:, 0]

    # -- gcPosVel -----------------------------------------------------------------------------------
    def _arms(self, frame):
        """Per point: origin (nd, np) and the arm R c (nd, np) from the body frames (k, nb)."""
        nd, o_rows, r_rows = self.nd, self._rows[0], self._rows[1]
        if self._single:
            arm = frame[r_rows, 0].reshape(nd, nd) @ self.local
            return frame[o_rows, 0][:, None], arm
        rot = frame[r_rows][:, self.point_body].reshape(nd, nd, self.n)
        return frame[o_rows][:, self.point_body], np.einsum("ijp,jp->ip", rot, self.local)

    def _omega_cross(self, w, arm):
        """w x arm for w (3 or 1, np or 1) and arm (nd, np); planar w is about +z."""
        out = np.empty(arm.shape)
        if self.nd == 2:
            np.multiply(w[0], arm[1], out=out[0])
            out[0] *= -1.0
            np.multiply(w[0], arm[0], out=out[1])
            return out
        out[0] = w[1] * arm[2] - w[2] * arm[1]
        out[1] = w[2] * arm[0] - w[0] * arm[2]
        out[2] = w[0] * arm[1] - w[1] * arm[0]
        return out

    def _posvel(self, q, qd):
        """P, V (nd, np) and the arms R c (nd, np)."""
        nd = self.nd
        if self._single:
            fr = self._frame.one(q[self._ci0].tolist(), qd[self._si0].tolist())
            arm = fr[self._rows[1]].reshape(nd, nd) @ self.local
            vo, w = fr[self._rows[2], None], fr[self._rows[3]]
            if nd == 3:
                skew = np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])
                return fr[self._rows[0], None] + arm, vo + skew @ arm, arm
            return fr[self._rows[0], None] + arm, vo + w[0] * np.array([-arm[1], arm[0]]), arm
        frame = self._frame(q[self.body_coord_index], qd[self.body_speed_index])
        o, arm = self._arms(frame)
        vo, w = frame[self._rows[2]][:, self.point_body], frame[self._rows[3]][:, self.point_body]
        return o + arm, vo + self._omega_cross(w, arm), arm

    def kinematics(self, q, qd):
        """Positions and velocities (each nd x np) of the points at coordinates q and speeds qd; with
        samples, q (n_coords, N) and qd (n_speeds, N) give nd x np x N, in one vectorised call."""
        q, qd = np.asarray(q, float), np.asarray(qd, float)
        if q.ndim == 2:
            return self._motion(q, qd)
        p, v, _ = self._posvel(q, qd)
        return p, v

    def _motion(self, q, qd):
        """P, V (nd, np, N) at the samples q (n_coords, N), qd (n_speeds, N)."""
        nd, rows = self.nd, self._rows
        frame = self._frame(q[self.body_coord_index], qd[self.body_speed_index])[:, self.point_body]
        rot = frame[rows[1]].reshape((nd, nd) + frame.shape[1:])
        arm = np.einsum("ijpn,jp->ipn", rot, self.local)
        return frame[rows[0]] + arm, frame[rows[2]] + self._omega_cross(frame[rows[3]], arm)

    def positions(self, q):
        """Positions (nd x np) at coordinates q."""
        q = np.asarray(q, float)
        o, arm = self._arms(self._frame_pos(q[self.body_coord_index]))
        return o + arm

    # -- Fpt + gcFD: J^T f --------------------------------------------------------------------------
    def _generalised(self, q, f, arm):
        out = np.zeros(self.n_speeds)
        if self._single:
            a = arm @ f.T                             # sum_i arm_i f_i^T: the moment is its skew part
            if self.nd == 3:
                moment = [a[1, 2] - a[2, 1], a[2, 0] - a[0, 2], a[0, 1] - a[1, 0]]
            else:
                moment = [a[0, 1] - a[1, 0]]
            out[self._si0] = self._gen.one(q[self._ci0].tolist(), f.sum(axis=1).tolist(), moment)
            return out
        if self.nd == 2:
            m = (arm[0] * f[1] - arm[1] * f[0])[None]
        else:
            m = self._omega_cross(arm, f)            # arm x f
        out[self.body_speed_index] = self._gen(q[self.body_coord_index], f @ self._incidence.T, m @ self._incidence.T)
        return out

    def generalised_forces(self, q, f):
        """Generalised forces (n_speeds,) on the model's speeds of point forces f (nd x np, world frame):
        sum_i J_i^T f_i, through each body's resultant force and moment."""
        q = np.asarray(q, float)
        f = np.asarray(f, float)
        if f.shape != (self.nd, self.n):
            raise InputError(f"f must have shape {(self.nd, self.n)}, got {f.shape}")
        o, arm = self._arms(self._frame_pos(q[self.body_coord_index]))
        return self._generalised(q, f, arm)

    # -- the law on all points at once -------------------------------------------------------------------
    def evaluate(self, ground: GroundContact, q, qd, u=None):
        """(P, V, f, ud, fcone, state) for all points with ONE evaluation of the law; u (nd-1) x np."""
        p, v = self.kinematics(q, qd)
        u = np.zeros((self.nd - 1, self.n)) if u is None else np.asarray(u, float).reshape(self.nd - 1, self.n)
        f, ud, fcone, state = _laws(ground.stiffness, ground.damping, ground.mu, p, v, u)
        return p, v, f, ud, fcone, state

    def load(self, ground: GroundContact, states=None):
        """A load callable (t, q, qd, s) -> (Q, sdot) with s = u.ravel() the deflections ((nd-1) x np).

        states: None evaluates the law itself (each point classified by gcontact's own tests); or an
        object whose attribute `state` holds each point's state (NO_CONTACT, STICK, SLIP), which the
        law's formulas then use (`laws_in_states`): the hybrid runner holds the states between located
        events, as Simulink holds a block's mode within a step."""
        if not isinstance(ground, GroundContact):
            raise InputError(f"ground must be a GroundContact(K, D, mu), got {type(ground).__name__}")
        K, D, mu, nd, n = ground.stiffness, ground.damping, ground.mu, self.nd, self.n
        posvel, generalised, ns = self._posvel, self._generalised, self.n_speeds

        def load(t, q, qd, s):
            # A trial step of the integrator may overflow (a huge step into the ground): return NaN and
            # the integrator rejects the step and retries a smaller one.
            with np.errstate(all="ignore"):
                try:
                    p, v, arm = posvel(q, qd)
                    u = s.reshape(nd - 1, n)
                    if states is None:
                        f, ud, _, _ = _laws_unchecked(K, D, mu, p, v, u)
                    else:
                        f, ud = laws_in_states(K, D, mu, p, v, u, states.state)
                    return generalised(q, f, arm), ud.ravel()
                except (OverflowError, ZeroDivisionError):
                    return np.full(ns, np.nan), np.full(len(s), np.nan)

        return load

    # -- zero-crossing signals -----------------------------------------------------------------------------
    def signals(self, ground: GroundContact, q, qd, u):
        """(contact, stick) signals, each (np,), in metres; see `contact_signals`."""
        p, v = self.kinematics(q, qd)
        return contact_signals(ground, p, v, np.asarray(u, float).reshape(self.nd - 1, self.n))

    def classify(self, ground, q, qd, u):
        """NO_CONTACT, STICK or SLIP per point from the signals (the law's classification)."""
        return classify(*self.signals(ground, q, qd, u))

    def deflection_names(self):
        """Column names of the tangential spring deflections, per axis and point (POINT.ux, POINT.uy)."""
        axes = ("x", "y")[: self.nd - 1]
        return [f"{name}.u{a}" for a in axes for name in self.names]


def contact_signals(ground, p, v, u):
    """Signals whose signs give each point's state exactly as the law classifies it (tau = D/K):

        contact  c = min(-z, -z - tau zdot)                   in contact  iff c > 0  (fn > 0)
        stick    s = mu (-z - tau zdot) - |u + tau v_t|       sticking    iff s >= 0 (|ft| <= mu fn)

    Both are continuous in the state (unlike fn, which is identically zero above the ground, or the
    capped cone ratio), so their zero crossings are the state changes. Units: metres."""
    tau = ground.damping / ground.stiffness
    z, zd = p[-1], v[-1]
    depth = -z - tau * zd
    c = np.minimum(-z, depth)
    s = ground.mu * depth - np.linalg.norm(u + tau * v[:-1], axis=0)
    return c, s


def classify(c, s):
    """Contact state per point (NO_CONTACT, STICK, SLIP) from the signals c and s of `contact_signals`."""
    return np.where(c > 0, np.where(s >= 0, STICK, SLIP), NO_CONTACT)
