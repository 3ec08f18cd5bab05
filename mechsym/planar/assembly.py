"""One configuration of a planar mechanism: assembly, Newton on the closure, its exact derivatives and checks.

The Solver's single-configuration stage (mechsym.planar.solver): `assemble` from the tree guess, `newton`
on a batch of trial configurations (full steps until one is below CHORD_TOL, then one chord step), exact
q' and q'' from Phi_q, the mobility check, and the checks every solved configuration passes: a dead point
(Phi_q's condition number in the mechanism's scales above SINGULAR), the assembly branch (the signs of the
declared conditions, else of det Phi_q) and the conditioning estimate near a bifurcation (`sigma`).
"""
from __future__ import annotations

import numpy as np

from mechsym.codegen.constants import CHORD_TOL
from mechsym.core.errors import AssemblyError, InputError, ModelError, SingularError
from mechsym.planar.kinematics import MAX_ITER, SINGULAR, SUSPECT, TOL, _solve, tree_guess


class Assembly:
    """The Solver's methods on one configuration (or a batch of independent ones)."""

    def assemble(self, theta, guess=None) -> np.ndarray:
        """Coordinates at one input value from the tree guess (or `guess`).

        First the loops are closed alone (Gauss-Newton from the guess), where the rank of the joint
        Jacobian gives the mobility; then the driving rows are added."""
        theta = np.atleast_1d(np.asarray(theta, float))
        q = tree_guess(self.con, self.params) if guess is None else np.array(guess, float)
        nj = self.con.n_joint_rows
        q = self._gauss_newton(q, theta, rows=slice(0, nj))
        self.check_mobility(q)
        q = self._gauss_newton(q, theta, rows=slice(None))
        r = self.f.phi(q, theta, self.params)
        if not np.all(np.abs(r) <= 1e3 * TOL * self.row_scale):
            raise AssemblyError(self._describe_failure(theta, r))
        self.derivatives(q[None], theta[None], second=False)  # a dead point at the start is an error too
        return q

    def correct(self, theta, q) -> np.ndarray:
        """Coordinates at one input value theta (k,) by Newton from coordinates q close to them (handed over
        by the caller, e.g. from another build of the same mechanism), in place of the continuation from
        the declared assembly; the result must close the loops, lie on the declared branches and be no
        dead point."""
        theta = np.atleast_1d(np.asarray(theta, float))
        q = np.asarray(q, float)
        if q.shape != (self.con.n,) or not np.all(np.isfinite(q)):
            raise InputError(f"mechanism '{self.con.mechanism.name}': a start configuration needs {self.con.n} "
                             f"finite coordinates, got shape {q.shape}")
        q, ok = self.newton(q[None], theta[None])
        if not ok[0]:
            raise AssemblyError(self._describe_failure(theta, self.f.phi(q[0], theta, self.params)))
        self._check_branches(q, theta[None])
        self.derivatives(q, theta[None], second=False)  # names a dead point
        return q[0]

    def _gauss_newton(self, q, theta, rows):
        for _ in range(200):
            r = self.f.phi(q, theta, self.params)[rows]
            step, *_ = np.linalg.lstsq(self.f.jac(q, self.params)[rows], r, rcond=None)
            q = q - np.clip(step, -self.max_step, self.max_step)
            if np.max(np.abs(step)) < 1e-14 * self.scale:
                break
        return q

    def check_mobility(self, q):
        """Raise InputError when the mechanism's mobility at q differs from its number of coordinates, naming the
        loops."""
        con, mech = self.con, self.con.mechanism
        jac = self.scaled_jac(self.f.jac(q, self.params))
        joint_rank = np.linalg.matrix_rank(jac[: con.n_joint_rows], tol=1e-9)
        mobility = con.n - joint_rank
        k = len(con.theta)
        loops = "; ".join(loop.describe() for loop in con.topology.loops) or "no loops"
        if mobility != k:
            raise ModelError(mech.name, [
                f"mobility is {mobility} (rank of the constraint Jacobian {joint_rank} for {con.n} coordinates) "
                f"but {k} coordinate(s) are declared [{', '.join(c.name for c in mech.coordinates)}]; {loops}"])
        if con.topology.grubler != mobility:
            import warnings

            warnings.warn(
                f"mechanism '{mech.name}': Grübler count {con.topology.grubler} differs from the mobility {mobility} "
                f"found from the constraint Jacobian (over-constrained or special geometry); {loops}", stacklevel=3)

    def _describe_failure(self, theta, r):
        con = self.con
        bad = np.abs(r) / self.row_scale
        worst = con.row_joint[int(np.argmax(bad))]
        loops = con.topology.loops_through(worst)
        where = "; ".join(loop.describe() for loop in loops) or f"joint {worst}"
        names = ", ".join(f"{c.name}={t:.6g}" for c, t in zip(con.mechanism.coordinates, theta))
        return f"mechanism '{con.mechanism.name}' cannot assemble at {names}: {where} does not close (residual {bad.max():.3g})"

    def newton(self, q, theta):
        """Batched Newton correction; q (N, n), theta (N, k). Returns q and a converged mask.

        Full Newton steps until a step is below CHORD_TOL (relative to the coordinate scales), then one
        chord step with that step's factorisation, so that the returned q is exact to rounding; a sample
        converges when the residual before its chord step is below TOL (the loops close)."""
        p = self.params
        active = np.ones(len(q), bool)
        converged = np.zeros(len(q), bool)
        q = q.copy()
        for _ in range(MAX_ITER):
            idx = np.flatnonzero(active)
            if idx.size == 0:
                break
            qa, ta = q[idx], theta[idx]
            r = self.f.phi(qa.T, ta.T, p).T
            fac = self.f.factor(qa.T, p)
            with np.errstate(all="ignore"):
                step = fac.solve(r)
            step[~np.isfinite(step)] = 0.0
            q[idx] = qa - np.clip(step, -self.max_step, self.max_step)
            close = np.max(np.abs(step) / self.col_scale, axis=1) <= CHORD_TOL
            if close.any():
                done = idx[close]
                r = self.f.phi(q[done].T, theta[done].T, p).T
                with np.errstate(all="ignore"):
                    step = fac.take(close).solve(r)
                q[done] -= np.where(np.isfinite(step), step, 0.0)
                converged[done] = np.all(np.abs(r) <= TOL * self.row_scale, axis=1)
            active[idx] = ~close
        return q, converged

    def derivatives(self, q, theta, second=True):
        """Jacobian, velocity coefficients and (one coordinate) second derivatives at solved q."""
        p = self.params
        jac = self.f.jac(q.T, p)
        dq = _solve(jac, np.broadcast_to(self.f.E, jac.shape[:1] + self.f.E.shape))
        self.check_dead_points(q, theta, dq, jac)
        ddq = None
        if second and dq.shape[2] == 1:
            ddq = _solve(jac, -self.f.gamma(q.T, dq[:, :, 0].T, p).T)
        return jac, dq, ddq

    def scaled_jac(self, jac):
        """Phi_q with rows and columns in units of the mechanism's size (dimensionless): its rank and
        condition number do not depend on the size."""
        return jac * (self.col_scale / self.row_scale[:, None])

    def coefficient_size(self, dq):
        """The largest velocity coefficient per sample, dq (N, n, k), relative to the coordinate scales."""
        rel = np.abs(dq) * (self.coord_scale / self.col_scale[:, None])
        return rel.reshape(len(dq), -1).max(axis=1)

    def check_dead_points(self, q, theta, dq, jac=None):
        """SingularError naming the first sample whose constraint Jacobian is singular (relative to the
        mechanism's size: velocity coefficients and the condition number are dimensionless)."""
        size = self.coefficient_size(dq)
        bad = ~np.isfinite(size)
        suspect = np.flatnonzero(~bad & (size > SUSPECT))
        if suspect.size:  # the condition number only where the coefficients are large (cheap)
            j = self.f.jac(q[suspect].T, self.params) if jac is None else jac[suspect]
            bad[suspect] = np.linalg.cond(self.scaled_jac(j)) > SINGULAR
        if bad.any():
            i = int(np.argmax(bad))
            ji = self.scaled_jac(self.f.jac(q[i], self.params))
            cond = np.linalg.cond(ji) if np.all(np.isfinite(ji)) else np.inf
            names = ", ".join(f"{c.name}={t:.6g}" for c, t in zip(self.con.mechanism.coordinates, np.atleast_1d(theta[i])))
            raise SingularError(
                f"mechanism '{self.con.mechanism.name}' is at a dead point at {names}: the constraint Jacobian "
                f"is singular (condition number {cond:.3g})")

    def sigma(self, q, fac=None):
        """Per configuration q (N, n): an estimate of the smallest singular value of Phi_q with its columns
        in their scales, |r| / |x| for x = diag(col_scale)^-1 Phi_q^-1 r with a fixed r (one step of inverse
        iteration, as ms_continuation.h's sigma_estimate). fac: Phi_q's factorisation at q, if known."""
        fac = self.f.factor(q.T, self.params) if fac is None else fac
        r = np.cos(1.7 * np.arange(len(self.con.rows)) + 0.3)
        with np.errstate(all="ignore"):
            x = fac.solve(np.tile(r, (len(q), 1))) / self.col_scale
            return np.nan_to_num(np.linalg.norm(r) / np.linalg.norm(x, axis=1))

    def check_start_at_rest(self, theta, q):
        """InputError where a motion that starts at rest at theta (k,) with q (n,), solved on the branch
        followed, starts exactly at a bifurcation (Phi_q singular by the dead-point criterion, SINGULAR, where
        the branch was solved: a limit position would have been named): the velocity gives no tangent, so
        the motion could take the branch followed or the other one(s) through the point."""
        if not self._bridging():
            return
        values = np.linalg.svd(self.scaled_jac(self.f.jac(q, self.params)), compute_uv=False)
        lost = int(np.sum(values < values[0] / SINGULAR))
        if lost:
            names = ", ".join(f"{c.name} = {t:.6g}" for c, t in zip(self.con.mechanism.coordinates, theta))
            raise InputError(f"mechanism '{self.con.mechanism.name}': at {names} (the start, at rest) the branch "
                             f"followed from the declared assembly crosses {'another' if lost == 1 else 'others'} "
                             f"(a bifurcation: Phi_q loses rank {lost} there), and the motion could continue along "
                             f"{'either' if lost == 1 else 'any of them'}; start off the point or with a nonzero speed")

    def signature(self, q):
        """What must not change along a branch, per sample q (N, n): the signs of the declared branch
        conditions, or where none is declared the sign of det Phi_q (it changes only through a dead
        point, so a change between two solved states means the other assembly branch)."""
        if self.con.mechanism.branches:
            return np.asarray(self.f.branches(q.T, self.params)).T.reshape(len(q), -1) > 0
        jac = self.f.jac(q.T, self.params)
        jac = jac if jac.ndim == 3 else jac[None]
        if jac.shape[-1] != jac.shape[-2]:
            return np.ones((len(q), 1), bool)  # redundant rows: no determinant (and no branch to tell)
        return (np.linalg.det(self.scaled_jac(jac)) > 0)[:, None]

    def _describe_branch_change(self, theta):
        names = ", ".join(f"{c.name}={t:.6g}" for c, t in zip(self.con.mechanism.coordinates, np.atleast_1d(theta)))
        what = ("a declared branch condition changed sign" if self.con.mechanism.branches
                else "det Phi_q changed sign: a dead point lies between")
        return f"mechanism '{self.con.mechanism.name}' leaves its assembly branch at {names}: {what}"

    def _check_branches(self, q, theta):
        if not self.con.mechanism.branches:
            return
        values = self.f.branches(q.T, self.params)
        bad = values <= 0
        if bad.any():
            b, i = np.argwhere(bad)[0]
            names = ", ".join(f"{c.name}={t:.6g}" for c, t in zip(self.con.mechanism.coordinates, theta[i]))
            raise AssemblyError(
                f"mechanism '{self.con.mechanism.name}' leaves its assembly branch at {names}: "
                f"'{self.con.mechanism.branches[b].description}' does not hold")
