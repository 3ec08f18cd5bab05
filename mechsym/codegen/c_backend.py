"""C backend: generate, compile and load C code in-process, through a cache that is never stale.

The cache is keyed by construction, never by a hand-kept list of what the code depends on:

- An entry `NAME-KEY/` (source.c, lib.so, meta.json) is named by `content_key` of the generated source
  it was built from, the compiler, its flags and the machine: whatever the generated code depends on is
  in its text. meta.json records the SHA-256 of source.c and of lib.so, checked on every load, so a
  truncated or corrupted entry is rebuilt (in place, when an index names it) rather than loaded.
- An index `index/NAME-LOOKUP` names the entry that a request produced before, so that a warm start
  loads the library without generating (and, for a planar mechanism, without deriving) anything.
  LOOKUP is the caller's key; a planar mechanism's (`cache_key`) is a hash of its whole declaration walked
  generically (`fingerprint`: every attribute of every object, dicts in their order, sympy expressions by
  srepr, a class defined outside mechsym also by its code, `class_code`), the options, the source of
  every module of mechsym and of its C runtime (mechsym/codegen/runtime) and the version of sympy: everything the generation reads. A generated source is compiled as its
  amalgamation with the C runtime (c_runtime.amalgamate), so the entry's content key covers the runtime
  too. The entry an index names must still hold the content recorded for it.

Entries are written under a lock (a per-entry lock file) into a temporary folder and renamed into place;
a damaged entry is replaced under the same lock, so concurrent processes repairing one entry all succeed
and leave nothing behind. A cache folder that cannot be written falls back, with one warning, to a
private temporary one.
"""
from __future__ import annotations

import ctypes
import dataclasses
import errno
import functools
import hashlib
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np

from mechsym.codegen import c_parts, c_runtime
from mechsym.codegen.constants import DENSE_RECORD, Status
from mechsym.core.budget import check_memory, memory_limit
from mechsym.core.errors import InputError
from mechsym.core.progress import notice

CFLAGS = ["-O3", "-std=c99", "-ffp-contract=off", "-fno-math-errno", "-shared", "-fPIC"]
# the cache builds for the CPU it runs on (its features are in every key): its vector instructions, and
# `#pragma omp simd` on the generated loops over samples (MS_SIMD). No flag changes a result: never -ffast-math,
# and no contraction into fused multiply-adds (-ffp-contract=off, which gcc's -std=c99 implies and clang's does
# not), which would move an exact zero that a check relies on (a rolling disc whose axis meets the plane normal)
# off zero; so a sample computes the same bits in a vector lane as alone, on any CPU. A compiler that refuses
# them builds with CFLAGS alone.
HOST_FLAGS = ["-march=native", "-fopenmp-simd", "-DMS_SIMD"]
# the flags of an export's Makefile (mechsym.codegen.export): plain C99 for any CPU of the architecture.
# MECHSYM_PORTABLE=1 builds the cache with them (warnings aside): the same bits on every x86-64. Portable and
# native entries have different keys.
EXPORT_CFLAGS = "-O2 -std=c99 -pedantic -Wall -Wextra -Werror"
PORTABLE = "MECHSYM_PORTABLE"
_LOADED = {}
_FALLBACK = {}  # unwritable cache folder -> the temporary folder used instead (one warning each)
_WRITABLE = set()  # cache folders found writable (probed once per process)


class CompilerMissing(RuntimeError):
    """No C compiler on this machine."""


def cache_dir() -> Path:
    """MECHSYM_CACHE, else $XDG_CACHE_HOME/mechsym, else ~/.cache/mechsym."""
    root = os.environ.get("MECHSYM_CACHE")
    if root:
        return Path(root)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "mechsym"


def compiler() -> str | None:
    """The C compiler to build with ($CC, cc, gcc or clang), or None."""
    for name in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if name and shutil.which(name):
            return name
    return None


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
def cpu_features() -> str:
    """The CPU's model and instruction-set features (Linux's /proc/cpuinfo; elsewhere what platform names):
    a library built with -march=native on one CPU is never loaded on another."""
    try:
        with open("/proc/cpuinfo") as handle:
            lines = handle.read().split("\n\n")[0].splitlines()
        keep = [ln for ln in lines if ln.split(":")[0].strip() in ("vendor_id", "model name", "flags", "Features",
                                                                     "CPU implementer", "CPU part", "isa")]
        if keep:
            return "\n".join(keep)
    except OSError:
        pass
    return f"{platform.processor()} {platform.machine()} {platform.platform()}"


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


def portable() -> bool:
    """Whether the cache builds portably: MECHSYM_PORTABLE=1 (0 or unset: for this CPU)."""
    value = os.environ.get(PORTABLE, "0")
    if value not in ("0", "1", ""):
        raise InputError(f"{PORTABLE} must be 0 or 1, got {value!r}")
    return value == "1"


def build_flags() -> list[str]:
    """The flags the cache compiles with: for this CPU (CFLAGS + HOST_FLAGS), or with MECHSYM_PORTABLE=1 the
    exports' (EXPORT_CFLAGS without its warning options) for a shared library."""
    if not portable():
        return CFLAGS + HOST_FLAGS
    return [f for f in EXPORT_CFLAGS.split() if not f.startswith("-W") and f != "-pedantic"] + [
        "-ffp-contract=off", "-shared", "-fPIC"]


def build_target() -> str:
    """What a compiled library is built for, in every key that names one: the flags, and the CPU's features
    where the flags build for this CPU."""
    flags = build_flags()
    return " ".join(flags) + ("\n" + cpu_features() if "-march=native" in flags else "")


def content_key(*parts, python=False) -> str:
    """A cache key of `parts` (texts) together with what every compiled entry depends on: the compiler
    command and flags, the machine and, for a native build, its CPU features (`build_target`), and the
    version of sympy that prints the code; with `python`, for a Python extension module, also the ABI it is
    built for (`python_abi`)."""
    import sympy

    h = hashlib.sha256()
    for part in (*parts, build_target(), compiler() or "", platform.machine(), f"sympy {sympy.__version__}",
                 *((python_abi(),) if python else ())):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:32]


def python_abi() -> str:
    """What a Python extension module is built for: the interpreter's version, implementation and extension
    suffix (its ABI), and the version of numpy whose C API it includes."""
    return (f"{sys.implementation.cache_tag} {sys.version} {sysconfig.get_config_var('EXT_SUFFIX')} "
            f"numpy {np.__version__}")


def cache_key(mech, options=None) -> str:
    """The lookup key of a planar mechanism's library: its whole declaration (`fingerprint`), the options
    and the source of mechsym."""
    return content_key(fingerprint(mech), json.dumps(options or {}, sort_keys=True), package_source())


@dataclass(frozen=True)
class Compiled:
    """A loaded cache entry: the library, the metadata it was generated with, and its folder."""

    dll: ctypes.CDLL
    meta: dict
    path: Path


def build(system, options=None, directory: Path | None = None) -> "CLibrary":
    """The compiled library of a derived System, from the cache or built now."""
    mech = system.mechanism

    def generate():
        from mechsym.codegen.c_source import render

        return render(system.spec)

    return CLibrary(build_source(mech.name, cache_key(mech, options), generate, directory))


def build_source(name: str, key: str, generate, directory: Path | None = None, python=False) -> Compiled:
    """Any generated C, cached: the entry that the index `NAME-key` of the cache folder (or `directory`)
    names, loaded if intact; else `generate()` -> (source, metadata) runs, and the entry named by the
    source's own content key is loaded or compiled, and indexed under `key`. `key` must change with
    everything `generate` reads (see `cache_key`). A Python extension module (`python`: its content key
    holds the Python ABI) names the folders of the headers it includes in the metadata's "include". Raises
    CompilerMissing when there is no compiler to build with."""
    root = _writable(directory or cache_dir())
    index = root / "index" / f"{_safe(name)}-{key}"
    try:
        named = root / _safe(index.read_text().strip())
    except OSError:
        named = None
    compiled = _load(named) if named is not None else None
    if compiled is not None:
        return compiled
    if compiler() is None:
        raise CompilerMissing("no C compiler found (set CC, or install gcc)")
    notice("compile", f"compiling generated C for '{name}' (once: later runs load it from {root})")
    source, meta = generate()
    source = c_runtime.amalgamate(source)
    # a damaged entry the index names is repaired in place (a generator whose printing varies between
    # runs would otherwise leave it behind); else the entry is named by its content: the source and the
    # metadata it is loaded with (one source may be loaded under two layouts)
    content = content_key(source, json.dumps(meta, sort_keys=True), python=python)
    entry = named if named is not None and named.is_dir() else root / f"{_safe(name)}-{content}"
    compiled = _load(entry)
    with _cache_writes(root):
        if compiled is None:
            with _locked(entry):
                compiled = _load(entry)  # another process may have repaired it meanwhile
                if compiled is None:
                    write_entry(entry, source, meta)
                    compiled = _load(entry)
            if compiled is None:
                raise RuntimeError(f"the compiled library in {entry} cannot be loaded")
        _write_atomic(index, entry.name)
    return compiled


@contextmanager
def _cache_writes(root: Path):
    """Writes into the cache folder `root`: a folder that fills up or turns read-only meanwhile (a full
    disk, a quota) is an InputError naming it, not a failure of mechsym."""
    try:
        yield
    except OSError as exc:
        raise InputError(f"the C cache folder {root} cannot be written: {exc.strerror or exc} (free space there, "
                         "or set MECHSYM_CACHE to another folder)") from None


def _writable(root: Path) -> Path:
    """`root`, or (with one warning) a private temporary folder when `root` cannot be written."""
    if root in _FALLBACK:
        return _FALLBACK[root]
    if root in _WRITABLE:
        return root
    try:
        root.mkdir(parents=True, exist_ok=True)
        probe = Path(tempfile.mkstemp(prefix=".probe-", dir=root)[1])
        probe.unlink()
        _WRITABLE.add(root)
        return root
    except OSError as exc:
        fallback = Path(tempfile.gettempdir()) / f"mechsym-cache-{os.getuid() if hasattr(os, 'getuid') else 0}"
        fallback.mkdir(mode=0o700, exist_ok=True)
        warnings.warn(f"the C cache folder {root} cannot be written ({exc.strerror or exc}); "
                      f"using {fallback} instead (set MECHSYM_CACHE to a writable folder)", stacklevel=4)
        _FALLBACK[root] = fallback
        return fallback


@contextmanager
def _locked(entry: Path):
    """An exclusive lock on `entry` across processes (a lock file beside it; no lock where fcntl is
    missing, the rename into place still keeps a reader from seeing half an entry)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover (not POSIX)
        yield
        return
    entry.parent.mkdir(parents=True, exist_ok=True)
    with open(entry.parent / f".{entry.name}.lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _write_atomic(path: Path, text: str):
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in name)


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _intact(entry: Path) -> dict | None:
    """The metadata of an entry whose source and library match their recorded SHA-256, else None."""
    try:
        meta = json.loads((entry / "meta.json").read_text())
        ok = meta.get("lib_sha256") == _sha(entry / "lib.so") and meta.get("source_sha256") == _sha(entry / "source.c")
        return meta if ok else None
    except (OSError, ValueError):
        return None


def _load(entry: Path) -> Compiled | None:
    """The intact entry, loaded (once per library: the SHA-256 is checked on every call, so an entry
    damaged on disk is rebuilt even in a process that loaded it before)."""
    meta = _intact(entry)
    if meta is None:
        return None
    key = (str(entry), meta["lib_sha256"])
    if key not in _LOADED:
        try:
            _LOADED[key] = Compiled(ctypes.CDLL(str(entry / "lib.so")), meta, entry)
        except OSError:
            return None
    return _LOADED[key]


def write_entry(entry: Path, source: str, meta: dict):
    """Compile `source` (as its amalgamation with the C runtime) into the cache entry `entry` (source.c, lib.so,
    meta.json with the SHA-256 of
    both), built in a temporary folder and renamed into place; a broken entry is first moved aside into
    a temporary folder and removed. Call under `_locked(entry)` when other processes may use the entry."""
    cc = compiler()
    if cc is None:
        raise CompilerMissing("no C compiler found (set CC, or install gcc)")
    entry.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".build-", dir=entry.parent))
    trash = None
    try:
        (tmp / "source.c").write_text(c_runtime.amalgamate(source))
        for flags in (build_flags(), CFLAGS) if not portable() else (build_flags(),):
            proc = _compile(cc, flags, tmp, [f"-I{d}" for d in meta.get("include", ())])
            if proc.returncode == 0:
                break
        if proc.returncode != 0:
            if "No space left on device" in proc.stderr:  # the compiler could not write the library
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(tmp / "lib.so"))
            raise RuntimeError(f"C compilation failed:\n{proc.stderr[-4000:]}")
        meta = dict(meta, flags=flags, lib_sha256=_sha(tmp / "lib.so"), source_sha256=_sha(tmp / "source.c"))
        (tmp / "meta.json").write_text(json.dumps(meta, indent=1))
        if entry.exists():  # a damaged entry: out of the way in one rename, then removed
            trash = Path(tempfile.mkdtemp(prefix=".trash-", dir=entry.parent))
            os.replace(entry, trash / "entry")
        os.replace(tmp, entry)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if trash is not None:
            shutil.rmtree(trash, ignore_errors=True)


def _compile(cc, flags, folder: Path, include=()) -> subprocess.CompletedProcess:
    """Compile folder/source.c into folder/lib.so (with the `include` options of a Python extension). A
    source in translation units (mechsym.codegen.c_parts: the text before the first marker, then each unit
    after one) is compiled unit by unit, as many at a time as there are processors, each unit with the text
    before the first marker, and linked; the first failure is returned (its stderr names the unit's file)."""
    text = (folder / "source.c").read_text()
    common, *units = text.split(c_parts.UNIT)
    if not units:
        return _run_compilers([[cc, *flags, *include, "-o", str(folder / "lib.so"), str(folder / "source.c"),
                                "-lm"]])[0]
    processors = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    jobs = max(1, min(processors, len(units)))
    texts = [[] for _ in range(jobs)]
    for unit in sorted(units, key=len, reverse=True):        # the largest first, each to the lightest job
        min(texts, key=lambda t: sum(map(len, t))).append(unit)
    objects, commands = [], []
    for k, group in enumerate(texts):
        path = folder / f"unit{k}.c"
        path.write_text(common + "".join(group))
        objects.append(str(folder / f"unit{k}.o"))
        commands.append([cc, *flags, *include, "-c", "-o", objects[-1], str(path)])
    failed = next((done for done in _run_compilers(commands) if done.returncode != 0), None)
    if failed is None:
        failed = _run_compilers([[cc, *flags, "-o", str(folder / "lib.so"), *objects, "-lm"]])[0]
    for k in range(jobs):                                      # the entry keeps source.c and lib.so alone
        for suffix in (".c", ".o"):
            (folder / f"unit{k}{suffix}").unlink(missing_ok=True)
    return failed


def _run_compilers(commands) -> list[subprocess.CompletedProcess]:
    """Run the compiler commands at once and wait for them all. Each runs in a session of its own, so that an
    interrupt (Ctrl-C, SIGTERM, an error) kills it together with the processes it started (cc1, as, ld): a
    command ended while it compiles leaves no compiler running behind it."""
    running = []
    try:
        for command in commands:
            running.append(subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                            start_new_session=True))
        return [subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
                for proc in running for out, err in [proc.communicate()]]
    except BaseException:
        for proc in running:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:                         # it had ended
                pass
        for proc in running:
            proc.communicate()
        raise


_D = ctypes.POINTER(ctypes.c_double)
_I = ctypes.POINTER(ctypes.c_int)




def _ptr(a):
    return a.ctypes.data_as(_D)


class Failure(NamedTuple):
    """Where a C continuation (runtime/ms_kernels.h advance) stopped for good, a step shorter than twice the
    floor still failing: the last solved angle and its configuration (theta_a, q_a), the angle not reached
    (theta_b) and Newton's last iterate there (q_b); `converged` tells a change of branch (Newton converged
    on another one) from a Newton failure (a limit position or a dead point)."""

    status: int
    theta_a: float
    theta_b: float
    q_a: np.ndarray
    q_b: np.ndarray

    @property
    def converged(self) -> bool:
        """Newton converged at theta_b, on another branch (or far from the prediction)."""
        return self.status in (Status.OFF_BRANCH, Status.DET_SIGN, Status.FAR)


def _interrupted(status):
    """Ctrl-C inside a long C call ends it with status INTERRUPTED: raise it as Python does."""
    if status == Status.INTERRUPTED:
        raise KeyboardInterrupt
    return status


class CLibrary:
    """ctypes view of a compiled mechanism; array layouts match the numpy backend's functions."""

    def __init__(self, compiled: Compiled):
        dll, meta = compiled.dll, compiled.meta
        self.dll, self.meta, self.path = dll, meta, compiled.path
        self.nq, self.nrow, self.nth, self.npar = meta["nq"], meta["nrow"], meta["nth"], meta["npar"]
        i, d = ctypes.c_int, ctypes.c_double
        for name in ("ms_applied", "ms_jac"):
            getattr(dll, name).argtypes = [i, _D, _D, _D]
        dll.ms_phi.argtypes = [i, _D, _D, _D, _D]
        dll.ms_gamma.argtypes = [i, _D, _D, _D, _D]
        dll.ms_gamma3.argtypes = [i, _D, _D, _D, _D, _D]
        dll.ms_applied_rate.argtypes = [i, _D, _D, _D, _D]
        dll.ms_energy.argtypes = [i, _D, _D, _D, _D]
        dll.ms_points.argtypes = [i, _D, _D, _D, i]
        dll.ms_branches.argtypes = [i, _D, _D, _D, i]
        dll.ms_mass.argtypes = [_D, _D]
        if meta["square"]:
            dll.ms_inverse.argtypes = [i, _D, _D, _D, _D, d, i, d, _D, _D, _D, _D, _I, _D]
            dll.ms_inverse.restype = i
            dll.ms_kinematics.argtypes = [i, _D, _D, _D, _D, d, i, d, _D, _D, _D, _D, _D, _I, _D]
            dll.ms_kinematics.restype = i
            dll.ms_inverse_sets.argtypes = [i, i, _D, _D, d, _D, i, _D, _D, d, i, _D, _D, _D, _D, _I, _I]
            dll.ms_inverse_sets.restype = i
            if meta.get("lanes"):
                dll.ms_inverse_columns.argtypes = [i, _D, _D, _D, _D, d, i, d, i, _D, _D, _D, _D, _I, _D]
                dll.ms_inverse_columns.restype = i
            dll.ms_ode.argtypes = [i, _D, _D, d, _D, _D, _D, d, i, d, _D, _D, _I, _D]
            dll.ms_ode.restype = i
            dll.ms_forward.argtypes = [d, d, d, d, _D, i, d, d, _D, _D, _D, d, i, d, i, _I, _D, _I, _I, i, _D, _I, _D,
                                       _I, _D, ctypes.POINTER(ctypes.c_long), i, _D, ctypes.POINTER(ctypes.c_long), _I]
            dll.ms_forward.restype = i
            dll.ms_factor.argtypes = [i, _D, _D, _D, _I, _I]
            dll.ms_factor.restype = i
            dll.ms_track.argtypes = [_D, _D, _D, _D, _D, d, i, _D, _D, _D, _D, _I]
            dll.ms_track.restype = i
            dll.ms_track_rows.argtypes = [_D, _D, _D, _D, _D, d, i, i, _I, _D, _D, _D, _D, _D]
            dll.ms_track_rows.restype = i
            dll.ms_walk.argtypes = [_D, d, d, _D, _D, _D, d, i, d, _D, _D, _D, _D, _I, _D]
            dll.ms_walk.restype = i
            dll.ms_solve.argtypes = [i, i, i, _D, _I, _D, _D]
            dll.ms_solve.restype = i
            self.nslot, self.nblock = meta["nslot"] + meta["block"] ** 2, max(meta["block"], 1)

    def _failure_record(self):
        """The array a long call's continuation writes where it stops (theta_a, theta_b, q_a, q_b); NaN if not."""
        return np.full(2 + 2 * self.nq, np.nan)

    def _failure(self, failed, status, fail):
        """The `Failure` a long call recorded, or None (it succeeded, or stopped before its continuation)."""
        if failed < 0 or np.isnan(fail[0]):
            return None
        nq = self.nq
        return Failure(status, float(fail[0]), float(fail[1]), fail[2:2 + nq].copy(), fail[2 + nq:].copy())

    # -- evaluation with the numpy backend's layout: groups (size, N) in, (out, N) or (N, r, c) out --
    @staticmethod
    def _samples(a, size):
        a = np.asarray(a, float)
        single = a.ndim == 1
        return np.ascontiguousarray((a[:, None] if single else a).T.reshape(-1, size)), single

    def _params(self, p):
        return np.ascontiguousarray(np.asarray(p, float).reshape(self.npar))

    def phi(self, q, th, p):
        """Constraint residuals Phi(q, theta, p): (nrow,) for one q, (nrow, N) for q of shape (nq, N)."""
        qs, single = self._samples(q, self.nq)
        ts, _ = self._samples(np.broadcast_to(th, (self.nth,) + np.shape(q)[1:]), self.nth)
        out = np.empty((len(qs), self.nrow))
        self.dll.ms_phi(len(qs), _ptr(qs), _ptr(ts), _ptr(self._params(p)), _ptr(out))
        return out[0] if single else out.T

    def jac(self, q, p):
        """Constraint Jacobian Phi_q: (nrow, nq) for one q, (N, nrow, nq) for N samples."""
        qs, single = self._samples(q, self.nq)
        out = np.empty((len(qs), self.nrow, self.nq))
        self.dll.ms_jac(len(qs), _ptr(qs), _ptr(self._params(p)), _ptr(out))
        return out[0] if single else out

    def gamma(self, q, qd, p):
        """gamma(q, q', p) with Phi_q q'' = -gamma: (nrow,) or (nrow, N)."""
        qs, single = self._samples(q, self.nq)
        vs, _ = self._samples(qd, self.nq)
        out = np.empty((len(qs), self.nrow))
        self.dll.ms_gamma(len(qs), _ptr(qs), _ptr(vs), _ptr(self._params(p)), _ptr(out))
        return out[0] if single else out.T

    def gamma3(self, q, qd, qdd, p):
        """gamma3(q, q', q'', p) with Phi_q q''' = -gamma3: (nrow,) or (nrow, N)."""
        qs, single = self._samples(q, self.nq)
        vs, _ = self._samples(qd, self.nq)
        ws, _ = self._samples(qdd, self.nq)
        out = np.empty((len(qs), self.nrow))
        self.dll.ms_gamma3(len(qs), _ptr(qs), _ptr(vs), _ptr(ws), _ptr(self._params(p)), _ptr(out))
        return out[0] if single else out.T

    def applied_rate(self, q, qd, p):
        """q' . (dQ/dq) q', the rate of the applied forces along the motion: (1,) or (1, N)."""
        qs, single = self._samples(q, self.nq)
        vs, _ = self._samples(qd, self.nq)
        out = np.empty((len(qs), 1))
        self.dll.ms_applied_rate(len(qs), _ptr(qs), _ptr(vs), _ptr(self._params(p)), _ptr(out))
        return out[0] if single else out.T

    def applied(self, q, p):
        """Applied generalised forces Q(q, p) (gravity and loads): (nq,) or (nq, N)."""
        qs, single = self._samples(q, self.nq)
        out = np.empty((len(qs), self.nq))
        self.dll.ms_applied(len(qs), _ptr(qs), _ptr(self._params(p)), _ptr(out))
        return out[0] if single else out.T

    def energy(self, q, qd, p):
        """Kinetic and potential energy: (2,) or (2, N)."""
        qs, single = self._samples(q, self.nq)
        vs, _ = self._samples(qd, self.nq)
        out = np.empty((len(qs), 2))
        self.dll.ms_energy(len(qs), _ptr(qs), _ptr(vs), _ptr(self._params(p)), _ptr(out))
        return out[0] if single else out.T

    def mass(self, p):
        """The diagonal of the mass matrix (nq,) at parameters p."""
        out = np.empty(self.nq)
        self.dll.ms_mass(_ptr(self._params(p)), _ptr(out))
        return out

    def _width_call(self, fn, width, q, p):
        qs, single = self._samples(q, self.nq)
        out = np.empty((len(qs), max(width, 1)))
        fn(len(qs), _ptr(qs), _ptr(self._params(p)), _ptr(out), max(width, 1))
        out = out[:, :width]
        return out[0] if single else out.T

    def points(self, q, p):
        """Every named point's x, y in the fixed frame: (2 n_points,) or (2 n_points, N)."""
        return self._width_call(self.dll.ms_points, 2 * self.meta["n_points"], q, p)

    def branches(self, q, p):
        """The declared branch conditions' values (positive on the branch): (n_branches,) or (n_branches, N)."""
        return self._width_call(self.dll.ms_branches, self.meta["n_branches"], q, p)

    def factor(self, q, p) -> "CFactor":
        """Phi_q factorised at configurations q (nq,) or (nq, N) by the static sparse elimination."""
        qs, _ = self._samples(q, self.nq)
        n = len(qs)
        a, piv, ok = np.empty((n, self.nslot)), np.empty((n, self.nblock), dtype=np.intc), np.empty(n, dtype=np.intc)
        _interrupted(self.dll.ms_factor(n, _ptr(qs), _ptr(self._params(p)), _ptr(a), piv.ctypes.data_as(_I),
                                        ok.ctypes.data_as(_I)))
        return CFactor(self, a, piv, ok.astype(bool))

    # -- kernels -----------------------------------------------------------------------------------
    def tracker(self, params, col_scale, tol, maxit=30):
        """track(q, theta, thetad) -> (status, q, J (nq, nth), a0 (nq,), applied (nq,), the CFactor of Phi_q
        at q): one state of a simulation from the prediction q (see ms_track), with fixed parameters."""
        p = self._params(params)
        scale = np.ascontiguousarray(col_scale, float)
        q, th, thd = np.empty(self.nq), np.empty(self.nth), np.empty(self.nth)
        jq, a0, app = np.empty((self.nq, self.nth)), np.empty(self.nq), np.empty(self.nq)
        lu, piv = np.empty((1, self.nslot)), np.empty((1, self.nblock), dtype=np.intc)
        pointers = [_ptr(a) for a in (q, th, thd, p, scale)] + [float(tol), int(maxit)] + \
            [_ptr(a) for a in (jq, a0, app, lu)] + [piv.ctypes.data_as(_I)]
        fn, keep, ok = self.dll.ms_track, (p, scale), np.ones(1, bool)  # (the pointers' arrays stay alive)

        def track(q0, theta, thetad):
            assert keep
            q[:], th[:], thd[:] = q0, theta, thetad
            status = fn(*pointers)
            return status, q.copy(), jq.copy(), a0.copy(), app.copy(), CFactor(self, lu.copy(), piv.copy(), ok)

        return track

    def walker(self, params, col_scale, tol, hmax, maxit=30):
        """walk(q, theta0, theta1, thetad) -> (status, q, J, a0, applied, the CFactor of Phi_q at q, `Failure` or
        None) of a one-coordinate mechanism: from q solved at theta0, the continuation to theta1 in steps of at
        most hmax (see ms_walk), then the state there as `tracker`'s; q is the last solved one where it stops."""
        p = self._params(params)
        scale = np.ascontiguousarray(col_scale, float)
        q, thd, fail = np.empty(self.nq), np.empty(self.nth), self._failure_record()
        jq, a0, app = np.empty((self.nq, self.nth)), np.empty(self.nq), np.empty(self.nq)
        lu, piv = np.empty((1, self.nslot)), np.empty((1, self.nblock), dtype=np.intc)
        ptrs = [_ptr(a) for a in (jq, a0, app, lu)] + [piv.ctypes.data_as(_I), _ptr(fail)]
        fn, keep, ok = self.dll.ms_walk, (p, scale), np.ones(1, bool)

        def walk(q0, theta0, theta1, thetad):
            assert keep
            q[:], thd[:], fail[:] = q0, thetad, np.nan
            status = _interrupted(fn(_ptr(q), float(theta0), float(theta1), _ptr(thd), _ptr(p), _ptr(scale),
                                     float(tol), int(maxit), float(hmax), *ptrs))
            return (status, q.copy(), jq.copy(), a0.copy(), app.copy(), CFactor(self, lu.copy(), piv.copy(), ok),
                    self._failure(0 if status else -1, status, fail))

        return walk

    def track_rows(self, params, col_scale, tol, rows, maxit=30):
        """track(q, theta, thetad) -> (status, q, J (nq, nth), a0, applied, base (r,), coef (r, nth)): one
        state as `tracker`'s, and the multipliers of the given rows of Phi_q as linear functions of the
        coordinates' accelerations (see ms_track_rows), in one call with the pointers bound once."""
        p = self._params(params)
        scale = np.ascontiguousarray(col_scale, float)
        idx = np.ascontiguousarray(rows, dtype=np.intc)
        q, th, thd = np.empty(self.nq), np.empty(self.nth), np.empty(self.nth)
        jq, a0, app = np.empty((self.nq, self.nth)), np.empty(self.nq), np.empty(self.nq)
        base, coef = np.empty(len(idx)), np.empty((len(idx), self.nth))
        pointers = [_ptr(a) for a in (q, th, thd, p, scale)] + [float(tol), int(maxit), len(idx), idx.ctypes.data_as(_I)] \
            + [_ptr(a) for a in (jq, a0, app, base, coef)]
        fn, keep = self.dll.ms_track_rows, (p, scale, idx)

        def track(q0, theta, thetad):
            assert keep
            q[:], th[:], thd[:] = q0, theta, thetad
            status = fn(*pointers)
            return status, q.copy(), jq.copy(), a0.copy(), app.copy(), base.copy(), coef.copy()

        return track

    def inverse(self, theta, params, q0, col_scale, tol, maxit=30, hmax=0.1, want_q=False):
        """The inverse-dynamics basis along theta (N,) from q0 near theta[0], with per-sample largest
        velocity coefficient and smallest branch condition (and q if asked). `failure` (the continuation's
        record where it stopped, see `Failure`) is the last item."""
        n = len(theta)
        th = np.ascontiguousarray(theta, float)
        q_out = np.empty((n, self.nq)) if want_q else None
        coef, branch = np.empty(n), np.empty(n)
        u_out = np.empty((n, self.nrow, 3))
        status = ctypes.c_int(0)
        fail = self._failure_record()
        failed = self.dll.ms_inverse(n, _ptr(th), _ptr(self._params(params)), _ptr(np.ascontiguousarray(q0, float)),
                                     _ptr(np.ascontiguousarray(col_scale, float)), tol, maxit, hmax,
                                     _ptr(q_out) if want_q else None, _ptr(coef), _ptr(branch), _ptr(u_out),
                                     ctypes.byref(status), _ptr(fail))
        return failed, _interrupted(status.value), q_out, coef, branch, u_out, self._failure(failed, status.value, fail)

    def kinematics(self, theta, params, q0, col_scale, tol, maxit=30, hmax=0.1):
        """One-coordinate kinematics along theta (N,) from q0 near theta[0], in one call: (index of the first
        sample that failed or -1, its status, q, dq/dtheta, d2q/dtheta2 (N, nq) each, the largest velocity
        coefficient and the smallest branch condition per sample, and the continuation's `Failure` or None)."""
        n = len(theta)
        th = np.ascontiguousarray(theta, float)
        q, dq, ddq = (np.empty((n, self.nq)) for _ in range(3))
        coef, branch, status = np.empty(n), np.empty(n), ctypes.c_int(0)
        fail = self._failure_record()
        failed = self.dll.ms_kinematics(n, _ptr(th), _ptr(self._params(params)), _ptr(np.ascontiguousarray(q0, float)),
                                        _ptr(np.ascontiguousarray(col_scale, float)), tol, maxit, hmax, _ptr(q),
                                        _ptr(dq), _ptr(ddq), _ptr(coef), _ptr(branch), ctypes.byref(status), _ptr(fail))
        return failed, _interrupted(status.value), q, dq, ddq, coef, branch, self._failure(failed, status.value, fail)

    def inverse_columns(self, theta, params, q0, col_scale, tol, coef, maxit=30, hmax=0.1):
        """`inverse` with the unknowns combined for S speeds as they are computed (coef (S, 3): alpha,
        omega^2, 1 per speed): failed, status, coef_max and branch (N,), and the columns (nrow, S, N). Only
        for a library with lanes (meta["lanes"]); the continuation's `Failure` or None last."""
        n, coef = len(theta), np.ascontiguousarray(coef, float).reshape(-1, 3)
        th = np.ascontiguousarray(theta, float)
        coef_max, branch = np.empty(n), np.empty(n)
        cols = np.empty((self.nrow, len(coef), n))
        status = ctypes.c_int(0)
        fail = self._failure_record()
        failed = self.dll.ms_inverse_columns(n, _ptr(th), _ptr(self._params(params)),
                                             _ptr(np.ascontiguousarray(q0, float)),
                                             _ptr(np.ascontiguousarray(col_scale, float)), tol, maxit, hmax, len(coef),
                                             _ptr(coef), _ptr(coef_max), _ptr(branch), _ptr(cols), ctypes.byref(status),
                                             _ptr(fail))
        return failed, _interrupted(status.value), coef_max, branch, cols, self._failure(failed, status.value, fail)

    def inverse_sets(self, theta, params, reference, col_scale, hmax, tol, maxit=30):
        """`inverse` for S parameter sets in one call (params (S, npar), col_scale (S, nq), hmax (S,)), each
        started from `reference` = (theta_ref, q_ref, sign): the reference assembly q_ref at theta_ref and
        the sign of det Phi_q there (+1 or -1), from which each set assembles on the same branch and
        continues to theta[0] (ms_kernels.h start_at). Returns failed (S,: -1, or the first sample that
        failed, 0 where the start failed), status (S,), start_coef (S,: the largest velocity coefficient
        met on the way to theta[0]), coef and branch (S, N), u (S, N, nrow, 3)."""
        nsets, n = len(params), len(theta)
        th_ref, q_ref, sign = reference
        th = np.ascontiguousarray(theta, float)
        p, scale = (np.ascontiguousarray(np.reshape(a, (nsets, -1)), float) for a in (params, col_scale))
        steps = np.ascontiguousarray(hmax, float).reshape(nsets)
        start_coef, coef, branch = np.empty(nsets), np.empty((nsets, n)), np.empty((nsets, n))
        u = np.empty((nsets, n, self.nrow, 3))
        failed, status = np.empty(nsets, dtype=np.intc), np.zeros(nsets, dtype=np.intc)
        _interrupted(self.dll.ms_inverse_sets(nsets, n, _ptr(th), _ptr(p), float(th_ref),
                                              _ptr(np.ascontiguousarray(q_ref, float)), int(sign), _ptr(scale),
                                              _ptr(steps), tol, maxit, _ptr(start_coef), _ptr(coef), _ptr(branch),
                                              _ptr(u), failed.ctypes.data_as(_I), status.ctypes.data_as(_I)))
        return failed, status, start_coef, coef, branch, u

    def ode(self, theta, omega, torque, params, q0, col_scale, tol, maxit=30, hmax=0.1):
        """The reduced ODE's right-hand side (N, 2) and exact Jacobian (N, 2, 2) along theta (N,) from q0
        near theta[0]; returns failed (-1 or the first failing sample), status, f, jac and the continuation's
        `Failure` or None."""
        n = len(theta)
        th = np.ascontiguousarray(theta, float)
        om = np.ascontiguousarray(np.broadcast_to(np.asarray(omega, float), th.shape))
        f, jac = np.empty((n, 2)), np.empty((n, 2, 2))
        status = ctypes.c_int(0)
        fail = self._failure_record()
        failed = self.dll.ms_ode(n, _ptr(th), _ptr(om), float(torque), _ptr(self._params(params)),
                                 _ptr(np.ascontiguousarray(q0, float)), _ptr(np.ascontiguousarray(col_scale, float)),
                                 tol, maxit, hmax, _ptr(f), _ptr(jac), ctypes.byref(status), _ptr(fail))
        return failed, _interrupted(status.value), f, jac, self._failure(failed, status.value, fail)

    def forward(self, torque, theta0, omega0, t_end, grid, rtol, atol, params, q0, row_scale, tol, events=(),
                maxit=30, hmax=0.1, max_events=10000, dense=False, what="a forward run"):
        """Integrate the reduced one-coordinate ODE in C (DOP853). events: (component, value, direction,
        terminal), at most 64. Returns the states on the grid, the events (time, index, state) in time order,
        the right-hand sides evaluated, the status, and with `dense` the dense output over (theta, omega) (a
        results.DenseSolution; else None). The record of every step is bounded by the memory limit
        (budget.check_memory, naming `what`): a run with more steps than the first buffer holds is run again
        into one of the size it reported, once that size passes the check."""
        cap = int(min(DENSE_CHUNK, max(1, memory_limit() // DENSE_BYTES)))
        while True:
            out, hits, nfev, status, rec, n_rec = self._forward(torque, theta0, omega0, t_end, grid, rtol, atol,
                                                                params, q0, row_scale, tol, events, maxit, hmax,
                                                                max_events, cap if dense else None)
            if not dense or status or n_rec <= cap:
                break
            check_memory(f"the dense output of {what} ({n_rec} steps; dense_output=False keeps none)",
                         n_rec * DENSE_BYTES)
            cap = n_rec
        solution = None
        if dense and not status and n_rec:
            from mechsym.core.results import DenseSolution

            rec = rec[:n_rec]
            stop = min([t_end, rec[-1, 0] + rec[-1, 1]] + [t for t, i, _ in hits if events[i][3]])
            solution = DenseSolution(rec[:, 0], rec[:, 1], rec[:, 2:4], rec[:, 4:].reshape(-1, 7, 2), stop)
        return out, hits, nfev, status, solution

    def _forward(self, torque, theta0, omega0, t_end, grid, rtol, atol, params, q0, row_scale, tol, events, maxit,
                 hmax, max_events, cap):
        """One ms_forward call; cap None: no dense record, else a record of up to cap steps."""
        grid = np.ascontiguousarray(grid, float)
        n_ev = len(events)
        if n_ev > 64:
            raise InputError(f"the C integrator locates at most 64 kinds of event, got {n_ev}")
        comp = np.array([e[0] for e in events] or [0], dtype=np.intc)
        value = np.array([e[1] for e in events] or [0.0])
        direc = np.array([e[2] for e in events] or [0], dtype=np.intc)
        term = np.array([int(e[3]) for e in events] or [0], dtype=np.intc)
        ev_t = np.empty(max_events)
        ev_id = np.empty(max_events, dtype=np.intc)
        ev_y = np.empty((max_events, 2))
        n_events, status = ctypes.c_int(0), ctypes.c_int(0)
        nfev, n_rec = ctypes.c_long(0), ctypes.c_long(0)
        out = np.empty((len(grid), 2))
        rec = None if cap is None else np.empty((max(cap, 1), DENSE_RECORD))
        ip = lambda a: a.ctypes.data_as(_I)
        written = self.dll.ms_forward(
            float(torque), float(theta0), float(omega0), float(t_end), _ptr(grid), len(grid), rtol, atol,
            _ptr(self._params(params)), _ptr(np.ascontiguousarray(q0, float)), _ptr(np.ascontiguousarray(row_scale, float)),
            tol, maxit, hmax, n_ev, ip(comp), _ptr(value), ip(direc), ip(term), max_events, _ptr(ev_t), ip(ev_id), _ptr(ev_y),
            ctypes.byref(n_events), _ptr(out), ctypes.byref(nfev), cap or 0, None if rec is None else _ptr(rec),
            ctypes.byref(n_rec), ctypes.byref(status))
        k = n_events.value
        return (out[:written], list(zip(ev_t[:k], ev_id[:k], ev_y[:k])), nfev.value, _interrupted(status.value), rec,
                n_rec.value)


DENSE_BYTES = 8 * DENSE_RECORD  # a step of the C integrator's dense record
DENSE_CHUNK = 1 << 16  # steps the first record of a forward run holds (9 MiB; a run touches only what it writes)


class CFactor:
    """Factorisations of Phi_q at N configurations made in C, with the interface of
    mechsym.codegen.sparse_numpy.Factor: solve (Phi_q x = b) and solve_t (Phi_q^T y = c) for b of shape
    (N, n) or (N, n, m), and take(mask). A singular sample gives NaN in its own solutions only."""

    def __init__(self, lib, a, piv, ok):
        self.lib, self.a, self.piv, self.ok = lib, a, piv, ok

    def take(self, mask):
        """The factorisations of the samples selected by the boolean `mask`."""
        if mask.all():
            return self
        return CFactor(self.lib, self.a[mask], self.piv[mask], self.ok[mask])

    def _solve(self, b, transpose):
        b = np.asarray(b, float)
        vector = b.ndim == 2
        rhs = np.ascontiguousarray(b[:, None, :] if vector else np.swapaxes(b, 1, 2))  # (N, m, n)
        n, m = rhs.shape[:2]
        if n != len(self.a):
            raise ValueError(f"{n} right-hand sides for {len(self.a)} factorisations")
        x = np.empty_like(rhs)
        _interrupted(self.lib.dll.ms_solve(n, m, int(transpose), _ptr(self.a), self.piv.ctypes.data_as(_I),
                                           _ptr(rhs), _ptr(x)))
        return x[:, 0, :] if vector else np.swapaxes(x, 1, 2)

    def solve(self, b):
        """x with Phi_q x = b, for b (N, n) or (N, n, m)."""
        return self._solve(b, False)

    def solve_t(self, c):
        """y with Phi_q^T y = c, for c (N, n) or (N, n, m)."""
        return self._solve(c, True)
