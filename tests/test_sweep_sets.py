"""Kinematics and forward sweeps of many parameter sets in one compiled call (mechsym.codegen.c_sets through
TableStudy.batch): each set assembled from the reference assembly and continued to its start in C, its rows
equal to the set-by-set route's (each set started by the Python solver, one compiled kinematics or forward
run per set) to 1e-12, a set that cannot assemble carrying the same message; and, as an independent route,
the numpy backend's continuation and scipy's DOP853."""
import numpy as np
import pytest

from mechsym.app.registry import find
from mechsym.codegen import c_backend
from mechsym.codegen.c_sets import _bound
from mechsym.studies import ForwardOptions, KinematicsOptions, TableStudy, grid, sweep
from mechsym.studies.sweep import ModelRef

pytestmark = pytest.mark.skipif(c_backend.compiler() is None, reason="no C compiler")

FOURBAR = find("fourbar")
SETS = grid(l_crank=[0.04, 0.055, 0.06, 1.5], l_rocker=[0.12, 0.135], density=[1.0, 2.5])  # l_crank 1.5: no assembly


class SetBySet:
    """The study without its batch: every set through TableStudy.__call__ (the route before the batch)."""

    def __init__(self, study):
        self.study, self.names = study, study.names

    def __call__(self, system, params):
        return self.study(system, params)


def counted_calls(monkeypatch, names, model=FOURBAR):
    """The number of calls of each compiled entry point in `names` of the model's library, from now on."""
    lib = ModelRef(model).system().functions
    _bound(lib)
    calls = dict.fromkeys(names, 0)
    for name in names:
        def counted(*args, _fn=getattr(lib.dll, name), _name=name):
            calls[_name] += 1
            return _fn(*args)

        monkeypatch.setattr(lib.dll, name, counted)
    return calls


def same_rows(batched, one_by_one, names, tol=1e-12):
    """The same status and message per set, and the figures of the sets that succeed equal to `tol` of each
    figure's largest magnitude."""
    assert list(batched["status"]) == list(one_by_one["status"])
    assert list(batched["message"]) == list(one_by_one["message"])
    ok = batched["status"] == "ok"
    a, b = (np.column_stack([t[n] for n in names])[ok] for t in (batched, one_by_one))
    assert np.all(np.abs(a - b) <= tol * np.max(np.abs(b), axis=0))
    return ok


@pytest.mark.parametrize("options, reductions", [
    (KinematicsOptions(samples=72), ("max:coupler.angle", "rms:B.x''", "min:rocker.angle'", "ptp:C.y")),
    (KinematicsOptions(samples=90, theta0=0.3, omega=4.0, alpha=-2.0), ("absmax:C.ax", "rms:coupler.omega",
                                                                       "final:rocker.alpha")),
])
def test_a_kinematics_sweep_is_one_compiled_call_equal_to_the_set_by_set_route(monkeypatch, options, reductions):
    from mechsym.planar.solver import Solver

    study = TableStudy(options, reductions)
    calls = counted_calls(monkeypatch, ["ms_kinematics_sets", "ms_kinematics"])
    sweep(FOURBAR, SETS[:1], study)  # the default reference solved
    calls.update(dict.fromkeys(calls, 0))
    assembled, original = [], Solver.assemble
    monkeypatch.setattr(Solver, "assemble", lambda self, *a, **k: assembled.append(1) or original(self, *a, **k))
    batched = sweep(FOURBAR, SETS, study)
    assert calls == {"ms_kinematics_sets": 1, "ms_kinematics": 0}
    assert len(assembled) == (batched["status"] == "error").sum()  # only where the Python route names a failure
    monkeypatch.setattr(Solver, "assemble", original)
    one_by_one = sweep(FOURBAR, SETS, SetBySet(study))
    assert calls["ms_kinematics"] == 12  # one per set that assembles
    ok = same_rows(batched, one_by_one, study.names)
    assert ok.sum() == 12 and all("cannot assemble" in m for m in batched["message"][~ok])
    assert len(np.unique(batched[study.names[0]][ok])) > 4  # every geometry its own figures


def test_kinematics_sets_agree_with_the_numpy_continuation():
    """The independent route: the numpy backend's continuation and exact derivatives, set by set."""
    study = TableStudy(KinematicsOptions(samples=60), ("max:coupler.angle", "rms:B.x''", "absmax:C.y'"))
    sets = SETS[:8]
    c, numpy = sweep(FOURBAR, sets, study), sweep(FOURBAR, sets, study, backend="numpy")
    same_rows(c, numpy, study.names, tol=1e-9)


@pytest.mark.parametrize("options", [
    ForwardOptions(torque=0.2, t_end=0.3),
    ForwardOptions(torque=0.0, t_end=0.25, theta0=1.0, omega0=-6.0, rtol=1e-8),
])
def test_a_forward_sweep_is_one_compiled_call_equal_to_the_set_by_set_route(monkeypatch, options):
    study = TableStudy(options, ("final:theta", "absmax:omega", "rms:theta", "max:t"))
    calls = counted_calls(monkeypatch, ["ms_forward_sets", "ms_forward"])
    batched = sweep(FOURBAR, SETS, study)
    assert calls == {"ms_forward_sets": 1, "ms_forward": 0}
    one_by_one = sweep(FOURBAR, SETS, SetBySet(study))
    assert calls["ms_forward"] == 12
    ok = same_rows(batched, one_by_one, study.names)
    assert ok.sum() == 12 and np.all(batched["max_t"][ok] == options.t_end)


def test_forward_sets_agree_with_scipy():
    """The independent route: the numpy backend's forward run (scipy's DOP853 on the tracked configuration)."""
    study = TableStudy(ForwardOptions(torque=0.1, t_end=0.2, rtol=1e-10), ("final:theta", "final:omega"))
    sets = SETS[:4]
    same_rows(sweep(FOURBAR, sets, study), sweep(FOURBAR, sets, study, backend="numpy"), study.names, tol=1e-7)


def test_a_forward_set_that_cannot_run_is_named_as_the_set_by_set_route_names_it():
    """A torque so large that the start's acceleration gives a travel too large to represent: the batch leaves
    the set to the set-by-set route, whose message the row carries."""
    study = TableStudy(ForwardOptions(torque=1e300, t_end=1.0), ("final:theta",))
    table = sweep(FOURBAR, SETS[:2], study)
    assert list(table["status"]) == ["error"] * 2 and all("too large to represent" in m for m in table["message"])


def chain_of_two():
    """The two-loop parallelogram chain (a module-level build function a worker could import)."""
    from mechanisms.fourbar_chain import build

    return build(2)


def test_a_forward_start_at_rest_on_a_bifurcation_is_named_as_the_set_by_set_route_names_it(monkeypatch):
    """From rest at theta = 0 every bar of the parallelogram chain is aligned (Phi_q loses rank 2): the batch
    leaves each set to the set-by-set route, which names the point; from rest a little off it every set runs
    in the one compiled call and agrees with the set-by-set route to the run's tolerance (the motion passes
    the aligned position, where the two routes' starts, equal to their last bits, part by up to rtol)."""
    sets = grid(l=[0.8, 1.0, 1.3], density=[1.0, 2.0])
    at_point = TableStudy(ForwardOptions(torque=0.0, t_end=0.2, theta0=0.0), ("final:theta",))
    table = sweep(chain_of_two, sets, at_point)
    assert list(table["status"]) == ["error"] * 6
    assert all("the start, at rest" in m and "bifurcation" in m for m in table["message"])
    assert list(table["message"]) == list(sweep(chain_of_two, sets, SetBySet(at_point))["message"])
    off = TableStudy(ForwardOptions(torque=0.0, t_end=0.2, theta0=0.05, rtol=1e-9), ("final:theta", "absmax:omega"))
    calls = counted_calls(monkeypatch, ["ms_forward_sets"], chain_of_two)
    batched = sweep(chain_of_two, sets, off)
    assert calls == {"ms_forward_sets": 1}
    assert same_rows(batched, sweep(chain_of_two, sets, SetBySet(off)), off.names, tol=1e-8).all()
