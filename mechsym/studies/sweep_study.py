"""A sweep's study of a generic analysis (`TableStudy`: an analysis' table reduced to figures) and its
batched routes: the sets of a task evaluated together where the analysis allows it (the inverse analysis of
sets sharing their geometry in one solve, the sets of their own geometry in one compiled call of
ms_inverse_sets; on the C backend the kinematics and forward analyses of every set in one compiled call,
mechsym.studies.sweep_sets), each set assembled from the reference assembly and continued to its start
in C (`CompiledStart`). A set that the compiled call flags goes through the set-by-set route, which names
its failure."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from mechsym.core.errors import InputError
from mechsym.studies.analyses import ANALYSES, analyse
from mechsym.studies.figures import (Reduction, figure_names, geometry_parameters, inverse_figures, reduce_table,
                                     speeds_apart)
from mechsym.studies.sweep_sets import (SET_ERRORS, compiled_inverse, compiled_start, forward_batch, kinematics_batch,
                                        set_vectors)

SHARED_MIN = 16  # sets sharing one geometry share its kinematic solution from this many on; fewer go, each
#                  with its own compiled run, into one call (fourbar, 360 samples: a shared solution costs
#                  about 20 ms, a set's own run in C, its start included, about 0.2 ms)


@dataclass(frozen=True)
class TableStudy:
    """A generic analysis (mechsym.studies.analyses: InverseOptions, KinematicsOptions or
    ForwardOptions), its table reduced to figures (`reductions`: Reduction or 'FUNC:COLUMN'). `hook`: a
    model's own computation of the analysis, hook(options, params, backend) -> (table, drawn), where its
    declaration does not cover it (PASIBOT switches builds between supports); None for any other model.

        TableStudy(InverseOptions(omega=[3.0], samples=90), ["absmax:torque", "rms:torque"])
    """

    analysis: object
    reductions: tuple = ()
    hook: object = field(default=None, repr=False)  # the model's (which a streamed sweep's key names)

    def __post_init__(self):
        if getattr(self.analysis, "command", None) not in ANALYSES:
            raise InputError(f"not the options of an analysis: {self.analysis!r} (InverseOptions, KinematicsOptions "
                             "or ForwardOptions)")
        reds = tuple(r if isinstance(r, Reduction) else Reduction.parse(r) for r in self.reductions)
        if not reds:
            raise InputError("give at least one reduction FUNC:COLUMN (e.g. absmax:torque)")
        object.__setattr__(self, "reductions", reds)

    @property
    def command(self) -> str:
        """The analysis' name: inverse, kinematics or forward."""
        return self.analysis.command

    @property
    def speeds(self) -> tuple:
        """The speeds reported apart (an inverse at two or more speeds: one figure per speed), or ()."""
        return speeds_apart(self.analysis.omega, self.analysis.quasi_static) if self.command == "inverse" else ()

    @property
    def names(self) -> list:
        """The figures' column names, in order: FUNC_COLUMN, or FUNC_COLUMN@omega=W per speed."""
        return figure_names(self.reductions, self.speeds)

    def __call__(self, system, params) -> dict:
        table, _ = analyse(self.analysis, system, dict(params), self.hook, system.backend)
        return reduce_table(table, self.reductions, self.speeds)

    def batch(self, system, sets):
        """The outcome of every set at once (its figures, its exception, or None for a set left to `__call__`),
        or None where only set by set works: a one-coordinate mechanism without force elements and without a
        model's own hook, its analysis by the batched routes below. Agrees with `__call__` to round-off.

        inverse: linear in the inertial parameters, so sets that share their geometry (the values of every
        parameter in the constraints) share one kinematic solution and one factorisation of Phi_q, and
        their three right-hand sides each (per unit thetadd, per unit thetad^2, static loads) are solved
        together, 3 x (sets) columns in one transposed solve (in C on the C backend). On the C backend the
        sets of smaller groups (fewer than SHARED_MIN sets: a geometry of their own, say) all go into one call
        of the compiled ms_inverse_sets, each set with its own kinematics. kinematics and forward, on the C
        backend: every set's kinematics, or its forward run (its own step control), in one compiled call
        (mechsym.codegen.c_sets), each set assembled and continued to its start in C."""
        if (self.hook is not None or len(system.coordinate_names) != 1
                or getattr(system, "loads", None) is not None):   # force elements: their columns and loads of velocity, set by set
            return None
        args = self.analysis
        if self.command == "inverse":
            if not (args.quasi_static or args.omega) or not np.all(np.isfinite([*(args.omega or []), args.alpha])):
                return None  # the set-by-set route reports the bad option
            return _inverse_batch(system, args, sets, self.reductions)
        batched = {"kinematics": kinematics_batch, "forward": forward_batch}[self.command]
        return system.backend.route(compiled=batched, python=_set_by_set)(system, args, sets, self.reductions)


def _set_by_set(*args):
    """No batched route: every set through `TableStudy.__call__`."""
    return None


def _inverse_batch(system, args, sets, reductions):
    """TableStudy.batch for the inverse analysis (see there): per set its figures or its exception."""
    from mechsym.planar.dynamics import analysis_functions
    from mechsym.planar.equations import inverse as inverse_analysis

    mech = system.mechanism
    analysis = inverse_analysis(mech, not args.quasi_static)
    if analysis.free or analysis.extra_rows or analysis.extra_unknowns:
        return None
    names = analysis_functions(system, analysis).names
    theta = args.theta0 + 2 * np.pi * np.arange(args.samples) / args.samples
    omegas = np.array([0.0] if args.quasi_static else args.omega, float)
    alpha = 0.0 if args.quasi_static else args.alpha
    coef = np.stack([np.full_like(omegas, alpha), omegas**2, np.ones_like(omegas)], axis=1)  # (speeds, 3)
    geometry = [list(mech.parameters).index(n) for n in geometry_parameters(system)]
    out, groups = [None] * len(sets), {}
    for k, p, mass in set_vectors(system, sets, out):
        groups.setdefault(tuple(p[geometry]), []).append((k, p, sets[k], mass))
    coordinate = system.coordinate_names[0]

    def figures(k, basis):
        out[k] = inverse_figures(coordinate, theta, omegas, args.quasi_static, coef, names, basis, reductions)

    groups_valid = []
    lone = []  # on the C backend: the sets of the small geometry groups, all in one compiled call
    pooled = system.backend.route(compiled=SHARED_MIN, python=0)  # (numpy: no such call, every group its own)
    for valid in groups.values():
        if len(valid) < pooled:
            lone += valid
        else:
            groups_valid.append(valid)
    groups_valid += [[member] for member in _inverse_sets_c(system, theta, lone, figures, out,
                                                            not args.quasi_static)]
    for valid in groups_valid:
        try:
            kin = system.kinematics(theta, valid[0][2])
        except SET_ERRORS as exc:
            for k, *_ in valid:
                out[k] = exc
            continue
        if kin.factor is None:
            return None
        scale = 0.0 if args.quasi_static else 1.0
        rhs = []
        for _, p, _, mass in valid:
            rhs += [scale * mass * kin.dq[:, :, 0], scale * mass * kin.ddq, -system.applied(kin.q.T, p).T]
        basis = kin.factor.solve_t(np.stack(rhs, axis=2))  # (N, n, 3 sets)
        for j, (k, *_) in enumerate(valid):
            figures(k, basis[:, :, 3 * j:3 * j + 3])
    return out


def _inverse_sets_c(system, theta, lone, figures, out, inertia) -> list:
    """The inverse bases of sets, each with its own kinematics, from the compiled ms_inverse_sets
    (`compiled_inverse`), in which each set assembles from the reference assembly of the default
    parameters and continues to theta[0]; `figures(k, basis)` takes each set's basis. Returns the sets the
    compiled sweep flagged (a start that fails or lands on another branch, a failed sample, a dead point, a
    branch change): the caller runs them through the kinematics, which names the reason as the set-by-set
    route does."""
    if not lone:
        return []
    start = compiled_start(system)
    if start is None:  # the default parameters do not assemble: every set names its own reason
        return list(lone)
    flagged = []
    for j, suspect, u in compiled_inverse(system.functions, start, theta, np.array([m[1] for m in lone])):
        if suspect:
            flagged.append(lone[j])
        else:
            if not inertia:
                u[:, :, :2] = 0.0
            figures(lone[j][0], u)
    return flagged
