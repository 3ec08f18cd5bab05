"""Nothing silent: the command line keeps numpy's RuntimeWarnings, an unsupported integration method on
the C backend and a floating body on the C backend are refused with a clear error."""
import warnings

import pytest

from mechanisms import fourbar
from mechsym import derive
from mechsym.app import cli
from mechsym.codegen import c_backend
from mechsym.core.errors import InputError


def test_the_command_line_keeps_runtime_warnings(capsys):
    """The command line turned off every RuntimeWarning for the rest of the process."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert cli.main(["params", "fourbar"]) == 0
        warnings.warn("probe", RuntimeWarning)
    assert [str(w.message) for w in seen if w.category is RuntimeWarning] == ["probe"]


def test_warnings_on_the_command_line_are_one_line():
    line = cli._warning_line("the cache\nis read-only", UserWarning, "x.py", 3, "source")
    assert line == "warning: the cache is read-only\n"


@pytest.mark.skipif(c_backend.compiler() is None, reason="no C compiler")
def test_c_forward_refuses_a_method_it_does_not_have():
    """forward ignored `method` on the C backend (it always ran its own integrator)."""
    s = derive(fourbar.build(), "c")
    with pytest.raises(InputError, match="DOP853 only, not method 'RK45'"):
        s.forward(0.0, 0.0, 1.0, 0.1, method="RK45")
    assert len(s.forward(0.0, 0.0, 1.0, 0.1, method="DOP853")["t"]) == 1001


def test_a_floating_body_on_c_runs_on_c():
    """A 3-D body with backend 'c' warned and ran numpy: it now runs its rates in C (the numpy functions made
    unusable, the rates still come, equal to numpy's)."""
    import numpy as np

    from mechanisms import disc
    from mechsym.codegen import c_backend

    if c_backend.compiler() is None:
        pytest.skip("no C compiler")
    on_c, on_numpy = derive(disc.build(), "c"), derive(disc.build(), "numpy")
    assert on_c.backend.name == "c" and on_numpy.backend.name == "numpy"
    y = on_numpy.initial_state((0, 0, 0.2), quat_xyzw=(0.1, 0.3, -0.2, 0.9), velocity=(1, 2, 0), omega=(0, 3, 5))
    ref = on_numpy.accelerations(y, np.arange(6.0))
    on_c.rate = None
    np.testing.assert_allclose(on_c.accelerations(y, np.arange(6.0)), ref, rtol=0, atol=1e-13 * np.abs(ref).max())


def test_model_commands_keep_runtime_warnings(capsys, monkeypatch):
    """`mechsym pasibot` turned off every RuntimeWarning for the whole of its run: a warning raised inside
    it now reaches the user as one line."""
    from mechanisms import pasibot_study as st

    def warned(*args, **kwargs):
        warnings.warn("probe inside the command", RuntimeWarning)
        return 0.84

    monkeypatch.setattr(st, "start_torque", warned)
    monkeypatch.setattr(st, "energy_start_threshold", lambda *a, **k: 0.84)
    assert cli.main(["pasibot", "start-torque"]) == 0
    assert "warning: probe inside the command" in capsys.readouterr().err
