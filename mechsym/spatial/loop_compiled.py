"""The compiled forward dynamics of a spatial closed-loop mechanism (mechsym.spatial.loops.LoopSystem): the
constrained accelerations at a state in one generated C call (mechsym.codegen.c_loops; the solve in
mechsym/codegen/runtime/ms_loop_forward.h), the route mechsym.spatial.loop_dynamics.accelerations takes on
the C backend.

The library's spec is one function `terms` of one derivation: the tree's H and bias (the force elements' forces
in it: mechsym.spatial.system.dynamics_terms) and the closure rows' J and gamma (mechsym.spatial.loops
.loop_spec_items), so a state costs one pass of straight-line code and a QR of J^T with its rank (redundant
rows allowed), no Python between. The call goes through the extension entry (mechsym.codegen.c_extension:
arrays read in place, one state or N); an input it cannot read as it is, or a non-finite result, goes to the
Python route, which converts the input or names the fault.
"""
from __future__ import annotations

from mechsym.codegen import c_extension
from mechsym.codegen.keys import cache_key, package_source

__all__ = ["forward_entry"]


def _spec(system):
    """The codegen spec of the function `terms`: H (row-major), bias, J (row-major), gamma."""
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
    jac_gamma = closure[system.nrows:]
    functions = shared_program([("terms", inputs, H + bias + jac_gamma, "H, bias, J (row-major) and gamma", 0)],
                               d.s.assignments, "x", d.s.pieces)
    return Spec(f"loop forward {system.name}", {"nq": system.nq, "nv": system.nv,
                                                "npar": len(system.param_names)}, functions, None)


def _compiled(solver, python):
    """The extension's entry of the generated forward at the solver's parameters, or `python` where the
    extension cannot be built."""
    import ctypes

    from mechsym.codegen.c_loops import compile_forward

    s = solver.s
    key = cache_key(s.declaration, package_source(), "loop forward")
    lib = compile_forward(f"loop-forward-{s.name}", key, lambda: _spec(s), s.nv, s.nrows)
    address = ctypes.cast(lib.address_function("forward"), ctypes.c_void_p).value   # (its library stays loaded)
    entry = c_extension.entry(address, (s.nq, s.nv, s.nv), (s.nv,), solver.p, python, finite_out=True)
    return python if entry is None else entry


def forward_entry(solver, python):
    """accelerations(q, v, tau) of the solver's mechanism at its parameters: the compiled entry on the C backend,
    else `python` (q, v, tau) -> dv/dt."""
    return solver.s.backend.route(compiled=_compiled, python=lambda _, py: py)(solver, python)
