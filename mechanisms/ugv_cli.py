"""`mechsym ugv torque|sweep|optimize|animate`: the UGV half-vehicle from the command line.

Registered in mechanisms.REGISTRY (HELP, configure(parser), run(args)); mechsym/app/cli.py adds the subcommands
and dispatches here. This module only declares options (it is imported whenever the parser is built); the
work happens in mechanisms/ugv_study.py. Angles are radians or degrees with the suffix 'deg'; the rate limit is an angle
per metre of travel ('60deg' = 60 degrees per metre).
"""
from __future__ import annotations

import math

from mechsym.core.output import announce, save_figure

HELP = "UGV half-vehicle on a track: torque along it, the angle-pair sweep, optimal leg angles, animation"


def configure(parser):
    from mechsym.app.options import angle, number, param, positive_int
    from mechsym.app.options import output_group, plot_group

    sub = parser.add_subparsers(dest="ugv_command", required=True)

    def common(p, samples):
        p.add_argument("--track", default="bump", help="bump|step|washboard|ramp, a CSV file (columns x, y) or an expression in x")
        p.add_argument("--x-from", type=number, default=0.0, help="first front-contact position [m]")
        p.add_argument("--x-to", type=number, default=8.0, help="last front-contact position [m]")
        p.add_argument("--samples", type=positive_int, default=samples, help="front-contact positions")
        p.add_argument("--param", action="append", type=param, default=[], metavar="NAME=VALUE",
                       help="model parameter (see `mechsym params ugv`)")
        p.add_argument("--phi-min", type=angle, default=math.radians(45), help="lower leg-angle limit")
        p.add_argument("--phi-max", type=angle, default=math.radians(135), help="upper leg-angle limit")
        p.add_argument("--debug", action="store_true", help="show tracebacks")

    p = sub.add_parser("torque", help="forces and drive torque along a track for fixed leg angles")
    p.add_argument("--phi-r", type=angle, required=True, help="rear leg angle")
    p.add_argument("--phi-f", type=angle, required=True, help="front leg angle")
    common(p, 801)
    p.add_argument("--mu", type=number, default=0.6, help="friction coefficient for the slip report")
    p.add_argument("--margin", type=number, default=0.05, help="rollover margin, fraction of the weight")
    output_group(p, help="CSV: x_front, x_rear, pitch, Fr, Nr, Ff, Nf, torque")
    plot_group(p, help="PNG/SVG of the torque and forces")

    p = sub.add_parser("sweep", help="drive torque along a track for a grid of constant leg-angle pairs (Figure 24)")
    common(p, 801)
    p.add_argument("--grid", type=positive_int, default=10, help="angles per leg, evenly over the limits")
    output_group(p, help="CSV: x_front, phi_r, phi_f, torque (one row per position and pair)")
    plot_group(p, help="PNG/SVG of the torque curves and the peak torque per pair")

    p = sub.add_parser("optimize", help="leg angles along a track that minimise a criterion (Figure 25)")
    p.add_argument("--criterion", required=True, choices=["torque-variation", "peak-torque", "energy", "grip"])
    common(p, 161)
    p.add_argument("--mu", type=number, default=0.6, help="friction coefficient (no slip: |F| <= mu N)")
    p.add_argument("--margin", type=number, default=0.05, help="rollover margin: both N >= margin x weight")
    p.add_argument("--rate", type=angle, default=math.radians(60), help="leg-angle rate limit per metre of travel")
    p.add_argument("--angle-step", type=angle, help="DP angle-grid spacing (default: rate x x-spacing)")
    p.add_argument("--no-refine", action="store_true", help="skip the SLSQP refinement of the DP path")
    output_group(p, help="CSV: x_front, phi_r, phi_f, torque, slip_margin, rollover_margin")
    plot_group(p, help="PNG/SVG of the angles, the torque and the vehicle in sequence")

    p = sub.add_parser("equations", help="the quasi-static equilibrium rows derived from the bodies, and the unknowns")
    p.add_argument("--latex", action="store_true")
    p.add_argument("--debug", action="store_true", help="show tracebacks")

    for name, help_text, out in (("animate", "GIF/MP4 of the vehicle along a track", "output .gif or .mp4"),
                                 ("view", "the vehicle along a track in the browser (one self-contained HTML "
                                          "file: docs/view.md)", "output .html")):
        p = sub.add_parser(name, help=help_text)
        output_group(p, help=out, required=True)
        common(p, 81)
        p.add_argument("--phi-r", type=angle, default=math.radians(90), help="rear leg angle (constant)")
        p.add_argument("--phi-f", type=angle, default=math.radians(90), help="front leg angle (constant)")
        p.add_argument("--schedule", help="CSV from `ugv optimize` (x_front, phi_r, phi_f): angles along the track")
        p.add_argument("--criterion", choices=["torque-variation", "peak-torque", "energy", "grip"],
                       help=f"optimise first and {name} the optimal angles")
        p.add_argument("--mu", type=number, default=0.6)
    sub.choices["animate"].add_argument("--fps", type=positive_int, default=20)


def run(args) -> int:
    import numpy as np

    from mechanisms import ugv_figures as uf
    from mechanisms import ugv_optimize as uo
    from mechanisms import ugv_study as us
    from mechsym.core.results import Table

    from mechsym.app.options import write_outputs
    from mechsym.core.output import ANIMATION, CSV, FIGURE, PAGE, check_outputs

    cmd = args.ugv_command
    if cmd in ("animate", "view"):
        check_outputs(("--out", args.out, ANIMATION if cmd == "animate" else PAGE))
    elif cmd != "equations":
        check_outputs(("--out", args.out, CSV), ("--plot", args.plot, FIGURE))
    if cmd == "equations":
        print(us.statics().equations_text(latex=args.latex))
        return 0
    vehicle = us.Vehicle(dict(args.param))
    limits = (args.phi_min, args.phi_max)
    if cmd == "torque":
        table = us.torque_along(args.track, args.phi_r, args.phi_f, args.x_from, args.x_to, args.samples,
                                mu=args.mu, margin=args.margin, limits=limits, vehicle=vehicle)
        write_outputs(table, args.out, drawings=[(args.plot, lambda p: _plot_torque(table, p))], stdout=True)
        _report(table.events)
    elif cmd == "sweep":
        from mechsym.core.budget import check_memory

        rows = args.grid**2 * args.samples
        check_memory(f"ugv sweep of {args.grid}^2 angle pairs at {args.samples} positions ({rows} rows)", 8 * rows * 48)
        lo, hi = us.check_limits(limits)
        grid = np.linspace(lo, hi, args.grid)
        pr, pf = (a.ravel() for a in np.meshgrid(grid, grid, indexing="ij"))
        x = us.front_positions(args.x_from, args.x_to, args.samples)
        torque = us.sweep(args.track, pr, pf, x, vehicle=vehicle)["torque"]
        clear = vehicle.clearance(pr, pf)
        ok = (clear["wheels"] >= 0) & (clear["rear"] >= 0) & (clear["front"] >= 0)
        table = Table({"x_front": np.repeat(x, len(pr)), "phi_r": np.tile(pr, len(x)), "phi_f": np.tile(pf, len(x)),
                       "torque": torque.ravel()},
                      {"x_front": "m", "phi_r": "rad", "phi_f": "rad", "torque": "N m"})
        write_outputs(table, args.out, drawings=[(args.plot, lambda p: uf.figure_sweep(p, args.track, vehicle, args.grid, x))],
                      stdout=True)
        if not ok.all():
            print(f"note: {int((~ok).sum())} of {len(ok)} pairs put the wheels too close or into the body "
                  "(their torque is geometry only)")
    elif cmd == "optimize":
        sched = uo.optimize(args.track, args.criterion, args.mu, args.x_from, args.x_to, args.samples,
                            limits=limits, rate=args.rate, margin=args.margin, angle_step=args.angle_step,
                            refine=not args.no_refine, vehicle=vehicle)
        write_outputs(sched.table, args.out, drawings=[(args.plot, lambda p: uf.figure_schedule(p, sched, vehicle))],
                      stdout=True)
        bc = sched.best_constant
        const = (f"best constant pair ({bc[0] / us.DEG:.4g} deg, {bc[1] / us.DEG:.4g} deg): {bc[2]:.6g}" if bc
                 else "no constant pair avoids slip and rollover")
        print(f"{args.criterion} = {sched.value:.6g} (dynamic programming {sched.dp_value:.6g}"
              f"{', refined' if sched.refined else ''}; {const})")
        _report(sched.events)
    elif cmd in ("animate", "view"):
        x, pr, pf = _angles_along(args, vehicle, limits)
        if cmd == "view":
            from mechsym.core.view import write_html

            size = write_html(uf.view(args.track, x, pr, pf, vehicle), args.out)
            announce(f"wrote {args.out} ({len(x)} positions, {size / 1e6:.1f} MB)")
            return 0
        uf.animate(args.out, args.track, x, pr, pf, vehicle, fps=args.fps)
        announce(f"wrote {args.out} ({len(x)} frames)")
    return 0


def _angles_along(args, vehicle, limits):
    """(x_front, phi_r, phi_f) along the track of `ugv animate|view`: the constant pair, the --schedule's
    angles, or the --criterion's optimal ones."""
    import numpy as np

    from mechanisms import ugv_optimize as uo
    from mechanisms import ugv_study as us
    from mechsym.core.errors import InputError

    x = us.front_positions(args.x_from, args.x_to, args.samples)
    pr, pf = args.phi_r, args.phi_f
    if args.schedule and args.criterion:
        raise InputError("give either --schedule or --criterion, not both")
    if args.schedule:
        from mechsym.core.results import read_csv

        try:
            sched = read_csv(args.schedule)
            xs, sr, sf = sched["x_front"], sched["phi_r"], sched["phi_f"]
        except (OSError, ValueError, KeyError) as exc:
            raise InputError(f"schedule file '{args.schedule}' is not a CSV with x_front, phi_r, phi_f ({exc})") from None
        x = x[(x >= xs.min()) & (x <= xs.max())]
        if len(x) < 2:
            raise InputError(f"schedule file '{args.schedule}' does not cover x = {args.x_from}..{args.x_to}")
        lo, hi = us.check_limits(limits)
        bad = (sr < lo - 1e-9) | (sr > hi + 1e-9) | (sf < lo - 1e-9) | (sf > hi + 1e-9) | ~np.isfinite(sr + sf)
        if bad.any():
            i = int(np.argmax(bad))
            raise InputError(f"schedule file '{args.schedule}': leg angles ({sr[i]:.6g}, {sf[i]:.6g}) rad at "
                             f"x_front = {xs[i]:.6g} are outside the limits [{lo:.6g}, {hi:.6g}] rad")
        pr, pf = np.interp(x, xs, sr), np.interp(x, xs, sf)
    elif args.criterion:
        sched = uo.optimize(args.track, args.criterion, args.mu, args.x_from, args.x_to, limits=limits,
                            vehicle=vehicle)
        pr, pf = np.interp(x, sched.x, sched.phi_r), np.interp(x, sched.x, sched.phi_f)
    else:
        us.check_pair(vehicle, pr, pf, limits)
    return x, pr, pf


def _report(events):
    for line in events:
        print(f"warning: {line}")


def _plot_torque(table, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a1, a2) = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    a1.plot(table["x_front"], table["torque"])
    a1.set_ylabel("drive torque [N m]")
    a1.grid(True, alpha=0.3)
    a1.set_title(table.title)
    for name in ("Fr", "Nr", "Ff", "Nf"):
        a2.plot(table["x_front"], table[name], label=name)
    a2.set_xlabel("front contact x [m]")
    a2.set_ylabel("force [N]")
    a2.legend(fontsize=8)
    a2.grid(True, alpha=0.3)
    fig.tight_layout()
    save_figure(fig, path, dpi=110)
