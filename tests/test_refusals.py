"""Nothing silent: the command line keeps numpy's RuntimeWarnings, an unsupported integration method on
the C backend and a floating body on the C backend are refused with a clear error."""
import warnings

import pytest

from mechanisms import fourbar
from mechsym import cli
from mechsym.codegen import c_backend
from mechsym.errors import InputError
from mechsym.system import derive


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


def test_a_floating_body_on_c_is_refused():
    """A 3-D body with backend 'c' warned and ran numpy."""
    from mechanisms import disc

    with pytest.raises(InputError, match="backend 'numpy'"):
        derive(disc.build(), "c")
    assert derive(disc.build(), "numpy").backend == "numpy"
