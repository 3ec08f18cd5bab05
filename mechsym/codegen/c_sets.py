"""One analysis of many parameter sets in one compiled call (runtime/ms_sets.h): inverse dynamics, kinematics
and forward dynamics of a one-coordinate mechanism, each set assembled from the reference assembly (of the
default parameters) and continued to its start in C, with its own scales, steps and, for a forward run, its
own step control and events. A sweep's sets of their own geometry go through these (mechsym.studies.sweep_sets)
instead of one call, one start in Python and one table per set.

Every call takes `reference` = (theta_ref, q_ref, sign): the reference assembly q_ref at theta_ref and the sign
of det Phi_q there (+1 or -1), from which each set assembles on the same branch (the declared branch conditions
where there are any) and continues to its start (ms_sets.h start_at); params (S, npar), col_scale (S, nq) and
hmax (S,) per set. `failed` (S,) is -1, or the first sample that failed (0 where the start failed), `status`
(S,) its status, `start_coef` (S,) the largest velocity coefficient met on the way to the start."""
from __future__ import annotations

import ctypes

import numpy as np

from mechsym.codegen.c_library import _D, _I, _interrupted, _ptr
from mechsym.core.errors import InputError

_L = ctypes.POINTER(ctypes.c_long)


def _bound(lib):
    """lib's dll, its set entry points' argument types declared (once)."""
    dll = lib.dll
    if not getattr(dll, "_ms_sets", False):
        i, d = ctypes.c_int, ctypes.c_double
        dll.ms_inverse_sets.argtypes = [i, i, _D, _D, d, _D, i, _D, _D, d, i, _D, _D, _D, _D, _I, _I]
        dll.ms_kinematics_sets.argtypes = [i, i, _D, _D, d, _D, i, _D, _D, d, i, _D, _D, _D, _D, _D, _D, _I, _I]
        dll.ms_forward_sets.argtypes = [i, d, d, d, d, _D, i, d, d, _D, d, _D, i, _D, _D, d, i, i, _I, _D, _I, _I, i,
                                        _D, _I, _D, _I, _D, _D, _D, _D, _I, _L, _I]
        for name in ("ms_inverse_sets", "ms_kinematics_sets", "ms_forward_sets"):
            getattr(dll, name).restype = i
        dll.ms_mass_sets.argtypes = [i, _D, _D]
        dll.ms_mass_sets.restype = None
        dll._ms_sets = True
    return dll


def _per_set(params, col_scale, hmax):
    p, scale = (np.ascontiguousarray(np.reshape(a, (len(params), -1)), float) for a in (params, col_scale))
    return p, scale, np.ascontiguousarray(hmax, float).reshape(len(params))


def mass_sets(lib, params) -> np.ndarray:
    """The diagonals of the mass matrix (S, nq) of S parameter sets params (S, npar), in one call."""
    p = np.ascontiguousarray(params, float)
    out = np.empty((len(p), lib.nq))
    _bound(lib).ms_mass_sets(len(p), _ptr(p), _ptr(out))
    return out


def inverse_sets(lib, theta, params, reference, col_scale, hmax, tol, maxit=30):
    """CLibrary.inverse for S parameter sets in one call (ms_inverse_sets). Returns failed, status,
    start_coef (S,), coef and branch (S, N: the largest velocity coefficient and the smallest branch condition
    per sample), u (S, N, nrow, 3)."""
    nsets, n = len(params), len(theta)
    th_ref, q_ref, sign = reference
    th = np.ascontiguousarray(theta, float)
    p, scale, steps = _per_set(params, col_scale, hmax)
    start_coef, coef, branch = np.empty(nsets), np.empty((nsets, n)), np.empty((nsets, n))
    u = np.empty((nsets, n, lib.nrow, 3))
    failed, status = np.empty(nsets, dtype=np.intc), np.zeros(nsets, dtype=np.intc)
    _interrupted(_bound(lib).ms_inverse_sets(nsets, n, _ptr(th), _ptr(p), float(th_ref),
                                             _ptr(np.ascontiguousarray(q_ref, float)), int(sign), _ptr(scale),
                                             _ptr(steps), tol, maxit, _ptr(start_coef), _ptr(coef), _ptr(branch),
                                             _ptr(u), failed.ctypes.data_as(_I), status.ctypes.data_as(_I)))
    return failed, status, start_coef, coef, branch, u


def kinematics_sets(lib, theta, params, reference, col_scale, hmax, tol, maxit=30):
    """CLibrary.kinematics for S parameter sets in one call (ms_kinematics_sets). Returns failed, status,
    start_coef (S,), q, dq, ddq (S, N, nq: q, dq/dtheta, d2q/dtheta2 per sample), coef and branch (S, N)."""
    nsets, n, nq = len(params), len(theta), lib.nq
    th_ref, q_ref, sign = reference
    th = np.ascontiguousarray(theta, float)
    p, scale, steps = _per_set(params, col_scale, hmax)
    start_coef, coef, branch = np.empty(nsets), np.empty((nsets, n)), np.empty((nsets, n))
    q, dq, ddq = (np.empty((nsets, n, nq)) for _ in range(3))
    failed, status = np.empty(nsets, dtype=np.intc), np.zeros(nsets, dtype=np.intc)
    _interrupted(_bound(lib).ms_kinematics_sets(nsets, n, _ptr(th), _ptr(p), float(th_ref),
                                                _ptr(np.ascontiguousarray(q_ref, float)), int(sign), _ptr(scale),
                                                _ptr(steps), tol, maxit, _ptr(start_coef), _ptr(q), _ptr(dq),
                                                _ptr(ddq), _ptr(coef), _ptr(branch), failed.ctypes.data_as(_I),
                                                status.ctypes.data_as(_I)))
    return failed, status, start_coef, q, dq, ddq, coef, branch


def forward_sets(lib, torque, theta0, omega0, t_end, grid, rtol, atol, params, reference, col_scale, hmax, tol,
                 events=(), maxit=30, max_events=64):
    """CLibrary.forward (no dense record) for S parameter sets in one call (ms_forward_sets): independent
    integrations from the same (theta0, omega0) under the same constant torque, each with its own DOP853 step
    control and located events (component, value, direction, terminal; at most 64 kinds, at most
    `max_events` kept per set). Returns status and start_coef (S,), the configuration at the start q0 (S, nq),
    the right-hand side there f0 (S, 2: omega, thetadd), the states on the grid y (S, len(grid), 2) of which
    written (S,) are valid, nfev (S,), and per set its events [(time, index, state), ...] in time order."""
    nsets, n_grid, n_ev = len(params), len(grid), len(events)
    if n_ev > 64:
        raise InputError(f"the C integrator locates at most 64 kinds of event, got {n_ev}")
    th_ref, q_ref, sign = reference
    p, scale, steps = _per_set(params, col_scale, hmax)
    grid = np.ascontiguousarray(grid, float)
    comp, direc, term = (np.array([int(e[k]) for e in events] or [0], dtype=np.intc) for k in (0, 2, 3))
    value = np.array([e[1] for e in events] or [0.0])
    ev_t, ev_id, ev_y = np.empty((nsets, max_events)), np.empty((nsets, max_events), np.intc), np.empty((nsets, max_events, 2))
    n_events, written, status = (np.zeros(nsets, dtype=np.intc) for _ in range(3))
    start_coef, q0, f0, nfev = np.empty(nsets), np.empty((nsets, lib.nq)), np.empty((nsets, 2)), np.zeros(nsets, np.dtype(ctypes.c_long))
    y = np.empty((nsets, n_grid, 2))
    ip = lambda a: a.ctypes.data_as(_I)
    _interrupted(_bound(lib).ms_forward_sets(
        nsets, float(torque), float(theta0), float(omega0), float(t_end), _ptr(grid), n_grid, rtol, atol, _ptr(p),
        float(th_ref), _ptr(np.ascontiguousarray(q_ref, float)), int(sign), _ptr(scale), _ptr(steps), tol, maxit,
        n_ev, ip(comp), _ptr(value), ip(direc), ip(term), max_events, _ptr(ev_t), ip(ev_id), _ptr(ev_y),
        ip(n_events), _ptr(start_coef), _ptr(q0), _ptr(f0), _ptr(y), ip(written), nfev.ctypes.data_as(_L),
        ip(status)))
    hits = [sorted(((float(ev_t[k, j]), int(ev_id[k, j]), ev_y[k, j].copy()) for j in range(n_events[k])),
                   key=lambda hit: hit[:2]) for k in range(nsets)]
    return status, start_coef, q0, f0, y, written, nfev, hits
