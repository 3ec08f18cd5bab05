"""The C runtime: hand-written C99 in mechsym/codegen/runtime/ (package data), included by generated sources.

A generated source names each runtime file it needs with an `#include "ms_NAME.h"` line (`include`). The C
backend compiles the amalgamation (`amalgamate`: each such line replaced by the file's text), so that a
cache entry's source.c is exactly what was compiled and its content key covers the runtime by construction;
a standalone export keeps the include lines and carries verbatim copies of the files (`used`, `text`).
Public entry points are named through the prefix macro MS_FN (ms_prelude.h), never by editing the text.
One file is printed rather than stored: ms_constants.h, the numbers and status codes shared with Python
(mechsym.codegen.constants). The directory also holds hard_contact.c, a whole source of its own
(mechsym.contact.c_contact), which `source` reads.
"""
from __future__ import annotations

import re
from importlib import resources

from mechsym.codegen import constants

_PRINTED = {"ms_constants.h": constants.header}
_INCLUDE = re.compile(r'^#include "(ms_\w+\.h)"$', re.M)


def names() -> list[str]:
    """The runtime's file names, sorted."""
    stored = (p.name for p in _directory().iterdir() if p.name.endswith(".h"))
    return sorted({*stored, *_PRINTED})


def text(name: str) -> str:
    """The text of the runtime file `name` (e.g. "ms_kernels.h")."""
    if name not in names():
        raise KeyError(f"no C runtime file {name!r} (have {', '.join(names())})")
    return _PRINTED[name]() if name in _PRINTED else (_directory() / name).read_text()


def source(name: str) -> str:
    """The text of a whole C source kept beside the runtime (e.g. "hard_contact.c")."""
    return (_directory() / name).read_text()


def _directory():
    return resources.files("mechsym.codegen") / "runtime"


def include(name: str) -> str:
    """The line that includes the runtime file `name` into a generated source."""
    text(name)  # (an unknown name fails here, at generation)
    return f'#include "{name}"'


def used(source: str) -> list[str]:
    """The runtime files a generated source includes, in order."""
    return [m.group(1) for m in _INCLUDE.finditer(source) if m.group(1) in names()]


def amalgamate(source: str) -> str:
    """`source` with each runtime include line replaced by the file's text: one self-contained translation
    unit (what the C backend compiles and keys its cache entry by)."""
    have = set(names())
    return _INCLUDE.sub(lambda m: text(m.group(1)).rstrip("\n") if m.group(1) in have else m.group(0), source)
