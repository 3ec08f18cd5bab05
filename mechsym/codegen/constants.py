"""The numbers, status codes and contact-point states that the Python routes and the C runtime share,
defined once.

Python imports them from here; the C runtime includes `ms_constants.h`, printed from these tables
(`header`, served by mechsym.codegen.c_runtime as one of the runtime's files), so that a value changed
here changes both routes and the content key of every compiled entry.
"""
from __future__ import annotations

import textwrap
from enum import IntEnum

__all__ = ["NUMBERS", "STATUSES", "HARD_STATUSES", "Status", "HardStatus", "header", "CHORD_TOL", "MAX_STEP",
           "STEP", "STEP_FLOOR", "MAX_WALK", "DENSE_RECORD", "BRIDGE_DROP", "BRIDGE_RES", "IVP_SAFETY", "IVP_MIN_FACTOR",
           "IVP_MAX_FACTOR", "IVP_MIN_STEP", "LEMKE_PIVOT_TOL", "LEMKE_TIE", "LEMKE_PIVOTS", "FLOOR", "CONTACT_STATES",
           "NO_CONTACT", "STICK", "SLIP"]

# name -> (value, meaning); C names them MS_NAME
NUMBERS = {
    "CHORD_TOL": (1e-8, "after a Newton step below this (relative to the coordinate scales), one chord step (the "
                        "same factorisation, a new residual) finishes: its error is about step * (error after the "
                        "step), far below rounding"),
    "MAX_STEP": (0.5, "a Newton step is clipped to this fraction of each coordinate's scale, so that a step from "
                      "a poor prediction cannot carry an angle a whole turn away"),
    "STEP": (0.1, "the continuation step: 0.1 rad along an angle, 0.1 of the mechanism's size along a length"),
    "STEP_FLOOR": (1e-6, "the smallest continuation step, relative to the coordinates' scales: an interval that "
                         "leaves the branch or that Newton cannot cross is halved down to this before a dead point "
                         "is named there"),
    "MAX_WALK": (64, "a trial state of an integrator farther than this many continuation steps from the last "
                     "solved one is rejected rather than walked to"),
    "DENSE_RECORD": (18, "doubles of one accepted step in the C integrator's record of its dense output: t_old, h, "
                         "the state at t_old (2), then F (7 x 2, row-major)"),
    "BRIDGE_DROP": (20.0, "near a bifurcation the continuation bridges the point, from the last state where the "
                          "smallest singular value of Phi_q (columns in their scales) was above 1/BRIDGE_DROP of "
                          "its value where the path started"),
    "BRIDGE_RES": (1e-10, "a bridge's polynomial must close the loops inside it to this, relative to the "
                          "mechanism's size"),
    "IVP_SAFETY": (0.9, "an explicit Runge-Kutta step's next size is this times the error's ideal ratio "
                        "(scipy.integrate's SAFETY; the C DOP853 and RK45 take their steps as scipy's do)"),
    "IVP_MIN_FACTOR": (0.2, "a rejected Runge-Kutta step shrinks by at most this factor (scipy's MIN_FACTOR)"),
    "IVP_MAX_FACTOR": (10.0, "an accepted Runge-Kutta step grows by at most this factor (scipy's MAX_FACTOR)"),
    "IVP_MIN_STEP": (10.0, "the smallest Runge-Kutta step, in spacings of doubles at t (scipy's "
                           "10 |nextafter(t) - t|)"),
    "LEMKE_PIVOT_TOL": (1e-13, "an entry of the entering column of Lemke's tableau is a pivot candidate above this "
                               "times the tableau's scale (at least 1)"),
    "LEMKE_TIE": (1e-12, "Lemke's ratios within this of the smallest (relative to it, at least 1) tie, and the "
                         "lexicographic rule on B^-1 picks among them"),
    "LEMKE_PIVOTS": (50, "Lemke's method gives up after this many pivots per row of the LCP (and one)"),
    "FLOOR": (1e-300, "the floor of a scale that divides a residual, so that an all-zero vector gives no 0/0"),
}
(CHORD_TOL, MAX_STEP, STEP, STEP_FLOOR, MAX_WALK, DENSE_RECORD, BRIDGE_DROP, BRIDGE_RES, IVP_SAFETY, IVP_MIN_FACTOR,
 IVP_MAX_FACTOR, IVP_MIN_STEP, LEMKE_PIVOT_TOL, LEMKE_TIE, LEMKE_PIVOTS, FLOOR) = (v for v, _ in NUMBERS.values())


# name -> (value, meaning) of the status a long call of the C runtime returns (MS_NAME in C); 0 is success
STATUSES = {
    "OK": (0, "success"),
    "NO_CONVERGENCE": (1, "no convergence: the loops could not be closed"),
    "SINGULAR": (2, "singular: a dead point"),
    "STEP_SIZE": (3, "the step size fell below its limit"),
    "OFF_BRANCH": (4, "a declared branch condition would not hold"),
    "INTERRUPTED": (5, "SIGINT ended the call (the previous handler is put back)"),
    "DET_SIGN": (6, "det Phi_q would change sign where no branch condition is declared: another branch"),
    "FAR": (7, "Newton converged far from the continuation's prediction: another configuration"),
    "BUFFER_FULL": (8, "the caller's buffers are full: call again with larger ones"),
    "CHATTER": (9, "too many switches without time advancing (chattering or a Zeno point)"),
    "SWITCHES": (10, "more switches than allowed"),
    "NO_MEMORY": (11, "the work arrays could not be allocated"),
}
# name -> (value, meaning) of one state's hard-contact solve (MC_NAME in C, runtime/hard_contact.c)
HARD_STATUSES = {
    "OK": (0, "solved"),
    "RAY": (1, "Lemke's method ended on a secondary ray"),
    "CHECK": (2, "the solution failed the complementarity check"),
    "NOT_PD": (3, "the mass matrix is not positive definite"),
    "PIVOTS": (4, "more pivots than allowed"),
    "AMBIGUOUS": (6, "several solutions: the Python route takes its minimum-norm one"),
    "NOT_FINITE": (7, "the state is not finite"),
}
# name -> (value, meaning) of a contact point's state, in the Python contact laws and both C contact runs
CONTACT_STATES = {
    "NO_CONTACT": (0, "apart from the ground"),
    "STICK": (1, "in contact, sticking"),
    "SLIP": (2, "in contact, slipping"),
}
NO_CONTACT, STICK, SLIP = (v for v, _ in CONTACT_STATES.values())
Status = IntEnum("Status", {name: value for name, (value, _) in STATUSES.items()}, module=__name__)
Status.__doc__ = "The status a long call of the C runtime returns (STATUSES)."
HardStatus = IntEnum("HardStatus", {name: value for name, (value, _) in HARD_STATUSES.items()}, module=__name__)
HardStatus.__doc__ = "The outcome of one state's hard-contact solve (HARD_STATUSES)."


def _c_number(value) -> str:
    """A C literal of `value` that reads back as the same double (or int)."""
    return str(value) if isinstance(value, int) else repr(float(value))


def header() -> str:
    """The text of ms_constants.h: every number and status above as a C macro, with its meaning."""
    lines = ["/* mechsym C runtime: the numbers and status codes shared with Python, printed from",
             "   mechsym/codegen/constants.py (edit them there). */",
             "#ifndef MS_CONSTANTS_H", "#define MS_CONSTANTS_H", ""]
    for name, (value, meaning) in NUMBERS.items():
        lines += [*_comment(meaning), f"#define MS_{name} {_c_number(value)}"]
    for prefix, table, what in (("MS", STATUSES, "the status of a long call"),
                                ("MC", HARD_STATUSES, "the status of one state's hard-contact solve"),
                                ("MS", CONTACT_STATES, "the state of a contact point")):
        lines += ["", f"/* {what} */"]
        lines += [f"#define {prefix}_{name} {value} /* {meaning} */" for name, (value, meaning) in table.items()]
    lines += ["", "#endif"]
    return "\n".join(lines) + "\n"


def _comment(text, width=110) -> list[str]:
    """`text` as a C comment wrapped at `width`."""
    wrapped = textwrap.wrap(text[0].upper() + text[1:] + ".", width - 6)
    return [("/* " if i == 0 else "   ") + line + (" */" if i == len(wrapped) - 1 else "") for i, line in enumerate(wrapped)]
