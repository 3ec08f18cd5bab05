"""Track profiles y = f(x) in the fixed frame, with exact first and second derivatives, for wheels rolling on them.

A `Track` evaluates f, f' and f'' on arrays. It comes from

* a sympy expression in x (`Track.from_expr`; derivatives by sympy, evaluated by mechsym.codegen's numpy printer),
* sampled points in a CSV file with columns x, y (`Track.from_csv`; a cubic smoothing spline, C2, so that
  the curvature is continuous; the track exists only over the sampled x range),
* a Python callable that returns (f, f', f'') for an array of x (`Track.from_callable`),
* a profile by name from a table of them (`load_track(name, shipped)`: mechanisms/tracks.py holds the
  UGV's).

Geometry of a wheel of radius r touching the track at x (section 8 of the chapter, Eq. 38):

    slope angle      beta = atan f'(x),  t = (cos beta, sin beta),  n = (-sin beta, cos beta)
    curvature        kappa = f'' / (1 + f'^2)^(3/2)   (positive where the track is concave, a valley)
    wheel centre     W(x) = (x, f) + r n = (x - r sin beta, f + r cos beta)      (the offset curve)
    its derivative   W'(x) = (1 - r kappa) (1, f')

so the offset curve is regular (and its x coordinate increases with x) exactly where r kappa < 1: where the
concave curvature reaches 1/r the wheel would touch the track at two points and cannot follow it
(`check_curvature` raises, naming the x). The arc length of the track is s(x) = integral of sqrt(1 + f'^2);
a wheel rolling without slip turns by theta(x) = beta(x) - s(x)/r (absolute, counter-clockwise), since
d theta/dx = -|W'(x)| / r.
"""
from __future__ import annotations

import functools
import math
import os
import re

import numpy as np
import sympy as sp

from mechsym.codegen import VectorFunction
from mechsym.core.errors import InputError

X = sp.Symbol("x", real=True)


@functools.lru_cache(maxsize=None)
def _gauss(order):
    return np.polynomial.legendre.leggauss(order)


# what a track expression may use: x, numbers, + - * / ** (or ^), these functions and constants; each
# function has derivatives of every order that numpy evaluates (a step such as Heaviside has not)
FUNCTIONS = {name: getattr(sp, name) for name in
             ("sin", "cos", "tan", "exp", "log", "sqrt", "sinh", "cosh", "tanh", "asin", "acos", "atan")}
CONSTANTS = {"x": X, "pi": sp.pi, "E": sp.E}
MAX_LENGTH, MAX_NODES, MAX_DEPTH = 2000, 1000, 200


def parse_expression(text: str) -> sp.Expr:
    """A track expression in x, parsed by an allow-list (never eval of arbitrary names): numbers, x, pi,
    E, + - * / ** ^ and the functions of FUNCTIONS, within MAX_LENGTH characters, MAX_NODES operations
    and MAX_DEPTH levels of nesting. Anything else is an InputError naming it."""
    import ast

    source = str(text).strip()
    if not source:
        raise InputError("track expression is empty")
    if len(source) > MAX_LENGTH:
        raise InputError(f"track expression is too long ({len(source)} characters, at most {MAX_LENGTH}); "
                         "give a long profile as a CSV file of points")
    try:
        tree = ast.parse(source.replace("^", "**"), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise InputError(f"track expression '{source}' does not parse: {getattr(exc, 'msg', exc)}") from None
    ops = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
           ast.Div: lambda a, b: a / b, ast.Pow: lambda a, b: a**b}
    count = [0]

    def build(node, depth):
        count[0] += 1
        if count[0] > MAX_NODES or depth > MAX_DEPTH:
            raise InputError(f"track expression '{source[:60]}...' is too large (more than {MAX_NODES} operations "
                             f"or {MAX_DEPTH} levels of nesting); give a long profile as a CSV file of points")
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            return sp.Float(node.value) if isinstance(node.value, float) else sp.Integer(node.value)
        if isinstance(node, ast.Name):
            if node.id not in CONSTANTS:
                raise InputError(f"track expression '{source}' uses '{node.id}', which is not allowed "
                                 f"(allowed: {', '.join(CONSTANTS)} and the functions {', '.join(FUNCTIONS)})")
            return CONSTANTS[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in ops:
            return ops[type(node.op)](build(node.left, depth + 1), build(node.right, depth + 1))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            value = build(node.operand, depth + 1)
            return -value if isinstance(node.op, ast.USub) else value
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
            name = node.func.id
            if name not in FUNCTIONS:
                hint = " (a step has no second derivative: use a smooth one, e.g. (1 + tanh((x - 4)/0.05))/2)" \
                    if name in ("Heaviside", "Piecewise", "Abs", "abs", "Min", "Max", "sign") else ""
                raise InputError(f"track expression '{source}' uses the function '{name}', which is not allowed "
                                 f"(allowed: {', '.join(FUNCTIONS)}){hint}")
            if len(node.args) != 1:
                raise InputError(f"track expression '{source}': {name} takes one argument, got {len(node.args)}")
            return FUNCTIONS[name](build(node.args[0], depth + 1))
        what = f"'{ast.unparse(node)[:60]}'" if not isinstance(node, ast.Constant) else repr(node.value)
        raise InputError(f"track expression '{source}': {what} is not allowed (numbers, x, pi, E, + - * / ^ and "
                         f"the functions {', '.join(FUNCTIONS)})")

    try:
        return build(tree.body, 0)
    except RecursionError:
        raise InputError(f"track expression '{source[:60]}...' is nested too deeply") from None


class Track:
    """A profile y = f(x) with exact derivatives. `func(x)` returns (f, f', f'') arrays shaped like x."""

    def __init__(self, name, func, domain=(-math.inf, math.inf), description=""):
        lo, hi = (float(domain[0]), float(domain[1]))
        if not lo < hi:
            raise InputError(f"track '{name}': empty domain [{lo}, {hi}]")
        self.name, self._func, self.domain, self.description = str(name), func, (lo, hi), description

    def __repr__(self):
        return f"Track({self.name!r}, domain={self.domain})"

    # -- constructors -------------------------------------------------------------------------------
    @classmethod
    def from_expr(cls, expr, name=None, domain=(-math.inf, math.inf), description=""):
        """A profile from a sympy expression (or a string) in the symbol x."""
        text = str(expr)
        if isinstance(expr, str):
            expr = parse_expression(expr)
        expr = sp.sympify(expr)
        expr = expr.subs({s: X for s in expr.free_symbols if s.name == "x"})
        stray = sorted(str(s) for s in expr.free_symbols if s != X)
        if stray:
            raise InputError(f"track expression '{text}' uses symbols other than x: {', '.join(stray)}")
        d1 = sp.diff(expr, X)
        d2 = sp.diff(d1, X)
        f = VectorFunction([(X,)], [expr, d1, d2])

        def func(x):
            x = np.asarray(x, float)
            with np.errstate(all="ignore"):
                return tuple(np.broadcast_to(np.asarray(v, float), x.shape) for v in f.outputs((x,)))

        track = cls(name or text, func, domain, description or f"y = {sp.sstr(expr)}")
        track.expr = expr
        return track

    @classmethod
    def from_callable(cls, fn, name="callable", domain=(-math.inf, math.inf), description=""):
        """A profile from fn(x) -> (f, f', f'') on arrays (all three must be returned)."""
        if not callable(fn):
            raise InputError(f"track '{name}': {fn!r} is not callable")

        def func(x):
            x = np.asarray(x, float)
            try:
                out = fn(x)
                if not isinstance(out, (tuple, list)):
                    raise TypeError(f"got {type(out).__name__}")
                f, d1, d2 = out
            except (TypeError, ValueError) as exc:
                raise InputError(f"track '{name}': the callable must return (f, f', f'') for an array of x ({exc})") from None
            return tuple(np.broadcast_to(np.asarray(v, float), x.shape) for v in (f, d1, d2))

        return cls(name, func, domain, description or "callable with exact derivatives")

    @classmethod
    def from_csv(cls, path, lam=None, name=None):
        """A profile from sampled points (CSV with a header naming columns x and y), fitted with a cubic
        smoothing spline (scipy's make_smoothing_spline; `lam` its smoothing parameter, chosen by generalised
        cross-validation when None). The track exists over [min x, max x] only."""
        from scipy.interpolate import make_smoothing_spline

        if not os.path.isfile(path):
            raise InputError(f"track file '{path}' does not exist")
        import warnings

        try:
            with open(path) as fh:
                header = [h.strip().lower() for h in fh.readline().strip().split(",")]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # "input contained no data": reported below
                data = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
        except (ValueError, OSError, UnicodeDecodeError) as exc:
            raise InputError(f"track file '{path}' is malformed: {exc}") from None
        if data.size == 0:
            raise InputError(f"track file '{path}' has no data rows (expected a header row, then x,y per row)")
        if "x" not in header or "y" not in header or data.shape[1] != len(header):
            raise InputError(f"track file '{path}': expected a header row with columns x and y, got {header}")
        x, y = data[:, header.index("x")], data[:, header.index("y")]
        bad = ~(np.isfinite(x) & np.isfinite(y))
        if bad.any():
            i = int(np.argmax(bad))
            raise InputError(f"track file '{path}': row {i + 2} is not finite (x={x[i]}, y={y[i]})")
        if len(x) < 5:
            raise InputError(f"track file '{path}': at least 5 points are needed, got {len(x)}")
        if np.any(np.diff(x) <= 0):  # a track is a function of x, sampled in order: anything else is a mistake
            i = int(np.argmax(np.diff(x) <= 0)) + 1
            raise InputError(f"track file '{path}': row {i + 2} has x = {x[i]:.6g} after x = {x[i - 1]:.6g}; "
                             "x must increase from row to row")
        if lam is not None and not (np.isfinite(lam) and lam >= 0):
            raise InputError(f"track smoothing lam = {lam} must be a non-negative number")
        spline = make_smoothing_spline(x, y, lam=lam)
        d1, d2 = spline.derivative(1), spline.derivative(2)

        def func(xs):
            xs = np.asarray(xs, float)
            return spline(xs), d1(xs), d2(xs)

        track = cls(name or os.path.basename(path), func, (x[0], x[-1]),
                    f"smoothing spline through {len(x)} points of {path}")
        track.points = (x, y)
        return track

    # -- evaluation ---------------------------------------------------------------------------------
    def eval(self, x, what="x"):
        """(f, f', f'') at x, checked: inside the domain and finite, else InputError naming the x."""
        x = np.asarray(x, float)
        if not np.all(np.isfinite(x)):
            raise InputError(f"track '{self.name}': {what} contains a non-finite value")
        lo, hi = self.domain
        if x.size and (x.min() < lo - 1e-12 or x.max() > hi + 1e-12):
            v = x.min() if x.min() < lo - 1e-12 else x.max()
            raise InputError(f"track '{self.name}' is defined for {lo:g} <= x <= {hi:g}; {what} = {v:.6g} is outside")
        f, d1, d2 = self._func(x)
        ok = np.isfinite(f) & np.isfinite(d1) & np.isfinite(d2)
        if not np.all(ok):
            i = np.flatnonzero(~ok.ravel())[0]
            raise InputError(f"track '{self.name}' is not finite at x = {x.ravel()[i]:.6g} "
                             f"(f = {f.ravel()[i]}, f' = {d1.ravel()[i]}, f'' = {d2.ravel()[i]})")
        return f, d1, d2

    def __call__(self, x):
        return self.eval(x)[0]

    def slope(self, x):
        """The slope angle beta = atan f'(x)."""
        return np.arctan(self.eval(x)[1])

    def curvature(self, x):
        """Signed curvature f'' / (1 + f'^2)^(3/2): positive where concave (a valley)."""
        _, d1, d2 = self.eval(x)
        return d2 / (1 + d1 * d1) ** 1.5

    def check_curvature(self, r, x_lo, x_hi, step=None):
        """Raise InputError if the concave curvature reaches 1/r anywhere in [x_lo, x_hi] (checked on a grid
        of spacing `step`, default min(r/50, 2 mm), refined around the worst sample)."""
        lo, hi = max(x_lo, self.domain[0]), min(x_hi, self.domain[1])
        if not hi > lo:
            return
        step = step or min(r / 50.0, 0.002)
        n = int(math.ceil((hi - lo) / step)) + 1
        xs = np.linspace(lo, hi, n)
        kappa = self.curvature(xs)
        i = int(np.argmax(kappa))
        a, b = xs[max(i - 1, 0)], xs[min(i + 1, n - 1)]
        fine = np.linspace(a, b, 201)
        kf = self.curvature(fine)
        j = int(np.argmax(kf))
        if max(kf[j], kappa[i]) * r >= 1.0:
            x_bad, k_bad = (fine[j], kf[j]) if kf[j] >= kappa[i] else (xs[i], kappa[i])
            first = xs[np.argmax(kappa * r >= 1.0)] if np.any(kappa * r >= 1.0) else x_bad
            raise InputError(
                f"track '{self.name}': the concave curvature {k_bad:.4g} 1/m at x = {x_bad:.6g} exceeds 1/r = "
                f"{1 / r:.4g} 1/m (wheel radius r = {r:g} m; first at x = {first:.6g}): the wheel cannot follow it")

    def offset(self, x, r):
        """The wheel-centre curve: W(x) and W'(x) = (1 - r kappa)(1, f'), plus beta, for contact points x.

        Returns (wx, wy, dwx, dwy, beta)."""
        f, d1, d2 = self.eval(x)
        q = np.sqrt(1.0 + d1 * d1)
        beta = np.arctan(d1)
        wx = x - r * d1 / q
        wy = f + r / q
        scale = 1.0 - r * d2 / (q * q * q)
        return wx, wy, scale, scale * d1, beta

    def arc_length(self, x, order=8):
        """Arc length s(x) - s(x[0]) along the track, cumulative over the sorted or unsorted array x
        (Gauss-Legendre of `order` points on each interval between consecutive x)."""
        x = np.asarray(x, float).ravel()
        if len(x) < 2:
            return np.zeros_like(x)
        nodes, weights = _gauss(order)
        a, b = x[:-1], x[1:]
        mid, half = (a + b) / 2, (b - a) / 2
        pts = mid[:, None] + half[:, None] * nodes[None, :]
        _, d1, _ = self.eval(pts)
        ds = half * (np.sqrt(1 + d1 * d1) @ weights)
        return np.concatenate([[0.0], np.cumsum(ds)])

    def arc_length_from(self, x, x0=0.0, spacing=0.05, order=8):
        """Arc length from x0 to each x (any shape, signed): cumulative Gauss-Legendre on a grid of `spacing`
        through x0, plus Gauss-Legendre from the grid node below each x (smooth in x, exact to rounding for
        smooth tracks)."""
        x = np.asarray(x, float)
        lo, hi = min(float(np.min(x)), x0), max(float(np.max(x)), x0)
        n_lo, n_hi = int(math.floor((lo - x0) / spacing)), int(math.ceil((hi - x0) / spacing))
        grid = x0 + spacing * np.arange(n_lo, n_hi + 1)
        grid = np.clip(grid, *self.domain)
        s = self.arc_length(grid, order)
        s = s - s[-n_lo] if n_lo <= 0 else s  # zero at x0 (grid[-n_lo] == x0)
        i = np.clip(np.floor((x - x0) / spacing).astype(int) - n_lo, 0, len(grid) - 2)
        a = grid[i]
        nodes, weights = _gauss(order)
        half = (x - a) / 2
        pts = (a + half)[..., None] + half[..., None] * nodes
        _, d1, _ = self.eval(pts)
        return s[i] + half * (np.sqrt(1 + d1 * d1) @ weights)


def load_track(spec, shipped=None) -> Track:
    """A Track from a Track, a name of `shipped` (name -> factory returning a Track: a model's own
    profiles, e.g. mechanisms/tracks.py), a CSV path (*.csv), or an expression in x (e.g. '0.05*sin(x)')."""
    if isinstance(spec, Track):
        return spec
    spec = str(spec).strip()
    names = dict(shipped or {})
    if spec in names:
        return names[spec]()
    if spec.lower().endswith(".csv"):
        return Track.from_csv(spec)
    if not re.fullmatch(r"[A-Za-z_][\w-]*", spec) or spec in CONSTANTS:  # not a name: an expression
        expr = parse_expression(spec)
        if X in expr.free_symbols:
            return Track.from_expr(expr, spec)
        if expr.is_number and not expr.is_finite:
            raise InputError(f"track expression '{spec}' is not finite ({expr})")
        raise InputError(f"track expression '{spec}' does not depend on x")
    raise InputError(f"unknown track '{spec}' (shipped: {', '.join(names)}; a CSV file with columns x, y; "
                     "or an expression in x)")
