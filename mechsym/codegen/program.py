"""Straight-line programs with exact forward-mode derivatives, described as a codegen spec
(mechsym.codegen.spec) that the C printer (cached, loaded in-process) and the numpy printer render.

A `Program` is a chain of small sympy assignments over a state vector; each carries its derivatives
with respect to the state, so a long computation (a contact law on a moving body) gets its exact
Jacobian without differentiating one large expression. `load(name, key, make_program, backend)` gives
its outputs and Jacobian as functions vectorised over states, from its spec through
mechsym.codegen.callables: compiled C through the C backend's cache (mechsym.codegen.c_backend), or numpy
where asked or when no compiler exists.
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from mechsym.codegen.spec import Function, SparseJacobian, Spec

__all__ = ["Program", "load", "LoadedProgram"]

class Program:
    """A straight-line program of small sympy assignments over the state, carried with its forward-mode
    derivatives: each assignment t = f(a, b, ...) gets dt/dy = sum_a (df/da) da/dy, every df/da a small
    symbolic derivative held in its own temporary. That is the exact Jacobian of a long computation (a
    contact law on a moving body) without differentiating one large expression, which takes sympy
    minutes. Parameters are symbols whose values are supplied at run time."""

    def __init__(self, state):
        self.state = tuple(state)
        self.params = {}                  # name -> symbol, in the order of the run-time parameter vector
        self.values = []                  # (temporary, expression)
        self.derivatives = []             # (temporary, expression) of the derivatives
        self.grad = {s: {i: sp.Integer(1)} for i, s in enumerate(self.state)}  # symbol -> {state index: d}
        self.outputs = ()

    def param(self, name):
        """The symbol of run-time parameter `name` (declared on first use)."""
        if name not in self.params:
            self.params[name] = sp.Dummy(name, real=True)
        return self.params[name]

    def let(self, expr):
        """A temporary holding `expr` (numbers and symbols come back as they are)."""
        expr = sp.sympify(expr)
        if expr.is_Atom:
            return expr
        grad = {}
        for a in sorted(expr.free_symbols, key=sp.default_sort_key):  # (a set: its order follows the hash seed)
            da = self.grad.get(a)
            if da:
                d = expr.diff(a)
                if d != 0:
                    for i, g in da.items():
                        grad[i] = grad.get(i, 0) + d * g
        return self._assign(sp.Symbol(f"t{len(self.values)}", real=True), expr, grad)

    def vector(self, exprs):
        """A column of intermediate symbols, one per expression (each a `let`)."""
        return sp.Matrix([self.let(e) for e in exprs])

    def norm(self, squared):
        """sqrt(squared), with the derivative taken as zero where squared = 0: exact wherever the norm
        multiplies a vector of that same norm (a slip direction, the quaternion stabilisation)."""
        sq = self.let(squared)
        s = sp.Symbol(f"t{len(self.values)}", real=True)
        half_inverse = sp.Piecewise((1 / (2 * s), s > 0), (0, True))
        return self._assign(s, sp.sqrt(sq), {i: half_inverse * g for i, g in self.grad.get(sq, {}).items()})

    def _assign(self, symbol, expr, grad):
        self.values.append((symbol, expr))
        held = {}
        for i, g in sorted(grad.items()):  # temporaries numbered in state order, the same in every process
            g = sp.sympify(g)
            if g == 0:
                continue
            if not g.is_Atom:
                d = sp.Symbol(f"d{len(self.derivatives)}", real=True)
                self.derivatives.append((d, g))
                g = d
            held[i] = g
        self.grad[symbol] = held
        return symbol

    def output(self, exprs):
        """Declare the program's outputs (the rates of its state), each a `let`."""
        self.outputs = tuple(self.let(e) for e in exprs)

    def jacobian(self):
        """(row, column, expression) of the non-zero entries of d outputs / d state."""
        return [(i, j, g) for i, o in enumerate(self.outputs) for j, g in sorted(self.grad.get(o, {}).items())]

    def spec(self, name="program"):
        """The codegen spec of the program (mechsym.codegen.spec): the function `rhs` (the outputs, over the
        temporaries), the function `jac_values` (the non-zero entries of d outputs / d state, over the
        temporaries and their derivatives) and the sparse Jacobian they fill; inputs y (the state) and p
        (the run-time parameters, in the order of `params`)."""
        inputs = [("y", self.state), ("p", tuple(self.params.values()))]
        entries = self.jacobian()
        n, m = len(self.state), len(self.outputs)
        functions = {"rhs": Function("rhs", inputs, self.outputs, "the rates", self.values),
                     "jac_values": Function("jac_values", inputs, [g for _, _, g in entries],
                                            "the non-zero entries of d rates / d state",
                                            self.values + self.derivatives)}
        jac = SparseJacobian(m, n, {(i, j): None for i, j, _ in entries}, tuple((i, j) for i, j, _ in entries),
                             "jac_values", None)
        return Spec(name, {"n": n, "m": m, "npar": len(self.params)}, functions, jac)

    def c_source(self) -> str:
        """C99 of the spec (mechsym.codegen.c_source.render_straight): ms3_rhs(ns, y, p, out) and
        ms3_jac(ns, y, p, out) over ns states (y sample-major, ns x n; outputs ns x m; the Jacobian
        row-major, ns x m x n)."""
        from mechsym.codegen.c_source import render_straight

        return render_straight(self.spec())

    def numpy_functions(self):
        """(rhs, jac) in numpy, vectorised over states (n, ...) -> (m, ...) and (m, n, ...): the numpy
        printer's rendering of the spec."""
        from mechsym.codegen import numpy_backend

        loaded = LoadedProgram(numpy_backend.render(self.spec()), self.params)
        return loaded.rates, loaded.jacobians

def load(name, key, make_program, backend=None):
    """The functions of the Program `make_program()` (called only when nothing is cached), loaded from its
    spec by mechsym.codegen.callables: compiled C from the cache entry NAME-KEY (`key` from
    mechsym.codegen.keys.cache_key of everything the program depends on), or the numpy rendering for backend "numpy"
    or, with a warning, when no compiler exists. A `LoadedProgram`."""
    from mechsym.codegen import callables

    made = []

    def make_spec():
        made.append(make_program())
        return made[-1].spec(name)

    fns = callables.load(name, key, make_spec, backend)
    names = fns.meta["parameters"] if fns.backend == "c" else tuple(made[-1].params)
    return LoadedProgram(fns, names)

class LoadedProgram:
    """rates(y, p) (m, ...) and jacobians(y, p) (m, n, ...) of a Program over states y (n, ...), and
    single(p) for an integrator's one-state calls: a front of the callables of its spec (`rhs`, `jac`) on
    either backend."""

    def __init__(self, functions, param_names):
        self.functions, self.param_names = functions, tuple(param_names)
        self.backend = functions.backend

    def rates(self, y, p):
        """The outputs at states y (n,) or (n, ...) and parameters p, state axis first."""
        with np.errstate(all="ignore"):           # (numpy evaluates every branch of a Piecewise)
            return self.functions.rhs(np.asarray(y, float), p)

    def jacobians(self, y, p):
        """d outputs / d state at states y: (m, n) or (m, n, ...)."""
        with np.errstate(all="ignore"):
            return np.moveaxis(self.functions.jac(np.asarray(y, float), p), (-2, -1), (0, 1))

    def single(self, p):
        """(fun(t, y), jac(t, y)) for one state at a time with fixed parameters (an integrator's calls); on C
        straight through the entry points, with the parameters' address fixed."""
        if self.backend != "c":
            return (lambda t, y: self.rates(y, p)), (lambda t, y: self.jacobians(y, p))
        p = np.ascontiguousarray(p, float)
        rhs, jac = self.functions.address_function("rhs"), self.functions.address_function("jac")
        m, n = self.functions.meta["jacobian"]["rows"], self.functions.meta["jacobian"]["cols"]
        address = p.ctypes.data

        def fun(t, y, p=p):                           # (p: kept alive with the function)
            y = np.ascontiguousarray(y, float)
            out = np.empty(m)
            rhs(1, y.ctypes.data, address, out.ctypes.data)
            return out

        def jacobian(t, y, p=p):
            y = np.ascontiguousarray(y, float)
            out = np.empty((m, n))
            jac(1, y.ctypes.data, address, out.ctypes.data)
            return out

        return fun, jacobian
