"""Closed-loop kinematics, numerically: the constraint functions, a solved sweep's results, and the scales.

Positions solve Phi(q, theta) = 0 by Newton-Raphson with the symbolic Jacobian (mechsym.planar.solver:
one configuration in mechsym.planar.assembly, a path of them in mechsym.planar.continuation, bifurcations
in mechsym.planar.bridging). Velocity coefficients q' = dq/dtheta solve Phi_q q' = E and second-order
terms solve Phi_q a = -gamma(q, qd): both exact (symbolic Jacobians, linear solves), no finite
differences. Here: `KinematicFunctions` (phi, its Jacobian, gamma, the points and branch conditions on
the system's backend, and the factorisation of Phi_q), `Kinematics` (a sweep's results), the
mechanism's size and the scales every tolerance is relative to, and the tolerances shared by the stages.
"""
from __future__ import annotations

import weakref

import numpy as np
import sympy as sp

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
            return self.functions.factor, lambda solver, theta: solver._sweep_c(theta)
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
