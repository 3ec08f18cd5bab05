"""A sweep worker's warm start: the inverse and forward studies of a one-coordinate model on the C backend,
without sympy.

The process that starts a parallel sweep derives the model and compiles its library into the cache before
any task leaves (mechsym.studies.sweep.sweep); it then records here a manifest of what a worker needs besides the
library: the library's cache entry, the parameters (names, defaults, sign constraints, units), the bodies,
the unknowns' names and the model's `CompiledStart` (the reference assembly every set starts from, the
points' coordinates as expressions of the parameters for each set's scales). The manifest's name is a key
of the model file's source, of mechsym's sources (mechsym.codegen.keys.package_source) and of the CPU's features (the
library it names is built for them); inside, it lists every other file the model's build read (`watch`:
observed while it ran, a data file or a module it imported), each with its SHA-256, which a worker checks
before using the manifest, so a change to any of them makes it unused.

A worker (`batch`) evaluates every set, whatever its geometry, through the route of the derived model's
TableStudy.batch (mechsym.studies.sweep_sets.SET_ROUTES: the compiled ms_inverse_sets or ms_forward_sets, the
sets checked together, an inverse study's figures reduced together), from a `SetModel` made of the manifest
instead of the derived model, and leaves only the sets the kernel flags (a start that fails, a dead point:
their reason is named by the Python solver) and every set of a manifest that does not apply to the full
route, which derives the model. A kinematics study is not covered (its tables need the derived model).
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
import threading
import types
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from mechsym.codegen import c_backend
from mechsym.codegen.c_library import CLibrary
from mechsym.codegen.keys import cache_key, package_source
from mechsym.studies.figures import negative_mass

VERSION = 5
_WATCH = threading.local()
_HOOKED = []


def _on_event(event, args):
    opened = getattr(_WATCH, "files", None)
    if opened is not None and event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)):
        opened.add(os.fsdecode(args[0]))


@contextmanager
def watch():
    """The set of files opened in this thread while the block runs (an audit hook, installed once)."""
    if not _HOOKED:
        sys.addaudithook(_on_event)
        _HOOKED.append(True)
    outer = getattr(_WATCH, "files", None)
    _WATCH.files = set()
    try:
        yield _WATCH.files
    finally:
        seen, _WATCH.files = _WATCH.files, outer
        if outer is not None:
            outer |= seen


def model_file(source) -> Path | None:
    """The file that declares a model (what a sweep sends to its workers): a registry model's `file`, or
    the module of a build function; None for anything else."""
    if hasattr(source, "file"):
        return source.file
    if not isinstance(source, types.FunctionType):
        return None
    path = getattr(sys.modules.get(source.__module__), "__file__", None)
    return Path(path) if path else None


def keyed_path(source, kind, version) -> Path | None:
    """cache_dir()/warm/KIND-MODEL-KEY.json: KEY the cache key (mechsym.codegen.keys) of the model file,
    mechsym's sources and `version` (with what the cache's libraries are built for);
    None when the model has no file."""
    path = model_file(source)
    if path is None or not path.is_file():
        return None
    key = cache_key(path.read_bytes(), package_source(), str(version))
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in path.stem)
    return c_backend.cache_dir() / "warm" / f"{kind}-{name}-{key}.json"


def manifest_path(source) -> Path | None:
    """Where the sweep manifest of a model (a shipped name or a .py file) lives for the present sources."""
    return keyed_path(source, "sweep", VERSION)


def _sha(path) -> str | None:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


def watched(read, model_path) -> dict:
    """path -> SHA-256 of the files a build read that mechsym's own sources and installed packages do not
    cover, and of the modules loaded from the model file's folder."""
    skip = [Path(p).resolve() for p in {sys.prefix, sys.base_prefix, sys.exec_prefix}]
    skip.append(Path(c_backend.__file__).resolve().parent.parent)  # mechsym: in package_source
    folder = Path(model_path).resolve().parent
    files = set(read) | {m.__file__ for m in list(sys.modules.values())
                         if getattr(m, "__file__", None) and Path(m.__file__).resolve().parent == folder}
    out = {}
    for name in sorted(files):
        path = Path(name).resolve()
        if path.is_file() and not any(path.is_relative_to(s) for s in skip) and "__pycache__" not in path.parts:
            out[str(path)] = _sha(path)
    return out


def unchanged(files) -> bool:
    """Whether every file of `watched` still has its recorded SHA-256."""
    return all(_sha(path) == sha for path, sha in files.items())


def load_manifest(path, version) -> dict | None:
    """The manifest at `path` if it is of `version` and every file it watches is unchanged, else None."""
    try:
        m = json.loads(path.read_text()) if path is not None else None
    except (OSError, ValueError):
        return None
    if not m or m.get("version") != version or not unchanged(m.get("files", {})):
        return None
    return m


def update_manifest(path, fields, theta0=None, q0=None):
    """Write `fields` into the manifest at `path` (kept: the starting configurations recorded before), with
    the configuration q0 at the first sample theta0 if given, atomically; a cache folder that cannot be
    written leaves no warm start and loses nothing else."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        data = {}
    data.update(fields)
    if q0 is not None:
        data.setdefault("start", {})[float.hex(float(theta0))] = np.asarray(q0).tolist()
    try:
        c_backend._write_atomic(path, json.dumps(data))
    except OSError:
        pass


def record(ref, study, system, read):
    """Write (or extend) the manifest of ref's model after the parent derived `system`, for `study` (a
    TableStudy); `read`: the files its build opened (`watch`). Nothing for what the warm start does not
    cover."""
    path = manifest_path(ref.source)
    if path is None or not ref.derived or not _covered(study):
        return
    system.backend.route(compiled=_record, python=_nothing)(path, ref, study, system, read)


def _nothing(*args):
    """The numpy backend keeps no compiled library for a worker to start from."""
    return None


def _record(path, ref, study, system, read):
    from dataclasses import asdict

    from mechsym.studies.sweep_sets import set_model

    model = set_model(system)  # (None for force elements: their columns come from the full route)
    if model is None:
        return
    update_manifest(path, {
        "version": VERSION, "entry": str(model.lib.path.resolve()), "name": model.name,
        "parameters": {n: [p.default, bool(p.positive), bool(getattr(p, "nonnegative", False))]
                       for n, p in model.parameters.items()},
        "units": {n: p.unit for n, p in model.parameters.items()},
        "bodies": list(model.bodies), "coordinate": model.coordinate, "force": model.force, "names": model.unknowns,
        "start": asdict(model.start), "files": watched(read, model_file(ref.source)),
    })


class _Parameter:
    """What mechsym.core.parameters.apply_overrides and a sweep's table read of a parameter."""

    def __init__(self, default, positive, nonnegative, unit=""):
        self.default, self.positive, self.nonnegative, self.unit = default, positive, nonnegative, unit


def _parameters(m) -> dict:
    return {n: _Parameter(*v, m["units"].get(n, "")) for n, v in m["parameters"].items()}


class WarmModel:
    """What the sweeping process needs of a model whose manifest applies, in place of deriving it: its
    name, its parameters (defaults, sign rules, units) and the up-front check of a parameter set."""

    def __init__(self, m, lib):
        self.name, self.parameters, self._m, self._lib = m["name"], _parameters(m), m, lib

    def resolve_parameters(self, overrides=None) -> dict:
        """Parameter values with `overrides` applied and checked (Mechanism.resolve_parameters' rules)."""
        from mechsym.core.errors import InputError
        from mechsym.core.parameters import apply_overrides

        values, problems = apply_overrides(self.parameters, overrides)
        if problems:
            raise InputError(f"mechanism '{self.name}': " + "; ".join(problems))
        bad = negative_mass(self.name, self._m["bodies"], self._lib.mass(np.array(list(values.values()))))
        if bad is not None:
            raise bad
        return values


def parent_model(ref, study) -> WarmModel | None:
    """The WarmModel of ref's model for `study` where the manifest applies (a TableStudy inverse or forward on
    the C backend, the manifest present and intact): the sweeping process then derives nothing either."""
    if not _covered(study) or not ref.derived:
        return None
    found = _manifest(ref)
    return None if found is None else WarmModel(*found)


def _manifest(ref):
    """The manifest of ref's model if it applies (present sources, every watched file unchanged, the
    library's entry intact), with its loaded library; else None."""
    from mechsym.codegen.backend import resolve

    return resolve(ref.backend, quiet=True).route(compiled=_compiled_manifest, python=_nothing)(ref)


def _compiled_manifest(ref):
    m = load_manifest(manifest_path(ref.source), VERSION)
    if m is None:
        return None
    compiled = c_backend._load(Path(m["entry"]))  # where the sweeping process loaded it (SHA-256 checked)
    return None if compiled is None else (m, CLibrary(compiled))


def batch(ref, study, sets):
    """The outcomes of a TableStudy inverse or forward at `sets` from the manifest (mechsym.studies.sweep_sets'
    inverse_rows or forward_rows, the routes of the derived model's TableStudy.batch: `Rows`, a set not done
    left to the full route), or None where the manifest does not apply at all."""
    from mechsym.studies.sweep_sets import SET_ROUTES, CompiledStart, SetModel

    if not _covered(study):
        return None
    found = _manifest(ref)
    if found is None:
        return None
    m, lib = found
    start = CompiledStart(**{k: tuple(v) if isinstance(v, list) else v for k, v in m["start"].items()})
    model = SetModel(m["name"], _parameters(m), tuple(m["bodies"]), m["coordinate"], m["force"], m["names"], start,
                     lib)
    return SET_ROUTES[study.command](model, study.analysis, study.reductions, sets)


def _covered(study) -> bool:
    """Whether the warm start covers `study`: a TableStudy of an analysis that a SetModel alone evaluates
    (mechsym.studies.sweep_sets.SET_ROUTES), without a model's own hook."""
    from mechsym.studies.sweep_sets import SET_ROUTES

    return getattr(study, "command", None) in SET_ROUTES and getattr(study, "hook", None) is None
