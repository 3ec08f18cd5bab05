"""The `mechsym` command: the same analyses as the Python API, on a shipped model or a model file.

Bad input prints one line `error: ...` and exits with 2; a traceback appears only with --debug.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import threading

from mechsym.app.options import (Parser, add_max_memory, analysis_options, animation_group, backend_group,
                                 check_command_outputs, forward_options, inverse_options, kinematics_options,
                                 output_group, param, plot_group, run_options, urdf_options, write_outputs)
from mechsym.core import __version__
from mechsym.core.errors import InputError
from mechsym.core.parameters import params_text
from mechsym.studies.analyses import ANALYSES


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every command (generic, sweep and the shipped models' own)."""
    parser = Parser(prog="mechsym", description="Symbolic analysis of planar mechanisms.")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    parser.add_argument("--version", action="version", version=f"mechsym {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)

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

    from mechsym.app import registry
    from mechsym.app.sweep_cli import configure as configure_sweep

    configure_sweep(sub.add_parser("sweep", help="one analysis or model study over a grid of parameter values"))
    from mechsym.app import view_cli

    view = sub.add_parser("view", help=view_cli.HELP)
    view.add_argument("--debug", action="store_true", help="show tracebacks")
    view_cli.configure(view)

    # commands that belong to one shipped model (the registry's commands: name -> module with HELP,
    # configure(parser) and run(args) -> exit code)
    for name, module in registry.commands().items():
        p = sub.add_parser(name, help=module.HELP)
        p.add_argument("--debug", action="store_true", help="show tracebacks")
        module.configure(p)
    add_max_memory(parser)
    return parser


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
            from mechsym.app import warm

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
    action. Outside the main thread (a command run from a thread) nothing changes.

    Python drops an exception raised where it cannot propagate: the signal may come while a process is
    forked, in an at-fork hook (logging's), or in a __del__ or a weakref callback. So after the first
    signal a watcher looks at the main thread every 0.1 s: seen twice handling no exception while the
    command still runs, the interrupt was lost and is raised again."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    import _thread

    pid, main_id = os.getpid(), threading.main_thread().ident
    ended, again = threading.Event(), []

    def interrupt(signum, frame):
        if os.getpid() != pid:
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        if not received or again:
            if not received:
                received.append(signum)
                threading.Thread(target=watch, args=(signum,), daemon=True).start()
            again.clear()
            raise KeyboardInterrupt

    def watch(signum):
        quiet = 0
        while not ended.wait(0.1):
            handled = sys._current_exceptions().get(main_id)   # an exc_info tuple before Python 3.12
            handled = handled[1] if isinstance(handled, tuple) else handled
            quiet = quiet + 1 if handled is None else 0
            if quiet >= 2:
                again.append(True)
                _thread.interrupt_main(signum)
                quiet = 0

    previous = {s: signal.signal(s, interrupt) for s in TERMINATING}
    try:
        yield
    finally:
        ended.set()
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
    from mechsym.app import registry, warm
    from mechsym.core.derived import derive
    from mechsym.core.output import stdout_stream
    from mechsym.studies.analyses import analyse
    from mechsym.studies.sweep_warm import watch

    if args.command == "sweep":
        from mechsym.app.sweep_cli import run as run_sweep

        return run_sweep(args)
    if args.command == "view":
        from mechsym.app.view_cli import run as run_view

        return run_view(args)
    commands = registry.commands()
    if args.command in commands:
        return commands[args.command].run(args)
    _check_outputs(args)
    tree = registry.tree(args.model)
    loops = _closed_loops(tree)
    if loops is not None:  # a spatial closed-loop mechanism: params, kinematics, inverse, forward
        return _loop_command(args, loops)
    if tree is not None:  # a spatial tree: params and export
        from mechsym.spatial.export import tree_command

        return tree_command(args, tree)
    model = registry.find(args.model)
    with watch() as warm.BUILDS[args.model]:  # the files the build reads, which a warm repeat checks
        mech = model()
    if getattr(mech, "closures", None):  # a model file declaring a spatial closed-loop mechanism (a Tree)
        return _loop_command(args, mech)
    params = dict(args.param)
    hook = model.hooks().get(args.command)
    if hook is not None:  # the model computes this command itself (or refuses it, naming what applies)
        opts = analysis_options(args) if args.command in ANALYSES else args
        return _output(args, *analyse(opts, None, params, hook, getattr(args, "backend", "c")))
    if args.command == "kinematics" and args.frame not in (None, mech.fixed):
        raise InputError(f"model '{args.model}' reports kinematics in the frame of its fixed body '{mech.fixed}' "
                         f"only, not '{args.frame}'")
    if args.command == "params":
        values = mech.resolve_parameters(params)
        data = _params_json(mech, values)
        with stdout_stream() as out:
            print(json.dumps(data, indent=2) if args.json else params_text(data), file=out)
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
        from mechsym.core.output import announce_written

        announce_written(written, args.out)
        return 0
    table, system = analyse(analysis_options(args), system, params)
    if args.command == "inverse" and not args.quasi_static:
        warm.record(args, system, table)  # what a warm repeat of this command needs
    return _output(args, table, system)


def _closed_loops(tree):
    """The declaration of a shipped spatial model whose loops are closed (Tree.close), else None."""
    if tree is None or tree.endswith(".urdf"):
        return None
    import importlib

    declared = importlib.import_module(tree).build()
    return declared if declared.closures else None


def _loop_command(args, tree) -> int:
    """`params`, `equations`, `kinematics`, `inverse`, `forward` and `export` of a spatial closed-loop mechanism
    (one driven coordinate; mechsym.spatial.loop_tables, mechsym.studies.analyses.loop_analysis)."""
    from mechsym.core.output import stdout_stream
    from mechsym.spatial import loop_tables
    from mechsym.spatial.export import tree_json
    from mechsym.spatial.loop_kinematics import LoopSolver
    from mechsym.spatial.loops import LoopSystem
    from mechsym.studies.analyses import loop_analysis

    params = dict(args.param)
    system = LoopSystem(tree, backend=getattr(args, "backend", "numpy"))
    solver = LoopSolver(system, params)
    if args.command == "params":
        data = loop_tables.params_json(solver, tree_json(system.tree, tree.resolve_parameters(params)))
        with stdout_stream() as out:
            print(json.dumps(data, indent=2), file=out)
        return 0
    if args.command == "equations":
        system.check_mobility(solver.close(), solver.scale)  # drives that do not match the mobility: refused
        with stdout_stream() as out:
            print(system.equations_text(latex=args.latex), file=out)
        return 0
    if args.command == "export":
        from mechsym.core.output import announce_written
        from mechsym.spatial.export import export, loop_states

        states = loop_states(solver)
        system.tree.set_params(params)
        written = export(system.tree, args.out, force=args.force, loops=(system, *states))
        announce_written(written, args.out)
        return 0
    if args.command == "kinematics" and getattr(args, "animate", None):
        raise InputError(f"model '{args.model}': kinematics of a spatial mechanism is drawn as a plot, without "
                         f"--animate")
    opts = analysis_options(args)
    table = loop_analysis(system, opts, params)
    coordinate = loop_tables.one_drive(solver)
    y = [system.force_names[0] if args.command == "inverse" else coordinate]
    x = "t" if args.command == "forward" else coordinate
    write_outputs(table, args.out, drawings=[(args.plot, lambda p: table.plot(p, x, y))], stdout=True)
    return 0


def _check_outputs(args):
    """The generic commands' output files, refused before any work if they cannot be written; a forward
    run's time and tolerance options checked."""
    from mechsym.core.output import FOLDER, check_outputs

    if args.command == "export":
        check_outputs(("--out", args.out, FOLDER))
    elif args.command in ("inverse", "forward", "kinematics"):
        check_command_outputs(args)
    if args.command == "forward":
        run_options(args)


def _output(args, table, system):
    """Write, print, plot or animate the table of a generic command."""
    from mechsym.core.results import Table

    mech = system.mechanism
    coord = system.coordinate_names[0]
    drawings = []
    if args.command == "inverse":
        drawings.append((args.plot, lambda p: table.plot(p, coord, [mech.coordinates[0].force])))
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
