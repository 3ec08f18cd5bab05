"""The numbers and status codes shared by Python and the C runtime come from one table
(mechsym.codegen.constants): the C compiler reads the printed ms_constants.h back to the table's values,
no runtime file defines one of them itself, and the Python modules that use them take them from the table."""
import re
import subprocess
from pathlib import Path

import pytest

from mechsym.codegen import c_backend, c_runtime, constants

RUNTIME = Path(c_runtime.__file__).resolve().parent / "runtime"


def test_the_compiled_header_reads_back_to_the_table(tmp_path):
    """A C program including ms_constants.h prints every macro at full precision: the same values."""
    cc = c_backend.compiler()
    if cc is None:
        pytest.skip("no C compiler")
    (tmp_path / "ms_constants.h").write_text(c_runtime.text("ms_constants.h"))
    names = [f"MS_{n}" for n in [*constants.NUMBERS, *constants.STATUSES, *constants.CONTACT_STATES]] + \
            [f"MC_{n}" for n in constants.HARD_STATUSES]
    body = "".join(f'  printf("{n} %.17g\\n", (double)({n}));\n' for n in names)
    (tmp_path / "main.c").write_text(f'#include <stdio.h>\n#include "ms_constants.h"\nint main(void) {{\n{body}'
                                     "  return 0;\n}\n")
    subprocess.run([cc, "-std=c99", "-pedantic", "-Wall", "-Werror", "-o", "main", "main.c"], cwd=tmp_path, check=True)
    printed = dict(line.split() for line in subprocess.run(["./main"], cwd=tmp_path, capture_output=True, text=True,
                                                           check=True).stdout.splitlines())
    table = {**{f"MS_{n}": v for n, (v, _) in constants.NUMBERS.items()},
             **{f"MS_{n}": v for n, (v, _) in constants.STATUSES.items()},
             **{f"MC_{n}": v for n, (v, _) in constants.HARD_STATUSES.items()},
             **{f"MS_{n}": v for n, (v, _) in constants.CONTACT_STATES.items()}}
    assert {n: float(v) for n, v in printed.items()} == {n: float(v) for n, v in table.items()}


def test_status_codes_are_distinct():
    """One status, one value: a long call's statuses (the contact run's among them) never share a code."""
    assert len({v for v, _ in constants.STATUSES.values()}) == len(constants.STATUSES)
    assert len({v for v, _ in constants.HARD_STATUSES.values()}) == len(constants.HARD_STATUSES)
    assert constants.Status.INTERRUPTED == constants.STATUSES["INTERRUPTED"][0]
    assert len({v for v, _ in constants.CONTACT_STATES.values()}) == len(constants.CONTACT_STATES)


def test_the_contact_laws_take_the_point_states_from_the_table():
    """The Python contact laws (spatial_v2) name a point's state by the values the C contact runs use."""
    from mechsym.contact import spatial_v2

    assert (spatial_v2.NO_CONTACT, spatial_v2.STICK, spatial_v2.SLIP) == tuple(
        v for v, _ in constants.CONTACT_STATES.values())


def test_no_runtime_file_defines_a_shared_constant():
    """The stored C defines none of the table's names: each comes from ms_constants.h alone."""
    shared = {f"MS_{n}" for n in [*constants.NUMBERS, *constants.STATUSES, *constants.CONTACT_STATES]} | \
             {f"MC_{n}" for n in constants.HARD_STATUSES} | set(constants.NUMBERS)
    found = [f"{p.name}: {m.group(1)}" for p in sorted(RUNTIME.glob("*.[ch]"))
             for m in re.finditer(r"^\s*#\s*define\s+(\w+)", p.read_text(), re.M) if m.group(1) in shared]
    found += [f"{p.name}: enum {name}" for p in sorted(RUNTIME.glob("*.[ch]"))
              for name in shared if re.search(rf"\benum\s*\{{[^}}]*\b{name}\s*=", p.read_text())]
    assert not found, found


def test_the_c_integrators_control_their_steps_with_scipys_numbers():
    """The C DOP853 (ms_dop853.h) and RK45 (ms_contact_step.h, its step control in ms_contact_run.h) stand in for scipy's solve_ivp step for step: the
    table's step-control numbers are scipy's own, and the C takes them from the table."""
    import inspect

    from scipy.integrate._ivp import rk

    assert (constants.IVP_SAFETY, constants.IVP_MIN_FACTOR, constants.IVP_MAX_FACTOR) == \
        (rk.SAFETY, rk.MIN_FACTOR, rk.MAX_FACTOR)
    assert f"min_step = {constants.IVP_MIN_STEP:g} * np.abs(np.nextafter(t" in inspect.getsource(rk.RungeKutta._step_impl)
    for name in ("ms_dop853.h", "ms_contact_run.h"):
        text = (RUNTIME / name).read_text()
        assert all(f"MS_IVP_{n}" in text for n in ("SAFETY", "MIN_FACTOR", "MAX_FACTOR", "MIN_STEP")), name
        assert not re.search(r"\b(0\.9|0\.2|10\.0) \*|fmin\(10\.0|fmax\(0\.2", text), name


def test_lemke_in_python_and_in_c_takes_its_decisions_from_the_table():
    """Lemke's method exists twice (mechsym.contact.lcp, runtime/hard_contact.c with ms_hard_lcp.h): its pivot tolerance, tie
    rule, pivot limit and scale floor are the table's in both, with no literal copy of them left (the two
    routes' forces are compared in tests/contact: test_hard_c.py)."""
    import inspect

    from mechsym.contact import lcp

    assert inspect.signature(lcp.lemke).parameters["tol"].default == constants.LEMKE_PIVOT_TOL
    python = inspect.getsource(lcp)
    c = "".join((RUNTIME / f).read_text() for f in ("hard_contact.c", "ms_hard_lcp.h", "ms_hard_terms.h"))
    for name in ("LEMKE_PIVOT_TOL", "LEMKE_TIE", "LEMKE_PIVOTS", "FLOOR"):
        assert re.search(rf"\b{name}\b", python) and f"MS_{name}" in c, name
    assert not re.search(r"1e-300|1e-13\b|50 \* \(n", python + c)
