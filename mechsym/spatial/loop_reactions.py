"""Which joint reactions of a spatial closed-loop mechanism its equations determine.

Inverse dynamics solves A U = C for U = [lambda; tau] (mechsym.spatial.loop_dynamics). With redundant closure
rows (Bricard's linkage) A has a null space at the state, every U + N z solves the equations, and a reaction
component r = r0 + g . U (JOINT.fx ... JOINT.mz: every one is affine in U) is determined iff its row g is
orthogonal to that null space. Here both are taken with A made dimensionless by the mechanism's scales (a
speed's column scale for A's rows; a row's scale, or a drive's, for U's entries): the null space is spanned by
the right singular vectors of singular values at most NULL_RCOND of the largest, and a component is
undetermined where |g . n| exceeds UNDETERMINED of the largest |g| at that state for a unit null vector n
(forces times the mechanism's size, so that all are moments; a row that is zero but for rounding is thus
determined). The rows g are the reactions' linear part (`loop_dynamics.reactions` without inertia) at the
unit vectors of U, evaluated in one batch.

`complete` chooses what the inverse tables report: "determined" (the default) leaves out every component
undetermined at a sample and names them; "min-norm" gives the minimum-norm U's reactions for every component.
"""
from __future__ import annotations

import numpy as np

from mechsym.core.errors import InputError
from mechsym.spatial import loop_dynamics as dyn

__all__ = ["COMPLETIONS", "undetermined", "undetermined_text", "check_completion"]

COMPLETIONS = ("determined", "min-norm")
NULL_RCOND = 1e-9        # singular values of the scaled A at most NULL_RCOND of the largest: its null space
UNDETERMINED = 1e-9      # |g . n| above UNDETERMINED max |g| (n a unit null vector): the component is undetermined


def check_completion(completion: str) -> str:
    """`completion` if it is one of COMPLETIONS, else an InputError naming them."""
    if completion not in COMPLETIONS:
        raise InputError(f"reactions '{completion}': expected one of {', '.join(COMPLETIONS)}")
    return completion


def _unknown_scale(solver, actuated):
    """The scale of each entry of U: a closure row's (a length for an "along" row's force), a drive's."""
    forces = solver.theta_scale if actuated is None else solver.col[list(actuated)]
    return np.concatenate([solver.rows, forces])


def null_space(solver, A, actuated=None):
    """(V (N, n, n) rows: unit vectors of the scaled U, null (N, n) bool: which of them span A's null space)
    of A (N, nv, n) at each state."""
    u = _unknown_scale(solver, actuated)
    scaled = A * solver.col[None, :, None] / u[None, None, :]
    _, sv, V = np.linalg.svd(scaled, full_matrices=True)
    n = A.shape[2]
    padded = np.zeros((len(A), n))
    padded[:, :sv.shape[1]] = sv
    return V, padded <= NULL_RCOND * sv[:, :1]


def undetermined(solver, q, v, a, actuated=None) -> dict:
    """{JOINT.COMPONENT: (N,) bool, True where the equations A U = C leave it undetermined} at states q, v, a
    (the forces acting on `actuated` as in `loop_dynamics.inverse`); empty where A has no null space at any
    state."""
    A = dyn.system_matrix(solver, q, actuated)
    V, null = null_space(solver, A, actuated)
    if not null.any():
        return {}
    N, n = len(q), A.shape[2]
    s = solver.s
    u = _unknown_scale(solver, actuated)
    unit = np.tile(np.diag(1.0 / u), (N, 1))                    # U at the scaled unit vectors, per state
    rep = lambda x: np.repeat(x, n, axis=0)                     # noqa: E731
    linear = dyn.reactions(solver, rep(q), rep(v), rep(a), unit[:, s.nrows:], unit[:, :s.nrows], actuated,
                           inertia=False)
    rows = {}                                                   # each component's row in the scaled U, moments
    for name, g in linear.items():                              # (a force times the mechanism's size)
        rows[name] = g.reshape(N, n) * (solver.scale if name.endswith((".fx", ".fy", ".fz")) else 1.0)
    size = np.max([np.linalg.norm(g, axis=1) for g in rows.values()], axis=0)
    return {name: np.max(np.abs(np.einsum("nj,nij->ni", g, V)) * null, axis=1) > UNDETERMINED * size
            for name, g in rows.items()}


def undetermined_text(names) -> str:
    """Components JOINT.C grouped by joint: 'J1 (fx, fy), J2 (mz)'."""
    joints = {}
    for name in names:
        joint, component = name.rsplit(".", 1)
        joints.setdefault(joint, []).append(component)
    return ", ".join(f"{j} ({', '.join(c)})" for j, c in joints.items())
