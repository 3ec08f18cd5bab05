"""The generic analyses of a derived mechanism, each a function of typed options returning a Table:

    table = inverse(system, InverseOptions(omega=[3.0], samples=90), {"density": 2.0})
    table = kinematics(system, KinematicsOptions(samples=36))
    table = forward(system, ForwardOptions(torque=0.2, t_end=0.5))

The options carry the command line's defaults (`mechsym inverse|kinematics|forward` builds them from its
parsed options) and their attributes have the command line's names. A model whose declaration does not
cover a command itself (PASIBOT switches builds between supports) answers it with a hook,
hook(options, params, backend) -> (table, System to draw with), which `analyse` calls instead.
"""
from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from mechsym.core.errors import InputError


@dataclass(frozen=True)
class InverseOptions:
    """Driving force and every reaction over one revolution: at the crank speeds `omega` (rad/s, one
    table block per speed) and acceleration `alpha`, or quasi-statically (no inertia, no omega column).
    `reactions`: a spatial loop's reactions that redundant constraints leave undetermined are left out
    ("determined") or given by the minimum-norm completion ("min-norm"; mechsym.spatial.loop_reactions)."""

    command: ClassVar[str] = "inverse"
    omega: list | None = None
    alpha: float = 0.0
    samples: int = 360
    theta0: float = 0.0
    quasi_static: bool = False
    reactions: str = "determined"


@dataclass(frozen=True)
class KinematicsOptions:
    """Link angles, centres of mass and points over one revolution; with `omega`, velocities and
    accelerations at that speed instead of the coefficients d/dtheta."""

    command: ClassVar[str] = "kinematics"
    samples: int = 360
    theta0: float = 0.0
    frame: str | None = None
    omega: float | None = None
    alpha: float = 0.0


@dataclass(frozen=True)
class ForwardOptions:
    """Motion under a constant driving `torque` from (theta0, omega0) to t_end, on the uniform grid of
    step dt (default t_end/1000); `all`: every body coordinate and point along the run."""

    command: ClassVar[str] = "forward"
    torque: float
    t_end: float
    theta0: float = 0.0
    omega0: float = 0.0
    dt: float | None = None
    rtol: float = 1e-9
    atol: float | None = None
    all: bool = False


OPTIONS = {cls.command: cls for cls in (InverseOptions, KinematicsOptions, ForwardOptions)}


def options(command: str, values: dict):
    """The typed options of the analysis `command` from `values` (name -> value, the rest defaults)."""
    if command not in OPTIONS:
        raise InputError(f"unknown analysis '{command}' (inverse, kinematics or forward)")
    cls = OPTIONS[command]
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(values) - names)
    if unknown:
        raise InputError(f"{command}: unknown option '{unknown[0]}' (options: {', '.join(sorted(names))})")
    missing = [f.name for f in dataclasses.fields(cls) if f.default is dataclasses.MISSING and f.name not in values]
    if missing:
        raise InputError(f"{command} needs {' and '.join(missing)}")
    return cls(**values)


def samples(opts) -> np.ndarray:
    """The driven coordinate over one revolution: theta0 + 2 pi k / samples."""
    return opts.theta0 + 2 * np.pi * np.arange(opts.samples) / opts.samples


def inverse(system, opts: InverseOptions, params=None):
    """The inverse analysis' Table (the driven coordinate, omega, the driving force, every reaction)."""
    params = dict(params or {})
    _check_memory(system, opts)
    theta = samples(opts)
    if opts.quasi_static:  # no inertia: the speed does not enter, and no omega column is written
        table = system.inverse(theta, 0.0, 0.0, params, inertia=False)
        del table.columns["omega"]
        return table
    if not opts.omega:
        raise InputError("inverse needs --omega (or --quasi-static)")
    return system.inverse(theta, opts.omega, opts.alpha, params)


def kinematics(system, opts: KinematicsOptions, params=None):
    """The kinematics Table: with one driven coordinate, the coefficients d/dtheta (or the rates at omega)."""
    params = dict(params or {})
    _check_memory(system, opts)
    one = len(system.coordinate_names) == 1  # coefficients d/dtheta exist for one driven coordinate
    return system.kinematics_table(samples(opts), params, rates=one or opts.omega is not None, omega=opts.omega,
                                   alpha=opts.alpha)


def forward(system, opts: ForwardOptions, params=None):
    """The forward run sampled on its uniform grid as a Table (t, the coordinate, omega; with `all`
    every body coordinate and point)."""
    params = dict(params or {})
    table = system.forward(opts.torque, opts.theta0, opts.omega0, opts.t_end, dt=opts.dt, rtol=opts.rtol,
                           atol=opts.atol, params=params, dense_output=False)  # the Table needs the grid only
    if opts.all:
        kin = system.kinematics_table(table[system.coordinate_names[0]], params)
        table.columns.update({k: v for k, v in kin.columns.items() if k not in table.columns})
        table.units.update(kin.units)
    return table


ANALYSES = {"inverse": inverse, "kinematics": kinematics, "forward": forward}


def analyse(opts, system, params=None, hook=None, backend=None):
    """(table, System to draw with) of the analysis `opts` names: the model's own `hook` where it has one
    (hook(options, params, backend) -> (table, drawn)), else the derived `system`'s analysis."""
    params = dict(params or {})
    loops = sys.modules.get("mechsym.spatial.loops")  # (not imported by a planar run: it loads sympy)
    if hook is None and loops is not None and isinstance(system, loops.LoopSystem):
        return loop_analysis(system, opts, params), system
    if hook is None:
        return ANALYSES[opts.command](system, opts, params), system
    if opts.command == "inverse" and not opts.quasi_static and not opts.omega:
        raise InputError("inverse needs --omega (or --quasi-static)")
    if opts.command == "inverse" and opts.quasi_static:  # a hook's quasi-static inverse: at omega 0
        opts = dataclasses.replace(opts, omega=[0.0], alpha=0.0)
    table, drawn = hook(opts, params, backend)
    if opts.command == "inverse" and opts.quasi_static:
        table.columns.pop("omega", None)
    if opts.command == "kinematics" and opts.omega is not None:
        from mechsym.planar.rates import coefficients_to_rates

        table = coefficients_to_rates(table, opts.omega, opts.alpha)
    return table, drawn


def loop_analysis(system, opts, params=None):
    """The analysis `opts` names of a spatial closed-loop mechanism (mechsym.spatial.loops.LoopSystem) with one
    driven coordinate, as a Table (mechsym.spatial.loop_tables): the same options and columns as the
    command line's."""
    from mechsym.spatial import loop_tables
    from mechsym.spatial.loop_kinematics import LoopSolver

    solver = LoopSolver(system, dict(params or {}))
    system.check_mobility(solver.close(), solver.scale)  # drives that do not match the mobility, named first
    loop_tables.one_drive(solver)
    if opts.command != "forward":   # per sample: q, its derivatives, A and its pseudo-inverse, the reactions
        from mechsym.core.budget import check_memory

        n, width = opts.samples, system.nrows + 1 + system.nv
        check_memory(f"{opts.command} of '{system.name}' at {n} samples", 8 * n * (4 * width * system.nv + 12 * width))
    if opts.command == "kinematics":
        if opts.frame is not None:
            raise InputError(f"mechanism '{system.name}': kinematics of a spatial mechanism is in the world frame, "
                             f"without --frame")
        return loop_tables.kinematics(solver, samples(opts), opts.omega, opts.alpha)
    if opts.command == "inverse":
        if not opts.quasi_static and not opts.omega:
            raise InputError("inverse needs --omega (or --quasi-static)")
        return loop_tables.inverse(solver, samples(opts), opts.omega or (), opts.alpha, opts.quasi_static,
                                  opts.reactions)
    return loop_tables.forward(solver, opts.torque, opts.theta0, opts.omega0, opts.t_end, opts.dt, opts.rtol,
                               opts.atol, opts.all)


def _check_memory(system, opts):
    """The memory of inverse or kinematics over `samples`, refused before the samples are made."""
    from mechsym.core.budget import check_memory
    from mechsym.planar.dynamics import inverse_memory
    from mechsym.planar.kinematics import sweep_memory

    name, n = system.mechanism.name, opts.samples
    if opts.command == "inverse":
        speeds = 1 if opts.quasi_static or not opts.omega else len(opts.omega)  # quasi-static: one, at rest
        check_memory(f"inverse of '{name}' at {n} samples x {speeds} speed{'s' * (speeds > 1)}",
                     inverse_memory(system, n, speeds))
    else:
        columns = 1 + len(system.constraints.q) + 2 * len(system.kin.point_names)
        check_memory(f"kinematics of '{name}' at {n} samples",
                     sweep_memory(len(system.constraints.q), n) + 16 * n * columns)
