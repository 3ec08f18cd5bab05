"""The one writer of every command's files: paths checked before any work, files written atomically.

A command names its outputs once, `check_outputs(("--out", path, CSV), ("--plot", path, FIGURE), ...)`,
before it computes anything: two outputs on one path, an unsupported extension, a missing ffmpeg, a
folder that cannot be written (no permission, read-only, /proc, a plain file in the way) are then one
InputError, not a failure after minutes of work. Every file is then written through `atomic(path)`: into
a temporary file in the same folder, renamed into place only when complete, so that an interrupted or
failed run (Ctrl-C, a full disk, an exception while drawing) leaves an existing file as it was and no
partial file behind. Within `transaction()` (the CLI runs every command in one) the renames wait until
the whole command has succeeded, so that an interrupted run leaves every earlier file as it was, not a
new CSV beside an old plot; what a command says it wrote (`announce`) is printed after the renames, so
that it never names a file that is not there. Output folders are created if missing.

Only a regular file is replaced. A path that names anything else (a character or block device, a FIFO,
a symlink to one, /dev/stdout) is written through: the complete content, staged in a temporary file, is
copied into it when the command succeeds, so that `--out /dev/null` leaves the device in place and a
FIFO's reader receives the file. A symlink to a regular file has its target replaced, the link kept. A
path that is one of this process's own stdout or stderr (/dev/stdout, /dev/fd/1, /proc/self/fd/1) is
written to that stream, and the announcements then go to stderr, so that they do not mix into it.

One exception: a run that streams its rows (a sweep with an output file) appends them as they come to
PATH.part (`part_path`), which an interrupted run leaves behind to be resumed; the complete file then
goes to PATH atomically and the .part is removed.
"""
from __future__ import annotations

import contextlib
import contextvars
import errno
import os
import shutil
import stat
import sys
import tempfile

from mechsym.core.errors import InputError

CSV, FIGURE, ANIMATION, FOLDER, PAGE = "csv", "figure", "animation", "folder", "page"
FIGURE_EXTENSIONS = (".png", ".svg")
ANIMATION_EXTENSIONS = (".gif", ".mp4")

__all__ = ["CSV", "FIGURE", "ANIMATION", "FOLDER", "PAGE", "check_outputs", "atomic", "transaction", "announce",
           "stdout_stream", "flush_stdout", "drop_stdout", "write_text", "save_figure", "save_animation", "ffmpeg_available",
           "part_path"]

_STAGED = contextvars.ContextVar("mechsym_staged_outputs", default=None)
_WRITE_ERRORS = (errno.ENOSPC, errno.EDQUOT, errno.EACCES, errno.EPERM, errno.EROFS, errno.EISDIR, errno.ENOTDIR,
                 errno.ENOENT, errno.EFBIG, errno.ENXIO, errno.ELOOP, errno.ENAMETOOLONG, errno.EIO)


def ffmpeg_available() -> bool:
    """Whether matplotlib finds ffmpeg (needed for an .mp4 animation)."""
    from matplotlib import animation

    return bool(animation.writers.is_available("ffmpeg"))


def check_outputs(*outputs) -> None:
    """Refuse, before any work, outputs that cannot be written. Each output is (option, path or None,
    kind) with kind CSV, FIGURE (.png/.svg), ANIMATION (.gif/.mp4, .mp4 needing ffmpeg), PAGE (.html) or
    FOLDER (a folder the command writes files into). Absent outputs (None) are skipped."""
    seen = {}
    for option, path, kind in outputs:
        if path is None:
            continue
        path = os.fspath(path)
        if not path.strip():
            raise InputError(f"{option} is empty; give a file name")
        real = os.path.realpath(path)
        if real in seen:
            raise InputError(f"{seen[real]} and {option} both name '{path}'; give each output its own file")
        seen[real] = option
        if kind != FOLDER and os.path.isdir(path):
            raise InputError(f"{option} '{path}' is a folder, not a file")
        if kind != FOLDER and path.endswith(os.sep):
            raise InputError(f"{option} '{path}' ends with '{os.sep}', which names a folder; give a file name")
        ext = os.path.splitext(path)[1].lower()
        if kind == PAGE and ext not in (".html", ".htm"):
            raise InputError(f"{option} must be an .html file, got '{path}'")
        if kind == FIGURE and ext not in FIGURE_EXTENSIONS:
            raise InputError(f"{option} must be a .png or .svg file, got '{path}'")
        if kind == ANIMATION:
            if ext not in ANIMATION_EXTENSIONS:
                raise InputError(f"{option} must be a .gif or .mp4 file, got '{path}'")
            if ext == ".mp4" and not ffmpeg_available():
                raise InputError(f"{option} '{path}': an .mp4 needs ffmpeg, which is not installed (write a .gif)")
        if kind == FOLDER:
            if os.path.exists(path) and not os.path.isdir(path):
                raise InputError(f"{option} '{path}' is a file, not a folder")
            _check_writable(option, path, path)
            continue
        target, through = _target(path, option)
        if through:
            if not os.access(path, os.W_OK):
                raise InputError(f"{option} '{path}': permission denied")
        else:
            _check_writable(option, path, os.path.dirname(os.path.abspath(target)))
            _check_replaceable(option, path, target)


def _target(path, option="output"):
    """(where the file goes, written through?): a regular file or a new one is replaced (a symlink's
    target, so that the link stays); anything else (a device, a FIFO, a symlink to one, this process's
    stdout) is written through. A socket, a symlink loop or an unreadable path is an InputError."""
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):  # a new file (a folder in the way is named later)
        st = None
    except OSError as exc:
        raise InputError(f"{option} '{path}': {exc.strerror or exc}") from None
    if st is not None and stat.S_ISSOCK(st.st_mode):
        raise InputError(f"{option} '{path}' is a socket, not a file")
    if st is not None and (not stat.S_ISREG(st.st_mode) or _stream(st) is not None):
        return path, True
    return (os.path.realpath(path) if os.path.islink(path) else path), False


def _stream(st):
    """The file descriptor (1 or 2) of this process's stdout or stderr if `st` is that file, else None."""
    for fd in (1, 2):
        with contextlib.suppress(OSError):
            own = os.fstat(fd)
            if (own.st_dev, own.st_ino) == (st.st_dev, st.st_ino):
                return fd
    return None


def _check_replaceable(option, path, target):
    """An existing regular file marked immutable or append-only (chattr +i, +a) cannot be replaced, even by
    root: refused before the work, not after it."""
    try:
        import fcntl

        fd = os.open(target, os.O_RDONLY | os.O_NONBLOCK)
    except (ImportError, OSError):
        return
    try:
        flags = bytearray(4)
        fcntl.ioctl(fd, 0x80086601, flags)  # FS_IOC_GETFLAGS
    except OSError:  # a file system without these flags
        return
    finally:
        os.close(fd)
    if int.from_bytes(flags, sys.byteorder) & 0x30:  # FS_IMMUTABLE_FL | FS_APPEND_FL
        raise InputError(f"{option} '{path}' is immutable or append-only (chattr) and cannot be replaced")


def _check_writable(option, path, folder):
    """The folder (or, if it does not exist yet, its nearest existing parent) accepts a new file: probed
    by creating and removing one, which sees permissions, read-only mounts and /proc alike."""
    folder = os.path.abspath(folder)
    while not os.path.exists(folder):
        folder = os.path.dirname(folder)
    if not os.path.isdir(folder):
        raise InputError(f"{option} '{path}': '{folder}' is a file, not a folder")
    try:
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".mechsym-probe-")
    except OSError as exc:
        raise InputError(f"{option} '{path}': cannot write in '{folder}': {exc.strerror or exc}") from None
    os.close(fd)
    os.unlink(probe)


@contextlib.contextmanager
def atomic(path, completes=None):
    """Yield a temporary path with the extension of `path` (so that writers that choose a format by
    extension choose the same one); on success its content goes to `path` (`_commit`: renamed onto a
    regular file, copied into anything else), on any failure or interrupt it is removed. The temporary
    file lies in the folder of the file it replaces, or in the temporary folder for a written-through
    target (a device's folder, /dev, need not be writable). An OSError (permissions, a full disk) becomes
    an InputError naming the file. `completes`: a growing file (`part_path`) that the file completes,
    removed once the file is in place (within a transaction: when the transaction commits)."""
    path = os.fspath(path)
    target, through = _target(path)
    folder = None if through else os.path.dirname(os.path.abspath(target))
    base, ext = os.path.splitext(os.path.basename(target))
    try:
        if folder is not None:
            os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{base}.", suffix=f".part{ext}")
        os.close(fd)
    except OSError as exc:
        raise InputError(f"cannot write '{path}': {exc.strerror or exc}") from None
    done = False
    try:
        yield tmp
        staged = _STAGED.get()
        if staged is None:
            _commit(tmp, path, completes)
        else:
            staged.files.append((tmp, path, completes))
        done = True
    except OSError as exc:
        raise _write_error(path, exc) from None
    finally:
        if not done:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def _commit(tmp, path, completes=None):
    """Put the complete temporary file `tmp` in place of `path` (see `_target`) and remove it (and the
    growing file it `completes`)."""
    if completes is not None:
        _commit(tmp, path)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(completes)
        return
    target, through = _target(path)
    if not through:
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
        return
    fd = _stream(os.stat(path))
    if fd is not None:
        (sys.stdout if fd == 1 else sys.stderr).flush()
    with open(tmp, "rb") as src, (open(fd, "wb", closefd=False) if fd is not None else open(path, "wb")) as dst:
        shutil.copyfileobj(src, dst)
    os.unlink(tmp)


def part_path(path) -> str | None:
    """PATH.part, the growing file of a long run's rows beside its output PATH (the one exception to the
    atomic rule: rows appended as they are computed, so that an interrupted run keeps them and can be
    resumed; `atomic(path, completes=...)` removes it when the complete file is in place); None where
    PATH is not a file that is replaced (a device, a FIFO, this process's stdout)."""
    path = os.fspath(path)
    return None if _target(path)[1] else path + ".part"


def _write_error(path, exc):
    """An OSError of writing `path` as the InputError to raise, or `exc` itself for a failure of mechsym."""
    if exc.errno in _WRITE_ERRORS:
        return InputError(f"cannot write '{path}': {exc.strerror or exc}")
    return exc


class _Staged:
    """The files of a transaction awaiting their commit, and what the command said about them."""

    def __init__(self):
        self.files, self.messages = [], []


@contextlib.contextmanager
def transaction():
    """Hold back the renames of every `atomic` write inside, and the `announce`d messages, until the
    block completes; on an exception or interrupt, remove the temporary files, leaving every output as it
    was before."""
    staged = _Staged()
    token = _STAGED.set(staged)
    try:
        yield
        to_stream = False
        while staged.files:
            tmp, path, completes = staged.files[0]
            try:
                _commit(tmp, path, completes)
            except OSError as exc:
                raise _write_error(path, exc) from None
            to_stream = to_stream or _is_stream(path)
            staged.files.pop(0)
        for message in staged.messages:
            print(message, file=sys.stderr if to_stream else sys.stdout)
    finally:
        _STAGED.reset(token)
        for tmp, *_ in staged.files:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def _is_stream(path) -> bool:
    """Whether `path` names this process's stdout or stderr."""
    try:
        return _stream(os.stat(path)) is not None
    except OSError:
        return False


def announce_written(written, folder) -> None:
    """Say which files of a folder a command wrote (`announce`), or that the folder was up to date."""
    for path in written:
        announce(f"wrote {path}")
    if not written:
        print(f"{folder} is up to date")


def announce(message: str) -> None:
    """Say what a command wrote: within a transaction, once its files are in place (on stderr if one of
    them went to stdout); else now."""
    staged = _STAGED.get()
    if staged is None:
        print(message)
    else:
        staged.messages.append(message)


@contextlib.contextmanager
def stdout_stream():
    """stdout, to write a command's table or listing into, flushed at the end; a stream that cannot take
    it is an InputError (see `flush_stdout`)."""
    try:
        yield sys.stdout
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        _stdout_failed(exc)


def flush_stdout() -> None:
    """Flush stdout; a stream that cannot take the output (a full disk, /dev/full) is an InputError, not a
    table lost in silence (what is left in the buffer is dropped: it would fail again at exit)."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        _stdout_failed(exc)


def _stdout_failed(exc):
    drop_stdout()
    raise InputError(f"cannot write to stdout: {exc.strerror or exc}") from None


def drop_stdout() -> None:
    """Point stdout at the null device: what is left in its buffer cannot be written (a reader gone, a
    full disk) and must not fail again when the interpreter exits."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_text(path, text: str) -> None:
    """Write `text` to `path` atomically."""
    with atomic(path) as tmp, open(tmp, "w") as fh:
        fh.write(text)


def save_figure(fig, path, dpi=120) -> None:
    """Save a matplotlib figure (format from the extension) atomically and close it."""
    import matplotlib.pyplot as plt

    try:
        with atomic(path) as tmp:
            fig.savefig(tmp, dpi=dpi)
    finally:
        plt.close(fig)


def save_animation(anim, path, fps) -> None:
    """Save a matplotlib animation as GIF (Pillow) or MP4 (ffmpeg) atomically: an interrupted run leaves
    no file of a few frames."""
    from matplotlib import animation

    if str(path).lower().endswith(".gif"):
        writer = animation.PillowWriter(fps=fps)
    elif ffmpeg_available():
        writer = animation.FFMpegWriter(fps=fps)
    else:
        raise InputError(f"'{path}': an .mp4 needs ffmpeg, which is not installed (write a .gif)")
    with atomic(path) as tmp:
        anim.save(tmp, writer=writer)
