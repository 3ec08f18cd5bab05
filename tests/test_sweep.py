"""Sweeps: grid order, failures in their rows, the same figures serially, on a process pool and on a
dask.distributed cluster, and no result lost when a worker dies mid-sweep."""
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import numpy as np
import pytest

from mechsym.app.cli import main
from mechsym.app.registry import find
from mechsym.core.errors import InputError
from mechsym.core.results import read_csv
from mechsym.studies.analyses import InverseOptions
from mechsym.studies import Reduction, TableStudy, axis, grid, sweep
from mechsym.studies.sweep import ModelRef

FOURBAR = find("fourbar")  # what `mechsym sweep ... fourbar` sends to the workers

STUDY = TableStudy(InverseOptions(omega=[3.0], samples=90), ("absmax:torque", "rms:torque", "final:B.fx"))
SETS = {"density": [1.0, 2.0, 3.0], "l_crank": [0.05, 0.06, 1.5]}  # l_crank = 1.5 cannot assemble


@dataclass(frozen=True)
class DiesOnce:
    """The wrapped study, except that the first task to meet density = 2 ends its process (a worker
    killed in the middle); the marker file makes the second attempt proceed."""

    marker: str
    inner: object

    @property
    def names(self):
        return self.inner.names

    def _die_once(self, sets):
        if any(s["density"] == 2.0 for s in sets) and not os.path.exists(self.marker):
            open(self.marker, "w").close()
            os._exit(3)

    def __call__(self, system, params):
        self._die_once([params])
        return self.inner(system, params)

    def batch(self, system, sets):
        self._die_once(sets)
        return self.inner.batch(system, sets)


@pytest.fixture(scope="module")
def serial():
    return sweep(FOURBAR, SETS, STUDY)


def figures(table):
    return np.column_stack([table[n] for n in STUDY.names])


def test_grid_order_and_values_against_direct_calls(serial, fourbar):
    assert serial.names == ["density", "l_crank", "absmax_torque", "rms_torque", "final_B.fx", "status", "message"]
    assert list(serial["density"]) == [1.0] * 3 + [2.0] * 3 + [3.0] * 3  # first axis slowest
    assert list(serial["l_crank"]) == [0.05, 0.06, 1.5] * 3
    theta = 2 * np.pi * np.arange(90) / 90
    for i in np.flatnonzero(serial["l_crank"] < 1):  # the numpy backend, called directly, set by set
        t = fourbar.inverse(theta, 3.0, params={"density": serial["density"][i], "l_crank": serial["l_crank"][i]})
        direct = [np.max(np.abs(t["torque"])), np.sqrt(np.mean(t["torque"] ** 2)), t["B.fx"][-1]]
        assert np.allclose(figures(serial)[i], direct, rtol=1e-10, atol=1e-12)


def test_a_set_that_cannot_assemble_is_reported_in_its_row(serial):
    bad = serial["l_crank"] == 1.5
    assert list(serial["status"][bad]) == ["error"] * 3 and list(serial["status"][~bad]) == ["ok"] * 6
    assert all("cannot assemble" in m and "loop" in m for m in serial["message"][bad])
    assert np.all(np.isnan(figures(serial)[bad])) and np.all(np.isfinite(figures(serial)[~bad]))
    assert all(m == "" for m in serial["message"][~bad])


def test_csv_round_trip_with_empty_figures(serial, tmp_path):
    path = tmp_path / "s.csv"
    serial.to_csv(path)
    lines = path.read_text().splitlines()
    assert lines[0] == "density,l_crank,absmax_torque,rms_torque,final_B.fx,status,message"
    assert lines[3].startswith("1.0,1.5,,,,error,") and "nan" not in path.read_text().lower()
    back = read_csv(path)
    assert np.array_equal(figures(back), figures(serial), equal_nan=True)
    assert list(back["message"]) == list(serial["message"])


def test_process_pool_with_a_worker_killed_equals_serial(serial, tmp_path):
    study = DiesOnce(str(tmp_path / "died"), STUDY)
    table = sweep(FOURBAR, SETS, study, workers=2, chunk=2)
    assert (tmp_path / "died").exists()  # a worker did die
    assert np.array_equal(figures(table), figures(serial), equal_nan=True)
    assert list(table["status"]) == list(serial["status"])


def test_dask_cluster_equals_serial_and_survives_a_killed_worker(serial, tmp_path):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=40) as cluster, distributed.Client(cluster) as client:
        from mechsym.studies.sweep_run import executor_width as _width

        assert _width(client.get_executor()) == 2  # the default chunk sees the cluster's two threads
        table = sweep(FOURBAR, SETS, STUDY, executor=client.get_executor(), chunk=2)
        a, b = figures(table)[serial["status"] == "ok"], figures(serial)[serial["status"] == "ok"]
        assert np.max(np.abs(a - b)) <= 1e-14 * np.max(np.abs(b))
        assert list(table["status"]) == list(serial["status"]) and list(table["message"]) == list(serial["message"])
        killed = sweep(FOURBAR, SETS, DiesOnce(str(tmp_path / "died"), STUDY), executor=client.get_executor(), chunk=2)
        assert (tmp_path / "died").exists()
        assert np.array_equal(figures(killed), figures(serial), equal_nan=True)
        out = tmp_path / "cli.csv"  # the command line on the same cluster
        assert main(["sweep", "inverse", "fourbar", "--omega", "3", "--samples", "90", "--param", "density=1:3:3",
                     "--param", "l_crank=0.05,0.06,1.5", "--reduce", "absmax:torque", "--reduce", "rms:torque",
                     "--reduce", "final:B.fx", "--scheduler", cluster.scheduler_address, "--out", str(out)]) == 0
        assert np.array_equal(figures(read_csv(out)), figures(serial), equal_nan=True)
        one_core = tmp_path / "one_core.csv"  # streamed: the same bytes on one core and on the cluster
        sweep(FOURBAR, SETS, STUDY, out=one_core)
        assert out.read_bytes() == one_core.read_bytes()
        streamed = tmp_path / "killed.csv"
        sweep(FOURBAR, SETS, DiesOnce(str(tmp_path / "died again"), STUDY), executor=client.get_executor(), chunk=2,
              out=streamed)
        assert (tmp_path / "died again").exists() and streamed.read_bytes() == one_core.read_bytes()


def test_process_pool_executor_given_by_the_caller(serial):
    with ProcessPoolExecutor(2) as pool:
        table = sweep(FOURBAR, grid(SETS), STUDY, executor=pool)
    assert np.array_equal(figures(table), figures(serial), equal_nan=True)


def test_inputs():
    assert axis("a=1:2:3") == ("a", [1.0, 1.5, 2.0]) and axis("b=0.1,-2") == ("b", [0.1, -2.0])
    for bad in ("a", "a=1:2", "a=1:x:3", "a=1:2:0", "a=nan"):
        with pytest.raises(InputError):
            axis(bad)
    with pytest.raises(InputError, match="unknown reduction"):
        Reduction.parse("median:torque")
    with pytest.raises(InputError, match="unknown parameter 'bogus'"):
        sweep(FOURBAR, {"bogus": [1.0]}, STUDY)
    with pytest.raises(InputError, match="max_sets"):
        sweep(FOURBAR, {"density": np.ones(11)}, STUDY, max_sets=10)
    table = sweep(FOURBAR, {"density": [1.0]}, TableStudy(InverseOptions(omega=[1.0]), ["max:nosuch"]))
    assert table["status"][0] == "error" and "no column 'nosuch'" in table["message"][0]


def test_reductions_against_numpy():
    from mechsym.core.results import Table

    v = np.array([1.0, -4.0, 2.5])
    t = Table({"c": v})
    expect = {"max": 2.5, "min": -4.0, "mean": -0.5 / 3, "rms": np.sqrt(23.25 / 3), "ptp": 6.5, "absmax": 4.0,
              "final": 2.5}
    for func, value in expect.items():
        assert Reduction(func, "c")(t) == pytest.approx(value, rel=1e-15)


def test_cli_sweep_csv_plot_and_errors(tmp_path, capsys, serial):
    out, png = tmp_path / "s.csv", tmp_path / "s.png"
    code = main(["sweep", "inverse", "fourbar", "--omega", "3", "--samples", "90", "--param", "density=1:3:3",
                 "--param", "l_crank=0.05,0.06,1.5", "--reduce", "absmax:torque", "--reduce", "rms:torque",
                 "--reduce", "final:B.fx", "--out", str(out), "--plot", str(png)])
    _, err = capsys.readouterr()
    assert code == 0 and "3 of 9 parameter sets failed" in err
    table = read_csv(out)
    assert np.array_equal(figures(table), figures(serial), equal_nan=True) and png.stat().st_size > 1000
    code = main(["sweep", "inverse", "fourbar", "--omega", "3", "--param", "l_crank=1.5,2", "--reduce",
                 "max:torque", "--out", str(tmp_path / "none.csv")])
    _, err = capsys.readouterr()
    assert code == 2 and err.startswith("error: every parameter set failed") and not (tmp_path / "none.csv").exists()
    code = main(["sweep", "start-torque", "fourbar", "--param", "density=1"])
    _, err = capsys.readouterr()
    assert code == 2 and "belongs to model 'pasibot'" in err


def test_cli_sweep_kinematics_quasi_static_and_forward(tmp_path, capsys, fourbar):
    code = main(["sweep", "kinematics", "fourbar", "--samples", "36", "--param", "l_crank=0.04,0.05",
                 "--reduce", "ptp:rocker.angle", "--out", str(tmp_path / "k.csv")])
    assert code == 0
    k = read_csv(tmp_path / "k.csv")
    direct = fourbar.kinematics_table(2 * np.pi * np.arange(36) / 36, {"l_crank": 0.05})["rocker.angle"]
    assert k["ptp_rocker.angle"][1] == pytest.approx(np.ptp(direct), rel=1e-9)
    code = main(["sweep", "inverse", "fourbar", "--quasi-static", "--param", "density=1,2", "--reduce", "max:torque",
                 "--out", str(tmp_path / "q.csv")])
    q = read_csv(tmp_path / "q.csv")
    assert code == 0 and q["max_torque"][1] == pytest.approx(2 * q["max_torque"][0], rel=1e-12)  # linear in density
    code = main(["sweep", "forward", "fourbar", "--torque", "0.2", "--t-end", "0.2", "--param", "density=1,2",
                 "--reduce", "final:theta", "--out", str(tmp_path / "f.csv")])
    f = read_csv(tmp_path / "f.csv")
    run = fourbar.forward(0.2, 0.0, 0.0, 0.2, params={"density": 2.0})
    assert code == 0 and f["final_theta"][1] == pytest.approx(run["theta"][-1], rel=1e-7)


def test_model_studies_equal_their_direct_calls(tmp_path, capsys):
    from mechanisms import pasibot_study as st
    from mechanisms import ugv_study as us

    out = tmp_path / "st.csv"
    assert main(["sweep", "start-torque", "pasibot", "--tol", "1e-3", "--param", "density=1.2,1.47", "--workers", "2",
                 "--out", str(out)]) == 0
    table = read_csv(out)
    assert table["start_torque"][0] == st.start_torque({"density": 1.2}, tol=1e-3, backend="c")
    out = tmp_path / "ugv.csv"
    assert main(["sweep", "optimize", "ugv", "--criterion", "peak-torque", "--tracks", "bump,step", "--samples", "41",
                 "--param", "m_body=250,300", "--out", str(out)]) == 0
    table = read_csv(out)
    assert table.names == ["m_body", "value_bump", "value_step", "status", "message"]
    from mechanisms import ugv_optimize as uo

    direct = uo.optimize("step", "peak-torque", samples=41, params={"m_body": 250.0}).value
    assert table["value_step"][0] == pytest.approx(direct, rel=1e-12)


@dataclass(frozen=True)
class Broken:
    """A study with a bug: it fails with an error that is not bad input."""

    def __call__(self, system, params):
        raise KeyError("a bug")


def test_a_failing_study_ends_the_sweep_on_one_core_and_on_a_pool():
    with pytest.raises(KeyError):
        sweep(FOURBAR, {"density": [1.0, 2.0]}, Broken())
    with pytest.raises(KeyError):
        sweep(FOURBAR, {"density": [1.0, 2.0]}, Broken(), workers=2)


@dataclass(frozen=True)
class AlwaysDies:
    """A study whose set density = 2 always ends its process."""

    inner: object

    def __call__(self, system, params):
        if params["density"] == 2.0:
            os._exit(3)
        return self.inner(system, params)

    def batch(self, system, sets):
        if any(s["density"] == 2.0 for s in sets):
            os._exit(3)
        return self.inner.batch(system, sets)


def test_a_task_that_always_kills_its_worker_is_reported_after_its_retries(serial):
    table = sweep(FOURBAR, SETS, AlwaysDies(STUDY), workers=2, chunk=3, retries=1)
    dead = table["density"] == 2.0
    assert list(table["status"][dead]) == ["error"] * 3 and all("task lost 2 times" in m for m in table["message"][dead])
    assert np.array_equal(figures(table)[~dead], figures(serial)[~dead], equal_nan=True)


@dataclass(frozen=True)
class SetBySet:
    """The wrapped study without its batch: one set at a time."""

    inner: object

    def __call__(self, system, params):
        return self.inner(system, params)


@pytest.mark.parametrize("options", [{"omega": [3.0, 5.0], "alpha": 2.0, "samples": 90}, {"quasi_static": True}])
def test_batched_inverse_equals_set_by_set(options):
    study = TableStudy(InverseOptions(**options), ("absmax:torque", "mean:A.fy", "final:M.fx"))
    sets = grid(density=[1.0, 2.5, -1.0], l_crank=[0.05, 0.06, 1.5], g=[9.81, 1.62])  # geometry, mass, gravity
    batched, one_by_one = sweep(FOURBAR, sets, study), sweep(FOURBAR, sets, SetBySet(study))
    assert list(batched["message"]) == list(one_by_one["message"])
    ok = batched["status"] == "ok"
    assert ok.sum() == 8 and "must be positive" in batched["message"][-1]
    a, b = (np.column_stack([t[n] for n in study.names])[ok] for t in (batched, one_by_one))
    assert np.max(np.abs(a - b)) <= 1e-13 * np.max(np.abs(b))


@dataclass(frozen=True)
class SlowAndBroken:
    """One set takes a minute, another has a bug."""

    def __call__(self, system, params):
        if params["density"] == 1.0:
            import time

            time.sleep(60)
        raise KeyError("a bug")


def test_an_error_ends_the_owned_workers_at_once():
    import time

    start = time.perf_counter()
    with pytest.raises(KeyError):
        sweep(FOURBAR, {"density": [1.0, 2.0]}, SlowAndBroken(), workers=2, chunk=1)
    assert time.perf_counter() - start < 20  # the sleeping worker was not waited for


def test_a_grid_too_large_is_refused_before_it_is_built(capsys):
    code = main(["sweep", "inverse", "fourbar", "--omega", "1", "--param", "density=1:2:100000", "--param",
                 "l_crank=0.04:0.06:100000", "--reduce", "max:torque"])
    err = capsys.readouterr().err
    assert code == 2 and "10000000000 parameter sets" in err and "--max-sets" in err


MODEL_FILE = '''
from mechsym import Mechanism


def build():
    m = Mechanism("crank-rocker")
    a = m.parameter("a", 0.04, "m", "crank")
    b = m.parameter("b", 0.12, "m", "coupler")
    c = m.parameter("c", 0.10, "m", "rocker")
    d = m.parameter("d", 0.11, "m", "ground link")
    rho = m.parameter("rho", 2.0, "kg/m", "bar density")
    m.ground(points={"O": (0, 0), "Q": (d, 0)})
    m.bar("crank", ("O", "A"), a, rho)
    m.bar("coupler", ("A", "B"), b, rho, guess=0.9)
    m.bar("rocker", ("Q", "B"), c, 2 * rho, guess=1.6)
    m.revolute("O", "ground", "O", "crank")
    m.revolute("A", "crank", "A", "coupler")
    m.revolute("B", "coupler", "B", "rocker")
    m.revolute("Q", "ground", "Q", "rocker")
    m.coordinate("theta", "O", force="torque")
    return m
'''


def test_a_model_file_travels_by_its_path(tmp_path):
    path = tmp_path / "my_linkage.py"
    path.write_text(MODEL_FILE)
    study = TableStudy(InverseOptions(omega=[10.0], samples=72), ["absmax:torque"])
    sets = {"rho": [1.0, 2.0], "a": [0.03, 0.04]}
    serial_run, pooled = sweep(find(str(path)), sets, study), sweep(find(str(path)), sets, study, workers=2, chunk=1)
    assert list(pooled["status"]) == ["ok"] * 4
    assert np.array_equal(pooled["absmax_torque"], serial_run["absmax_torque"])


def test_sets_with_their_own_geometry_run_in_one_compiled_call(monkeypatch):
    """Link lengths x densities: every set through ONE ms_inverse_sets call (no per-set ms_inverse),
    equal to the set-by-set route (one compiled ms_inverse per set), the set that cannot assemble in its row."""
    from mechsym.studies.sweep import ModelRef

    lib = ModelRef(FOURBAR).system().functions
    calls = {"ms_inverse_sets": 0, "ms_inverse": 0, "ms_inverse_columns": 0}
    for name in calls:
        def counted(*args, _fn=getattr(lib.dll, name), _name=name):
            calls[_name] += 1
            return _fn(*args)

        monkeypatch.setattr(lib.dll, name, counted)
    study = TableStudy(InverseOptions(omega=[2.0, 4.0], alpha=1.5, samples=120),
                       ("absmax:torque", "rms:B.fy", "final:A.fx"))
    sets = grid(l_crank=[0.04, 0.05, 0.06, 1.5], l_rocker=[0.12, 0.13], density=[1.0, 2.5])
    batched = sweep(FOURBAR, sets, study)
    assert calls == {"ms_inverse_sets": 1, "ms_inverse": 0, "ms_inverse_columns": 0}
    one_by_one = sweep(FOURBAR, sets, SetBySet(study))
    # one per set that assembles (the single-set route's kernel writes the table's columns)
    assert calls == {"ms_inverse_sets": 1, "ms_inverse": 0, "ms_inverse_columns": 12}
    assert list(batched["message"]) == list(one_by_one["message"])
    bad = batched["l_crank"] == 1.5
    assert list(batched["status"][bad]) == ["error"] * 4 and all("no configuration" in m or "assemble" in m
                                                                    for m in batched["message"][bad])
    assert list(batched["status"][~bad]) == ["ok"] * 12
    a, b = (np.column_stack([t[n] for n in study.names])[~bad] for t in (batched, one_by_one))
    assert np.linalg.norm(a - b) <= 1e-13 * np.linalg.norm(b)
    assert len(np.unique(a[:, 0])) == 12  # every set its own figures


@pytest.mark.parametrize("name, sets, reductions", [
    ("fourbar", grid(l_crank=[0.04, 0.055, 0.06, 1.5], l_rocker=[0.12, 0.135], density=[1.0, 2.5]),
     ("absmax:torque", "rms:torque", "final:B.fx")),
    ("slider-crank", grid(l_crank=[0.03, 0.05, 0.2], l_rod=[0.1, 0.15], offset=[0.0, 0.02], density=[1.0, 2.0]),
     ("absmax:torque", "rms:torque", "mean:S.fy")),
    ("pasibot", grid(density=[1.2, 1.8], l8=[0.03, 0.034]), ("absmax:T8", "rms:T8")),
])
def test_sets_start_in_the_compiled_call_as_the_python_solver_starts_them(monkeypatch, name, sets, reductions):
    """Each set of the one compiled call assembles from the reference assembly and continues to theta0 in
    C: its figures equal the set-by-set route's (every set started by the Python solver: its own tree
    guess, Gauss-Newton, the lattice continuation) to 1e-12, a set that cannot assemble carries the same
    message, and the Python solver assembled nothing for the sets that succeed."""
    from mechsym.planar.solver import Solver

    study = TableStudy(InverseOptions(omega=[2.0, 4.0], alpha=1.5, samples=72), reductions)
    model = find(name)
    ModelRef(model).system()  # derived here, so that no sweep below starts warm from a manifest in the cache
    sweep(model, sets[:1], study)  # its default reference solved
    assembled = []
    original = Solver.assemble
    monkeypatch.setattr(Solver, "assemble", lambda self, *a, **k: assembled.append(1) or original(self, *a, **k))
    batched = sweep(model, sets, study)
    ok = batched["status"] == "ok"
    assert len(assembled) == (~ok).sum()  # only the sets whose failure the Python route names
    monkeypatch.setattr(Solver, "assemble", original)
    one_by_one = sweep(model, sets, SetBySet(study))
    assert list(batched["message"]) == list(one_by_one["message"])
    assert list(batched["status"]) == list(one_by_one["status"])
    a, b = (np.column_stack([t[n] for n in study.names])[ok] for t in (batched, one_by_one))
    assert ok.sum() >= len(sets) // 2 and np.all(np.abs(a - b) <= 1e-12 * np.max(np.abs(b), axis=0))
    if name != "pasibot":
        assert (~ok).sum() >= 2 and all("assemble" in m or "dead point" in m for m in batched["message"][~ok])


def test_a_sweep_leaves_the_command_lines_warm_start_alone(tmp_path, monkeypatch, capsys):
    """A sweep's inverse study writes no manifest of the `mechsym inverse` warm start (the command itself
    does, in the same cache folder); a model's name alone is refused: the library finds no shipped model."""
    monkeypatch.setenv("MECHSYM_CACHE", str(tmp_path))
    table = sweep(FOURBAR, {"density": [1.0, 2.0]}, STUDY)
    assert list(table["status"]) == ["ok", "ok"] and not list(tmp_path.glob("warm/inverse-*.json"))
    assert main(["inverse", "fourbar", "--omega", "3", "--samples", "8"]) == 0
    capsys.readouterr()
    assert len(list(tmp_path.glob("warm/inverse-fourbar-*.json"))) == 1
    with pytest.raises(InputError, match="give its build function"):
        sweep("fourbar", {"density": [1.0]}, STUDY)


def test_an_inverse_sweep_at_two_speeds_gives_one_figure_per_speed(fourbar, tmp_path, capsys):
    """Two --omega values: a figure per speed (FUNC_COLUMN@omega=W), each the figure of a sweep at that
    speed alone, on the batched route and set by set; PASIBOT (its own inverse, through the command line)
    as well, each speed's figure the reduction of that speed's rows of the inverse table."""
    grid_ = {"l_crank": [0.04, 0.05]}
    both = TableStudy(InverseOptions(omega=[3.0, 6.0], samples=36), ["absmax:torque", "rms:torque"])
    assert both.names == ["absmax_torque@omega=3", "rms_torque@omega=3", "absmax_torque@omega=6", "rms_torque@omega=6"]
    table = sweep(find("fourbar"), grid_, both)
    for w in (3.0, 6.0):
        alone = sweep(find("fourbar"), grid_, TableStudy(InverseOptions(omega=[w], samples=36), ["absmax:torque", "rms:torque"]))
        for figure in ("absmax_torque", "rms_torque"):
            assert np.allclose(table[f"{figure}@omega={w:g}"], alone[figure], rtol=1e-12, atol=0)
        by_set = both(fourbar, {"l_crank": 0.05})
        assert np.isclose(by_set[f"absmax_torque@omega={w:g}"], alone["absmax_torque"][1], rtol=1e-12, atol=0)
    out = tmp_path / "pasibot.csv"
    assert main(["sweep", "inverse", "pasibot", "--omega", "2", "--omega", "4", "--samples", "36",
                 "--param", "g=9.81", "--reduce", "absmax:T8", "--out", str(out)]) == 0
    figures = read_csv(out)
    assert main(["inverse", "pasibot", "--omega", "2", "--omega", "4", "--samples", "36", "--out", str(tmp_path / "i.csv")]) == 0
    inverse = read_csv(tmp_path / "i.csv")
    for w in (2.0, 4.0):
        rows = inverse["omega"] == w
        assert np.isclose(figures[f"absmax_T8@omega={w:g}"][0], np.max(np.abs(inverse["T8"][rows])), rtol=1e-12, atol=0)


def test_tasks_shrink_towards_the_end_and_cover_every_set_once():
    """Task sizes (sweep_run.Tasks): the probes first, then about TASK_SECONDS of work at the measured cost,
    never more than half a worker's share of the sets not yet taken; the tasks cover the runs in order,
    each set once, and the last ones are small, so that the workers finish together."""
    from mechsym.studies.sweep_run import PROBE, TASK_SECONDS, Tasks

    tasks = Tasks([(0, 50_000), (60_000, 100_000)], None, 2)
    spans = []
    while tasks:
        left = tasks.left
        lo, hi = tasks.take()
        if spans:  # the cost measured on the tasks before
            assert hi - lo <= max(1, -(-left // 4)) and hi - lo <= TASK_SECONDS / 5e-5
        else:
            assert hi - lo == PROBE
        tasks.measured(hi - lo, (hi - lo) * 5e-5)  # 50 us per set: 20 000 sets a second
        spans.append((lo, hi))
    covered = np.concatenate([np.arange(lo, hi) for lo, hi in spans])
    assert np.array_equal(covered, np.r_[np.arange(50_000), np.arange(60_000, 100_000)])
    sizes = [hi - lo for lo, hi in spans]
    assert max(sizes) == 20_000 and sizes[-1] == 1 and sizes[-8:] == sorted(sizes[-8:], reverse=True)
