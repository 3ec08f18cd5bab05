"""The compiled forward dynamics of a spatial closed-loop mechanism (mechsym.spatial.loops.LoopSystem) on the C
backend: the constrained accelerations at a state in one generated C call, and a partition's dependent
coordinates and speeds in another (mechsym.codegen.c_loops; the solves in
mechsym/codegen/runtime/ms_loop_forward.h). mechsym.spatial.loop_dynamics takes these routes through the
backend object; on numpy its own.

The library's spec is two functions of one derivation: `terms`, the tree's H and bias (the force elements'
forces in it: mechsym.spatial.system.dynamics_terms) and the closure rows' J and gamma
(mechsym.spatial.loops.loop_spec_items), and `closure`, phi, J and gamma. The accelerations go through the extension
entry (mechsym.codegen.c_extension: arrays read in place, one state or N); an input it cannot read as it is,
or a non-finite result, goes to the Python route, which converts the input or names the fault. The dependent
coordinates: Newton, the partition's checks and the speeds step for step as Partition.configuration; the
kinematics sweep of one driven coordinate step for step as LoopSolver.sweep after its assembly (its errors
raised alike); both for a mechanism of joints whose rates are their speeds and spherical joints (a quaternion
turned by its exponential as LoopSystem.integrate does; another joint, a planar one, keeps the Python route).
"""
from __future__ import annotations

import ctypes
import weakref

import numpy as np

from mechsym.codegen import c_extension
from mechsym.codegen.keys import cache_key, package_source

__all__ = ["forward_entry", "dependent_entry", "sweep_entry"]

_LIBRARIES = weakref.WeakKeyDictionary()     # LoopSystem -> its compiled library


def _spec(system):
    """The codegen spec of the functions `terms` (H row-major, bias, J row-major, gamma) and `closure` (phi, J,
    gamma)."""
    from mechsym.codegen.spec import Spec, shared_program
    from mechsym.spatial.derive import Derivation
    from mechsym.spatial.loops import loop_spec_items
    from mechsym.spatial.system import dynamics_terms

    tree = system.declaration
    d = Derivation(tree)
    closure = dict((n, out) for n, out, _ in loop_spec_items(d, tree))["closure"]
    d.s.cut()
    H, bias, _, _ = dynamics_terms(d)
    inputs = [("q", tuple(d.q)), ("v", tuple(d.v)), ("a", tuple(d.a)), ("p", tuple(d.p.values()))]
    m, n = system.nrows, system.nv
    items = [("terms", inputs, H + bias + closure[m:], "H, bias, J (row-major) and gamma", 0),
             ("closure", inputs, closure, "phi, J (row-major) and gamma", 0)]
    functions = shared_program(items, d.s.assignments, "x", d.s.pieces)
    return Spec(f"loop forward {system.name}", {"nq": system.nq, "nv": n, "npar": len(system.param_names)},
                functions, None)


def _library(system):
    """The system's compiled library (mechsym.codegen.c_loops), loaded once."""
    from mechsym.codegen.c_loops import compile_forward

    if system not in _LIBRARIES:
        key = cache_key(system.declaration, package_source(), "loop forward")
        _LIBRARIES[system] = compile_forward(f"loop-forward-{system.name}", key, lambda: _spec(system), system.nv,
                                             system.nrows)
    return _LIBRARIES[system]


def _compiled_forward(solver, python):
    """The extension's entry of the generated forward at the solver's parameters, or `python` where the
    extension cannot be built."""
    s = solver.s
    address = ctypes.cast(_library(s).address_function("forward"), ctypes.c_void_p).value  # (stays loaded)
    entry = c_extension.entry(address, (s.nq, s.nv, s.nv), (s.nv,), solver.p, python, finite_out=True)
    return python if entry is None else entry


def forward_entry(solver, python):
    """accelerations(q, v, tau) of the solver's mechanism at its parameters: the compiled entry on the C backend,
    else `python` (q, v, tau) -> dv/dt."""
    return solver.s.backend.route(compiled=_compiled_forward, python=lambda _, py: py)(solver, python)


def _compiled_dependent(partition, python, row_tol, moved):
    """configuration(q_ind, v_ind) of the partition in C (the buffers kept, their addresses passed)."""
    s, solver = partition.s, partition.solver
    manifold = _manifold(s)
    if manifold is None:
        return python
    fn = _library(s).dependent
    ni = len(partition.v_ind)
    part = np.ascontiguousarray(np.concatenate([partition.v_ind, partition.dependent, partition.q_ind]), np.intc)
    fixed = [np.ascontiguousarray(x, float) for x in (solver.p, solver.col, solver.max_step, row_tol)]
    q_ind, v_ind, q, v = np.zeros(ni), np.zeros(ni), np.zeros(s.nq), np.zeros(s.nv)
    p_, col_, max_, tol_ = (x.ctypes.data for x in fixed)
    man_, part_, qi_, vi_, q_, v_ = (x.ctypes.data for x in (manifold, part, q_ind, v_ind, q, v))
    sign = float(partition.sign)

    def configuration(values, speeds):
        q_ind[:], v_ind[:], q[:] = values, speeds, partition.q
        if fn(p_, man_, part_, ni, qi_, vi_, col_, max_, tol_, moved, sign, q_, v_):
            raise partition.rejected(values)
        partition.q = q.copy()
        return partition.q, v.copy()

    configuration.buffers = (manifold, part, fixed, q_ind, v_ind, q, v)       # (alive as long as the call)
    return configuration


def dependent_entry(partition, python, row_tol, moved):
    """configuration(q_ind, v_ind) -> (q, v) of a loop_dynamics.Partition, rows closed to row_tol and q moved by
    less than `moved`: compiled on the C backend for a mechanism of joints whose rates are their speeds and
    spherical joints, else `python`."""
    return partition.s.backend.route(compiled=_compiled_dependent,
                                     python=lambda _, py, *__: py)(partition, python, row_tol, moved)


def _manifold(system):
    """How q moves with v, for the C runtime's loop_integrate (ms_loop_forward.h): [ns, (iq, iv) x ns, nquat,
    (iq, iv) x nquat] of the coordinates whose rates are their speeds and the spherical joints' quaternions
    (np.intc); None where another joint moves otherwise (the Python route then)."""
    from mechsym.spatial.joints import Spherical

    quats = []
    for link in system.links:
        joint = link.joint
        if isinstance(joint, Spherical):
            quats.append((link.iq, link.iv))
        elif joint.nv and not (joint.rates_are_speeds and joint.nq == joint.nv and joint.mimic is None):
            return None
    return np.array([len(system.scalar_speeds), *np.ravel(system.scalar_speeds), len(quats), *np.ravel(quats)],
                    dtype=np.intc)


def _compiled_sweep(solver, python, step, floor):
    """sweep(theta (N, 1), nodes, q0) -> (q, dq, ddq) of one driven coordinate in C, raising the solver's errors."""
    s = solver.s
    manifold = _manifold(s)
    if solver.k != 1 or manifold is None or s.closure_driven:
        return python
    fn = _library(s).sweep
    fixed = [np.ascontiguousarray(x, float) for x in (solver.p, solver.col, solver.rows, solver.max_step)]
    p_, col_, rows_, max_ = (x.ctypes.data for x in fixed)

    def sweep(theta, nodes, q0):
        t = np.ascontiguousarray(theta[:, 0], float)
        at = np.ascontiguousarray(nodes, dtype=np.intc)
        start = np.ascontiguousarray(q0, float)
        q, dq, ddq = np.empty((len(t), s.nq)), np.empty((len(t), s.nv)), np.empty((len(t), s.nv))
        info = np.zeros(2)
        status = fn(p_, manifold.ctypes.data, len(t), t.ctypes.data, len(at), at.ctypes.data, start.ctypes.data,
                    col_, rows_, max_, float(solver.theta_scale[0]), float(solver.sign), step, floor, s.drive_q[0],
                    s.drive_v[0], q.ctypes.data, dq.ctypes.data, ddq.ctypes.data, info.ctypes.data)
        if status == 1:           # the step's floor: the numpy route stops there too and tells a fold from a dead point
            return python(theta, nodes, q0)
        if status == 2:
            raise solver.lost(theta[int(info[0])])
        if status == 3:
            raise solver.dead_point(theta[int(info[0])], info[1])
        return q, dq[:, :, None], ddq

    sweep.buffers = (manifold, fixed)                              # (alive as long as the call)
    return sweep


def sweep_entry(solver, python, step, floor):
    """sweep(theta (N, k), nodes, q0) -> (q, dq, ddq) of LoopSolver.sweep after its assembly, continued over the
    nodes in steps of `step` halved down to floor * step: compiled on the C backend for one driven coordinate of
    a mechanism of joints whose rates are their speeds and spherical joints, else `python`."""
    return solver.s.backend.route(compiled=_compiled_sweep, python=lambda _, py, *__: py)(solver, python, step, floor)
