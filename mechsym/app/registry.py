"""Finding a mechanism declaration: a shipped model by name, or a Python file that declares one."""
from __future__ import annotations

import importlib
import importlib.util
import os

from mechsym.core.errors import InputError
from mechsym.model import Mechanism


def shipped_models() -> dict:
    """The shipped models: name -> module."""
    from mechanisms import MODELS

    return dict(MODELS)


def shipped_tracks() -> dict:
    """The shipped track profiles (mechanisms/tracks.py): name -> factory returning a mechsym.track.Track."""
    from mechanisms.tracks import SHIPPED

    return dict(SHIPPED)


def model_hooks(name_or_path: str) -> dict:
    """Generic commands a shipped model computes itself: its module's CLI_HOOKS, command name ->
    hook(args, params) -> (Table, System used for drawing). Empty for model files and other models."""
    models = shipped_models()
    if name_or_path not in models:
        return {}
    return dict(getattr(importlib.import_module(models[name_or_path]), "CLI_HOOKS", {}))


def model_commands() -> dict:
    """Extra top-level commands that shipped models provide (mechanisms.COMMANDS): name -> module with
    HELP, configure(parser) and run(args) -> exit code."""
    from mechanisms import COMMANDS

    return {name: importlib.import_module(module) for name, module in COMMANDS.items()}


def load_mechanism(name_or_path: str) -> Mechanism:
    """A shipped model name (see `shipped_models`) or the path of a .py file defining `build()`
    (or a module-level `mechanism`) that returns a Mechanism."""
    models = shipped_models()
    if name_or_path in models:
        module = importlib.import_module(models[name_or_path])
        where = f"model '{name_or_path}'"
    elif name_or_path.endswith(".py") or os.sep in name_or_path or os.path.exists(name_or_path):
        module = _import_file(name_or_path)
        where = f"model file '{name_or_path}'"
    else:
        raise InputError(f"unknown model '{name_or_path}' (shipped: {', '.join(sorted(models))}; or give a .py file)")
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
