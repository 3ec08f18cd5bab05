"""The compiled inverse of one parameter set in one call, without sympy: what `System.inverse`
(mechsym.planar.dynamics.inverse) and the warm `mechsym inverse` (mechsym.app.warm, which loads a compiled
library and a manifest only) both run.

For one coordinate the unknowns are linear in (thetadd, thetad^2, loads): U = alpha U_a + omega^2 U_w + U_s,
speed by speed (`speed_weights`). The compiled kernel continues along the samples, solves Newton to
rounding, the coefficients and the transposed sparse solves, and either combines the three bases for every
speed as it goes (a library with lanes: CLibrary.inverse_columns) or hands the bases back
(CLibrary.inverse); `compiled_columns` gives the columns either way. `flagged` marks the samples where the
kernel's answer is not taken: a velocity coefficient above the dead-point suspicion, or a branch
condition that changed sign (the numpy route then names the sample and the reason).
"""
from __future__ import annotations

import numpy as np

from mechsym.core.results import speed_columns


def speed_weights(omegas, alpha, inertia=True):
    """(S, 3) the weights of the three bases per speed: (alpha, omega^2, 1), or (0, 0, 1) without inertia
    (the quasi-static forces)."""
    with np.errstate(over="ignore", invalid="ignore"):
        weights = np.stack([np.full_like(omegas, alpha), omegas**2, np.ones_like(omegas)], axis=1)
    return weights if inertia else weights * [0.0, 0.0, 1.0]


def compiled_columns(lib, theta, params, q0, col_scale, tol, hmax, weights):
    """(failed, coef_max (N,), branch (N,), columns (m, S N) speed by speed, stop) of one parameter set along
    theta (N,) from q0 near theta[0], in one call of the compiled library: failed >= 0 where the kernel
    stopped before its continuation, stop the continuation's record where it stopped (or None)."""
    if lib.meta.get("lanes"):  # the columns straight from the kernel, no per-sample basis stored
        failed, _, coef, branch, columns, stop = lib.inverse_columns(theta, params, q0, col_scale, tol,
                                                                     coef=weights, hmax=hmax)
        return failed, coef, branch, columns.reshape(len(columns), -1), stop
    failed, _, _, coef, branch, basis, stop = lib.inverse(theta, params, q0, col_scale, tol, hmax=hmax)
    with np.errstate(over="ignore", invalid="ignore"):
        return failed, coef, branch, np.array(speed_columns(basis, weights)), stop


def flagged(coef, branch, coord_scale, suspect):
    """The samples whose answer the kernel's checks leave to the numpy route: a velocity coefficient
    (relative to the coordinate's scale) above `suspect`, or a branch condition that is not positive."""
    return (coef * coord_scale > suspect) | (branch <= 0)
