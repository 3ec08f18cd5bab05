"""The contact run on C (mechsym.contact.c_run): the same run as the numpy route, from the cache, refusals, Ctrl-C."""
import os
import signal
import threading
import time

import numpy as np
import pytest

from mechsym.codegen import c_backend, keys
from mechsym.contact import ContactPoints, GroundContact, simulate_contact
from mechsym.core.errors import InputError

pytestmark = pytest.mark.skipif(c_backend.compiler() is None, reason="no C compiler")


@pytest.fixture(scope="module")
def disc():
    from mechanisms import polydisc

    return polydisc.model()


def test_example_7_on_c_is_the_numpy_run(disc):
    """Example 7 (1.5 s, rtol 1e-6, 2 ms step bound): the C route takes scipy's RK45 steps and locates the same
    events, so both routes record the same 151 point state changes in the same order at the same instants
    (to 1e-8 s) and their tables agree far inside the tolerance (1e-6 of each quantity's range); the
    right-hand side counts agree to 1 %."""
    from mechanisms import polydisc

    system, points, ground = disc
    y0 = polydisc.initial_state(system)
    runs = {b: simulate_contact(points, ground, y0, 1.5, rtol=1e-6, max_step=2e-3, backend=b) for b in ("c", "numpy")}
    c, n = runs["c"], runs["numpy"]
    assert len(c.timeline) == len(n.timeline) > 100
    assert [(e.index, e.before, e.after) for e in c.timeline] == [(e.index, e.before, e.after) for e in n.timeline]
    assert max(abs(a.t - b.t) for a, b in zip(c.timeline, n.timeline)) < 1e-8
    for name in n.names:
        span = np.ptp(n[name]) or 1.0
        assert np.max(np.abs(c[name] - n[name])) <= 1e-6 * span, name
    assert abs(c.stats["rhs_evaluations"] - n.stats["rhs_evaluations"]) <= 0.01 * n.stats["rhs_evaluations"]
    assert c.stats["unlocated"] == 0 and c.stats["pieces"] == n.stats["pieces"]
    # the pieces' dense outputs: the same states as the numpy route's anywhere inside the run
    t = np.linspace(0.0, 1.5, 777)
    np.testing.assert_allclose(c.sample(t), n.sample(t), atol=1e-6 * np.max(np.abs(n.sample(t))))


def test_library_is_served_from_the_cache_without_generating(disc, tmp_path, monkeypatch):
    """The contact library goes through the C backend's cache keyed by construction: another process (memory
    cleared, generating and compiling made impossible) loads the entry as it is and runs the same."""
    from mechanisms import polydisc
    from mechsym.contact import c_run

    system, points, ground = disc
    monkeypatch.setenv("MECHSYM_CACHE", str(tmp_path))
    monkeypatch.setattr(c_run, "_LIBRARIES", {})
    y0 = polydisc.initial_state(system)
    first = simulate_contact(points, ground, y0, 0.2, rtol=1e-6, max_step=2e-3, backend="c")
    (entry,) = tmp_path.glob("contact-polydisc-*")
    stamp = (entry / "lib.so").stat().st_mtime_ns
    monkeypatch.setattr(c_run, "_LIBRARIES", {})
    monkeypatch.setattr(c_backend, "_LOADED", {})
    monkeypatch.setattr(c_backend, "write_entry", None)
    monkeypatch.setattr(c_run, "generate", None)
    again = simulate_contact(points, ground, y0, 0.2, rtol=1e-6, max_step=2e-3, backend="c")
    assert (entry / "lib.so").stat().st_mtime_ns == stamp
    np.testing.assert_array_equal(again["x"], first["x"])
    # a declaration that differs (an octagon's points) is another key, never the stale entry
    other, other_points, _ = polydisc.model(sides=8)
    key = lambda system: keys.cache_key("floating body", system.body, keys.package_source())  # noqa: E731
    assert key(other_points.system) != key(points.system)


def test_refusals(disc):
    from mechanisms import chain3, polydisc
    from mechsym import derive

    system, points, ground = disc
    y0 = polydisc.initial_state(system)
    with pytest.raises(InputError, match="not available for a contact run on C"):
        simulate_contact(points, ground, y0, 0.1, method="DOP853", backend="c")
    with pytest.raises(InputError, match="numpy' only"):
        simulate_contact(points, ground, y0, 0.1, hold_states=False, backend="c")
    with pytest.raises(InputError, match="unknown backend"):
        simulate_contact(points, ground, y0, 0.1, backend="cuda")
    planar = ContactPoints(derive(chain3.build(), backend="numpy"), {"A": ("link1", "A")})
    with pytest.raises(InputError, match="floating 3-D body"):
        simulate_contact(planar, GroundContact(1e6, 2000, 0.5), np.zeros(6), 0.1, backend="c")


def test_ctrl_c_ends_a_c_run_within_a_second(disc):
    """A long run (the disc falling over, then 2000 s at rest: some 15 s of C) ends within a second of SIGINT
    as a KeyboardInterrupt, and Python's handler is back afterwards."""
    from mechanisms import polydisc

    system, points, ground = disc
    y0 = polydisc.initial_state(system, twist=0.22)
    simulate_contact(points, ground, y0, 0.01, backend="c")                # compiled before the clock starts
    sent = []
    timer = threading.Timer(0.5, lambda: (sent.append(time.perf_counter()), os.kill(os.getpid(), signal.SIGINT)))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            simulate_contact(points, ground, y0, 2000.0, rtol=1e-10, max_step=2e-3, backend="c")
        stopped = time.perf_counter()
    finally:
        timer.cancel()
    assert sent and stopped - sent[0] < 1.0
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_command_on_both_backends(tmp_path, capsys):
    """`mechsym polydisc` runs on C by default and on numpy with --backend numpy: the same columns and rows."""
    from mechsym.app.cli import main
    from mechsym.core.results import read_csv

    tables = {}
    for backend in ("c", "numpy"):
        out = tmp_path / f"{backend}.csv"
        assert main(["polydisc", "--t-end", "0.15", "--backend", backend, "--out", str(out)]) == 0
        tables[backend] = read_csv(out)
    capsys.readouterr()
    c, n = tables["c"], tables["numpy"]
    assert c.names == n.names and len(c) == len(n) == 1001
    for name in n.names:
        assert np.max(np.abs(c[name] - n[name])) <= 1e-8 * max(1.0, np.abs(n[name]).max()), name


@pytest.mark.parametrize("mu", [0.4, 0.0])
def test_c_law_is_the_python_law(disc, mu):
    """The C run's per-point law (printed from spatial_v2.law_spec) and signals (ms_contact.h) against
    mechsym.contact.spatial_v2's laws_in_states (numpy) and points.contact_signals on random states,
    every held state at every point (none, stick, slip; each in and out of the law's own classification),
    and the guards of the formulas: a point on the ground (z = +0, -0), above it, a zero sticking force
    (w = 0) while slipping, a zero depth rate."""
    import ctypes

    from mechsym.contact import NO_CONTACT, SLIP, STICK
    from mechsym.contact.c_run import library
    from mechsym.contact.points import classify, contact_signals
    from mechsym.contact.spatial_v2 import laws_in_states

    system, points, _ = disc
    K, D = 1e6, 2000.0
    rng = np.random.default_rng(7)
    n = 3000
    p = rng.normal(scale=1e-3, size=(3, n))
    v = rng.normal(scale=0.5, size=(3, n))
    u = rng.normal(scale=1e-4, size=(2, n))
    p[2, :6] = [0.0, -0.0, 0.0, -0.0, 1e-3, -1e-3]
    u[:, 6:9] = 0.0
    v[:2, 6:9] = 0.0                                            # w = 0
    v[2, 9] = -K * p[2, 9] / D                                  # e = 0 (to rounding)
    ground = GroundContact(K, D, mu)
    c_ref, s_ref = contact_signals(ground, p, v, u)
    fn = classify(c_ref, s_ref)
    dll = library(system).dll
    for state in (np.tile([NO_CONTACT, STICK, SLIP], n)[:n], np.tile([SLIP, NO_CONTACT, STICK], n)[:n],
                  np.tile([STICK, SLIP, NO_CONTACT], n)[:n], fn):
        state = np.ascontiguousarray(state, np.intc)
        f, ud, c, s = np.empty((3, n)), np.empty((2, n)), np.empty(n), np.empty(n)
        ptr = lambda a: a.ctypes.data_as(ctypes.c_void_p)  # noqa: E731
        dll.ms_contact_law(ctypes.c_int(n), ptr(p), ptr(v), ptr(u), ptr(state), ctypes.c_double(K),
                           ctypes.c_double(D), ctypes.c_double(mu), ptr(f), ptr(ud), ptr(c), ptr(s))
        f_ref, ud_ref = laws_in_states(K, D, mu, p, v, u, state)
        assert np.abs(f - f_ref).max() <= 1e-13 * np.abs(f_ref).max()
        assert np.abs(ud - ud_ref).max() <= 1e-13 * np.abs(ud_ref).max()
        np.testing.assert_array_equal(np.signbit(c), np.signbit(c_ref))
        assert np.abs(c - c_ref).max() <= 1e-13 * np.abs(c_ref).max()
        assert np.abs(s - s_ref).max() <= 1e-13 * np.abs(s_ref).max()
    assert {NO_CONTACT, STICK, SLIP} <= set(fn.tolist())
