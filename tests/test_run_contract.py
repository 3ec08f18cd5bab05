"""The run contract: one options/grid helper (mechsym.core.timegrid), one RunResult from every runner, and the
shared argument groups and writer of every command (mechsym.app.options), checked by introspection so that
a new command cannot drift."""
import argparse
import math

import numpy as np
import pytest

from mechsym.app import options
from mechsym.app.cli import build_parser, main
from mechsym.core.errors import InputError
from mechsym.core.results import RunEvent, RunResult
from mechsym.core.timegrid import CLI_NAMES, run_options, uniform_grid

# ------------------------------------------------------------------ the options and the grid


def test_grid_is_the_contract_sampling_against_linspace():
    """0, dt, ..., t_end inclusive: where t_end is a multiple of dt it equals linspace (an independent
    construction), the default step is t_end/1000, and a run that stopped early ends within one step of
    where it stopped, never beyond (the last sample clipped to it when within half a step)."""
    opts = run_options(2.0, rtol=1e-8)
    assert opts.dt == 2.0 / 1000 and opts.atol == 1e-8
    np.testing.assert_allclose(opts.grid(), np.linspace(0.0, 2.0, 1001), rtol=0, atol=1e-15)
    assert opts.grid()[-1] == 2.0
    stopped = opts.grid(0.7003)
    assert len(stopped) == 351 and stopped[-1] == pytest.approx(0.7, abs=1e-15)
    assert opts.grid(0.6999)[-1] == 0.6999 and len(opts.grid(0.6999)) == 351
    # t_end inclusive where it is not a whole number of steps: a shorter last step, no sample past the end
    assert run_options(1.0, 0.3).grid().tolist() == pytest.approx([0.0, 0.3, 0.6, 0.9, 1.0], abs=1e-15)
    assert uniform_grid(1.0, 0.3, end=False).tolist() == pytest.approx([0.0, 0.3, 0.6, 0.9])
    n = run_options(3.0, n=7)
    assert n.dt is None and n.grid().tolist() == pytest.approx(np.linspace(0, 3, 7).tolist())
    assert run_options(1.0).rtol is None  # a run without tolerances


@pytest.mark.parametrize("kwargs, message", [
    ({"t_end": 0.0}, "t_end must be positive and finite, got 0.0"),
    ({"t_end": -1.0}, "t_end must be positive"),
    ({"t_end": math.inf}, "t_end must be positive and finite"),
    ({"t_end": "abc"}, "t_end must be a number, got 'abc'"),
    ({"t_end": 1.0, "dt": 2.0}, "dt must be in (0, t_end], got 2.0"),
    ({"t_end": 1.0, "dt": 0.0}, "dt must be in (0, t_end]"),
    ({"t_end": 1.0, "rtol": 0.0}, "rtol must be positive and finite, got 0.0"),
    ({"t_end": 1.0, "rtol": 1e-6, "atol": -1.0}, "atol must be positive and finite, got -1.0"),
    ({"t_end": 1.0, "rtol": math.nan}, "rtol must be positive and finite, got nan"),
    ({"t_end": 1.0, "n": 1}, "n must be a whole number of at least 2, got 1"),
    ({"t_end": 1.0, "n": 5, "dt": 0.1}, "give dt or n, not both"),
    ({"t_end": 1.0, "arrays": {"q0": [0.0, math.nan]}}, "q0 must be finite"),
])
def test_bad_options_name_what_is_wrong(kwargs, message):
    with pytest.raises(InputError) as err:
        run_options(**kwargs)
    assert message in str(err.value)


def test_command_line_names_and_memory_budget():
    with pytest.raises(InputError, match="--dt must be in \\(0, --t-end\\], got 5.0"):
        run_options(1.0, 5.0, names=CLI_NAMES)
    from mechsym.core.budget import limit_memory

    with limit_memory(2**20), pytest.raises(InputError, match="simulation at 1e\\+09 time points needs about"):
        run_options(1.0, 1e-9, width=60)              # 1e9 points of 68 values: far above 1 MiB
    with limit_memory(2**20):
        run_options(1.0, 1e-3, width=60)              # 1001 points: 0.5 MiB


# ------------------------------------------------------------------ RunResult


def test_run_result_sorts_events_and_is_a_table(tmp_path):
    res = RunResult({"t": np.array([0.0, 1.0]), "x": np.array([1.0, 2.0])}, {"t": "s"}, "demo",
                    events=[RunEvent(0.7, "b"), RunEvent(0.2, "a", np.array([1.0])), RunEvent(0.5, "b")])
    assert [e.t for e in res.events] == [0.2, 0.5, 0.7] and [e.t for e in res.events_named("b")] == [0.5, 0.7]
    assert res.status == "done" and res.message == "" and res.nfev == 0 and res.solution is None
    res.to_csv(tmp_path / "r.csv")
    assert (tmp_path / "r.csv").read_text().splitlines()[0] == "t,x"


def test_forward_and_simulate_return_run_results_that_agree(fourbar):
    """The one-coordinate forward run and the general simulate integrate the same motion: both RunResults
    with their nfev and dense solutions, agreeing on the grid and through the dense outputs."""
    from mechsym.planar.simulate import simulate

    a = fourbar.forward(0.05, 0.3, 1.0, 0.5, dt=0.01, rtol=1e-10, params=None)
    b = simulate(fourbar, [0.3], [1.0], 0.5, dt=0.01, rtol=1e-10, forces={"torque": 0.05})
    assert isinstance(a, RunResult) and isinstance(b, RunResult)
    assert a.nfev > 0 and b.nfev > 0 and a.status == b.status == "done"
    np.testing.assert_allclose(a["theta"], b["theta"], rtol=0, atol=1e-8)
    t = np.linspace(0.0, 0.5, 13)
    if a.solution is not None:                 # the numpy route keeps the dense output
        np.testing.assert_allclose(a.solution(t)[0], b.solution(t)[0], rtol=0, atol=1e-8)
    np.testing.assert_allclose(b.solution(b["t"])[0], b["theta"], rtol=0, atol=1e-14)


def test_simulate_events_are_named_and_carry_the_state(fourbar):
    from mechsym.planar.simulate import simulate

    def turning(t, y):
        return y[1]

    turning.terminal, turning.direction = True, -1
    res = simulate(fourbar, [0.0], [0.0], 2.0, rtol=1e-10, events=[turning])
    assert res.status == "stopped" and [e.name for e in res.events] == ["turning"]
    assert "stopped by turning" in res.message and 0 <= res.events[0].t - res["t"][-1] < 2.0 / 1000
    assert abs(res.events[0].state[1]) < 1e-9


# ------------------------------------------------------------------ the shared argument groups

SHARED_OPTIONS = {"--t-end": "time", "--dt": "time", "--rtol": "tolerances", "--atol": "tolerances",
                  "--out": "output", "--plot": "plot", "--animate": "animation", "--backend": "backend"}


def _commands(parser, prefix=()):
    """(command words, parser) of every command that parses options (no subcommands of its own)."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield prefix, parser
    for action in subs:
        for name, child in action.choices.items():
            yield from _commands(child, prefix + (name,))


COMMANDS = dict((" ".join(words), p) for words, p in _commands(build_parser()))


def _drift(commands):
    """'command: --flag' of every shared option not made by mechsym.app.options (or made by another group)."""
    drift = []
    for name, parser in commands.items():
        for action in parser._actions:
            for flag in action.option_strings:
                group = SHARED_OPTIONS.get(flag)
                if group is not None and getattr(action, options.SHARED, None) != group:
                    drift.append(f"{name}: {flag}")
    return drift


def test_every_time_tolerance_output_option_comes_from_the_shared_groups():
    drift = _drift(COMMANDS)
    assert not drift, "options defined outside mechsym.app.options:\n" + "\n".join(drift)
    with_rtol = {n for n, p in COMMANDS.items() if any("--rtol" in a.option_strings for a in p._actions)}
    assert {"forward", "sweep forward", "disc", "cart", "chain3", "polydisc", "hyq fall", "hyq drop",
            "hyq tilted", "pasibot slip"} <= with_rtol


def _option(command, flag):
    return next(a for a in COMMANDS[command]._actions if flag in a.option_strings)


@pytest.mark.parametrize("command, t_end, rtol", [
    ("forward", "required", 1e-9), ("sweep forward", "required", 1e-9), ("disc", "required", 1e-9),
    ("cart", "required", 1e-9), ("chain3", 1.5, 1e-8), ("polydisc", 1.5, 1e-6), ("hyq fall", 1.0, 1e-9),
    ("hyq drop", 2.0, 1e-9), ("hyq tilted", 2.0, 1e-9), ("pasibot slip", None, 1e-10),
])
def test_each_command_keeps_its_defaults(command, t_end, rtol):
    opt = _option(command, "--t-end")
    assert (opt.required if t_end == "required" else opt.default == t_end and not opt.required)
    assert _option(command, "--rtol").default == rtol


def test_a_hand_written_option_is_seen_as_drift():
    """The check above can fail: a new command with --rtol by hand, or --out made as a plot, is reported."""
    root = argparse.ArgumentParser()
    sub = root.add_subparsers()
    good, bad = sub.add_parser("good"), sub.add_parser("bad")
    options.time_group(good, 1.0)
    options.tolerance_group(good)
    options.output_group(good)
    bad.add_argument("--rtol", type=float)
    options.time_group(bad, 1.0)
    commands = dict((" ".join(w), p) for w, p in _commands(root))
    assert _drift(commands) == ["bad: --rtol"]


def test_command_line_time_options_are_checked_with_their_names(tmp_path, capsys):
    code = main(["chain3", "--t-end", "0.1", "--dt", "1", "--out", str(tmp_path / "c.csv")])
    err = capsys.readouterr().err
    assert code == 2 and "--dt must be in (0, --t-end], got 1.0" in err and not (tmp_path / "c.csv").exists()


# ------------------------------------------------------------------ the writer


def test_writer_writes_prints_and_draws(tmp_path, capsys):
    from mechsym.core.results import Table, read_csv

    table = Table({"t": np.array([0.0, 0.5]), "x": np.array([1.0, -2.0])})
    drawn = []
    options.write_outputs(table, tmp_path / "o.csv", "; note", [(tmp_path / "p.png", drawn.append), (None, print)])
    out = capsys.readouterr().out.splitlines()
    assert out == [f"wrote {tmp_path / 'o.csv'} (2 rows, 2 columns); note", f"wrote {tmp_path / 'p.png'}"]
    assert drawn == [tmp_path / "p.png"] and read_csv(tmp_path / "o.csv")["x"].tolist() == [1.0, -2.0]
    options.write_outputs(table, None, stdout=True)
    assert capsys.readouterr().out.splitlines() == ["t,x", "0.0,1.0", "0.5,-2.0"]  # shortest round trip (repr)
    options.write_outputs(table, None, drawings=[(tmp_path / "q.png", drawn.append)], stdout=True)
    assert capsys.readouterr().out.splitlines() == [f"wrote {tmp_path / 'q.png'}"]  # a picture: no table on stdout
