"""The options every command shares, as argparse groups, and the one writer of a command's outputs.

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


import numpy as np

from mechsym.cli import number
from mechsym.core.output import ANIMATION, CSV, FIGURE, announce, check_outputs, stdout_stream
from mechsym.core.results import write_text_csv
from mechsym.core.timegrid import CLI_NAMES, run_options as _run_options

__all__ = ["SHARED", "time_group", "tolerance_group", "output_group", "plot_group", "animation_group",
           "backend_group", "run_options", "check_command_outputs", "write_outputs"]

SHARED = "_mechsym_shared"  # attribute of an argparse action made here: the name of its group


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
            if table.text_columns():
                write_text_csv(fh, table.columns)
            else:
                np.savetxt(fh, np.column_stack(list(table.columns.values())), delimiter=",",
                           header=",".join(table.names), comments="", fmt="%.17g")
        return
    for path, draw in drawings:
        draw(path)
        announce(f"wrote {path}")
