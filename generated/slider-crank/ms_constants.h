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
/* An explicit Runge-Kutta step's next size is this times the error's ideal ratio (scipy.integrate's
   SAFETY; the C DOP853 and RK45 take their steps as scipy's do). */
#define MS_IVP_SAFETY 0.9
/* A rejected Runge-Kutta step shrinks by at most this factor (scipy's MIN_FACTOR). */
#define MS_IVP_MIN_FACTOR 0.2
/* An accepted Runge-Kutta step grows by at most this factor (scipy's MAX_FACTOR). */
#define MS_IVP_MAX_FACTOR 10.0
/* The smallest Runge-Kutta step, in spacings of doubles at t (scipy's 10 |nextafter(t) - t|). */
#define MS_IVP_MIN_STEP 10.0
/* An entry of the entering column of Lemke's tableau is a pivot candidate above this times the tableau's
   scale (at least 1). */
#define MS_LEMKE_PIVOT_TOL 1e-13
/* Lemke's ratios within this of the smallest (relative to it, at least 1) tie, and the lexicographic rule
   on B^-1 picks among them. */
#define MS_LEMKE_TIE 1e-12
/* Lemke's method gives up after this many pivots per row of the LCP (and one). */
#define MS_LEMKE_PIVOTS 50
/* The floor of a scale that divides a residual, so that an all-zero vector gives no 0/0. */
#define MS_FLOOR 1e-300

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
