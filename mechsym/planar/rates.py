"""Velocity and acceleration coefficients (or rates) of body coordinates and points along solved kinematics.

For one driven coordinate theta, every body coordinate c(theta) has the exact coefficients c' = dc/dtheta
and c'' = d2c/dtheta2 from the kinematic solution (q' and q''). A point P fixed on a body with centre of
mass r and angle phi moves with P - r turning with the body, so

    P'  = r'  + phi' J (P - r),      P'' = r'' + phi'' J (P - r) - phi'^2 (P - r),      J (u, v) = (-v, u);

at a speed omega and acceleration alpha the rates are c' omega and c'' omega^2 + c' alpha.
"""
from __future__ import annotations

import numpy as np

from mechsym.core.errors import InputError


def rate_columns(system, kin, cols, omega=None, alpha=0.0):
    """(columns, units) of the coefficients "NAME'" and "NAME''" of every body coordinate and point column
    in `cols` (a kinematics table's), or of the velocities and accelerations at `omega`, `alpha`."""
    if kin.ddq is None:
        raise InputError("velocity and acceleration coefficients are written for one driven coordinate; "
                         f"'{system.mechanism.name}' has {kin.dq.shape[2]}")
    if omega is not None and not (np.isfinite(omega) and np.isfinite(alpha)):
        raise InputError(f"omega and alpha must be finite, got {omega}, {alpha}")
    d1, d2 = kin.dq[:, :, 0], kin.ddq
    first, second = {}, {}
    index = {b: i for i, b in enumerate(system.constraints.bodies)}
    for b, i in index.items():
        for j, c in enumerate(("x", "y", "angle")):
            first[f"{b}.{c}"], second[f"{b}.{c}"] = d1[:, 3 * i + j], d2[:, 3 * i + j]
    zero = np.zeros(len(kin.q))
    mech = system.mechanism
    for name in system.kin.point_names:
        body = next(b for b in mech.bodies if name in mech.bodies[b].points)
        if body not in index:  # a point of the fixed body does not move
            first[f"{name}.x"] = first[f"{name}.y"] = second[f"{name}.x"] = second[f"{name}.y"] = zero
            continue
        i = index[body]
        rx, ry = cols[f"{name}.x"] - kin.q[:, 3 * i], cols[f"{name}.y"] - kin.q[:, 3 * i + 1]
        w1, w2 = d1[:, 3 * i + 2], d2[:, 3 * i + 2]
        first[f"{name}.x"] = d1[:, 3 * i] - w1 * ry
        first[f"{name}.y"] = d1[:, 3 * i + 1] + w1 * rx
        second[f"{name}.x"] = d2[:, 3 * i] - w2 * ry - w1**2 * rx
        second[f"{name}.y"] = d2[:, 3 * i + 1] + w2 * rx - w1**2 * ry
    unit = lambda name: "rad" if name.endswith(".angle") else "m"
    out, units = {}, {}
    if omega is None:
        for name in first:
            out[f"{name}'"], out[f"{name}''"] = first[name], second[name]
            units[f"{name}'"], units[f"{name}''"] = f"{unit(name)}/rad", f"{unit(name)}/rad^2"
        return out, units
    return _rates(first, second, omega, alpha)


def _rates(first, second, omega, alpha):
    out, units = {}, {}
    for name in first:
        owner, _, c = name.rpartition(".")
        v, a = first[name] * omega, second[name] * omega**2 + first[name] * alpha
        vname, aname = (f"{owner}.omega", f"{owner}.alpha") if c == "angle" else (f"{owner}.v{c}", f"{owner}.a{c}")
        out[vname], out[aname] = v, a
        units[vname], units[aname] = ("rad/s", "rad/s^2") if c == "angle" else ("m/s", "m/s^2")
    return out, units


def coefficients_to_rates(table, omega, alpha=0.0):
    """A kinematics table with coefficient columns NAME' and NAME'' (a model's own, e.g. PASIBOT's) with
    those replaced by the velocities and accelerations at `omega`, `alpha` (names as `rate_columns`)."""
    if not (np.isfinite(omega) and np.isfinite(alpha)):
        raise InputError(f"omega and alpha must be finite, got {omega}, {alpha}")
    first = {n[:-1]: table[n] for n in table.names if n.endswith("'") and not n.endswith("''")}
    second = {n: table[n + "''"] for n in first if n + "''" in table}
    first = {n: v for n, v in first.items() if n in second}
    rates, units = _rates(first, second, omega, alpha)
    for n in first:
        del table.columns[n + "'"], table.columns[n + "''"]
        table.units.pop(n + "'", None)
        table.units.pop(n + "''", None)
    table.columns.update(rates)
    table.units.update(units)
    return table
