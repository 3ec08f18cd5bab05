"""The tables of a spatial closed-loop mechanism's analyses, as the command line writes them for a model with
one driven coordinate (docs/spatial-loops.md; column rules in docs/conventions.md):

  kinematics   the driven coordinate where it is a closing joint's (no coordinate of the tree), every joint
               coordinate, each body's frame origin BODY.x, BODY.y, BODY.z; their exact first and
               second derivatives by the driven coordinate (NAME' and NAME''), or with omega their rates
               (NAME.v, NAME.a; a spherical joint's speeds are its angular velocity, not a coordinate's rate)
  inverse      the driven coordinate, omega, its force (the declared name), and every joint's reaction
               JOINT.fx ... JOINT.mz (mechsym.spatial.loop_dynamics) that the equations determine (or every
               one, the minimum-norm completion: mechsym.spatial.loop_reactions); quasi-static: no inertia, no omega
  forward      t, the driven coordinate and omega under a constant driving force (with `every`, all
               coordinates and speeds)
"""
from __future__ import annotations

import warnings

import numpy as np

from mechsym.core.errors import InputError
from mechsym.core.results import Table
from mechsym.spatial import loop_dynamics as dyn
from mechsym.spatial.loop_kinematics import LoopSolver
from mechsym.spatial.loop_reactions import check_completion, undetermined, undetermined_text

__all__ = ["kinematics", "inverse", "forward", "params_json", "one_drive"]


def one_drive(solver: LoopSolver) -> str:
    """The name of the one driven coordinate, or an InputError (the command line drives one)."""
    drives = solver.s.declaration.drives
    if len(drives) != 1:
        raise InputError(f"mechanism '{solver.s.name}' drives {len(drives)} coordinates; the command line drives "
                         f"one (several through the Python API, mechsym.spatial.loop_kinematics)")
    return drives[0].coordinate


def _origins(solver, q, cols, units):
    for link in solver.s.links:
        if link.declared is None:                  # a universal joint's cross: at its body's origin
            continue
        o = solver.s.tree.frame_position(q, link.name, params=solver.tree_p)
        for i, c in enumerate("xyz"):
            cols[f"{link.name}.{c}"] = o[:, i]
            units[f"{link.name}.{c}"] = "m"


def kinematics(solver: LoopSolver, theta, omega=None, alpha=0.0) -> Table:
    """The kinematics table at the driven values theta (N,) (see the module docstring)."""
    coordinate = one_drive(solver)
    s = solver.s
    kin = solver.sweep(theta)
    cols, units = {}, {}
    if coordinate not in s.coordinate_names:     # a driven closure's coordinate
        cols[coordinate] = kin.theta[:, 0]
    for i, name in enumerate(s.coordinate_names):
        cols[name] = kin.q[:, i]
    _origins(solver, kin.q, cols, units)
    if omega is None:
        for i, name in enumerate(s.speed_names):
            cols[f"{name}'"], cols[f"{name}''"] = kin.dq[:, i, 0], kin.ddq[:, i]
    else:
        v = kin.velocities(np.full((len(kin.q), 1), omega))
        a = kin.ddq * omega ** 2 + kin.dq[:, :, 0] * alpha
        for i, name in enumerate(s.speed_names):
            cols[f"{name}.v"], cols[f"{name}.a"] = v[:, i], a[:, i]
    return Table(cols, units, f"{s.name}: kinematics")


def inverse(solver: LoopSolver, theta, omegas=(), alpha=0.0, quasi_static=False, reactions="determined") -> Table:
    """The inverse table at the driven values theta (N,), one block per speed of `omegas` (see the module
    docstring). `reactions`: "determined" leaves out the components the equations leave undetermined at
    some sample (redundant constraint rows) and names them in a warning; "min-norm" gives every component,
    the minimum-norm completion (mechsym.spatial.loop_reactions)."""
    check_completion(reactions)
    coordinate = one_drive(solver)
    s = solver.s
    kin = solver.sweep(theta)
    blocks, unknown = [], {}
    for omega in ([0.0] if quasi_static else omegas):
        if quasi_static:
            v = np.zeros((len(kin.q), s.nv))
            a = v
        else:
            v = kin.dq[:, :, 0] * omega
            a = kin.ddq * omega ** 2 + kin.dq[:, :, 0] * alpha
        tau, lam = dyn.inverse(solver, kin.q, v, a)
        cols = {coordinate: kin.theta[:, 0]}
        if not quasi_static:
            cols["omega"] = np.full(len(kin.q), float(omega))
        cols[s.force_names[0]] = tau[:, 0]
        cols.update(dyn.reactions(solver, kin.q, v, a, tau, lam))
        if reactions == "determined":
            for name, where in undetermined(solver, kin.q, v, a).items():
                unknown[name] = unknown.get(name, False) | bool(where.any())
        blocks.append(cols)
    joined = {n: np.concatenate([b[n] for b in blocks]) for n in blocks[0] if not unknown.get(n)}
    if any(unknown.values()):
        warnings.warn(f"mechanism '{s.name}': redundant constraints leave these reactions undetermined, left out "
                      f"of the table: {undetermined_text([n for n, u in unknown.items() if u])} (--reactions "
                      f"min-norm, in Python reactions='min-norm', gives the minimum-norm completion)", stacklevel=2)
    units = {n: ("N" if n.endswith((".fx", ".fy", ".fz")) else "N m" if n.endswith((".mx", ".my", ".mz")) else "")
             for n in joined}
    return Table(joined, units, f"{s.name}: inverse dynamics")


def forward(solver: LoopSolver, torque, theta0, omega0, t_end, dt=None, rtol=1e-9, atol=None, every=False) -> Table:
    """Motion from the assembly at theta0 with the driven speed omega0 under the constant driving force
    `torque` (see the module docstring)."""
    coordinate = one_drive(solver)
    s = solver.s
    q0 = solver.assemble([theta0])
    v0 = solver.velocities(q0[None], np.array([[omega0]]))[0]
    tau = s.drive_rows(q0[None], params=solver.p)[1][0, 0] * torque     # a tree coordinate's: constant
    force = ((lambda t, q, v: s.drive_rows(q[None], params=solver.p)[1][0, 0] * torque) if s.closure_driven
             else (lambda t, q, v: tau))
    run = dyn.forward(solver, q0, v0, t_end, dt=dt, rtol=rtol, atol=atol, torque=force)
    if every:
        return run
    q = np.column_stack([run[n] for n in s.coordinate_names])
    v = np.column_stack([run[f"{n}.v" if n in s.coordinate_names else n] for n in s.speed_names])
    values, D, _, _ = s.drive_rows(q, params=solver.p)
    theta = np.unwrap(values[:, 0]) if s.drive_angles[0] else values[:, 0]
    return Table({"t": run["t"], coordinate: theta, "omega": np.einsum("ni,ni->n", D[:, 0], v)}, {"t": "s"},
                 run.title)


def params_json(solver: LoopSolver, tree_json: dict) -> dict:
    """`mechsym params` of a closed-loop mechanism: the tree's JSON with its closures, drives, Grübler's count,
    the mobility and the redundant rows at the assembly."""
    s = solver.s
    solver.close()
    closures = {c.loop: {"joint": c.joint.name, "joint_type": type(c.joint).__name__.lower(), "frame_a": c.frame_a,
                         "frame_b": c.frame_b} for c in s.closures}
    return {**tree_json, "closures": closures, "driven": [d.coordinate for d in s.declaration.drives],
            "grubler": s.grubler, "mobility": s.mobility, "redundant_rows": s.redundant}
