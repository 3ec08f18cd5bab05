"""A sweep's study of a generic analysis (`TableStudy`: an analysis' table reduced to figures) and its
batched route: on the C backend the sets of a task evaluated together, every set of an inverse, kinematics
or forward analysis in one compiled call (mechsym.studies.sweep_sets), each set assembled from the
reference assembly and continued to its start in C (`CompiledStart`). A set that the compiled call flags
goes through the set-by-set route, which names its failure.
"""
from __future__ import annotations

from dataclasses import dataclass, field


from mechsym.core.errors import InputError
from mechsym.studies.analyses import ANALYSES, analyse
from mechsym.studies.figures import Reduction, figure_names, reduce_table, speeds_apart
from mechsym.studies.sweep_sets import SET_ROUTES, kinematics_batch, set_model


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
        """The outcomes of the sets (`Rows`: a set not done is left to `__call__`), or None where only set by
        set works: a one-coordinate mechanism without force elements and without a model's own hook, on the
        C backend; agrees with `__call__` to round-off. Every set of an inverse, kinematics or forward analysis
        goes into one compiled call (mechsym.codegen.c_sets: inverse_rows, kinematics_batch, forward_rows),
        each set assembled and continued to its start in C, its kinematics its own."""
        if self.hook is not None:
            return None
        return system.backend.route(compiled=self._compiled, python=_set_by_set)(system, sets)

    def _compiled(self, system, sets):
        if self.command == "kinematics":
            if len(system.coordinate_names) != 1 or getattr(system, "loads", None) is not None:
                return None  # force elements: their columns and loads of velocity, set by set
            return kinematics_batch(system, self.analysis, sets, self.reductions)
        model = set_model(system)
        return None if model is None else SET_ROUTES[self.command](model, self.analysis, self.reductions, sets)


def _set_by_set(*args):
    """No batched route: every set through `TableStudy.__call__`."""
    return None
