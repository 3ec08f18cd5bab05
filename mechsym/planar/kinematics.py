"""Closed-loop kinematics, numerically: assembly, continuation along the inputs, exact derivatives.

Positions solve Phi(q, theta) = 0 by Newton-Raphson with the symbolic Jacobian. A sweep is done in two
passes: a sequential continuation over coarse nodes along the input path (second-order Taylor prediction,
Newton correction, each node kept on the start's assembly branch; an interval that leaves it or that
Newton cannot cross is retried in halved steps, and a dead point is named only where the step floor is
reached), then one batched Newton correction of every sample, predicted from the nodes around it (quintic
Hermite interpolation of q, q', q'' between two nodes, so that one Newton step and one chord step reach
rounding; a sample whose correction failed or left the branch is continued from its node). So the Python
loop runs over nodes (about 2*pi/step of them), never over samples.

Velocity coefficients q' = dq/dtheta solve Phi_q q' = E and second-order terms solve
Phi_q a = -gamma(q, qd): both exact (symbolic Jacobians, linear solves), no finite differences.
"""
from __future__ import annotations

import weakref

import numpy as np
import sympy as sp

from mechsym.codegen.constants import BRIDGE_DROP, BRIDGE_RES, CHORD_TOL, MAX_STEP, STEP, STEP_FLOOR
from mechsym.core.budget import check_memory
from mechsym.core.errors import AssemblyError, InputError, ModelError, SingularError
from mechsym.planar.constraints import Constraints
from mechsym.planar.model import numeric_subs

TOL = 1e-12  # residual tolerance, relative to the mechanism's size
STEP_TOL = 1e-10  # Newton stops after a step this small (relative): the next error is below rounding
MAX_ITER = 30
# A configuration counts as a dead point when its Jacobian's condition number exceeds SINGULAR. Newton
# stops within about sqrt(TOL) of a fold, where the condition number is about 1e7, so the threshold
# must lie below that; a velocity coefficient above SUSPECT triggers the (costlier) check.
# Both are dimensionless: velocity coefficients relative to the coordinate scales, the condition number
# of Phi_q with rows and columns scaled by the mechanism's size.
SUSPECT, SINGULAR = 1e5, 1e6
# A sample's batched Newton correction above MOVED (relative to the coordinate scales) is far beyond the
# error of its prediction from the nodes: its branch is then checked (Solver._settle).
MOVED = 1e-6
# Near a bifurcation (the branch followed crosses another: Phi_q singular, the branch smooth) q' and q'' from
# Phi_q lose their accuracy (0/0) and Newton barely converges, so the continuation bridges the point (Bridge):
# where the smallest singular value of Phi_q (columns in their scales; `Solver.sigma`) falls below
# 1/BRIDGE_DROP of its value where the path started, from the last state above it; the bridge's polynomial
# must close the loops inside to BRIDGE_RES of the mechanism's size (both from mechsym.codegen.constants,
# shared with runtime/ms_kernels.h's bridge_try).


class KinematicFunctions:
    """The constraint functions of one mechanism from its rendered codegen spec: the numpy rendering
    (mechsym.codegen.numpy_backend.render) or a compiled C library, which give phi, jac, gamma, points and
    branches with the same array layouts."""

    def __init__(self, con: Constraints, functions, backend):
        self.con = con
        self.point_names = tuple(con.points)
        self.functions = functions
        self.phi, self.jac, self.gamma = functions.phi, functions.jac, functions.gamma
        self.points, self.branches = functions.points, functions.branches
        # the factorisation of Phi_q and a sweep in one call: the C runtime's where Phi_q is square, else
        # numpy's (the static sparse elimination, or LAPACK's dense LU)
        self.factor, self.sweep_in_one_call = backend.route(compiled=self._compiled, python=self._numpy)()
        k = len(con.theta)
        self.E = np.zeros((len(con.rows), k))
        self.E[con.n_joint_rows:, :] = np.eye(k)

    def _compiled(self):
        self.sparse = None
        if self.functions.meta["square"]:
            return self.functions.factor, Solver._sweep_c
        return self._numpy_factor, _no_sweep

    def _numpy(self):
        self.sparse = self.functions.sparse
        return self._numpy_factor, _no_sweep

    def _numpy_factor(self, q, p):
        """A factorisation of Phi_q at q (n, N): the static sparse elimination where the pattern allows
        it, else a dense inverse (over-constrained mechanisms)."""
        q = np.asarray(q, float)
        if self.sparse is not None and q.ndim == 2 and q.shape[1] >= 16:
            return self.sparse.factor(self.functions.jac_values(q, p))
        # a few samples (an ODE right-hand side): one LAPACK call beats dozens of tiny array operations
        jac = self.jac(q, p)
        return DenseFactor(jac if jac.ndim == 3 else jac[None])


def _no_sweep(solver, theta):
    """No sweep in one call: Solver.sweep continues in numpy."""
    return None


class DenseFactor:
    """The dense fallback with the interface of mechsym.codegen.sparse_numpy.Factor: LAPACK's LU of each
    sample (dgetrf, then dgetrs per solve) for a few square samples, where one inverse would cost three
    LU's; a batched inverse (pseudo-inverse for redundant constraints) for many. A singular sample gives
    non-finite solutions in its own entries only."""

    FEW = 16  # samples factorised one by one; more go through the batched inverse

    def __init__(self, jac):
        self.inv = self.lu = None
        if jac.shape[-1] == jac.shape[-2] and len(jac) <= self.FEW:
            from scipy.linalg.lapack import dgetrf  # (scipy.linalg loads in 0.2 s: only when needed)

            self.lu = [dgetrf(j) for j in jac]
            self.ok = np.array([info == 0 and np.all(np.isfinite(lu)) for lu, _, info in self.lu], bool)
        else:
            self.inv = _inverse(jac)
            self.ok = np.all(np.isfinite(self.inv), axis=(1, 2))

    def take(self, mask):
        """The factorisations of the samples selected by `mask`."""
        out = DenseFactor.__new__(DenseFactor)
        out.ok = self.ok[mask]
        out.inv = None if self.inv is None else self.inv[mask]
        out.lu = None if self.lu is None else [f for f, keep in zip(self.lu, mask) if keep]
        return out

    def solve(self, b):
        """x with Phi_q x = b, for b (N, n) or (N, n, m)."""
        return self._solve(b, 0)

    def solve_t(self, c):
        """y with Phi_q^T y = c, for c (N, n) or (N, n, m)."""
        return self._solve(c, 1)

    def _solve(self, b, trans):
        b = np.asarray(b, float)
        if self.lu is None:
            inv = np.swapaxes(self.inv, 1, 2) if trans else self.inv
            return (inv @ b[..., None])[..., 0] if b.ndim == 2 else inv @ b
        from scipy.linalg.lapack import dgetrs

        x = np.full(b.shape, np.nan)
        for i, ((lu, piv, _), ok) in enumerate(zip(self.lu, self.ok)):
            if ok:
                x[i] = dgetrs(lu, piv, b[i], trans=trans)[0]
        return x


class Bridge:
    """The branch across a bifurcation of a one-coordinate mechanism: between two solved states (theta0,
    theta1) on either side of the singular point, the degree-7 Hermite polynomial of q and its first three
    exact derivatives at both ends (the coefficients of ms_kernels.h's bridge_try). Its error is about
    (|theta1 - theta0| / 2)^8 / 8! times the eighth derivative, where Phi_q would give q' and q'' with the
    rounding error divided by the cube of the distance to the point."""

    # c4..c7 from the end conditions at s = 1 (the inverse of the Hermite system)
    _INV = np.array([[35, -15, 2.5, -1 / 6], [-84, 39, -7, 0.5], [70, -34, 6.5, -0.5], [-20, 10, -2, 1 / 6]])

    def __init__(self, theta0, theta1, start, end):
        """start, end: q and its first three derivatives at theta0 and theta1, each (n,)."""
        self.theta = (float(theta0), float(theta1))
        h = self.theta[1] - self.theta[0]
        q0, d1, d2, d3 = start
        c = [q0, h * d1, 0.5 * h * h * d2, h**3 * d3 / 6.0]
        q1, e1, e2, e3 = end
        rest = np.stack([q1 - (c[0] + c[1] + c[2] + c[3]), h * e1 - (c[1] + 2 * c[2] + 3 * c[3]),
                         h * h * e2 - (2 * c[2] + 6 * c[3]), h**3 * e3 - 6 * c[3]])
        self.c = np.vstack([np.stack(c), self._INV @ rest])  # (8, n)

    def holds(self, theta):
        """Whether each theta (N,) lies on the bridge (its ends included)."""
        theta = np.asarray(theta, float)
        return (theta - self.theta[0]) * (theta - self.theta[1]) <= 0.0

    def state(self, theta):
        """q, dq/dtheta, d2q/dtheta2 at the values theta (N,) on the bridge: (N, n) each."""
        h = self.theta[1] - self.theta[0]
        x = (np.atleast_1d(np.asarray(theta, float)) - self.theta[0]) / h
        k = np.arange(8)
        powers = x[:, None] ** k  # (N, 8)
        d1 = (k[1:] * powers[:, :-1]) @ self.c[1:] / h
        d2 = (k[2:] * (k[2:] - 1) * powers[:, :-2]) @ self.c[2:] / h**2
        return powers @ self.c, d1, d2


def _point_symbols(con):
    """Branch conditions are written with symbols named POINT_x, POINT_y; map them to expressions."""
    subs = {}
    for name, (x, y) in con.points.items():
        subs[sp.Symbol(f"{name}_x", real=True)] = x
        subs[sp.Symbol(f"{name}_y", real=True)] = y
    return subs


class Kinematics:
    """Positions and exact derivatives at N samples of the generalised coordinates.

    q: (N, n) coordinates; dq: (N, n, k) velocity coefficients dq/dtheta; ddq: (N, n) second derivative
    d2q/dtheta2 (one coordinate only, else None); jac: (N, n, n) the constraint Jacobian (Phi_q), given
    or evaluated on first use by `jac_fn(q.T, params)` (the sweeps themselves need only its factorisation).
    """

    def __init__(self, theta, q, dq, ddq, jac, params, factor=None, jac_fn=None):
        self.theta, self.q, self.dq, self.ddq, self.params = theta, q, dq, ddq, params
        self.factor = factor  # the factorisation of jac (solve / solve_t), when the sweep computed it
        self._jac, self._jac_fn = jac, jac_fn

    @property
    def jac(self):
        """The constraint Jacobian Phi_q (N, n, n), evaluated on first use."""
        if self._jac is None:
            self._jac = self._jac_fn(self.q.T, self.params)
        return self._jac

    def velocities(self, thetad):
        """qd for generalised speeds thetad (N, k) or broadcastable."""
        return np.einsum("nik,nk->ni", self.dq, np.broadcast_to(thetad, self.theta.shape))


def _parameter_values(con: Constraints, params) -> dict:
    return numeric_subs(con.mechanism.parameters, dict(zip(con.mechanism.parameters, params)))


def size_scale(con: Constraints, params: np.ndarray) -> float:
    """A characteristic length: the largest point coordinate of any body frame (1 if every point is at
    its frame's origin). Every tolerance and step on lengths is relative to it."""
    return float(size_scales(con, np.asarray(params, float)[None])[0])


def size_scales(con: Constraints, params: np.ndarray) -> np.ndarray:
    """`size_scale` at each parameter set of params (S, npar), in one vectorised evaluation."""
    from mechsym.codegen.parameter_expressions import size_scales as sizes

    return sizes(point_sources(con), params)


_POINT_SOURCES = {}  # id(Constraints) -> point_sources


def point_sources(con: Constraints) -> tuple:
    """Every point's coordinates in its body's frame as numpy source text in the parameters p[i]
    (mechsym.codegen.parameter_expressions; printed once per Constraints)."""
    key = id(con)
    if key not in _POINT_SOURCES:
        from mechsym.codegen.parameter_expressions import numpy_sources

        mech = con.mechanism
        _POINT_SOURCES[key] = numpy_sources([c for b in mech.bodies.values() for pt in b.points.values() for c in pt],
                                            [param.symbol for param in mech.parameters.values()])
        weakref.finalize(con, _POINT_SOURCES.pop, key, None)
    return _POINT_SOURCES[key]


def scales(con: Constraints, size) -> tuple:
    """(col_scale (..., n), coord_scale (..., k)) for a mechanism of size(s) `size`
    (parameter_expressions.coordinate_scales with this mechanism's angles and driven lengths)."""
    from mechsym.codegen.parameter_expressions import coordinate_scales

    return coordinate_scales(*scale_masks(con), size)


def scale_masks(con: Constraints) -> tuple:
    """(the coordinates that are angles (n,), the driven coordinates that are lengths (k,))."""
    return (np.tile([False, False, True], len(con.bodies)),
            np.array([c.unit == "m" for c in con.mechanism.coordinates]))


def tree_guess(con: Constraints, params: np.ndarray) -> np.ndarray:
    """Starting coordinates: bodies at their guess angles, placed joint to joint along the spanning tree."""
    mech, subs = con.mechanism, _parameter_values(con, params)
    num = lambda e: float(e.xreplace(subs))
    pose = {mech.fixed: (0.0, 0.0, 0.0)}

    def world(body, point):
        b = mech.bodies[body]
        local = np.array([num(c) for c in b.points[point]])
        if body == mech.fixed:
            return local
        x, y, th = pose[body]
        c, s = np.cos(th), np.sin(th)
        sx, sy = local - [num(b.com[0]), num(b.com[1])]
        return np.array([x + c * sx - s * sy, y + s * sx + c * sy])

    for body in con.topology.order[1:]:
        parent, jname = con.topology.tree[body]
        j = mech.joints[jname]
        here, there = (j.point2, j.point1) if j.body2 == body else (j.point1, j.point2)
        angle = mech.bodies[body].guess
        if j.relative_angle is not None:  # the joint holds the angle relative to the parent
            sign = 1 if j.body2 == body else -1
            angle = pose[parent][2] + sign * num(sp.sympify(j.relative_angle))
        b = mech.bodies[body]
        target = world(parent, there)
        sx, sy = num(b.points[here][0]) - num(b.com[0]), num(b.points[here][1]) - num(b.com[1])
        c, s = np.cos(angle), np.sin(angle)
        pose[body] = (target[0] - (c * sx - s * sy), target[1] - (s * sx + c * sy), angle)
    return np.array([v for b in con.bodies for v in pose[b]])


class Solver:
    """Newton-Raphson on the constraint equations of one mechanism with fixed parameter values."""

    def __init__(self, funcs: KinematicFunctions, params: np.ndarray):
        self.f, self.con, self.params = funcs, funcs.con, np.asarray(params, float)
        self.scale = size_scale(self.con, self.params)
        self._period = False  # not yet looked for
        self.col_scale, self.coord_scale = scales(self.con, self.scale)
        self.max_step = MAX_STEP * self.col_scale
        self.row_scale = np.array([1.0 if self._is_angle_row(i) else self.scale for i in range(len(self.con.rows))])
        # the scale of each driven coordinate (a length's is the mechanism's size) and the continuation
        # step along it: 0.1 rad, or a tenth of the size
        self.step = STEP * self.coord_scale
        self._reference = None
        self._lattice = {}  # continuation nodes at reference + j * step (one coordinate): j -> q
        self.bridges = []  # the bifurcations crossed so far (Bridge), kept for every later path
        self._skip = []  # spans (theta_a, theta_c) where no bridge holds: not tried again

    def _is_angle_row(self, i):
        con = self.con
        j = con.mechanism.joints[con.row_joint[i]]
        if i >= con.n_joint_rows:
            return j.drive_unit == "rad"
        first = [k for k in range(con.n_joint_rows) if con.row_joint[k] == j.name][0]
        return i - first in j.angle_rows

    # -- single configuration ------------------------------------------------------------------------
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

    # -- many configurations -------------------------------------------------------------------------
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

    def sweep(self, theta, start=None, step=None) -> Kinematics:
        """Kinematics at the samples `theta` (N, k), continued along their order.

        The path starts from the assembly at the coordinates' `guess_at` values (where the declared guess
        angles pick the branch), continued to theta[0] over a fixed lattice of nodes (`_start`), so every
        sample lies on the branch of the declaration and no result depends on the sweeps made before.
        `start` (coordinates at theta[0]) overrides that. `step`: the continuation step (default
        `self.step`, relative to the coordinates' scales)."""
        theta = np.atleast_2d(np.asarray(theta, float))
        if theta.shape[1] != len(self.con.theta):
            raise InputError(f"expected {len(self.con.theta)} coordinate value(s) per sample, got {theta.shape[1]}")
        compiled = start is None and step is None and theta.shape[1] == 1 and len(theta) > 1
        step = self.step if step is None else np.broadcast_to(np.asarray(step, float), self.step.shape)
        check_memory(f"kinematics of '{self.con.mechanism.name}' at {len(theta)} samples",
                     sweep_memory(len(self.con.q), len(theta)))
        turns, reduced = self._reduce(theta) if start is None else (0, theta)
        if turns:  # a periodic coordinate far from the reference: solve one period away, shift back exactly
            kin = self.sweep(reduced, None, step)
            period, shift = self._period
            return Kinematics(theta, kin.q + turns * shift, kin.dq, kin.ddq, None, self.params, kin.factor, self.f.jac)
        if compiled:
            kin = self.f.sweep_in_one_call(self, theta)  # None where there is no such call, or it failed early
            if kin is not None:
                return kin
        if start is not None:
            path = theta
            q0 = self.assemble(theta[0], start)
        else:
            t0, q0 = self._start(theta[0])
            path = np.vstack([t0[None], theta])
        nodes_theta, nodes_q, node_dist = self._continue(path, q0, step)
        bridged = self._bridged(theta)  # samples on a bridge: its polynomial, no Newton
        solved = ~self._bridged(nodes_theta) | (np.arange(len(nodes_q)) == 0)
        nodes_theta, nodes_q, node_dist = nodes_theta[solved], nodes_q[solved], node_dist[solved]
        dist = _path_length(path / step)[-len(theta):]
        pred = self._predict_from_nodes(nodes_q, nodes_theta, node_dist, dist, theta, step)
        q, ok = self.newton(pred, theta)
        ok |= bridged
        node = np.clip(np.searchsorted(node_dist, dist, side="right") - 1, 0, len(nodes_q) - 1)
        q = self._settle(q, pred, ok, theta, nodes_theta[node], nodes_q[node], step)
        if self._bridging():
            bridged = self._bridge_samples(q, theta, bridged, nodes_theta[node], nodes_q[node], step)
        self._check_branches(q, theta)
        fac = self.f.factor(q.T, self.params)
        with np.errstate(all="ignore"):
            dq = fac.solve(np.broadcast_to(self.f.E, (len(q),) + self.f.E.shape))
        ddq = None
        if dq.shape[2] == 1:
            with np.errstate(all="ignore"):
                ddq = fac.solve(-self.f.gamma(q.T, dq[:, :, 0].T, self.params).T)
            for bridge in self.bridges:
                on = np.flatnonzero(bridged & bridge.holds(theta[:, 0]))
                if on.size:
                    q[on], dq[on, :, 0], ddq[on] = bridge.state(theta[on, 0])
        if not bridged.all():
            self.check_dead_points(q[~bridged], theta[~bridged], dq[~bridged])
        return Kinematics(theta, q, dq, ddq, None, self.params, fac, self.f.jac)

    def _bridge_samples(self, q, theta, bridged, before_theta, before_q, step):
        """Samples near a singular point that the nodes stepped over (the nodes on either side of it well
        conditioned): each is continued from the node before it, as the C route steps from sample to sample,
        which bridges the point if it is a bifurcation. Returns the samples now on a bridge."""
        limit = self._path_sigma / BRIDGE_DROP
        for i in np.flatnonzero(~bridged & (self.sigma(q) < limit)):
            if not self._bridged(theta[i:i + 1])[0]:
                self._continue(np.vstack([before_theta[i], theta[i]]), before_q[i], step)
        return self._bridged(theta)

    def _bridged(self, theta):
        """Which of the values theta (N, k) lie on a known bridge."""
        if not self.bridges or theta.shape[1] != 1:
            return np.zeros(len(theta), bool)
        return np.any([b.holds(theta[:, 0]) for b in self.bridges], axis=0)

    def _settle(self, q, pred, ok, theta, before_theta, before_q, step):
        """The samples whose batched Newton failed or left the nodes' branch (their prediction `pred` from
        the nodes was too coarse where the configuration changes fast between two nodes) solved one by one,
        continued from the node before each (`before_theta`, `before_q`) with `_continue`'s step control,
        which names a dead point or a loop that does not close where there is one. Only a sample that
        Newton moved farther than MOVED from its prediction can have left the branch (another configuration
        so near would make Phi_q singular to rounding): only those are checked."""
        moved = np.max(np.abs(q - pred) / self.col_scale, axis=1) > MOVED
        check = np.flatnonzero(ok & moved)
        stray = ~ok
        if check.size:
            sign = self.signature(before_q[:1])[0]
            stray[check] = ~np.all(self.signature(q[check]) == sign, axis=1)
        for i in np.flatnonzero(stray):
            q[i] = self._continue(np.vstack([before_theta[i], theta[i]]), before_q[i], step)[1][-1]
        return q

    def _sweep_c(self, theta):
        """`sweep` of one coordinate in one C call from the same start (the continuation of `_continue`, from
        sample to sample: the same step, the same halving down to the same floor, the same branch checks;
        Newton to rounding, exact coefficients), then the factorisations of Phi_q in another. Where the
        continuation stops, the error `stopped` names; a sample near a dead point is checked as the numpy
        route checks it (`check_dead_points`). None only where the call failed before its continuation."""
        t0, q0 = self._start(theta[0])
        path = np.concatenate([t0, theta[:, 0]])
        failed, _, q, dq, ddq, coef, branch, stop = self.f.functions.kinematics(path, self.params, q0, self.col_scale,
                                                                        STEP_TOL, hmax=self.step[0])
        if stop is not None:
            self.stopped(stop.theta_a, stop.q_a, stop.theta_b, stop.q_b, stop.converged)
        if failed >= 0 or np.any(branch <= 0):
            return None
        q, dq, ddq = q[1:], dq[1:, :, None], ddq[1:]
        if not np.all(coef[1:] * self.coord_scale[0] <= SUSPECT):
            self.check_dead_points(q, theta, dq)
        return Kinematics(theta, q, dq, ddq, None, self.params, self.f.factor(q.T, self.params), self.f.jac)

    def _reduce(self, theta):
        """(turns, theta - turns * period): a single revolute coordinate farther than half a period from
        the reference configuration is continued from the reference shifted by whole periods, not walked
        there (which takes a Newton step per 0.1 rad, and loses all precision for huge values)."""
        big = np.max(np.abs(theta))
        if big > 1e6:
            name = self.con.mechanism.coordinates[0].name
            raise InputError(f"coordinate value {name} = {big:.6g} is too large to be resolved (its rounding is "
                             f"{np.spacing(big):.2g}); give it reduced by its period")
        if theta.shape[1] != 1:
            return 0, theta
        ref = self.reference()[0][0]
        if np.all(np.abs(theta[:, 0] - ref) <= np.pi):
            return 0, theta
        found = self.period()
        if found is None:
            return 0, theta
        turns = int(np.round((theta[0, 0] - ref) / found[0]))
        return turns, theta - turns * found[0]

    def period(self):
        """(T, shift) for a mechanism driven by one revolute coordinate: the smallest whole number of crank
        turns T = 2 pi m (m <= 12; a gear pair may need several) after which the configuration repeats, and
        the change of q over it (whole turns of the body angles, zero for positions), so that
        q(theta + k T) = q(theta) + k shift exactly. None if the coordinate is not an angle, the
        crank cannot turn fully, or no period up to 12 turns exists."""
        if self._period is not False:
            return self._period
        self._period = None
        coords = self.con.mechanism.coordinates
        if len(coords) != 1 or self.con.mechanism.joints[coords[0].joint].drive_unit != "rad":
            return None
        ref, q_ref = self.reference()
        angle = np.zeros(len(q_ref), bool)
        angle[2::3] = True
        q = q_ref
        for m in range(1, 13):
            try:
                _, qs, _ = self._continue(np.array([ref + 2 * np.pi * (m - 1), ref + 2 * np.pi * m]), q, self.step)
            except (AssemblyError, SingularError):
                return None
            q = qs[-1]
            delta = q - q_ref
            turns = np.round(delta / (2 * np.pi))
            if np.all(np.abs(np.where(angle, delta - 2 * np.pi * turns, delta)) <= 1e-8 * self.col_scale):
                self._period = (2 * np.pi * m, np.where(angle, 2 * np.pi * turns, 0.0))
                return self._period
        return None

    def _predict_from_nodes(self, nodes_q, nodes_theta, node_dist, dist, theta, step):
        """Predicted q at every sample from the solved nodes (their derivatives are taken at the few nodes).

        One coordinate: between two nodes the path runs straight along, the quintic Hermite interpolant
        of q, q' and q'' (error about h^6 q^(6) / 46080 for node spacing h); elsewhere (the path's end, a
        reversal between two nodes) the second-order Taylor step from the node before. Several
        coordinates: the Taylor step, its second-order term solved per sample."""
        last = len(nodes_q) - 1
        idx = np.clip(np.searchsorted(node_dist, dist, side="right") - 1, 0, last)
        jac, dq, ddq = self.derivatives(nodes_q, nodes_theta, second=True)
        delta = theta - nodes_theta[idx]
        if ddq is None:
            base = nodes_q[idx]
            qd = np.einsum("nik,nk->ni", dq[idx], delta)
            acc = _solve(jac[idx], -self.f.gamma(base.T, qd.T, self.params).T)
            return base + qd + 0.5 * acc
        nxt = np.minimum(idx + 1, last)
        h = (nodes_theta[nxt] - nodes_theta[idx])[:, 0]
        spacing = node_dist[nxt] - node_dist[idx]
        with np.errstate(all="ignore"):
            t = delta[:, 0] / h
        straight = (nxt > idx) & (np.abs(h) / step[0] >= (1 - 1e-9) * spacing) & (spacing > 0) & (t >= 0) & (t <= 1)
        pred = np.empty((len(theta), nodes_q.shape[1]))
        k = np.flatnonzero(~straight)
        if k.size:
            i, d = idx[k], delta[k]
            pred[k] = nodes_q[i] + dq[i, :, 0] * d + 0.5 * ddq[i] * d**2
        data = np.stack([nodes_q, dq[:, :, 0], ddq], axis=1)  # (nodes, 3, n): q, q', q''
        straight_k = np.flatnonzero(straight)
        for start in range(0, straight_k.size, BLOCK):  # in blocks: bounded memory, Ctrl-C between blocks
            k = straight_k[start:start + BLOCK]
            tk, hk = t[k], h[k]
            t2, t3 = tk * tk, tk * tk * tk
            h0 = 1 - t3 * (10 - 15 * tk + 6 * t2)
            weights = np.stack([h0, hk * (tk - t3 * (6 - 8 * tk + 3 * t2)), 0.5 * hk * hk * (t2 - t3 * (3 - 3 * tk + t2)),
                                1 - h0, -hk * t3 * (4 - 7 * tk + 3 * t2), 0.5 * hk * hk * t3 * (1 - 2 * tk + t2)], axis=1)
            pair = data[np.stack([idx[k], nxt[k]], axis=1)].reshape(k.size, 6, -1)
            pred[k] = np.einsum("sk,skn->sn", weights, pair)
        return pred

    def reference(self):
        """The assembly at the coordinates' `guess_at` values (once): this checks the mobility, and every
        sweep starts from here. Returns (theta, q)."""
        if self._reference is None:
            ref = np.array([c.guess_at for c in self.con.mechanism.coordinates], float)
            q = self.assemble(ref)
            self._reference = (ref, q, self.signature(q[None])[0])
        return self._reference[:2]

    def _start(self, theta):
        """A solved configuration near theta (k,) reached from the reference, the same whatever was
        solved before: for one coordinate, the node of the lattice reference + j * step nearest theta
        (nodes kept once solved, each continued from its neighbour towards the reference); for several,
        theta itself, continued straight from the reference."""
        ref, q_ref = self.reference()
        if len(ref) > 1:
            nodes_theta, nodes_q, _ = self._continue(np.vstack([ref, theta]), q_ref, self.step)
            return nodes_theta[-1], nodes_q[-1]
        h = self.step[0]
        target = int(np.rint((theta[0] - ref[0]) / h))
        lattice = self._lattice
        lattice.setdefault(0, q_ref)
        direction = 1 if target >= 0 else -1
        j = max((i for i in lattice if i * direction >= 0 and abs(i) <= abs(target)), key=abs)
        while j != target:
            a, b = ref + j * h, ref + (j + direction) * h
            lattice[j + direction] = self._continue(np.vstack([a, b]), lattice[j], self.step)[1][-1]
            j += direction
        while target != 0 and self._bridge_at(ref[0] + target * h) is not None:  # a start off every bridge
            target -= direction
        return ref + target * h, lattice[target]

    def _predict(self, q, theta, dtheta):
        """Second-order Taylor step from solved q at theta by dtheta (exact derivatives)."""
        jac, dq, _ = self.derivatives(q, theta, second=False)
        qd = np.einsum("nik,nk->ni", dq, dtheta)
        acc = _solve(jac, -self.f.gamma(q.T, qd.T, self.params).T)
        return q + qd + 0.5 * acc

    def _continue(self, theta, q0, step, sigma=None):
        """Nodes along the piecewise-linear input path, one continuation step apart, solved one after
        another from q0 and each kept on q0's assembly branch (`signature`). An interval that leaves the
        branch or whose end Newton cannot reach from the prediction is retried in halved steps (`_refine`);
        a path without such an interval takes exactly the coarse nodes. Returns the nodes' inputs (m, k),
        their q (m, n) and their distances along the path (m,), in continuation steps. sigma: the
        well-conditioned value that bridges are relative to (default: `sigma` at q0)."""
        dist = _path_length(theta / step)
        count = max(1, int(np.ceil(dist[-1])))
        targets = np.linspace(0.0, dist[-1], count + 1)
        at = lambda d: np.array([np.interp(d, dist, theta[:, i]) for i in range(theta.shape[1])])
        floor = STEP_FLOOR * np.min(self.coord_scale / step)  # the smallest step, in continuation steps
        sign = self.signature(q0[None])[0]
        if self._bridging():  # bridges are relative to it
            self._path_sigma = self.sigma(q0[None])[0] if sigma is None else sigma
        nodes = [(0.0, at(0.0), q0)]
        for b in targets[1:]:
            self._refine(nodes, b, at, sign, floor)
        where, thetas, qs = zip(*nodes)
        return np.array(thetas), np.array(qs), np.array(where)

    def _refine(self, nodes, b, at, sign, floor):
        """Extend `nodes` (distance, theta, q) from its last node to the distance b along the path: one step
        if Newton converges from the second-order prediction on the same branch and within the largest
        Newton step of it (`max_step`: an angle that Newton carried a whole turn away keeps the branch's
        signs), else the two halves one after the other, halved again as needed. A half shorter than `floor` fails for good: a limit
        position where Newton fails (no configuration beyond: det Phi_q -> 0), a change of branch where the
        sign still changes (a dead point between); both name the input value."""
        a, theta_a, q_a = nodes[-1]
        theta_b = at(b)
        bridge = self._bridge_at(theta_b[0]) if self._bridging() else None
        if bridge is not None:  # on a bridge: its polynomial
            nodes.append((b, theta_b, bridge.state(theta_b)[0][0]))
            return
        bridge = self._bridge_at(theta_a[0]) if self._bridging() else None
        if bridge is not None:  # leaving a bridge: from its end on b's side, solved afresh
            end = bridge.theta[int((theta_b[0] - bridge.theta[0]) * (bridge.theta[1] - bridge.theta[0]) > 0)]
            q_end, _ = self.newton(bridge.state(end)[0], np.array([[end]]))
            a = a + (b - a) * (end - theta_a[0]) / (theta_b[0] - theta_a[0])
            theta_a, q_a = np.array([end]), q_end[0]
            nodes.append((a, theta_a, q_a))
        guess = self._predict(q_a[None], theta_a[None], (theta_b - theta_a)[None])
        q, ok = self.newton(guess, theta_b[None])
        near = np.all(np.abs(q[0] - guess[0]) <= self.max_step)  # not a whole turn away, say
        same = ok[0] and near and np.array_equal(self.signature(q)[0], sign)
        bridge = self._bridge_step(theta_a[0], q_a, theta_b[0], q[0], same)
        if bridge is not None and bridge.holds(theta_b[0]):
            nodes.append((b, theta_b, bridge.state(theta_b)[0][0]))
            return
        if same:
            nodes.append((b, theta_b, q[0]))
            return
        if (b - a) / 2 < floor:
            self.stopped(theta_a, q_a, theta_b, q[0], converged=ok[0])
        self._refine(nodes, (a + b) / 2, at, sign, floor)
        self._refine(nodes, b, at, sign, floor)

    # -- bifurcations ----------------------------------------------------------------------------------
    def sigma(self, q, fac=None):
        """Per configuration q (N, n): an estimate of the smallest singular value of Phi_q with its columns
        in their scales, |r| / |x| for x = diag(col_scale)^-1 Phi_q^-1 r with a fixed r (one step of inverse
        iteration, as ms_kernels.h's sigma_estimate). fac: Phi_q's factorisation at q, if known."""
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

    def _bridging(self):
        """Whether the continuation bridges bifurcations: one coordinate, as many rows as coordinates."""
        return len(self.con.theta) == 1 and len(self.con.rows) == self.con.n

    def _bridge_at(self, theta):
        """The known bridge that holds theta (a float), or None."""
        return next((b for b in self.bridges if b.holds(theta)), None)

    def bridge_between(self, theta_a, theta_b):
        """Whether a known bridge meets the span from theta_a to theta_b (floats)."""
        lo, hi = min(theta_a, theta_b), max(theta_a, theta_b)
        return any(min(b.theta) <= hi and max(b.theta) >= lo for b in self.bridges)

    def _third(self, q, theta):
        """q with its first three exact derivatives along the coordinate at solved q (n,)."""
        fac = self.f.factor(q, self.params)
        d1 = fac.solve(self.f.E[None])[0][:, 0]
        d2 = fac.solve(-self.f.gamma(q, d1, self.params)[None])[0]
        d3 = fac.solve(-self.f.functions.gamma3(q, d1, d2, self.params)[None])[0]
        return q, d1, d2, d3

    def _across(self, start, theta0, theta, sign):
        """The state at theta from `start` (q and its derivatives at theta0) by the third-order prediction and
        Newton, within its largest step of the prediction and on the branch signs `sign`; None otherwise."""
        q0, d1, d2, d3 = start
        h = theta - theta0
        pred = q0 + h * (d1 + h * (0.5 * d2 + h * d3 / 6.0))
        q, ok = self.newton(pred[None], np.array([[theta]]))
        if not (ok[0] and np.all(np.abs(q[0] - pred) <= self.max_step)
                and np.array_equal(self.signature(q)[0], sign)):
            return None
        return self._third(q[0], theta)

    def _try_bridge(self, theta_a, q_a, theta_b, s_a, s_b, sign):
        """A bridge from the solved q_a at theta_a over the singular point that the estimates s_a and s_b
        (at theta_b, nearer it) place ahead: from hmax before the point (or theta_a, if nearer) to as far
        beyond, kept (in `bridges`) if Newton reaches both ends on the branch, the far one is as well
        conditioned as the near one and the polynomial closes the loops inside. None if the point is more
        than 2 hmax ahead (a later step tries again) or no bridge holds (the span is then skipped)."""
        zero = theta_b + (theta_b - theta_a) * s_b / (s_a - s_b) if s_a > s_b else theta_b
        hmax = self.step[0]
        if not abs(zero - theta_a) <= 2 * hmax or zero == theta_a:
            return None
        t0 = zero - np.copysign(hmax, zero - theta_a) if abs(zero - theta_a) > hmax else theta_a
        t1 = 2 * zero - t0
        self._skip.append((theta_a, t1))
        start = self._third(q_a, theta_a)
        if t0 != theta_a:
            start = self._across(start, theta_a, t0, sign)
            if start is None:
                return None
            s_a = self.sigma(start[0][None])[0]
        end = self._across(start, t0, t1, sign)
        if end is None or not self.sigma(end[0][None])[0] >= 0.5 * s_a:
            return None
        bridge = Bridge(t0, t1, start, end)
        inside = t0 + 0.25 * np.arange(1, 4) * (t1 - t0)
        r = self.f.phi(bridge.state(inside)[0].T, inside[None], self.params)
        if not np.all(np.abs(r) <= BRIDGE_RES * max(self.scale, 1.0)):
            return None
        self.bridges.append(bridge)
        return bridge

    def _bridge_step(self, theta_a, q_a, theta_b, q_b, ok):
        """The bridge that the step from the solved q_a at theta_a to theta_b (q_b there if `ok`) enters,
        or None: tried when the step leaves the well-conditioned region (or fails from it)."""
        if not self._bridging():
            return None
        limit = self._path_sigma / BRIDGE_DROP
        s_a, s_b = self.sigma(np.stack([q_a, q_b]))
        s_b = s_b if ok else 0.0
        if not s_a >= limit or (ok and not s_b < limit):
            return None
        if any((theta_a - lo) * (theta_a - hi) < 0 for lo, hi in self._skip):
            return None
        return self._try_bridge(theta_a, q_a, theta_b, s_a, s_b, self.signature(q_a[None])[0])

    def stopped(self, theta_a, q_a, theta_b, q_b, converged):
        """Raise why the continuation stops at the step floor, from the configuration q_a solved at theta_a to
        theta_b (Newton's result there q_b, `converged` or not): where Newton converged on another branch, a
        dead point at theta_b (SingularError) or the branch change named there; where it failed, the limit
        position (`_limit_reached`). A step that starts at a dead point (a sample on it) names it there. Both
        backends' continuations end here."""
        theta_a, theta_b = np.atleast_1d(theta_a), np.atleast_1d(theta_b)
        self.derivatives(np.asarray(q_a)[None], theta_a[None], second=False)
        if converged:
            self.derivatives(np.asarray(q_b)[None], theta_b[None], second=False)  # names a dead point at theta_b
            raise AssemblyError(self._describe_branch_change(theta_b))
        self._limit_reached(theta_a, q_a, theta_b, q_b)

    def _limit_reached(self, theta_a, q_a, theta_b, q_b):
        """Raise why Newton fails at theta_b within the step floor of the configuration q_a solved at
        theta_a: a dead point at theta_b itself (SingularError) where the loops close there, else the loop
        that does not close, with the limit position at theta_a (the end of the branch, det Phi_q -> 0)."""
        r = self.f.phi(q_b, theta_b, self.params)
        if np.all(np.abs(r) <= 1e3 * TOL * self.row_scale):
            self.derivatives(q_b[None], theta_b[None], second=False)
        jac = self.scaled_jac(self.f.jac(q_a, self.params))
        names = ", ".join(f"{c.name}={t:.6g}" for c, t in zip(self.con.mechanism.coordinates, theta_a))
        raise AssemblyError(f"{self._describe_failure(theta_b, r)}: the mechanism reaches a dead point at {names} "
                            f"(a limit position, condition number of the constraint Jacobian "
                            f"{np.linalg.cond(jac):.3g} there) and cannot be driven past it")

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


def _inverse(a):
    """Batched inverse (pseudo-inverse for consistent redundant constraints); a singular sample gives
    non-finite values in its own entries only."""
    if a.shape[-1] != a.shape[-2]:
        return np.linalg.pinv(a)
    try:
        return np.linalg.inv(a)
    except np.linalg.LinAlgError:
        out = np.full(a.shape, np.nan)
        with np.errstate(invalid="ignore"):
            ok = np.abs(np.linalg.det(a)) > 0
        out[ok] = np.linalg.inv(a[ok])
        return out


BLOCK = 65536  # samples per block of the interpolation


def sweep_memory(nq, n) -> int:
    """Bytes a sweep of n samples keeps: q, its derivatives and predictions, the factorisations (about
    nq^2 per sample) and the Newton work arrays."""
    return 8 * n * (nq * nq + 10 * nq + 8)


def _path_length(theta):
    return np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(theta, axis=0), axis=1))])


def _solve(a, b):
    """Batched solve; b may be a vector per sample (N, n) or a matrix (N, n, m). A singular sample
    gives non-finite values in its own rows instead of failing the whole batch."""
    vector = b.ndim == a.ndim - 1
    rhs = b[..., None] if vector else b
    if a.shape[-1] != a.shape[-2]:  # consistent redundant constraints: least squares
        x = np.linalg.pinv(a) @ rhs
        return x[..., 0] if vector else x
    try:
        x = np.linalg.solve(a, rhs)
    except np.linalg.LinAlgError:
        x = np.full(np.broadcast_shapes(a.shape[:-1], rhs.shape[:-2] + (a.shape[-1],)) + rhs.shape[-1:], np.nan)
        ok = np.abs(np.linalg.det(a)) > 0
        x[ok] = np.linalg.solve(a[ok], np.broadcast_to(rhs, a.shape[:-2] + rhs.shape[-2:])[ok])
    return x[..., 0] if vector else x
