"""The floating body under loads (`mechsym.spatial.floating.FloatingSystem.loaded`): each load (a rolling-disc
contact, a body-frame torque) writes its force and torque into one `mechsym.codegen.program.Program`, a
straight-line program of small sympy assignments carried with their forward-mode derivatives, so the
body's right-hand side (mechsym.spatial.floating's equations) and its exact Jacobian are generated
together (C through the C backend's cache, numpy without a compiler) for a stiff solver (BDF, Radau).
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from mechsym.codegen.program import Program
from mechsym.core.errors import InputError
from mechsym.core.quaternion import rotation_matrix
from mechsym.core.runner import integrate, result
from mechsym.core.timegrid import run_options
from mechsym.spatial.floating import LAYOUT, STATE_NAMES, newton_euler

__all__ = ["Frame", "BodyTorque", "LoadedODE", "floating_program"]


class Frame:
    """The body's symbolic frame as loads see it in a Program: centre of mass `position`, body-to-world
    `rotation`, `velocity` of the centre of mass and angular velocity `omega`, all in the world frame."""

    def __init__(self, position, rotation, velocity, omega):
        self.position, self.rotation, self.velocity, self.omega = position, rotation, velocity, omega


class BodyTorque:
    """A constant torque given in the body frame: a load for `FloatingSystem.loaded`.

    Loads have a `name`, `parameters()` (name -> value, the run-time values), `structure()` (text of what
    the generated code depends on besides the values) and `build(program, frame, p)` returning the force
    (world frame, through the centre of mass) and the torque about the centre of mass (world frame) as
    sympy 3-vectors; `p` maps the parameter names to their symbols. `check_state(system, y)` (optional)
    raises InputError for a state the load cannot handle."""

    def __init__(self, name, torque):
        self.name = name
        t = np.asarray(torque, float)
        if t.shape != (3,) or not np.all(np.isfinite(t)):
            raise InputError(f"torque '{name}' must be three finite numbers (body frame), got {torque!r}")
        self.torque = t

    def parameters(self):
        """The torque's components as parameters x, y, z [N m]."""
        return dict(zip(("x", "y", "z"), self.torque.tolist()))

    def structure(self):
        """The text that the generated code's cache key takes from this load."""
        return "body-frame torque"

    def build(self, program, frame, p):
        """(force, torque) on the body: no force, the body-frame torque turned to the world frame."""
        return sp.zeros(3, 1), frame.rotation * sp.Matrix([p["x"], p["y"], p["z"]])


class LoadedODE:
    """The floating body's ODE under loads, generated as one Program: the right-hand side and its exact
    Jacobian in C (compiled once, cached by content; numpy when no compiler exists), for a stiff solver.

    The code depends on the body's declaration and the loads' structure, not on the values: one library
    serves every mass, inertia, stiffness, friction coefficient... (they are run-time parameters)."""

    def __init__(self, system, loads, backend=None):
        from mechsym.codegen.backend import resolve

        names = [load.name for load in loads]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise InputError(f"body '{system.body.name}': loads named twice: {', '.join(twice)}")
        self.system, self.loads = system, tuple(loads)
        self._code = _generated(system, self.loads, resolve(backend))
        self.backend, self.param_names = self._code.backend, self._code.param_names

    def params(self, overrides=None) -> np.ndarray:
        """The run-time parameter vector: the body's (with `overrides`), then each load's."""
        values = dict(self.system.body.resolve_parameters(overrides))
        for load in self.loads:
            values.update({f"{load.name}.{k}": float(v) for k, v in load.parameters().items()})
        return np.array([values[n] for n in self.param_names])

    def rates(self, y, params=None):
        """dy/dt (13, ...) at states y (13, ...)."""
        return self._code.rates(y, self.params() if params is None else np.asarray(params, float))

    def jacobians(self, y, params=None):
        """d(dy/dt)/dy (13, 13, ...) at states y (13, ...): exact, from the generated derivatives."""
        return self._code.jacobians(y, self.params() if params is None else np.asarray(params, float))

    def check_state(self, y):
        """InputError if a load cannot handle the states y (13, N) (see BodyTorque for the protocol)."""
        for load in self.loads:
            check = getattr(load, "check_state", None)
            if check is not None:
                check(self.system, y)

    def simulate(self, state0, t_end, dt=None, rtol=1e-9, atol=None, method="BDF", params=None, columns=None):
        """Integrate from `state0` (13,) = [x, y, z, qx, qy, qz, qw, vx, vy, vz, wbx, wby, wbz] (quaternion scalar last, see the module
        docstring) with a stiff solver (BDF, Radau or LSODA: the generated Jacobian;
        an explicit method ignores it). A RunResult: the columns `columns(grid, y)` gives from the states y
        (13, N, unit quaternions) on the output grid (default: t and the world columns); its solution
        gives the states; stats: wall time of the integration, steps, right-hand sides, Jacobians, LU
        decompositions."""
        import time

        y0 = np.asarray(state0, float)
        if y0.shape != (13,):
            raise InputError(f"state0 must have 13 values {LAYOUT}, got shape {y0.shape}")
        if method not in ("BDF", "Radau", "LSODA", "RK45", "RK23", "DOP853"):
            raise InputError(f"unknown integration method '{method}' (BDF, Radau, LSODA, RK45, RK23, DOP853)")
        opts = run_options(t_end, dt, rtol, atol, arrays={"state0": y0}, width=60)
        y0 = self.system.normalise(y0)
        self.check_state(y0[:, None])
        p = self.params() if params is None else np.asarray(params, float)
        raw = self._code.single(p)[0]
        with np.errstate(all="ignore"):
            start = np.asarray(raw(0.0, y0), float)
        if not np.all(np.isfinite(start)):  # an initial value or a parameter too large to represent
            i = int(np.argmax(~np.isfinite(start)))
            raise InputError(f"body '{self.system.body.name}': the rate of {STATE_NAMES[i] if i < 13 else f'state {i}'} "
                             f"at t = 0 is {start[i]}: an initial value or a parameter is too large to represent "
                             f"(largest initial value {np.max(np.abs(y0)):.3g})")
        fun, jac = (self._guarded(f, what) for f, what in zip(self._code.single(p), ("rates", "Jacobian")))
        options = {"jac": jac} if method in ("BDF", "Radau", "LSODA") else {}
        wall = time.perf_counter()
        sol = integrate(fun, y0, (0.0, opts.t_end), rtol=opts.rtol, atol=opts.atol, method=method,
                        name=f"body '{self.system.body.name}'", explain=self._explain, **options)
        wall = time.perf_counter() - wall

        def states(t):
            """States (13, len(t)) from the dense output, with unit quaternions."""
            return self.system.normalise(sol.sol(np.asarray(t, float)))

        def table(grid, y):
            y = self.system.normalise(y)
            return columns(grid, y) if columns is not None else {"t": grid, **self.system.world_columns(y)}

        stats = dict(wall=wall, steps=len(sol.t) - 1, rhs_evaluations=int(sol.nfev), jacobians=int(sol.njev),
                     lu=int(sol.nlu), method=method, backend=self.backend)
        run = result(sol, opts, table, f"{self.system.body.name}: simulation")
        run.solution, run.stats = states, stats
        return run

    def _explain(self, t, y):
        """InputError naming the load and the time where a load cannot handle the state y (a disc lying flat:
        its rolling contact law degenerates)."""
        try:
            self.check_state(np.asarray(y, float)[:, None])
        except InputError as exc:
            raise InputError(f"body '{self.system.body.name}' at t = {t:.6g} s: {exc}") from None

    def _guarded(self, fn, what):
        """fn(t, y), checked: where its result is not finite, a state the loads cannot handle (a disc lying
        flat) is an InputError naming the load and the time; other non-finite rates are left to the
        integrator, which rejects the step (a wild trial state), and a non-finite Jacobian is an error."""
        name = self.system.body.name

        def call(t, y):
            out = fn(t, y)
            if not np.isfinite(out).all():
                self._explain(t, y)
                if what == "Jacobian":
                    raise InputError(f"body '{name}': the Jacobian overflowed at t = {t:.6g} s (state "
                                     f"{np.array2string(np.asarray(y), precision=4)})")
            return out

        return call


def floating_program(system, loads) -> Program:
    """The Program of the body's rates under `loads` (see LoadedODE): state y, parameters of the body
    (its declared names) and of each load ('load.name')."""
    body = system.body
    prog = Program(system.state)
    sub = {p.symbol: prog.param(name) for name, p in body.parameters.items()}
    mass, inertia = body.mass.xreplace(sub), body.inertia.xreplace(sub)
    gravity = sp.Matrix(body.gravity).xreplace(sub)
    q, w = system.quat, sp.Matrix(system.w)
    rot = rotation_matrix(q, prog.let)
    frame = Frame(sp.Matrix(system.r), rot, sp.Matrix(system.v), prog.vector(rot * w))
    force, torque = sp.zeros(3, 1), sp.zeros(3, 1)
    for load in loads:
        p = {k: prog.param(f"{load.name}.{k}") for k in load.parameters()}
        f, t = load.build(prog, frame, p)
        force, torque = force + sp.Matrix(f), torque + sp.Matrix(t)
    force, moment = prog.vector(force), prog.vector(rot.T * torque)
    qn, wn = prog.norm(sum(c**2 for c in q)), prog.norm(w.dot(w))
    prog.output(list(newton_euler(system.coords, system.speeds, qn, wn, force, moment, mass, inertia, gravity)))
    return prog


_GENERATED = {}  # content key -> the loaded program (without it the numpy route regenerates it per call)


def _generated(system, loads, backend):
    """The compiled (or numpy) rhs and Jacobian, from memory, from the C cache, or generated now."""
    import inspect
    from pathlib import Path

    from mechsym.codegen import program
    from mechsym.codegen.keys import cache_key, package_source

    body = system.body
    modules = {inspect.getsourcefile(type(load)) for load in loads}  # (mechsym's own: in package_source)
    parts = [body, package_source()]
    parts += [f"load {type(load).__module__}.{type(load).__qualname__} {load.name} {list(load.parameters())} "
              f"{load.structure()}" for load in loads]
    parts += [Path(m).read_text() for m in sorted(modules)] + [backend.name]
    key = cache_key(*parts)
    if key not in _GENERATED:
        _GENERATED[key] = program.load(f"floating-{body.name}", key, lambda: floating_program(system, loads), backend)
    return _GENERATED[key]
