"""Compiled forward dynamics of a spatial closed-loop mechanism: the constrained accelerations and the
dependent coordinates of a state in C, from the generated functions of the codegen spec and the runtime's
solves (runtime/ms_loop_forward.h).

    fns = compile_forward(name, key, make_spec, nv, nrows)   # make_spec() -> a Spec with "terms" and "rows"
    fns.forward(q, v, tau, p)                                 # (nv, N...), as any compiled spec function
    fns.dependent, fns.sweep                                  # ctypes: a partition's q and v, a sweep (below)

The spec's function `terms` (inputs q, v, a, p) gives H (nv x nv, row-major), bias (nv), J (nrows x nv,
row-major) and gamma (nrows) at a state, `closure` phi (nrows), J and gamma. The library adds

    void MS_FN(forward)(int ns, q, v, tau, p, out)            the accelerations of each state (loop_accelerations)
    int MS_FN(dependent)(p, man, part, ni, q_ind, v_ind, col, max_step, row_tol, moved_max, sign, q, v)
    int MS_FN(sweep)(p, man, n, theta, nnodes, nodes, q0, col, rows, max_step, theta_scale, sign, step, floor,
                     drive_q, drive_v, q, dq, ddq, info)

`man` (ints) lists how q moves with v (ms_loop_forward.h loop_integrate: coordinates whose rates are their
speeds, spherical joints' quaternions). dependent: `part` the ni independent speeds, the nv - ni dependent ones,
then the ni independent coordinates (ints); q the last solved configuration on entry, the solved one on return
with v; 0, or 1 where the partition's checks fail (loop_dependent). sweep: one driven coordinate (drive_q, its
speed drive_v), the samples theta (n), the nodes continued to (ints), q0 solved at theta[0]; q (n x nq), dq, ddq
(n x nv) and a status with `info` (ms_loop_sweep.h loop_sweep). The source is the spec's
straight-line C (c_source.render_straight) and those entry points, cached by content like every other library
(c_backend.build_source).
"""
from __future__ import annotations

import ctypes

from mechsym.codegen import c_backend, c_runtime
from mechsym.codegen.callables import PREFIX, CFunctions, layout

__all__ = ["compile_forward"]


def _entry_source(nq, nv, nrows) -> str:
    """MS_FN(forward) and MS_FN(dependent) over the generated terms and rows."""
    size = nv * nv + nv + nrows * nv + nrows
    work = nv * (2 * nv + nrows + 3) + nrows
    m = nrows + nv                                      # the most rows of [J; P_I]
    dependent_work = nrows * (nv + 1) + 2 * m * nv + 4 * nv + 2 * m
    return "\n".join([
        "#include <math.h>",
        c_runtime.include("ms_cholesky.h"),
        c_runtime.include("ms_dense.h"),
        c_runtime.include("ms_loop_forward.h"),
        c_runtime.include("ms_loop_sweep.h"),
        "/* the constrained accelerations dv/dt (nv per state) under the generalised forces tau (ms_loop_forward.h) */",
        "void MS_FN(forward)(int ns, const double *restrict q_, const double *restrict v_, "
        "const double *restrict tau_, const double *restrict p, double *restrict out_) {",
        f"  double terms[{size}], work[{work}];",
        f"  int iwork[{max(nrows, 1)}];",
        "  for (int k = 0; k < ns; k++) {",
        f"    const double *q = q_ + (size_t){nq} * k, *v = v_ + (size_t){nv} * k, *tau = tau_ + (size_t){nv} * k;",
        "    MS_FN(terms)(1, q, v, tau, p, terms);",
        f"    loop_accelerations({nv}, {nrows}, terms, tau, work, iwork, out_ + (size_t){nv} * k);",
        "  }",
        "}",
        "static void loop_closure(const double *q, const double *v, const double *p, double *out) {",
        f"  static const double zero[{nv}] = {{0}};",
        "  MS_FN(closure)(1, q, v, zero, p, out);",
        "}",
        "static void loop_rows(const double *q, const double *p, double *out) {",
        f"  static const double zero[{nv}] = {{0}};",
        "  MS_FN(closure)(1, q, zero, zero, p, out);",
        "}",
        "/* a partition's configuration and speeds (ms_loop_forward.h loop_dependent) */",
        "int MS_FN(dependent)(const double *p, const int *man, const int *part, int ni, const double *q_ind, "
        "const double *v_ind, const double *col, const double *max_step, const double *row_tol, double moved_max, "
        "double sign, double *q, double *v) {",
        f"  double work[{dependent_work}];",
        f"  int iwork[{nv}];",
        f"  return loop_dependent({nv}, {nrows}, ni, part, part + {nv}, part + ni, man, q_ind, v_ind, col, max_step, "
        "row_tol, moved_max, sign, loop_rows, p, q, v, work, iwork);",
        "}",
        "/* the kinematics sweep of one driven coordinate (ms_loop_sweep.h loop_sweep) */",
        "int MS_FN(sweep)(const double *p, const int *man, int n, const double *theta, int nnodes, const int *nodes, "
        "const double *q0, const double *col, const double *rows, const double *max_step, double theta_scale, "
        "double sign, double step, double floor, int drive_q, int drive_v, double *q, double *dq, double *ddq, "
        "double *info) {",
        f"  double work[LOOP_SWEEP_WORK({nq}, {nv}, {nrows})];",
        f"  int iwork[{nv + nrows + 1}];",
        f"  LoopSweep w = {{.nq = {nq}, .nv = {nv}, .nr = {nrows}, .drive_q = drive_q, .drive_v = drive_v, .man = man, "
        ".p = p, .col = col, .rows = rows, .max_step = max_step, .theta_scale = theta_scale, .sign = sign, "
        ".closure = loop_closure, .iwork = iwork};",
        "  loop_sweep_init(&w, work);",
        "  return loop_sweep(&w, n, theta, nnodes, nodes, q0, step, floor, q, dq, ddq, info);",
        "}",
        ""])


def compile_forward(name, key, make_spec, nv, nrows) -> CFunctions:
    """The spec `make_spec()` (run only when nothing is cached) compiled with the entry points `forward` and
    `dependent` through the cache; `key` must change with everything make_spec reads. `dependent` is the ctypes
    function (arguments: addresses, ni, moved_max and sign as numbers)."""
    from mechsym.codegen.c_source import render_straight

    def generate():
        spec = make_spec()
        meta = layout(spec)
        terms = meta["functions"]["terms"]
        meta["functions"]["forward"] = {"inputs": terms["inputs"], "size": nv, "flops": terms["flops"]}
        nq = terms["inputs"][0][1]
        return render_straight(spec, PREFIX) + _entry_source(nq, nv, nrows), meta

    fns = CFunctions(c_backend.build_source(name, key, generate))
    a, x, i = ctypes.c_void_p, ctypes.c_double, ctypes.c_int
    for entry, argtypes in (("dependent", [a, a, a, i, a, a, a, a, a, x, x, a, a]),
                            ("sweep", [a, a, i, a, i, a, a, a, a, a, x, x, x, x, i, i, a, a, a, a])):
        fn = fns._dll[PREFIX + entry]
        fn.argtypes, fn.restype = argtypes, i
        setattr(fns, entry, fn)
    return fns
