"""The `mechsym` command: the same analyses as the Python API, on a shipped model or a model file.

Bad input prints one line `error: ...` and exits with 2; a traceback appears only with --debug.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import signal
import sys
import threading

import numpy as np

from mechsym.core.errors import InputError


class _Parser(argparse.ArgumentParser):
    """argparse with mechsym's errors: an InputError (one line, exit 2); a value that starts with '-'
    followed by a digit, a point or inf/nan (`--omega -inf`, `--theta0 -90deg`, `--v0 -1,0,0`) is a
    value, never an option; a `--param NAME=VALUE` given twice for one name is refused (which one was
    meant?)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = re.compile(r"^-(\d|\.\d|inf|nan)", re.IGNORECASE)

    def error(self, message):
        raise InputError(message)

    def parse_known_args(self, args=None, namespace=None):
        namespace, rest = super().parse_known_args(args, namespace)
        given = [p for p in getattr(namespace, "param", None) or () if isinstance(p, tuple)]
        names = [name for name, _ in given]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            values = [v for n, v in given if n == repeated[0]]
            raise InputError(f"--param {repeated[0]} is given {len(values)} times ({', '.join(values)}); give it once")
        return namespace, rest


def angle(text: str) -> float:
    """An angle in radians, or in degrees with the suffix 'deg'."""
    s = str(text).strip()
    try:
        value = math.radians(float(s[:-3])) if s.endswith("deg") else float(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an angle: '{text}' (radians, or degrees with 'deg')") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"angle '{text}' is not finite")
    return value


def number(text: str) -> float:
    """A finite number from the command line."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: '{text}'") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"'{text}' is not finite")
    return value


def positive_int(text: str) -> int:
    """A whole number of at least 1 from the command line."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: '{text}'") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def param(text: str):
    """(name, value text) from 'NAME=VALUE'."""
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got '{text}'")
    return name.strip(), value.strip()


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every command (generic, sweep and the shipped models' own)."""
    from mechsym.cli_args import animation_group, backend_group, output_group, plot_group

    parser = _Parser(prog="mechsym", description="Symbolic analysis of planar mechanisms.")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def model_command(name, help_text, evaluates=True):
        p = sub.add_parser(name, help=help_text)
        p.add_argument("model", help="shipped model name, path to a .py file declaring a mechanism, or a URDF "
                                     "file (params, export)")
        p.add_argument("--param", action="append", type=param, default=[], metavar="NAME=VALUE")
        if evaluates:
            backend_group(p, help="evaluation backend (default c: generated C, compiled once and cached; numpy "
                                  "with one warning where no C compiler exists)")
        p.add_argument("--debug", action="store_true", help="show tracebacks")
        return p

    inverse_options(model_command("inverse", "driving torque and every reaction over one revolution"))
    forward_options(model_command("forward", "motion under a constant driving torque"))
    kinematics_options(model_command("kinematics", "link angles, centres of mass and points over one revolution"))
    for name in ("inverse", "forward", "kinematics"):
        output_group(sub.choices[name], help="CSV file (default: the table on stdout)")
        plot_group(sub.choices[name])
    animation_group(sub.choices["kinematics"], help="GIF or MP4 of the mechanism through the samples")

    p = model_command("params", "parameters and body properties", evaluates=False)
    p.add_argument("--json", action="store_true", help="JSON (the names --param takes) instead of text")
    urdf_options(p)

    p = model_command("equations", "the A U = C system and the reduced form", evaluates=False)
    p.add_argument("--latex", action="store_true")

    p = model_command("export", "standalone C99 code (header, source, example program)", evaluates=False)
    output_group(p, help="output folder", required=True)
    p.add_argument("--force", action="store_true", help="overwrite existing files that differ")
    urdf_options(p)

    from mechsym.sweep_cli import configure as configure_sweep

    configure_sweep(sub.add_parser("sweep", help="one analysis or model study over a grid of parameter values"))

    # commands that belong to one shipped model (mechanisms.COMMANDS: name -> module with HELP,
    # configure(parser) and run(args) -> exit code)
    from mechsym.loader import model_commands

    for name, module in model_commands().items():
        p = sub.add_parser(name, help=module.HELP)
        p.add_argument("--debug", action="store_true", help="show tracebacks")
        module.configure(p)
    _add_max_memory(parser)
    return parser


def inverse_options(p):
    """The options of `inverse` (also those of `sweep inverse`)."""
    p.add_argument("--omega", action="append", type=number,
                   help="crank speed [rad/s] (repeatable; required unless --quasi-static)")
    p.add_argument("--alpha", type=number, default=0.0, help="crank acceleration [rad/s^2]")
    p.add_argument("--samples", type=positive_int, default=360)
    p.add_argument("--theta0", type=angle, default=0.0,
                   help="first sample of the driven coordinate, whatever its name (theta, theta8, ...)")
    p.add_argument("--quasi-static", action="store_true", help="drop the inertia terms (no --omega, no omega column)")


def forward_options(p):
    """The options of `forward` (also those of `sweep forward`)."""
    p.add_argument("--torque", type=number, required=True)
    p.add_argument("--theta0", type=angle, default=0.0,
                   help="start value of the driven coordinate, whatever its name (theta, theta8, ...)")
    p.add_argument("--omega0", type=number, default=0.0)
    from mechsym.cli_args import time_group, tolerance_group

    time_group(p, required=True)
    tolerance_group(p)
    p.add_argument("--all", action="store_true",
                   help="write every body coordinate and point along the run, not only t, the coordinate and omega")


def kinematics_options(p):
    """The options of `kinematics` (also those of `sweep kinematics`)."""
    p.add_argument("--samples", type=positive_int, default=360)
    p.add_argument("--theta0", type=angle, default=0.0,
                   help="first sample of the driven coordinate, whatever its name (theta, theta8, ...)")
    p.add_argument("--frame", help="report in this frame (default: the fixed body's; a model may define others)")
    p.add_argument("--omega", type=number,
                   help="write velocities and accelerations at this speed [rad/s] instead of the coefficients")
    p.add_argument("--alpha", type=number, default=0.0, help="crank acceleration with --omega [rad/s^2]")


def urdf_options(parser):
    """How a MODEL.urdf is read (mechsym.spatial.urdf.read_urdf; docs/robots.md)."""
    group = parser.add_argument_group("a URDF file given as the model")
    group.add_argument("--floating", action="store_true",
                       help="a floating base (Pinocchio's free flyer) on the root link (default: fixed to the world)")
    group.add_argument("--mimic", choices=("model", "independent"), default="model",
                       help="mimic joints follow their joint (model, default) or are joints of their own")
    group.add_argument("--strict", action="store_true",
                       help="refuse inertias read with a warning, or violating the triangle inequality")


def _add_max_memory(parser, root=True):
    """--max-memory on every command (each parser without subcommands of its own), and before the command
    on the root parser (`mechsym --max-memory 16G COMMAND ...`, stored as max_memory_before: see main)."""
    from mechsym.core.budget import add_option

    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    for action in subs:
        for child in dict.fromkeys(action.choices.values()):
            _add_max_memory(child, root=False)
    if not subs:
        add_option(parser)
    if root:
        add_option(parser, dest="max_memory_before")


def main(argv=None) -> int:
    """Run the command line `argv` (default sys.argv[1:]); returns the exit code (0, 1 internal error, 2 bad input,
    128 + N when ended by signal N: 130 Ctrl-C (SIGINT), 143 SIGTERM, 129 SIGHUP)."""
    argv = sys.argv[1:] if argv is None else argv
    debug = "--debug" in argv
    from mechsym.core.budget import limit_memory
    from mechsym.core.output import drop_stdout, flush_stdout, transaction

    import warnings

    received = []
    try:
        with _interrupts(received):
            from mechsym import warm

            args = warm.parse(argv) or build_parser().parse_args(argv)  # an inverse line: no model loaded yet
            if getattr(args, "max_memory", None) is None:  # given before the command instead of after it
                args.max_memory = getattr(args, "max_memory_before", None)
            _check_explicit_backend(argv)
            # every file of the command appears together, only when it has succeeded; a warning is one line
            # `warning: ...`, each message once (a missing compiler, met by every model a command derives)
            with transaction(), limit_memory(getattr(args, "max_memory", None)), warnings.catch_warnings():
                warnings.simplefilter("once", UserWarning)
                if not debug:  # with --debug, Python's own form (file, line and source)
                    warnings.showwarning = _one_line_warning
                code = warm.run(args)  # from the manifest of an earlier run, without sympy; else None
                code = run(args) if code is None else code
            flush_stdout()  # a table on a full stdout is an error, not lost in silence
            return code
    except InputError as exc:
        if debug:
            raise
        print(f"error: {exc}".replace("\n", " "), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 128 + (received[0] if received else signal.SIGINT)
    except BrokenPipeError:  # the reader went away (`mechsym equations fourbar | head`): not an error
        drop_stdout()
        return 0
    except Exception as exc:
        if debug:
            raise
        print(f"internal error: {type(exc).__name__}: {exc} (run with --debug for a traceback)", file=sys.stderr)
        return 1


TERMINATING = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


@contextlib.contextmanager
def _interrupts(received):
    """SIGTERM and SIGHUP (what `timeout`, `kill`, schedulers, container stops and a closed terminal send)
    end the command as Ctrl-C does: a KeyboardInterrupt, so that no temporary file is left and the
    workers of a sweep are ended, with the signal's number appended to `received` (the exit code is
    128 + N). The first signal interrupts; a repeat while the command is ending is ignored, so that it
    cannot cut the clean-up short. A process forked from this one (a worker) keeps the signal's default
    action. Outside the main thread (a command run from a thread) nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pid = os.getpid()

    def interrupt(signum, frame):
        if os.getpid() != pid:
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        if not received:
            received.append(signum)
            raise KeyboardInterrupt

    previous = {s: signal.signal(s, interrupt) for s in TERMINATING}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def _warning_line(message, category, filename, lineno, line=None):
    """A warning on the command line: one line `warning: ...` (the source line only with --debug)."""
    return f"warning: {message}\n".replace("\n", " ").rstrip() + "\n"


def _one_line_warning(message, category, filename, lineno, file=None, line=None):
    """showwarning on the command line: `_warning_line` on stderr."""
    (file or sys.stderr).write(_warning_line(message, category, filename, lineno, line))


def _check_explicit_backend(argv):
    """--backend c asked for explicitly needs a C compiler (the default falls back to numpy with a warning)."""
    asked = [a.split("=", 1)[1] for a in argv if a.startswith("--backend=")]
    asked += [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--backend"]
    from mechsym.codegen.backend import require

    for name in asked:
        require(name)


def run(args) -> int:
    """Carry out one parsed command; returns its exit code."""
    from mechsym.loader import load_mechanism, model_commands, model_hooks
    from mechsym.core.output import stdout_stream
    from mechsym.system import derive

    if args.command == "sweep":
        from mechsym.sweep_cli import run as run_sweep

        return run_sweep(args)
    commands = model_commands()
    if args.command in commands:
        return commands[args.command].run(args)
    _check_outputs(args)
    from mechanisms import TREES

    if args.model in TREES or args.model.endswith(".urdf"):  # a spatial tree: params and export
        from mechsym.spatial.export import tree_command

        return tree_command(args, TREES.get(args.model, args.model))
    from mechsym import warm
    from mechsym.sweep_warm import watch

    with watch() as warm.BUILDS[args.model]:  # the files the build reads, which a warm repeat checks
        mech = load_mechanism(args.model)
    params = dict(args.param)
    if model_hooks(args.model).get(args.command) is not None:  # the model computes this command itself
        return _output(args, *compute(args, None, params))
    if args.command == "kinematics" and args.frame not in (None, mech.fixed):
        raise InputError(f"model '{args.model}' reports kinematics in the frame of its fixed body '{mech.fixed}' "
                         f"only, not '{args.frame}'")
    if args.command == "params":
        values = mech.resolve_parameters(params)
        data = _params_json(mech, values)
        with stdout_stream() as out:
            print(json.dumps(data, indent=2) if args.json else _params_text(data), file=out)
        return 0
    system = derive(mech, backend=getattr(args, "backend", "numpy"))  # params, equations, export: no evaluation
    system.params(params)  # validate before any work
    if args.command == "equations":
        system.solver(params).reference()  # a wrong mobility is refused here as by every other command
        with stdout_stream() as out:
            print(system.equations_text(latex=args.latex), file=out)
        return 0
    if args.command == "export":
        from mechsym.codegen.export import export

        written = export(system, args.out, force=args.force, params=params)
        from mechsym.core.output import announce

        for path in written:
            announce(f"wrote {path}")
        if not written:
            print(f"{args.out} is up to date")
        return 0
    table, system = compute(args, system, params)
    return _output(args, table, system)


def compute(args, system, params):
    """(table, system to draw with) of a generic command (inverse, kinematics, forward) with its parsed
    options: the model's own hook where it has one (any command), else the derived System's analysis."""
    from mechsym.loader import model_hooks

    hook = model_hooks(args.model).get(args.command)
    if hook is not None:  # the model computes this command's table itself (e.g. switching between builds)
        if args.command == "inverse" and not args.quasi_static and not args.omega:
            raise InputError("inverse needs --omega (or --quasi-static)")
        table, drawn = hook(_with_omega(args), params)
        if args.command == "inverse" and args.quasi_static:
            table.columns.pop("omega", None)
        if args.command == "kinematics" and args.omega is not None:
            from mechsym.rates import coefficients_to_rates

            table = coefficients_to_rates(table, args.omega, args.alpha)
        return table, drawn
    if args.command in ("inverse", "kinematics"):
        _check_memory(args, system)
        theta = args.theta0 + 2 * np.pi * np.arange(args.samples) / args.samples
    if args.command == "inverse":
        if args.quasi_static:  # no inertia: the speed does not enter, and no omega column is written
            table = system.inverse(theta, 0.0, 0.0, params, inertia=False)
            del table.columns["omega"]
        elif not args.omega:
            raise InputError("inverse needs --omega (or --quasi-static)")
        else:
            table = system.inverse(theta, args.omega, args.alpha, params)
            from mechsym import warm

            warm.record(args, system, table)  # what a warm repeat of this command needs
    elif args.command == "kinematics":
        one = len(system.coordinate_names) == 1  # coefficients d/dtheta exist for one driven coordinate
        table = system.kinematics_table(theta, params, rates=one or args.omega is not None, omega=args.omega,
                                        alpha=args.alpha)
    elif args.command == "forward":
        table = system.forward(args.torque, args.theta0, args.omega0, args.t_end, dt=args.dt, rtol=args.rtol,
                               atol=args.atol, params=params, dense_output=False)  # the CSV needs the grid only
        if args.all:
            kin = system.kinematics_table(table[system.coordinate_names[0]], params)
            table.columns.update({k: v for k, v in kin.columns.items() if k not in table.columns})
            table.units.update(kin.units)
    return table, system


def _with_omega(args):
    """A model hook's arguments: a quasi-static inverse at omega 0 (its speed does not enter)."""
    if args.command == "inverse" and args.quasi_static:
        import argparse

        return argparse.Namespace(**dict(vars(args), omega=[0.0], alpha=0.0))
    return args


def _check_memory(args, system):
    """The memory of inverse or kinematics over --samples, refused before the samples are made."""
    from mechsym.core.budget import check_memory
    from mechsym.dynamics import inverse_memory
    from mechsym.kinematics import sweep_memory

    name, n = system.mechanism.name, args.samples
    if args.command == "inverse":
        speeds = 1 if args.quasi_static or not args.omega else len(args.omega)  # quasi-static: one, at rest
        check_memory(f"inverse of '{name}' at {n} samples x {speeds} speed{'s' * (speeds > 1)}",
                     inverse_memory(system, n, speeds))
    else:
        columns = 1 + len(system.constraints.q) + 2 * len(system.kin.point_names)
        check_memory(f"kinematics of '{name}' at {n} samples",
                     sweep_memory(len(system.constraints.q), n) + 16 * n * columns)


def _check_outputs(args):
    """The generic commands' output files, refused before any work if they cannot be written; a forward
    run's time and tolerance options checked."""
    from mechsym.cli_args import check_command_outputs, run_options
    from mechsym.core.output import FOLDER, check_outputs

    if args.command == "export":
        check_outputs(("--out", args.out, FOLDER))
    elif args.command in ("inverse", "forward", "kinematics"):
        check_command_outputs(args)
    if args.command == "forward":
        run_options(args)


def _output(args, table, system):
    """Write, print, plot or animate the table of a generic command."""
    from mechsym.cli_args import write_outputs
    from mechsym.core.results import Table

    mech = system.mechanism
    coord = system.coordinate_names[0]
    drawings = []
    if args.command == "inverse":
        groups = "omega" if "omega" in table else None
        drawings.append((args.plot, lambda p: table.plot(p, coord, [mech.coordinates[0].force], groups=groups)))
    elif args.command == "kinematics":
        from mechsym.core.plotting import animate_kinematics, draw_kinematics

        drawings.append((args.plot, lambda p: draw_kinematics(system, table, p)))
        drawings.append((args.animate, lambda p: animate_kinematics(system, table, p, trace=system.kin.point_names)))
    elif args.command == "forward":
        drawings.append((args.plot, lambda p: table.plot(p, "t", [coord])))
        if not args.all:
            table = Table({n: table[n] for n in ("t", coord, "omega")}, table.units, table.title)
    write_outputs(table, args.out, drawings=drawings, stdout=True)
    return 0


def _params_text(data):
    """`params` without --json: the same content as lines to read."""
    lines = [f"model {data['model']}", "parameters:"]
    width = max((len(n) for n in data["parameters"]), default=0)
    lines += [f"  {n:<{width}} = {v:.10g} {data['units'].get(n) or ''}".rstrip() for n, v in data["parameters"].items()]
    lines.append("bodies:")
    for name, b in data["bodies"].items():
        com = ", ".join(f"{c:.6g}" for c in b["com"])
        lines.append(f"  {name}: mass {b['mass']:.6g} kg, inertia {b['inertia']:.6g} kg m^2, centre of mass ({com}) m")
    lines.append("coordinates:")
    lines += [f"  {c['name']} ({c['unit']}) at joint {c['joint']}, force {c['force']}" for c in data["coordinates"]]
    return "\n".join(lines)


def _params_json(mech, values):
    subs = {mech.parameters[n].symbol: v for n, v in values.items()}
    bodies = {}
    for b in mech.bodies:  # the moving bodies, and the fixed one when it has mass (a supporting foot)
        body = mech.bodies[b]
        if b == mech.fixed and body.mass == 0:
            continue
        bodies[b] = {
            "mass": float(body.mass.subs(subs)),
            "inertia": float(body.inertia.subs(subs)),
            "com": [float(c.subs(subs)) for c in body.com],
            "points": {k: [float(c.subs(subs)) for c in v] for k, v in body.points.items()},
        }
    return {
        "model": mech.name,
        "parameters": values,
        "units": {n: p.unit for n, p in mech.parameters.items()},
        "bodies": bodies,
        "coordinates": [{"name": c.name, "joint": c.joint, "force": c.force, "unit": c.unit} for c in mech.coordinates],
    }


if __name__ == "__main__":
    sys.exit(main())
