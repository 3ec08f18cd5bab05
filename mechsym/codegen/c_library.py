"""The ctypes view of a compiled planar mechanism (`CLibrary`): its per-sample functions with the numpy
backend's array layouts, its kernels (the tracker, the continuation's walk, inverse dynamics, kinematics, the
reduced ODE, the forward integrator, each over many samples in one call; the same analyses over many
parameter sets in one call are mechsym.codegen.c_sets') and the factorisations of Phi_q made in C (`CFactor`). The library itself comes
from the content-keyed cache (mechsym.codegen.c_backend)."""
from __future__ import annotations

import ctypes
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from mechsym.codegen.constants import DENSE_RECORD, Status
from mechsym.core.budget import check_memory, memory_limit
from mechsym.core.errors import InputError

if TYPE_CHECKING:                                   # an annotation only (c_backend builds a CLibrary)
    from mechsym.codegen.c_backend import Compiled

_D = ctypes.POINTER(ctypes.c_double)
_I = ctypes.POINTER(ctypes.c_int)




def _ptr(a):
    return a.ctypes.data_as(_D)


class Failure(NamedTuple):
    """Where a C continuation (runtime/ms_continuation.h advance) stopped for good, a step shorter than twice the
    floor still failing: the last solved angle and its configuration (theta_a, q_a), the angle not reached
    (theta_b) and Newton's last iterate there (q_b); `converged` tells a change of branch (Newton converged
    on another one) from a Newton failure (a limit position or a dead point)."""

    status: int
    theta_a: float
    theta_b: float
    q_a: np.ndarray
    q_b: np.ndarray

    @property
    def converged(self) -> bool:
        """Newton converged at theta_b, on another branch (or far from the prediction)."""
        return self.status in (Status.OFF_BRANCH, Status.DET_SIGN, Status.FAR)


def _interrupted(status):
    """Ctrl-C inside a long C call ends it with status INTERRUPTED: raise it as Python does."""
    if status == Status.INTERRUPTED:
        raise KeyboardInterrupt
    return status


class CLibrary:
    """ctypes view of a compiled mechanism; array layouts match the numpy backend's functions."""

    def __init__(self, compiled: Compiled):
        dll, meta = compiled.dll, compiled.meta
        self.dll, self.meta, self.path = dll, meta, compiled.path
        self.nq, self.nrow, self.nth, self.npar = meta["nq"], meta["nrow"], meta["nth"], meta["npar"]
        i, d = ctypes.c_int, ctypes.c_double
        for name in ("ms_applied", "ms_jac"):
            getattr(dll, name).argtypes = [i, _D, _D, _D]
        dll.ms_phi.argtypes = [i, _D, _D, _D, _D]
        dll.ms_gamma.argtypes = [i, _D, _D, _D, _D]
        dll.ms_gamma3.argtypes = [i, _D, _D, _D, _D, _D]
        dll.ms_applied_rate.argtypes = [i, _D, _D, _D, _D]
        dll.ms_energy.argtypes = [i, _D, _D, _D, _D]
        dll.ms_points.argtypes = [i, _D, _D, _D, i]
        dll.ms_branches.argtypes = [i, _D, _D, _D, i]
        dll.ms_mass.argtypes = [_D, _D]
        if meta["square"]:
            dll.ms_inverse.argtypes = [i, _D, _D, _D, _D, d, i, d, _D, _D, _D, _D, _I, _D]
            dll.ms_inverse.restype = i
            dll.ms_kinematics.argtypes = [i, _D, _D, _D, _D, d, i, d, _D, _D, _D, _D, _D, _I, _D]
            dll.ms_kinematics.restype = i
            if meta.get("lanes"):
                dll.ms_inverse_columns.argtypes = [i, _D, _D, _D, _D, d, i, d, i, _D, _D, _D, _D, _I, _D]
                dll.ms_inverse_columns.restype = i
            dll.ms_ode.argtypes = [i, _D, _D, d, _D, _D, _D, d, i, d, _D, _D, _I, _D]
            dll.ms_ode.restype = i
            dll.ms_forward.argtypes = [d, d, d, d, _D, i, d, d, _D, _D, _D, d, i, d, i, _I, _D, _I, _I, i, _D, _I, _D,
                                       _I, _D, ctypes.POINTER(ctypes.c_long), i, _D, ctypes.POINTER(ctypes.c_long), _I]
            dll.ms_forward.restype = i
            dll.ms_factor.argtypes = [i, _D, _D, _D, _I, _I]
            dll.ms_factor.restype = i
            dll.ms_track.argtypes = [_D, _D, _D, _D, _D, d, i, _D, _D, _D, _D, _I]
            dll.ms_track.restype = i
            dll.ms_track_rows.argtypes = [_D, _D, _D, _D, _D, d, i, i, _I, _D, _D, _D, _D, _D]
            dll.ms_track_rows.restype = i
            dll.ms_walk.argtypes = [_D, d, d, _D, _D, _D, d, i, d, _D, _D, _D, _D, _I, _D]
            dll.ms_walk.restype = i
            dll.ms_solve.argtypes = [i, i, i, _D, _I, _D, _D]
            dll.ms_solve.restype = i
            self.nslot, self.nblock = meta["nslot"] + meta["block"] ** 2, max(meta["block"], 1)

    def _failure_record(self):
        """The array a long call's continuation writes where it stops (theta_a, theta_b, q_a, q_b); NaN if not."""
        return np.full(2 + 2 * self.nq, np.nan)

    def _failure(self, failed, status, fail):
        """The `Failure` a long call recorded, or None (it succeeded, or stopped before its continuation)."""
        if failed < 0 or np.isnan(fail[0]):
            return None
        nq = self.nq
        return Failure(status, float(fail[0]), float(fail[1]), fail[2:2 + nq].copy(), fail[2 + nq:].copy())

    # -- evaluation with the numpy backend's layout: groups (size, N) in, (out, N) or (N, r, c) out --
    @staticmethod
    def _samples(a, size):
        a = np.asarray(a, float)
        single = a.ndim == 1
        return np.ascontiguousarray((a[:, None] if single else a).T.reshape(-1, size)), single

    def _params(self, p):
        return np.ascontiguousarray(np.asarray(p, float).reshape(self.npar))

    def _over_samples(self, entry, width, p, q, *rates):
        """entry(N, q, *rates, p, out) over the samples of q and of each array of `rates` (q's size): (width,)
        for one sample, (width, N) for N."""
        qs, single = self._samples(q, self.nq)
        more = [self._samples(r, self.nq)[0] for r in rates]
        out = np.empty((len(qs), width))
        entry(len(qs), _ptr(qs), *map(_ptr, more), _ptr(self._params(p)), _ptr(out))
        return out[0] if single else out.T

    def phi(self, q, th, p):
        """Constraint residuals Phi(q, theta, p): (nrow,) for one q, (nrow, N) for q of shape (nq, N)."""
        qs, single = self._samples(q, self.nq)
        ts, _ = self._samples(np.broadcast_to(th, (self.nth,) + np.shape(q)[1:]), self.nth)
        out = np.empty((len(qs), self.nrow))
        self.dll.ms_phi(len(qs), _ptr(qs), _ptr(ts), _ptr(self._params(p)), _ptr(out))
        return out[0] if single else out.T

    def jac(self, q, p):
        """Constraint Jacobian Phi_q: (nrow, nq) for one q, (N, nrow, nq) for N samples."""
        qs, single = self._samples(q, self.nq)
        out = np.empty((len(qs), self.nrow, self.nq))
        self.dll.ms_jac(len(qs), _ptr(qs), _ptr(self._params(p)), _ptr(out))
        return out[0] if single else out

    def gamma(self, q, qd, p):
        """gamma(q, q', p) with Phi_q q'' = -gamma: (nrow,) or (nrow, N)."""
        return self._over_samples(self.dll.ms_gamma, self.nrow, p, q, qd)

    def gamma3(self, q, qd, qdd, p):
        """gamma3(q, q', q'', p) with Phi_q q''' = -gamma3: (nrow,) or (nrow, N)."""
        return self._over_samples(self.dll.ms_gamma3, self.nrow, p, q, qd, qdd)

    def applied_rate(self, q, qd, p):
        """q' . (dQ/dq) q', the rate of the applied forces along the motion: (1,) or (1, N)."""
        return self._over_samples(self.dll.ms_applied_rate, 1, p, q, qd)

    def applied(self, q, p):
        """Applied generalised forces Q(q, p) (gravity and loads): (nq,) or (nq, N)."""
        return self._over_samples(self.dll.ms_applied, self.nq, p, q)

    def energy(self, q, qd, p):
        """Kinetic and potential energy: (2,) or (2, N)."""
        return self._over_samples(self.dll.ms_energy, 2, p, q, qd)

    def mass(self, p):
        """The diagonal of the mass matrix (nq,) at parameters p."""
        out = np.empty(self.nq)
        self.dll.ms_mass(_ptr(self._params(p)), _ptr(out))
        return out

    def _width_call(self, fn, width, q, p):
        qs, single = self._samples(q, self.nq)
        out = np.empty((len(qs), max(width, 1)))
        fn(len(qs), _ptr(qs), _ptr(self._params(p)), _ptr(out), max(width, 1))
        out = out[:, :width]
        return out[0] if single else out.T

    def points(self, q, p):
        """Every named point's x, y in the fixed frame: (2 n_points,) or (2 n_points, N)."""
        return self._width_call(self.dll.ms_points, 2 * self.meta["n_points"], q, p)

    def branches(self, q, p):
        """The declared branch conditions' values (positive on the branch): (n_branches,) or (n_branches, N)."""
        return self._width_call(self.dll.ms_branches, self.meta["n_branches"], q, p)

    def factor(self, q, p) -> "CFactor":
        """Phi_q factorised at configurations q (nq,) or (nq, N) by the static sparse elimination."""
        qs, _ = self._samples(q, self.nq)
        n = len(qs)
        a, piv, ok = np.empty((n, self.nslot)), np.empty((n, self.nblock), dtype=np.intc), np.empty(n, dtype=np.intc)
        _interrupted(self.dll.ms_factor(n, _ptr(qs), _ptr(self._params(p)), _ptr(a), piv.ctypes.data_as(_I),
                                        ok.ctypes.data_as(_I)))
        return CFactor(self, a, piv, ok.astype(bool))

    # -- kernels -----------------------------------------------------------------------------------
    def tracker(self, params, col_scale, tol, maxit=30):
        """track(q, theta, thetad) -> (status, q, J (nq, nth), a0 (nq,), applied (nq,), the CFactor of Phi_q
        at q): one state of a simulation from the prediction q (see ms_track), with fixed parameters."""
        p = self._params(params)
        scale = np.ascontiguousarray(col_scale, float)
        q, th, thd = np.empty(self.nq), np.empty(self.nth), np.empty(self.nth)
        jq, a0, app = np.empty((self.nq, self.nth)), np.empty(self.nq), np.empty(self.nq)
        lu, piv = np.empty((1, self.nslot)), np.empty((1, self.nblock), dtype=np.intc)
        pointers = [_ptr(a) for a in (q, th, thd, p, scale)] + [float(tol), int(maxit)] + \
            [_ptr(a) for a in (jq, a0, app, lu)] + [piv.ctypes.data_as(_I)]
        fn, keep, ok = self.dll.ms_track, (p, scale), np.ones(1, bool)  # (the pointers' arrays stay alive)

        def track(q0, theta, thetad):
            assert keep
            q[:], th[:], thd[:] = q0, theta, thetad
            status = fn(*pointers)
            return status, q.copy(), jq.copy(), a0.copy(), app.copy(), CFactor(self, lu.copy(), piv.copy(), ok)

        return track

    def walker(self, params, col_scale, tol, hmax, maxit=30):
        """walk(q, theta0, theta1, thetad) -> (status, q, J, a0, applied, the CFactor of Phi_q at q, `Failure` or
        None) of a one-coordinate mechanism: from q solved at theta0, the continuation to theta1 in steps of at
        most hmax (see ms_walk), then the state there as `tracker`'s; q is the last solved one where it stops."""
        p = self._params(params)
        scale = np.ascontiguousarray(col_scale, float)
        q, thd, fail = np.empty(self.nq), np.empty(self.nth), self._failure_record()
        jq, a0, app = np.empty((self.nq, self.nth)), np.empty(self.nq), np.empty(self.nq)
        lu, piv = np.empty((1, self.nslot)), np.empty((1, self.nblock), dtype=np.intc)
        ptrs = [_ptr(a) for a in (jq, a0, app, lu)] + [piv.ctypes.data_as(_I), _ptr(fail)]
        fn, keep, ok = self.dll.ms_walk, (p, scale), np.ones(1, bool)

        def walk(q0, theta0, theta1, thetad):
            assert keep
            q[:], thd[:], fail[:] = q0, thetad, np.nan
            status = _interrupted(fn(_ptr(q), float(theta0), float(theta1), _ptr(thd), _ptr(p), _ptr(scale),
                                     float(tol), int(maxit), float(hmax), *ptrs))
            return (status, q.copy(), jq.copy(), a0.copy(), app.copy(), CFactor(self, lu.copy(), piv.copy(), ok),
                    self._failure(0 if status else -1, status, fail))

        return walk

    def track_rows(self, params, col_scale, tol, rows, maxit=30):
        """track(q, theta, thetad) -> (status, q, J (nq, nth), a0, applied, base (r,), coef (r, nth)): one
        state as `tracker`'s, and the multipliers of the given rows of Phi_q as linear functions of the
        coordinates' accelerations (see ms_track_rows), in one call with the pointers bound once."""
        p = self._params(params)
        scale = np.ascontiguousarray(col_scale, float)
        idx = np.ascontiguousarray(rows, dtype=np.intc)
        q, th, thd = np.empty(self.nq), np.empty(self.nth), np.empty(self.nth)
        jq, a0, app = np.empty((self.nq, self.nth)), np.empty(self.nq), np.empty(self.nq)
        base, coef = np.empty(len(idx)), np.empty((len(idx), self.nth))
        pointers = [_ptr(a) for a in (q, th, thd, p, scale)] + [float(tol), int(maxit), len(idx), idx.ctypes.data_as(_I)] \
            + [_ptr(a) for a in (jq, a0, app, base, coef)]
        fn, keep = self.dll.ms_track_rows, (p, scale, idx)

        def track(q0, theta, thetad):
            assert keep
            q[:], th[:], thd[:] = q0, theta, thetad
            status = fn(*pointers)
            return status, q.copy(), jq.copy(), a0.copy(), app.copy(), base.copy(), coef.copy()

        return track

    def inverse(self, theta, params, q0, col_scale, tol, maxit=30, hmax=0.1, want_q=False):
        """The inverse-dynamics basis along theta (N,) from q0 near theta[0], with per-sample largest
        velocity coefficient and smallest branch condition (and q if asked). `failure` (the continuation's
        record where it stopped, see `Failure`) is the last item."""
        n = len(theta)
        th = np.ascontiguousarray(theta, float)
        q_out = np.empty((n, self.nq)) if want_q else None
        coef, branch = np.empty(n), np.empty(n)
        u_out = np.empty((n, self.nrow, 3))
        status = ctypes.c_int(0)
        fail = self._failure_record()
        failed = self.dll.ms_inverse(n, _ptr(th), _ptr(self._params(params)), _ptr(np.ascontiguousarray(q0, float)),
                                     _ptr(np.ascontiguousarray(col_scale, float)), tol, maxit, hmax,
                                     _ptr(q_out) if want_q else None, _ptr(coef), _ptr(branch), _ptr(u_out),
                                     ctypes.byref(status), _ptr(fail))
        return failed, _interrupted(status.value), q_out, coef, branch, u_out, self._failure(failed, status.value, fail)

    def kinematics(self, theta, params, q0, col_scale, tol, maxit=30, hmax=0.1):
        """One-coordinate kinematics along theta (N,) from q0 near theta[0], in one call: (index of the first
        sample that failed or -1, its status, q, dq/dtheta, d2q/dtheta2 (N, nq) each, the largest velocity
        coefficient and the smallest branch condition per sample, and the continuation's `Failure` or None)."""
        n = len(theta)
        th = np.ascontiguousarray(theta, float)
        q, dq, ddq = (np.empty((n, self.nq)) for _ in range(3))
        coef, branch, status = np.empty(n), np.empty(n), ctypes.c_int(0)
        fail = self._failure_record()
        failed = self.dll.ms_kinematics(n, _ptr(th), _ptr(self._params(params)), _ptr(np.ascontiguousarray(q0, float)),
                                        _ptr(np.ascontiguousarray(col_scale, float)), tol, maxit, hmax, _ptr(q),
                                        _ptr(dq), _ptr(ddq), _ptr(coef), _ptr(branch), ctypes.byref(status), _ptr(fail))
        return failed, _interrupted(status.value), q, dq, ddq, coef, branch, self._failure(failed, status.value, fail)

    def inverse_columns(self, theta, params, q0, col_scale, tol, coef, maxit=30, hmax=0.1):
        """`inverse` with the unknowns combined for S speeds as they are computed (coef (S, 3): alpha,
        omega^2, 1 per speed): failed, status, coef_max and branch (N,), and the columns (nrow, S, N). Only
        for a library with lanes (meta["lanes"]); the continuation's `Failure` or None last."""
        n, coef = len(theta), np.ascontiguousarray(coef, float).reshape(-1, 3)
        th = np.ascontiguousarray(theta, float)
        coef_max, branch = np.empty(n), np.empty(n)
        cols = np.empty((self.nrow, len(coef), n))
        status = ctypes.c_int(0)
        fail = self._failure_record()
        failed = self.dll.ms_inverse_columns(n, _ptr(th), _ptr(self._params(params)),
                                             _ptr(np.ascontiguousarray(q0, float)),
                                             _ptr(np.ascontiguousarray(col_scale, float)), tol, maxit, hmax, len(coef),
                                             _ptr(coef), _ptr(coef_max), _ptr(branch), _ptr(cols), ctypes.byref(status),
                                             _ptr(fail))
        return failed, _interrupted(status.value), coef_max, branch, cols, self._failure(failed, status.value, fail)

    def ode(self, theta, omega, torque, params, q0, col_scale, tol, maxit=30, hmax=0.1):
        """The reduced ODE's right-hand side (N, 2) and exact Jacobian (N, 2, 2) along theta (N,) from q0
        near theta[0]; returns failed (-1 or the first failing sample), status, f, jac and the continuation's
        `Failure` or None."""
        n = len(theta)
        th = np.ascontiguousarray(theta, float)
        om = np.ascontiguousarray(np.broadcast_to(np.asarray(omega, float), th.shape))
        f, jac = np.empty((n, 2)), np.empty((n, 2, 2))
        status = ctypes.c_int(0)
        fail = self._failure_record()
        failed = self.dll.ms_ode(n, _ptr(th), _ptr(om), float(torque), _ptr(self._params(params)),
                                 _ptr(np.ascontiguousarray(q0, float)), _ptr(np.ascontiguousarray(col_scale, float)),
                                 tol, maxit, hmax, _ptr(f), _ptr(jac), ctypes.byref(status), _ptr(fail))
        return failed, _interrupted(status.value), f, jac, self._failure(failed, status.value, fail)

    def forward(self, torque, theta0, omega0, t_end, grid, rtol, atol, params, q0, row_scale, tol, events=(),
                maxit=30, hmax=0.1, max_events=10000, dense=False, what="a forward run"):
        """Integrate the reduced one-coordinate ODE in C (DOP853). events: (component, value, direction,
        terminal), at most 64. Returns the states on the grid, the events (time, index, state) in time order,
        the right-hand sides evaluated, the status, and with `dense` the dense output over (theta, omega) (a
        results.DenseSolution; else None). The record of every step is bounded by the memory limit
        (budget.check_memory, naming `what`): a run with more steps than the first buffer holds is run again
        into one of the size it reported, once that size passes the check."""
        cap = int(min(DENSE_CHUNK, max(1, memory_limit() // DENSE_BYTES)))
        while True:
            out, hits, nfev, status, rec, n_rec = self._forward(torque, theta0, omega0, t_end, grid, rtol, atol,
                                                                params, q0, row_scale, tol, events, maxit, hmax,
                                                                max_events, cap if dense else None)
            if not dense or status or n_rec <= cap:
                break
            check_memory(f"the dense output of {what} ({n_rec} steps; dense_output=False keeps none)",
                         n_rec * DENSE_BYTES)
            cap = n_rec
        solution = None
        if dense and not status and n_rec:
            from mechsym.core.results import DenseSolution

            rec = rec[:n_rec]
            stop = min([t_end, rec[-1, 0] + rec[-1, 1]] + [t for t, i, _ in hits if events[i][3]])
            solution = DenseSolution(rec[:, 0], rec[:, 1], rec[:, 2:4], rec[:, 4:].reshape(-1, 7, 2), stop)
        return out, hits, nfev, status, solution

    def _forward(self, torque, theta0, omega0, t_end, grid, rtol, atol, params, q0, row_scale, tol, events, maxit,
                 hmax, max_events, cap):
        """One ms_forward call; cap None: no dense record, else a record of up to cap steps."""
        grid = np.ascontiguousarray(grid, float)
        n_ev = len(events)
        if n_ev > 64:
            raise InputError(f"the C integrator locates at most 64 kinds of event, got {n_ev}")
        comp = np.array([e[0] for e in events] or [0], dtype=np.intc)
        value = np.array([e[1] for e in events] or [0.0])
        direc = np.array([e[2] for e in events] or [0], dtype=np.intc)
        term = np.array([int(e[3]) for e in events] or [0], dtype=np.intc)
        ev_t = np.empty(max_events)
        ev_id = np.empty(max_events, dtype=np.intc)
        ev_y = np.empty((max_events, 2))
        n_events, status = ctypes.c_int(0), ctypes.c_int(0)
        nfev, n_rec = ctypes.c_long(0), ctypes.c_long(0)
        out = np.empty((len(grid), 2))
        rec = None if cap is None else np.empty((max(cap, 1), DENSE_RECORD))
        ip = lambda a: a.ctypes.data_as(_I)
        written = self.dll.ms_forward(
            float(torque), float(theta0), float(omega0), float(t_end), _ptr(grid), len(grid), rtol, atol,
            _ptr(self._params(params)), _ptr(np.ascontiguousarray(q0, float)), _ptr(np.ascontiguousarray(row_scale, float)),
            tol, maxit, hmax, n_ev, ip(comp), _ptr(value), ip(direc), ip(term), max_events, _ptr(ev_t), ip(ev_id), _ptr(ev_y),
            ctypes.byref(n_events), _ptr(out), ctypes.byref(nfev), cap or 0, None if rec is None else _ptr(rec),
            ctypes.byref(n_rec), ctypes.byref(status))
        k = n_events.value
        return (out[:written], list(zip(ev_t[:k], ev_id[:k], ev_y[:k])), nfev.value, _interrupted(status.value), rec,
                n_rec.value)


DENSE_BYTES = 8 * DENSE_RECORD  # a step of the C integrator's dense record
DENSE_CHUNK = 1 << 16  # steps the first record of a forward run holds (9 MiB; a run touches only what it writes)


class CFactor:
    """Factorisations of Phi_q at N configurations made in C, with the interface of
    mechsym.codegen.sparse_numpy.Factor: solve (Phi_q x = b) and solve_t (Phi_q^T y = c) for b of shape
    (N, n) or (N, n, m), and take(mask). A singular sample gives NaN in its own solutions only."""

    def __init__(self, lib, a, piv, ok):
        self.lib, self.a, self.piv, self.ok = lib, a, piv, ok

    def take(self, mask):
        """The factorisations of the samples selected by the boolean `mask`."""
        if mask.all():
            return self
        return CFactor(self.lib, self.a[mask], self.piv[mask], self.ok[mask])

    def _solve(self, b, transpose):
        b = np.asarray(b, float)
        vector = b.ndim == 2
        rhs = np.ascontiguousarray(b[:, None, :] if vector else np.swapaxes(b, 1, 2))  # (N, m, n)
        n, m = rhs.shape[:2]
        if n != len(self.a):
            raise ValueError(f"{n} right-hand sides for {len(self.a)} factorisations")
        x = np.empty_like(rhs)
        _interrupted(self.lib.dll.ms_solve(n, m, int(transpose), _ptr(self.a), self.piv.ctypes.data_as(_I),
                                           _ptr(rhs), _ptr(x)))
        return x[:, 0, :] if vector else np.swapaxes(x, 1, 2)

    def solve(self, b):
        """x with Phi_q x = b, for b (N, n) or (N, n, m)."""
        return self._solve(b, False)

    def solve_t(self, c):
        """y with Phi_q^T y = c, for c (N, n) or (N, n, m)."""
        return self._solve(c, True)
