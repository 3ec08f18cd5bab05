"""The codegen spec of a derived planar mechanism: its constraints and equations as the named functions
every backend prints (mechsym.codegen.spec), and the sparse elimination of Phi_q with the run-time block's
static pivots chosen on a few configurations solved here (mechsym.codegen.sparse_plan takes the values)."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from mechsym.codegen import numpy_backend
from mechsym.codegen.backend import resolve
from mechsym.codegen.sparse_plan import jacobian_pattern, plan
from mechsym.codegen.spec import Function, SparseJacobian, Spec
from mechsym.core.budget import limit_memory
from mechsym.core.errors import InputError
from mechsym.planar.kinematics import _point_symbols, KinematicFunctions
from mechsym.planar.solver import Solver

__all__ = ["generate", "solved_jacobians"]


def generate(system) -> Spec:
    """The spec of a derived planar System (its constraints and equations)."""
    con, eqs = system.constraints, system.equations
    mech = con.mechanism
    q, qd, qdd, th, p = con.q, con.qd, con.qdd, con.theta, con.params
    entries, varying = jacobian_pattern(con.jacobian)
    square = len(con.rows) == con.n
    point_exprs = [c for name in con.points for c in con.points[name]]
    branch_exprs = [b.expr.xreplace(_point_symbols(con)) for b in mech.branches]
    fn = lambda name, inputs, outputs, doc: (name, Function(name, inputs, outputs, doc))
    functions = dict([
        fn("phi", [("q", q), ("th", th), ("p", p)], con.rows, "constraint residuals Phi(q, theta, p)"),
        fn("gamma", [("q", q), ("qd", qd), ("p", p)], con.gamma, "Phi_q q'' = -gamma(q, q', p)"),
        fn("gamma3", [("q", q), ("qd", qd), ("qdd", qdd), ("p", p)], lambda: con.gamma3,
           "Phi_q q''' = -gamma3(q, q', q'', p)"),
        fn("applied", [("q", q), ("p", p)], eqs.applied, "applied generalised forces Q(q, p)"),
        fn("applied_rate", [("q", q), ("qd", qd), ("p", p)], lambda: [eqs.applied_rate], "q' . (dQ/dq) q'"),
        fn("mass", [("p", p)], eqs.mass, "the diagonal of the mass matrix"),
        fn("points", [("q", q), ("p", p)], point_exprs, "every named point's x, y"),
        fn("branches", [("q", q), ("p", p)], branch_exprs, "the declared branch conditions"),
        fn("energy", [("q", q), ("qd", qd), ("p", p)], [eqs.kinetic, eqs.potential], "kinetic and potential energy"),
        fn("jac_values", [("q", q), ("p", p)], [e for _, _, e in varying], "the varying entries of Phi_q"),
    ])
    jacobian = SparseJacobian(len(con.rows), con.n, entries, tuple((i, j) for i, j, _ in varying), "jac_values",
                              plan(con.n, entries) if square else None)
    sizes = {"nq": con.n, "nrow": len(con.rows), "nth": len(th), "npar": len(p), "nj": con.n_joint_rows,
             "n_points": len(point_exprs) // 2, "n_branches": len(branch_exprs)}
    spec = Spec(mech.name, sizes, functions, jacobian, tuple(3 * i + 2 for i in range(len(con.bodies))))
    if square and jacobian.plan.block_rows:  # the run-time block's static order, chosen on solved samples
        samples = solved_jacobians(con, numpy_backend.render(spec))
        spec = replace(spec, jacobian=replace(jacobian, plan=plan(con.n, entries, samples)))
    return spec


def solved_jacobians(con, functions, count=4):
    """Phi_q (dense) at `count` solved configurations from the reference assembly on (default parameters,
    `functions`: a numpy rendering of the mechanism's spec): the values that choose the run-time block's
    static pivots. Empty where the mechanism does not assemble there (the block is then factorised by the
    dense LU alone)."""
    values = con.mechanism.resolve_parameters(None)
    try:  # under the default memory budget: the generated code is a function of the declaration alone,
        with limit_memory(None):  # never of a run's --max-memory (a refusal here would change the pivots)
            solver = Solver(KinematicFunctions(con, functions, resolve("numpy")),
                            np.array([values[name] for name in con.mechanism.parameters]))
            ref, _ = solver.reference()
            offsets = np.array([0.0, 0.7, 1.6, 2.9])[:count, None] * solver.step  # a few continuation steps apart
            return list(solver.sweep(ref + offsets).jac)
    except (InputError, np.linalg.LinAlgError):
        return []
