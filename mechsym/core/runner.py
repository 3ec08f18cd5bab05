"""The one runner skeleton: checked options (mechsym.core.timegrid.run_options) -> `integrate` (scipy's
solve_ivp with dense output, the right-hand side watched by the call budget, reporting progress, a state
the model cannot reach a rejected step) -> `result` (the RunResult on the options' output grid). Every
runner (a planar simulation or forward run, the floating body, a tree, mechsym.core.hybrid's pieces, and
through it the contact runs) goes through it and adds only its model's right-hand side and columns."""
from __future__ import annotations

import numpy as np

from mechsym.core.budget import CallBudget
from mechsym.core.errors import InputError
from mechsym.core.progress import Progress, tracked
from mechsym.core.results import RunResult, ivp_result

__all__ = ["StepRejected", "EXPLICIT", "rejecting", "integrate", "result"]


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


def integrate(rhs, y0, t_span, *, rtol, atol, method="DOP853", name, where=None, events=(), describe=None,
              explain=None, budget=None, progress=True, **options):
    """scipy's solve_ivp of rhs(t, y) over t_span from y0 with dense output, the one integrator call of every
    runner: the right-hand side `rejecting` (where `describe(y)` names a state: StepRejected is a rejected
    step), watched by a CallBudget named `name` (`explain(t, y)` raises the error naming what degenerated;
    `budget`: one shared by several calls, as a hybrid run's pieces share theirs) and reporting the time
    reached to a Progress line (`progress`: True for one of its own, or a Progress the caller closes);
    `options` go to solve_ivp (jac, max_step, first_step). A failed integration is an InputError "WHERE:
    integration failed at t = ...: why" (`where`, default `name`), after `explain` had its say on the last
    state; else solve_ivp's solution (status 0 at the end, 1 where a terminal event stopped it)."""
    from scipy.integrate import solve_ivp

    fun = rejecting(rhs, method, describe) if describe is not None else rhs
    t0, t1 = t_span
    watched = (budget or CallBudget(len(y0), name, t1 - t0, method, explain=explain)).wrap(fun)
    bar = Progress(name, t1) if progress is True else progress
    try:
        sol = solve_ivp(tracked(watched, bar) if bar else watched, (t0, t1), y0, method=method, rtol=rtol, atol=atol,
                        dense_output=True, events=list(events) or None, **options)
    finally:
        if progress is True:
            bar.close()
    if sol.status < 0:
        if explain is not None:
            explain(sol.t[-1], sol.y[:, -1])
        raise InputError(f"{where or name}: integration failed at t = {sol.t[-1]:.9g}: "
                         f"{getattr(fun, 'failure', None) or sol.message}")
    return sol


def result(sol, opts, columns, title, events=(), units=None) -> RunResult:
    """The RunResult of one `integrate` run on the output grid of `opts` (a timegrid.RunOptions), up to where
    it ended: the columns `columns(grid, y)` gives from the states y (n_states, len(grid)), solve_ivp's
    events by name, the dense solution."""
    grid = opts.grid(sol.t[-1])
    return ivp_result(sol, events, columns(grid, sol.sol(grid)), units or {"t": "s"}, title)
