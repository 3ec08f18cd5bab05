/* mechsym C runtime: the numbers and status codes shared with Python, printed from
   mechsym/codegen/constants.py (edit them there). */
#ifndef MS_CONSTANTS_H
#define MS_CONSTANTS_H

/* After a Newton step below this (relative to the coordinate scales), one chord step (the same
   factorisation, a new residual) finishes: its error is about step * (error after the step), far below
   rounding. */
#define MS_CHORD_TOL 1e-08
/* A Newton step is clipped to this fraction of each coordinate's scale, so that a step from a poor
   prediction cannot carry an angle a whole turn away. */
#define MS_MAX_STEP 0.5
/* The continuation step: 0.1 rad along an angle, 0.1 of the mechanism's size along a length. */
#define MS_STEP 0.1
/* The smallest continuation step, relative to the coordinates' scales: an interval that leaves the branch
   or that Newton cannot cross is halved down to this before a dead point is named there. */
#define MS_STEP_FLOOR 1e-06
/* A trial state of an integrator farther than this many continuation steps from the last solved one is
   rejected rather than walked to. */
#define MS_MAX_WALK 64
/* Doubles of one accepted step in the C integrator's record of its dense output: t_old, h, the state at
   t_old (2), then F (7 x 2, row-major). */
#define MS_DENSE_RECORD 18
/* Near a bifurcation the continuation bridges the point, from the last state where the smallest singular
   value of Phi_q (columns in their scales) was above 1/BRIDGE_DROP of its value where the path started. */
#define MS_BRIDGE_DROP 20.0
/* A bridge's polynomial must close the loops inside it to this, relative to the mechanism's size. */
#define MS_BRIDGE_RES 1e-10

/* the status of a long call */
#define MS_OK 0 /* success */
#define MS_NO_CONVERGENCE 1 /* no convergence: the loops could not be closed */
#define MS_SINGULAR 2 /* singular: a dead point */
#define MS_STEP_SIZE 3 /* the step size fell below its limit */
#define MS_OFF_BRANCH 4 /* a declared branch condition would not hold */
#define MS_INTERRUPTED 5 /* SIGINT ended the call (the previous handler is put back) */
#define MS_DET_SIGN 6 /* det Phi_q would change sign where no branch condition is declared: another branch */
#define MS_FAR 7 /* Newton converged far from the continuation's prediction: another configuration */
#define MS_BUFFER_FULL 8 /* the caller's buffers are full: call again with larger ones */
#define MS_CHATTER 9 /* too many switches without time advancing (chattering or a Zeno point) */
#define MS_SWITCHES 10 /* more switches than allowed */
#define MS_NO_MEMORY 11 /* the work arrays could not be allocated */

/* the status of one state's hard-contact solve */
#define MC_OK 0 /* solved */
#define MC_RAY 1 /* Lemke's method ended on a secondary ray */
#define MC_CHECK 2 /* the solution failed the complementarity check */
#define MC_NOT_PD 3 /* the mass matrix is not positive definite */
#define MC_PIVOTS 4 /* more pivots than allowed */
#define MC_AMBIGUOUS 6 /* several solutions: the Python route takes its minimum-norm one */
#define MC_NOT_FINITE 7 /* the state is not finite */

/* the state of a contact point */
#define MS_NO_CONTACT 0 /* apart from the ground */
#define MS_STICK 1 /* in contact, sticking */
#define MS_SLIP 2 /* in contact, slipping */

#endif
