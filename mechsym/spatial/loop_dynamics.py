"""The dynamics of a spatial closed-loop mechanism (mechsym.spatial.loops.LoopSystem): inverse dynamics with
every joint reaction, and forward dynamics on independent coordinates.

Equations: H(q) dv/dt + bias(q, v) = E tau + J^T lambda (H and bias the tree's, generated; J the closure
rows; E the driven speeds' columns).

* Inverse: at (q, v, dv/dt) the unknowns U = [lambda; tau] solve A U = C with A = [J^T E] and C = H dv/dt +
  bias: square without redundant rows; with them, the minimum-norm U (mechsym.spatial.loop_kinematics.solve),
  its tau unique and the multipliers of the redundant rows' span undetermined (the minimum-norm completion;
  which reaction components it leaves undetermined: mechsym.spatial.loop_reactions). A closure's reaction is the sum of its rows' wrenches
  times their multipliers; a tree joint's is what its child's subtree needs (the bodies' inertial wrenches,
  gravity included, generated) less the closure wrenches on that subtree and less its own drive, so every
  body's Newton-Euler equations hold with these reactions (tests/test_spatial_loops.py checks it by the frame
  Jacobians). Columns `JOINT.fx`, `.fy`, `.fz`, `.mx`, `.my`, `.mz`: the force and moment the joint's first
  body (a tree joint's parent) exerts on its second, world axes, at the joint's origin (the child frame's,
  frame b's of a closure; docs/conventions.md).
* Forward: the state is (q_I, v_I), independent coordinates of joints whose rates are their speeds, chosen
  where the dependent columns of J are best conditioned (a column-pivoted QR); q_D solves the closure rows
  (Newton on the dependent columns from the last solved configuration, which it may move by less than MOVED, and, where [J; P_I^T] is
  square, keeping the sign of its determinant: the branch) and v_D the velocity rows, so the constraints
  hold to Newton's tolerance at every state (no drift); dv/dt is the unique acceleration of
  [H J^T; J 0] [dv/dt; -lambda] = [tau - bias; -gamma] (least squares: redundant rows leave lambda, not
  dv/dt, undetermined). Where the dependent columns' condition number passes PARTITION_COND, a terminal
  event ends the segment and a new partition starts from there. On the C backend dv/dt is one generated C
  call, and so are q_D and v_D for a mechanism of joints whose rates are their speeds and spherical joints
  (mechsym.spatial.loop_compiled).
"""
from __future__ import annotations

import functools
import warnings

import numpy as np

from mechsym.core.budget import CallBudget
from mechsym.core.errors import InputError
from mechsym.core.results import RunEvent, RunResult
from mechsym.core.runner import StepRejected, integrate
from mechsym.core.timegrid import run_options
from mechsym.spatial.loop_compiled import dependent_entry, forward_entry
from mechsym.spatial.loop_kinematics import LoopSolver, solve
from mechsym.spatial.loops import closure_drives

__all__ = ["inverse", "system_matrix", "reactions", "forward", "Partition"]

PARTITION_COND = 1e2     # the dependent columns' condition number (scaled) where a new partition is chosen
MOVED = 0.5              # the largest move of Newton in q_D from the last configuration (relative to the scales)
AXES = ("fx", "fy", "fz", "mx", "my", "mz")


def _shift(w, p, o):
    """Wrenches w (..., 6) (force, moment about p) as moments about o: M + (p - o) x F."""
    return np.concatenate([w[..., :3], w[..., 3:] + np.cross(p - o, w[..., :3])], axis=-1)


def inverse(solver: LoopSolver, q, v, a, actuated=None):
    """(tau (N, k), lambda (N, rows)) at states q (N, nq), v and a (N, nv): A U = C (module docstring). The
    forces act on the speeds `actuated` (indices into v; default the driven ones): a delta robot follows its
    platform's path on its motors."""
    s = solver.s
    H = s.tree.mass_matrix(q, params=solver.tree_p)
    bias = s.tree.bias(q, v, params=solver.tree_p)
    U = solve(system_matrix(solver, q, actuated), np.einsum("nij,nj->ni", H, a) + bias)
    return U[:, s.nrows:], U[:, :s.nrows]


def system_matrix(solver: LoopSolver, q, actuated=None):
    """A = [J^T E] (N, nv, rows + k) at q (N, nq): the columns of lambda and of the forces tau (module
    docstring; `actuated` as in `inverse`)."""
    s, p = solver.s, solver.p
    _, J, _ = s.closure(q, params=p)
    if actuated is None:            # the drives' generalised forces: D^T tau (a driven closure's too)
        E = np.swapaxes(s.drive_rows(q, params=p)[1], 1, 2)
    else:
        E = np.zeros((len(q), s.nv, len(actuated)))
        E[:, list(actuated), np.arange(len(actuated))] = 1.0
    return np.concatenate([np.swapaxes(J, 1, 2), E], axis=2)


def reactions(solver: LoopSolver, q, v, a, tau, lam, actuated=None, inertia=True) -> dict:
    """JOINT.fx ... JOINT.mz (N,) of every joint with coordinates and every closure (module docstring), the
    forces tau acting on the speeds `actuated` (default the driven ones) as in `inverse`. Without `inertia`
    the bodies' inertial wrenches are left out: the reactions' linear part in (tau, lambda)
    (mechsym.spatial.loop_reactions)."""
    s, p = solver.s, solver.p
    rows, origins, inertial, body_o = s.wrenches(q, v, a, params=p)
    if not inertia:
        inertial = np.zeros_like(inertial)
    full = lam
    out, on_bodies = {}, []               # on_bodies: (link of the second body, link of the first, wrench, origin)
    first = 0
    tau = np.asarray(tau)
    driving = {}                          # a driven closure's name -> its driving wrench on its second body
    if actuated is None and s.closure_driven:
        axes = s.drive_rows(q, params=p)[3]
        for k, c in zip(s.closure_driven, closure_drives(s.declaration)):
            u = axes[:, k] * tau[:, k, None]
            zero = np.zeros_like(u)
            wrench = np.concatenate([u, zero] if c.travel else [zero, u], axis=1)
            driving[c.joint.name] = driving.get(c.joint.name, 0.0) + wrench
    for c, (la, lb) in zip(s.closures, s.closure_links):
        n = len(c.joint.closure_rows())
        w = np.einsum("nr,nrk->nk", full[:, first:first + n], rows[:, first:first + n])
        first += n
        o = origins[:, len(on_bodies)]
        on_bodies.append((lb, la, w + driving.get(c.joint.name, 0.0), o))
        out.update({f"{c.joint.name}.{x}": w[:, i] for i, x in enumerate(AXES)})
    subtree = [[j for j in range(s.nlinks) if k in _ancestors(s.links, j)] for k in range(s.nlinks)]
    drives = dict(zip(s.drive_v, tau[:, s.tree_driven].T) if actuated is None else zip(actuated, tau.T))
    for k, link in enumerate(s.links):
        joint = link.declared
        if joint is None or not joint.nv:
            continue
        o = body_o[:, k]
        total = sum(_shift(inertial[:, j], body_o[:, j], o) for j in subtree[k])
        for lb, la, w, wo in on_bodies:
            inside_b, inside_a = lb in subtree[k], la in subtree[k]
            if inside_b != inside_a:
                total = total - (1 if inside_b else -1) * _shift(w, wo, o)
        driven = [i for i in range(link.iv + link.nv - joint.nv, link.iv + link.nv) if i in drives]
        if driven:
            J = s.tree.frame_jacobian(q, link.name, params=solver.tree_p)
            for i in driven:
                total = total - J[:, :, i] * drives[i][:, None]
        out.update({f"{joint.name}.{x}": total[:, i] for i, x in enumerate(AXES)})
    return out


def _ancestors(links, j):
    out = []
    while j >= 0:
        out.append(j)
        j = links[j].parent
    return out


class Partition:
    """Independent coordinates (q_I, v_I) of a LoopSolver's mechanism chosen at one configuration, and the
    dependent ones solved from them (see the module docstring)."""

    def __init__(self, solver: LoopSolver, q):
        s = self.s = solver.s
        self.solver = solver
        _, J, _ = s.closure(q[None], params=solver.p)
        JR = J[0] * solver.col[None, :]
        from scipy.linalg import qr

        weight = np.full(s.nv, 1e6)
        weight[[iv for _, iv in s.scalar_speeds]] = 1.0      # other speeds are always dependent
        _, _, piv = qr(JR * weight[None, :], pivoting=True, mode="economic")
        dependent = np.sort(piv[:s.nv - s.mobility])
        free = [i for i in range(s.nv) if i not in set(dependent.tolist())]
        scalar = {iv: iq for iq, iv in s.scalar_speeds}
        if any(i not in scalar for i in free):
            raise InputError(f"mechanism '{s.name}': no independent coordinates among the joints whose rates are "
                             f"their speeds ({s.loops_text()})")
        self.v_ind = np.array(free, int)
        self.q_ind = np.array([scalar[i] for i in free], int)
        self.dependent = dependent
        self.q = np.array(q, float)
        self.sign = self._sign(self.q)
        self.row_tol = 1e3 * 1e-12 * solver.rows          # the rows' residual where the loops count as closed
        self._configuration = None

    def _system(self, q):
        """The closure rows with q_I fixed: (residual without the q_I rows (N, rows), A (N, rows + k, nv))."""
        s = self.s
        phi, J, _ = s.closure(q, params=self.solver.p)
        P = np.zeros((len(q), len(self.v_ind), s.nv))
        P[:, np.arange(len(self.v_ind)), self.v_ind] = 1.0
        return phi, np.concatenate([J, P], axis=1)

    def _sign(self, q):
        """sign det A where A is square (else 0: no sign to keep)."""
        _, A = self._system(q[None])
        if A.shape[1] != A.shape[2]:
            return 0.0
        return np.sign(np.linalg.det(A[0] * self.solver.col[None, :]))

    def condition(self, q) -> float:
        """The condition number of the dependent columns of J (scaled) at q."""
        _, J, _ = self.s.closure(q[None], params=self.solver.p)
        block = (J[0] * self.solver.col[None, :])[:, self.dependent]
        sv = np.linalg.svd(block, compute_uv=False)
        return float(sv[0] / sv[len(self.dependent) - 1])

    def configuration(self, q_ind, v_ind):
        """(q, v) with the given independent coordinates and speeds, the dependent ones solved from the
        constraints from the last configuration; StepRejected when Newton fails or the branch changes. In C on
        the C backend (mechsym.spatial.loop_compiled), else `numpy_configuration`."""
        if self._configuration is None:
            self._configuration = dependent_entry(self, self.numpy_configuration, self.row_tol, MOVED)
        return self._configuration(q_ind, v_ind)

    def rejected(self, q_ind) -> StepRejected:
        """The error of independent coordinates where the loops do not close on the branch."""
        return StepRejected(f"mechanism '{self.s.name}': the loops do not close on the branch at "
                            f"{', '.join(self.s.coordinate_names[i] for i in self.q_ind)} = "
                            f"{np.round(q_ind, 9).tolist()}")

    def numpy_configuration(self, q_ind, v_ind):
        """`configuration` in numpy."""
        s, solver = self.s, self.solver
        q = np.array(self.q)
        q[self.q_ind] = q_ind
        moved = 0.0
        for _ in range(30):
            phi, J, _ = s.closure(q[None], params=solver.p)
            step = np.zeros(s.nv)
            step[self.dependent] = solve(J[:, :, self.dependent], phi)[0]
            step = np.clip(step, -solver.max_step, solver.max_step)
            q = s.integrate(q, -step)
            size = np.max(np.abs(step) / solver.col)
            moved += size
            if size < 1e-13:
                break
        phi, A = self._system(q[None])
        if not (np.all(np.abs(phi[0]) <= self.row_tol) and moved < MOVED and self._sign(q) == self.sign):
            raise self.rejected(q_ind)
        rhs = np.zeros(s.nrows + len(self.v_ind))
        rhs[s.nrows:] = v_ind
        v = solve(A, rhs[None])[0]
        self.q = q
        return q, v


def accelerations(solver, q, v, tau):
    """dv/dt (nv,) of the constrained equations at one state under the generalised forces tau (nv,): in one
    generated C call on the C backend (mechsym.spatial.loop_compiled), else `kkt_accelerations`."""
    if solver.constrained_accelerations is None:
        solver.constrained_accelerations = forward_entry(solver, functools.partial(kkt_accelerations, solver))
    return solver.constrained_accelerations(q, v, tau)


def kkt_accelerations(solver, q, v, tau):
    """dv/dt (nv,) of the constrained equations at one state under the generalised forces tau (nv,): the KKT
    system solved by LU where the closure rows are independent, by its pseudo-inverse where some are redundant."""
    s, p = solver.s, solver.p
    q, v, tau = (np.asarray(x, float) for x in (q, v, tau))
    _, J, gamma = s.closure(q[None], v[None], params=p)
    K = np.zeros((s.nv + s.nrows, s.nv + s.nrows))
    K[:s.nv, :s.nv] = s.tree.mass_matrix(q, params=solver.tree_p)
    K[:s.nv, s.nv:] = J[0].T
    K[s.nv:, :s.nv] = J[0]
    rhs = np.concatenate([tau - s.tree.bias(q, v, params=solver.tree_p), -gamma[0]])
    if s.mobility is not None and not s.redundant:       # the rank known (an assembly) and full
        return np.linalg.solve(K, rhs)[:s.nv]
    return solve(K[None], rhs[None])[0, :s.nv]


def consistent_velocity(solver, q, v0):
    """v0 projected onto the velocity constraints J v = 0 (least change), and whether it moved."""
    _, J, _ = solver.s.closure(q[None], params=solver.p)
    v = v0 - solve(J, (J[0] @ v0)[None])[0]
    return v, bool(np.max(np.abs(v - v0)) > 1e-12 * max(1.0, np.max(np.abs(v0))))


def forward(solver: LoopSolver, q0, v0, t_end, dt=None, rtol=1e-9, atol=None, torque=None,
            method="DOP853") -> RunResult:
    """A forward simulation from (q0, v0) over [0, t_end] under the generalised forces torque(t, q, v) (nv,),
    zero if None: a RunResult with t, every coordinate, every speed (NAME.v for the rate of coordinate NAME; a
    spherical joint's JOINT.wx ...), and the partitions in `stats["partitions"]` (time, independent coordinates). q0 is closed first
    (Newton from it); v0 is projected onto the velocity constraints, with a warning where that changes it."""
    s = solver.s
    q0, v0 = np.asarray(q0, float), np.asarray(v0, float)
    if q0.shape != (s.nq,) or v0.shape != (s.nv,):
        raise InputError(f"mechanism '{s.name}': q0 needs {s.nq} values and v0 {s.nv}, got {q0.shape} and {v0.shape}")
    opts = run_options(t_end, dt, rtol, atol, arrays={"q0": q0, "v0": v0}, width=s.nq + s.nv)
    q = solver.close(q0)
    v, moved = consistent_velocity(solver, q, v0)
    if moved:
        warnings.warn(f"mechanism '{s.name}': the initial speeds do not satisfy the closure rows; projected onto "
                      f"them (largest change {np.max(np.abs(v - v0)):.3g})", stacklevel=2)
    zero = np.zeros(s.nv)
    budget = CallBudget(2 * s.mobility, f"mechanism '{s.name}'", opts.t_end, method)    # one for every piece
    t0, grid = 0.0, opts.grid(opts.t_end)
    pieces, partitions, nfev, events = [], [], 0, []
    while True:
        part = Partition(solver, q)
        partitions.append((t0, [s.coordinate_names[i] for i in part.q_ind]))
        ni = len(part.v_ind)

        def rhs(t, y, part=part):
            qq, vv = part.configuration(y[:ni], y[ni:])
            tau = zero if torque is None else np.asarray(torque(t, qq, vv), float)
            return np.concatenate([vv[part.v_ind], accelerations(solver, qq, vv, tau)[part.v_ind]])

        def ill_conditioned(t, y, part=part):
            qq, _ = part.configuration(y[:ni], y[ni:])
            return PARTITION_COND - part.condition(qq)

        ill_conditioned.terminal = True
        y0 = np.concatenate([q[part.q_ind], v[part.v_ind]])
        sol = integrate(rhs, y0, (t0, opts.t_end), rtol=opts.rtol, atol=opts.atol, method=method,
                        name=f"mechanism '{s.name}'", budget=budget, events=[ill_conditioned],
                        describe=lambda y: f"independent state {y.tolist()}")
        nfev += sol.nfev
        t1 = sol.t[-1]
        pieces.append((t0, t1, sol.sol, part, q))
        if sol.status == 0 or t1 >= opts.t_end:
            break
        events.append(RunEvent(float(t1), "partition", sol.y[:, -1]))
        q, _ = part.configuration(sol.y[:ni, -1], sol.y[ni:, -1])
        _, v = part.configuration(sol.y[:ni, -1], sol.y[ni:, -1])
        t0 = t1
    qs, vs = np.empty((len(grid), s.nq)), np.empty((len(grid), s.nv))
    for t0, t1, dense, part, start in pieces:       # output work: configurations followed along the grid
        part.q = start
        ni = len(part.v_ind)
        for i in np.flatnonzero((grid >= t0) & (grid <= t1)):
            y = dense(grid[i])
            qs[i], vs[i] = part.configuration(y[:ni], y[ni:])
    cols = {"t": grid}
    cols.update({n: qs[:, i] for i, n in enumerate(s.coordinate_names)})
    cols.update({(f"{n}.v" if n in cols else n): vs[:, i] for i, n in enumerate(s.speed_names)})
    return RunResult(cols, {"t": "s"}, f"{s.name}: forward dynamics", events=events, nfev=nfev,
                     solution=None, stats={"partitions": partitions})
