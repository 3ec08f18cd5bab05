"""`mechsym view MODEL --out FILE.html`: an interactive view in the browser, one self-contained HTML file
(mechsym.core.view; docs/view.md). MODEL is a planar model (shipped name or model file: the linkage over
one revolution, or through a --run), a shipped tree or a URDF file (its bodies, or a --run replayed), or a
sweep's table (.csv or .parquet: its figures over the parameters). A planar model whose declaration does
not cover the view has a hook `view` in its CLI_HOOKS, hook(args, params, backend) -> a plotly Figure (or
an InputError naming its own command: the UGV's `mechsym ugv view`)."""
from __future__ import annotations

import os

from mechsym.app.options import backend_group, number, output_group, param, positive_int, urdf_options
from mechsym.core.errors import InputError

HELP = "an interactive view in the browser (one self-contained HTML file)"
TABLES = (".csv", ".parquet")


def configure(p):
    """The options of `mechsym view`."""
    p.add_argument("model", help="shipped model name, model file (.py), shipped tree or URDF file, or a sweep's "
                                 "table (.csv, .parquet)")
    p.add_argument("--param", action="append", type=param, default=[], metavar="NAME=VALUE")
    p.add_argument("--run", help="CSV of a run to replay: planar, a table with the driven coordinate (inverse, "
                                 "kinematics, forward --all); a tree, the base and joint columns (and the "
                                 "contact forces CONTACT.fn, .ft1, .ft2 drawn as arrows)")
    p.add_argument("--omega", type=number, help="planar, without --run: the inverse table at this crank speed "
                                                "[rad/s] beside the linkage (default: the kinematics table)")
    p.add_argument("--samples", type=positive_int, default=360, help="planar, without --run: samples over one "
                                                                      "revolution (360)")
    p.add_argument("--columns", help="planar: comma-separated columns drawn against the driven coordinate "
                                     "(default: its force, else the body angles); a sweep: the figures shown")
    p.add_argument("--trace", help="planar: comma-separated points whose paths are drawn (default: every point "
                                   "of a moving body)")
    p.add_argument("--parameters", help="a sweep: its parameter columns (default: the leading columns that make "
                                        "its grid)")
    p.add_argument("--frames", type=positive_int, help="at most this many frames (default 400, fewer where the "
                                                        "file would exceed 10 MB)")
    p.add_argument("--axes", action="store_true", help="a tree: show the frames' axes from the start (else one "
                                                       "click on 'frame axes' in the legend)")
    urdf_options(p)
    backend_group(p)
    output_group(p, help="HTML file", required=True)


def _names(text):
    return [n.strip() for n in text.split(",") if n.strip()] if text else None


def run(args) -> int:
    """Write the view of parsed `args` (exit code 0); the output checked and plotly present before any work."""
    from mechsym.app import registry
    from mechsym.core.output import PAGE, announce, check_outputs

    check_outputs(("--out", args.out, PAGE))
    from mechsym.core.view.page import plotly

    plotly()  # the extra is there, before any derivation
    if args.run is not None and not os.path.isfile(args.run):
        raise InputError(f"--run '{args.run}' does not exist")
    if args.model.lower().endswith(TABLES):
        size = _sweep(args)
    elif registry.tree(args.model) is not None:
        size = _tree(args, registry.tree(args.model))
    else:
        size = _planar(args, registry.find(args.model))
    announce(f"wrote {args.out} ({size / 1e6:.1f} MB)")
    return 0


def _read(path):
    """A table from a CSV (mechsym.core.results.read_csv) or a Parquet file (pandas, through pyarrow)."""
    from mechsym.core.results import Table, read_csv

    if not os.path.isfile(path):
        raise InputError(f"table '{path}' does not exist")
    try:
        if path.lower().endswith(".parquet"):
            import numpy as np
            import pandas as pd

            frame = pd.read_parquet(path)
            return Table({n: np.asarray(frame[n]) for n in frame.columns})
        return read_csv(path)
    except (OSError, ValueError, ImportError) as exc:
        raise InputError(f"table '{path}' cannot be read: {exc}") from None


def _sweep(args):
    from mechsym.core.view import sweep_figure, write_html

    fig = sweep_figure(_read(args.model), _names(args.parameters), _names(args.columns), title=args.model)
    return write_html(fig, args.out)


def _planar(args, model):
    from mechsym.core.derived import derive
    from mechsym.core.view import write_html
    from mechsym.studies.analyses import InverseOptions, KinematicsOptions, analyse

    params = dict(args.param)
    mech = model()
    hooks = model.hooks()
    if "view" in hooks:  # the model draws itself, or says which of its commands does
        return write_html(hooks["view"](args, params, args.backend), args.out)
    own = "kinematics" in hooks  # the model's own kinematics (PASIBOT's) gives the system it is drawn with
    system = None if own else derive(mech, backend=args.backend)
    if own or args.run is None:
        table, system = analyse(KinematicsOptions(samples=args.samples), system, params, hooks.get("kinematics"),
                                args.backend)
        positions = table
    if args.run is not None:
        table, positions = _read(args.run), None
    elif args.omega is not None:
        table, _ = analyse(InverseOptions(omega=[args.omega], samples=args.samples), None if own else system, params,
                           hooks.get("inverse"), args.backend)
    fig = system.view(None, table, positions, _names(args.columns), _names(args.trace), params=params,
                      frames=args.frames)
    return write_html(fig, args.out)


def _tree(args, source):
    from mechsym.core.derived import derive
    from mechsym.core.view import write_html

    if source.endswith(".urdf"):
        from mechsym.spatial.urdf import read_urdf

        tree, urdf = read_urdf(source, floating=args.floating, mimic=args.mimic, strict=args.strict), source
    else:
        import importlib

        module = importlib.import_module(source)
        tree, urdf = module.build(), getattr(module, "URDF", None)
    system = derive(tree, backend=args.backend)
    params = dict(args.param)
    system.params(params)
    run = _read(args.run) if args.run is not None else None
    fig = system.view(None, run, urdf, params=params, axes=args.axes, frames=args.frames)
    return write_html(fig, args.out)
