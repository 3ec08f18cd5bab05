"""The one writer of every command's files: paths checked before any work, files written atomically.

A command names its outputs once, `check_outputs(("--out", path, CSV), ("--plot", path, FIGURE), ...)`,
before it computes anything: two outputs on one path, an unsupported extension, a missing ffmpeg, a
folder that cannot be written (no permission, read-only, /proc, a plain file in the way) are then one
InputError, not a failure after minutes of work. Every file is then written through `atomic(path)`: into
a temporary file in the same folder, renamed into place only when complete, so that an interrupted or
failed run (Ctrl-C, a full disk, an exception while drawing) leaves an existing file as it was and no
partial file behind. Within `transaction()` (the CLI runs every command in one) the renames wait until
the whole command has succeeded, so that an interrupted run leaves every earlier file as it was, not a
new CSV beside an old plot. Output folders are created if missing.
"""
from __future__ import annotations

import contextlib
import contextvars
import errno
import os
import tempfile

from mechsym.core.errors import InputError

CSV, FIGURE, ANIMATION, FOLDER = "csv", "figure", "animation", "folder"
FIGURE_EXTENSIONS = (".png", ".svg")
ANIMATION_EXTENSIONS = (".gif", ".mp4")

__all__ = ["CSV", "FIGURE", "ANIMATION", "FOLDER", "check_outputs", "atomic", "transaction", "write_text",
           "save_figure", "save_animation", "ffmpeg_available"]

_STAGED = contextvars.ContextVar("mechsym_staged_outputs", default=None)


def ffmpeg_available() -> bool:
    """Whether matplotlib finds ffmpeg (needed for an .mp4 animation)."""
    from matplotlib import animation

    return bool(animation.writers.is_available("ffmpeg"))


def check_outputs(*outputs) -> None:
    """Refuse, before any work, outputs that cannot be written. Each output is (option, path or None,
    kind) with kind CSV, FIGURE (.png/.svg), ANIMATION (.gif/.mp4, .mp4 needing ffmpeg) or FOLDER (a
    folder the command writes files into). Absent outputs (None) are skipped."""
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
        ext = os.path.splitext(path)[1].lower()
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
        else:
            _check_writable(option, path, os.path.dirname(os.path.abspath(path)))


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
def atomic(path):
    """Yield a temporary path in the folder of `path`, with the same extension (so that writers that
    choose a format by extension choose the same one); on success it is renamed onto `path`, on any
    failure or interrupt removed. An OSError (permissions, a full disk) becomes an InputError naming the
    file."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    base, ext = os.path.splitext(os.path.basename(path))
    try:
        os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{base}.", suffix=f".part{ext}")
        os.close(fd)
    except OSError as exc:
        raise InputError(f"cannot write '{path}': {exc.strerror or exc}") from None
    done = False
    try:
        yield tmp
        os.chmod(tmp, 0o666 & ~_umask())
        staged = _STAGED.get()
        if staged is None:
            os.replace(tmp, path)
        else:
            staged.append((tmp, path))
        done = True
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EACCES, errno.EPERM, errno.EROFS, errno.EISDIR,
                         errno.ENOTDIR, errno.ENOENT, errno.EFBIG):
            raise InputError(f"cannot write '{path}': {exc.strerror or exc}") from None
        raise
    finally:
        if not done:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


@contextlib.contextmanager
def transaction():
    """Hold back the renames of every `atomic` write inside until the block completes; on an exception
    or interrupt, remove the temporary files, leaving every output as it was before."""
    staged = []
    token = _STAGED.set(staged)
    try:
        yield
        while staged:
            tmp, path = staged[0]
            os.replace(tmp, path)
            staged.pop(0)
    finally:
        _STAGED.reset(token)
        for tmp, _ in staged:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


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
