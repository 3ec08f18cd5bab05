"""Featherstone's spatial_v2 compliant ground-contact model for points (gcontact, Fpt), in numpy.

The model. Each point meets a massless, nonlinear spring-damper ground on its own (Azad & Featherstone
2010, for points instead of spheres). With depth d = -z and r = sqrt(max(0, d)):

    normal force    fn = r (-K z - D zdot) = K d^1.5 - D d^0.5 zdot,   in contact iff fn > 0
    sticking force  ft = -r (K u + D v_t),  u = tangential ground deflection (a state you integrate)
    friction cone   ratio = |ft| / (mu fn); if ratio > 1 the point slips and ft is scaled onto the cone
    deflection rate ud = v_t (stick), -(ft_s + K r u)/(D r) (slip), -(K/D) u (no contact)

A point below the ground but rising faster than the ground recovers (zdot >= K d / D) is out of contact,
so the ground never pulls. Every point is in exactly one state: no contact, stick or slip.

Conventions. 3-D: the ground is z = 0, +z up, tangential directions x, y. 2-D: the ground is y = 0, +y up,
tangential direction x. The normal coordinate is always the last one. Forces are those the ground
exerts on the points, in absolute coordinates.

Choosing K and D (from the spatial_v2 docs). They describe the total compliance between body and ground
(soft feet on concrete: the feet's). K = F / d^1.5 gives a force F at compression d (see
`static_penetration` for the inverse); points in contact together act as springs in parallel. D/K is
the time constant of the unloaded ground: a lost deflection decays like exp(-K t / D). A larger K/D
gives bouncier contacts and smaller integration steps. Example 7 uses K = 1e6, D = 2000 (2 ms), mu = 0.1
("soft, very slippery plastic"); a safe non-slip floor has mu of about 0.5.

Differences from spatial_v2's MATLAB `gcontact`:
  * it always returns the three outputs (f, ud, fcone); no stacked single output
    (``np.vstack([f, ud, fcone])`` rebuilds it);
  * mu = 0 is an ordinary case: f keeps the full nd x np shape with zero tangential rows, ud = -(K/D) u
    for every point, and an in-contact point has fcone = 0 (stick) when its sticking force is exactly
    zero, else 2 (slip: any tangential force leaves the degenerate cone);
  * u may be omitted (None), meaning zero deflection;
  * bad input (K or D not positive, mu negative, non-finite values, wrong shapes) raises InputError
    instead of producing Inf/NaN.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mechsym.codegen.constants import NO_CONTACT, SLIP, STICK
from mechsym.core.errors import InputError

__all__ = ["NO_CONTACT", "STICK", "SLIP", "STATE_NAMES", "gcontact", "Fpt", "GroundContact", "ContactResult",
           "static_penetration", "laws_in_states"]

STATE_NAMES = {NO_CONTACT: "none", STICK: "stick", SLIP: "slip"}  # a contact's state as timelines print it


# ---------------------------------------------------------------- validation

def _array(x, name):
    try:
        return np.asarray(x, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name} must be numeric: {exc}") from None


def _scalar(x, name, *, zero_ok=False):
    a = _array(x, name)
    if a.ndim != 0:
        raise InputError(f"{name} must be a scalar, got an array of shape {a.shape}")
    v = float(a)
    if not np.isfinite(v) or v < 0 or (v == 0 and not zero_ok):
        kind = "non-negative" if zero_ok else "positive"
        raise InputError(f"{name} must be a finite {kind} number, got {v!r}")
    return v


def _finite(a, name, point_axis):
    bad = np.argwhere(~np.isfinite(a))
    if bad.size:
        idx = tuple(bad[0])
        raise InputError(f"{name} has a non-finite value {float(a[idx])} at point {idx[point_axis]}")


def _states(p, pd, u, names, point_axis):
    """Check positions, velocities, deflections laid out with points along `point_axis`."""
    p, pd = _array(p, names[0]), _array(pd, names[1])
    nd = p.shape[1 - point_axis] if p.ndim == 2 else 0
    if nd not in (2, 3):
        layout = "nd x np" if point_axis == 1 else "n_points x nd"
        raise InputError(f"{names[0]} must be an {layout} array with nd = 2 or 3, got shape {p.shape}")
    if pd.shape != p.shape:
        raise InputError(f"{names[1]} must have the shape of {names[0]} {p.shape}, got {pd.shape}")
    ushape = list(p.shape)
    ushape[1 - point_axis] = nd - 1
    ushape = tuple(ushape)
    u = np.zeros(ushape) if u is None else _array(u, names[2])
    if u.shape != ushape:
        raise InputError(f"{names[2]} must have shape {ushape} (one tangential row less), got {u.shape}")
    for a, name in zip((p, pd, u), names):
        _finite(a, name, point_axis)
    return p, pd, u


# ---------------------------------------------------------------- the laws

def _laws(K, D, mu, p, pd, u):
    """spatial_v2's laws on checked nd x np arrays; returns (f, ud, fcone, state)."""
    with np.errstate(all="ignore"):  # 0/0 and x/0 occur only in entries that np.where discards
        f, ud, fcone, state = _laws_unchecked(K, D, mu, p, pd, u)
    if not (np.isfinite(f).all() and np.isfinite(ud).all()):
        raise InputError("ground contact overflowed: K, D, positions or velocities are too large")
    return f, ud, fcone, state


def _laws_unchecked(K, D, mu, p, pd, u):
    """The law's own classification (fn > 0, then |ft_stick| <= mu fn), and its formulas in those states
    (`_held_law`, the one place the formulas are written)."""
    terms = _terms(_NUMPY, K, D, p[-1], pd[-1], pd[:-1], u)
    r, e, _, wn = terms
    fn = r * e
    contact = fn > 0
    mag = r * wn                                               # |ft| of the sticking force
    cap = mu * fn
    ratio = np.where(cap > 0, mag / cap, np.where(mag > 0, np.inf, 0.0))
    state = np.where(contact, np.where(ratio <= 1, STICK, SLIP), NO_CONTACT)
    f, ud = _held_law(_NUMPY, K, D, mu, state, terms, pd[:-1], u)
    fcone = np.where(contact, np.minimum(2.0, ratio), 2.0)
    return f, ud, fcone, state


def laws_in_states(K, D, mu, p, pd, u, state):
    """spatial_v2's formulas for the force and the deflection rate with each point's state GIVEN
    (NO_CONTACT, STICK or SLIP) instead of decided here; nd x np arrays as gcontact. With depth rate
    term e = -K z - D zdot, r = sqrt(max(0, -z)) and w = K u + D v_t:

        no contact  f = 0,                              ud = -(K/D) u
        stick       f = (-r w, r e),                    ud = v_t
        slip        f = (-mu r e w/|w|, r e),           ud = (mu e / D) w/|w| - (K/D) u

    which are gcontact's expressions (ft_s = ft / ratio and ud = -(ft_s + K r u) / (D r), with r
    cancelled); gcontact classifies and then evaluates these. Held across a located state change, they
    continue each branch smoothly (a point held in contact may pull, one held out of contact feels
    nothing), so the integrator never steps across a corner of the law; the hybrid runner switches the
    state at the located crossing. mu = 0 gives ud = -(K/D) u everywhere. Written once (`_terms`, `_held_law`):
    evaluated here on numpy arrays, and printed to C from `law_spec` for the C contact run."""
    return _held_law(_NUMPY, K, D, mu, state, _terms(_NUMPY, K, D, p[-1], pd[-1], pd[:-1], u), pd[:-1], u)


class _NumpyOps:
    """The held law's operations on arrays (the tangential rows a 2-D block; a state given as a number
    picks its branch)."""

    sqrt, maximum = (staticmethod(f) for f in (np.sqrt, np.maximum))

    @staticmethod
    def nonzero(x):
        return x != 0

    @staticmethod
    def where(condition, a, b):
        return a if condition is True else b if condition is False else np.where(condition, a, b)

    @staticmethod
    def pick(condition, a, b):
        """a or b by a scalar condition (mu != 0: a run-time test in C)."""
        return a if condition else b

    @staticmethod
    def norm(w):
        return np.sqrt(np.sum(w * w, axis=0))

    @staticmethod
    def unit(w, wn):
        return np.divide(w, wn, out=np.zeros_like(w), where=wn > 0)

    @staticmethod
    def stack(tangential, normal):
        return np.vstack([tangential, normal[None]])


class _SymbolicOps:
    """The held law's operations on sympy symbols (the tangential rows a column Matrix; a state given as a
    number picks its branch)."""

    @staticmethod
    def sqrt(x):
        import sympy

        return sympy.sqrt(x)

    @staticmethod
    def maximum(a, b):
        import sympy

        return sympy.Max(a, b)

    @staticmethod
    def nonzero(x):
        import sympy

        return sympy.Ne(x, 0)

    @staticmethod
    def where(condition, a, b):
        import sympy

        if condition in (True, False):
            return a if condition else b
        if isinstance(a, sympy.MatrixBase) or isinstance(b, sympy.MatrixBase):
            rows = a.rows if isinstance(a, sympy.MatrixBase) else b.rows
            pick = lambda x, i: x[i] if isinstance(x, sympy.MatrixBase) else x  # noqa: E731
            return sympy.Matrix([sympy.Piecewise((pick(a, i), condition), (pick(b, i), True)) for i in range(rows)])
        return sympy.Piecewise((a, condition), (b, True))

    @classmethod
    def pick(cls, condition, a, b):
        return cls.where(condition, a, b)

    @staticmethod
    def norm(w):
        import sympy

        return sympy.sqrt(sum(c * c for c in w))

    @staticmethod
    def unit(w, wn):
        import sympy

        return sympy.Matrix([sympy.Piecewise((c / wn, wn > 0), (0, True)) for c in w])

    @staticmethod
    def stack(tangential, normal):
        import sympy

        return sympy.Matrix([*tangential, normal])


_NUMPY = _NumpyOps()


def _terms(ops, K, D, z, zd, vt, u):
    """The law's terms r = sqrt(max(0, -z)), e = -K z - D zdot, w = K u + D v_t and |w| (see `_held_law`)."""
    w = K * u + D * vt
    return ops.sqrt(ops.maximum(0.0, -z)), -K * z - D * zd, w, ops.norm(w)


def _held_law(ops, K, D, mu, state, terms, vt, u):
    """The formulas of `laws_in_states` from the terms (r, e, w) of `_terms`, the nd-1 tangential velocities
    vt and deflections u (rows): numpy arrays (`_NumpyOps`, state an array) or sympy symbols
    (`_SymbolicOps`, vt and u column matrices, state one of NO_CONTACT, STICK, SLIP). Returns (f: the nd
    force rows, normal last; ud: the nd-1 deflection rates)."""
    r, e, w, wn = terms
    direction = ops.unit(w, wn)                               # w / |w|, 0 where w = 0
    contact, stick, slip = state != NO_CONTACT, state == STICK, state == SLIP
    ft = ops.where(slip, (-mu * r * e) * direction, -r * w)
    f = ops.where(contact, ops.stack(ft, r * e), 0.0)
    decay = (-K / D) * u
    ud = ops.pick(ops.nonzero(mu), ops.where(stick, vt, ops.where(slip, (mu * e / D) * direction + decay, decay)),
                  decay)
    return f, ud


def law_spec(nd):
    """The held law (`_held_law`) as a codegen spec of three per-point functions, one per state (none,
    stick, slip): inputs s = (z, zdot, v_t (nd-1), u (nd-1)) and k = (K, D, mu); outputs the force (nd,
    normal last) and then the deflection rates (nd-1). The C contact run prints it (ms_contact.h's
    point_law calls law_none1, law_stick1, law_slip1)."""
    import sympy

    from mechsym.codegen.spec import Function, Spec

    nt = nd - 1
    z, zd = sympy.symbols("z zd", real=True)
    vt = sympy.Matrix(sympy.symbols(f"v0:{nt}", real=True))
    u = sympy.Matrix(sympy.symbols(f"u0:{nt}", real=True))
    K, D, mu = sympy.symbols("K D mu", real=True)
    functions = {}
    for name, state in (("law_none", NO_CONTACT), ("law_stick", STICK), ("law_slip", SLIP)):
        f, ud = _held_law(_SymbolicOps, K, D, mu, state, _terms(_SymbolicOps, K, D, z, zd, vt, u), vt, u)
        f = f if isinstance(f, sympy.MatrixBase) else sympy.zeros(nd, 1)       # (out of contact: 0)
        functions[name] = Function(name, [("s", (z, zd, *vt, *u)), ("k", (K, D, mu))], [*f, *ud])
    return Spec(f"spatial_v2 law {nd}d", {}, functions, None)


def gcontact(K, D, mu, p, pd, u=None):
    """Ground forces on points, spatial_v2 layout: returns (f, ud, fcone).

    p, pd: nd x np positions and velocities (nd = 2 or 3, normal coordinate last); u: (nd-1) x np
    tangential deflections (None = zeros). f: nd x np forces of the ground on the points; ud: the
    deflection rate to integrate; fcone: min(2, |ft_stick| / (mu fn)), 2 out of contact.
    Unlike MATLAB: always three outputs, mu = 0 allowed (see the module docstring), bad input raises.
    """
    K, D, mu = _scalar(K, "K"), _scalar(D, "D"), _scalar(mu, "mu", zero_ok=True)
    p, pd, u = _states(p, pd, u, ("p", "pd", "u"), point_axis=1)
    f, ud, fcone, _ = _laws(K, D, mu, p, pd, u)
    return f, ud, fcone


def Fpt(fp, p):
    """Linear forces fp at points p (nd x n) as spatial [p x f; f] (6 x n) or planar
    [px fy - py fx; fx; fy] (3 x n) forces about the origin, ready to sum per body."""
    fp, p = _array(fp, "fp"), _array(p, "p")
    if p.ndim != 2 or p.shape[0] not in (2, 3):
        raise InputError(f"p must be an nd x n array with nd = 2 or 3, got shape {p.shape}")
    if fp.shape != p.shape:
        raise InputError(f"fp must have the shape of p {p.shape}, got {fp.shape}")
    _finite(fp, "fp", 1)
    _finite(p, "p", 1)
    if p.shape[0] == 3:
        return np.vstack([np.cross(p, fp, axis=0), fp])
    return np.vstack([p[0] * fp[1] - p[1] * fp[0], fp])


def static_penetration(K, weight_per_point):
    """Depth d at which a point carries a static load F: solves K d^1.5 = F, d = (F/K)^(2/3)."""
    K = _scalar(K, "K")
    F = _array(weight_per_point, "weight_per_point")
    if not np.isfinite(F).all() or (F < 0).any():
        raise InputError(f"weight_per_point must be finite and non-negative, got {weight_per_point!r}")
    d = (F / K) ** (2.0 / 3.0)
    return float(d) if d.ndim == 0 else d


# ---------------------------------------------------------------- Pythonic interface

def _frozen(a):
    a.flags.writeable = False
    return a


@dataclass(frozen=True)
class ContactResult:
    """Per-point outputs of `GroundContact.evaluate`, points as rows (arrays are read-only)."""

    force: np.ndarray            # (n, nd) force of the ground on each point
    deflection_rate: np.ndarray  # (n, nd-1) du/dt, to integrate into the deflections
    cone_ratio: np.ndarray       # (n,) min(2, |ft_stick| / (mu fn)); 2 out of contact
    state: np.ndarray            # (n,) NO_CONTACT, STICK or SLIP
    contact_signal: np.ndarray   # (n,) normal force; in contact iff > 0 (zero-crossing signal)
    stick_signal: np.ndarray     # (n,) 1 - cone_ratio; sticking iff >= 0 while in contact

    @property
    def in_contact(self):
        """Per point: touching the ground."""
        return self.state != NO_CONTACT

    @property
    def sticking(self):
        """Per point: in contact and sticking."""
        return self.state == STICK


@dataclass(frozen=True)
class GroundContact:
    """Compliant ground with stiffness K (N/m^1.5), damping D (N s/m^1.5) and friction coefficient mu."""

    stiffness: float
    damping: float
    mu: float

    def __post_init__(self):
        object.__setattr__(self, "stiffness", _scalar(self.stiffness, "stiffness"))
        object.__setattr__(self, "damping", _scalar(self.damping, "damping"))
        object.__setattr__(self, "mu", _scalar(self.mu, "mu", zero_ok=True))

    @property
    def time_constant(self):
        """D/K: the unloaded ground's deflections decay like exp(-t / (D/K))."""
        return self.damping / self.stiffness

    def evaluate(self, positions, velocities, deflections=None):
        """Forces and deflection rates for points given as rows (n, nd); deflections (n, nd-1) or None.

        A 1-D position (one point) is treated as a single row.
        """
        p = np.atleast_2d(_array(positions, "positions"))
        pd = np.atleast_2d(_array(velocities, "velocities"))
        u = None if deflections is None else np.atleast_2d(_array(deflections, "deflections"))
        p, pd, u = _states(p, pd, u, ("positions", "velocities", "deflections"), point_axis=0)
        f, ud, fcone, state = _laws(self.stiffness, self.damping, self.mu, p.T, pd.T, u.T)
        return ContactResult(
            force=_frozen(f.T.copy()), deflection_rate=_frozen(ud.T.copy()),
            cone_ratio=_frozen(fcone), state=_frozen(state.astype(int)),
            contact_signal=_frozen(f[-1].copy()), stick_signal=_frozen(1.0 - fcone))
