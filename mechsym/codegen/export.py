"""Standalone C export of a mechanism: MODEL.h, MODEL.c (plain C99, no Python), verbatim copies of the C
runtime files it includes (ms_*.h, from mechsym/codegen/runtime), an example program and a Makefile.

The source is the same generated code the C backend compiles, with MS_PREFIX defined as MODEL_ so that
its entry points are MODEL_phi, MODEL_inverse, MODEL_forward, ... The header documents the array layouts, the parameter
order, the order of the unknowns and of the points, and a reference configuration to start the
continuation from. The output depends only on the declaration and the generator (and the sympy that
prints it, named in the header), so an export can be regenerated and compared byte for byte.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import sympy

from mechsym.codegen import c_runtime
from mechsym.codegen.c_backend import EXPORT_CFLAGS as CFLAGS
from mechsym.codegen.c_source import generate
from mechsym.codegen.constants import DENSE_RECORD
from mechsym.core import __version__
from mechsym.core.errors import InputError
from mechsym.core.output import write_text



def c_name(name: str) -> str:
    """A C identifier for a mechsym name (non-word characters to '_', no leading digit)."""
    ident = re.sub(r"\W", "_", name)
    return ident if not ident[0].isdigit() else f"m_{ident}"


def export_files(system, params=None) -> dict:
    """File name -> text of the export of a derived one-coordinate System; `params` (name -> value)
    overrides the default parameter values written into the header."""
    if len(system.coordinate_names) != 1:
        raise InputError("export supports one-coordinate mechanisms")
    if system.equations.moving_loads:
        raise InputError(f"mechanism '{system.mechanism.name}': the standalone export carries the loads of position "
                         "alone (gravity, springs); a damper, an actuator or a load of the velocities or the time is "
                         "not in it")
    prefix = c_name(system.mechanism.name)
    source, meta = generate(system, prefix=f"{prefix}_", headers=(f"{prefix}.h",))
    if not meta["square"]:
        raise InputError(f"mechanism '{system.mechanism.name}' is over-constrained; nothing to export")
    runtime = c_runtime.used(source)
    solver = system.solver(params)
    ref = np.array([system.mechanism.coordinates[0].guess_at])
    q_ref = _machine_independent(solver.sweep(ref[None]).q[0], solver.col_scale)
    return {
        f"{prefix}.h": _header(system, prefix, meta, solver, ref[0], q_ref),
        f"{prefix}.c": source,
        "example.c": _example(system, prefix),
        "Makefile": (f"CFLAGS ?= {CFLAGS}\n\nexample: example.c {prefix}.c {prefix}.h {' '.join(runtime)}\n"
                     f"\t$(CC) $(CFLAGS) -o example example.c {prefix}.c -lm\n"),
        **{name: c_runtime.text(name) for name in runtime},
    }


def export(system, directory, force=False, params=None) -> list:
    """Write the export into `directory`; returns the paths written (files already identical are left).

    A file of the same name with other content is never overwritten unless force=True: it may be a
    user's own work."""
    files = export_files(system, params)
    directory = Path(directory)
    if directory.exists() and not directory.is_dir():
        raise InputError(f"{directory} is a file, not a folder; export writes a folder of files")
    changed = [name for name, text in files.items() if _read(directory / name) != text]
    existing = [name for name in changed if (directory / name).exists()]
    if existing and not force:
        raise InputError(f"{directory} already holds a different {', '.join(existing)}; "
                         "pass --force to overwrite")
    written = []
    for name in changed:
        write_text(directory / name, files[name])
        written.append(directory / name)
    return written


def _machine_independent(q, scale, decimals=10):
    """q rounded to `decimals` digits of each coordinate's scale: the solver leaves round-off of about 1e-16
    that depends on the BLAS kernel, and a shipped header must be the same on every machine."""
    scale = np.asarray(scale, dtype=float)
    return np.round(np.asarray(q, dtype=float) / scale, decimals) * scale + 0.0


def _read(path: Path):
    try:
        return path.read_text()
    except (OSError, UnicodeDecodeError):
        return None


def _array(values, digits=None):
    fmt = (lambda v: repr(float(v))) if digits is None else (lambda v: format(float(v), f".{digits}g"))
    return "{" + ", ".join(fmt(v) for v in values) + "}"


def _columns_declaration(prefix, meta) -> list:
    """The header lines of MODEL_inverse_columns, which a mechanism with lanes has (meta["lanes"])."""
    if not meta.get("lanes"):
        return []
    return [
        "/* _inverse with U combined for nspeed speeds as it is computed: coef (nspeed x 3) holds alpha, omega^2, 1",
        "   per speed; cols (NU x nspeed x n): cols[(i*nspeed + k)*n + s] = U_i of speed k at sample s. */",
        f"int {prefix}_inverse_columns(int n, const double *th, const double *p, const double *q0,",
        "    const double *scale, double tol, int maxit, double hmax, int nspeed, const double *coef,",
        "    double *coef_max, double *branch_min, double *cols, int *status, double *fail);",
    ]


def _header(system, prefix, meta, solver, th_ref, q_ref) -> str:
    con = system.constraints
    P = prefix.upper()
    unknowns = list(con.reaction_names) + [system.mechanism.coordinates[0].force or "force"]
    q_names = [str(s) for s in con.q]
    params = list(system.mechanism.parameters)
    points = list(system.kin.point_names)
    lines = [
        f"/* {system.mechanism.name}: generated by mechsym {__version__} (sympy {sympy.__version__}). Plain C99.",
        " *",
        f" * q ({meta['nq']}): " + ", ".join(q_names),
        f" * parameters p ({meta['npar']}): " + ", ".join(params),
        f" * unknowns U ({meta['nrow']}): " + ", ".join(unknowns),
        f" * points ({len(points)}, x and y each): " + ", ".join(points),
        " * Arrays are sample-major. SI units; angles in radians; positions in the fixed body's frame.",
        " */",
        f"#ifndef {P}_H",
        f"#define {P}_H",
        f"#define {P}_NQ {meta['nq']}",
        f"#define {P}_NU {meta['nrow']}",
        f"#define {P}_NPAR {meta['npar']}",
        f"#define {P}_NPOINTS {len(points)}",
        "/* storage of one factorisation of Phi_q: slot values and the pivots of its dense block */",
        f"#define {P}_NSLOT {meta['nslot'] + meta['block'] ** 2}",
        f"#define {P}_NBLOCK {max(meta['block'], 1)}",
        "/* default parameter values, in the order above */",
        f"static const double {P}_PARAMS[{meta['npar']}] = {_array(solver.params)};",
        f"/* a configuration at theta = {P}_THETA_REF, to 1e-10 of each coordinate's scale (start continuations here: Newton refines it) */",
        f"static const double {P}_THETA_REF = {float(th_ref)!r};",
        f"static const double {P}_Q_REF[{meta['nq']}] = {_array(q_ref, 12)};",
        "/* coordinate scales for the Newton step test (lengths for x, y; 1 for angles) */",
        f"static const double {P}_SCALE[{meta['nq']}] = {_array(solver.col_scale)};",
        "",
        "/* Inverse dynamics over n crank angles th (in path order, th[0] near the configuration q0).",
        "   u_out (n x NU x 3): U per unit acceleration, per unit speed squared, and for the static loads:",
        "   U = alpha*u[.,0] + omega^2*u[.,1] + u[.,2]. coef_max, branch_min: n values each; q_out (n x NQ) may be 0.",
        "   Returns -1 or the first failing sample, with its status in *status (MS_NO_CONVERGENCE, MS_SINGULAR,",
        "   MS_OFF_BRANCH, MS_DET_SIGN, MS_FAR of ms_constants.h; MS_INTERRUPTED by SIGINT, which the long calls catch",
        "   for their duration, restoring the previous handler). The continuation between samples takes steps of at",
        "   most hmax and halves a step that fails or changes the branch's signs, down to hmax * MS_STEP_FLOOR /",
        "   MS_STEP; where it stops there, fail (2 + 2*NQ, or 0) receives the last solved angle, the angle not",
        "   reached, the configuration at the first and Newton's last iterate at the second. */",
        f"int {prefix}_inverse(int n, const double *th, const double *p, const double *q0, const double *scale,",
        "    double tol, int maxit, double hmax, double *q_out, double *coef_max, double *branch_min, double *u_out,",
        "    int *status, double *fail);",
        "/* _inverse for nsets parameter sets in one call, set-major: set k has p = P + k*NPAR, scale = SCALE + k*NQ,",
        "   hmax = HMAX[k]; each assembles from the reference assembly q_ref at th_ref (Newton with its parameters,",
        "   on the branch of the declared conditions, or where none is declared of det Phi_q's sign ref_sign, +1 or",
        "   -1) and continues to th[0]; start_coef[k] is the largest velocity coefficient met on the way. Its",
        "   outputs start at coef_max + k*n, branch_min + k*n and u_out + k*n*NU*3, its return value in failed[k]",
        "   (0 where the start failed) and its status in status[k]. Returns 0, or MS_INTERRUPTED if SIGINT",
        "   interrupted it. */",
        f"int {prefix}_inverse_sets(int nsets, int n, const double *th, const double *P, double th_ref,",
        "    const double *q_ref, int ref_sign, const double *SCALE, const double *HMAX, double tol, int maxit,",
        "    double *start_coef, double *coef_max, double *branch_min, double *u_out, int *failed, int *status);",
        "/* _kinematics for nsets parameter sets in one call, each started as in _inverse_sets: its q, dq/dth and",
        "   d2q/dth2 start at q_out, dq_out, ddq_out + k*n*NQ, coef_max and branch_min at + k*n. */",
        f"int {prefix}_kinematics_sets(int nsets, int n, const double *th, const double *P, double th_ref,",
        "    const double *q_ref, int ref_sign, const double *SCALE, const double *HMAX, double tol, int maxit,",
        "    double *start_coef, double *q_out, double *dq_out, double *ddq_out, double *coef_max, double *branch_min,",
        "    int *failed, int *status);",
        "/* _forward (no dense record) for nsets parameter sets in one call, each started as in _inverse_sets and",
        "   integrated with its own step control and events: per set its start start_q (NQ), the right-hand side",
        "   there start_f (2), its states grid_y + k*n_grid*2, written[k] of them, nfev[k], n_events[k] events at",
        "   ev_t, ev_id + k*max_events and ev_y + 2*k*max_events, status[k]. Returns 0, or MS_INTERRUPTED. */",
        f"int {prefix}_forward_sets(int nsets, double torque, double th0, double om0, double t_end, const double *grid_t,",
        "    int n_grid, double rtol, double atol, const double *P, double th_ref, const double *q_ref, int ref_sign,",
        "    const double *SCALE, const double *HMAX, double tol, int maxit, int n_ev, const int *ev_comp,",
        "    const double *ev_value, const int *ev_dir, const int *ev_terminal, int max_events, double *ev_t, int *ev_id,",
        "    double *ev_y, int *n_events, double *start_coef, double *start_q, double *start_f, double *grid_y,",
        "    int *written, long *nfev, int *status);",
        "/* The diagonals of the mass matrix of nsets parameter sets: out + k*NQ from P + k*NPAR. */",
        f"void {prefix}_mass_sets(int nsets, const double *P, double *out);",
        *_columns_declaration(prefix, meta),
        "/* The reduced ODE y' = f(y), y = (theta, omega), under a constant torque at n states (th in path order from",
        "   q0 near th[0]): f_out (n x 2) and its exact Jacobian df/dy jac_out (n x 2 x 2). Returns as _inverse. */",
        f"int {prefix}_ode(int n, const double *th, const double *om, double torque, const double *p, const double *q0,",
        "    const double *scale, double tol, int maxit, double hmax, double *f_out, double *jac_out, int *status,",
        "    double *fail);",
        "/* Forward dynamics under a constant torque; states (theta, omega) at the grid times. Returns the number of",
        "   grid points written (*status: MS_OK or the status of ms_constants.h that ended the run).",
        f"   With rec non-NULL, the first rec_cap accepted steps' dense output, {DENSE_RECORD} doubles each: t_old, h, y_old (2) and",
        "   F (7 x 2, row-major), y(t) = y_old + F0 x + F1 x (1-x) + F2 x^2 (1-x) + F3 x^2 (1-x)^2 + ..., x = (t - t_old)/h;",
        "   *n_rec: the number of accepted steps (more than rec_cap: call again with that many). rec NULL: none. */",
        f"int {prefix}_forward(double torque, double th0, double om0, double t_end, const double *grid_t, int n_grid,",
        "    double rtol, double atol, const double *p, const double *q0, const double *scale, double tol, int maxit,",
        "    double hmax, int n_ev, const int *ev_comp, const double *ev_value, const int *ev_dir, const int *ev_terminal,",
        "    int max_events, double *ev_t, int *ev_id, double *ev_y, int *n_events, double *grid_y, long *nfev,",
        "    int rec_cap, double *rec, long *n_rec, int *status);",
        "/* Phi_q factorised at n configurations q (n x NQ) into a (n x NSLOT), piv (n x NBLOCK); ok[s] = the sign of",
        "   det Phi_q (+1 or -1), 0 where singular. Then Phi_q x = b (transpose = 0) or Phi_q^T x = b (1), m right-hand",
        "   sides: b, x n x m x NQ.",
        "   Both return 0, or MS_INTERRUPTED if interrupted. */",
        f"int {prefix}_factor(int n, const double *q, const double *p, double *a, int *piv, int *ok);",
        f"int {prefix}_solve(int n, int m, int transpose, const double *a, const int *piv, const double *b, double *x);",
        "/* One state for a simulation's right-hand side: Newton at th from the prediction q (in/out), then",
        "   J = dq/dth (NQ x NTH), a0 = -Phi_q^-1 gamma(q, J thd) (qdd = J thdd + a0), the applied forces app (NQ)",
        f"   and, unless NULL, the factorisation of Phi_q at q in lu (NSLOT), lu_piv (NBLOCK) as {prefix}_factor's.",
        "   Returns 0, 1 (no convergence) or 2 (singular). */",
        f"int {prefix}_track(double *q, const double *th, const double *thd, const double *p, const double *scale,",
        "    double tol, int maxit, double *jq, double *a0, double *app, double *lu, int *lu_piv);",
        "/* One-coordinate mechanisms: from q (in/out) solved at th0, the continuation to th1 in steps of at most hmax",
        "   (halved down to its floor, kept on q's branch), then the state at th1 as track gives it. Returns 0, 1 if",
        "   several coordinates or th1 is not finite or not within 10^6 steps, or the status where it stopped",
        f"   (fail (2 + 2 NQ, or NULL): as {prefix}_kinematics). */",
        f"int {prefix}_walk(double *q, double th0, double th1, const double *thd, const double *p, const double *scale,",
        "    double tol, int maxit, double hmax, double *jq, double *a0, double *app, double *lu, int *lu_piv, double *fail);",
        "/* Kinematics and model functions at n configurations q (n x NQ). */",
        f"void {prefix}_phi(int n, const double *q, const double *th, const double *p, double *out);",
        f"void {prefix}_jac(int n, const double *q, const double *p, double *out);",
        f"void {prefix}_gamma(int n, const double *q, const double *qd, const double *p, double *out);",
        f"void {prefix}_gamma3(int n, const double *q, const double *qd, const double *qdd, const double *p, double *out);",
        f"void {prefix}_applied_rate(int n, const double *q, const double *qd, const double *p, double *out);",
        f"void {prefix}_applied(int n, const double *q, const double *p, double *out);",
        f"void {prefix}_energy(int n, const double *q, const double *qd, const double *p, double *out);",
        f"void {prefix}_points(int n, const double *q, const double *p, double *out, int width);",
        f"void {prefix}_branches(int n, const double *q, const double *p, double *out, int width);",
        f"void {prefix}_mass(const double *p, double *out);",
        "#endif",
        "",
    ]
    return "\n".join(lines)


def _example(system, prefix) -> str:
    P = prefix.upper()
    force = system.mechanism.coordinates[0].force or "force"
    coord = system.coordinate_names[0]
    point_cols = ",".join(f"{n}.x,{n}.y" for n in system.kin.point_names)
    return f"""/* Example for {system.mechanism.name}, printing three CSV blocks, each after a line "# name: columns":
   kinematics (the named points), inverse dynamics at 2 rad/s (the driving torque {force}) and the reduced
   ODE with its Jacobian at 2 rad/s under zero torque, at 8 values of {coord} over one turn from
   {P}_THETA_REF; and forward dynamics from rest at {P}_THETA_REF under zero torque for 0.2 s. */
#include <stdio.h>
#include "{prefix}.h"

int main(void) {{
  enum {{ N = 8, NT = 21 }};
  static double th[N], q[N * {P}_NQ], coef[N], branch[N], u[N * {P}_NU * 3], pts[N * 2 * {P}_NPOINTS + 1];
  static double grid[NT], y[NT * 2];
  const double omega = 2.0, tol = 1e-10;
  int status = 0, n_events = 0;
  long nfev = 0, n_rec = 0;
  for (int i = 0; i < N; ++i) th[i] = {P}_THETA_REF + 6.283185307179586 * i / N;
  int failed = {prefix}_inverse(N, th, {P}_PARAMS, {P}_Q_REF, {P}_SCALE, tol, 30, 0.1, q, coef, branch, u, &status, 0);
  if (failed >= 0) {{ fprintf(stderr, "inverse failed at sample %d (status %d)\\n", failed, status); return 1; }}
  {prefix}_points(N, q, {P}_PARAMS, pts, 2 * {P}_NPOINTS);
  printf("# points: {coord},{point_cols}\\n");
  for (int i = 0; i < N; ++i) {{
    printf("%.17g", th[i]);
    for (int k = 0; k < 2 * {P}_NPOINTS; ++k) printf(",%.17g", pts[i * 2 * {P}_NPOINTS + k]);
    printf("\\n");
  }}
  printf("# inverse: {coord},{force}\\n");
  for (int i = 0; i < N; ++i) {{
    const double *ui = u + (size_t)i * {P}_NU * 3 + 3 * ({P}_NU - 1);
    printf("%.17g,%.17g\\n", th[i], omega * omega * ui[1] + ui[2]);
  }}
  static double om[N], f[N * 2], jac[N * 4];
  for (int i = 0; i < N; ++i) om[i] = omega;
  failed = {prefix}_ode(N, th, om, 0.0, {P}_PARAMS, {P}_Q_REF, {P}_SCALE, tol, 30, 0.1, f, jac, &status, 0);
  if (failed >= 0) {{ fprintf(stderr, "ode failed at sample %d (status %d)\\n", failed, status); return 1; }}
  printf("# ode: {coord},omega,thetadd,dthetadd/dtheta,dthetadd/domega\\n");
  for (int i = 0; i < N; ++i) printf("%.17g,%.17g,%.17g,%.17g,%.17g\\n", th[i], om[i], f[2 * i + 1], jac[4 * i + 2], jac[4 * i + 3]);
  for (int i = 0; i < NT; ++i) grid[i] = 0.2 * i / (NT - 1);
  int written = {prefix}_forward(0.0, {P}_THETA_REF, 0.0, 0.2, grid, NT, tol, tol, {P}_PARAMS, {P}_Q_REF, {P}_SCALE,
      tol, 30, 0.1, 0, 0, 0, 0, 0, 0, 0, 0, 0, &n_events, y, &nfev, 0, 0, &n_rec, &status);
  if (status) {{ fprintf(stderr, "forward failed (status %d)\\n", status); return 1; }}
  printf("# forward: t,{coord},omega\\n");
  for (int i = 0; i < written; ++i) printf("%.17g,%.17g,%.17g\\n", grid[i], y[2 * i], y[2 * i + 1]);
  return 0;
}}
"""
