"""Studies on a derived model, above the models and below the command line: the generic analyses as
functions of typed options (analyses), one analysis or a model's study over a grid of parameter sets on
any executor (sweep, with the workers' warm start in sweep_warm), and staged optimisation (optimize).
Nothing here imports the command line or the shipped models (tests/test_layers.py checks): a model comes
in as a build function or a derived System."""
from mechsym.studies.analyses import (ForwardOptions, InverseOptions, KinematicsOptions, analyse, forward, inverse,
                                      kinematics, samples)
from mechsym.studies.figures import Reduction
from mechsym.studies.optimize import refine_stages, staged_dp
from mechsym.studies.sweep import plot, sweep
from mechsym.studies.sweep_grid import axis, grid
from mechsym.studies.sweep_study import TableStudy

__all__ = ["ForwardOptions", "InverseOptions", "KinematicsOptions", "Reduction", "TableStudy", "analyse", "axis",
           "forward", "grid", "inverse", "kinematics", "plot", "refine_stages", "samples", "staged_dp",
           "sweep"]
