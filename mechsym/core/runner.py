"""What every runner shares between its checked options (mechsym.core.timegrid) and its RunResult
(mechsym.core.results): the right-hand side an integrator calls, which turns a state the model cannot
reach into a rejected step rather than an exception in the middle of a step."""
from __future__ import annotations

import numpy as np

from mechsym.core.errors import InputError

__all__ = ["StepRejected", "EXPLICIT", "rejecting"]


class StepRejected(InputError):
    """The configuration cannot be followed from the last solved state to a trial state (the loops do not
    close on the way, the branch would change, or a dead point lies between). An explicit Runge-Kutta
    integrator rejects the step and tries a shorter one; `message` says why, should the run end there."""


EXPLICIT = ("RK23", "RK45", "DOP853")  # the methods that reject a step whose rates are not finite


def rejecting(rhs, method, describe):
    """The right-hand side an integrator calls: StepRejected becomes a rejected step (NaN rates, which
    the explicit Runge-Kutta methods reject, shortening the step) and is kept in `.failure` to explain a
    run that ends there; for the implicit methods it is an error naming the time and the state
    (`describe(y)`)."""
    def wrapped(t, y):
        try:
            return rhs(t, y)
        except StepRejected as exc:
            if method not in EXPLICIT:
                raise InputError(f"at t = {t:.6g} s, {describe(y)}: {exc}") from None
            wrapped.failure = exc
            return np.full(len(y), np.nan)

    wrapped.failure = None
    return wrapped
