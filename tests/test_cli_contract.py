"""The CLI contract of docs/conventions.md (Errors, Outputs and signals), table-driven: every command
with each class of bad input or fault of the user's world exits 2 with one line `error: ...`, no traceback, and leaves no file behind.

Run in-process (mechsym.app.cli.main) in an empty folder; the faults are found before the long work, so each
case takes well under a second once the shipped models are derived."""
import os

import pytest

from mechsym.app.cli import main
from mechsym.core import output

DISC = ["disc", "--radius", "0.5", "--mass", "1", "--stiffness", "1e5", "--damping", "10", "--mu", "0.5",
        "--v0", "1,0,0", "--omega0", "0,0,0", "--t-end", "0.1"]

# command: (arguments before the outputs, the main output option and its kind, a numeric option to spoil,
#           the options for a plot and an animation it has, whether a memory estimate precedes its work)
COMMANDS = {
    "inverse": (["inverse", "fourbar", "--omega", "1"], ("--out", "o.csv"), "--omega", "--plot", None, True),
    "forward": (["forward", "fourbar", "--torque", "0.1", "--t-end", "1"], ("--out", "o.csv"), "--torque", "--plot",
                None, True),
    "kinematics": (["kinematics", "fourbar"], ("--out", "o.csv"), "--theta0", "--plot", "--animate", True),
    "export": (["export", "fourbar"], ("--out", "exp/"), None, None, None, False),
    "disc": (DISC, ("--out", "o.csv"), "--mass", "--plot", "--animate", True),
    "cart": (["cart", "--t-end", "0.1"], ("--out", "o.csv"), "--t-end", "--plot", "--animate", True),
    "chain3": (["chain3", "--t-end", "0.1"], ("--out", "o.csv"), "--t-end", "--plot", "--animate", True),
    "polydisc": (["polydisc", "--t-end", "0.1"], ("--out", "o.csv"), "--t-end", "--plot", "--animate", True),
    "pasibot slip": (["pasibot", "slip", "--mu-s", "0.3", "--omega", "3"], ("--out", "o.csv"), "--mu-s", "--plot",
                     None, False),
    "pasibot figures": (["pasibot", "figures"], ("--out", "figs/"), None, None, None, False),
    "pasibot animate": (["pasibot", "animate"], ("--out", "a.gif"), "--frames", None, None, False),
    "ugv torque": (["ugv", "torque", "--phi-r", "90deg", "--phi-f", "90deg"], ("--out", "o.csv"), "--x-to", "--plot",
                   None, False),
    "ugv sweep": (["ugv", "sweep", "--grid", "3"], ("--out", "o.csv"), "--x-to", "--plot", None, True),
    "ugv optimize": (["ugv", "optimize", "--criterion", "energy"], ("--out", "o.csv"), "--x-to", "--plot", None,
                     False),
    "ugv animate": (["ugv", "animate"], ("--out", "a.gif"), "--x-to", None, None, False),
    "sweep": (["sweep", "inverse", "fourbar", "--param", "l_crank=0.05,0.06", "--omega", "1", "--reduce", "max:torque"],
              ("--out", "o.csv"), "--samples", "--plot", None, False),
    "hyq fall": (["hyq", "fall"], ("--out", "o.csv"), "--t-end", "--plot", None, False),
    "hyq drop": (["hyq", "drop", "--t-end", "0.1"], ("--out", "o.csv"), "--t-end", "--plot", "--animate", False),
}


def _cases():
    for name, (base, (opt, path), number, plot, animate, budget) in COMMANDS.items():
        folder = path.endswith("/")
        ext = os.path.splitext(path)[1]
        yield name, "unknown option", base + [opt, path, "--bogus", "1"], "unrecognized arguments: --bogus"
        yield name, "/proc", base + [opt, f"/proc/mechsym{ext}"], "cannot write in '/proc'"
        yield name, "a file in the way", base + [opt, f"blocker/o{ext}" if not folder else "blocker"], \
            "is a file, not a folder"
        if not folder:
            yield name, "a folder in the way", base + [opt, "."], "is a folder, not a file"
            yield name, "a trailing slash", base + [opt, "new/"], "ends with '/', which names a folder"
        if number:
            yield name, "not a number", base + [opt, path, number, "abc"], "not "
            yield name, "NaN", base + [opt, path, f"{number}=nan"], "nan"
        if plot:
            yield name, "plot extension", base + [opt, path, plot, "p.xyz"], "must be a .png or .svg file"
            yield name, "same path twice", base + [opt, path, plot, path], "both name"
        if animate:
            yield name, "animation extension", base + [opt, path, animate, "a.avi"], "must be a .gif or .mp4 file"
            yield name, "mp4 without ffmpeg", base + [opt, path, animate, "a.mp4"], "needs ffmpeg"
        if ext == ".gif":
            yield name, "animation extension", base + [opt, "a.avi"], "must be a .gif or .mp4 file"
            yield name, "mp4 without ffmpeg", base + [opt, "a.mp4"], "needs ffmpeg"
        if budget:
            yield name, "memory budget", base + [opt, path, "--max-memory", "1K"], "above the limit of 1 KiB"
        yield name, "bad --max-memory", base + [opt, path, "--max-memory", "lots"], "not a size: 'lots'"
        yield name, "bad --max-memory before the command", ["--max-memory", "lots"] + base + [opt, path], \
            "not a size: 'lots'"


CASES = list(_cases())


@pytest.mark.parametrize("command, fault, args, message", CASES, ids=[f"{c}: {f}" for c, f, _, _ in CASES])
def test_bad_input_exits_2_with_one_line_and_no_file(command, fault, args, message, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(output, "ffmpeg_available", lambda: False)
    (tmp_path / "blocker").write_text("a plain file\n")
    code = main(args)
    _, err = capsys.readouterr()
    assert code == 2, err
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    assert message in err, err
    assert sorted(os.listdir(tmp_path)) == ["blocker"]
    assert (tmp_path / "blocker").read_text() == "a plain file\n"


@pytest.mark.skipif(os.geteuid() == 0, reason="permissions do not bind the superuser")
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_read_only_folder(command, tmp_path, monkeypatch, capsys):
    base, (opt, path), *_ = COMMANDS[command]
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    monkeypatch.chdir(tmp_path)
    try:
        code = main(base + [opt, str(locked / path)])
    finally:
        locked.chmod(0o755)
    _, err = capsys.readouterr()
    assert code == 2 and "cannot write in" in err and err.count("\n") == 1
    assert os.listdir(locked) == []


# -- the inputs a user tried that were an internal error or accepted silently -------------------------------
ZERO_BAR = """from mechanisms.fourbar import build as fourbar


def build():
    m = fourbar()
    m.bar("stub", ("S0", "S1"), 0, 1.0)
    m.revolute("S", "crank", "A", "stub", "S0")
    return m
"""

STRAY_LOAD = """import sympy as sp

from mechanisms.fourbar import build as fourbar


def build():
    m = fourbar()
    m.torque("rocker", 2 * sp.Symbol("x_barr"))
    return m
"""

TRACK = "x,y\n" + "".join(f"{0.046 * k:.6g},{0.05 * __import__('math').sin(0.046 * k):.6g}\n" for k in range(201))

REPORTED = [
    ("a CSV as the model file", ["inverse", "m.csv", "--omega", "3"], "model file 'm.csv' is not a Python file"),
    ("a folder named x.py", ["inverse", "x.py", "--omega", "3"], "model file 'x.py' is a folder"),
    ("a scheduler that is no address", ["sweep", "inverse", "fourbar", "--param", "l_crank=0.05,0.06", "--omega",
                                        "1", "--reduce", "max:torque", "--scheduler", "not-an-address"],
     "cannot reach the scheduler at 'not-an-address'"),
    ("a bar of length 0", ["inverse", "zero_bar.py", "--omega", "3"],
     "bar 'stub' from 'S0' to 'S1' has length 0"),
    ("a load on a symbol that is no parameter", ["inverse", "stray_load.py", "--omega", "3"],
     "the torque on body 'rocker' uses ['x_barr'], which are neither parameters nor named quantities"),
    ("a repeated --param", ["inverse", "fourbar", "--omega", "3", "--param", "l_crank=0.1", "--param", "l_crank=0.2"],
     "--param l_crank is given 2 times (0.1, 0.2)"),
    ("forward --rtol 1", ["forward", "fourbar", "--torque", "1", "--t-end", "1", "--rtol", "1"],
     "--rtol 1 allows errors of the order of the result itself"),
    ("a linspace of one point", ["sweep", "inverse", "fourbar", "--param", "density=1:3:1", "--omega", "3",
                                 "--reduce", "max:torque"], "parameter 'density': 1:3:1 asks for one value from 1 to 3"),
    ("--mu 1e308", ["ugv", "torque", "--phi-r", "2", "--phi-f", "2", "--mu", "1e308"],
     "friction coefficient mu = 1e+308 is above 1000"),
    ("a track in y", ["ugv", "torque", "--phi-r", "2", "--phi-f", "2", "--track", "0.1*y"],
     "track expression '0.1*y' uses 'y'"),
    ("--omega -inf", ["inverse", "fourbar", "--omega", "-inf"], "argument --omega: '-inf' is not finite"),
    ("--max-memory before the command", ["--max-memory", "1K", "inverse", "fourbar", "--omega", "3"],
     "above the limit of 1 KiB (set by --max-memory)"),
]


@pytest.mark.parametrize("what, args, message", REPORTED, ids=[w for w, _, _ in REPORTED])
def test_reported_bad_inputs_exit_2_naming_the_input(what, args, message, tmp_path, monkeypatch, capsys):
    """Each was an internal error (exit 1) or accepted silently: now one line naming the input, exit 2,
    and no file written."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.csv").write_text("a,b\n1,2\n")
    (tmp_path / "x.py").mkdir()
    (tmp_path / "zero_bar.py").write_text(ZERO_BAR)
    (tmp_path / "stray_load.py").write_text(STRAY_LOAD)
    before = sorted(os.listdir(tmp_path))
    code = main(args + ["--out", "o.csv"])
    _, err = capsys.readouterr()
    assert code == 2, err
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    assert message in err, err
    assert sorted(os.listdir(tmp_path)) == before


def test_max_memory_before_the_command_is_the_same_option(tmp_path, capsys):
    """`mechsym --max-memory 16G inverse ...` (the docs give the option to every command) runs as the option
    after the command does."""
    common = ["fourbar", "--omega", "3", "--samples", "8"]
    assert main(["--max-memory", "16G", "inverse", *common, "--out", str(tmp_path / "before.csv")]) == 0
    assert main(["inverse", *common, "--max-memory", "16G", "--out", str(tmp_path / "after.csv")]) == 0
    assert (tmp_path / "before.csv").read_text() == (tmp_path / "after.csv").read_text()


def test_ugv_plot_of_a_csv_track_stays_within_its_points(tmp_path, capsys):
    """The optimisation's figure drew the track 0.5 m beyond the last front contact, outside a CSV track
    that ends 0.2 m after it: the work was lost after it was done. Now both files are written."""
    (tmp_path / "t.csv").write_text(TRACK)
    code = main(["ugv", "optimize", "--criterion", "peak-torque", "--track", str(tmp_path / "t.csv"), "--x-from", "2",
                 "--x-to", "9", "--samples", "12", "--out", str(tmp_path / "o.csv"), "--plot", str(tmp_path / "o.png")])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert sorted(os.listdir(tmp_path)) == ["o.csv", "o.png", "t.csv"]
    assert f"wrote {tmp_path / 'o.png'}" in out


# -- outputs onto what is not a regular file ----------------------------------------------------------------
INVERSE = ["inverse", "fourbar", "--omega", "3", "--samples", "16"]


def _device(path, minor):
    """A character device of the memory driver (major 1: 3 null, 7 full) made in a temporary folder, never
    the machine's own /dev node; skips where mknod is not allowed."""
    import stat

    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, minor))
    except (PermissionError, OSError) as exc:
        pytest.skip(f"mknod: {exc}")
    return path


def _is_device(path):
    import stat

    return stat.S_ISCHR(os.lstat(path).st_mode)


@pytest.fixture
def reference_csv(tmp_path, capsys):
    """The CSV that `INVERSE --out FILE` writes to a regular file."""
    path = tmp_path / "reference.csv"
    assert main(INVERSE + ["--out", str(path)]) == 0
    capsys.readouterr()
    return path.read_text()


def test_out_onto_a_device_writes_through_and_keeps_the_device(tmp_path, capsys):
    """`--out` onto a character device (a null device made with mknod, and a symlink to it) writes into
    it: the device is still a device afterwards (the rename used to replace it with a regular file)."""
    null = _device(tmp_path / "null", 3)
    os.symlink("null", tmp_path / "link")
    for target in (null, tmp_path / "link"):
        assert main(INVERSE + ["--out", str(target)]) == 0
        assert capsys.readouterr().out == f"wrote {target} (16 rows, 11 columns)\n"
    assert _is_device(null) and os.readlink(tmp_path / "link") == "null"
    assert sorted(os.listdir(tmp_path)) == ["link", "null"]


def test_out_onto_a_full_device_is_an_error_and_keeps_it(tmp_path, capsys):
    """A device that refuses the bytes (the full device, as /dev/full) is an error naming it, exit 2."""
    full = _device(tmp_path / "full", 7)
    code = main(INVERSE + ["--out", str(full)])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and err == f"error: cannot write '{full}': No space left on device\n"
    assert _is_device(full) and sorted(os.listdir(tmp_path)) == ["full"]


def test_out_onto_a_fifo_gives_its_reader_the_csv(tmp_path, capsys, reference_csv):
    """A FIFO stays a FIFO, and its reader receives the whole CSV, the same as a file's."""
    import stat
    import threading

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo).read()))
    reader.start()
    code = main(INVERSE + ["--out", str(fifo)])
    reader.join(timeout=30)
    assert code == 0, capsys.readouterr().err
    assert got == [reference_csv]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_out_onto_a_symlink_replaces_its_target_and_keeps_the_link(tmp_path, capsys, reference_csv):
    """A symlink to a regular file: the target gets the new content, the link stays a link to it."""
    (tmp_path / "data").mkdir()
    target = tmp_path / "data" / "t.csv"
    target.write_text("previous\n")
    os.symlink("data/t.csv", tmp_path / "link.csv")
    assert main(INVERSE + ["--out", str(tmp_path / "link.csv")]) == 0
    assert os.readlink(tmp_path / "link.csv") == "data/t.csv"
    assert target.read_text() == reference_csv
    assert sorted(os.listdir(tmp_path / "data")) == ["t.csv"]


def test_a_symlink_and_its_target_are_one_path(tmp_path, capsys):
    """Two outputs of one command through a link and its target are refused as the same path."""
    os.symlink("p.png", tmp_path / "link.png")
    code = main(["kinematics", "fourbar", "--samples", "8", "--plot", str(tmp_path / "p.png"),
                 "--animate", str(tmp_path / "link.png")])
    assert code == 2 and "both name" in capsys.readouterr().err


def _cli(args, **kwargs):
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return subprocess.run([sys.executable, "-m", "mechsym", *args], cwd=root, env=dict(os.environ, PYTHONPATH=root),
                          **kwargs)


def test_out_onto_stdout_writes_the_csv_there_and_says_so_on_stderr(tmp_path, reference_csv):
    """`--out /dev/stdout` (a link to /proc/self/fd/1, made here rather than the machine's own; stdout a
    pipe): the CSV is stdout itself, the 'wrote' line goes to stderr, the link stays."""
    link = tmp_path / "stdout"
    os.symlink("/proc/self/fd/1", link)
    proc = _cli(INVERSE + ["--out", str(link)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == reference_csv
    assert proc.stderr == f"wrote {link} (16 rows, 11 columns)\n"
    assert os.readlink(link) == "/proc/self/fd/1" and sorted(os.listdir(tmp_path)) == ["reference.csv", "stdout"]


def test_a_table_on_a_full_stdout_is_an_error(tmp_path):
    """A table printed to a stdout that takes no bytes (the full device) exits 2 with one line, not 0."""
    full = _device(tmp_path / "full", 7)
    with open(full, "w") as sink:
        proc = _cli(INVERSE, stdout=sink, stderr=__import__("subprocess").PIPE, text=True)
    assert proc.returncode == 2
    assert proc.stderr == "error: cannot write to stdout: No space left on device\n"


def test_wrote_is_said_only_once_the_files_exist(tmp_path, capsys, monkeypatch):
    """The CSV is staged, then the plot fails: no 'wrote' line for a CSV that never appears."""
    from mechsym.core.errors import InputError
    from mechsym.core.results import Table

    def fail(*args, **kwargs):
        raise InputError("the plot cannot be drawn")

    monkeypatch.setattr(Table, "plot", fail)
    code = main(INVERSE + ["--out", str(tmp_path / "o.csv"), "--plot", str(tmp_path / "o.png")])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and err == "error: the plot cannot be drawn\n"
    assert os.listdir(tmp_path) == []


def test_an_immutable_out_is_refused_before_the_work(tmp_path, capsys):
    """A file marked immutable (chattr +i) cannot be replaced, even by root: refused up front, kept."""
    import subprocess

    path = tmp_path / "o.csv"
    path.write_text("previous\n")
    if subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode != 0:
        pytest.skip("chattr +i is not available here")
    try:
        code = main(INVERSE + ["--out", str(path)])
        assert code == 2
        assert capsys.readouterr().err == f"error: --out '{path}' is immutable or append-only (chattr) and cannot be " \
                                          "replaced\n"
        assert path.read_text() == "previous\n" and os.listdir(tmp_path) == ["o.csv"]
    finally:
        subprocess.run(["chattr", "-i", str(path)])
