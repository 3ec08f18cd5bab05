"""Forward simulation of a tree: state [q, v], dq/dt from the free-flyer map (mechsym.spatial.manifold),
dv/dt = H^-1 (tau - bias) from the generated forward dynamics, integrated by the runner skeleton
(mechsym.core.runner: scipy's solve_ivp).

`torque(t, q, v)` gives the generalised forces (nv,) (zero on the free base unless the caller pushes
it). The quaternion is normalised before every evaluation (the generated code uses the rotation of q/|q|
anyway) and on the output grid. The table has the columns of docs/conventions.md (Spatial trees): t, the
coordinates (base.x ... base.qw, one per joint by name), the speeds (base.vx ... base.wz, JOINT.v) and com.x, com.y,
com.z; a RunResult (mechsym.core.results) with solve_ivp's dense solution.
"""
from __future__ import annotations

import numpy as np

from mechsym.core.errors import InputError
from mechsym.core.results import RunResult
from mechsym.core.runner import integrate, result
from mechsym.core.timegrid import run_options
from mechsym.spatial import manifold

__all__ = ["simulate"]


def simulate(system, q0, v0, t_end, dt=None, rtol=1e-9, atol=None, torque=None, params=None,
             method="DOP853") -> RunResult:
    """A forward simulation of the tree from (q0, v0) over [0, t_end] under torque(t, q, v) (zero if None),
    sampled every dt: a RunResult of t, the coordinates, the speeds and the centre of mass (see the module
    docstring)."""
    q0, v0 = np.asarray(q0, float), np.asarray(v0, float)
    if q0.shape != (system.nq,) or v0.shape != (system.nv,):
        raise InputError(f"tree '{system.tree.name}': q0 needs {system.nq} values and v0 {system.nv}, "
                         f"got {q0.shape} and {v0.shape}")
    system.check_integrable("simulate")
    opts = run_options(t_end, dt, rtol, atol, arrays={"q0": q0, "v0": v0}, width=60)
    system._q(q0, f"tree '{system.tree.name}', simulate")      # the initial quaternion is checked, then normalised
    p = system.params(params)
    nq, floating = system.nq, system.floating
    zero = np.zeros(system.nv)

    def rhs(t, y):
        q = manifold.normalise(y[:nq], floating)
        v = y[nq:]
        tau = zero if torque is None else torque(t, q, v)
        acc = system.forward(q, v, tau, params=p)
        return np.concatenate([manifold.qdot(q, v, floating), acc])

    def columns(grid, y):
        q = manifold.normalise(y[:nq].T, floating)
        v = y[nq:].T
        com = system.com(q, params=p)
        speed_names = [n if n.startswith("base.") else f"{n}.v" for n in system.speed_names]
        return {"t": grid, **{n: q[:, i] for i, n in enumerate(system.coordinate_names)},
                **{n: v[:, i] for i, n in enumerate(speed_names)},
                "com.x": com[:, 0], "com.y": com[:, 1], "com.z": com[:, 2]}

    y0 = np.concatenate([manifold.normalise(q0, floating), v0])
    sol = integrate(rhs, y0, (0.0, opts.t_end), rtol=opts.rtol, atol=opts.atol, method=method,
                    name=f"tree '{system.tree.name}'")
    return result(sol, opts, columns, f"{system.tree.name}: simulation")
