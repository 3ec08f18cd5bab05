"""PASIBOT: the one-motor biped walking linkage of Corral, Meneses and García-Prada (2016), sections 3-7.

Two legs of eleven links each, a shared double crank 8 and the hip 13: 24 bodies, 33 pins, two pins in
slots, one degree of freedom. Every length is a multiple of the crank length l8; the table below is the
reconstruction of the chapter's geometry, and the values marked ASSUMED are its calibrations (the
chapter gives no masses and no l8).

Names. Bodies carry the chapter's numbers ("1" foot ... "12" tibia-parallel bar, "8" crank, "13" hip); the
primed leg's links carry the suffix "_f" ("7_f" is link 7'). Points: A, B, D on the hip, and P, M, C, F, K,
L, E, S, G, H, Hp (H'), Ep (E') on the unprimed leg, the same with "_f" on the primed leg. A joint is named
"jI_J" after its two bodies (flying-leg copies end in "_f"); its reaction "jI_J.fx", "jI_J.fy" is the
force of body I on body J (the chapter's f_IJ). The chapter orders each pair i < j; the two joints measured
from the hip put the hip first: the motor pin "j13_8" (so that theta8 = angle of the crank relative to the
hip) and the slots "j13_10", "j13_10_f" (the pin S of link 10 in the hip's slot y = -4 l8; "j13_10.fn" is
the hip's normal force on 10 along the hip's +y axis).

Coordinate theta8 is the crank angle in the hip frame; T8 is the motor torque on the crank (its reaction on
the hip), the generalised force conjugate to theta8.

Frames (`build(frame=...)`):
* "hip": the hip is the fixed body; kinematics over a full crank turn in the hip frame (origin at the
  crank axis A, x towards B). Both feet are free.
* "foot" (default): the supporting foot is the fixed body, no slip. Its frame has its origin at the ankle E
  and x along the foot, which lies on the ground: the ground frame of the dynamics (Eq. 11).
* "slide": a fixed ground body "0" and a prismatic joint "j0_1" ground-foot whose travel x1 (the ankle's
  ground x) is a second coordinate; its generalised force "friction" is the ground's tangential force on
  the foot (f01x), "j0_1.fn" the normal force (f01y) and "j0_1.m" the ground's moment on the foot.
`support` picks the supporting leg: "unprimed" for theta8 in [pi/2, 3pi/2], "primed" for [3pi/2, 5pi/2]
(see `support_of`). The flying leg's foot is free in every frame.

The kinematics is NOT written as the chapter's closed forms theta_i(theta8): the joints are declared and
mechsym closes the loops; the closed forms appear only in the tests.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import sympy as sp

from mechsym.core.errors import InputError
from mechsym.planar.constraints import cross2
from mechsym.planar.model import Mechanism
from mechsym.studies import samples

R = sp.Rational
LEGS = {"unprimed": "", "primed": "_f"}  # leg -> suffix of its body, point and joint names
FRAMES = ("hip", "foot", "slide")

# --- geometry in units of l8 (spec section 2) -------------------------------------------------------------
# Hip 13 frame: origin at the crank axis A, x towards the rocker pivot B, y up. "slot" is a point of the
# slot line y = -4 along which the end S of each stabiliser 10 slides.
HIP_POINTS = {"A": (0, 0), "B": (2, 0), "D": (2, -12), "slot": (0, -4)}

# Links of one leg: name -> (chapter name, first end, second end, length, {point: distance from the first
# end}). The body frame runs from the first end to the second, so the body angle is the chapter's theta_i
# (angle between link i and the hip). "off_f" and "off_t" are the ASSUMED parallelogram offsets CG = KH and
# KH' = EE'. The foot 1 is declared separately (its frame origin is the ankle E, not an end).
LINKS = {
    "2": ("tibia", "E", "K", 18, {"L": 12}),
    "3": ("femur", "K", "C", 9, {"F": 6}),
    "4": ("lower tendon", "L", "D", 6, {}),
    "5": ("short stabiliser bar", "K", "H", "off_f", {"Hp": "off_t"}),
    "6": ("upper tendon", "D", "F", 6, {}),
    "7": ("connecting rod", "C", "P", 5, {"M": R(5, 2)}),
    "9": ("rocker", "M", "B", R(5, 2), {}),
    "10": ("stabilising link", "C", "S", R(21, 5), {"G": "off_f"}),
    "11": ("femur-parallel bar", "H", "G", 9, {}),
    "12": ("tibia-parallel bar", "Ep", "Hp", 18, {}),
}

# Pins of one leg (spec 2.2): (i, j, point): the force of link i on link j acts at `point`. The shared
# motor pin (13, 8) at A and the slot (13, 10) at S are declared apart.
PINS = [
    ("7", "8", "P"), ("7", "9", "M"), ("9", "13", "B"),  # Chebyshev lambda
    ("4", "13", "D"), ("6", "13", "D"), ("3", "6", "F"), ("3", "7", "C"), ("2", "3", "K"), ("2", "4", "L"),  # pantograph
    ("7", "10", "C"), ("10", "11", "G"), ("5", "11", "H"), ("3", "5", "K"), ("5", "12", "Hp"),  # stabiliser
    ("1", "12", "Ep"), ("1", "2", "E"),
]
SHARED = ("8", "13")  # bodies common to both legs (no suffix)

# Rough body angles (rad, hip frame) that pick the assembly branch: a leg at mid-support (theta8 = pi for
# the unprimed leg) and at mid-swing (theta8 = 0). Only a starting guess; the branch conditions below
# state the branch exactly.
GUESS = {"support": {"1": 0.0, "2": 1.25, "3": 2.26, "4": 2.26, "5": 0.0, "6": 1.25, "7": 2.21, "9": 0.93,
                     "10": 0.0, "11": 2.26, "12": 1.25},
         "swing": {"1": 0.22, "2": 1.14, "3": 2.56, "4": 2.56, "5": 0.22, "6": 1.14, "7": 1.77, "9": 1.37,
                   "10": 0.22, "11": 2.56, "12": 1.14}}


def build(frame: str = "foot", support: str = "unprimed") -> Mechanism:
    """The whole biped. frame: "hip", "foot" (supporting foot fixed, no slip) or "slide" (ground fixed,
    supporting foot on a prismatic joint with coordinate x1); support: "unprimed" or "primed"."""
    if frame not in FRAMES:
        raise InputError(f"pasibot: unknown frame '{frame}' (choose from {', '.join(FRAMES)})")
    if support not in LEGS:
        raise InputError(f"pasibot: unknown support leg '{support}' (choose unprimed or primed)")
    m = Mechanism("pasibot", doc=__doc__)
    l8 = m.parameter("l8", 0.030, "m", "crank length, the unit of every length (ASSUMED)")
    lam = m.parameter("density", 1.47, "kg/m", "linear density of every bar (ASSUMED)")
    m_hip = m.parameter("m_hip", 1.5, "kg", "hip and motor mass (ASSUMED)")
    i_hip = m.parameter("I_hip", 0.02, "kg m^2", "hip and motor centroidal inertia (ASSUMED)")
    m_load = m.parameter("m_load", 0.0, "kg", "extra load on the hip, a point mass at the hip centre of mass",
                         positive=False, nonnegative=True)
    hx = m.parameter("hip_com_x", 2.0, "", "hip centre of mass x, in l8 (ASSUMED)", positive=False)
    hy = m.parameter("hip_com_y", -6.0, "", "hip centre of mass y, in l8 (ASSUMED)", positive=False)
    off = {"off_f": m.parameter("off_f", 2.1, "", "parallelogram offset CG = KH on the femur, in l8 (ASSUMED)", positive=True),
           "off_t": m.parameter("off_t", 2.1, "", "parallelogram offset KH' = EE' on the tibia, in l8 (ASSUMED)", positive=True)}
    heel = m.parameter("heel", 2.0, "", "foot length behind the ankle E, in l8 (ASSUMED)", positive=True)
    toe = m.parameter("toe", 4.0, "", "foot length ahead of the ankle E, in l8 (ASSUMED)", positive=True)
    m.gravity_down("g")
    # friction foot-ground: used by the "slide" frame's analyses (declared in every frame, so that every
    # build takes the same parameters)
    m.parameter("mu_s", 0.1, "", "static friction coefficient foot-ground", positive=False, nonnegative=True)
    m.parameter("mu_k", 0.1, "", "kinetic friction coefficient foot-ground (not above mu_s)", positive=False,
                nonnegative=True)

    fixed_foot = "1" + LEGS[support] if frame == "foot" else None
    m.body("13", m_hip + m_load, i_hip, (hx * l8, hy * l8), {k: (x * l8, y * l8) for k, (x, y) in HIP_POINTS.items()},
           fixed=frame == "hip")
    if frame == "slide":
        m.ground("0", points={"O": (0, 0)})
    m.body("8", lam * 2 * l8, lam * (2 * l8) ** 3 / 12, (0, 0), {"A": (0, 0), "P": (l8, 0), "P_f": (-l8, 0)},
           guess=math.pi if support == "unprimed" else 2 * math.pi)

    for leg, sfx in LEGS.items():
        role = "support" if leg == support else "swing"
        name = lambda p: p if p in HIP_POINTS else p + sfx  # noqa: E731  leg point names
        body = lambda b: b if b in SHARED else b + sfx  # noqa: E731  leg body names
        for link, (_, first, second, length, extra) in LINKS.items():
            length = _ratio(length, off) * l8
            pts = {name(p): (_ratio(d, off) * l8, 0) for p, d in extra.items()}
            m.bar(body(link), (name(first), name(second)), length, lam, points=pts, guess=GUESS[role][link])
        # foot 1: frame origin at the ankle E, x along the foot; a bar from E - heel to E + toe
        foot_mass = lam * (heel + toe) * l8
        m.body(body("1"), foot_mass, foot_mass * ((heel + toe) * l8) ** 2 / 12, ((toe - heel) * l8 / 2, 0),
               {name("E"): (0, 0), name("Ep"): (off["off_t"] * l8, 0), name("heel"): (-heel * l8, 0),
                name("toe"): (toe * l8, 0)},
               guess=GUESS[role]["1"], fixed=body("1") == fixed_foot)
        for i, j, p in PINS:
            m.revolute(f"j{i}_{j}{sfx}", body(i), name(p), body(j), name(p))
        m.slot(f"j13_10{sfx}", "13", "slot", body("10"), name("S"), axis=(1, 0))
        # the assembly branch of each leg (spec section 7.4), written frame-free
        P, M, B, C, D, F, S, A = (m.at(name(p)) for p in ("P", "M", "B", "C", "D", "F", "S", "A"))
        m.branch(cross2(M - P, B - P), f"Chebyshev: {name('M')} below the line {name('P')}-B")
        m.branch(cross2(F - D, C - D), f"pantograph: knee {name('F')} on the walking side of D-{name('C')}")
        m.branch((S - C).dot(B - A), f"stabiliser: {name('S')} ahead of {name('C')} along the slot")

    m.revolute("j13_8", "13", "A", "8", "A")
    m.coordinate("theta8", "j13_8", force="T8", guess_at=math.pi if support == "unprimed" else 2 * math.pi)
    if frame == "slide":
        foot = "1" + LEGS[support]
        m.prismatic("j0_1" + LEGS[support], "0", "O", foot, "E" + LEGS[support], axis=(1, 0))
        m.coordinate("x1", "j0_1" + LEGS[support], force="friction", guess_at=0.0)
    if frame == "foot":  # the supporting foot held on the ground: true for its own step of the gait only
        low = math.pi / 2 if support == "unprimed" else 3 * math.pi / 2
        m.valid_between(low, low + math.pi, f"the {support} foot is held on the ground for its step only; over "
                        "a turn of walking use mechanisms.pasibot.inverse_table or torque_curve (`mechsym "
                        "pasibot torque`, `mechsym inverse pasibot`), which switch the support each step")
    return m


def _ratio(value, off):
    return off[value] if isinstance(value, str) else sp.sympify(value)


# --- support phases ----------------------------------------------------------------------------------------
def support_of(theta8):
    """The supporting leg at crank angle(s) theta8: "unprimed" on [pi/2, 3pi/2) mod 2pi, else "primed"."""
    phase = np.mod(np.asarray(theta8, float) - np.pi / 2, 2 * np.pi)
    return np.where(phase < np.pi, "unprimed", "primed")


def step_index(theta8):
    """The step k whose window [pi/2 + k pi, 3pi/2 + k pi) holds theta8 (k even: unprimed support)."""
    return np.floor((np.asarray(theta8, float) - np.pi / 2) / np.pi).astype(int)


def step_window(k):
    """Crank-angle window of step k."""
    return np.pi / 2 + k * np.pi, np.pi / 2 + (k + 1) * np.pi


@lru_cache(maxsize=None)
def system(frame: str = "foot", support: str = "unprimed", backend=None):
    """The derived System of one build (derived once per process)."""
    from mechsym import derive

    return derive(build(frame, support), backend=backend)


def _split(theta8):
    """Indices of the samples each support leg carries, and the step index of every sample."""
    theta8 = np.asarray(theta8, float).ravel()
    legs = support_of(theta8)
    return {leg: np.flatnonzero(legs == leg) for leg in LEGS}, step_index(theta8)


def step_length(params=None, backend=None) -> float:
    """Ground distance between the ankles when the support passes from one leg to the other (theta8 =
    3pi/2, both feet flat on the ground): 8 l8 for the chapter's geometry."""
    sys = system("foot", "unprimed", backend)
    table = sys.kinematics_table(np.array([1.5 * np.pi]), params)
    return float(table["E_f.x"][0] - table["E.x"][0])


def _merge(parts, n, order):
    """Stitch tables computed on sample subsets back into sample order."""
    from mechsym.core.results import Table

    first = next(t for t in parts.values() if t is not None)
    cols = {}
    for name in first.names:
        col = np.empty(n)
        for leg, table in parts.items():
            if table is not None:
                col[order[leg]] = table[name]
        cols[name] = col
    return Table(cols, dict(first.units), first.title, first.sweep)


def _table(sys, theta8, params):
    """Kinematics table of one build with the exact rates of every body coordinate added: "BODY.x'" =
    d x / d theta8 and "BODY.x''" = d2 x / d theta8^2 (velocity = x' omega8, acceleration = x'' omega8^2 +
    x' alpha8), the same for y and angle. The fixed body, when it has mass, gets its (constant) pose."""
    table = sys.kinematics_table(theta8, params)
    kin = sys.kinematics(theta8, params)
    for i, b in enumerate(sys.constraints.bodies):
        for j, c in enumerate(("x", "y", "angle")):
            table.columns[f"{b}.{c}'"] = kin.dq[:, 3 * i + j, 0]
            table.columns[f"{b}.{c}''"] = kin.ddq[:, 3 * i + j]
            unit = "rad" if c == "angle" else "m"
            table.units.update({f"{b}.{c}'": f"{unit}/rad", f"{b}.{c}''": f"{unit}/rad^2"})
    mech = sys.mechanism
    fixed = mech.bodies[mech.fixed]
    if fixed.mass != 0:
        subs = dict(zip(sys.constraints.params, sys.params(params)))
        n = len(theta8)
        pose = {"angle": 0.0, "x": float(fixed.com[0].subs(subs)), "y": float(fixed.com[1].subs(subs))}
        for c, v in pose.items():
            table.columns[f"{fixed.name}.{c}"] = np.full(n, v)
            table.columns[f"{fixed.name}.{c}'"] = np.zeros(n)
            table.columns[f"{fixed.name}.{c}''"] = np.zeros(n)
    return table


def kinematics_table(theta8, params=None, frame="hip", backend=None):
    """Every body angle and centre of mass and every named point at the crank angles theta8.

    frame "hip": the hip frame (the hip-fixed build). frame "ground": the ground frame of Eq. 11: the
    supporting foot (chosen by `support_of`) lies on the ground; the origin is the unprimed ankle at the
    start of step 0 (theta8 = pi/2) and the support ankles accumulate one step length per step (no slip).
    Every body coordinate comes with its exact first and second derivatives with respect to theta8
    (columns "BODY.x'", "BODY.x''", ...). In the ground frame a column "support" (0 unprimed, 1 primed)
    is added."""
    theta8 = np.asarray(theta8, float).ravel()
    if frame == "hip":
        return _table(system("hip", "unprimed", backend), theta8, params)
    if frame != "ground":
        raise InputError(f"pasibot: unknown frame '{frame}' for kinematics (choose hip or ground)")
    order, steps = _split(theta8)
    parts = {leg: _table(system("foot", leg, backend), theta8[idx], params) if idx.size else None
             for leg, idx in order.items()}
    table = _merge(parts, len(theta8), order)
    shift = steps * step_length(params, backend)
    for name in table.names:
        if name.endswith(".x"):  # positions only (the rates are unchanged by the shift)
            table.columns[name] = table[name] + shift
    table.columns["support"] = (support_of(theta8) == "primed").astype(float)
    table.title = "pasibot: kinematics (ground frame)"
    return table


def inverse_table(theta8, omega, alpha=0.0, params=None, inertia=True, backend=None):
    """Inverse dynamics without slip in the ground frame: T8 and every reaction (the 69 x 69 A U = C of
    the supporting foot's build, the support chosen per sample by `support_of`). Rows are stacked speed by
    speed like `System.inverse`; a column "support" (0 unprimed, 1 primed) is added."""
    theta8 = np.asarray(theta8, float).ravel()
    omegas = np.atleast_1d(np.asarray(omega, float))
    order, _ = _split(theta8)
    parts = {}
    for leg, idx in order.items():
        parts[leg] = None
        if idx.size:
            t = system("foot", leg, backend).inverse(theta8[idx], omegas, alpha, params, inertia)
            parts[leg] = t
    n = len(theta8)
    stacked = {leg: np.concatenate([idx + k * n for k in range(len(omegas))]) for leg, idx in order.items()}
    table = _merge(parts, n * len(omegas), stacked)
    table.columns["support"] = np.tile((support_of(theta8) == "primed").astype(float), len(omegas))
    table.title = "pasibot: inverse dynamics (ground frame, no slip)"
    return table


def torque_curve(omegas, samples=360, params=None, backend=None):
    """The motor torque against the crank speed while walking: for each constant crank speed of `omegas`
    [rad/s], the peak |T8|, the RMS and the mean of T8 [N m] over a turn of `samples` crank angles
    (inverse_table: the support switched each step, no slip). One row per speed; with it, the inverse
    table it reduces (T8 over the turn, one block per speed)."""
    from mechsym.core.results import Table
    from mechsym.studies import Reduction

    omegas = np.atleast_1d(np.asarray(omegas, float))
    theta8 = 2 * np.pi * np.arange(samples) / samples
    table = inverse_table(theta8, omegas, params=params, backend=backend)
    reductions = [Reduction.parse(f"{f}:T8") for f in ("absmax", "rms", "mean")]
    cols = {"omega": omegas}
    for r in reductions:
        cols[r.name] = np.array([r(Table({"T8": table["T8"][table["omega"] == w]})) for w in omegas])
    units = {"omega": "rad/s", **{r.name: "N m" for r in reductions}}
    return Table(cols, units, "pasibot: motor torque against crank speed (walking, no slip)"), table


# --- the generic commands (`mechsym kinematics|inverse|forward pasibot`) --------------------------------
@lru_cache(maxsize=None)
def _declaration():
    return build()


def check_params(params):
    """Parameter overrides resolved and checked (names, ranges, mu_k <= mu_s) before any work."""
    values = _declaration().resolve_parameters(params)
    if values["mu_k"] > values["mu_s"]:
        raise InputError(f"pasibot: kinetic friction mu_k = {values['mu_k']} exceeds static friction "
                         f"mu_s = {values['mu_s']}")
    return values


def _cli_kinematics(options, params, backend):
    check_params(params)
    frame = options.frame or "hip"
    table = kinematics_table(samples(options), params, frame, backend)
    return table, system("hip" if frame == "hip" else "foot", "unprimed", backend)


def _cli_inverse(options, params, backend):
    check_params(params)
    table = inverse_table(samples(options), options.omega, options.alpha, params, not options.quasi_static, backend)
    return table, system("foot", "unprimed", backend)


def _cli_forward(options, params, backend):
    check_params(params)
    from mechanisms.pasibot_study import forward_run, sample_forward

    run = forward_run(options.torque, options.theta0, options.omega0, options.t_end, params, rtol=options.rtol,
                      atol=options.atol, backend=backend)
    table = sample_forward(run, options.dt)
    if options.all:  # every body and point in the ground frame along the run
        kin = kinematics_table(table["theta8"], params, "ground", backend)
        table.columns.update({k: v for k, v in kin.columns.items() if k not in table.columns and not k.endswith("'")})
        table.units.update({k: u for k, u in kin.units.items() if k in table.columns})
    return table, system("foot", "unprimed", backend)


# kinematics: hip frame by default (--frame ground for Eq. 11); inverse and forward: in the ground frame,
# the support passing from leg to leg at theta8 = pi/2 + k pi.
CLI_HOOKS = {"kinematics": _cli_kinematics, "inverse": _cli_inverse, "forward": _cli_forward}
