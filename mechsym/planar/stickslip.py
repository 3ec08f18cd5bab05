"""Coulomb stick/slip of a prismatic coordinate, as modes of the hybrid runner (mechsym.core.hybrid).

A one-degree-of-freedom mechanism standing on a prismatic joint to a fixed ground body (a walker's foot on
the floor, a carriage on a rail) is declared with two coordinates: the driven one (theta, force T) and the
prismatic joint's travel x, whose generalised force is the friction the ground exerts along the joint; the
joint's normal reaction "JOINT.fn" presses the two together. Coulomb's law gives three contact modes:

* "stick": x' = 0 and x'' = 0 are imposed; the friction is an unknown of A U = C (one more column);
* "slip+" / "slip-": x slides towards +x / -x; x'' is unknown and the friction is -mu_k fn / +mu_k fn, one
  extra row of A U = C (Analysis.extra_rows), both solved together.

A stick mode ends when the friction needed exceeds mu_s fn (either way); a slip mode when the slip speed
returns to zero (the speed is then set to exactly zero and the mode chosen again); any mode when fn falls
to zero (lift-off: the run ends, there being no flight phase). The driven coordinate has an imposed speed
(inverse dynamics: T unknown) or an imposed force (forward dynamics: theta'' unknown).

The state is y = [theta, theta', x, x', motor work, friction dissipation]: the last two ride along for an
energy balance. The configuration is followed state by state by the project's tracker
(mechsym.planar.tracking.tracker); a trial state it cannot reach rejects the integrator's step.
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from mechsym.core.errors import InputError
from mechsym.planar.dynamics import energies, solve_at
from mechsym.planar.equations import Analysis
from mechsym.planar.kinematics import Kinematics, size_scale
from mechsym.planar.tracking import tracker

CONTACTS = ("stick", "slip+", "slip-")  # slip+: the joint slides towards +x (friction -mu_k fn)
COLUMNS = ("T", "friction", "fn", "m", "thetadd", "xdd")  # what `unknowns` adds to every solution


MAX_MU = 1e3  # a friction coefficient above this is no contact (any grip is reached long before) and only
#               overflows the friction bounds mu N


def check_friction(mu_s, mu_k):
    """(mu_s, mu_k) as floats: both finite, not negative and at most MAX_MU, mu_k not above mu_s."""
    for name, v in (("mu_s", mu_s), ("mu_k", mu_k)):
        if not np.isfinite(v) or v < 0:
            raise InputError(f"friction coefficient {name} = {v} must not be negative")
        if v > MAX_MU:
            raise InputError(f"friction coefficient {name} = {v:g} is above {MAX_MU:g}, beyond any contact")
    if mu_k > mu_s:
        raise InputError(f"kinetic friction mu_k = {mu_k} exceeds static friction mu_s = {mu_s}")
    return float(mu_s), float(mu_k)


def sliding(mode):
    """Whether a mode name (CONTACT or PREFIX/CONTACT) is a slip mode."""
    return mode.endswith(("slip+", "slip-"))


class StickSlip:
    """The contact modes of one derived build whose coordinate `slide` is a prismatic joint's travel.

    system: a derived System with exactly two coordinates, the driven one and `slide`; mu_s, mu_k: the
    friction coefficients, also set as the parameters named `mu_params` (the declaration's symbol of mu_k
    enters the Coulomb row); omega (imposed speed of the driven coordinate) or force (its imposed
    generalised force: a constant or f(t, theta, theta')); name: the prefix of the mode names
    ("NAME/stick", ...). The ground's moment on the sliding body, "JOINT.m", is reported as "m"."""

    def __init__(self, system, slide, mu_s, mu_k, params=None, omega=None, force=None, name="",
                 mu_params=("mu_s", "mu_k")):
        self.mu_s, self.mu_k = check_friction(mu_s, mu_k)
        if (omega is None) == (force is None):
            raise InputError("give either the driven coordinate's speed omega (inverse) or its force (forward)")
        coords = system.mechanism.coordinates
        names = [c.name for c in coords]
        if len(coords) != 2 or slide not in names:
            raise InputError(f"mechanism '{system.mechanism.name}': stick/slip needs two coordinates, the driven "
                             f"one and the prismatic '{slide}'; it has {', '.join(names)}")
        if names.index(slide) != 1:
            raise InputError(f"mechanism '{system.mechanism.name}': the prismatic coordinate '{slide}' must be "
                             "declared after the driven one")
        self.driven, self.slide = coords
        missing = [p for p in mu_params if p not in system.mechanism.parameters]
        if missing or self.slide.force is None:
            raise InputError(f"mechanism '{system.mechanism.name}': stick/slip needs the friction parameters "
                             f"{', '.join(mu_params)} and a force along '{slide}'")
        self.system, self.name, self.omega, self.force = system, name, omega, force
        self.params = dict(params or {}, **dict(zip(mu_params, (self.mu_s, self.mu_k))))
        self.solver = system.solver(self.params)
        self.scale = size_scale(system.constraints, self.solver.params)
        joint = self.slide.joint
        self.normal, self.moment = f"{joint}.fn", f"{joint}.m"
        con = system.constraints
        names = list(con.reaction_names)
        # rows of Phi_q whose multipliers are the driven force, the friction, fn and m (a reaction's unknown is
        # the multiplier of its row; a coordinate's force that of its driving row)
        self._rows = (con.n_joint_rows, con.n_joint_rows + 1, names.index(self.normal), names.index(self.moment))
        self.analyses = self._analyses(system.mechanism.parameters[mu_params[1]].symbol)
        self.tracker = self._key = self._last = None
        self._memo = {}

    def _analyses(self, mu_k):
        fn = sp.Symbol(self.normal, real=True)
        friction = sp.Symbol(self.slide.force, real=True)
        driven = () if self.omega is not None else (self.driven.name,)
        out = {"stick": Analysis("stick", free=driven)}
        for contact, sign in (("slip+", 1), ("slip-", -1)):
            out[contact] = Analysis(contact, free=driven + (self.slide.name,), unknown_forces=(self.slide.force,),
                                    extra_rows=(("coulomb", friction + sign * mu_k * fn),))
        return out

    def mode(self, contact):
        """The mode name of a contact."""
        return f"{self.name}/{contact}" if self.name else contact

    # -- the configuration, tracked -----------------------------------------------------------------
    def seed(self, coords, q0=None):
        """Track from the coordinates (theta, x): from q0 (coordinates near the configuration, handed over
        by another build), else by the continuation from the declared assembly."""
        self.tracker = tracker(self.system, self.solver, coords, q0)
        self._key = None

    def state(self, coords, rates):
        """The solved kinematics (one sample, with the factorisation of Phi_q) at coords (theta, x), and
        the acceleration offset a0 at the rates; StepRejected where the tracker cannot reach them."""
        coords, rates = np.asarray(coords, float), np.asarray(rates, float)
        key = coords.tobytes() + rates.tobytes()
        if key != self._key:
            if self.tracker is None:
                self.seed(coords)
            q, jq, a0, _ = self.tracker.state(coords, rates)
            kin = Kinematics(coords[None], q[None], jq[None], None, None, self.solver.params, self.tracker.factor,
                             self.solver.f.jac)
            self._key, self._last = key, (kin, a0)
        return self._last

    # -- A U = C of each contact mode --------------------------------------------------------------
    def unknowns(self, contact, kin, t, y, a0=None):
        """Every unknown of the contact mode's A U = C at the solved kinematics of N states y (N, 6) at
        times t (N,), in one batch, plus COLUMNS: T, friction, fn, m, thetadd, xdd (each (N,))."""
        n = len(y)
        forces = {}
        if self.force is not None:
            name, f = self.driven.force, self.force
            forces[name] = (np.array([float(f(*a)) for a in zip(t, y[:, 0], y[:, 1])]) if callable(f)
                            else np.full(n, float(f)))
        u = solve_at(self.system, kin, y[:, [1, 3]], self.analyses[contact], np.zeros((n, 2)), forces, a0)
        u["T"] = u[self.driven.force] if self.force is None else forces[self.driven.force]
        u["friction"], u["fn"], u["m"] = u[self.slide.force], u[self.normal], u[self.moment]
        u["thetadd"] = u.get(f"{self.driven.name}dd", np.zeros(n))
        u["xdd"] = u.get(f"{self.slide.name}dd", np.zeros(n))
        return u

    def solve(self, contact, t, y):
        """`unknowns` at one state y (6,) at time t, through the tracker: name -> float."""
        kin, a0 = self.state(y[[0, 2]], y[[1, 3]])
        u = self.unknowns(contact, kin, np.array([t]), np.asarray(y, float)[None], a0[None])
        return {k: float(v[0]) for k, v in u.items()}

    def quick(self, contact, t, y):
        """COLUMNS at one state (floats) from one ms_track_rows call on the C backend: each needed unknown is
        base + coef . (theta'', x'') (the tracker's `rows`), so the contact's A U = C reduces to the one or two
        accelerations it frees, solved in closed form. None where the tracker has no row entry (numpy) or
        needs its careful route (`solve` then answers)."""
        got = self.tracker.rows(y[[0, 2]], y[[1, 3]], self._rows)
        if got is None:
            return None
        self._key = None
        base, coef = got[2], got[3]
        (bt, bf, bn, bm), c = base.tolist(), coef.tolist()
        ct, cf, cn, cm = c
        known = None if self.force is None else float(self.force(t, y[0], y[1]) if callable(self.force) else self.force)
        sign = {"stick": 0.0, "slip+": 1.0, "slip-": -1.0}[contact]
        mu = sign * self.mu_k
        # equations in a = (theta'', x''): the driven force is known (forward) and friction + mu fn = 0 (slip)
        if contact == "stick":
            a = ((known - bt) / ct[0], 0.0) if known is not None else (0.0, 0.0)
        elif known is None:
            a = (0.0, -(bf + mu * bn) / (cf[1] + mu * cn[1]))
        else:
            a11, a12, r1 = ct[0], ct[1], known - bt
            a21, a22, r2 = cf[0] + mu * cn[0], cf[1] + mu * cn[1], -(bf + mu * bn)
            det = a11 * a22 - a12 * a21
            a = ((r1 * a22 - a12 * r2) / det, (a11 * r2 - a21 * r1) / det)
        value = lambda b, k: b + k[0] * a[0] + k[1] * a[1]  # noqa: E731
        return {"T": value(bt, ct) if known is None else known, "friction": value(bf, cf), "fn": value(bn, cn),
                "m": value(bm, cm), "thetadd": a[0], "xdd": a[1]}

    def along(self, contact, t, y):
        """`unknowns` at N states (N, 6) of a run, their kinematics solved in one sweep."""
        return self.unknowns(contact, self.solver.sweep(y[:, [0, 2]]), t, y)

    def energy(self, y):
        """Kinetic plus potential energy at a state (a sweep: independent of the tracker's history)."""
        kin = self.solver.sweep(np.asarray(y, float)[None, [0, 2]])
        ke, pe = energies(self.system, kin, np.array([[y[1], y[3]]]))
        return float(ke[0] + pe[0])

    # -- the hybrid modes ---------------------------------------------------------------------------
    def rhs(self, contact):
        """y' at (t, y) in a contact mode."""
        def f(t, y):
            u = self.cached(contact, t, y)
            return [y[1], u["thetadd"], y[3], u["xdd"], u["T"] * y[1], -u["friction"] * y[3]]

        return f

    def cached(self, contact, t, y):
        """COLUMNS at a state (`quick`, else `solve`), remembered (the last few) by (contact, t, positions
        and rates): the guards at a state ask for what the right-hand side has solved there."""
        key = (contact, t, np.asarray(y[:4], float).tobytes())
        hit = self._memo.get(key)
        if hit is None:
            if len(self._memo) > 64:
                self._memo.clear()
            if self.tracker is None:
                self.seed(y[[0, 2]])
            hit = self.quick(contact, t, y) or self.solve(contact, t, y)
            self._memo[key] = hit
        return hit

    def choose(self, t, y):
        """The mode at a state: sliding if the joint moves, else stick if static friction holds, else
        sliding the way the unbalanced friction demand pushes."""
        if abs(y[3]) > 1e-12 * max(1.0, abs(y[1]) * self.scale):
            return self.mode("slip+" if y[3] > 0 else "slip-")
        u = self.cached("stick", t, y)
        if abs(u["friction"]) <= self.mu_s * u["fn"]:
            return self.mode("stick")
        return self.mode("slip-" if u["friction"] > 0 else "slip+")

    def transitions(self, contact):
        """The contact's own transitions (hybrid.Transition): stick -> slip both ways, slip stops, and
        lift-off (ends the run); a model lists its own (a support change) before these."""
        from mechsym.core.hybrid import Transition

        trs = []
        if contact == "stick":
            def over_plus(t, y):  # friction needed towards +x exceeds mu_s fn: slides to -x
                u = self.cached("stick", t, y)
                return self.mu_s * u["fn"] - u["friction"]

            def over_minus(t, y):
                u = self.cached("stick", t, y)
                return self.mu_s * u["fn"] + u["friction"]

            trs += [Transition("stick->slip", over_plus, self.mode("slip-"), -1),
                    Transition("stick->slip", over_minus, self.mode("slip+"), -1)]
        else:
            def stops(t, y):
                return y[3]

            def zero_speed(t, y):
                y = np.array(y, float)
                y[3] = 0.0
                return y

            trs.append(Transition("slip stops", stops, self.choose,
                                  -1 if contact == "slip+" else 1, zero_speed))

        def normal(t, y):
            return self.cached(contact, t, y)["fn"]

        trs.append(Transition("lift-off", normal, None, -1))
        return trs

    def modes(self, before=(), max_step=np.inf):
        """The three hybrid.Mode of this build, each with the transitions `before` first."""
        from mechsym.core.hybrid import Mode

        return [Mode(self.mode(c), self.rhs(c), tuple(before) + tuple(self.transitions(c)), max_step)
                for c in CONTACTS]

    def slips(self, result):
        """Slip episodes of a hybrid run: (t_start, t_end, displacement of x) of each stay in a slip mode."""
        return [(seg.t0, seg.t1, seg.y1[2] - seg.y0[2]) for seg in result.segments
                if sliding(seg.mode) and seg.t1 > seg.t0]
