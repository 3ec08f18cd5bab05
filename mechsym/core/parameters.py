"""The parameters of a declaration, one protocol for the planar Mechanism, the FloatingBody and the spatial
Tree: declared by name with a default, a unit and their sign rule (`Declaration.parameter`); gravity a
direction (the declaration's DOWN: -y in the plane, -z in 3-D) times a magnitude, the parameter g = 9.81
m/s^2 unless `gravity_down` names another or `no_gravity` removes it; a set's overrides applied and
checked (`apply_overrides`); a derived system's parameters in use (`ParametersInUse`). Nothing here
needs sympy at import: a sweep worker's warm start validates its sets with `apply_overrides` before
anything symbolic is loaded."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from mechsym.core.errors import InputError

# Units whose quantities are positive unless a declaration says otherwise: lengths, masses, inertias and
# densities (per length, area and volume).
POSITIVE_UNITS = ("m", "kg", "kg m^2", "kg/m", "kg/m^2", "kg/m^3")


@dataclass(frozen=True)
class Parameter:
    """A named symbol with a default numeric value and a unit."""

    symbol: object  # a sympy Symbol
    default: float
    unit: str = ""
    doc: str = ""
    positive: bool = False
    nonnegative: bool = False

    @property
    def name(self) -> str:
        """The parameter's name (its symbol's)."""
        return self.symbol.name


class Declaration:
    """The parameter-and-gravity protocol of a declaration. A class using it sets DOWN (the unit vector of
    gravity in its world frame) and calls `_init_parameters` when built; it then has `parameters` (name ->
    Parameter, in declaration order), `gravity` (the vector, DOWN times the magnitude) and
    `gravity_magnitude` (the parameter's symbol, or 0)."""

    DOWN: tuple = ()

    def _init_parameters(self):
        """No parameters but the default gravity g."""
        self.parameters, self._problems, self._default_gravity = {}, [], None
        self.gravity_down()
        self._default_gravity = "g"

    def parameter(self, name: str, default: float, unit: str = "", doc: str = "", positive=None, nonnegative=False):
        """Declare a parameter; returns its sympy symbol. Lengths, masses, inertias and densities are
        positive (POSITIVE_UNITS) unless `positive=False`; `nonnegative=True` admits zero but not a negative
        value (an added load, a friction coefficient). A name declared twice is a problem of the
        declaration, reported by its check with every other."""
        import sympy as sp

        if name in self.parameters:
            hint = (" (it is the default gravity: set it with gravity_down(), or drop it with no_gravity())"
                    if name == self._default_gravity else "")
            self._problems.append(f"parameter '{name}' declared twice{hint}")
        if positive is None:
            positive = unit in POSITIVE_UNITS
        sym = sp.Symbol(name, real=True)
        self.parameters[name] = Parameter(sym, float(default), unit, doc, bool(positive), bool(nonnegative))
        return sym

    def gravity_down(self, name: str = "g", value: float = 9.81):
        """Gravity of magnitude `name` (a parameter, default `value`) along DOWN, in place of the default
        g = 9.81; returns the symbol."""
        self._drop_default_gravity()
        g = self.parameter(name, value, "m/s^2", f"gravitational acceleration (along {_axis(self.DOWN)})")
        self._set_gravity(g)
        return g

    def no_gravity(self):
        """No gravity (a mechanism in a horizontal plane, a body in free space): drops the default g."""
        self._drop_default_gravity()
        self._set_gravity(0)

    def defaults(self) -> dict:
        """Parameter defaults, name -> value (SI)."""
        return {name: p.default for name, p in self.parameters.items()}

    def _set_gravity(self, magnitude):
        import sympy as sp

        self.gravity_magnitude = sp.sympify(magnitude)
        self.gravity = tuple(sp.Integer(d) * self.gravity_magnitude for d in self.DOWN)

    def derived(self, backend=None, contact_frames=()):
        """This declaration derived and bound to generated code on `backend`: what mechsym.derive returns for
        it. Only a tree has contact frames; a kind of declaration gives its system through `_system`."""
        if contact_frames:
            raise InputError(f"contact_frames name frames of a tree; a {type(self).__name__} has none")
        return self._system(backend)

    def _system(self, backend):
        raise NotImplementedError(f"{type(self).__name__} has no derived system")

    def _drop_default_gravity(self):
        if self._default_gravity is not None:
            del self.parameters[self._default_gravity]
            self._default_gravity = None


class ParametersInUse:
    """The parameters of a derived system (mechsym.core.derived.DerivedSystem) over its `declaration`: the
    names in declaration order, the vector of the values in use with overrides applied and checked
    (`params`: the declaration's `resolve_parameters` refuses an unknown name, a non-number, a non-finite or
    a non-positive length, mass or density with a one-line error naming the parameter), the overrides in
    use (`set_params`) and their vector (`param_values`). A kind adds its own checks or a cache of vectors
    by extending `vector` (the vector of exactly the overrides given, none in use)."""

    _in_use: dict = {}  # the overrides set_params gave (none: the defaults)

    @property
    def param_names(self) -> list:
        """The parameters' names, in the order of every parameter vector."""
        return list(self.declaration.parameters)

    def params(self, overrides=None) -> np.ndarray:
        """The parameter vector (declaration order): the values in use (set_params) with `overrides`
        (name -> value) on top, checked."""
        return self.vector({**self._in_use, **(overrides or {})})

    def vector(self, overrides) -> np.ndarray:
        """The parameter vector of the defaults with exactly `overrides` applied, checked."""
        values = self.declaration.resolve_parameters(overrides)
        return np.array([values[n] for n in self.declaration.parameters])

    def set_params(self, overrides=None):
        """Use the defaults with these overrides from now on (every entry point also takes params=); a set
        that fails its check changes nothing."""
        self.vector(dict(overrides or {}))
        self._in_use = dict(overrides or {})

    @property
    def param_values(self) -> np.ndarray:
        """The parameter vector in use (defaults, or what set_params gave)."""
        return self.params()


def _axis(down) -> str:
    """"-y" for (0, -1), "-z" for (0, 0, -1): the axis gravity points along."""
    (i, d), = [(i, d) for i, d in enumerate(down) if d]
    return f"{'-' if d < 0 else '+'}{'xyz'[i]}"


def default_problems(parameters: dict) -> list:
    """What is wrong with the defaults of `parameters` (name -> Parameter): non-finite, not positive or
    negative where the parameter does not admit it."""
    problems = []
    for name, p in parameters.items():
        if not math.isfinite(p.default):
            problems.append(f"parameter '{name}' has a non-finite default {p.default}")
        elif p.positive and p.default <= 0:
            problems.append(f"parameter '{name}' must be positive (default {p.default})")
        elif p.nonnegative and p.default < 0:
            problems.append(f"parameter '{name}' must not be negative (default {p.default})")
    return problems


def apply_overrides(parameters: dict, overrides=None) -> tuple[dict, list]:
    """Defaults of `parameters` (name -> Parameter) with `overrides` applied, and the problems found
    (unknown names, non-numbers, non-finite, non-positive or negative values where not allowed)."""
    values = {name: p.default for name, p in parameters.items()}
    problems = []
    for name, value in (overrides or {}).items():
        if name not in values:
            problems.append(f"unknown parameter '{name}' (known: {', '.join(sorted(values))})")
            continue
        try:
            value = float(value)
        except (TypeError, ValueError):
            problems.append(f"parameter '{name}' = {value!r} is not a number")
            continue
        values[name] = value
    for name, value in values.items():
        p = parameters[name]
        if not math.isfinite(value):
            problems.append(f"parameter '{name}' = {value} is not finite")
        elif p.positive and value <= 0:
            problems.append(f"parameter '{name}' = {value} must be positive")
        elif getattr(p, "nonnegative", False) and value < 0:
            problems.append(f"parameter '{name}' = {value} must not be negative")
    return values, problems


def params_text(data: dict) -> str:
    """`mechsym params` without --json, for a planar mechanism and a spatial tree alike: the JSON's content
    (`data`: model, parameters, units, bodies, coordinates; a tree's speeds and frames) as lines to read."""
    lines = [f"model {data['model']}", "parameters:"]
    width = max((len(n) for n in data["parameters"]), default=0)
    lines += [f"  {n:<{width}} = {v:.10g} {data['units'].get(n) or ''}".rstrip() for n, v in data["parameters"].items()]
    lines.append("bodies:")
    for name, b in data["bodies"].items():
        com = ", ".join(f"{c:.6g}" for c in b["com"])
        if isinstance(b["inertia"], list):  # a 3-D body: the inertia matrix about the centre of mass, body axes
            inertia = "(" + ", ".join(f"{b['inertia'][i][j]:.6g}" for i, j in
                                      ((0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2))) + ") kg m^2 (ixx, iyy, izz, ixy, ixz, iyz)"
        else:
            inertia = f"{b['inertia']:.6g} kg m^2"
        joint = (f", joint {b['joint']} ({b['joint_type']}) to {b['parent'] or 'the world'}" if b.get("joint")
                 else "")
        lines.append(f"  {name}: mass {b['mass']:.6g} kg, inertia {inertia}, centre of mass ({com}) m{joint}")
    lines.append("coordinates:")
    lines += [f"  {c['name']} ({c['unit']}) at joint {c['joint']}, force {c['force']}" if isinstance(c, dict)
              else f"  {c}" for c in data["coordinates"]]
    for key in ("speeds", "frames"):
        if key in data:
            lines.append(f"{key}: " + ", ".join(data[key]))
    return "\n".join(lines)
