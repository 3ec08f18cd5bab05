"""A mechanism standing on two rolling contacts of a track: its configuration and the exact derivatives of
its configuration and contact forces by the imposed coordinates, all derived from the declaration.

With one body as the reference (pose X, Y of its centre of mass and angle psi), the imposed coordinates
(`inputs`, e.g. a vehicle's leg angles) and the contact wheels' angles, the joint rows of the declaration
are solved symbolically, once: first the rows in the angles only (linear: a joint's drive is a difference
of body angles), then the rest, linear in the positions. Every body coordinate, every point and every
other coordinate (a wheel's spin on its leg) is then an expression of those arguments.

Standing on the track: the lead wheel's centre is on the offset curve at the given contact x_lead, the
trailing wheel's at the contact x_trail behind it (mechsym.planar.wheels.rear_contact) at the distance |d| that
the declaration sets between the two centres (d(inputs), in the reference body's frame); psi turns d onto
W(x_lead) - W(x_trail). The wheels roll without slip: a wheel's angle is beta - s/r (s the arc length from
x0). Derivatives by the inputs at a fixed lead contact: the closure rot(psi) d(inputs) = W(x_lead) -
W(x_trail) differentiated implicitly, symbolically (the track enters through W'(x_trail), exact); then
every coordinate by the chain rule, with d theta_trail / d x_trail = -|W'| / r and d beta / dx = f'' / (1 +
f'^2) from rolling; the contact forces (mechsym.planar.rolling.ContactStatics) by their exact partials.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass, field

import numpy as np
import sympy as sp

from mechsym.codegen import VectorFunction
from mechsym.core.errors import InputError, ModelError
from mechsym.planar.constraints import point_position, rot
from mechsym.planar.wheels import rear_contact
from mechsym.planar.track import load_track


def at_rest(reference):
    """The reference body's centre of mass at the origin and its frame along the axes."""
    return dict(zip(reference, (0, 0, 0)))


def finite_array(value, name):
    """value as a 1-D float array, refused (InputError naming it) unless finite."""
    a = np.atleast_1d(np.asarray(value, float))
    if not np.all(np.isfinite(a)):
        raise InputError(f"{name} must be finite, got {value}")
    return a


@dataclass
class StancePose:
    """Configurations at samples (arrays of one shape): contacts, slopes, the reference angle, the inputs."""

    stance: "Stance"
    values: tuple  # parameter values
    track: object
    x_lead: np.ndarray
    x_trail: np.ndarray
    beta_lead: np.ndarray
    beta_trail: np.ndarray
    angle: np.ndarray
    inputs: tuple
    centres: tuple  # ((wx, wy) of the trailing wheel, (wx, wy) of the lead wheel)
    _cache: dict = field(default_factory=dict, repr=False)

    def wheel_angles(self, x0=0.0):
        """Absolute angles of the trailing and lead wheels rolling without slip, measured from contact x0."""
        key = ("wheels", float(x0))
        if key not in self._cache:
            t, (rt, rl) = self.track, self.stance.radii(self.values)
            self._cache[key] = (t.slope(self.x_trail) - t.arc_length_from(self.x_trail, x0) / rt,
                                t.slope(self.x_lead) - t.arc_length_from(self.x_lead, x0) / rl)
        return self._cache[key]

    def arguments(self, x0=0.0, used=None):
        """(X, Y, psi, *inputs, theta_trail, theta_lead): the arguments of the stance's compiled expressions;
        with `used` (indices) only those are computed (0 for the others: the wheel angles need arc lengths)."""
        n_in = len(self.inputs)
        used = set(range(5 + n_in) if used is None else used)
        out = [0.0] * (5 + n_in)
        out[2], out[3:3 + n_in] = self.angle, self.inputs
        if used & {0, 1}:
            if "XY" not in self._cache:
                (wx, wy), _ = self.centres
                c = self.stance.compiled(self.values, "trail_centre")(*self.inputs)
                co, si = np.cos(self.angle), np.sin(self.angle)
                self._cache["XY"] = (wx - (co * c[0] - si * c[1]), wy - (si * c[0] + co * c[1]))
            out[0], out[1] = self._cache["XY"]
        if used & {3 + n_in, 4 + n_in}:
            out[3 + n_in:] = self.wheel_angles(x0)
        return out


class Stance:
    """The configuration of a mechanism on the two rolling contacts of `statics` (mechsym.planar.rolling), with the
    body `reference` as the free body and the coordinates named `inputs` imposed; `lead` names the contact
    whose position is given (default the last), the other trails behind it."""

    def __init__(self, statics, reference, inputs, lead=None):
        mech, con = statics.mechanism, statics.constraints
        if len(statics.contacts) != 2:
            raise InputError(f"mechanism '{mech.name}': a stance needs two rolling contacts, got {len(statics.contacts)}")
        if reference not in con.bodies:
            raise InputError(f"mechanism '{mech.name}': reference '{reference}' is not a moving body")
        names = [c.name for c in statics.contacts]
        lead = names[-1] if lead is None else lead
        if lead not in names:
            raise InputError(f"mechanism '{mech.name}': no contact named '{lead}' (contacts: {', '.join(names)})")
        self.statics, self.mechanism, self.constraints, self.reference_body = statics, mech, con, reference
        self.lead = statics.contacts[names.index(lead)]
        self.trail = statics.contacts[1 - names.index(lead)]
        theta = {str(s): s for s in con.theta}
        unknown = [n for n in inputs if n not in theta]
        if unknown:
            raise InputError(f"mechanism '{mech.name}': inputs {unknown} are not coordinates ({', '.join(theta)})")
        self.inputs = tuple(theta[n] for n in inputs)
        self.reference = con.poses[reference]
        self.wheel_angle_symbols = (con.poses[self.trail.body][2], con.poses[self.lead.body][2])
        self.args = (*self.reference, *self.inputs, *self.wheel_angle_symbols)
        self.q = self._solve_rows()
        subs = dict(zip(con.q, self.q))
        driven = [c for c in mech.coordinates if theta[c.name] not in self.inputs]
        # every other coordinate from its drive row (rows are drive - coordinate)
        k0 = con.n_joint_rows
        self.outputs = {c.name: (con.rows[k0 + i] + theta[c.name]).xreplace(subs)
                        for i, c in enumerate(mech.coordinates) if c in driven}
        poses = {b: tuple(self.q[3 * i:3 * i + 3]) for i, b in enumerate(con.bodies)}
        poses[mech.fixed] = con.poses[mech.fixed]
        self.poses = poses
        rest = at_rest(self.reference)
        self.trail_centre = point_position(mech, poses, self.trail.body, self.trail.centre).xreplace(rest)
        self.lead_centre = point_position(mech, poses, self.lead.body, self.lead.centre).xreplace(rest)
        if (self.trail_centre.free_symbols | self.lead_centre.free_symbols) & (set(self.args) - set(self.inputs)):
            raise ModelError(mech.name, ["the contact wheels' centres must follow from the inputs alone (a wheel "
                                         "centre on its axle)"])
        self._compiled = {}
        self._checked = weakref.WeakKeyDictionary()  # track -> checked ranges

    def _solve_rows(self):
        """Every body coordinate as an expression of self.args: the joint rows and the inputs' drive rows
        solved, angles first, then positions (both linear)."""
        con = self.constraints
        k0 = con.n_joint_rows
        rows = list(con.rows[:k0]) + [con.rows[k0 + i] for i, s in enumerate(con.theta) if s in self.inputs]
        known = set(self.reference) | set(self.wheel_angle_symbols)
        angles = [con.poses[b][2] for b in con.bodies if con.poses[b][2] not in known]
        positions = [s for b in con.bodies for s in con.poses[b][:2] if s not in known]
        solution = {}
        for unknowns in (angles, positions):
            chosen = set(unknowns)
            later = (set(positions) - chosen) if unknowns is angles else set()
            part = [r.xreplace(solution) for r in rows if r.free_symbols & chosen and not r.free_symbols & later]
            try:
                found = sp.linsolve(part, unknowns)
            except (ValueError, sp.polys.polyerrors.PolynomialError, NotImplementedError):
                found = sp.EmptySet
            if len(found) != 1 or next(iter(found)).free_symbols & chosen:
                raise ModelError(self.mechanism.name, [
                    f"the joints do not place every body from '{self.reference_body}', the "
                    f"inputs {[str(s) for s in self.inputs]} and the contact wheels' angles one way"])
            solution.update(zip(unknowns, next(iter(found))))
        return tuple(solution.get(s, s) for s in con.q)

    # -- compiled expressions (parameter values folded in) ------------------------------------------------
    def compiled(self, values, what, which=None):
        """A numeric function of the stance's arguments (or of the inputs only, for the centres), cached per
        parameter values. what: 'trail_centre', 'lead_centre' (reference frame, relative to its centre of
        mass, functions of the inputs), 'local' (`which` = (body, point): see `local`), 'q' (the body
        coordinates at the indices `which`), 'point' (`which` = (body, point)), 'outputs', or 'derivatives'
        (see `derivatives`)."""
        key = (tuple(values), what, which)
        if key not in self._compiled:
            subs = dict(zip(self.constraints.params, (sp.Float(v) for v in values)))
            if what in ("trail_centre", "lead_centre"):
                expr, args = list(getattr(self, what).xreplace(subs)), list(self.inputs)
            elif what == "q":
                expr, args = [self.q[i].xreplace(subs) for i in which], list(self.args)
            elif what == "local":  # a point in the reference frame, from its centre of mass, and by the inputs
                local = point_position(self.mechanism, self.poses, *which).xreplace(at_rest(self.reference))
                local = local.xreplace(subs)
                expr, args = list(local) + list(local.jacobian(sp.Matrix(self.inputs))), list(self.inputs)
            elif what == "point":
                expr = list(point_position(self.mechanism, self.poses, *which).xreplace(subs))
                args = list(self.args)
            elif what == "outputs":
                expr, args = [e.xreplace(subs) for e in self.outputs.values()], list(self.args)
            else:
                expr, args = self._derivative_expressions(which)
                expr = [e.xreplace(subs) for e in expr]
            rendered = VectorFunction([(a,) for a in args], expr)
            fn = lambda *values, rendered=rendered: rendered.outputs(*[(v,) for v in values])
            fn.used = [i for i, a in enumerate(args[:len(self.args)]) if any(e.has(a) for e in expr)]
            self._compiled[key] = fn
        return self._compiled[key]

    def _call(self, pose, what, which, x0, *extra):
        fn = self.compiled(pose.values, what, which)
        return fn(*pose.arguments(x0, fn.used), *extra)

    def radii(self, values):
        """The wheel radii (trailing, lead) at the parameter values."""
        subs = dict(zip(self.constraints.params, values))
        return float(self.trail.radius.xreplace(subs)), float(self.lead.radius.xreplace(subs))

    # -- the position problem --------------------------------------------------------------------------
    def spacing(self, values, inputs):
        """Distance R between the wheel centres and the angle gamma of trail -> lead in the reference frame."""
        a = self.compiled(values, "trail_centre")(*inputs)
        b = self.compiled(values, "lead_centre")(*inputs)
        dx, dy = np.asarray(b[0] - a[0], float), np.asarray(b[1] - a[1], float)
        return np.hypot(dx, dy), np.arctan2(dy, dx)

    def prepare(self, track, r, x_lo, x_hi):
        """Check the track where the wheels will go: finite, curvature below 1/r (cached per track object
        and range; a freed track's entry goes with it, so another track is always checked)."""
        ranges = self._checked.setdefault(track, set())
        key = (round(x_lo, 6), round(x_hi, 6), r)
        if key not in ranges:
            track.check_curvature(r, x_lo, x_hi)
            ranges.add(key)

    def place(self, values, track, x_lead, inputs, paired=False, guess=None, pose_type=StancePose):
        """The position problem. x_lead (M,), inputs (P,) each: shapes (M, P); paired=True: inputs (M,),
        one set per lead contact, shapes (M,). `guess`: nearby trailing contacts (a continuation)."""
        track = load_track(track)
        x_lead = finite_array(x_lead, "x_front" if self.lead.name == "front" else "x_lead")
        inputs = np.broadcast_arrays(*(finite_array(v, str(s)) for v, s in zip(inputs, self.inputs)))
        R, gamma = self.spacing(values, inputs)
        rt, rl = self.radii(values)
        if rl != rt:
            raise InputError("wheels of different radii: the position problem takes one radius")
        if paired:
            if len(inputs[0]) != len(x_lead):
                raise InputError("paired placement needs one angle pair per front contact")
            R2, shape = R[:, None], (len(x_lead),)
        else:
            R2, shape = R, (len(x_lead), len(inputs[0]))
        self.prepare(track, rt, float(x_lead.min()) - float(R.max()) - 2 * rt - 0.05, float(x_lead.max()))
        if guess is not None:
            guess = np.asarray(guess, float).reshape(R2.shape if paired else shape)
        x_trail = rear_contact(track, rt, x_lead, R2, guess=guess).reshape(shape)
        xl = x_lead if paired else np.broadcast_to(x_lead[:, None], shape)
        ins = tuple(v if paired else np.broadcast_to(v[None, :], shape) for v in inputs)
        g = gamma if paired else gamma[None, :]
        wtx, wty, *_, beta_t = track.offset(x_trail, rt)
        wlx, wly, *_, beta_l = track.offset(x_lead, rl)
        if not paired:
            wlx, wly, beta_l = wlx[:, None], wly[:, None], beta_l[:, None]
        angle = np.arctan2(wly - wty, wlx - wtx) - g
        return pose_type(self, tuple(values), track, xl, x_trail, np.broadcast_to(beta_l, shape), beta_t, angle, ins,
                         ((wtx, wty), (np.broadcast_to(wlx, shape), np.broadcast_to(wly, shape))))

    def coordinates(self, pose, which=None, x0=0.0):
        """The body coordinates q (declaration order) at the poses, or those at the indices `which`."""
        which = tuple(range(len(self.q)) if which is None else which)
        return self._call(pose, "q", which, x0)

    def local(self, values, body, point, inputs):
        """A declared point in the reference body's frame, from its centre of mass, at the inputs, and its
        derivatives by them: (x, y), [(dx/du, dy/du) per input]."""
        out = self.compiled(values, "local", (body, point))(*inputs)
        n = len(self.inputs)
        return (out[0], out[1]), [(out[2 + j], out[2 + n + j]) for j in range(n)]

    def point(self, pose, body, point, x0=0.0):
        """World position (x, y) of a declared point of a body at the poses."""
        return self._call(pose, "point", (body, point), x0)

    # -- exact derivatives by the inputs at a fixed lead contact ----------------------------------------
    def _derivative_expressions(self, which):
        """[dq_i/du_j for i in which, then d x_trail/du_j, then d output/du_j] for every input u_j, as
        expressions of (args, W'(x_trail) = (dwx, dwy))."""
        psi = self.reference[2]
        dwx, dwy = sp.symbols("dwx dwy", real=True)
        closure = rot(psi) * (self.lead_centre - self.trail_centre)  # = W(x_lead) - W(x_trail)
        j_u = sp.Matrix.hstack(closure.diff(psi), sp.Matrix([dwx, dwy]))  # by psi and x_trail
        j_in = closure.jacobian(sp.Matrix(self.inputs))
        det = j_u.det()
        rates = -(j_u.adjugate() * j_in) / det  # rows: dpsi/du, dx_trail/du
        r_t = self.trail.radius
        X, Y, _ = self.reference
        # the trailing centre stays on W(x_trail): d(X, Y) = W' dx_trail - d(rot(psi) c_trail)
        c_t = rot(psi) * self.trail_centre
        q_all = list(self.q) + list(self.outputs.values())
        targets = [q_all[i] for i in which] + list(self.outputs.values())
        out = []
        for j, u in enumerate(self.inputs):
            dpsi, dxt = rates[0, j], rates[1, j]
            dxy = sp.Matrix([dwx, dwy]) * dxt - c_t.diff(psi) * dpsi - c_t.diff(u)
            dtheta_t = -sp.sqrt(dwx**2 + dwy**2) / r_t * dxt
            moves = {X: dxy[0], Y: dxy[1], psi: dpsi, u: 1, self.wheel_angle_symbols[0]: dtheta_t}
            for e in targets:
                out.append(sum((e.diff(s) * v for s, v in moves.items() if e.has(s)), sp.Integer(0)))
            out.append(dxt)
        return out, list(self.args) + [dwx, dwy]

    def derivatives(self, pose, which, x0=0.0):
        """Exact derivatives by each input at a fixed lead contact, one dict per input: q index -> array for
        the coordinates `which`, 'x_trail', 'beta_trail', and every other coordinate by name."""
        which = tuple(which)
        rt = self.radii(pose.values)[0]
        _, d1, d2 = pose.track.eval(pose.x_trail)
        _, _, dwx, dwy, _ = pose.track.offset(pose.x_trail, rt)
        flat = self._call(pose, "derivatives", which, x0, dwx, dwy)
        n = len(which) + len(self.outputs) + 1
        out = []
        for j in range(len(self.inputs)):
            part = flat[j * n:(j + 1) * n]
            d = dict(zip(which, part[:len(which)]))
            d.update(zip(self.outputs, part[len(which):-1]))
            d["x_trail"] = part[-1]
            d["beta_trail"] = d2 / (1 + d1 * d1) * part[-1]
            out.append({k: np.broadcast_to(v, pose.angle.shape) for k, v in d.items()})
        return out

    def forces(self, pose, names, derivatives=False, x0=0.0):
        """The equilibrium unknowns `names` (ContactStatics) at the poses; with `derivatives` also their exact
        derivatives by each input at a fixed lead contact, and those of the other coordinates (by name):
        (values, [name -> array, one dict per input])."""
        st, con = self.statics, self.constraints
        which = self._needed(tuple(names))
        q = [0.0] * len(con.q)
        for i, v in zip(which, self.coordinates(pose, which, x0)):
            q[i] = v
        betas = {self.trail.angle: pose.beta_trail, self.lead.angle: pose.beta_lead}
        beta = [betas[b] for b in st.betas]
        wrt = tuple(con.q[i] for i in which) + (self.trail.angle,) if derivatives else ()
        values = st.solve(q, beta, pose.values, list(names), wrt=wrt)
        if not derivatives:
            return values, None
        per_input = []
        for d in self.derivatives(pose, which, x0):
            rates = {n: sum(values[(n, con.q[i])] * d[i] for i in which) + values[(n, self.trail.angle)] * d["beta_trail"]
                     for n in names}
            rates.update({k: d[k] for k in self.outputs})
            per_input.append(rates)
        return values, per_input

    def _needed(self, names):
        """Indices of the body coordinates the unknowns `names` depend on (cached)."""
        key = ("needed", names)
        if key not in self._compiled:
            needed = set().union(*(self.statics.solution[n].free_symbols for n in names))
            self._compiled[key] = tuple(i for i, s in enumerate(self.constraints.q) if s in needed)
        return self._compiled[key]

    def output_values(self, pose, x0=0.0):
        """Every other coordinate (not an input: e.g. a wheel's spin on its leg) by name, wheels rolling from x0."""
        return dict(zip(self.outputs, self._call(pose, "outputs", None, x0)))
