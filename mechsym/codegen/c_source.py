"""C99 source for one mechanism, printed from the same symbolic expressions as the numpy backend.

Per-sample functions (common subexpressions eliminated, printed with sympy's C printer) and batched
entry points that loop over samples inside C:

  ms_phi, ms_jac, ms_gamma, ms_gamma3, ms_applied, ms_applied_rate, ms_mass, ms_points, ms_branches,
  ms_energy    (evaluation)
  ms_factor, ms_solve
               the static sparse factorisation of Phi_q at many configurations, and its solves
  ms_track     one state of a mechanism with several coordinates: Newton, J = dq/dtheta, the
               acceleration offset a0 and the applied forces, for a simulation's right-hand side
  ms_track_rows
               ms_track, and the multipliers of chosen rows of Phi_q (reactions, coordinate forces) as linear
               functions of the accelerations: an analysis of one state in closed form (stick/slip, the
               reduced equations of motion)
  ms_walk      one state of a one-coordinate mechanism that ms_track cannot settle at once: the continuation
               to it from a solved state (halved steps, branch checked), then ms_track's outputs
  ms_kinematics
               one-coordinate kinematics by continuation + Newton, with exact q' and q'', per sample
  ms_inverse   kinematics by Newton, exact coefficients, and the reactions and driving force for three
               right-hand sides (per unit thetadd, per unit thetad^2, static), per sample: in blocks of
               samples solved independently from anchors reached by continuation (mechsym.codegen.c_lanes)
  ms_inverse_sets, ms_kinematics_sets, ms_forward_sets
               ms_inverse, ms_kinematics, ms_forward for many parameter sets (each with its own starting
               configuration, found in C) in one call; ms_mass_sets the mass diagonals of many sets
  ms_ode       the reduced one-coordinate ODE's right-hand side and its exact Jacobian along theta
  ms_forward   the reduced one-coordinate ODE integrated by DOP853 (scipy's coefficients and error control) with
               dense output on a uniform grid and located events

The long calls (ms_inverse, ms_inverse_sets, ms_ode, ms_forward, ms_factor, ms_solve) catch SIGINT for their duration: the
handler only raises a flag, which the loops poll at every sample or integration step, and the call
returns MS_INTERRUPTED (mechsym.codegen.constants.Status, distinct from every failure status) and restores the previous handler, so that Ctrl-C ends a long C loop at
once (the caller raises KeyboardInterrupt) instead of waiting for it to finish.

The model's part (sizes, per-sample functions, the elimination of mechsym.codegen.sparse_plan) is printed
here; the rest is the C runtime, real C files in mechsym/codegen/runtime/ that the source includes
(mechsym.codegen.c_runtime): ms_prefix.h (the MS_FN macro), ms_prelude.h (includes, SIGINT), ms_constants.h
(the numbers and status codes shared with Python, printed from mechsym.codegen.constants), ms_dense.h,
ms_newton.h (Newton, one continuation step), ms_continuation.h (the continuation, bridges), ms_kernels.h
(tracker, inverse, kinematics, ODE), ms_lanes.h and ms_blocks.h (the inverse batch in blocks of samples,
with the lane functions of mechsym.codegen.c_lanes), ms_dop853.h (forward), ms_sets.h (many parameter sets
in one call) and ms_batch.h. Entry points are written
MS_FN(name): ms_name in the C backend's library, MODEL_name in an export. Plain C99 with no Python
dependency, so it is also what `mechsym export` writes.
"""
from __future__ import annotations

import sympy as sp
from sympy.printing.c import C99CodePrinter

from mechsym.codegen import c_lanes, c_parts, c_runtime
from mechsym.codegen import spec as codegen_spec
from mechsym.codegen.sparse_plan import emit_c


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


_PRINTER = CPrinter()  # (one printer for every expression: making one costs more than printing most)


def c_code(expr) -> str:
    """The C text of one expression."""
    return _PRINTER.doprint(expr)


def _pointer_names(args) -> dict:
    """Each symbol of the argument groups -> the C array element that holds it (q[0], p[3], ...)."""
    return {s: sp.Symbol(f"{cname}[{i}]", real=True) for cname, symbols in args for i, s in enumerate(symbols)}


def per_sample_function(name, args, exprs, out="out") -> str:
    """static void name(const double *a1, ..., double *out) computing out[i] = exprs[i], with common
    subexpressions eliminated."""
    mapping = _pointer_names(args)
    temps, reduced = sp.cse([sp.sympify(e).xreplace(mapping) for e in exprs], symbols=sp.numbered_symbols("t"),
                            order="none")
    sig = ", ".join(f"const double *{c}" for c, _ in args)
    lines = [f"static void {name}({sig}{', ' if sig else ''}double *{out}) {{"]
    lines += [f"  (void){c};" for c, _ in args]
    lines += [f"  const double {t} = {c_code(e)};" for t, e in temps]
    lines += [f"  {out}[{i}] = {c_code(e)};" for i, e in enumerate(reduced)]
    lines.append("}")
    return "\n".join(lines) + "\n"


def render_functions(spec, names: dict) -> str:
    """The functions of a spec as static per-sample C functions `C_NAME(inputs..., out)` (common
    subexpressions eliminated), under the C names `names` (spec function -> the name a hand-written part of
    the C runtime calls, such as ms_contact.h's frame1, gen1, rate1)."""
    codegen_spec.check(spec)
    return "\n".join(per_sample_function(names[name], list(f.inputs), f.outputs) for name, f in spec.functions.items())


def render_straight(spec, prefix: str = "ms3_", headers=(), lanes=()) -> str:
    """C99 of a spec of straight-line functions (a Program's, a tree's, any other): for each function the
    batched entry point `void MS_FN(NAME)(int ns, inputs..., double *out)` over ns samples, named `prefix`NAME
    through the MS_PREFIX macro (mechsym/codegen/runtime/ms_prefix.h; an export passes its own prefix and
    `headers`, local headers included first). Input groups named in spec.SHARED ("p") are one vector shared
    by every sample, the others and `out` sample-major (ns x size); what depends on the shared groups alone
    is computed once per call, before the loop. A function with `solve` ends in the C runtime's Cholesky
    solve (ms_cholesky.h). A spec with a sparse Jacobian also gets `MS_FN(jac)`, writing it dense (row-major,
    rows x cols per sample) from its pattern.

    The functions named in `lanes` (the cache's build of a tree: spec.lanes) evaluate their samples in
    blocks of MS_LANES, structure of arrays, each function's code one loop over the lanes that the compiler
    vectorises (mechsym.codegen.c_lanes.LaneBody; ms_lanes.h): the samples past the last full block, and a
    block with an angle beyond MS_TRIG_MAX, go through the per-sample loop, which one state always takes.
    The lanes' code is printed in parts (c_parts) whatever the spec's size; it costs the compiler about
    twice what the per-sample loop costs, hence a choice of functions."""
    codegen_spec.check(spec)
    printed = {}  # (temporary, input groups) -> its C text: a program's temporaries serve several functions

    def text(mapping, key, e):
        if key is None:
            return c_code(sp.sympify(e).xreplace(mapping))
        if key not in printed:
            printed[key] = c_code(sp.sympify(e).xreplace(mapping))
        return printed[key]

    solves = any(f.solve for f in spec.functions.values())
    lines = [*(f'#include "{h}"' for h in headers), f"/* generated by mechsym from the codegen spec '{spec.name}' */",
             f"#define MS_PREFIX {prefix}", c_runtime.include("ms_prefix.h"), "#include <math.h>",
             "#include <string.h>", *([c_runtime.include("ms_cholesky.h")] if solves else []),
             *(["#include <stdlib.h>", c_runtime.include("ms_lanes.h")] if set(lanes) & set(spec.functions) else []),
             ""]
    split = c_parts.plan(spec)
    # the lanes' code is printed in parts whatever the spec's size: one loop over the lanes of a whole function
    # costs the compiler more than in proportion to its length, and the parts are shared between functions
    lane_split = (split or c_parts.plan(spec, whole=0)) if set(lanes) & set(spec.functions) else None
    parts = {}  # (return type, parameters, body) -> name of a part (c_parts): functions that need the same part share it

    def part(ret, params, body):
        return parts.setdefault((ret, params, body), f"_{'lanes' if ret == 'int' else 'part'}{len(parts)}")

    def entry(name, f, size, finish=None):
        """The batched entry point of f's temporaries and outputs, stored straight into the sample's
        output, or (with `finish`) into a local array `o` that `finish(at)` turns into the sample's result
        at address `at`; a function with many temporaries calls its parts (c_parts) for each sample. With
        lanes, full blocks of samples first (`lane_block`)."""
        mapping = {s: c for s, c in _pointer_names(f.inputs).items() if s != c}  # (a tree's are named q[i] already)
        head, body = f.shared_temporaries()
        args = [(g, g if g in codegen_spec.SHARED else f"{g}_", len(symbols)) for g, symbols in f.inputs]
        in_parts = split is not None and f.name in split.split
        used = set() if in_parts else {str(s).split("[")[0] for e in [e for _, e in body] + list(f.outputs)
                                       for s in sp.sympify(e).xreplace(mapping).free_symbols}
        sig = "".join(f", const double *restrict {a}" for _, a, _ in args)
        at = f"out_ + (size_t){size} * k"
        out = [f"void MS_FN({name})(int ns{sig}, double *restrict out_) {{",
               "  " + " ".join(f"(void){a};" for _, a, _ in args)]
        groups = tuple(g for g, _ in f.inputs)
        out += [f"  const double {t} = {text(mapping, (t, groups), e)};" for t, e in head]
        calls, results, named = [], mapping, {}
        m = f.solve * f.solve or len(f.outputs)   # (a solve's matrix in o, its right-hand side in r)
        stored = list(enumerate(f.outputs))   # (index, expression) of the outputs printed one by one
        copied = []
        if in_parts:
            calls, results = _part_calls(f, split, mapping, groups, text, part)
            named = {t: (t, e) for t, e in body if (t, e) in split.slot}
            out.append(f"  double ms_s[{max(1, split.nshared)}] = {{0}};")
            out += [f"  ms_s[{split.shared[key]}] = {key[0]};" for key in c_parts.keys(f)[0]]
            # outputs held in the workspace: copied by a table, not a line each
            copied = [(i, split.slot[named[e]]) for i, e in enumerate(f.outputs[:m]) if e in named]
            if copied:
                out[2:2] = [f"  static const int ms_to[{len(copied)}] = {{{', '.join(str(i) for i, _ in copied)}}};",
                            f"  static const int ms_from[{len(copied)}] = {{{', '.join(str(j) for _, j in copied)}}};"]
                stored = [(i, e) for i, e in stored if i >= m or e not in named]
            out.append(f"  double ms_w[{max(1, split.workspace)}];")
        sample = [f"    const double *{g} = {a} + (size_t){n} * k;" for g, a, n in args
                  if a != g and (g in used or in_parts)]
        sample.append(f"    double o[{max(1, m)}];" + (f" double r[{f.solve}];" if f.solve else "") if finish else
                      f"    double *o = {at};" + ("" if f.outputs else " (void)o;"))
        if in_parts:
            sample += [f"    {c}" for c in calls]
            if copied:
                sample.append(f"    for (int i = 0; i < {len(copied)}; i++) o[ms_to[i]] = ms_w[ms_from[i]];")
        else:
            sample += [f"    const double {t} = {text(mapping, (t, groups), e)};" for t, e in body]
        sample += [f"    {'o' if i < m else 'r'}[{i if i < m else i - m}] = {text(results, None, e)};" for i, e in stored]
        sample += [f"    {line}" for line in (finish(at) if finish else [])]
        if name not in lanes or (finish and not f.solve):
            return "\n".join(out + ["  for (int k = 0; k < ns; k++) {"] + sample + ["  }", "}", ""])
        block = lane_block(f, args, used, mapping, groups, m, size)
        return "\n".join(out + block + ["    for (; k < end; k++) {"] + [f"  {x}" for x in sample] +
                         ["    }", "  }", "  free(ms_b);", "}", ""])

    def lane_block(f, args, used, mapping, groups, m, size):
        """The start of a lanes entry point's loop over samples: a full block of MS_LANES samples gathered
        into the block arrays (named as the groups, g[V(i)]), evaluated by the lane functions of the
        function's parts (`lane_split`), or for a small function by one loop over the lanes, and scattered
        into `out`; a short or wide block leaves `end` for the per-sample loop that follows."""
        in_parts = f.name in lane_split.split
        per_lane = [g for g, a, _ in args if a != g] + ["ms_w"]
        stored, copied, results = list(enumerate(f.outputs)), [], mapping
        lines = []
        if in_parts:
            calls, results = _part_calls(f, lane_split, mapping, groups, text, part, per_lane)
            named = {t: (t, e) for t, e in f.shared_temporaries()[1] if (t, e) in lane_split.slot}
            copied = [(i, lane_split.slot[named[e]]) for i, e in enumerate(f.outputs[:m]) if e in named]
            stored = [(i, e) for i, e in stored if i >= m or e not in named]
            lines.append(f"  double ms_sl[{max(1, lane_split.nshared)}] = {{0}};")
            lines += [f"  ms_sl[{lane_split.shared[key]}] = {key[0]};" for key in c_parts.keys(f)[0]]
            if copied:
                lines += [f"  static const int ms_lto[{len(copied)}] = {{{', '.join(str(i) for i, _ in copied)}}};",
                          f"  static const int ms_lfrom[{len(copied)}] = {{{', '.join(str(j) for _, j in copied)}}};"]
        per_sample = [(g, a, n) for g, a, n in args if a != g]
        rows = f.solve + m if f.solve else size
        work = lane_split.workspace if in_parts else 0
        total = sum(n for _, _, n in per_sample) + rows + work
        lines += [f"  double *ms_b = ns >= MS_LANES ? malloc(sizeof(double) * MS_LANES * {max(1, total)}) : NULL;",
                  "  for (int k = 0; k < ns;) {", "    int end = ns;", "    if (ms_b && k + MS_LANES <= ns) {"]
        offset = 0
        for g, a, n in per_sample:
            lines.append(f"      double *restrict {g} = ms_b + MS_LANES * {offset}; (void){g};")
            if g in used or in_parts:
                lines.append(f"      for (int l = 0; l < MS_LANES; ++l) for (int i = 0; i < {n}; ++i) "
                             f"{g}[i * MS_LANES + l] = {a}[(size_t){n} * (k + l) + i];")
            offset += n
        lines.append(f"      double *restrict ms_o = ms_b + MS_LANES * {offset};")
        if in_parts:
            lines += [f"      double *restrict ms_w = ms_b + MS_LANES * {offset + rows};",
                      "      const double *ms_s = ms_sl;"]
        lines.append("      int wide = 0;")
        if in_parts:
            lines += [f"      {c}" for c in calls]
            if copied:
                lines.append(f"      for (int i = 0; i < {len(copied)}; i++) for (int l = 0; l < MS_LANES; ++l) "
                             "ms_o[ms_lto[i] * MS_LANES + l] = ms_w[ms_lfrom[i] * MS_LANES + l];")
        body = c_lanes.LaneBody(per_lane, c_code)
        if not in_parts:
            for t, e in f.shared_temporaries()[1]:
                body.let(t, sp.sympify(e).xreplace(mapping), text(mapping, (t, groups), e))
        for i, e in stored:
            body.store(f"ms_o[V({i})]", sp.sympify(e).xreplace(results))
        if body.lines:
            lines += body.loop("      ")
        lines.append("      if (!wide) {")
        if f.solve:
            n = f.solve
            lines += ["        for (int l = 0; l < MS_LANES; ++l) {",
                      f"          double o[{m}], r[{n}];",
                      f"          for (int i = 0; i < {m}; ++i) o[i] = ms_o[V(i)];",
                      f"          for (int i = 0; i < {n}; ++i) r[i] = ms_o[V({m} + i)];",
                      f"          chol_solve({n}, o, r, out_ + (size_t){n} * (k + l));", "        }"]
        else:
            lines.append(f"        for (int l = 0; l < MS_LANES; ++l) for (int i = 0; i < {size}; ++i) "
                         f"out_[(size_t){size} * (k + l) + i] = ms_o[i * MS_LANES + l];")
        lines += ["        k += MS_LANES;", "        continue;", "      }", "      end = k + MS_LANES;", "    }"]
        return lines

    entries = []
    for f in spec.functions.values():
        n = f.solve
        entries.append(entry(f.name, f, f.size, (lambda at, n=n: [f"chol_solve({n}, o, r, {at});"]) if n else None))
    jac = spec.jacobian
    if jac is not None:
        def scatter(at):
            fill = [f"d[{i * jac.cols + j}] = o[{n}];" for n, (i, j) in enumerate(jac.varying)]
            fill += [f"d[{i * jac.cols + j}] = {v!r};" for (i, j), v in jac.entries.items() if v is not None]
            return [f"double *d = {at};", f"memset(d, 0, sizeof(double) * {jac.rows * jac.cols});", *fill]

        entries.append(entry("jac", spec.functions[jac.values], jac.rows * jac.cols, scatter))
    lines += [f"{ret} MS_FN({name})({params});" for (ret, params, _), name in parts.items()] + ([""] if parts else [])
    for (ret, params, body), name in parts.items():
        lines += [c_parts.UNIT, f"{ret} MS_FN({name})({params}) {{", body, "}", ""]
    if parts or c_parts.body_size(spec) > c_parts.UNITS_SIZE:
        entries = [f"{c_parts.UNIT}\n{e}" for e in entries]
    return "\n".join(lines + entries)


def _part_calls(f, split, mapping, groups, text, part, per_lane=None):
    """The calls of f's parts for one sample (c_parts.plan `split`), registering each part's text with
    `part(return type, parameters, body)`, and the mapping under which f's outputs read the workspace. With
    `per_lane` (the arrays indexed by lane), the calls of the parts' lane functions for a block instead,
    each returning whether an angle was too wide for the lanes' sines and cosines (c_lanes.LaneBody)."""
    head, body, named = c_parts.keys(f)
    head = set(head)
    ranges = {}
    for key in body:                           # each part's temporaries in the function's order
        ranges.setdefault(split.part[key], []).append(key)
    params = ", ".join([f"const double *restrict {g}" for g in groups] +
                       ["const double *restrict ms_s", "double *restrict ms_w"])
    names = ", ".join([*groups, "ms_s", "ms_w"])
    calls = []
    for _, keys in sorted(ranges.items()):
        own = set(keys)
        reads = sorted({named[s] for key in keys for s in split.free[key] if s in named} - own, key=lambda k: str(k[0]))
        where = lambda key: f"{'ms_s' if key in head else 'ms_w'}[{split.shared[key] if key in head else split.slot[key]}]"
        if per_lane is None:
            lines = [f"  (void){g};" for g in [*groups, "ms_s", "ms_w"]]
            lines += [f"  const double {key[0]} = {where(key)};" for key in reads]
            for t, e in keys:
                lines.append(f"  const double {t} = {text(mapping, (t, groups), e)};")
                if (t, e) in split.slot:
                    lines.append(f"  ms_w[{split.slot[(t, e)]}] = {t};")
            calls.append(f"MS_FN({part('void', params, chr(10).join(lines))})({names});")
            continue
        lane = c_lanes.LaneBody(per_lane, c_code)
        lane.lines += [f"const double {key[0]} = {c_lanes.on_lane(where(key), per_lane)};" for key in reads]
        for t, e in keys:
            lane.let(t, sp.sympify(e).xreplace(mapping), text(mapping, (t, groups), e))
            if (t, e) in split.slot:
                lane.lines.append(f"ms_w[V({split.slot[(t, e)]})] = {t};")
        lines = [f"  (void){g};" for g in [*groups, "ms_s", "ms_w"]] + ["  int wide = 0;", *lane.loop(), "  return wide;"]
        calls.append(f"wide |= MS_FN({part('int', params, chr(10).join(lines))})({names});")
    results = dict(mapping)
    results.update({key[0]: sp.Symbol(f"ms_w[{split.slot[key]}]", real=True) for key in body if key in split.slot})
    return calls, results


def count_flops(exprs) -> int:
    """Arithmetic operations of the CSE'd expressions (a rough count: each op and function is one)."""
    temps, reduced = sp.cse(list(exprs), order="none")
    total = 0
    for e in [v for _, v in temps] + list(reduced):
        total += sp.count_ops(e, visual=False)
    return int(total)


# the static C function each spec function is printed as (the names the C runtime calls), and the value
# printed for a function without outputs (C has no empty arrays; an absent branch condition holds)
C_NAMES = {"phi": "phi1", "gamma": "gamma1", "gamma3": "gamma3_1", "applied": "applied1", "applied_rate": "apprate1",
           "mass": "mass1", "points": "points1", "branches": "branch1", "energy": "energy1", "jac_values": "jacd1"}
PLACEHOLDER = {"branches": 1}


def generate(system, prefix: str = "ms_", headers=()) -> tuple[str, dict]:
    """C source and metadata of a derived System: `render` of its spec (mechsym.codegen.spec)."""
    return render(system.spec, prefix, headers)


def render(spec, prefix: str = "ms_", headers=()) -> tuple[str, dict]:
    """C source and metadata (sizes, slot layout, flop counts) of a codegen Spec. The source includes the C
    runtime (mechsym.codegen.c_runtime) and names its entry points `prefix`NAME through the MS_PREFIX macro;
    `headers` are local headers included before the runtime (an export's own)."""
    codegen_spec.check(spec)
    z, fns, jacobian = spec.sizes, spec.functions, spec.jacobian
    nq, m = z["nq"], z["nrow"]
    pl, varying = jacobian.plan, jacobian.varying
    q = dict(fns["phi"].inputs)["q"]
    src = [HEADER.format(name=spec.name), f"#define MS_PREFIX {prefix}", *(f'#include "{h}"' for h in headers),
           c_runtime.include("ms_prefix.h"), c_runtime.include("ms_prelude.h"),
           c_runtime.include("ms_constants.h"), ""]
    src.append(f"#define NQ {nq}\n#define NROW {m}\n#define NTH {z['nth']}\n#define NPAR {z['npar']}\n#define NJ {z['nj']}\n")
    sc = sp.symbols(f"sc0:{max(1, 2 * len(spec.angles))}", real=True)
    trig = {}
    for i, k in enumerate(spec.angles):
        trig[sp.sin(q[k])], trig[sp.cos(q[k])] = sc[2 * i], sc[2 * i + 1]
    src.append(f"#define NSC {len(sc)}\n")
    src.append("/* sines and cosines of the body angles, computed once per configuration */\n"
               "static void trig1(const double *q, double *sc) {\n  (void)q; (void)sc;\n"
               + "".join(f"  sc[{2 * i}] = sin(q[{k}]); sc[{2 * i + 1}] = cos(q[{k}]);\n"
                         for i, k in enumerate(spec.angles)) + "}\n")

    def with_trig(name, args, exprs):
        """name_s(args..., sc, out) from the expressions with shared trig, and name(args..., out)."""
        exprs = [sp.sympify(e).xreplace(trig) for e in exprs]
        src.append(per_sample_function(f"{name}_s", args + [("sc", sc)], exprs))
        sig = ", ".join(f"const double *{c}" for c, _ in args)
        call = ", ".join(c for c, _ in args)
        src.append(f"static void {name}({sig}, double *out) {{\n  double sc[NSC];\n  trig1(q, sc);\n"
                   f"  {name}_s({call}, sc, out);\n}}\n")

    for f in fns.values():
        outputs = list(f.outputs) or [PLACEHOLDER.get(f.name, 0)]
        if "q" in dict(f.inputs):
            with_trig(C_NAMES[f.name], list(f.inputs), outputs)
        else:
            src.append(per_sample_function(C_NAMES[f.name], list(f.inputs), outputs))
        if f.name == "branches":
            src.append(f"#define NBRANCH {max(1, len(f.outputs))}\n#define NBRANCH_USED {len(f.outputs)}\n")
    dense = [f"  out[{i * nq + j}] = v[{n}];" for n, (i, j) in enumerate(varying)]
    dense += [f"  out[{i * nq + j}] = {v!r};" for (i, j), v in jacobian.entries.items() if v is not None]
    src.append("static void jac1(const double *q, const double *p, double *out) {\n"
               f"  double v[{max(1, len(varying))}];\n  memset(out, 0, sizeof(double) * NROW * NQ);\n"
               "  jacd1(q, p, v);\n" + "\n".join(dense) + "\n}\n")
    meta = {"nq": nq, "nrow": m, "nth": z["nth"], "npar": z["npar"], "n_points": z["n_points"],
            "n_branches": z["n_branches"], "square": pl is not None}
    if pl is not None:
        src.append(c_runtime.include("ms_dense.h"))
        src.append(emit_c(pl, "lu"))
        fill = [f"  a[{pl.slots[(i, j)]}] = v[{n}];" for n, (i, j) in enumerate(varying)]
        consts = [f"  a[{s}] = {v!r};" for s, v in pl.constants.items()]
        src.append("/* Phi_q at q (with its trig sc) into the factorisation slots */\n"
                   "static void jac_slots(const double *q, const double *sc, const double *p, double *a) {\n"
                   f"  double v[{max(1, len(varying))}];\n  jacd1_s(q, p, sc, v);\n" + "\n".join(consts + fill) + "\n}\n")
        lanes = c_lanes.lanes_source(spec, trig, sc, c_code)
        src.append(f"#define MS_HAVE_LANES {int(lanes is not None)}\n" + (lanes or ""))
        src.append(c_runtime.include("ms_newton.h"))
        src.append(c_runtime.include("ms_continuation.h"))
        src.append(c_runtime.include("ms_kernels.h"))
        src.append(c_runtime.include("ms_blocks.h"))
        src.append(c_runtime.include("ms_dop853.h"))
        src.append(c_runtime.include("ms_sets.h"))
        meta["lanes"] = lanes is not None
        meta["block"] = len(pl.block_rows)
        meta["nslot"] = len(pl.slots) + len(pl.block.fill if pl.block else ())
    src.append(c_runtime.include("ms_batch.h"))
    flops = {name: count_flops(fns[f].outputs) for name, f in (
        ("phi", "phi"), ("jacobian", "jac_values"), ("gamma", "gamma"), ("applied", "applied"), ("gamma3", "gamma3"),
        ("applied_rate", "applied_rate"))}
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
