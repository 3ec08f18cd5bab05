"""Exudyn's implicit solver as the peers here run it: generalized alpha (index 3) with a fixed step, sensors
stored at every step, no solution file, a singular Jacobian tolerated (redundant constraints, aligned
positions)."""
from __future__ import annotations

import time


def solve_fixed_step(mbs, h, t_end, spectral_radius, solver_type):
    """Run mbs (assembled) from 0 to t_end with the step h; returns (ok, CPU seconds of the solve).
    solver_type: an exudyn.LinearSolverType."""
    import exudyn as exu

    settings = exu.SimulationSettings()
    settings.timeIntegration.numberOfSteps = int(round(t_end / h))
    settings.timeIntegration.endTime = t_end
    settings.timeIntegration.generalizedAlpha.spectralRadius = spectral_radius
    settings.timeIntegration.verboseMode = 0
    settings.solution.file.write = False
    settings.solution.sensors.writePeriod = h
    settings.linearSolver.solverType = solver_type
    settings.linearSolver.ignoreSingularJacobian = True
    start = time.process_time()
    ok = mbs.SolveDynamic(settings)
    return ok, time.process_time() - start
