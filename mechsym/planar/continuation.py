"""Continuation along the driven coordinates: a sweep's path from the declared assembly to every sample.

The Solver's many-configuration stage (mechsym.planar.solver). A sweep is done in two passes: a
sequential continuation over coarse nodes along the input path (second-order Taylor prediction, Newton
correction, each node kept on the start's assembly branch; an interval that leaves it or that Newton
cannot cross is retried in halved steps, and a dead point is named only where the step floor is reached),
then one batched Newton correction of every sample, predicted from the nodes around it (quintic Hermite
interpolation of q, q', q'' between two nodes, so that one Newton step and one chord step reach rounding;
a sample whose correction failed or left the branch is continued from its node). So the Python loop runs
over nodes (about 2*pi/step of them), never over samples. A periodic coordinate far from the reference is
reduced by its exact period (`period`).
"""
from __future__ import annotations

import numpy as np

from mechsym.codegen.constants import STEP_FLOOR
from mechsym.core.budget import check_memory
from mechsym.core.errors import AssemblyError, InputError, SingularError
from mechsym.planar.kinematics import STEP_TOL, SUSPECT, Kinematics, _path_length, _solve, sweep_memory

# A sample's batched Newton correction above MOVED (relative to the coordinate scales) is far beyond the
# error of its prediction from the nodes: its branch is then checked (Continuation._settle).
MOVED = 1e-6
BLOCK = 65536  # samples per block of the interpolation


class Continuation:
    """The Solver's methods along a path of coordinate values."""

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
