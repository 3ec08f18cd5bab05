"""View benchmark: `mechsym view` on the shipped models and a robot of example-robot-data, each page's
size and its load time in a real headless browser (tests/browser.py: Debian's chromium, network off),
beside the same browser loading a page of plotly's JavaScript alone (the peer: what every view pays).

Prints, per view: the command's wall time, the file size, the frames it holds, and the median of three
loads (from navigation to plotly's first drawing) with its ratio to the empty page.

    python benchmarks/bench_view.py

Needs the view extra (plotly), selenium, chromium and chromium-driver; the UR5 row example-robot-data.
"""
from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
from browser import browser, errors, missing, open_view  # noqa: E402

LOADS = 3


def mechsym(*argv):
    """Run the command line in a child process (PYTHONPATH: this tree); its wall time."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "mechsym", *argv], check=True, env=env, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def cases(folder):
    """(name, command lines): the runs a view needs first, then the view."""
    out = folder / "{}.html"
    drop = folder / "drop.csv"
    yield "fourbar", [["view", "fourbar", "--omega", "10", "--out", str(out).format("fourbar")]]
    yield "pasibot gait, foot paths", [["view", "pasibot", "--omega", "5", "--samples", "180", "--trace",
                                       "toe,heel,toe_f,heel_f", "--out", str(out).format("pasibot")]]
    yield "ugv over the bump", [["ugv", "view", "--track", "bump", "--samples", "161", "--out", str(out).format("ugv")]]
    yield "hyq drop (2 s)", [["hyq", "drop", "--out", str(drop)],
                             ["view", "hyq", "--run", str(drop), "--out", str(out).format("hyq")]]
    try:
        from example_robot_data import getModelPath

        urdf = Path(getModelPath("ur_description/urdf/ur5_robot.urdf")) / "ur_description/urdf/ur5_robot.urdf"
        yield "ur5 (visual meshes)", [["view", str(urdf), "--out", str(out).format("ur5")]]
    except ImportError:
        print("(no example-robot-data: the UR5 row is left out)")


def frames(path):
    return len(set(re.findall(r'"name":\s*"(\d+)"', Path(path).read_text())))


def main():
    if missing():
        sys.exit(f"bench_view: {missing()}")
    import plotly.graph_objects as go

    from mechsym.core.view import write_html

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        empty = folder / "empty.html"
        write_html(go.Figure(go.Scatter(x=[0], y=[0])), empty)  # one point: plotly has drawn something
        rows = []
        for name, commands in cases(folder):
            for argv in commands[:-1]:
                mechsym(*argv)
            wall = mechsym(*commands[-1])
            rows.append((name, Path(commands[-1][commands[-1].index("--out") + 1]), wall))
        with browser() as driver:
            open_view(driver, empty)  # the browser's own start-up is not in any row
            base = statistics.median(open_view(driver, empty) for _ in range(LOADS))
            print(f"{'view':28s} {'command [s]':>11s} {'size [MB]':>9s} {'frames':>6s} {'load [s]':>8s} {'x empty':>7s}")
            print(f"{'plotly.js alone (peer)':28s} {'':>11s} {empty.stat().st_size / 1e6:9.2f} {0:6d} {base:8.2f} {1:7.1f}")
            for name, path, wall in rows:
                load = statistics.median(open_view(driver, path) for _ in range(LOADS))
                bad = errors(driver)
                print(f"{name:28s} {wall:11.1f} {path.stat().st_size / 1e6:9.2f} {frames(path):6d} {load:8.2f} "
                      f"{load / base:7.1f}" + (f"  JavaScript errors: {bad}" if bad else ""))


if __name__ == "__main__":
    main()
