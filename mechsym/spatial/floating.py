"""A floating rigid body in 3-D: position, unit quaternion and angular velocity, Newton-Euler derived
symbolically and generated like the planar case.

Declaration (`FloatingBody`): parameters, mass, centroidal inertia (body frame) and named points in the
body frame, whose origin is the centre of mass. Gravity is the parameter g = 9.81 m/s^2 along -z, as in a
planar Mechanism: `gravity_down` replaces it, `no_gravity` removes it (docs/conventions.md).

State (13 values, the layout of every array below):

    y = [x, y, z,  qx, qy, qz, qw,  vx, vy, vz,  wbx, wby, wbz]

the configuration and speeds of the body's free joint (mechsym.core.freejoint.FreeJoint("world")):

* r = (x, y, z): the centre of mass in the world frame (z up);
* q = (qx, qy, qz, qw): the body-to-world rotation as a quaternion, scalar LAST (Pinocchio's layout);
* v: the velocity of the centre of mass, world frame (not Pinocchio's body-frame velocity: see
  mechsym.core.freejoint for why; `to_pinocchio` converts exactly);
* w = (wbx, wby, wbz): the angular velocity in the BODY frame (Euler's equations then have a constant
  inertia). `world_columns` reports it in the world frame, R w, as wx, wy, wz.

Outputs keep their columns: `world_columns` gives x, y, z, qw, qx, qy, qz (scalar first there), vx, vy,
vz, wx, wy, wz, and `state_from_columns` is its inverse.

The coordinates are (r, q) (7), the speeds are (v, w) (6); generalised forces are conjugate to the speeds:
Q = (F, M), the total force in the world frame and the moment about the centre of mass in the body frame,
so that the power of any set of forces is Q . (v, w).

Equations (derived with sympy, lambdified with CSE, vectorised over samples):

    r' = v
    q' = 1/2 q (x) (w, 0) + k_stab |w| (1 - |q|) q         (quaternion product, k_stab = 0.1)
    m v' = m g + F
    I w' = M - w x (I w)

Quaternion normalisation. The rotation matrix is that of q/|q| (the homogeneous form divided by |q|^2),
so the dynamics never sees a non-unit rotation; the stabilising term (spatial_v2's rqd, Kstab = 0.1)
pulls |q| back to 1 at a rate proportional to the rotation rate, without changing the rotation that q
represents; `normalise(y)` projects exactly (the contact runner applies it at every switch) and every
output reports the normalised quaternion.

Under loads (`FloatingSystem.loaded`, mechsym.spatial.floating_loads): each load (a rolling-disc contact, a body-frame torque) writes its
force and torque into one `mechsym.codegen.program.Program`, a straight-line program of small sympy
assignments carried with their forward-mode derivatives, so the right-hand side and its exact Jacobian
are generated together (C through the C backend's cache, numpy without a compiler) for a stiff solver
(BDF, Radau).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np
import sympy as sp

from mechsym.codegen import VectorFunction
from mechsym.core import quaternion
from mechsym.core.errors import InputError, ModelError
from mechsym.core.freejoint import FreeJoint
from mechsym.core.parameters import Declaration, ParametersInUse, apply_overrides, default_problems
from mechsym.core.quaternion import rotation_matrix
from mechsym.core.results import RunResult
from mechsym.core.runner import integrate, result
from mechsym.core.timegrid import run_options

K_STAB = 0.1
STATE_NAMES = ("x", "y", "z", "qx", "qy", "qz", "qw", "vx", "vy", "vz", "wbx", "wby", "wbz")
WORLD_COLUMNS = ("x", "y", "z", "qw", "qx", "qy", "qz", "vx", "vy", "vz", "wx", "wy", "wz")
LAYOUT = "[" + ", ".join(STATE_NAMES) + "]"

__all__ = ["FloatingBody", "FloatingSystem", "K_STAB", "STATE_NAMES", "WORLD_COLUMNS", "JOINT", "bias"]

JOINT = FreeJoint("world")  # the body's configuration and speeds (the module docstring)


# ---------------------------------------------------------------- declaration

@dataclass
class FloatingBody(Declaration):
    """A free rigid body under construction; hand it to `mechsym.derive`. Parameters
    and gravity (g = 9.81 m/s^2 along -z by default) follow mechsym.core.parameters.Declaration."""

    DOWN = (0, 0, -1)

    name: str
    doc: str = ""
    mass: sp.Expr | None = None
    inertia: sp.Matrix | None = None
    points: dict = field(default_factory=dict)

    def __post_init__(self):
        self._init_parameters()

    def _system(self, backend):
        return FloatingSystem(self, backend)

    def body(self, mass, inertia, points=None):
        """Mass and centroidal inertia in the body frame: a 3x3 matrix, or (Ixx, Iyy, Izz) for principal
        axes along the body axes. `points` maps names to (x, y, z) in the body frame (origin at the CoM)."""
        self.mass = sp.sympify(mass)
        inertia = inertia if not isinstance(inertia, (list, tuple)) or len(inertia) != 3 or \
            isinstance(inertia[0], (list, tuple)) else sp.diag(*inertia)
        try:
            mat = sp.Matrix(inertia)
        except (TypeError, ValueError):
            raise InputError(f"body '{self.name}': inertia must be 3x3 or three principal values, got {inertia!r}") from None
        if mat.shape != (3, 3):
            raise InputError(f"body '{self.name}': inertia must be 3x3 or three principal values, got shape {mat.shape}")
        if mat != mat.T:
            self._problems.append(f"body '{self.name}': inertia matrix is not symmetric")
        self.inertia = mat
        for name, xyz in (points or {}).items():
            self.point(name, xyz)
        return self.name

    def point(self, name, xyz):
        """A named point (x, y, z) in the body frame."""
        if name in self.points:
            self._problems.append(f"point '{name}' declared twice")
        self.points[name] = _vec3(xyz, f"point '{name}'")
        return name

    # -- reading ----------------------------------------------------------------------------------
    @property
    def moving_bodies(self):
        """The one moving body's name."""
        return [self.name]

    def check(self):
        """Raise ModelError listing every structural problem of the declaration."""
        problems = list(self._problems)
        if self.mass is None or self.inertia is None:
            problems.append("no mass and inertia (declare them with body(mass, inertia, points))")
        else:
            symbols = {p.symbol for p in self.parameters.values()}
            exprs = [self.mass, *self.inertia, *self.gravity] + [c for p in self.points.values() for c in p]
            stray = set().union(*(sp.sympify(e).free_symbols for e in exprs)) - symbols
            if stray:
                problems.append(f"body '{self.name}' uses undeclared symbols {sorted(map(str, stray))}")
        problems += default_problems(self.parameters)
        if problems:
            raise ModelError(self.name, problems)

    def resolve_parameters(self, overrides=None) -> dict:
        """Parameter values (name -> float) with `overrides` applied and checked, including the mass and
        inertia they give (positive mass, positive definite inertia obeying the triangle inequality)."""
        values, problems = apply_overrides(self.parameters, overrides)
        if not problems:
            symbols = tuple(p.symbol for p in self.parameters.values())
            out = _mass_and_inertia(self.mass, tuple(self.inertia), symbols)(list(values.values()))
            m, inertia = float(out[0]), out[1:].reshape(3, 3)
            eig = np.linalg.eigvalsh(inertia)
            if not m > 0:
                problems.append(f"body '{self.name}' has a non-positive mass {m:g}")
            if not eig.min() > 0:
                problems.append(f"body '{self.name}' has an inertia that is not positive definite "
                                f"(principal values {', '.join(f'{e:g}' for e in eig)})")
            elif eig[0] + eig[1] < eig[2] * (1 - 1e-12):
                problems.append(f"body '{self.name}' has principal inertias {', '.join(f'{e:g}' for e in eig)} "
                                "that break the triangle inequality")
        if problems:
            raise InputError(f"body '{self.name}': " + "; ".join(problems))
        return values


@functools.lru_cache(maxsize=64)
def _mass_and_inertia(mass, inertia, symbols):
    """[mass, the 9 inertia entries] as a function of the parameter values (generated once)."""
    return VectorFunction((symbols,), [mass, *inertia])


def _vec3(v, what):
    try:
        x, y, z = v
    except (TypeError, ValueError):
        raise InputError(f"{what}: expected three coordinates (x, y, z), got {v!r}") from None
    return (sp.sympify(x), sp.sympify(y), sp.sympify(z))


def bias(mass, inertia, gravity, R, velocity, omega, linear="world"):
    """The free rigid body's Newton-Euler about its centre of mass, the one set of equations every free body
    of mechsym is built on (this module's FloatingBody, mechsym.contact.box's RigidBox; a tree's free root
    agrees with it, tests/contact/test_floating.py): H (v', w') + b = (F, M), H = diag(m 1, I), with

        b = (-m g,                 w x I w)     linear "world": v the centre's velocity in the world frame
        b = (m (w x v) - m R^T g,  w x I w)     linear "local": v in the body frame (Pinocchio's free flyer)

    w the angular velocity, I the centroidal inertia and M the moment, all in the body frame; g the gravity
    vector (world), R the body-to-world rotation; F in v's frame. The pair (b_lin, b_ang), each three
    components: numbers for numeric arguments, sympy expressions for symbolic ones."""
    if linear not in ("world", "local"):
        raise InputError(f"free body: linear velocity frame must be 'local' or 'world', got {linear!r}")
    angular = _cross(omega, _times(inertia, omega))
    if linear == "world":
        return [-mass * gi for gi in gravity], angular
    down = _times(R, gravity, transpose=True)
    return [mass * (c - d) for c, d in zip(_cross(omega, velocity), down)], angular


def _times(M, x, transpose=False):
    """M x (or M^T x): sympy's matrix product for a sympy M, numpy's for numbers."""
    if isinstance(M, sp.MatrixBase):
        return list((M.T if transpose else M) * sp.Matrix(x))
    return (np.transpose(M) if transpose else np.asarray(M)) @ np.asarray(x, float)


def _cross(a, b):
    """a x b: sympy's cross product where either holds sympy expressions, numpy's for numbers."""
    if any(isinstance(c, sp.Basic) for c in (*a, *b)):
        return list(sp.Matrix(a).cross(sp.Matrix(b)))
    return np.cross(a, b)


def newton_euler(coords, speeds, qn, wn, force, moment, mass, inertia, gravity):
    """The rates (r', q', v', w') of the module docstring's equations from the coordinates (r, q), the
    speeds (v, w), the norms |q|, |w|, the force (world) and the moment (body frame): `bias` solved for
    the speeds' rates, the free joint's map with the quaternion's stabilising term for the coordinates'."""
    quat, w = coords[3:7], speeds[3:6]
    rdot_qdot = JOINT.qdot(coords, speeds)
    qdot = [c + K_STAB * wn * (1 - qn) * qc for c, qc in zip(rdot_qdot[3:7], quat)]
    b_lin, b_ang = bias(mass, inertia, gravity, None, speeds[:3], w, "world")
    vdot = [f / mass - b / mass for f, b in zip(force, b_lin)]
    wdot = inertia.LUsolve(sp.Matrix(moment) - sp.Matrix(b_ang))
    return (*rdot_qdot[:3], *qdot, *vdot, *wdot)


# ---------------------------------------------------------------- derived system

class FloatingSystem(ParametersInUse):
    """Everything derived for one floating body, with numeric entry points (all vectorised over samples:
    a state may be (13,) or (13, N)). Backend "c": the rates (`accelerations`, the ODE of `simulate` and of
    a contact run on numpy) come from the body's compiled library (mechsym.contact.c_run, cached by
    construction); the output work (world columns, points, energy) stays vectorised numpy."""

    nd = 3

    def __init__(self, body: FloatingBody, backend=None):
        from mechsym.codegen.backend import resolve

        body.check()
        self.body = self.mechanism = body
        self.backend = resolve(backend)
        sym = lambda names: tuple(sp.Symbol(n, real=True) for n in names.split())
        self.joint = JOINT
        self.r, self.quat = sym("x y z"), sym("qx qy qz qw")
        self.v, self.w = sym("vx vy vz"), sym("wx wy wz")
        self.force, self.moment = sym("Fx Fy Fz"), sym("Mx My Mz")
        self.coords, self.speeds = self.r + self.quat, self.v + self.w
        self.state = self.coords + self.speeds
        self.params_symbols = tuple(p.symbol for p in body.parameters.values())
        p = self.params_symbols
        m, inertia, g = body.mass, body.inertia, sp.Matrix(body.gravity)
        w, qv = sp.Matrix(self.w), self.quat
        qn = sp.sqrt(sum(c**2 for c in qv))
        wn = sp.sqrt(sum(c**2 for c in self.w))
        self.rate_exprs = newton_euler(self.coords, self.speeds, qn, wn, self.force, self.moment, m, inertia, g)
        self.R = rotation_matrix(qv)
        kinetic = (m * sum(c**2 for c in self.v) + (w.T * inertia * w)[0]) / 2
        potential = -m * sum(gi * ri for gi, ri in zip(g, self.r))
        self.rate = VectorFunction((self.state, self.force + self.moment, p), self.rate_exprs)
        self.energy = VectorFunction((self.state, p), [kinetic, potential])
        omega_world = self.R * w
        scalar_first = (qv[3], *qv[:3])                   # the columns' order: qw, qx, qy, qz
        self.world = VectorFunction((self.state,), [*self.r, *(c / qn for c in scalar_first), *self.v, *omega_world])
        self.point_names = tuple(body.points)
        self._points = VectorFunction((self.state, p), [c for name in self.point_names for c in
                                                        sp.Matrix(self.r) + self.R * sp.Matrix(body.points[name])])

    # -- parameters (mechsym.core.derived.DerivedSystem) --------------------------------------------
    @property
    def declaration(self) -> FloatingBody:
        """The FloatingBody this system was derived from."""
        return self.body

    @property
    def flops(self) -> dict:
        """Arithmetic operations per sample of the body's generated functions (codegen.spec.flops)."""
        from mechsym.codegen.spec import Spec, flops

        functions = {"rate": self.rate.function, "energy": self.energy.function, "world": self.world.function}
        return flops(Spec(self.body.name, {}, functions, None))

    @property
    def coordinate_names(self):
        """Names of the state's components (position, quaternion, velocities)."""
        return list(STATE_NAMES)

    @property
    def state_names(self):
        """The state `simulate` integrates (the module docstring's layout)."""
        return list(STATE_NAMES)

    # -- the pieces a point-contact model needs (see mechsym.contact.points) -------------------------
    def body_frame(self):
        """The symbolic frame of the body for contact points (mechsym.contact.points): (coordinate symbols,
        speed symbols, origin r, rotation R, origin velocity v, angular velocity R w in the world frame)."""
        return self.coords, self.speeds, sp.Matrix(self.r), self.R, sp.Matrix(self.v), self.R * sp.Matrix(self.w)

    def body_blocks(self):
        """Per body: (indices of its coordinates in q, indices of its speeds in the speed vector)."""
        return {self.body.name: (np.arange(7), np.arange(6))}

    def local_point(self, body_name, coords, values: dict):
        """Body-frame coordinates of a contact point (from the CoM), numeric."""
        if body_name != self.body.name:
            raise InputError(f"unknown body '{body_name}' (the floating body is '{self.body.name}')")
        if isinstance(coords, str):
            if coords not in self.body.points:
                raise InputError(f"body '{body_name}' has no point '{coords}' (points: {', '.join(self.body.points)})")
            coords = self.body.points[coords]
        subs = {self.body.parameters[n].symbol: v for n, v in values.items()}
        xyz = _vec3(coords, f"contact point on body '{body_name}'")
        try:
            out = np.array([float(sp.sympify(c).subs(subs)) for c in xyz])
        except TypeError:
            raise InputError(f"contact point {coords!r} on body '{body_name}' uses undeclared symbols") from None
        return out

    # -- states ---------------------------------------------------------------------------------------
    def initial_state(self, position=(0, 0, 0), *, quat_xyzw=(0, 0, 0, 1), velocity=(0, 0, 0),
                      omega=(0, 0, 0), omega_frame="world"):
        """A state vector (13,) from the centre's position and velocity (world), the body-to-world
        quaternion `quat_xyzw` = (qx, qy, qz, qw), scalar last as `mechsym.core.quaternion.about` gives it
        (normalised here), and the angular velocity in the world (default) or body frame. All but the
        position by keyword, so that no call reads a quaternion in another order."""
        arrays = {}
        for name, value, n in (("position", position, 3), ("quat_xyzw", quat_xyzw, 4),
                               ("velocity", velocity, 3), ("omega", omega, 3)):
            a = np.asarray(value, float)
            if a.shape != (n,):
                raise InputError(f"{name} must have {n} components, got shape {a.shape}")
            if not np.all(np.isfinite(a)):
                raise InputError(f"{name} must be finite, got {a}")
            arrays[name] = a
        qn = np.linalg.norm(arrays["quat_xyzw"])
        if not qn > 0:
            raise InputError("quat_xyzw (the quaternion) must be non-zero")
        quat = arrays["quat_xyzw"] / qn
        omega = arrays["omega"]
        if omega_frame == "world":
            omega = rotation_matrix(quat).T @ omega
        elif omega_frame != "body":
            raise InputError(f"omega_frame must be 'world' or 'body', got {omega_frame!r}")
        return np.concatenate([arrays["position"], quat, arrays["velocity"], omega])

    @staticmethod
    def normalise(y):
        """The state (13, ...) with its quaternion scaled to unit length (other entries unchanged)."""
        y = np.array(y, float)
        y[3:7] = np.moveaxis(quaternion.normalise(np.moveaxis(y[3:7], 0, -1)), -1, 0)
        return y

    def world_columns(self, y) -> dict:
        """Columns x, y, z, qw..qz (normalised), vx..vz, wx..wz (world frame) for states y (13, ...)."""
        values = self.world(np.asarray(y, float)[:13])
        return dict(zip(WORLD_COLUMNS, values))

    def state_from_columns(self, columns) -> np.ndarray:
        """States (13, N) from the world columns (x, y, z, qw, qx, qy, qz, vx, vy, vz, wx, wy, wz): the
        inverse of `world_columns`."""
        try:
            c = {k: np.asarray(columns[k], float) for k in WORLD_COLUMNS}
        except KeyError as exc:
            raise InputError(f"body '{self.body.name}': the columns lack {exc.args[0]!r} "
                             f"(expected {', '.join(WORLD_COLUMNS)})") from None
        quat = np.stack([c["qx"], c["qy"], c["qz"], c["qw"]], axis=-1)
        omega = np.stack([c["wx"], c["wy"], c["wz"]], axis=-1)
        body = np.einsum("...ji,...j->...i", rotation_matrix(quat), omega)           # w_body = R^T w_world
        return np.concatenate([np.stack([c["x"], c["y"], c["z"]]), np.moveaxis(quat, -1, 0),
                               np.stack([c["vx"], c["vy"], c["vz"]]), np.moveaxis(body, -1, 0)])

    def point_positions(self, y, params=None):
        """World positions (n_points, 3, ...) of the declared points."""
        p = self.params() if params is None else np.asarray(params, float)
        out = self._points(np.asarray(y, float)[:13], p)
        return out.reshape((len(self.point_names), 3) + out.shape[1:])

    # -- dynamics -----------------------------------------------------------------------------------
    def _c_rate(self):
        """The compiled rates (ms_rate of mechsym.contact.c_run's library of this body), loaded once."""
        if getattr(self, "_c_rate_fn", None) is None:
            from mechsym.contact import c_run

            self._c_rate_fn = c_run.library(self).dll.ms_rate
        return self._c_rate_fn

    def accelerations(self, y, generalised=None, params=None):
        """dy/dt (13, ...) at states y under extra generalised forces (F world, M body) (6, ...)."""
        y = np.asarray(y, float)
        p = self.params() if params is None else np.asarray(params, float)
        gen = np.zeros((6,) + y.shape[1:]) if generalised is None else np.asarray(generalised, float)
        return self.backend.route(compiled=self._compiled_accelerations, python=lambda *a: self.rate(*a))(y[:13], gen, p)

    def _compiled_accelerations(self, y, gen, p):
        from mechsym.codegen.c_library import _ptr

        shape = np.broadcast_shapes(y.shape[1:], gen.shape[1:])
        ys = np.ascontiguousarray(np.moveaxis(np.broadcast_to(y[:13], (13,) + shape), 0, -1).reshape(-1, 13))
        gs = np.ascontiguousarray(np.moveaxis(np.broadcast_to(gen, (6,) + shape), 0, -1).reshape(-1, 6))
        out = np.empty(ys.shape)
        self._c_rate()(len(ys), _ptr(ys), _ptr(gs), _ptr(np.ascontiguousarray(p if p.size else np.zeros(1))), _ptr(out))
        return np.moveaxis(out.reshape(shape + (13,)), -1, 0)

    def ode(self, params=None, load=None, n_states=0):
        """The ODE with extra states (the interface of mechsym.planar.simulate.EquationsOfMotion): `rhs(t, y)`
        for y = [13 body states, extra states] and `coordinates(y)` -> (coordinates (7), speeds (6))."""
        return FloatingODE(self, self.params(params), load, n_states)

    def simulate(self, state0, t_end, dt=None, rtol=1e-9, atol=None, params=None, load=None, extra0=(),
                 extra_names=(), events=(), method="DOP853") -> RunResult:
        """Integrate from `state0` (13,) = [x, y, z, qx, qy, qz, qw, vx, vy, vz, wbx, wby, wbz] (quaternion scalar last, see the module
        docstring; `initial_state` builds one) to t_end; `load(t, q, qd, s)` -> ((F, M) (6,), sdot) adds
        generalised forces and the rates of extra states s (initial values extra0), as planar `simulate`.
        A RunResult: t, the world columns, the extra states; events and the dense solution of solve_ivp."""
        y0 = np.asarray(state0, float)
        extra0 = np.atleast_1d(np.asarray(extra0, float))
        if y0.shape != (13,):
            raise InputError(f"state0 must have 13 values {LAYOUT}, got shape {y0.shape}")
        opts = run_options(t_end, dt, rtol, atol, arrays={"state0": y0, "extra0": extra0}, width=60)
        ode = self.ode(params, load, len(extra0))
        labels = list(extra_names) or [f"s{i}" for i in range(len(extra0))]
        sol = integrate(ode.rhs, np.concatenate([self.normalise(y0), extra0]), (0.0, opts.t_end), rtol=opts.rtol,
                        atol=opts.atol, method=method, name=f"body '{self.body.name}'", events=events)

        def columns(grid, y):
            return {"t": grid, **self.world_columns(y[:13]), **{n: y[13 + i] for i, n in enumerate(labels)}}

        return result(sol, opts, columns, f"{self.body.name}: simulation", events)

    def loaded(self, loads, backend=None):
        """The body under `loads` (e.g. mechsym.contact.rolling_disc.RollingDisc, BodyTorque) with a generated
        right-hand side and exact Jacobian, for stiff integration (mechsym.spatial.floating_loads.LoadedODE)."""
        from mechsym.spatial.floating_loads import LoadedODE

        return LoadedODE(self, loads, backend)


class FloatingODE:
    """rhs(t, y) of a floating body with a load and extra states; see FloatingSystem.ode."""

    n_model = 13

    def __init__(self, system, params, load, n_states):
        self.system, self.params, self.load, self.n_states = system, params, load, int(n_states)
        self._plist = np.asarray(params, float).tolist()
        self._rate = system.backend.route(compiled=self._compiled_rate, python=lambda: self._python_rate)()

    def _compiled_rate(self):
        """The body's rates on C for one state: rate(y13, gen) -> (13,)."""
        import ctypes

        fn, pointer = self.system._c_rate(), ctypes.POINTER(ctypes.c_double)
        self._p = p = np.ascontiguousarray(self.params if np.size(self.params) else np.zeros(1), float)
        pp = p.ctypes.data_as(pointer)                   # (self._p keeps the parameters alive)

        def rate(y, gen):
            y, gen, out = np.ascontiguousarray(y, float), np.ascontiguousarray(gen, float), np.empty(13)
            fn(1, y.ctypes.data_as(pointer), gen.ctypes.data_as(pointer), pp, out.ctypes.data_as(pointer))
            return out

        return rate

    def _python_rate(self, y, gen):
        """The body's rates on floats for one state (the numpy backend's rendering)."""
        try:
            return self.system.rate.one(y.tolist(), np.asarray(gen, float).tolist(), self._plist)
        except (OverflowError, ZeroDivisionError):  # a wild trial step: NaN makes the integrator reject it
            return np.full(13, np.nan)

    def coordinates(self, y):
        """(position and quaternion, velocities) of a state y."""
        return y[:7], y[7:13]

    def rhs(self, t, y):
        """The state's time derivative at (t, y) (solve_ivp's right-hand side)."""
        gen = np.zeros(6)
        sdot = np.zeros(0)
        if self.load is not None:
            gen, sdot = self.load(t, y[:7], y[7:13], y[13:])
        out = np.empty(len(y))
        out[:13] = self._rate(y[:13], gen)
        out[13:] = np.asarray(sdot, float).reshape(self.n_states)
        return out

    def project(self, y):
        """y with its quaternion normalised."""
        return self.system.normalise(y)
