"""Forward simulation of a tree: state [q, v], dq/dt from the free-flyer map (mechsym.spatial.manifold),
dv/dt = H^-1 (tau - bias) from the generated forward dynamics, integrated by scipy's solve_ivp.

`torque(t, q, v)` gives the generalised forces (nv,) (zero on the free base unless the caller pushes
it). The quaternion is normalised before every evaluation (the generated code uses the rotation of q/|q|
anyway) and on the output grid. The table has the columns of docs/conventions.md (Spatial trees): t, the
coordinates (base.x ... base.qw, one per joint by name), the speeds (base.vx ... base.wz, JOINT.v) and com.x, com.y,
com.z; a RunResult (mechsym.core.results) with solve_ivp's dense solution.
"""
from __future__ import annotations

import numpy as np

from mechsym.core.budget import CallBudget
from mechsym.core.errors import InputError
from mechsym.core.results import RunResult, ivp_result
from mechsym.core.timegrid import run_options
from mechsym.spatial import manifold

__all__ = ["simulate"]


def simulate(system, q0, v0, t_end, dt=None, rtol=1e-9, atol=None, torque=None, params=None,
             method="DOP853") -> RunResult:
    """A forward simulation of the tree from (q0, v0) over [0, t_end] under torque(t, q, v) (zero if None),
    sampled every dt: a RunResult of t, the coordinates, the speeds and the centre of mass (see the module
    docstring)."""
    from scipy.integrate import solve_ivp

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

    y0 = np.concatenate([manifold.normalise(q0, floating), v0])
    counted = CallBudget(len(y0), f"tree '{system.tree.name}'", opts.t_end, method).wrap(rhs)
    sol = solve_ivp(counted, (0.0, opts.t_end), y0, method=method, rtol=opts.rtol, atol=opts.atol, dense_output=True)
    if sol.status < 0:
        raise InputError(f"tree '{system.tree.name}': integration failed at t = {sol.t[-1]:.6g}: {sol.message}")
    grid = opts.grid(sol.t[-1])
    y = sol.sol(grid).T
    q = manifold.normalise(y[:, :nq], floating)
    v = y[:, nq:]
    com = system.com(q, params=p)
    cols = {"t": grid}
    cols.update({n: q[:, i] for i, n in enumerate(system.coordinate_names)})
    speed_names = [n if n.startswith("base.") else f"{n}.v" for n in system.speed_names]
    cols.update({n: v[:, i] for i, n in enumerate(speed_names)})
    cols.update({"com.x": com[:, 0], "com.y": com[:, 1], "com.z": com[:, 2]})
    return ivp_result(sol, (), cols, {"t": "s"}, f"{system.tree.name}: simulation")
