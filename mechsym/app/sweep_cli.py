"""`mechsym sweep ANALYSIS MODEL ...`: one analysis (inverse, kinematics, forward, with their options and
--reduce FUNC:COLUMN) or one model study over a grid of parameter values, on one core, a local process
pool (--workers N) or a dask.distributed cluster (--scheduler ADDRESS); one CSV row per parameter set."""
from __future__ import annotations

import sys

from mechsym.app import registry
from mechsym.app.options import (analysis_options, backend_group, forward_options, inverse_options,
                                 kinematics_options, output_group, plot_group, positive_int, write_outputs)
from mechsym.core.errors import InputError
from mechsym.studies import TableStudy, axis, plot, sweep

GENERIC = ("inverse", "kinematics", "forward")


def configure(parser):
    """Add the sweep's analyses and the shipped models' studies (the registry's) with their options to the
    `sweep` parser."""
    sub = parser.add_subparsers(dest="analysis", required=True, parser_class=type(parser))
    options = {"inverse": inverse_options, "kinematics": kinematics_options, "forward": forward_options}
    for name in GENERIC:
        p = sub.add_parser(name, help=f"the {name} analysis per parameter set, reduced to figures")
        p.add_argument("model", help="shipped model name or path to a .py file declaring a mechanism")
        options[name](p)
        p.add_argument("--reduce", action="append", default=[], required=True, metavar="FUNC:COLUMN",
                       help="a figure per set: max, min, mean, rms, ptp, absmax or final of a column (repeatable)")
        _common(p)
    for name, study in registry.studies().items():
        p = sub.add_parser(name, help=study.HELP)
        p.add_argument("model", help=f"the model this study belongs to ({study.MODEL})")
        study.configure(p)
        _common(p)


def _common(p):
    p.add_argument("--param", action="append", default=[], required=True, metavar="NAME=START:STOP:N|NAME=a,b,c",
                   help="a swept parameter: N values from START to STOP inclusive, or a list (repeat for a grid)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--workers", type=positive_int, help="run on a local pool of N processes")
    where.add_argument("--scheduler", metavar="ADDRESS", help="run on a dask.distributed cluster (tcp://host:port)")
    p.add_argument("--chunk", type=positive_int,
                   help="parameter sets per task (default: about one second of work, measured on the first tasks)")
    p.add_argument("--max-sets", type=positive_int, default=1_000_000, help="refuse larger grids (default 10^6)")
    backend_group(p)
    output_group(p, help="CSV (or .parquet): the parameters, the figures, status, message (one row per set), "
                         "streamed into OUT.part as tasks finish and written in grid order at the end")
    p.add_argument("--resume", action="store_true",
                   help="continue the interrupted sweep whose rows are in OUT.part: compute only the missing sets")
    plot_group(p, help="PNG/SVG: a line per figure over one parameter, a heat map per figure over two")
    p.add_argument("--debug", action="store_true", help="show tracebacks")


def run(args) -> int:
    """Carry out `mechsym sweep`; returns the exit code."""
    axes = dict(axis(text) for text in args.param)
    if len(axes) != len(args.param):
        raise InputError("a parameter is swept twice (one --param per name)")
    model = registry.find(args.model)
    study = _study(args, model)
    if args.plot and len([n for n, v in axes.items() if len(v) > 1]) > 2:
        raise InputError("--plot draws one or two varying parameters (a line or a heat map)")
    from mechsym.core.output import CSV, FIGURE, check_outputs

    check_outputs(("--out", args.out, CSV), ("--plot", args.plot, FIGURE))
    client = None
    executor = None
    if args.scheduler:
        try:
            from distributed import Client
        except ImportError:
            raise InputError("--scheduler needs dask.distributed (pip install 'dask[distributed]')") from None
        try:
            client = Client(args.scheduler, timeout="10s")
        except (OSError, TimeoutError, ValueError) as exc:  # ValueError: not an address (tcp://host:port)
            raise InputError(f"cannot reach the scheduler at '{args.scheduler}': {exc}") from None
        executor = client.get_executor()
    from mechsym.core.output import part_path

    streamed = bool(args.out) and part_path(args.out) is not None  # a file, not a device or stdout
    if args.resume and not streamed:
        raise InputError("--resume continues the sweep streamed into --out FILE: give --out with a file name")
    try:
        found = sweep(model, axes, study, backend=args.backend, executor=executor, workers=args.workers,
                      chunk=args.chunk, max_sets=args.max_sets, out=args.out if streamed else None,
                      resume=args.resume)
    finally:
        if client is not None:
            client.close()
    if streamed:
        return _streamed(found, args, axes)
    table = found
    failed = [m for s, m in zip(table["status"], table["message"]) if s != "ok"]
    if len(failed) == len(table):
        raise InputError(f"every parameter set failed; the first: {failed[0]}")
    write_outputs(table, args.out, drawings=[(args.plot, lambda path: plot(table, path, list(axes)))], stdout=True)
    if failed:
        print(f"note: {len(failed)} of {len(table)} parameter sets failed (see status and message); the first: "
              f"{failed[0]}", file=sys.stderr)
    return 0


def _streamed(found, args, axes) -> int:
    """Report a sweep streamed into --out (and draw --plot from the file)."""
    import os

    from mechsym.core.output import announce, part_path

    if found.failed == found.sets:
        os.unlink(part_path(found.path))  # nothing worth resuming
        raise InputError(f"every parameter set failed; the first: {found.first_failure}")
    announce(f"wrote {found.path} ({found.sets} rows)")
    if args.plot:  # from the .part, which stays until the command's files are in place
        from mechsym.studies.sweep_stream import read_part

        plot(read_part(part_path(found.path)), args.plot, list(axes))
        announce(f"wrote {args.plot}")
    if found.failed:
        print(f"note: {found.failed} of {found.sets} parameter sets failed (see status and message); the first: "
              f"{found.first_failure}", file=sys.stderr)
    return 0


def _study(args, model):
    """The study of the parsed sweep: a shipped model's own, or the generic analysis (computed by the
    model's hook where it has one) reduced to figures."""
    studies = registry.studies()
    if args.analysis in studies:
        cls = studies[args.analysis]
        if args.model != cls.MODEL:
            raise InputError(f"study '{args.analysis}' belongs to model '{cls.MODEL}', not '{args.model}'")
        return cls.from_args(args)
    return TableStudy(analysis_options(args), tuple(args.reduce), model.hooks().get(args.analysis))

