"""The model registry: a shipped model, tree, command or sweep study by name, a user's model file or a URDF
file by path. The only module of mechsym that reaches the shipped models (mechanisms/), and only through
their table `mechanisms.REGISTRY` (kind -> name -> module, or module:attribute), imported on first use: a
library without mechanisms/ imports and runs everything below the command line.

A table rather than an entry-point group: it works from a source checkout (PYTHONPATH) without
installing the package again, and a new model is one line beside its module.
"""
from __future__ import annotations

import importlib
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path

from mechsym.core.errors import InputError


def shipped(kind: str) -> dict:
    """The shipped entries of one kind (models, commands, trees, studies): name -> module path."""
    from mechanisms import REGISTRY

    return dict(REGISTRY[kind])


def _resolve(path: str):
    """The object a registry entry names: a module, or module:attribute."""
    module, _, attribute = path.partition(":")
    found = importlib.import_module(module)
    return getattr(found, attribute) if attribute else found


@dataclass(frozen=True)
class Model:
    """A mechanism declaration found by name or path; calling it builds the Mechanism. Picklable, so a
    sweep's workers receive it and build the model themselves (mechsym.studies.sweep)."""

    source: str  # the shipped name or the model file's path, as given
    module: str = ""  # a shipped model's module; empty for a model file

    @property
    def file(self) -> Path | None:
        """The file that declares the model (its source keys the warm starts)."""
        if not self.module:
            return Path(self.source) if self.source.endswith(".py") else None
        spec = importlib.util.find_spec(self.module)
        return Path(spec.origin) if spec and spec.origin else None

    def hooks(self) -> dict:
        """Generic commands the model computes itself: its module's CLI_HOOKS, command name ->
        hook(options, params, backend) -> (Table, System used for drawing). Empty for a model file."""
        return dict(getattr(importlib.import_module(self.module), "CLI_HOOKS", {})) if self.module else {}

    def __call__(self):
        """The Mechanism: the module's `build()` (or its module-level `mechanism`)."""
        from mechsym.planar.model import Mechanism  # here: finding a model and its warm start need no sympy

        if self.module:
            module, where = importlib.import_module(self.module), f"model '{self.source}'"
        else:
            module, where = _import_file(self.source), f"model file '{self.source}'"
        if hasattr(module, "build"):
            try:
                mech = module.build()
            except InputError:
                raise
            except SystemExit as exc:
                raise InputError(f"{where}: build() called sys.exit({exc.code!r})") from None
            except Exception as exc:  # a user's declaration failing is bad input, not a mechsym failure
                raise InputError(f"{where}: build() failed: {type(exc).__name__}: {exc}") from exc
        elif isinstance(getattr(module, "mechanism", None), Mechanism):
            mech = module.mechanism
        else:
            raise InputError(f"{where} defines neither build() nor a Mechanism named 'mechanism'")
        if not isinstance(mech, Mechanism):
            raise InputError(f"{where}: build() returned {type(mech).__name__}, not a Mechanism")
        return mech


def find(name_or_path: str) -> Model:
    """A shipped model by name, or the path of a .py file defining `build()` (or a module-level
    `mechanism`) that returns a Mechanism; an unknown name is refused."""
    models = shipped("models")
    if name_or_path in models:
        return Model(name_or_path, models[name_or_path])
    if name_or_path.endswith(".py") or os.sep in name_or_path or os.path.exists(name_or_path):
        return Model(name_or_path)
    raise InputError(f"unknown model '{name_or_path}' (shipped: {', '.join(sorted(models))}; or give a .py file)")


def load_mechanism(name_or_path: str):
    """The Mechanism of a shipped model name or of a model file (`find`)."""
    return find(name_or_path)()


def tree(name_or_path: str) -> str | None:
    """A spatial tree: the module of a shipped tree (with build() returning a Tree), or a URDF file's path; None for a
    planar model."""
    trees = shipped("trees")
    if name_or_path in trees:
        return trees[name_or_path]
    return name_or_path if name_or_path.endswith(".urdf") else None


def commands() -> dict:
    """The top-level commands the shipped models provide: name -> module with HELP, configure(parser) and
    run(args) -> exit code."""
    return {name: _resolve(path) for name, path in shipped("commands").items()}


def studies() -> dict:
    """The shipped models' sweep studies: command name -> class with MODEL, HELP, configure(parser),
    from_args(args) and, on an instance, names and __call__(system, params) (mechsym.studies.sweep)."""
    return {name: _resolve(path) for name, path in shipped("studies").items()}


def _import_file(path: str):
    if os.path.isdir(path):
        raise InputError(f"model file '{path}' is a folder, not a Python file")
    if not os.path.exists(path):
        raise InputError(f"model file '{path}' does not exist")
    if not path.endswith(".py"):
        raise InputError(f"model file '{path}' is not a Python file (.py) declaring a mechanism")
    spec = importlib.util.spec_from_file_location(f"mechsym_user_model_{abs(hash(os.path.abspath(path)))}", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        raise InputError(f"model file '{path}' is malformed: line {exc.lineno}: {exc.msg}") from exc
    except SystemExit as exc:  # a model file must not end the program
        raise InputError(f"model file '{path}' called sys.exit({exc.code!r}) while loading") from None
    except Exception as exc:
        raise InputError(f"model file '{path}' failed to load: {type(exc).__name__}: {exc}") from exc
    return module
