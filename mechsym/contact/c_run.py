"""The contact run on C: the model's frame, generalised forces and rates generated from the same sympy
expressions as the numpy route, and spatial_v2's law in each held state from the definition the numpy route
evaluates (mechsym.contact.spatial_v2.law_spec), printed by mechsym.codegen.c_source, compiled with the runtime
mechsym/codegen/runtime/ms_contact.h (the law, the guards), ms_contact_step.h (scipy's RK45, the event
location) and ms_contact_run.h (the switches, the run) into one library, cached by construction
(mechsym.codegen.c_backend), and run in one call.

`run(points, ground, y_start, t_end, ...)` returns the pieces (start, held point states, the transition
that ended them), their accepted steps with RK45's dense output, the point state changes and the
counters; mechsym.contact.run assembles them into a ContactRun exactly as it does the numpy route's.
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass

import numpy as np

from mechsym.codegen import c_backend
from mechsym.codegen.constants import Status
from mechsym.codegen.keys import cache_key, package_source
from mechsym.core.errors import InputError

KEEP_BYTES = 256 * 2**20  # dense output kept per run (RK45: 5 values per state and step)
_D, _I, _L = ctypes.POINTER(ctypes.c_double), ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_long)


def supports(points) -> bool:
    """Whether the C route covers the model carrying `points` (a floating 3-D body: ContactModel.c_run)."""
    return points.model.c_run


def generate(system):
    """(C source, metadata) of a floating body's library: its generated part (frame, generalised forces,
    rates, the point law per held state, and the batched rates `ms_rate`), then the contact runtime."""
    import sympy as sp

    from mechsym.codegen import c_runtime
    from mechsym.codegen.c_source import HEADER, render_functions
    from mechsym.codegen.spec import Function, Spec
    from mechsym.contact.spatial_v2 import law_spec

    coords, speeds, origin, rot, v_origin, omega = system.body_frame()
    nd, nw = len(origin), len(omega)
    force = sp.Matrix(sp.symbols(" ".join(f"F{i}" for i in range(nd)), real=True, seq=True))
    moment = sp.Matrix(sp.symbols(" ".join(f"M{i}" for i in range(nw)), real=True, seq=True))
    generalised = (v_origin.jacobian(sp.Matrix(speeds)).T * force + omega.jacobian(sp.Matrix(speeds)).T * moment)
    params = system.params_symbols
    src = [HEADER.format(name=system.body.name) + "\n/* the contact run of a floating body */",
           c_runtime.include("ms_prefix.h"), c_runtime.include("ms_prelude.h"), c_runtime.include("ms_constants.h"),
           "#ifndef M_PI\n#define M_PI 3.14159265358979323846\n#endif",
           f"#define NYM {len(system.state)}\n#define NQC {len(coords)}\n#define NSP {len(speeds)}\n"
           f"#define ND {nd}\n#define NW {nw}\n#define NPAR {max(1, len(params))}\n"
           f"#define COORD_OFFSET 0\n#define SPEED_OFFSET {len(coords)}\n",
           render_functions(Spec(system.body.name, {}, {
               "frame": Function("frame", [("q", coords), ("qd", speeds)], [*origin, *rot, *v_origin, *omega]),
               "gen": Function("gen", [("q", coords), ("F", force), ("M", moment)], list(generalised)),
               "rate": Function("rate", [("y", system.state), ("g", system.force + system.moment), ("p", params)],
                                system.rate_exprs)}, None), {"frame": "frame1", "gen": "gen1", "rate": "rate1"}),
           render_functions(law_spec(nd), {f: f + "1" for f in ("law_none", "law_stick", "law_slip")}),
           "/* the quaternion (y[3..6]) scaled to unit length */\n"
           "static void project1(double *y) {\n  const double n = sqrt(y[3] * y[3] + y[4] * y[4] + y[5] * y[5] "
           "+ y[6] * y[6]);\n  for (int i = 3; i < 7; ++i) y[i] /= n;\n}\n",
           "/* the rates of n states y (n x NYM) under generalised forces g (n x NSP), sample-major */\n"
           "void MS_FN(rate)(int n, const double *y, const double *g, const double *p, double *out) {\n"
           "  for (int s = 0; s < n; ++s) rate1(y + (size_t)s * NYM, g + (size_t)s * NSP, p, out + (size_t)s * NYM);\n}\n",
           *(c_runtime.include(h) for h in ("ms_contact.h", "ms_contact_step.h", "ms_contact_run.h"))]
    return "\n".join(src), {"kind": "contact_run", "body": system.body.name, "nym": len(system.state), "nd": nd}


_LIBRARIES = {}  # lookup key -> loaded library (a run of the same model in this process skips the cache)


def library(system):
    """The compiled library of the floating body `system` (cache, or generated and compiled now); raises
    c_backend.CompilerMissing without a compiler."""
    k = getattr(system, "_c_key", None)
    if k is None:
        k = system._c_key = cache_key("floating body", system.body, package_source())
    if k not in _LIBRARIES:
        compiled = c_backend.build_source(f"contact-{system.body.name}", k, lambda: generate(system))
        compiled.dll.ms_rate.argtypes = [ctypes.c_int, _D, _D, _D, _D]
        compiled.dll.ms_rate.restype = None
        fn = compiled.dll.ms_contact_run
        d, i = ctypes.c_double, ctypes.c_int
        fn.argtypes = [_D, i, _D, _D, d, d, d, d, d, d, d, d, i, i, _D, i, _D,
                       i, _D, _D, _D, _D, _I,
                       i, _D, _I, _I, _I, _L, _D, _I,
                       i, _D, _I, _I, _I, _I, _L]
        fn.restype = i
        _LIBRARIES[k] = compiled
    return _LIBRARIES[k]


@dataclass
class RawRun:
    """What the C run returns (see the module docstring); arrays trimmed to their counts."""

    status: int
    t_end: float
    piece_t: np.ndarray          # start of every piece
    piece_step: np.ndarray       # index of its first step
    piece_states: np.ndarray     # (pieces, np) held point states
    piece_transition: np.ndarray  # 0 contact, 1 stick, -1 none (the run ended in it)
    piece_nfev: np.ndarray
    piece_y: np.ndarray          # (pieces, ny) state where each piece starts
    step_t: np.ndarray
    step_h: np.ndarray
    step_y: np.ndarray           # (steps, ny)
    step_q: np.ndarray           # (steps, ny, 4) RK45's dense-output coefficients
    events: tuple                # (t, point, before, after) arrays of the point state changes
    nfev: int
    n_signal: int
    n_steps: int                 # accepted steps (those beyond the kept ones have no dense output here)
    grid_y: np.ndarray           # (len(grid), ny) the states at the output times


def run(points, ground, y_start, t_end, grid, *, rtol, atol, max_step, event_tol, max_switches,
        max_chatter) -> RawRun:
    """The held-state contact run on C from (0, y_start) to t_end, sampled at the times `grid` (the buffers
    of pieces and events grown and the run repeated when one fills, and repeated once when it took more
    steps than it kept, up to KEEP_BYTES worth: the dense output of at most that many steps is kept). Raises KeyboardInterrupt when Ctrl-C stopped it, InputError for a
    failed integration."""
    dll = library(points.system).dll
    y0 = np.ascontiguousarray(y_start, float)
    params = np.ascontiguousarray(points.system.params(points.param_overrides), float)
    if params.size == 0:
        params = np.zeros(1)
    local = np.ascontiguousarray(points.local, float)
    ny, n = len(y0), points.n
    bound = t_end / max_step if np.isfinite(max_step) and max_step > 0 else 0.0
    keep_steps = KEEP_BYTES // (8 * 5 * ny)
    cap_steps = int(min(2 * bound + 1000, keep_steps))
    cap_pieces, cap_events = 1000, 1000
    grid = np.ascontiguousarray(grid, float)
    grid_y = np.empty((len(grid), ny))
    while True:
        st_t, st_h = np.empty(cap_steps), np.empty(cap_steps)
        st_y, st_q = np.empty((cap_steps, ny)), np.empty((cap_steps + 1, ny, 4))
        pc_t, pc_step = np.empty(cap_pieces + 1), np.empty(cap_pieces, np.intc)
        pc_states, pc_tr = np.empty((cap_pieces, n), np.intc), np.empty(cap_pieces, np.intc)
        pc_nfev, pc_y = np.empty(cap_pieces, np.int_), np.empty((cap_pieces, ny))
        ev_t, ev_pt = np.empty(cap_events), np.empty(cap_events, np.intc)
        ev_b, ev_a = np.empty(cap_events, np.intc), np.empty(cap_events, np.intc)
        counts = np.zeros(3, np.intc)
        counters = np.zeros(3, np.int_)
        ptr = lambda a, t=_D: a.ctypes.data_as(t)  # noqa: E731
        status = dll.ms_contact_run(
            ptr(y0), n, ptr(params), ptr(local), ground.stiffness, ground.damping, ground.mu, float(t_end), rtol,
            atol, float(max_step), event_tol, int(max_switches), int(max_chatter), ptr(grid), len(grid), ptr(grid_y),
            cap_steps, ptr(st_t), ptr(st_h), ptr(st_y), ptr(st_q), ptr(counts[0:], _I),
            cap_pieces, ptr(pc_t), ptr(pc_step, _I), ptr(pc_states, _I), ptr(pc_tr, _I), ptr(pc_nfev, _L), ptr(pc_y),
            ptr(counts[1:], _I), cap_events, ptr(ev_t), ptr(ev_pt, _I), ptr(ev_b, _I), ptr(ev_a, _I),
            ptr(counts[2:], _I), ptr(counters, _L))
        if status == Status.INTERRUPTED:
            raise KeyboardInterrupt
        if status != Status.BUFFER_FULL:
            if status != 0 or counters[2] <= cap_steps or cap_steps >= keep_steps:
                break
            cap_steps = min(int(counters[2]), keep_steps)  # the run took more steps than kept: once more, keeping them
            continue
        ns, npc, nev = (int(c) for c in counts)
        cap_pieces = 2 * cap_pieces if npc >= cap_pieces else cap_pieces
        cap_events = 2 * cap_events if nev >= cap_events else cap_events
    ns, npc, nev = (int(c) for c in counts)
    t_last = float(pc_t[npc])
    if status == Status.NO_MEMORY:
        raise MemoryError("the contact run on C could not allocate its work arrays")
    if status == Status.CHATTER:
        raise InputError(f"hybrid run: more than {max_chatter} switches at t = {t_last:.9g} without time advancing "
                         "(chattering or a Zeno point)")
    if status == Status.SWITCHES:
        raise InputError(f"hybrid run: more than {max_switches} switches before t = {t_last:.9g}")
    if status != 0:
        t_fail = float(st_t[ns - 1] + st_h[ns - 1]) if ns else float(pc_t[npc - 1])
        raise InputError(f"hybrid run: mode 'contact': integration failed at t = {t_fail:.9g}: the step size "
                         "fell below the spacing between numbers")
    return RawRun(status, t_last, pc_t[:npc].copy(), pc_step[:npc].astype(int), pc_states[:npc].astype(int),
                  pc_tr[:npc].astype(int), pc_nfev[:npc].astype(int), pc_y[:npc].copy(), st_t[:ns].copy(),
                  st_h[:ns].copy(), st_y[:ns].copy(), st_q[:ns].copy(),
                  (ev_t[:nev].copy(), ev_pt[:nev].astype(int), ev_b[:nev].astype(int), ev_a[:nev].astype(int)),
                  int(counters[0]), int(counters[1]), int(counters[2]), grid_y)


class Unkept:
    """Where a long C run kept no dense output: sampling it is an error saying so."""

    def __init__(self, t0, t1, kept):
        self.t0, self.t1, self.kept = t0, t1, kept
        self.ts = np.array([t0, t1])

    def __call__(self, t):
        raise InputError(f"the contact run on C kept the dense output of its first {self.kept} steps only "
                         f"({KEEP_BYTES // 2**20} MiB); the piece from t = {self.t0:.6g} s to {self.t1:.6g} s "
                         "has none: sample the run's table, or run it on backend 'numpy'")


class StepDense:
    """The dense output of a piece's accepted steps: RK45's quartic interpolant per step (scipy's
    RkDenseOutput), evaluated for many times at once; `ts` are the step boundaries, the last one the piece's
    end t_end (a located event inside the last step), as OdeSolution's."""

    def __init__(self, t_old, h, y_old, q, t_end):
        self.t_old, self.h, self.y_old, self.q = t_old, h, y_old, q
        self.ts = np.append(t_old, t_end)

    def __call__(self, t):
        t = np.asarray(t, float)
        tt = np.atleast_1d(t)
        i = np.clip(np.searchsorted(self.ts, tt, side="left") - 1, 0, len(self.t_old) - 1)
        x = (tt - self.t_old[i]) / self.h[i]
        powers = np.stack([x, x * x, x**3, x**4], axis=-1)                       # (N, 4)
        y = self.y_old[i] + self.h[i, None] * np.einsum("nir,nr->ni", self.q[i], powers)
        return y.T if t.ndim else y[0]
