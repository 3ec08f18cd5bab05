"""The command line's parser, its value types and the options every command shares, as argparse groups,
and the one writer of a command's outputs.

`Parser` is argparse with mechsym's errors; `angle`, `number`, `positive_int` and `param` read option
values; `inverse_options`, `kinematics_options` and `forward_options` are the generic analyses' options
(also those of `mechsym sweep`), with the defaults of mechsym.studies.analyses, whose typed options
`analysis_options(args)` builds from them.

A command adds its time, tolerance, output, plot, animation and backend options through the functions
here, each with its own default and help where it differs, so that the same option means the same thing
(name, type, unit, checks) in every command: `--t-end` and `--dt` in seconds, `--rtol`/`--atol` (atol
defaulting to rtol), `--out`, `--plot` (PNG/SVG), `--animate` (GIF/MP4), `--backend` (numpy or c). Each
option so made carries the name of its group in `SHARED` (tests check every command by introspection).
`run_options(args)` checks the time and tolerance options once, naming them as typed (mechsym.core.timegrid);
`write_outputs` writes the table and draws the pictures, each file atomically, and says what it wrote
once the files are in place (mechsym.core.output.announce).
"""
from __future__ import annotations

import argparse
import dataclasses
import math
import re

from mechsym.core.errors import InputError
from mechsym.core.output import ANIMATION, CSV, FIGURE, announce, check_outputs, stdout_stream
from mechsym.core.results import write_csv
from mechsym.core.timegrid import CLI_NAMES, run_options as _run_options
from mechsym.studies.analyses import OPTIONS, ForwardOptions, InverseOptions, KinematicsOptions

__all__ = ["Parser", "angle", "number", "positive_int", "param", "SHARED", "time_group", "tolerance_group",
           "output_group", "plot_group", "animation_group", "backend_group", "inverse_options", "forward_options",
           "kinematics_options", "urdf_options", "add_max_memory", "analysis_options", "run_options",
           "check_command_outputs", "write_outputs", "write_contact_outputs"]

SHARED = "_mechsym_shared"  # attribute of an argparse action made here: the name of its group


class Parser(argparse.ArgumentParser):
    """argparse with mechsym's errors: an InputError (one line, exit 2); a value that starts with '-'
    followed by a digit, a point or inf/nan (`--omega -inf`, `--theta0 -90deg`, `--v0 -1,0,0`) is a
    value, never an option; a `--param NAME=VALUE` given twice for one name is refused (which one was
    meant?)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = re.compile(r"^-(\d|\.\d|inf|nan)", re.IGNORECASE)

    def error(self, message):
        """A refused command line: bad input, one line (argparse's own would exit)."""
        raise InputError(message)

    def parse_known_args(self, args=None, namespace=None):
        """argparse's, then a --param given twice for one name refused."""
        namespace, rest = super().parse_known_args(args, namespace)
        given = [p for p in getattr(namespace, "param", None) or () if isinstance(p, tuple)]
        names = [name for name, _ in given]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            values = [v for n, v in given if n == repeated[0]]
            raise InputError(f"--param {repeated[0]} is given {len(values)} times ({', '.join(values)}); give it once")
        return namespace, rest


def _checked(text, convert, unreadable: str, check, refused):
    """convert(text), or argparse's one-line error: `unreadable` where it does not convert, refused(value) where
    check(value) fails."""
    try:
        value = convert(text)
    except ValueError:
        raise argparse.ArgumentTypeError(unreadable) from None
    if not check(value):
        raise argparse.ArgumentTypeError(refused(value))
    return value


def angle(text: str) -> float:
    """An angle in radians, or in degrees with the suffix 'deg'."""
    s = str(text).strip()
    return _checked(s, lambda t: math.radians(float(t[:-3])) if t.endswith("deg") else float(t),
                    f"not an angle: '{text}' (radians, or degrees with 'deg')", math.isfinite,
                    lambda _: f"angle '{text}' is not finite")


def number(text: str) -> float:
    """A finite number from the command line."""
    return _checked(text, float, f"not a number: '{text}'", math.isfinite, lambda _: f"'{text}' is not finite")


def positive_int(text: str) -> int:
    """A whole number of at least 1 from the command line."""
    return _checked(text, int, f"not a whole number: '{text}'", lambda v: v >= 1,
                    lambda v: f"must be at least 1, got {v}")


def param(text: str):
    """(name, value text) from 'NAME=VALUE'."""
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got '{text}'")
    return name.strip(), value.strip()


def _group(parser, name):
    """The parser's argument group `name`, made on first use (a command may add several shared options)."""
    for group in parser._action_groups:
        if group.title == name:
            return group
    return parser.add_argument_group(name)


def _add(parser, name, *flags, **kwargs):
    action = _group(parser, name).add_argument(*flags, **kwargs)
    setattr(action, SHARED, name)
    return action


def time_group(parser, t_end=None, required=False, dt=True, t_end_help="end time [s]"):
    """--t-end (seconds; `t_end` the default, or `required`) and, with `dt`, --dt (the output step,
    default t_end/1000)."""
    kwargs = {"required": True} if required else {"default": t_end}
    if t_end is not None and not required:
        t_end_help = f"{t_end_help} ({t_end:g})"
    _add(parser, "time", "--t-end", type=number, help=t_end_help, **kwargs)
    if dt:
        _add(parser, "time", "--dt", type=number, help="output step [s] (default t_end/1000)")


def tolerance_group(parser, rtol=1e-9, atol=True):
    """--rtol (default `rtol`) and, with `atol`, --atol (default: rtol), in the state's SI units."""
    _add(parser, "tolerances", "--rtol", type=number, default=rtol, help=f"relative tolerance ({rtol:g})")
    if atol:
        _add(parser, "tolerances", "--atol", type=number, help="absolute tolerance (default: rtol)")


def output_group(parser, help="CSV file", required=False):
    """--out: the command's main output (a CSV unless `help` says otherwise)."""
    _add(parser, "output", "--out", required=required, help=help)


def plot_group(parser, help="PNG/SVG of the result"):
    """--plot: a PNG or SVG figure."""
    _add(parser, "plot", "--plot", help=help)


def animation_group(parser, help="GIF/MP4 of the motion"):
    """--animate: a GIF, or an MP4 with ffmpeg."""
    _add(parser, "animation", "--animate", help=help)


def backend_group(parser, default="c", help="evaluation backend (default c)"):
    """--backend: numpy or c."""
    _add(parser, "backend", "--backend", choices=["numpy", "c"], default=default, help=help)


def inverse_options(p):
    """The options of `inverse` (also those of `sweep inverse`)."""
    p.add_argument("--omega", action="append", type=number,
                   help="crank speed [rad/s] (repeatable; required unless --quasi-static)")
    p.add_argument("--alpha", type=number, default=InverseOptions.alpha, help="crank acceleration [rad/s^2]")
    p.add_argument("--samples", type=positive_int, default=InverseOptions.samples)
    p.add_argument("--theta0", type=angle, default=InverseOptions.theta0,
                   help="first sample of the driven coordinate, whatever its name (theta, theta8, ...)")
    p.add_argument("--quasi-static", action="store_true", help="drop the inertia terms (no --omega, no omega column)")
    p.add_argument("--reactions", choices=["determined", "min-norm"], default=InverseOptions.reactions,
                   help="a spatial loop's reactions where redundant constraints leave some undetermined: only the "
                        "determined ones (default), or every one, the minimum-norm completion")


def forward_options(p):
    """The options of `forward` (also those of `sweep forward`)."""
    p.add_argument("--torque", type=number, required=True)
    p.add_argument("--theta0", type=angle, default=ForwardOptions.theta0,
                   help="start value of the driven coordinate, whatever its name (theta, theta8, ...)")
    p.add_argument("--omega0", type=number, default=ForwardOptions.omega0)
    time_group(p, required=True)
    tolerance_group(p, rtol=ForwardOptions.rtol)
    p.add_argument("--all", action="store_true",
                   help="write every body coordinate and point along the run, not only t, the coordinate and omega")


def kinematics_options(p):
    """The options of `kinematics` (also those of `sweep kinematics`)."""
    p.add_argument("--samples", type=positive_int, default=KinematicsOptions.samples)
    p.add_argument("--theta0", type=angle, default=KinematicsOptions.theta0,
                   help="first sample of the driven coordinate, whatever its name (theta, theta8, ...)")
    p.add_argument("--frame", help="report in this frame (default: the fixed body's; a model may define others)")
    p.add_argument("--omega", type=number,
                   help="write velocities and accelerations at this speed [rad/s] instead of the coefficients")
    p.add_argument("--alpha", type=number, default=KinematicsOptions.alpha,
                   help="crank acceleration with --omega [rad/s^2]")


def urdf_options(parser):
    """How a MODEL.urdf is read (mechsym.spatial.urdf.read_urdf; docs/robots.md)."""
    group = parser.add_argument_group("a URDF file given as the model")
    group.add_argument("--floating", action="store_true",
                       help="a floating base (Pinocchio's free flyer) on the root link (default: fixed to the world)")
    group.add_argument("--mimic", choices=("model", "independent"), default="model",
                       help="mimic joints follow their joint (model, default) or are joints of their own")
    group.add_argument("--strict", action="store_true",
                       help="refuse inertias read with a warning, or violating the triangle inequality")


def add_max_memory(parser, root=True):
    """--max-memory on every command (each parser without subcommands of its own), and before the command
    on the root parser (`mechsym --max-memory 16G COMMAND ...`, stored as max_memory_before: see main)."""
    from mechsym.core.budget import add_option

    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    for action in subs:
        for child in dict.fromkeys(action.choices.values()):
            add_max_memory(child, root=False)
    if not subs:
        add_option(parser)
    if root:
        add_option(parser, dest="max_memory_before")


def analysis_options(args):
    """The typed options (mechsym.studies.analyses) of a parsed inverse, kinematics or forward command (or
    of `sweep inverse|kinematics|forward`)."""
    cls = OPTIONS[args.analysis if args.command == "sweep" else args.command]
    return cls(**{f.name: getattr(args, f.name) for f in dataclasses.fields(cls)})


def run_options(args, width=None, what="simulation", arrays=None):
    """The time and tolerance options of parsed `args`, checked once with the option names in the
    messages (--t-end, --dt, --rtol, --atol); returns mechsym.core.timegrid.RunOptions."""
    return _run_options(args.t_end, getattr(args, "dt", None), getattr(args, "rtol", None), getattr(args, "atol", None),
                        arrays=arrays, width=width, what=what, names=CLI_NAMES)


def check_command_outputs(args, out=CSV, *extra):
    """Refuse, before any work, the --out (of kind `out`), --plot, --animate and `extra` outputs
    ((option, path, kind)) of parsed `args` that cannot be written (mechsym.core.output.check_outputs)."""
    check_outputs(("--out", getattr(args, "out", None), out), ("--plot", getattr(args, "plot", None), FIGURE),
                  ("--animate", getattr(args, "animate", None), ANIMATION), *extra)


def write_outputs(table, out, note="", drawings=(), stdout=False):
    """Write `table` to the CSV `out` and say so ("wrote OUT (N rows, K columns)" and `note`, once the file
    is in place); without `out`, print it to stdout if `stdout` and no picture is drawn. Then draw each
    (path, draw) of `drawings` whose path is given (draw(path) writes the file) and say so."""
    drawings = [(path, draw) for path, draw in drawings if path]
    if out:
        table.to_csv(out)
        announce(f"wrote {out} ({len(table)} rows, {len(table.names)} columns){note}")
    elif stdout and not drawings:
        with stdout_stream() as fh:
            write_csv(fh, table.columns)
        return
    for path, draw in drawings:
        draw(path)
        announce(f"wrote {path}")


def write_contact_outputs(run, table, args, plot, animate) -> None:
    """What a contact command writes (`write_outputs`) after a mechsym.contact.run.ContactRun `run`: `table`
    to --out, and where asked the --timeline CSV, the --plot and the --animate files (drawn by the model's
    own `plot(run, path)` and `animate(run, path)`)."""
    st = run.stats
    note = f"; {st['events']} point state changes, {st['rhs_evaluations']} right-hand sides, {st['wall']:.2f} s"
    write_outputs(table, args.out, note, [(args.timeline, lambda p: run.timeline_table().to_csv(p)),
                                          (args.plot, lambda p: plot(run, p)), (args.animate, lambda p: animate(run, p))])
