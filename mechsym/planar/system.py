"""A derived mechanism: the declaration carried through topology, constraints and equations, compiled.

`mechsym.derive(mechanism)` gives the `System`, which answers every analysis for any
parameter values (parameters are arguments of the generated code, so changing one does not re-derive).
"""
from __future__ import annotations

from functools import cached_property

import numpy as np
import sympy as sp

from mechsym.codegen.backend import resolve
from mechsym.core.errors import InputError
from mechsym.core.parameters import ParametersInUse
from mechsym.core.results import RunResult, Table
from mechsym.planar import dynamics, forward, reduced
from mechsym.planar.constraints import derive_constraints
from mechsym.planar.equations import derive_equations, latex_names, reduced_form, symbolic_system
from mechsym.planar.kinematics import KinematicFunctions
from mechsym.planar.solver import Solver
from mechsym.planar.model import Mechanism
from mechsym.planar.simulate import simulate as simulate_mechanism
from mechsym.planar.topology import analyse


SCALAR_MAX = 24  # coordinates up to which a simulation state is solved on floats (System.state_step)


class System(ParametersInUse):
    """Everything mechsym derived for one mechanism, with numeric entry points."""

    def __init__(self, mech: Mechanism, backend=None):
        from mechsym.core.progress import stage

        self.mechanism = mech
        self.topology = analyse(mech)
        with stage(f"{mech.name}: deriving"):
            self.constraints = con = derive_constraints(mech, self.topology)
            self.equations = derive_equations(con)
        self.backend = resolve(backend)
        # the generated functions: the compiled library, or the numpy printer's rendering of the same spec
        with stage(f"{mech.name}: generated functions ({self.backend}; C from the cache, or compiled)"):
            self.functions = self.backend.mechanism(self)
        self.kin = KinematicFunctions(con, self.functions, self.backend)
        self.mass, self.applied, self.energy = self.functions.mass, self.functions.applied, self.functions.energy
        self.gamma = self.kin.gamma
        self._solvers = {}
        self._analyses = {}
        self._param_cache = {}

    @cached_property
    def spec(self):
        """The codegen spec of this mechanism (mechsym.planar.spec): what every backend renders."""
        from mechsym.planar.spec import generate

        return generate(self)

    @cached_property
    def loads(self):
        """The loads of velocity or time and the force elements' columns (mechsym.planar.loads.LoadFunctions), or
        None when the mechanism has neither."""
        from mechsym.planar.loads import LoadFunctions

        eqs = self.equations
        return LoadFunctions(self) if eqs.moving_loads or eqs.elements else None

    @property
    def gamma3(self):
        """Phi_q q3 = -gamma3(q, q', q'', p) (q3 the third derivative): the C library's, or rendered with
        numpy on first use."""
        return self.functions.gamma3

    @property
    def applied_rate(self):
        """q' . (dQ/dq) q' as a function of (q, q', p): the C library's, or rendered with numpy on first use."""
        return self.functions.applied_rate

    def state_step(self, floats=False):
        """The generated one-state step of a run's configuration tracker (mechsym.planar.tracking): the
        compiled library (ms_track, ms_walk, ms_track_rows) where Phi_q is square; on the numpy backend, for
        a caller that runs on floats (`floats`: a one-coordinate forward run), the step's rendering on floats
        (mechsym.codegen.scalar_python.ScalarTracker) where Phi_q is square and small (at most SCALAR_MAX
        coordinates: the fourbar's 9 run 8x faster on floats than through numpy, PASIBOT's 69 slower). None
        otherwise: the tracker then solves each state with numpy."""
        return self.backend.route(compiled=lambda: self.functions if self.functions.meta["square"] else None,
                                  python=lambda: self._scalar_step if floats else None)()

    @cached_property
    def _scalar_step(self):
        from mechsym.codegen.scalar_python import ScalarTracker

        con = self.constraints
        return ScalarTracker(self.spec) if len(con.rows) == con.n and con.n <= SCALAR_MAX else None

    # -- parameters (mechsym.core.derived.DerivedSystem) --------------------------------------------
    @property
    def declaration(self) -> Mechanism:
        """The Mechanism this system was derived from."""
        return self.mechanism

    def vector(self, overrides) -> np.ndarray:
        """The parameter vector of exactly these overrides, checked (with the masses and inertias they give)
        once per set."""
        key = tuple(sorted((k, repr(v)) for k, v in overrides.items()))
        if key not in self._param_cache:
            _bound(self._param_cache)
            p = super().vector(overrides)
            self._check_inertia(p, overrides)
            self._param_cache[key] = p
        return self._param_cache[key].copy()

    @cached_property
    def flops(self) -> dict:
        """Arithmetic operations per sample of each generated function of the spec (codegen.spec.flops)."""
        from mechsym.codegen.spec import flops

        return flops(self.spec)

    def _check_inertia(self, p, overrides):
        """Masses and inertias from parameters that overflow (density=1e308) are refused, naming the body."""
        with np.errstate(all="ignore"):
            mass = np.asarray(self.mass(p), float).ravel()
        bad = ~np.isfinite(mass)
        if bad.any():
            i = int(np.argmax(bad))
            given = ", ".join(f"{k}={v}" for k, v in (overrides or {}).items()) or "the defaults"
            raise InputError(f"mechanism '{self.mechanism.name}': the {('mass', 'mass', 'inertia')[i % 3]} of body "
                             f"'{self.constraints.bodies[i // 3]}' is {mass[i]} with {given}: a parameter is too "
                             "large to represent")

    def solver(self, overrides=None) -> Solver:
        """The kinematic Solver at a parameter set (cached for the last sets)."""
        p = self.params(overrides)
        key = p.tobytes()
        if key not in self._solvers:
            _bound(self._solvers)
            self._solvers[key] = Solver(self.kin, p)
        return self._solvers[key]

    @property
    def coordinate_names(self):
        """Names of the driven coordinates, in declaration order."""
        return [c.name for c in self.mechanism.coordinates]

    # -- change of fixed body ------------------------------------------------------------------------
    def handover(self, q, target: "System", params) -> np.ndarray:
        """Coordinates q (n,) of this build re-expressed in `target`, a build of the same bodies with
        another fixed body (a walker's other support foot): every pose moved by the rigid motion that takes
        target's fixed body from its pose here to its own frame. params: the parameter vector of both. The
        target's tracking starts from the result (Newton corrects it to rounding), so a change of fixed body
        keeps the assembly branch without a continuation from the declared assembly. With the same fixed body
        the coordinates are only reordered."""
        mech, fixed = self.mechanism, target.mechanism.fixed
        if set(target.constraints.bodies) | {fixed} != set(self.constraints.bodies) | {mech.fixed}:
            raise InputError(f"mechanism '{mech.name}': cannot hand a configuration over to build "
                             f"'{target.mechanism.name}': its bodies differ")
        subs = dict(zip(self.constraints.params, np.asarray(params, float)))
        com = {b: np.array([float(c.xreplace(subs)) for c in mech.bodies[b].com]) for b in (mech.fixed, fixed)}
        poses = {b: q[3 * i: 3 * i + 3] for i, b in enumerate(self.constraints.bodies)}
        poses[mech.fixed] = np.append(com[mech.fixed], 0.0)
        x, y, th = poses[fixed]
        c, s = np.cos(th), np.sin(th)
        out = []
        for b in target.constraints.bodies:  # centre of mass relative to the fixed body's, turned by -th
            dx, dy = poses[b][0] - x, poses[b][1] - y
            out += [com[fixed][0] + c * dx + s * dy, com[fixed][1] - s * dx + c * dy, poses[b][2] - th]
        return np.array(out)

    def point_state(self, kin, thetad, point):
        """Position and velocity (fixed frame) of a named point of a moving body at the first sample of the
        solved kinematics `kin`, at coordinate rates thetad (k,): exact, by rigid-body motion."""
        mech, con = self.mechanism, self.constraints
        owner = next((b for b in con.bodies if point in mech.bodies[b].points), None)
        if owner is None:
            raise InputError(f"mechanism '{mech.name}': no moving body has a point '{point}'")
        i = con.bodies.index(owner)
        qd = kin.velocities(np.atleast_2d(np.asarray(thetad, float)))[0]
        x, y, th = kin.q[0, 3 * i: 3 * i + 3]
        vx, vy, w = qd[3 * i: 3 * i + 3]
        subs = dict(zip(con.params, kin.params))
        body = mech.bodies[owner]
        local = np.array([float(body.points[point][k].xreplace(subs)) - float(body.com[k].xreplace(subs)) for k in range(2)])
        c, s = np.cos(th), np.sin(th)
        r = np.array([c * local[0] - s * local[1], s * local[0] + c * local[1]])
        return np.array([x, y]) + r, np.array([vx - w * r[1], vy + w * r[0]])

    # -- analyses -----------------------------------------------------------------------------------
    def kinematics(self, theta, params=None, start=None):
        """Positions and exact derivatives at the samples `theta` (N,) or (N, k), in their order: a
        `mechsym.planar.kinematics.Kinematics` with named fields. q (N, n): per moving body, in the order of
        `self.constraints.bodies`, its centre of mass x, y [m] and angle [rad] (q[:, 3i:3i+3]); dq
        (N, n, k): dq/dtheta per coordinate; ddq (N, n): d2q/dtheta2 (one coordinate; None otherwise);
        theta (N, k); jac (N, n, n) the constraint Jacobian; params the parameter vector.
        `kinematics_table` gives the same by name."""
        theta = np.asarray(theta, float)
        _check_finite(theta, "coordinate values")
        if theta.ndim <= 1:
            theta = theta.reshape(-1, 1) if len(self.coordinate_names) == 1 else theta.reshape(1, -1)
        return self.solver(params).sweep(theta, start)

    def kinematics_table(self, theta, params=None, rates=False, omega=None, alpha=0.0, kin=None) -> Table:
        """Body angles and centres of mass, and every named point, per sample (fixed frame).

        rates=True (one coordinate) adds the exact velocity and acceleration coefficients of each column
        c: "c'" = dc/dtheta and "c''" = d2c/dtheta2; with `omega` (rad/s) and `alpha` (rad/s^2) the
        rates themselves instead: per body BODY.vx, BODY.vy, BODY.omega, BODY.ax, BODY.ay, BODY.alpha
        (centre of mass; angular), per point POINT.vx, POINT.vy, POINT.ax, POINT.ay. `kin`: the kinematics
        at theta already solved with these parameters (a sweep's compiled call of many sets), else solved here."""
        kin = self.kinematics(theta, params) if kin is None else kin
        cols = {name: kin.theta[:, i] for i, name in enumerate(self.coordinate_names)}
        units = {name: c.unit for name, c in zip(self.coordinate_names, self.mechanism.coordinates)}
        for i, b in enumerate(self.constraints.bodies):
            cols[f"{b}.angle"] = kin.q[:, 3 * i + 2]
            cols[f"{b}.x"] = kin.q[:, 3 * i]
            cols[f"{b}.y"] = kin.q[:, 3 * i + 1]
            units.update({f"{b}.angle": "rad", f"{b}.x": "m", f"{b}.y": "m"})
        pts = self.kin.points(kin.q.T, kin.params)
        for i, name in enumerate(self.kin.point_names):
            cols[f"{name}.x"], cols[f"{name}.y"] = pts[2 * i], pts[2 * i + 1]
            units.update({f"{name}.x": "m", f"{name}.y": "m"})
        if self.loads is not None:  # the force elements: their length (angle), and at omega their rate and force
            qd = kin.dq[:, :, 0] * (omega or 0.0) if kin.ddq is not None else np.zeros_like(kin.q)
            element_cols = self.loads.columns(kin.q, qd, None, kin.params)
            keep = [n for n in self.loads.names if omega is not None or n.endswith((".length", ".angle"))]
            cols.update({n: element_cols[n] for n in keep if n in element_cols})
            units.update({n: self.loads.units[n] for n in keep if n in element_cols})
        if rates or omega is not None:
            from mechsym.planar.rates import rate_columns

            rate_cols, rate_units = rate_columns(self, kin, cols, omega, alpha)
            cols.update(rate_cols)
            units.update(rate_units)
        return Table(cols, units, f"{self.mechanism.name}: kinematics")

    def inverse(self, theta, omega, alpha=0.0, params=None, inertia=True) -> Table:
        """Driving forces and every reaction with the motion imposed; see mechsym.planar.dynamics.inverse. A
        declaration valid on a window of its coordinate only (`Mechanism.valid_between`) warns outside it."""
        self.mechanism.check_valid(theta)
        return dynamics.inverse(self, theta, omega, alpha, params, inertia)

    def solve(self, theta, thetad, analysis, thetadd=None, forces=None, params=None) -> dict:
        """Any analysis at N states (several coordinates); see mechsym.planar.dynamics.solve."""
        return dynamics.solve(self, theta, thetad, analysis, thetadd, forces, params)

    def forward(self, torque, theta0, omega0, t_end, **options) -> Table:
        """Motion under given driving forces; see mechsym.planar.forward.forward."""
        return forward.forward(self, torque, theta0, omega0, t_end, **options)

    @property
    def state_names(self) -> list:
        """The state `simulate` integrates: each coordinate, then its rate NAMEd."""
        return [*self.coordinate_names, *(f"{n}d" for n in self.coordinate_names)]

    def simulate(self, state0, t_end, dt=None, rtol=1e-9, atol=None, params=None, method="DOP853",
                 **options) -> RunResult:
        """Motion from state0 = [coordinates, rates] under the declared loads and `options` (forces, load,
        extra states, events); see mechsym.planar.simulate.simulate."""
        state0 = np.asarray(state0, float)
        k = len(self.coordinate_names)
        if state0.shape != (2 * k,):
            raise InputError(f"state0 of mechanism '{self.mechanism.name}' must have {2 * k} values "
                             f"({', '.join(self.state_names)}), got shape {state0.shape}")
        return simulate_mechanism(self, state0[:k], state0[k:], t_end, dt, rtol, atol, params, method=method,
                                  **options)

    def reduced(self, kin):
        """Lagrange reduced form at solved kinematics: a `mechsym.planar.reduced.Reduced` (M, half_dM, G), each
        (N,), unpacking as a tuple; see mechsym.planar.reduced.reduced."""
        return reduced.reduced(self, kin)

    def ode(self, theta, omega, torque=0.0, params=None):
        """The reduced ODE's right-hand side and exact Jacobian; see mechsym.planar.reduced.ode."""
        return reduced.ode(self, theta, omega, torque, params)

    # -- printing -----------------------------------------------------------------------------------
    def view(self, path=None, table=None, positions=None, columns=None, trace=None, samples=360, params=None,
             frames=None):
        """An interactive view in the browser (a plotly Figure, shown inline in a notebook; written to the
        self-contained HTML file `path` if given): the linkage through the rows of `table` (a run or inverse
        table with the driven coordinate; default the kinematics over one revolution in `samples` steps)
        with its `columns` beside it (mechsym.core.view.mechanism_view, docs/view.md). `positions`: the
        points at those rows (default: the table's own where it has them, else the kinematics there)."""
        from mechsym.core.view import mechanism_view, write_html

        if table is None:
            table = self.kinematics_table(2 * np.pi * np.arange(samples) / samples, params)
        coord = self.coordinate_names[0]
        if coord not in table:
            raise InputError(f"the table has no column '{coord}' (the driven coordinate of '{self.mechanism.name}')")
        if positions is None:
            has_points = all(f"{p}.x" in table for p in self.kin.point_names)
            positions = table if has_points else self.kinematics_table(table[coord], params)
        fig = mechanism_view(self, table, positions, columns, trace, frames)
        if path is not None:
            write_html(fig, path)
        return fig

    def _repr_latex_(self, max_rows=24):
        """The Newton-Euler system A U = C of the inverse analysis in LaTeX (a notebook shows it); a
        larger system is summarised by its size (`equations_text(latex=True)` prints it whole)."""
        from mechsym.planar.equations import inverse as inverse_analysis

        a, u, c = symbolic_system(self.equations, inverse_analysis(self.mechanism))
        name = self.mechanism.name.replace("_", r"\_")
        if a.shape[0] > max_rows:
            return (rf"$\text{{{name}: }} A\,U = C\text{{ with {a.shape[0]} Newton-Euler rows and "
                    rf"{a.shape[1]} unknowns (see equations\_text(latex=True))}}$")
        names = latex_names(self.constraints)
        return (rf"$$\text{{{name}: }}\underbrace{{{sp.latex(a, symbol_names=names)}}}_{{A}}"
                rf"{sp.latex(u)} = {sp.latex(c, symbol_names=names)}$$")

    def equations_text(self, latex=False, analysis=None) -> str:
        """The A U = C system and the reduced form, as text or LaTeX."""
        from mechsym.planar.equations import inverse as inverse_analysis

        analysis = analysis or inverse_analysis(self.mechanism)
        a, u, c = symbolic_system(self.equations, analysis)
        rows = self.equations.row_names
        out = []
        if latex:
            out.append(r"% Newton-Euler rows (" + ", ".join(rows) + ")")
            out.append(r"\underbrace{" + sp.latex(a) + r"}_{A}" + sp.latex(u) + "="
                       + sp.latex(c, symbol_names=latex_names(self.constraints)))
        else:
            out.append(f"A U = C, {a.shape[0]} rows x {a.shape[1]} unknowns ({analysis.name})")
            out.append("U = " + ", ".join(map(str, u)))
            for i, name in enumerate(rows):
                terms = [f"({sp.sstr(a[i, j])})*{u[j]}" for j in range(a.shape[1]) if a[i, j] != 0]
                out.append(f"[{name}] " + " + ".join(terms) + f" = {sp.sstr(c[i])}")
        if len(self.coordinate_names) == 1:
            th, big_m, half_dm, g_term = reduced_form(self.equations)
            force = self.mechanism.coordinates[0].force or "0"
            if latex:
                names = latex_names(self.constraints, big_m, half_dm, g_term)
                out.append(r"% Reduced (Lagrange) form: M(\theta)\ddot\theta + \tfrac12 M'(\theta)\dot\theta^2 + G(\theta) = T")
                out.append(rf"M({sp.latex(th)}) = {sp.latex(big_m, symbol_names=names)}")
                out.append(rf"\tfrac12 M'({sp.latex(th)}) = {sp.latex(half_dm, symbol_names=names)}")
                out.append(rf"G({sp.latex(th)}) = {sp.latex(g_term, symbol_names=names)}")
            else:
                out.append(f"Reduced form: M({th}) {th}dd + 1/2 M'({th}) {th}d^2 + G({th}) = {force}")
                out.append(f"M = {sp.sstr(big_m)}")
                out.append(f"1/2 M' = {sp.sstr(half_dm)}")
                out.append(f"G = {sp.sstr(g_term)}")
        return "\n".join(out)


def _bound(cache, size=64):
    """Keep a per-parameter-set cache small: a sweep over many sets must not grow it without end."""
    while len(cache) >= size:
        cache.pop(next(iter(cache)))


def _check_finite(values, what):
    if not np.all(np.isfinite(values)):
        raise InputError(f"{what} contain a non-finite value")
