"""A warm `mechsym inverse MODEL --omega W ...` that imports neither sympy, scipy nor matplotlib.

After a run of the generic inverse command on the C backend at the default parameters, a manifest records
what a repeat of it needs besides the compiled library: the library's cache entry, the parameter vector,
the scales and tolerances of the kinematic solver, the configuration the sweep found at the first sample,
the unknowns' names and units and the sizes of the memory check. The manifest is keyed by the model file's
source, the source of every module of mechsym (mechsym.codegen.keys.package_source) and the CPU's features (the
library it names is built for them), and it keeps the SHA-256 of
every other file the model's build read (mechsym.studies.sweep_warm.watch), so any change to one of them makes it
unused. The repeat loads the library (its SHA-256 checked as for any cache entry) and makes the
same C call as the full route from the same inputs, so its table is identical; whatever the manifest does
not cover (other parameters, another first sample, a plot, a failure the full route would name) goes
the full route.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from mechsym.app import registry
from mechsym.app.options import (Parser, add_max_memory, backend_group, check_command_outputs, inverse_options,
                                 output_group, param, plot_group, write_outputs)
from mechsym.codegen import c_backend
from mechsym.codegen.c_library import CLibrary
from mechsym.codegen.backend import resolve
from mechsym.studies.sweep_warm import keyed_path, load_manifest, update_manifest, watched

VERSION = 2
BUILDS = {}  # model -> the files its build opened in this process (sweep_warm.watch, by mechsym.app.cli.run)


def parse(argv):
    """The parsed arguments of an `inverse` command line, as the full parser gives them (mechsym.app.cli), or
    None for any other command or a line it refuses (the full parser then reports it)."""
    if not argv or argv[0] != "inverse" or "-h" in argv or "--help" in argv:
        return None
    parser = Parser(prog="mechsym")
    parser.add_argument("--debug", action="store_true")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    p = sub.add_parser("inverse")
    p.add_argument("model")
    p.add_argument("--param", action="append", type=param, default=[], metavar="NAME=VALUE")
    backend_group(p)
    p.add_argument("--debug", action="store_true")
    inverse_options(p)
    output_group(p)
    plot_group(p)
    add_max_memory(parser)
    try:
        return parser.parse_args(argv)
    except Exception:  # noqa: BLE001 (refused here: the full parser names what is wrong)
        return None


def manifest_path(model: str) -> Path | None:
    """Where the manifest of `model` (a shipped name or a .py file) lives for the present sources; None for
    a spatial tree (the full route names what applies to it)."""
    if registry.tree(model) is not None:
        return None
    return keyed_path(registry.find(model), "inverse", VERSION)


def _applies(args) -> bool:
    return (args.command == "inverse" and not args.param and not args.plot and not args.quasi_static
            and bool(args.omega))


def _nothing(*args):
    """The numpy backend keeps no compiled library to start from: no manifest, no warm start."""
    return None


def record(args, system, table):
    """After the full route's inverse (`table`), write or extend the manifest of args.model, with the
    SHA-256 of the files its build opened in this process (BUILDS); on C only (what it names is the library)."""
    if _applies(args) and len(system.coordinate_names) == 1:
        system.backend.route(compiled=_record, python=_nothing)(args, system, table)


def _record(args, system, table):
    from mechsym.planar.dynamics import inverse_memory
    from mechsym.planar.kinematics import STEP_TOL, SUSPECT

    path = manifest_path(args.model)
    if path is None:
        return
    solver = system.solver()
    q0 = solver.sweep(np.array([[args.theta0]])).q[0]
    coord = system.coordinate_names[0]
    base = inverse_memory(system, 1, 0)
    update_manifest(path, {
        "version": VERSION, "entry": system.functions.path.name, "name": system.mechanism.name,
        "params": solver.params.tolist(), "col_scale": solver.col_scale.tolist(),
        "coord_scale": float(solver.coord_scale[0]), "hmax": float(solver.step[0]), "tol": STEP_TOL,
        "suspect": SUSPECT, "coordinate": coord, "names": [n for n in table.names if n not in (coord, "omega")],
        "units": table.units, "title": table.title,
        "memory": [base, inverse_memory(system, 1, 1) - base],
        "files": watched(BUILDS.get(args.model, ()), registry.find(args.model).file),
    }, args.theta0, q0)


def run(args):
    """The warm inverse: its exit code, or None where the manifest does not cover the request."""
    if not _applies(args):
        return None
    return resolve(args.backend, quiet=True).route(compiled=_run, python=_nothing)(args)


def _run(args):
    check_command_outputs(args)  # refused before any work, as on the full route

    m = load_manifest(manifest_path(args.model), VERSION)
    if m is None:
        return None
    q0 = m["start"].get(float.hex(float(args.theta0)))
    compiled = c_backend._load(c_backend._writable(c_backend.cache_dir()) / m["entry"])
    if q0 is None or compiled is None:
        return None
    from mechsym.core.budget import check_memory
    from mechsym.core.results import Table
    from mechsym.planar.inverse_kernel import compiled_columns, flagged, speed_weights

    n, omegas = args.samples, np.asarray(args.omega, float)
    check_memory(f"inverse of '{m['name']}' at {n} samples x {len(omegas)} speed{'s' * (len(omegas) > 1)}",
                 m["memory"][0] * n + m["memory"][1] * n * len(omegas))
    theta = args.theta0 + 2 * math.pi * np.arange(n) / n
    failed, coef, branch, columns, _ = compiled_columns(
        CLibrary(compiled), theta, np.array(m["params"]), np.array(q0), np.array(m["col_scale"]), m["tol"],
        m["hmax"], speed_weights(omegas, args.alpha))
    if failed >= 0 or flagged(coef, branch, m["coord_scale"], m["suspect"]).any():
        return None  # the full route names the sample and the reason
    cols = {m["coordinate"]: np.tile(theta, len(omegas)), "omega": np.repeat(omegas, len(theta))}
    cols.update(zip(m["names"], columns))
    if not all(np.isfinite(v).all() for v in cols.values()):
        return None
    write_outputs(Table(cols, m["units"], m["title"]), args.out, stdout=True)
    return 0
