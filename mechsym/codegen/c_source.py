"""C99 source for one mechanism, printed from the same symbolic expressions as the numpy backend.

Per-sample functions (common subexpressions eliminated, printed with sympy's C printer) and batched
entry points that loop over samples inside C:

  ms_phi, ms_jac, ms_gamma, ms_gamma3, ms_applied, ms_applied_rate, ms_mass, ms_points, ms_branches,
  ms_energy    (evaluation)
  ms_factor, ms_solve
               the static sparse factorisation of Phi_q at many configurations, and its solves
  ms_track     one state of a mechanism with several coordinates: Newton, J = dq/dtheta, the
               acceleration offset a0 and the applied forces, for a simulation's right-hand side
  ms_inverse   kinematics by Newton, exact coefficients, and the reactions and driving force for three
               right-hand sides (per unit thetadd, per unit thetad^2, static), per sample: in blocks of
               samples solved independently from anchors reached by continuation (mechsym.codegen.c_lanes)
  ms_inverse_sets
               ms_inverse for many parameter sets (each with its own starting configuration) in one call
  ms_ode       the reduced one-coordinate ODE's right-hand side and its exact Jacobian along theta
  ms_forward   the reduced one-coordinate ODE integrated by DOP853 (scipy's coefficients and error control) with
               dense output on a uniform grid and located events

The long calls (ms_inverse, ms_inverse_sets, ms_ode, ms_forward, ms_factor, ms_solve) catch SIGINT for their duration: the
handler only raises a flag, which the loops poll at every sample or integration step, and the call
returns status 5 (MS_INTERRUPTED, distinct from every failure status) and restores the previous handler, so that Ctrl-C ends a long C loop at
once (the caller raises KeyboardInterrupt) instead of waiting for it to finish.

The model's part (sizes, per-sample functions, the elimination of mechsym.codegen.sparse_plan) is printed
here; the rest is the C runtime, real C files in mechsym/codegen/runtime/ that the source includes
(mechsym.codegen.c_runtime): ms_prefix.h (the MS_FN macro), ms_prelude.h (includes, SIGINT), ms_dense.h,
ms_kernels.h (tracker, inverse, ODE), ms_lanes.h and ms_blocks.h (the inverse batch in blocks of samples,
with the lane functions of mechsym.codegen.c_lanes), ms_dop853.h (forward) and ms_batch.h. Entry points are written
MS_FN(name): ms_name in the C backend's library, MODEL_name in an export. Plain C99 with no Python
dependency, so it is also what `mechsym export` writes.
"""
from __future__ import annotations

import sympy as sp
from sympy.printing.c import C99CodePrinter

from mechsym.codegen import c_lanes, c_runtime
from mechsym.codegen.sparse_plan import emit_c, jacobian_pattern, plan


class CPrinter(C99CodePrinter):
    """sympy's C99 printer with small integer powers as products (cheaper than pow and exact to the same
    rounding) and x**-1 as (1.0/x); both bracketed, since either may stand where it divides."""

    def _print_Pow(self, expr):
        base, exp = expr.args
        if exp.is_Integer and 2 <= int(exp) <= 4:
            b = self.parenthesize(base, 100)
            return "(" + "*".join([b] * int(exp)) + ")"   # a/b**2 must print a/(b*b), not a/b*b
        if exp == -1:
            return f"(1.0/{self.parenthesize(base, 100)})"
        return super()._print_Pow(expr)


def c_code(expr) -> str:
    """The C text of one expression."""
    return CPrinter().doprint(expr)


def per_sample_function(name, args, exprs, out="out") -> str:
    """static void name(const double *a1, ..., double *out) computing out[i] = exprs[i]."""
    mapping = {}
    for cname, symbols in args:
        for i, s in enumerate(symbols):
            mapping[s] = sp.Symbol(f"{cname}[{i}]", real=True)
    exprs = [sp.sympify(e).xreplace(mapping) for e in exprs]
    temps, reduced = sp.cse(exprs, symbols=sp.numbered_symbols("t"), order="none")
    sig = ", ".join(f"const double *{c}" for c, _ in args)
    lines = [f"static void {name}({sig}{', ' if sig else ''}double *{out}) {{"]
    lines += [f"  (void){c};" for c, _ in args]
    lines += [f"  const double {t} = {c_code(v)};" for t, v in temps]
    lines += [f"  {out}[{i}] = {c_code(e)};" for i, e in enumerate(reduced)]
    lines.append("}")
    return "\n".join(lines) + "\n"


def count_flops(exprs) -> int:
    """Arithmetic operations of the CSE'd expressions (a rough count: each op and function is one)."""
    temps, reduced = sp.cse(list(exprs), order="none")
    total = 0
    for e in [v for _, v in temps] + list(reduced):
        total += sp.count_ops(e, visual=False)
    return int(total)


def generate(system, prefix: str = "ms_", headers=()) -> tuple[str, dict]:
    """C source and metadata (sizes, names, slot layout) of a derived System. The source includes the C
    runtime (mechsym.codegen.c_runtime) and names its entry points `prefix`NAME through the MS_PREFIX macro;
    `headers` are local headers included before the runtime (an export's own)."""
    con, eqs = system.constraints, system.equations
    mech = con.mechanism
    nq, m, k, npar = con.n, len(con.rows), len(con.theta), len(con.params)
    entries, varying = jacobian_pattern(con.jacobian)
    pl = plan(m, entries) if m == nq else None
    q, qd, th, p = con.q, con.qd, con.theta, con.params
    point_exprs = [c for name in con.points for c in con.points[name]]
    from mechsym.kinematics import _point_symbols

    branch_exprs = [b.expr.xreplace(_point_symbols(con)) for b in mech.branches]
    src = [HEADER.format(name=mech.name), f"#define MS_PREFIX {prefix}", *(f'#include "{h}"' for h in headers),
           c_runtime.include("ms_prefix.h"), c_runtime.include("ms_prelude.h"), ""]
    src.append(f"#define NQ {nq}\n#define NROW {m}\n#define NTH {k}\n#define NPAR {npar}\n#define NJ {con.n_joint_rows}\n")
    angles = [q[3 * i + 2] for i in range(len(con.bodies))]
    sc = sp.symbols(f"sc0:{max(1, 2 * len(angles))}", real=True)
    trig = {}
    for i, a in enumerate(angles):
        trig[sp.sin(a)], trig[sp.cos(a)] = sc[2 * i], sc[2 * i + 1]
    src.append(f"#define NSC {len(sc)}\n")
    src.append("/* sines and cosines of the body angles, computed once per configuration */\n"
               "static void trig1(const double *q, double *sc) {\n  (void)q; (void)sc;\n"
               + "".join(f"  sc[{2 * i}] = sin(q[{3 * i + 2}]); sc[{2 * i + 1}] = cos(q[{3 * i + 2}]);\n"
                         for i in range(len(angles))) + "}\n")

    def with_trig(name, args, exprs):
        """name_s(args..., sc, out) from the expressions with shared trig, and name(args..., out)."""
        exprs = [sp.sympify(e).xreplace(trig) for e in exprs]
        src.append(per_sample_function(f"{name}_s", args + [("sc", sc)], exprs))
        sig = ", ".join(f"const double *{c}" for c, _ in args)
        call = ", ".join(c for c, _ in args)
        src.append(f"static void {name}({sig}, double *out) {{\n  double sc[NSC];\n  trig1(q, sc);\n"
                   f"  {name}_s({call}, sc, out);\n}}\n")

    with_trig("phi1", [("q", q), ("th", th), ("p", p)], con.rows)
    with_trig("gamma1", [("q", q), ("qd", qd), ("p", p)], con.gamma)
    with_trig("gamma3_1", [("q", q), ("qd", qd), ("qdd", con.qdd), ("p", p)], con.gamma3)
    with_trig("applied1", [("q", q), ("p", p)], eqs.applied)
    with_trig("apprate1", [("q", q), ("qd", qd), ("p", p)], [eqs.applied_rate])
    src.append(per_sample_function("mass1", [("p", p)], eqs.mass))
    with_trig("points1", [("q", q), ("p", p)], point_exprs or [0])
    with_trig("branch1", [("q", q), ("p", p)], branch_exprs or [1])
    src.append(f"#define NBRANCH {max(1, len(branch_exprs))}\n#define NBRANCH_USED {len(branch_exprs)}\n")
    with_trig("energy1", [("q", q), ("qd", qd), ("p", p)], [eqs.kinetic, eqs.potential])
    with_trig("jacd1", [("q", q), ("p", p)], [e for _, _, e in varying] or [0])
    dense = [f"  out[{i * nq + j}] = v[{n}];" for n, (i, j, _) in enumerate(varying)]
    dense += [f"  out[{i * nq + j}] = {v!r};" for (i, j), v in entries.items() if v is not None]
    src.append("static void jac1(const double *q, const double *p, double *out) {\n"
               f"  double v[{max(1, len(varying))}];\n  memset(out, 0, sizeof(double) * NROW * NQ);\n"
               "  jacd1(q, p, v);\n" + "\n".join(dense) + "\n}\n")
    meta = {"nq": nq, "nrow": m, "nth": k, "npar": npar, "n_points": len(point_exprs) // 2,
            "n_branches": len(branch_exprs), "square": pl is not None}
    if pl is not None:
        src.append(c_runtime.include("ms_dense.h"))
        src.append(emit_c(pl, "lu"))
        fill = [f"  a[{pl.slots[(i, j)]}] = v[{n}];" for n, (i, j, _) in enumerate(varying)]
        consts = [f"  a[{s}] = {v!r};" for s, v in pl.constants.items()]
        src.append("/* Phi_q at q (with its trig sc) into the factorisation slots */\n"
                   "static void jac_slots(const double *q, const double *sc, const double *p, double *a) {\n"
                   f"  double v[{max(1, len(varying))}];\n  jacd1_s(q, p, sc, v);\n" + "\n".join(consts + fill) + "\n}\n")
        lanes = c_lanes.lanes_source(con, eqs, pl, trig, sc, varying, branch_exprs, c_code)
        src.append(f"#define MS_HAVE_LANES {int(lanes is not None)}\n" + (lanes or ""))
        src.append(c_runtime.include("ms_kernels.h"))
        src.append(c_runtime.include("ms_blocks.h"))
        src.append(c_runtime.include("ms_dop853.h"))
        meta["lanes"] = lanes is not None
        meta["block"] = len(pl.block_rows)
        meta["nslot"] = len(pl.slots)
    src.append(c_runtime.include("ms_batch.h"))
    flops = {
        "phi": count_flops(con.rows), "jacobian": count_flops([e for _, _, e in varying]),
        "gamma": count_flops(con.gamma), "applied": count_flops(eqs.applied),
        "gamma3": count_flops(con.gamma3), "applied_rate": count_flops([eqs.applied_rate]),
    }
    if pl is not None:
        r = len(pl.block_rows)
        elim = sum(len(lw) + 2 * len(up) for lw, up in zip(pl.lower, pl.updates))
        solve = sum(2 * len(lw) + 2 * len(up) + 1 for lw, up in zip(pl.lower, pl.upper))
        flops["factor"] = elim + (2 * r**3) // 3
        flops["solve"] = solve + 2 * r * r
    meta["flops"] = flops
    return "\n".join(src) + "\n", meta


HEADER = """/* Generated by mechsym for the mechanism '{name}'. Plain C99; do not edit.
   Coordinates q: per moving body (x, y of the centre of mass, frame angle), in the fixed body's frame.
   Arrays are sample-major: sample s of a group of size G starts at s * G. */"""
