"""The kinematics of a spatial closed-loop mechanism (mechsym.spatial.loops.LoopSystem) in its joint
coordinates: assembly, the mobility, continuation along the driven coordinates with the branch kept, and
exact velocities and accelerations.

The driven coordinates theta (k of them, `Tree.drive`: tree coordinates, or a closing joint's own) join the
closure rows into the system A(q) = [J; D] (D: the drives' rows, LoopSystem.drive_rows: a tree coordinate's
unit row, a driven closure's generated row), of rank nv where the drives match the mobility; with
redundant rows it has more rows than columns but is consistent, and every solve below is A's
pseudo-inverse (which rows are redundant changes along Bricard's motion, so no fixed choice of rows would
do):

  positions       phi(q) = 0, drives(q) = theta     Newton in the speeds of no driven tree coordinate, a driven
                                                    closure's row among the rows: q <- q (+) (-J_D^+ phi)
  velocities      A v = [0; theta']                 q' = dq/dtheta = A^-1 [0; I]
  accelerations   A dv/dt = [-gamma_R(q, v); theta'' - gamma_D(q, v)]

so nothing is differenced. A sweep continues over nodes at most a continuation step apart (0.1 rad, or a
tenth of the mechanism's size along a length: mechsym.codegen.constants.STEP) from a second-order
prediction (q (+) (q' h + q'' h^2 / 2)); a step is kept when Newton converges, moved the prediction by less
than a fifth of the step and, where A is square (no redundant row), kept the sign of det A of the start
(the branch); else it is halved, down to
STEP_FLOOR of the step, where the continuation stops and says why (a fold of the drives, or a dead point or
change of branch). Every
sample is then corrected at once (batched Newton from its node's prediction) and checked the same way. On the C
backend a sweep of one driven tree coordinate (joints whose rates are their speeds, spherical joints) runs in C, step
for step (mechsym.spatial.loop_compiled; least-squares solves, the pseudo-inverse's where the systems have full
column rank), with the same errors.
"""
from __future__ import annotations

import numpy as np

from mechsym.codegen.constants import MAX_STEP, STEP, STEP_FLOOR
from mechsym.core.errors import AssemblyError, InputError, SingularError
from mechsym.spatial.loops import closure_drives
from mechsym.spatial.loop_compiled import sweep_entry

__all__ = ["LoopSolver", "LoopKinematics"]

TOL = 1e-12              # residual tolerance relative to the mechanism's size (angles: absolute)
SINGULAR = 1e8           # condition number of the scaled A beyond which a configuration is a dead point
MAX_ITER = 30
RCOND = 1e-10            # singular values of A below RCOND times the largest: redundant rows
FOLD = 1e2               # a stop where the scaled A's condition number passes FOLD while the closure rows'
FOLD_RANK = 1e-3         # smallest kept singular value stays above FOLD_RANK of the largest: a fold of the drives


def solve(A, b):
    """x = A^+ b for A (N, m, n), b (N, m) or (N, m, j): the solution of a consistent system with redundant rows."""
    x = np.linalg.pinv(A, rcond=RCOND) @ (b[..., None] if b.ndim == 2 else b)
    return x[..., 0] if b.ndim == 2 else x


def condition(A):
    """sigma_1 / sigma_n of A (N, m, n), m >= n: the condition number of its column space."""
    s = np.linalg.svd(A, compute_uv=False)
    with np.errstate(divide="ignore"):
        return s[:, 0] / s[:, A.shape[2] - 1]


class LoopKinematics:
    """Positions and exact derivatives at N samples: theta (N, k), q (N, nq), dq (N, nv, k) = dv/dtheta',
    ddq (N, nv) (one driven coordinate: the acceleration at unit speed, zero theta'')."""

    def __init__(self, theta, q, dq, ddq):
        self.theta, self.q, self.dq, self.ddq = theta, q, dq, ddq

    def velocities(self, thetad):
        """v (N, nv) at driven speeds thetad (N, k) or broadcastable."""
        return np.einsum("nik,nk->ni", self.dq, np.broadcast_to(thetad, self.theta.shape))


class LoopSolver:
    """Newton on the closure rows and drives of one LoopSystem at fixed parameter values."""

    def __init__(self, system, params=None):
        self.s = system
        self.p = system.params(params)
        # the tree's entry points at this parameter vector: None where it is the tree's own (the fast entries)
        self.tree_p = None if np.array_equal(self.p, system.tree.params()) else self.p
        self.scale = system.size(self.p)
        self.col = system._column_scale(self.scale)
        self.rows = system._row_scale(self.scale)
        self.max_step = MAX_STEP * self.col
        self.k = system.ndrives
        self.theta_scale = np.ones(self.k)        # a drive's scale: its speed's column, a driven closure's by kind
        self.theta_scale[system.tree_driven] = self.col[system.drive_v]
        for k, c in zip(system.closure_driven, closure_drives(system.declaration)):
            self.theta_scale[k] = self.scale if c.travel else 1.0
        self.sign = None
        self.constrained_accelerations = None    # (q, v, tau) -> dv/dt, made on first use (loop_dynamics.accelerations)
        self._sweep = None                       # (theta, nodes, q0) -> (q, dq, ddq), made on first use (`sweep`)

    # -- the square system --------------------------------------------------------------------------------
    def residual(self, q, theta):
        """[phi(q), drives(q) - theta] (N, rows + k) and A = [J; D] (N, rows + k, nv) (a driven closure's angle
        apart from theta by less than pi)."""
        s = self.s
        phi, J, _ = s.closure(q, params=self.p)
        values, D, _, _ = s.drive_rows(q, params=self.p)
        return np.concatenate([phi, self._apart(values, theta)], axis=1), np.concatenate([J, D], axis=1)

    def _apart(self, values, theta):
        """values - theta (N, k), the driven closures' angles wrapped into [-pi, pi)."""
        diff = values - theta
        wrap = self.s.drive_angles
        diff[:, wrap] = (diff[:, wrap] + np.pi) % (2 * np.pi) - np.pi
        return diff

    def scaled(self, A):
        """A with rows and columns in units of the mechanism's size (dimensionless)."""
        rows = np.concatenate([self.rows, self.theta_scale])
        return A * self.col[None, None, :] / rows[None, :, None]

    def newton(self, q, theta):
        """Batched Newton from q (N, nq) at theta (N, k): the driven coordinates set to theta, the others
        moved by J_D^+ phi (J_D: J without the driven columns; the pseudo-inverse, since with redundant rows
        a residual off the solutions need not lie in J's range). (q, converged (N,), the largest correction
        relative to the coordinate scales (N,))."""
        s = self.s
        q = np.array(q, float)
        tree, closing = s.tree_driven, s.closure_driven
        moved = np.zeros(len(q))
        if tree:
            moved = np.max(np.abs(q[:, s.drive_q] - theta[:, tree]) / self.theta_scale[tree], axis=1)
        q[:, s.drive_q] = theta[:, tree]
        free = np.setdiff1d(np.arange(s.nv), s.drive_v)
        active = np.ones(len(q), bool)
        converged = np.zeros(len(q), bool)
        for _ in range(MAX_ITER):
            idx = np.flatnonzero(active)
            if idx.size == 0:
                break
            phi, J, _ = s.closure(q[idx], params=self.p)
            if closing:     # a driven closure's row joins the closure rows
                values, D, _, _ = s.drive_rows(q[idx], params=self.p)
                phi = np.concatenate([phi, self._apart(values, theta[idx])[:, closing]], axis=1)
                J = np.concatenate([J, D[:, closing]], axis=1)
            step = np.zeros((len(idx), s.nv))
            with np.errstate(all="ignore"):
                step[:, free] = solve(J[:, :, free], phi)
            step = np.clip(np.nan_to_num(step), -self.max_step, self.max_step)
            q[idx] = s.integrate(q[idx], -step)
            size = np.max(np.abs(step) / self.col, axis=1)
            moved[idx] += size
            small = size < 1e-13
            if small.any():
                done = idx[small]
                r, _ = self.residual(q[done], theta[done])
                converged[done] = np.all(np.abs(r) <= TOL * np.concatenate([self.rows, self.theta_scale]), axis=1)
                active[done] = False
        return q, converged, moved

    def determinant_sign(self, q):
        """sign det A at each q (N, nq): the branch, where A is square (else zeros: no sign to keep)."""
        _, A = self.residual(q, np.zeros((len(q), self.k)))
        if A.shape[1] != A.shape[2]:
            return np.zeros(len(q))
        return np.sign(np.linalg.det(self.scaled(A)))

    # -- assembly -----------------------------------------------------------------------------------------
    def close(self, guess=None) -> np.ndarray:
        """q with the loops closed from `guess` (default zero joint motion) by Gauss-Newton on every closure
        row (least change), where the rank of J gives the mobility and the redundant rows."""
        s = self.s
        q = s.neutral() if guess is None else np.array(guess, float)
        if q.shape != (s.nq,) or not np.all(np.isfinite(q)):
            raise InputError(f"mechanism '{s.name}': a configuration needs {s.nq} finite coordinates, got shape "
                             f"{q.shape}")
        for _ in range(200):
            phi, J, _ = s.closure(q[None], params=self.p)
            step = np.linalg.lstsq(J[0], phi[0], rcond=None)[0]
            q = s.integrate(q, -np.clip(step, -self.max_step, self.max_step))
            if np.max(np.abs(step) / self.col) < 1e-14:
                break
        phi, _, _ = s.closure(q[None], params=self.p)
        self._closed(phi[0], None, q)
        s.check_mobility(q, self.scale, driven=False)
        return q

    def assemble(self, theta, guess=None) -> np.ndarray:
        """q at the driven values theta (k,), from `guess` (q, default zero joint motion): the loops closed
        first (`close`), the mobility checked against the drives, then the drives added."""
        s = self.s
        theta = np.atleast_1d(np.asarray(theta, float))
        if theta.shape != (self.k,) or not np.all(np.isfinite(theta)):
            raise InputError(f"mechanism '{s.name}': {self.k} finite driven value(s) needed, got {theta.tolist()}")
        q = self.close(guess)
        s.check_mobility(q, self.scale)
        out, ok, _ = self.newton(q[None], theta[None])
        r, _ = self.residual(out, theta[None])
        if not ok[0]:
            self._closed(s.closure(out, params=self.p)[0][0], theta, out[0])
            raise AssemblyError(f"mechanism '{s.name}' cannot reach {self._names(theta)}: the drives do not "
                                f"converge (residual {np.abs(r).max():.3g}); {s.loops_text()}")
        self.check_dead_points(out, theta[None])
        self.sign = self.determinant_sign(out)[0]
        return out[0]

    def _closed(self, phi, theta, q):
        """An AssemblyError naming the loop whose rows stay open."""
        bad = np.abs(phi) / self.rows
        if bad.max() > 1e3 * TOL:
            i = int(np.argmax(bad))
            at = "" if theta is None else f" at {self._names(theta)}"
            raise AssemblyError(f"mechanism '{self.s.name}' cannot assemble{at}: "
                                f"{self.s.describe_row(i)} does not close (residual {bad.max():.3g})")

    def _names(self, theta):
        names = [d.coordinate for d in self.s.declaration.drives]
        return ", ".join(f"{n}={t:.6g}" for n, t in zip(names, np.atleast_1d(theta))) or "no drive"

    def check_dead_points(self, q, theta):
        """A SingularError naming the first sample whose A is singular (a dead point of the drives)."""
        _, A = self.residual(q, theta)
        cond = condition(self.scaled(A))
        bad = ~(cond < SINGULAR)
        if bad.any():
            i = int(np.argmax(bad))
            raise self.dead_point(theta[i], cond[i])

    def dead_point(self, theta, cond) -> SingularError:
        """The error of a dead point at the driven values theta (k,), A's condition number cond."""
        return SingularError(f"mechanism '{self.s.name}' is at a dead point at {self._names(theta)}: the "
                             f"drives and closure rows are singular (condition number {cond:.3g})")

    def lost(self, theta) -> SingularError:
        """The error of a sample at theta (k,) whose Newton fails or leaves the branch."""
        return SingularError(f"mechanism '{self.s.name}': the branch of the assembly is lost at "
                             f"{self._names(theta)} (a dead point or a change of branch)")

    # -- derivatives ---------------------------------------------------------------------------------------
    def derivatives(self, q, second=True):
        """(q' (N, nv, k), q'' (N, nv) for one driven coordinate, else None) at solved q (N, nq)."""
        s = self.s
        _, A = self.residual(q, np.zeros((len(q), self.k)))
        rhs = np.zeros((len(q), s.nrows + self.k, self.k))
        rhs[:, s.nrows:, :] = np.eye(self.k)
        dq = solve(A, rhs)
        ddq = None
        if second and self.k == 1:
            ddq = self.accelerations(q, dq[:, :, 0], np.zeros((len(q), 1)), A)
        return dq, ddq

    def velocities(self, q, thetad):
        """v (N, nv) at solved q for the driven speeds thetad (N, k)."""
        s = self.s
        _, A = self.residual(q, np.zeros((len(q), self.k)))
        rhs = np.zeros((len(q), s.nrows + self.k))
        rhs[:, s.nrows:] = thetad
        return solve(A, rhs)

    def accelerations(self, q, v, thetadd, A=None):
        """dv/dt (N, nv) at q, v for the driven accelerations thetadd (N, k): A dv/dt = [-gamma; thetadd]."""
        _, J, gamma = self.s.closure(q, v, params=self.p)
        _, _, drive_gamma, _ = self.s.drive_rows(q, v, params=self.p)
        if A is None:
            _, A = self.residual(q, np.zeros((len(q), self.k)))
        return solve(A, np.concatenate([-gamma, np.broadcast_to(thetadd, (len(q), self.k)) - drive_gamma], axis=1))

    # -- continuation ----------------------------------------------------------------------------------------
    def sweep(self, theta, start=None) -> LoopKinematics:
        """Kinematics at the samples theta (N, k) (or (N,) for one drive), continued along their order from the
        assembly at theta[0] (from `start`, a guess of q there)."""
        theta = np.asarray(theta, float)
        theta = theta.reshape(len(theta), -1) if theta.ndim == 1 else theta
        if theta.ndim != 2 or theta.shape[1] != self.k or len(theta) == 0 or not np.all(np.isfinite(theta)):
            raise InputError(f"mechanism '{self.s.name}': driven values must be finite, shape (N, {self.k})")
        q0 = self.assemble(theta[0], start)
        dist = np.concatenate([[0.0], np.cumsum(np.max(np.abs(np.diff(theta, axis=0)) / self.theta_scale, axis=1))])
        bucket = np.floor(dist / STEP).astype(int)
        nodes = np.flatnonzero(np.diff(bucket, prepend=-1))          # first sample of each step-long stretch
        if self._sweep is None:                # in C on the C backend (mechsym.spatial.loop_compiled)
            self._sweep = sweep_entry(self, self.numpy_sweep, STEP, STEP_FLOOR)
        return LoopKinematics(theta, *self._sweep(theta, nodes, q0))

    def numpy_sweep(self, theta, nodes, q0):
        """(q, dq, ddq) of `sweep` at theta (N, k) continued over the nodes (indices into theta) from q0 solved
        at theta[0], in numpy."""
        node_q = [q0]
        for a, b in zip(nodes[:-1], nodes[1:]):
            node_q.append(self._continue(theta[a], node_q[-1], theta[b]))
        node_q = np.array(node_q)
        owner = np.searchsorted(nodes, np.arange(len(theta)), side="right") - 1
        dq, ddq = self.derivatives(node_q)
        h = theta - theta[nodes][owner]
        pred = self._predict(node_q[owner], dq[owner], ddq[owner] if ddq is not None else None, h)
        q, ok, moved = self.newton(pred, theta)
        ok &= self.determinant_sign(q) == self.sign
        if not ok.all():
            raise self.lost(theta[int(np.argmin(ok))])
        self.check_dead_points(q, theta)
        dq, ddq = self.derivatives(q)
        return q, dq, ddq

    def _predict(self, q, dq, ddq, h):
        """q (+) (q' h + q'' h^2 / 2) (second order for one drive)."""
        dv = np.einsum("nik,nk->ni", dq, h)
        if ddq is not None:
            dv = dv + 0.5 * ddq * h ** 2
        return self.s.integrate(q, dv)

    def _continue(self, theta_a, q_a, theta_b):
        """q at theta_b continued from the solved (theta_a, q_a) in steps halved where they fail."""
        t0, q = np.array(theta_a, float), q_a
        left, h = 1.0, 1.0
        span = theta_b - theta_a
        while left > 0:
            h = min(h, left)
            t1 = theta_b - (left - h) * span
            dq, ddq = self.derivatives(q[None])
            pred = self._predict(q[None], dq, ddq, (t1 - t0)[None])
            new, ok, moved = self.newton(pred, t1[None])
            step_size = np.max(np.abs(t1 - t0) / self.theta_scale)
            if ok[0] and moved[0] <= 0.2 * max(step_size, 1e-12) + 1e-9 and self.determinant_sign(new)[0] == self.sign:
                t0, q, left = t1, new[0], left - h
                h = min(2 * h, 1.0)
                continue
            h /= 2
            if h * np.max(np.abs(span) / self.theta_scale) < STEP_FLOOR * STEP:
                raise self.stopped(t0, q)
        return q

    def stopped(self, theta, q) -> SingularError:
        """The error of a continuation whose step reaches its floor after theta (k,), q the last configuration
        solved: a fold, where A is nearly singular while the closure rows keep their rank (the drives reach their
        limit on this branch and turn back: the solution curve's tangent has no driven component), else a dead
        point or change of branch."""
        s = self.s
        _, A = self.residual(q[None], np.atleast_1d(theta)[None])
        cond = condition(self.scaled(A))[0]
        _, J, _ = s.closure(q[None], params=self.p)
        sv = np.linalg.svd(J[0] * self.col[None, :] / self.rows[:, None], compute_uv=False)
        rank = s.nv - s.mobility
        where = f"mechanism '{s.name}': the continuation stops near {self._names(theta)}"
        if rank and cond > FOLD and sv[rank - 1] > FOLD_RANK * sv[0]:
            drives = ", ".join(d.coordinate for d in s.declaration.drives)
            return SingularError(f"{where}: {drives} reaches its limit there on this branch and turns back (a fold: "
                                 f"the closure rows keep their rank, the condition number of the drives and rows "
                                 f"is {cond:.3g}); drive another coordinate to pass it; {s.loops_text()}")
        return SingularError(f"{where} (a dead point or a change of branch of {s.loops_text()})")
