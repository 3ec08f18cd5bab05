import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# what a test reads on stderr holds on a cold compiled cache too: no progress and no compile notice, unless
# the test asks for them (tests/test_progress.py)
os.environ.setdefault("MECHSYM_PROGRESS", "0")


SLOW_TIMEOUT = 1800  # seconds a slow-marked test may take before it fails (pyproject's `timeout` for the rest)


def pytest_collection_modifyitems(config, items):
    """Tests marked slow (a minute or more each) run only with MECHSYM_SLOW=1 or when `-m` selects them, under
    SLOW_TIMEOUT instead of the suite's per-test timeout."""
    run_slow = os.environ.get("MECHSYM_SLOW") == "1" or "slow" in (config.getoption("markexpr") or "")
    skip = pytest.mark.skip(reason="slow: run with MECHSYM_SLOW=1 or -m slow")
    for item in items:
        if item.get_closest_marker("slow"):
            item.add_marker(pytest.mark.timeout(SLOW_TIMEOUT) if run_slow else skip)


@pytest.fixture(scope="session")
def fourbar():
    from mechanisms import fourbar
    from mechsym import derive

    return derive(fourbar.build(), backend="numpy")


@pytest.fixture(scope="session")
def slider_crank():
    from mechanisms import slider_crank
    from mechsym import derive

    return derive(slider_crank.build(), backend="numpy")


def agree(a, b, tol):
    """Norm-wise agreement of docs/conventions.md (Accuracy): max|a - b| <= tol * max|b|."""
    import numpy as np

    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.max(np.abs(a - b))) <= tol * float(np.max(np.abs(b)))


def example_blocks(text):
    """An exported example program's output as CSV blocks ("# name: columns" then rows): name -> (columns, rows)."""
    out, name = {}, None
    for line in text.splitlines():
        if line.startswith("# "):
            name, cols = line[2:].split(": ")
            out[name] = (cols.split(","), [])
        else:
            out[name][1].append([float(x) for x in line.split(",")])
    return {k: (cols, np.array(rows)) for k, (cols, rows) in out.items()}


@pytest.fixture
def plotted(monkeypatch):
    """The data of every line of every figure saved during the test, so that a figure test checks what was
    drawn, not only that a file exists: {file name: [(axes title, line label, x, y), ...]}."""
    import re

    from matplotlib.figure import Figure

    saved = {}
    savefig = Figure.savefig

    def recording(self, fname, *args, **kwargs):
        if not isinstance(fname, (str, os.PathLike)):  # an animation's frame into a buffer
            return savefig(self, fname, *args, **kwargs)
        name = os.path.basename(os.fspath(fname))
        staged = re.match(r"^\.(.+)\.[^.]+\.part(\.[^.]+)$", name)  # mechsym.core.output.atomic's temporary name
        saved[staged.group(1) + staged.group(2) if staged else name] = [
            (ax.get_title(), line.get_label(), np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float))
            for ax in self.axes for line in ax.get_lines()]
        return savefig(self, fname, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", recording)
    return saved


def interrupt_cli(args, delay, cwd, sig=signal.SIGINT, ready=None):
    """Run `mechsym ARGS` from the repository folder `cwd` in a process group of its own and send it `sig`
    (SIGINT as from a terminal) after `delay` s, or as soon as `ready(pid)` holds (polled; at most `delay`
    s); (exit code, seconds from the signal to the exit). Any process of its group still there 10 s
    after the exit fails the call (a worker left behind)."""
    proc = subprocess.Popen([sys.executable, "-m", "mechsym", *args], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=dict(os.environ, PYTHONPATH=str(cwd)), start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.perf_counter() + delay
    while ready is not None and not ready(proc.pid) and time.perf_counter() < deadline and proc.poll() is None:
        time.sleep(0.05)
    if ready is None:
        time.sleep(delay)
    proc.send_signal(sig)
    start = time.perf_counter()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    after = time.perf_counter() - start
    while group(proc.pid) and time.perf_counter() < start + 10:
        time.sleep(0.1)
    left = group(proc.pid)
    for pid in left:  # before reading its pipes, which a process left behind would hold open
        os.kill(pid, signal.SIGKILL)
    proc.communicate()
    assert not left, f"processes left behind: {left}"
    return proc.returncode, after


def processes() -> list:
    """(pid, parent pid, process group) of every process but the zombies (from /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if entry.isdigit() and fields[0] != "Z":
            found.append((int(entry), int(fields[1]), int(fields[2])))
    return found


def group(pgid):
    """The processes of the process group `pgid`, zombies excepted."""
    return [pid for pid, _, group_id in processes() if group_id == pgid]


def _frame_record(fig):
    """What one frame of an animation shows: {label: points (n, 2) or (n, 3)} of every line, {label: (centre,
    radius)} of every circle, and "texts": the axes titles and texts."""
    from matplotlib.patches import Circle

    drawn, texts = {}, []
    for ax in fig.axes:
        for line in ax.get_lines():
            data = line.get_data_3d() if hasattr(line, "get_data_3d") else line.get_data()
            assert line.get_label() not in drawn, f"two artists labelled {line.get_label()!r}"
            drawn[line.get_label()] = np.column_stack([np.asarray(c, float) for c in data])
        for patch in ax.patches:
            if isinstance(patch, Circle):
                drawn[patch.get_label()] = (np.asarray(patch.center, float), float(patch.radius))
        texts += [ax.get_title()] + [t.get_text() for t in ax.texts]
    drawn["texts"] = texts
    return drawn


@pytest.fixture
def animated(monkeypatch):
    """The drawn data of every frame of every animation saved during the test, so that an animation test
    checks what each frame shows, not only that a file exists: {file name: [frame record, ...]} in the order
    the frames were written, each record as conftest._frame_record gives it."""
    import re

    from matplotlib import animation

    saved = {}
    save = animation.Animation.save

    def recording(self, filename, writer=None, *args, **kwargs):
        name = os.path.basename(os.fspath(filename))
        staged = re.match(r"^\.(.+)\.[^.]+\.part(\.[^.]+)$", name)  # mechsym.core.output.atomic's temporary name
        frames = saved.setdefault(staged.group(1) + staged.group(2) if staged else name, [])
        frames.clear()
        grab = writer.grab_frame

        def grab_frame(**savefig_kwargs):
            frames.append(_frame_record(self._fig))
            return grab(**savefig_kwargs)

        writer.grab_frame = grab_frame
        return save(self, filename, writer, *args, **kwargs)

    monkeypatch.setattr(animation.Animation, "save", recording)
    return saved


def doc_blocks(page, language="python", section=None):
    """The fenced code blocks of `language` on docs/PAGE (within the section `## SECTION` if given), as the
    page shows them: the examples that the tests run from the page itself."""
    import re

    text = open(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs", page)).read()
    if section is not None:
        text = text.split(f"\n## {section}")[1].split("\n## ")[0]
    return re.findall(rf"```{language}\n(.*?)```", text, re.S)
