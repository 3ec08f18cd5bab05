"""Compiled forward dynamics of a spatial closed-loop mechanism: one C entry point computing the constrained
accelerations at each state from the generated terms of the codegen spec and the runtime's solve.

    fns = compile_forward(name, key, make_spec, nv, nrows)   # make_spec() -> a Spec with the function "terms"
    fns.forward(q, v, tau, p)                                 # (nv, N...), as any compiled spec function

The spec's function `terms` (inputs q, v, a, p) gives H (nv x nv, row-major), bias (nv), J (nrows x nv,
row-major) and gamma (nrows) at a state; the library adds `MS_FN(forward)(ns, q, v, tau, p, out)`, which
evaluates them and solves the constrained equations by runtime/ms_loop_forward.h (redundant rows allowed), so
that one call from Python (mechsym.codegen.c_extension) does the whole state. The source is the spec's
straight-line C (c_source.render_straight) and that entry point, cached by content like every other library
(c_backend.build_source).
"""
from __future__ import annotations

from mechsym.codegen import c_backend, c_runtime
from mechsym.codegen.callables import PREFIX, CFunctions, layout

__all__ = ["compile_forward"]


def _forward_source(nq, nv, nrows) -> str:
    """MS_FN(forward): the terms of each state, then its accelerations."""
    size = nv * nv + nv + nrows * nv + nrows
    work = nv * (2 * nv + nrows + 3) + 2 * nrows
    return "\n".join([
        "#include <math.h>",
        c_runtime.include("ms_cholesky.h"),
        c_runtime.include("ms_loop_forward.h"),
        "/* the constrained accelerations dv/dt (nv per state) under the generalised forces tau (ms_loop_forward.h) */",
        "void MS_FN(forward)(int ns, const double *restrict q_, const double *restrict v_, "
        "const double *restrict tau_, const double *restrict p, double *restrict out_) {",
        f"  double terms[{size}], work[{work}];",
        "  for (int k = 0; k < ns; k++) {",
        f"    const double *q = q_ + (size_t){nq} * k, *v = v_ + (size_t){nv} * k, *tau = tau_ + (size_t){nv} * k;",
        "    MS_FN(terms)(1, q, v, tau, p, terms);",
        f"    loop_accelerations({nv}, {nrows}, terms, tau, work, out_ + (size_t){nv} * k);",
        "  }",
        "}",
        ""])


def compile_forward(name, key, make_spec, nv, nrows) -> CFunctions:
    """The spec `make_spec()` (run only when nothing is cached) compiled with the entry point `forward`
    through the cache; `key` must change with everything make_spec reads."""
    from mechsym.codegen.c_source import render_straight

    def generate():
        spec = make_spec()
        meta = layout(spec)
        terms = meta["functions"]["terms"]
        meta["functions"]["forward"] = {"inputs": terms["inputs"], "size": nv, "flops": terms["flops"]}
        nq = terms["inputs"][0][1]
        return render_straight(spec, PREFIX) + _forward_source(nq, nv, nrows), meta

    return CFunctions(c_backend.build_source(name, key, generate))
