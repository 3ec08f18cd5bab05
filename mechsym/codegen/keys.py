"""The one key of mechsym's caches: every compiled or rendered artefact (a generated library, the C
runtime's hard contact, the Python extension, a body's loaded program, a tree's functions, a sweep's warm
start) is found under `cache_key` of what it is made from, by content, never by a hand-kept list.

A part is a text (a generated source, its metadata, the kind of artefact), bytes (a model file) or a
declaration, walked whole by `fingerprint` (every attribute of every object, dicts in their order, sympy
expressions by srepr, a class defined outside mechsym also by its code, `class_code`). A lookup key taken
before the artefact's source exists passes `package_source()`: the source of every module of mechsym and of
its C runtime (mechsym/codegen/runtime), everything the generation reads. The key always holds what a
compiled library is built with: the compiler, its flags and, for a native build, the CPU's features
(c_backend.build_target), the machine and the version of sympy that prints the code; with `python`, for a
Python extension module, also the ABI it is built for (`python_abi`).
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib.metadata
import platform
import sys
import sysconfig
from pathlib import Path

import numpy as np

__all__ = ["cache_key", "fingerprint", "class_code", "package_source", "source_digest", "python_abi"]


def cache_key(*parts, python=False) -> str:
    """The cache key of `parts` (texts, bytes or declarations; see the module docstring) together with what
    every compiled artefact depends on: 32 hexadecimal digits of a SHA-256."""
    from mechsym.codegen.c_backend import build_target, compiler  # (c_backend keys its entries with this)

    h = hashlib.sha256()
    for part in (*parts, build_target(), compiler() or "", platform.machine(), f"sympy {_sympy_version()}",
                 *((python_abi(),) if python else ())):
        h.update(part if isinstance(part, bytes) else (part if isinstance(part, str) else fingerprint(part)).encode())
        h.update(b"\0")
    return h.hexdigest()[:32]


@functools.lru_cache(maxsize=1)
def _sympy_version() -> str:
    """The installed sympy's version, read without importing it (a sweep's warm worker runs without sympy)."""
    return importlib.metadata.version("sympy")


def python_abi() -> str:
    """What a Python extension module is built for: the interpreter's version, implementation and extension
    suffix (its ABI), and the version of numpy whose C API it includes."""
    return (f"{sys.implementation.cache_tag} {sys.version} {sysconfig.get_config_var('EXT_SUFFIX')} "
            f"numpy {np.__version__}")


def fingerprint(obj) -> str:
    """A canonical text of a declaration, by construction: every attribute of every object reached from
    `obj` (sorted by name; dicts and sequences in their order, which generated code follows), sympy
    objects by srepr (names and assumptions). An object this cannot describe is a TypeError, so that a
    caller never keys on a partial description."""
    import sympy as sp

    def walk(x):
        if x is None or isinstance(x, (bool, int, str)):
            return repr(x)
        if isinstance(x, float):
            return float.hex(x)
        if isinstance(x, (sp.Basic, sp.MatrixBase)):
            return sp.srepr(x)
        if isinstance(x, dict):
            return "{" + ", ".join(f"{walk(k)}: {walk(v)}" for k, v in x.items()) + "}"
        if isinstance(x, (list, tuple)):
            return f"{type(x).__name__}(" + ", ".join(walk(v) for v in x) + ")"
        if isinstance(x, (set, frozenset)):
            return "set(" + ", ".join(sorted(walk(v) for v in x)) + ")"
        if isinstance(x, np.ndarray):
            return f"array({x.dtype}, {x.shape}, {x.tobytes().hex()})"
        if isinstance(x, np.generic):
            return walk(x.item())
        fields = vars(x) if hasattr(x, "__dict__") else (
            {f.name: getattr(x, f.name) for f in dataclasses.fields(x)} if dataclasses.is_dataclass(x) else None)
        if fields is None or callable(x):
            raise TypeError(f"cannot fingerprint a {type(x).__qualname__}")
        cls = type(x)
        return f"{cls.__module__}.{cls.__qualname__}{class_code(cls)}(" + ", ".join(
            f"{k}={walk(v)}" for k, v in sorted(fields.items())) + ")"

    return walk(obj)


@functools.lru_cache(maxsize=None)
def class_code(cls) -> str:
    """What a class defined outside mechsym does, for `fingerprint` (mechsym's own classes are covered by
    `package_source`): a digest of the text of its module's file where there is one, and of every class
    attribute of it and its bases outside mechsym, functions by their compiled code (bytecode, constants,
    names; not their file or line), so that a joint type whose `rows` change under the same name and fields
    gets another key even when it was declared without a file (exec, a notebook)."""
    import inspect
    import sys

    outside = [k for k in cls.__mro__ if not k.__module__.split(".")[0] in ("mechsym", "builtins")]
    if not outside:
        return ""

    def code(c):
        consts = ", ".join(code(v) if hasattr(v, "co_code") else repr(v) for v in c.co_consts)
        return f"code({c.co_code.hex()}; {consts}; {c.co_names}; {c.co_varnames}; {c.co_freevars})"

    def attribute(v):
        v = getattr(v, "__func__", v)  # staticmethod, classmethod
        if isinstance(v, property):
            return "property(" + ", ".join(attribute(f) for f in (v.fget, v.fset, v.fdel) if f) + ")"
        if hasattr(v, "__code__"):
            return code(v.__code__) + repr(getattr(v, "__defaults__", None))
        if callable(v) or hasattr(v, "__get__"):  # a builtin method or descriptor: no code of its own
            return type(v).__name__
        try:
            return fingerprint(v)
        except TypeError:  # an object without a canonical text (its repr may hold an address)
            return type(v).__qualname__

    parts = []
    for k in outside:
        module = sys.modules.get(k.__module__)
        try:
            parts.append(hashlib.sha256(Path(inspect.getsourcefile(module)).read_bytes()).hexdigest())
        except (TypeError, OSError):
            pass  # no file (exec, an interactive session): the class's own code below
        parts += [f"{name}={attribute(v)}" for name, v in sorted(vars(k).items())
                  if name not in ("__dict__", "__weakref__", "__module__", "__doc__")]
    return "{" + hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16] + "}"


@functools.lru_cache(maxsize=1)
def package_source() -> str:
    """A SHA-256 of the source of every module of mechsym and of its C runtime (the generator, everything it
    calls and the C it includes): `source_digest` of the installed package."""
    return source_digest(Path(__file__).resolve().parent.parent)


def source_digest(root: Path) -> str:
    """A SHA-256 of every .py, .c and .h file under `root` (names and bytes, in sorted order)."""
    h = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.suffix in (".py", ".c", ".h") and p.is_file()):
        h.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()
