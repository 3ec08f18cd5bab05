"""Parameter values with a set's overrides applied and checked, without sympy (a sweep worker's warm start
validates its sets with it before anything symbolic is loaded)."""
from __future__ import annotations

import math


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
