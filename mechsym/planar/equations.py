"""Symbolic Newton-Euler equations of every moving body, and the analyses that rearrange them into A U = C.

Per moving body b, three rows (force x, force y, moment about the centre of mass):

    sum of joint reactions + sum of generalised-coordinate forces + applied loads = m_b a_b, I_b alpha_b

The reaction columns are the gradients of the joint constraints (see mechsym.planar.constraints), so A is
sparse with constant +-1 entries in the force rows and moment arms in the moment rows, as in the
chapter's hand-written systems. An `Analysis` says which symbols are unknown: reactions always; for each
generalised coordinate either its force (motion imposed) or its acceleration (force given); optionally
extra unknowns (a load parameter) and extra rows (a friction law, two torques tied equal).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import sympy as sp

from mechsym.core.errors import InputError
from mechsym.core.forces import TIME, JointTorque, PointLoad
from mechsym.planar.constraints import Constraints, cross2, point_position
from mechsym.planar.model import PointForce


@dataclass(frozen=True)
class Equations:
    con: Constraints
    row_names: tuple  # "BODY.x", "BODY.y", "BODY.m"
    mass: tuple  # diagonal of the mass matrix, per coordinate
    applied: tuple  # generalised applied forces (gravity and loads) of position alone, per coordinate
    kinetic: sp.Expr
    potential: sp.Expr  # gravity only
    motion: tuple = ()  # generalised forces of loads that depend on the velocities or the time: Q(q, qd, t, p)
    elements: tuple = ()  # per force element: (element, measure, rate, force) in q, qd, t, p

    @property
    def moving_loads(self) -> bool:
        """Whether a load depends on the velocities or the time (`motion`)."""
        return any(e != 0 for e in self.motion)

    def unknown_symbol(self, name: str) -> sp.Symbol:
        """The sympy symbol of an unknown by its name."""
        return sp.Symbol(name, real=True)

    @cached_property
    def applied_rate(self) -> sp.Expr:
        """qd . (dQ/dq) qd: with qd = q' the derivative of -G = Q . q' along theta is this plus Q . q''."""
        qd = sp.Matrix(self.con.qd)
        return (qd.T * sp.Matrix(self.applied).jacobian(sp.Matrix(self.con.q)) * qd)[0, 0]


class PlanarGeometry:
    """The named quantities of a mechanism as exact expressions in its coordinates q and velocities qd
    (mechsym.core.forces.Geometry): what a load's or a force element's symbols stand for."""

    def __init__(self, con: Constraints):
        self.con = con
        self.mechanism = con.mechanism

    def position(self, body, point) -> sp.Matrix:
        """The point's position (x, y) in the fixed frame, in q."""
        return point_position(self.mechanism, self.con.poses, body, point)

    def velocity(self, body, point) -> sp.Matrix:
        """The point's velocity: the Jacobian of its position by its body's coordinates times their rates."""
        if body == self.mechanism.fixed:
            return sp.zeros(2, 1)
        q = self.con.q[self.con.body_slice(body)]
        qd = self.con.qd[self.con.body_slice(body)]
        return self.position(body, point).jacobian(sp.Matrix(q)) * sp.Matrix(qd)

    def angle(self, body):
        """The body's frame angle (0 for the fixed body)."""
        return self.con.poses[body][2]

    def rate(self, body):
        """The body's angular velocity (0 for the fixed body)."""
        return sp.Integer(0) if body == self.mechanism.fixed else self.con.qd[self.con.body_slice(body)][2]

    def joint_angle(self, joint):
        """A joint's second body's angle minus its first's."""
        j = self.mechanism.joints[joint]
        return self.angle(j.body2) - self.angle(j.body1)

    def joint_rate(self, joint):
        """The rate of `joint_angle`."""
        j = self.mechanism.joints[joint]
        return self.rate(j.body2) - self.rate(j.body1)

    def substitution(self) -> dict:
        """{named-quantity symbol: its expression} for every quantity the mechanism declared."""
        out = {}
        for sym, qty in self.mechanism.quantities.items():
            if qty.kind in ("position", "velocity"):
                out[sym] = getattr(self, qty.kind)(qty.body, qty.point)[qty.axis]
            else:
                out[sym] = getattr(self, qty.kind)(qty.body)
        return out


def derive_equations(con: Constraints) -> Equations:
    """Newton-Euler rows (force x, force y, moment per moving body), the mass diagonal, the applied forces
    (those of position alone, and those of the velocities or the time apart), the force elements' measures
    and the energies of a mechanism's constraints."""
    mech = con.mechanism
    gx, gy = mech.gravity
    mass, applied, rows = [], [], []
    index = {b: i for i, b in enumerate(con.bodies)}
    for b in con.bodies:
        body = mech.bodies[b]
        mass += [body.mass, body.mass, body.inertia]
        applied += [body.mass * gx, body.mass * gy, sp.Integer(0)]
        rows += [f"{b}.x", f"{b}.y", f"{b}.m"]
    geo = PlanarGeometry(con)
    named = geo.substitution()
    loads = []  # (body, point or None, force (fx, fy) or torque), in named quantities
    for load in mech.loads:
        loads.append((load.body, load.point, load.force) if isinstance(load, PointForce) else (load.body, None, load.torque))
    for element in mech.elements:
        for load in element.loads(geo):
            if isinstance(load, PointLoad):
                loads.append((load.end.body, load.end.point, load.force))
            elif isinstance(load, JointTorque):
                joint = mech.joints[load.joint]
                loads += [(joint.body1, None, load.torque), (joint.body2, None, -load.torque)]
    motion = [sp.Integer(0)] * len(applied)
    moving = set(con.qd) | {TIME}
    for body, point, value in loads:
        if body == mech.fixed:
            continue
        i = 3 * index[body]
        if point is not None:
            force = tuple(sp.sympify(f).xreplace(named) for f in value)
            arm = point_position(mech, con.poses, body, point) - sp.Matrix(con.poses[body][:2])
            terms = {i: force[0], i + 1: force[1], i + 2: cross2(arm, force)}
        else:
            terms = {i + 2: sp.sympify(value).xreplace(named)}
        target = motion if any(e.free_symbols & moving for e in terms.values()) else applied
        for k, e in terms.items():
            target[k] += e
    elements = tuple((e, e.measure(geo), e.rate(geo), e.force(geo).xreplace(named)) for e in mech.elements)
    qd = con.qd
    kinetic = sum(m * v**2 for m, v in zip(mass, qd)) / 2
    potential = -sum(mech.bodies[b].mass * (gx * con.poses[b][0] + gy * con.poses[b][1]) for b in con.bodies)
    return Equations(con, tuple(rows), tuple(mass), tuple(applied), kinetic, sp.sympify(potential), tuple(motion),
                     elements)


@dataclass(frozen=True)
class Analysis:
    """Which quantities are unknown in A U = C.

    free: generalised coordinates whose accelerations are unknown (their forces are given);
    the others have imposed motion and unknown forces. inertia=False drops the inertia terms
    (quasi-static). extra_unknowns: parameter names moved into U. extra_rows: (name, expression) pairs,
    each linear in the unknowns and equal to zero; unknowns are written as sympy symbols named like the
    result columns ("A.fx", "torque", "thetadd" for the acceleration of coordinate theta).
    unknown_forces: forces of free coordinates that are unknown too (both the acceleration and the force of
    the coordinate are in U), each fixed by an extra row (a Coulomb friction law, a force tied to another).
    """

    name: str
    free: tuple = ()
    inertia: bool = True
    extra_unknowns: tuple = ()
    extra_rows: tuple = field(default_factory=tuple)
    unknown_forces: tuple = ()

    def unknown_names(self, con: Constraints) -> tuple:
        """Names of the unknowns in A's column order: reactions, then per coordinate its force or (free) its
        acceleration, then the extra unknowns."""
        names = list(con.reaction_names)
        for c in con.mechanism.coordinates:
            if c.name in self.free:
                names.append(f"{c.name}dd")
            else:
                names.append(c.force)
        return tuple(names) + tuple(self.unknown_forces) + tuple(self.extra_unknowns)

    def validate(self, con: Constraints):
        """Raise InputError naming every coordinate, force or parameter of this analysis the mechanism does not
        have."""
        mech = con.mechanism
        problems = []
        coords = {c.name: c for c in mech.coordinates}
        for name in self.free:
            if name not in coords:
                problems.append(f"unknown coordinate '{name}'")
        for c in mech.coordinates:
            if c.force is None and c.name not in self.free:
                problems.append(f"coordinate '{c.name}' has no driving force, so its motion cannot be imposed")
        for name in self.unknown_forces:
            owner = [c for c in mech.coordinates if c.force == name]
            if not owner:
                problems.append(f"unknown force '{name}' is not the force of a coordinate")
            elif owner[0].name not in self.free:
                problems.append(f"force '{name}' is already unknown (coordinate '{owner[0].name}' is not free)")
        for name in self.extra_unknowns:
            if name not in mech.parameters:
                problems.append(f"extra unknown '{name}' is not a parameter")
        n_unknown = len(self.unknown_names(con))
        n_rows = con.n + len(self.extra_rows)
        if n_unknown != n_rows:
            problems.append(f"{n_unknown} unknowns for {n_rows} equations")
        if problems:
            raise InputError(f"analysis '{self.name}' of mechanism '{mech.name}': " + "; ".join(problems))


def inverse(mech, inertia=True) -> Analysis:
    """Motion imposed on every coordinate; reactions and driving forces unknown."""
    return Analysis("quasi-static" if not inertia else "inverse", free=(), inertia=inertia)


def forward(mech) -> Analysis:
    """Forces given on every coordinate; reactions and accelerations unknown."""
    return Analysis("forward", free=tuple(c.name for c in mech.coordinates))


def symbolic_system(eqs: Equations, analysis: Analysis):
    """The A U = C system with kinematic quantities as symbols, for printing (the chapter's form).

    Returns (A, U, C) sympy matrices for the inverse-type unknowns (reactions and coordinate forces);
    C holds m a - applied loads with the accelerations as symbols xdd_b, ydd_b, thetadd_b.
    """
    con = eqs.con
    names = [n for n in analysis.unknown_names(con)]
    jac_t = con.jacobian.T
    columns, c_vec = [], sp.Matrix([m * a for m, a in zip(eqs.mass, con.qdd)]) if analysis.inertia else sp.zeros(con.n, 1)
    c_vec = c_vec - sp.Matrix(eqs.applied) - sp.Matrix(eqs.motion or [0] * con.n)
    for i in range(con.n_joint_rows):
        columns.append(jac_t[:, i])
    for k, c in enumerate(con.mechanism.coordinates):
        if c.name in analysis.free:
            columns.append(sp.Matrix([-m * sp.Symbol(f"d{q}/d{c.name}") for m, q in zip(eqs.mass, con.q)]))
        else:
            columns.append(jac_t[:, con.n_joint_rows + k])
    for k, c in enumerate(con.mechanism.coordinates):
        if c.force in analysis.unknown_forces:
            columns.append(jac_t[:, con.n_joint_rows + k])
    return sp.Matrix.hstack(*columns), sp.Matrix([sp.Symbol(n) for n in names[: len(columns)]]), c_vec


def reduced_form(eqs: Equations):
    """The Lagrange (virtual power) reduced form of a one-coordinate mechanism, with kinematic
    coefficients as symbols: M(theta), 1/2 M'(theta) and G(theta) such that M thetadd + 1/2 M' thetad^2 + G = T
    (G also of thetad and t where a load depends on the velocities or the time: qd = q' thetad)."""
    con = eqs.con
    c = con.mechanism.coordinates[0].name
    d1 = [_derivative_symbol(q, "'") for q in con.q]
    d2 = [_derivative_symbol(q, "''") for q in con.q]
    big_m = sum(m * a**2 for m, a in zip(eqs.mass, d1))
    half_dm = sum(m * a * b for m, a, b in zip(eqs.mass, d1, d2))
    speed = {v: a * sp.Symbol(f"{c}d", real=True) for v, a in zip(con.qd, d1)}
    loads = [f + sp.sympify(m).xreplace(speed) for f, m in zip(eqs.applied, eqs.motion or [0] * con.n)]
    g_term = -sum(f * a for f, a in zip(loads, d1))
    return sp.Symbol(c), big_m, half_dm, g_term


def _derivative_symbol(q, primes):
    """x_crank -> x'_crank: the primes on the base, so that LaTeX prints x'_{crank}."""
    base, sep, sub = q.name.partition("_")
    return sp.Symbol(f"{base}{primes}{sep}{sub}")


def latex_names(con: Constraints, *exprs) -> dict:
    """LaTeX for the symbols that sympy would print poorly, for sympy.latex(..., symbol_names=...): the
    accelerations (thetadd_crank -> \\ddot{\\theta}_{crank}) and the derivative symbols in `exprs`
    (theta'_crank -> {\\theta'_{crank}}, braced so that a power can follow)."""
    names = {}
    for q, qdd in zip(con.q, con.qdd):
        base, _, sub = q.name.partition("_")
        names[qdd] = rf"\ddot{{{sp.latex(sp.Symbol(base))}}}_{{{sub}}}"
    for sym in set().union(set(), *(sp.sympify(e).free_symbols for e in exprs)):
        base, sep, sub = sym.name.partition("_")
        if "'" in base:
            stem = base.rstrip("'")
            names[sym] = "{" + sp.latex(sp.Symbol(stem)) + base[len(stem):] + (f"_{{{sub}}}" if sep else "") + "}"
    return names
