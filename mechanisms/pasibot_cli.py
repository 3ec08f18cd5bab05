"""`mechsym pasibot ...`: the chapter's PASIBOT studies from the command line.

    mechsym pasibot figures --out DIR [--only 11,13]    Figures 11-14, 17-19 (PNG + CSV each)
    mechsym pasibot torque --omega 1 --omega 3          motor torque against crank speed, walking (CSV)
    mechsym pasibot start-torque                        last line: start_torque_Nm=VALUE
    mechsym pasibot min-friction --omega 3              last line: min_friction=VALUE
    mechsym pasibot slip --mu-s 0.05 --omega 3 --out slip.csv   one slip simulation (or --torque T)
    mechsym pasibot animate --out gait.gif              one step: links, joints, foot traces

Every subcommand takes --param NAME=VALUE (the names of `mechsym params pasibot --json`) and --backend
numpy|c. The default is c, as for the other simulation commands (cart, disc, chain3): generated C, compiled
once and cached, whose simulations track each state in one call (numpy, with a warning, without a C
compiler). Heavy modules are imported only when a subcommand runs.
"""
from __future__ import annotations

HELP = "PASIBOT biped studies: figures, start torque, minimum friction, slip runs, animation"


def configure(parser):
    from mechsym.app.options import number, param, positive_int
    from mechsym.app.options import backend_group, output_group, plot_group, time_group, tolerance_group

    sub = parser.add_subparsers(dest="study", required=True)

    def study(name, help_text):
        p = sub.add_parser(name, help=help_text)
        p.add_argument("--param", action="append", type=param, default=[], metavar="NAME=VALUE")
        backend_group(p, help="evaluation backend (default c: generated C, compiled once and cached)")
        p.add_argument("--debug", action="store_true", help="show tracebacks")
        return p

    p = study("figures", "regenerate Figures 11, 12, 13, 14, 17, 18, 19 (PNG with a CSV beside each)")
    output_group(p, help="output folder", required=True)
    p.add_argument("--only", help="comma-separated figure numbers (default: all)")

    p = study("torque", "the motor torque T8 against the crank speed while walking (support switched each step)")
    p.add_argument("--omega", type=number, action="append", required=True,
                   help="constant crank speed [rad/s]; repeat for several")
    p.add_argument("--samples", type=positive_int, default=360, help="crank angles over the turn")
    output_group(p, help="CSV: omega, absmax_T8, rms_T8, mean_T8, one row per speed (default: stdout)")
    plot_group(p, help="PNG/SVG of T8 over the turn, one line per speed")

    p = study("start-torque", "smallest constant torque that starts the biped from rest at theta8 = pi/2")
    p.add_argument("--tol", type=number, default=1e-5, help="bisection tolerance [N m]")

    p = study("min-friction", "smallest mu (mu_s = mu_k) without foot slip at a constant crank speed")
    p.add_argument("--omega", type=number, default=3.0, help="crank speed [rad/s]")
    p.add_argument("--steps", type=positive_int, default=1, help="steps simulated per trial")
    p.add_argument("--tol", type=number, default=1e-4, help="bisection tolerance on mu")

    p = study("slip", "one simulation with foot slip (imposed crank speed, or imposed torque)")
    p.add_argument("--mu-s", type=number, required=True, help="static friction coefficient")
    p.add_argument("--mu-k", type=number, help="kinetic friction coefficient (default: mu_s)")
    p.add_argument("--omega", type=number, help="imposed crank speed [rad/s] (inverse dynamics)")
    p.add_argument("--torque", type=number, help="imposed motor torque [N m] (forward dynamics, from rest)")
    p.add_argument("--steps", type=positive_int, default=4, help="steps (with --omega)")
    time_group(p, dt=False, t_end_help="end time [s] (required with --torque)")
    tolerance_group(p, 1e-10, atol=False)
    output_group(p, help="CSV of the sampled run")
    plot_group(p, help="PNG of the cumulative slip")

    p = study("animate", "one step of the gait as GIF (or MP4)")
    output_group(p, help="GIF/MP4 of one step", required=True)
    p.add_argument("--frames", type=positive_int, default=48)


def run(args) -> int:
    import warnings

    from mechanisms import pasibot as pb
    from mechanisms import pasibot_figures as figs
    from mechanisms import pasibot_study as st
    from mechsym.core.errors import InputError
    from mechsym.core.output import announce
    from mechsym.planar.stickslip import check_friction

    from mechsym.app.options import run_options, write_outputs
    from mechsym.core.output import ANIMATION, CSV, FIGURE, FOLDER, check_outputs

    if args.study == "figures":
        check_outputs(("--out", args.out, FOLDER))
    elif args.study in ("slip", "torque"):
        check_outputs(("--out", args.out, CSV), ("--plot", args.plot, FIGURE))
    elif args.study == "animate":
        check_outputs(("--out", args.out, ANIMATION))
    params = dict(args.param)
    pb.check_params(params)
    if args.study == "figures":
        only = [s.strip() for s in args.only.split(",")] if args.only else None
        figs.figures(args.out, only, params, backend=args.backend)
    elif args.study == "torque":
        curve, table = pb.torque_curve(args.omega, args.samples, params, backend=args.backend)
        write_outputs(curve, args.out, stdout=True,
                      drawings=[(args.plot, lambda p: table.plot(p, "theta8", ["T8"], title=curve.title))])
    elif args.study == "start-torque":
        if not args.tol > 0:
            raise InputError(f"--tol must be positive, got {args.tol}")
        value = st.start_torque(params, tol=args.tol, backend=args.backend)
        bound = st.energy_start_threshold(params, backend=args.backend)
        print(f"energy bound max(PE - PE0)/(theta8 - pi/2) over the step: {bound:.6f} N m")
        print(f"start_torque_Nm={value:.4g}")
    elif args.study == "min-friction":
        st.period(args.omega)
        if not args.tol > 0:
            raise InputError(f"--tol must be positive, got {args.tol}")
        demand = st.friction_demand(args.omega, params, backend=args.backend)
        value = st.min_friction(args.omega, params, steps=args.steps, tol=args.tol, backend=args.backend)
        print(f"max |f01x| / f01y over a step without slip: {demand:.6f}")
        print(f"min_friction={value:.4g}")
    elif args.study == "slip":
        mu_k = args.mu_s if args.mu_k is None else args.mu_k
        check_friction(args.mu_s, mu_k)
        if (args.omega is None) == (args.torque is None):
            raise InputError("give either --omega (imposed crank speed) or --torque (imposed motor torque)")
        if args.torque is not None and args.t_end is None:
            raise InputError("--torque needs --t-end")
        if args.t_end is not None:
            run_options(args)
        elif not args.rtol > 0:
            raise InputError(f"--rtol must be positive and finite, got {args.rtol}")
        model = st.SlipModel(args.mu_s, mu_k, omega=args.omega, torque=args.torque, params=params,
                             backend=args.backend)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UserWarning)
            result = model.run(steps=args.steps, t_end=args.t_end, rtol=args.rtol)
        for w in caught:
            print(f"warning: {w.message}")
        print(f"t=0: start in {result.result.segments[0].mode}")
        for event in result.events:
            print(event.describe())
        work, d_energy, dissipated = result.energy_balance()
        print(f"work in {work:.9g} J = delta(KE + PE) {d_energy:.9g} J + friction {dissipated:.9g} J "
              f"(residual {work - d_energy - dissipated:.3g} J)")
        x = "t/T" if "t/T" in result else "t"
        write_outputs(result, args.out,
                      drawings=[(args.plot, lambda p: result.plot(p, x, ["slip"], title="pasibot: cumulative foot slip"))])
        print(f"total_slip_m={result['slip'][-1]:.6g}")
    elif args.study == "animate":
        figs.animate(args.out, params, frames=args.frames, backend=args.backend)
        announce(f"wrote {args.out}")
    return 0
