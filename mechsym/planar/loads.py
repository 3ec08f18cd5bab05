"""The loads of a derived mechanism that depend on the velocities or the time, and its force elements'
columns, as generated functions.

The loads of position alone (gravity, springs, a load written in positions) are the `applied` function of
the mechanism's own spec and enter every analysis there. The others (dampers, actuators of the time or a
rate, a load written in velocities) are Q(q, qd, t, p) here, a spec of two functions loaded on the
mechanism's backend (mechsym.codegen.callables): `motion` (the generalised forces) and `elements` (per
force element its measure, rate and force: the columns NAME.length, NAME.rate, NAME.force, or NAME.angle,
NAME.rate, NAME.torque for a torsional one; docs/force-elements.md).
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from mechsym.core.errors import InputError
from mechsym.core.forces import TIME


class LoadFunctions:
    """The generated `motion(q, qd, t, p)` and `elements(q, qd, t, p)` of a System."""

    def __init__(self, system):
        from mechsym.codegen import callables
        from mechsym.codegen.keys import cache_key, package_source
        from mechsym.codegen.spec import Function, Spec

        con, eqs = system.constraints, system.equations
        self.names, self.units = [], {}
        outputs = []
        for element, measure, rate, force in eqs.elements:
            for column, unit, expr in zip(element.columns, element.units, (measure, rate, force)):
                self.names.append(f"{element.name}.{column}")
                self.units[self.names[-1]] = unit
                outputs.append(expr)
        inputs = [("q", con.q), ("qd", con.qd), ("t", (TIME,)), ("p", con.params)]
        motion = list(eqs.motion) if eqs.moving_loads else []
        spec = Spec(f"{system.mechanism.name} loads", {}, {
            "motion": Function("motion", inputs, motion, "generalised forces of the loads of velocity or time"),
            "elements": Function("elements", inputs, outputs, "each force element's measure, rate and force")}, None)
        key = cache_key(system.mechanism, "loads", package_source())
        fns = callables.load(f"{system.mechanism.name}-loads", key, lambda: spec, system.backend)
        self._motion, self._elements = fns.motion, fns.elements
        self.timed = sorted(_timed(system))
        self.timed_forces = [f"{e.name}.{e.columns[2]}" for e, *_, force in eqs.elements if TIME in force.free_symbols]

    def motion(self, q, qd, t, p):
        """Q (N, n) of the loads of velocity or time at q, qd (N, n) and times t (N,); t None for an
        analysis without time (an InputError naming the loads of the time, if any)."""
        q = np.atleast_2d(q)
        if t is None:
            if self.timed:
                raise InputError(f"{', '.join(self.timed)} depend{'s' * (len(self.timed) == 1)} on the time, which "
                                 "an inverse or quasi-static analysis does not have; run it forward in time")
            t = np.zeros(len(q))
        t = np.broadcast_to(np.asarray(t, float), (len(q),))
        return np.asarray(self._motion(q.T, np.atleast_2d(qd).T, t[None], p)).reshape(-1, len(q)).T

    def columns(self, q, qd, t, p) -> dict:
        """The force elements' columns (name -> (N,)) at q, qd (N, n) and times t (N,); without times (None)
        the force of an element of the time is left out."""
        if not self.names:
            return {}
        q = np.atleast_2d(q)
        times = np.zeros(len(q)) if t is None else np.broadcast_to(np.asarray(t, float), (len(q),))
        values = np.asarray(self._elements(q.T, np.atleast_2d(qd).T, times[None], p))
        out = dict(zip(self.names, values.reshape(len(self.names), len(q))))
        for name in self.timed_forces if t is None else ():
            del out[name]
        return out


def _timed(system):
    """Names of the force elements and loads whose value depends on the time."""
    from mechsym.planar.model import describe_load, load_values

    mech = system.mechanism
    out = {f"{e.kind} '{e.name}'" for e, *_, force in system.equations.elements if TIME in force.free_symbols}
    out |= {describe_load(load) for load in mech.loads
            if any(TIME in sp.sympify(e).free_symbols for e in load_values(load))}
    return out


def moving(system):
    """The LoadFunctions of a System whose loads depend on the velocities or the time, else None."""
    return system.loads if system.equations.moving_loads else None
