"""C backend: generate, compile and load C code in-process, through a cache that is never stale.

The cache is keyed by construction, never by a hand-kept list of what the code depends on:

- An entry `NAME-KEY/` (source.c, lib.so, meta.json) is named by the cache key (mechsym.codegen.keys) of
  the generated source it was built from, the compiler, its flags and the machine: whatever the generated code depends on is
  in its text. meta.json records the SHA-256 of source.c and of lib.so, checked on every load, so a
  truncated or corrupted entry is rebuilt (in place, when an index names it) rather than loaded.
- An index `index/NAME-LOOKUP` names the entry that a request produced before, so that a warm start
  loads the library without generating (and, for a planar mechanism, without deriving) anything.
  LOOKUP is the caller's key, by the same function; a planar mechanism's is the cache key of its whole
  declaration walked generically (keys.fingerprint), the options, the source of every module of mechsym and of its C runtime (mechsym/codegen/runtime) and the version of sympy: everything the generation reads. A generated source is compiled as its
  amalgamation with the C runtime (c_runtime.amalgamate), so the entry's content key covers the runtime
  too. The entry an index names must still hold the content recorded for it.

Entries are written under a lock (a per-entry lock file) into a temporary folder and renamed into place;
a damaged entry is replaced under the same lock, so concurrent processes repairing one entry all succeed
and leave nothing behind. A cache folder that cannot be written falls back, with one warning, to a
private temporary one.
"""
from __future__ import annotations

import ctypes
import errno
import functools
import hashlib
import json
import os
import platform
import shutil
import signal
import subprocess
import tempfile
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from mechsym.codegen import c_parts, c_runtime
from mechsym.codegen.keys import cache_key, package_source
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


@dataclass(frozen=True)
class Compiled:
    """A loaded cache entry: the library, the metadata it was generated with, and its folder."""

    dll: ctypes.CDLL
    meta: dict
    path: Path


def build(system, options=None, directory: Path | None = None):
    """The compiled library of a derived System (mechsym.codegen.c_library.CLibrary), from the cache or built
    now."""
    from mechsym.codegen.c_library import CLibrary

    mech = system.mechanism

    def generate():
        from mechsym.codegen.c_source import render

        return render(system.spec)

    key = cache_key(mech, json.dumps(options or {}, sort_keys=True), package_source())  # what generate reads
    return CLibrary(build_source(mech.name, key, generate, directory))


def build_source(name: str, key: str, generate, directory: Path | None = None, python=False) -> Compiled:
    """Any generated C, cached: the entry that the index `NAME-key` of the cache folder (or `directory`)
    names, loaded if intact; else `generate()` -> (source, metadata) runs, and the entry named by the
    source's own content key is loaded or compiled, and indexed under `key`. `key` must change with
    everything `generate` reads (see `build`). A Python extension module (`python`: its content key
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
    content = cache_key(source, json.dumps(meta, sort_keys=True), python=python)
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
