"""The static sparse elimination of mechsym.codegen.sparse_plan, executed with numpy over a batch.

Each step of the plan is one vectorised numpy operation over all samples (and right-hand sides), so a
batch of small sparse systems costs a few dozen array operations instead of one LAPACK call per sample.
Layouts: slot values are (nslot, N); right-hand sides are (n, N, m).
"""
from __future__ import annotations

import numpy as np

from mechsym.codegen.sparse_plan import Plan


class SparseLU:
    """Factorises Phi_q given the values of its varying entries, for a fixed pattern and pivot order."""

    def __init__(self, plan: Plan, varying: list):
        self.plan = plan
        S = plan.slots
        self.nslot = len(S)
        self.varying_slots = np.array([S[(i, j)] for i, j in varying], dtype=int)
        self.const_slots = np.array(list(plan.constants), dtype=int)
        self.const_values = np.array(list(plan.constants.values()), dtype=float)
        self.steps = []
        for (r, c), pv, low, up, ups in zip(plan.pivots, plan.pivot_values, plan.lower, plan.upper, plan.updates):
            self.steps.append(dict(
                row=r, col=c, inv=1.0 / pv,  # the pivot is a known constant (often +-1)
                low_rows=np.array(low, dtype=int), low_slots=np.array([S[(i, c)] for i in low], dtype=int),
                up_cols=np.array(up, dtype=int), up_slots=np.array([S[(r, j)] for j in up], dtype=int),
                upd=np.array([S[(i, j)] for i, j in ups], dtype=int),
                upd_l=np.array([S[(i, c)] for i, j in ups], dtype=int),
                upd_u=np.array([S[(r, j)] for i, j in ups], dtype=int),
            ))
        br, bc = plan.block_rows, plan.block_cols
        self.block_rows, self.block_cols = np.array(br, dtype=int), np.array(bc, dtype=int)
        self.block_src = np.array([[S.get((i, j), -1) for j in bc] for i in br], dtype=int).reshape(len(br), len(bc))

    def factor(self, values):
        """values: (n_varying, N) entries of Phi_q in the order given at construction."""
        n = values.shape[1]
        a = np.empty((self.nslot, n))
        a[self.const_slots] = self.const_values[:, None]
        a[self.varying_slots] = values
        for st in self.steps:
            if st["low_slots"].size and st["inv"] != 1.0:
                a[st["low_slots"]] *= st["inv"]
            if st["upd"].size:
                a[st["upd"]] -= a[st["upd_l"]] * a[st["upd_u"]]
        r = len(self.block_rows)
        block = np.zeros((n, r, r))
        if r:
            src = self.block_src
            mask = src >= 0
            block[:, mask] = a[src[mask]].T
        lu, piv, ok = _dense_lu(block)
        return Factor(self, a, lu, piv, ok)


class Factor:
    """A factorised batch; solve (Phi_q x = b) and solve_t (Phi_q^T y = c)."""

    def __init__(self, lu: SparseLU, a, block, piv, ok):
        self.lu, self.a, self.block, self.piv, self.ok = lu, a, block, piv, ok

    def take(self, mask):
        """The factorisations of the samples selected by the boolean `mask`."""
        if mask.all():
            return self
        return Factor(self.lu, self.a[:, mask], self.block[mask], self.piv[mask], self.ok[mask])

    def solve(self, b):
        """b: (N, n) or (N, n, m) -> x of the same shape."""
        L, a = self.lu, self.a
        b, vector = _rhs(b)
        x = np.empty_like(b)
        for st in L.steps:
            if st["low_rows"].size:
                b[st["low_rows"]] -= a[st["low_slots"]][:, :, None] * b[st["row"]][None]
        if L.block_rows.size:
            x[L.block_cols] = _dense_solve(self.block, self.piv, b[L.block_rows])
        for st in reversed(L.steps):
            acc = b[st["row"]]
            if st["up_cols"].size:
                acc = acc - np.einsum("sn,snm->nm", a[st["up_slots"]], x[st["up_cols"]])
            x[st["col"]] = acc if st["inv"] == 1.0 else acc * st["inv"]
        return _out(x, vector)

    def solve_t(self, c):
        """c: (N, n) or (N, n, m) -> y with Phi_q^T y = c."""
        L, a = self.lu, self.a
        c, vector = _rhs(c)
        y = np.empty_like(c)
        for st in L.steps:
            y[st["row"]] = c[st["col"]] if st["inv"] == 1.0 else c[st["col"]] * st["inv"]
            if st["up_cols"].size:
                c[st["up_cols"]] -= a[st["up_slots"]][:, :, None] * y[st["row"]][None]
        if L.block_rows.size:
            y[L.block_rows] = _dense_solve_t(self.block, self.piv, c[L.block_cols])
        for st in reversed(L.steps):
            if st["low_rows"].size:
                y[st["row"]] -= np.einsum("sn,snm->nm", a[st["low_slots"]], y[st["low_rows"]])
        return _out(y, vector)


def _rhs(b):
    b = np.asarray(b, float)
    vector = b.ndim == 2
    b = b[:, :, None] if vector else b
    return np.moveaxis(b, 1, 0).copy(), vector  # (n, N, m), a copy we may overwrite


def _out(x, vector):
    x = np.moveaxis(x, 0, 1)
    return x[:, :, 0] if vector else x


def _dense_lu(block):
    """Vectorised LU with partial pivoting of (N, r, r); ok[s] is False where a pivot vanished."""
    m = block.copy()
    n, r, _ = m.shape
    piv = np.zeros((n, r), dtype=np.intp)
    ok = np.ones(n, bool)
    for k in range(r):
        p = k + np.argmax(np.abs(m[:, k:, k]), axis=1)
        piv[:, k] = p
        swap = np.flatnonzero(p != k)
        if swap.size:  # rows k and p exchanged, in the samples that pivot only
            row_k = m[swap, k].copy()
            m[swap, k] = m[swap, p[swap]]
            m[swap, p[swap]] = row_k
        d = m[:, k, k]
        ok &= d != 0
        d = np.where(d != 0, d, np.nan)
        m[:, k + 1:, k] /= d[:, None]
        m[:, k + 1:, k + 1:] -= m[:, k + 1:, k, None] * m[:, k, None, k + 1:]
    return m, piv, ok


def _dense_solve(m, piv, b):
    """b: (r, N, mrhs) -> x."""
    b = _exchange(np.moveaxis(b, 0, 1), piv, range(piv.shape[1]))  # (N, r, mrhs)
    n, r, _ = m.shape
    for i in range(r):
        b[:, i] -= np.einsum("nj,njm->nm", m[:, i, :i], b[:, :i])
    x = np.empty_like(b)
    for i in reversed(range(r)):
        x[:, i] = (b[:, i] - np.einsum("nj,njm->nm", m[:, i, i + 1:], x[:, i + 1:])) / m[:, i, i, None]
    return np.moveaxis(x, 1, 0)


def _dense_solve_t(m, piv, c):
    """(P M)^T y = c, i.e. M^T y = c with the row pivots of M's factorisation; c: (r, N, mrhs)."""
    c = np.moveaxis(c, 0, 1)
    n, r, _ = m.shape
    y = np.empty_like(c)
    for i in range(r):
        y[:, i] = (c[:, i] - np.einsum("nj,njm->nm", m[:, :i, i], y[:, :i])) / m[:, i, i, None]
    for i in reversed(range(r)):
        y[:, i] -= np.einsum("nj,njm->nm", m[:, i + 1:, i], y[:, i + 1:])
    return np.moveaxis(_exchange(y, piv, reversed(range(r))), 1, 0)


def _exchange(v, piv, steps):
    """v (N, r, m) with rows k and piv[:, k] exchanged for k in `steps`, in that order: the exchanges are
    composed into one permutation (on small integer arrays), then applied in one gather (a new array)."""
    n, r = piv.shape
    order = np.tile(np.arange(r), (n, 1))
    rows = np.arange(n)
    for k in steps:
        p = piv[:, k]
        order[rows, k], order[rows, p] = order[rows, p], order[rows, k].copy()
    return np.take_along_axis(v, order[:, :, None], axis=1)
