"""The CLI contract of CONTRACTS.md, table-driven: every command with each class of bad input or fault of
the user's world exits 2 with one line `error: ...`, no traceback, and leaves no file behind.

Run in-process (mechsym.cli.main) in an empty folder; the faults are found before the long work, so each
case takes well under a second once the shipped models are derived."""
import os

import pytest

from mechsym.cli import main
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
