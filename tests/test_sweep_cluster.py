"""A sweep on workers that lack the compiled library (a dask.distributed cluster whose workers' cache folder is
empty, natively or with the portable build a mixed cluster uses) compiles it there and gives the same file
as one core; an interrupted pooled sweep leaves nothing on stderr but its note."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from mechsym.app.registry import find
from mechsym.codegen import c_backend
from mechsym.core.results import read_csv
from mechsym.studies import InverseOptions, KinematicsOptions, TableStudy, grid, sweep

ROOT = Path(__file__).resolve().parent.parent
FOURBAR = find("fourbar")
SETS = grid(l_crank=[0.04, 0.05, 0.06, 1.5], density=[1.0, 2.0])  # l_crank 1.5 cannot assemble


@pytest.mark.skipif(c_backend.compiler() is None, reason="no C compiler")
@pytest.mark.parametrize("portable", ["0", "1"])
def test_workers_with_an_empty_cache_compile_and_give_the_same_file(tmp_path, portable):
    distributed = pytest.importorskip("distributed")
    cache = tmp_path / "workers-cache"
    env = {"MECHSYM_CACHE": str(cache), "MECHSYM_PORTABLE": portable}
    studies = [TableStudy(InverseOptions(omega=[3.0], samples=72), ("absmax:torque", "rms:torque")),
               TableStudy(KinematicsOptions(samples=48), ("max:coupler.angle", "rms:C.y'"))]
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=40, env=env) as cluster, distributed.Client(cluster) as client:
        assert set(client.run(lambda: os.environ.get("MECHSYM_CACHE")).values()) == {str(cache)}
        for k, study in enumerate(studies):
            here, there = tmp_path / f"here{k}.csv", tmp_path / f"there{k}.csv"
            sweep(FOURBAR, SETS, study, out=here)
            sweep(FOURBAR, SETS, study, executor=client.get_executor(), chunk=2, out=there)
            if portable == "0":  # the workers built for this CPU, as the calling process did: the same bytes
                assert there.read_bytes() == here.read_bytes()
            a, b = read_csv(there), read_csv(here)
            assert list(a["status"]) == list(b["status"]) and list(a["message"]) == list(b["message"])
            ok = b["status"] == "ok"
            for name in study.names:
                assert np.all(np.abs(a[name][ok] - b[name][ok]) <= 1e-12 * np.max(np.abs(b[name][ok])))
    built = [p for p in cache.glob("*/lib.so")]
    assert built, "the workers compiled nothing into their empty cache"
    flags = {tuple(__import__("json").loads((p.parent / "meta.json").read_text())["flags"]) for p in built}
    assert all(("-march=native" in f) == (portable == "0") for f in flags)


def test_an_interrupted_pooled_sweep_leaves_no_exception_on_stderr(tmp_path):
    """SIGINT to `mechsym sweep --workers 2` while its tasks run: exit 130 with the note naming the .part, and
    no 'Exception ignored' (the pool's wakeup pipe written after its manager closed it), in several runs."""
    args = [sys.executable, "-m", "mechsym", "sweep", "inverse", "fourbar", "--omega", "3", "--samples", "360",
            "--reduce", "absmax:torque", "--param", "l_crank=0.045:0.055:300", "--param", "l_rocker=0.12:0.13:200",
            "--workers", "2", "--chunk", "50"]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for run in range(3):
        out = tmp_path / f"run{run}.csv"
        part = Path(f"{out}.part")
        proc = subprocess.Popen([*args, "--out", str(out)], cwd=tmp_path, env=env, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while (not part.exists() or part.stat().st_size < 2000) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, err
        assert "Exception ignored" not in err and "Traceback" not in err, err


class Interrupts:
    """A study whose every set raises KeyboardInterrupt in its worker (as Ctrl-C there would): the sweep
    ends with it."""

    names = ["x"]

    def __call__(self, system, params):
        raise KeyboardInterrupt


def test_an_interrupted_pool_is_not_woken_at_exit():
    """The pool that an interrupted sweep terminated has its manager ended and out of concurrent.futures'
    exit registry, which would otherwise write into the manager's closed wakeup pipe at exit."""
    import concurrent.futures.process as cf_process

    before = set(cf_process._threads_wakeups)
    with pytest.raises(KeyboardInterrupt):
        sweep(FOURBAR, SETS, Interrupts(), workers=2, chunk=1)
    left = [t for t in cf_process._threads_wakeups if t not in before]
    assert not left, f"the terminated pool's manager is still registered: {left}"
