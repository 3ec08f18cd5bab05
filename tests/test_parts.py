"""Straight-line C printed in parts (mechsym.codegen.c_parts): the same spec compiled whole and in parts (as
translation units compiled in parallel) computes the same numbers, and the parts are shared between functions."""
import subprocess

import numpy as np
import sympy as sp

from mechsym.codegen import c_backend, c_parts, c_runtime, callables, keys, numpy_backend
from mechsym.codegen.c_source import render_straight
from mechsym.codegen.program import Program
from mechsym.spatial import read_urdf
from mechsym.spatial.system import TreeSystem
from test_trees import random_urdf


def _compiled(spec, tmp_path, name):
    """The spec's functions compiled (through the cache in tmp_path) as its source is printed now."""
    source = render_straight(spec, callables.PREFIX)
    compiled = c_backend.build_source(name, keys.cache_key(source), lambda: (source, callables.layout(spec)),
                                      tmp_path)
    return source, callables.CFunctions(compiled)


def _split_everything(monkeypatch):
    """Every function of every spec printed in parts (c_parts prints only large specs so)."""
    for name, value in (("SPEC_SIZE", 0), ("WHOLE", 0), ("PIECE_SIZE", 8), ("PART_SIZE", 40)):
        monkeypatch.setattr(c_parts, name, value)


def test_a_tree_in_parts_computes_what_it_computes_whole(tmp_path, monkeypatch):
    """Each function's values agree to round-off: every temporary is the same expression, printed the same
    way, only placed in another C function (where the compiler may evaluate a sine and a cosine apart). The
    sharing of parts between functions is checked on the printed source: it is a property of the code's size
    and compile time, and the values (equal whether a part is shared or printed twice) cannot show it."""
    system = TreeSystem(read_urdf(random_urdf(21, n=6), floating=True), backend="numpy")
    spec = system.spec("main")
    whole_source, whole = _compiled(spec, tmp_path, "whole")
    assert c_parts.UNIT not in whole_source                      # a small spec: printed as before
    _split_everything(monkeypatch)
    parts_source, parts = _compiled(spec, tmp_path, "parts")
    units = parts_source.split(c_parts.UNIT)[1:]
    part_units = [u for u in units if u.lstrip().startswith("void MS_FN(_part")]
    assert len(part_units) > 10 and len(units) == len(part_units) + len(spec.functions)
    # a body's pose is one part, called by the mass matrix, the bias and frames alike
    calls = {name: set(_calls(u)) for u in units if not u.lstrip().startswith("void MS_FN(_part")
             for name in [u.split("MS_FN(")[1].split(")")[0]]}
    assert calls["mass"] & calls["bias"]
    assert any(calls[name] & calls["bias"] for name in calls if name.startswith("frame"))
    assert calls["mass"] <= calls["forward"]
    # as one file (an export's), with the export's warnings as errors
    (tmp_path / "parts.c").write_text(c_runtime.amalgamate(parts_source))
    cc = subprocess.run([c_backend.compiler(), *c_backend.EXPORT_CFLAGS.split(), "-c", "-o", str(tmp_path / "parts.o"),
                         str(tmp_path / "parts.c")], capture_output=True, text=True)
    assert cc.returncode == 0, cc.stderr[-3000:]
    rng = np.random.default_rng(3)
    q = rng.uniform(-1, 1, (7 + system.nv - 6, 50))
    q[3:7] /= np.linalg.norm(q[3:7], axis=0)
    v, a = rng.uniform(-1, 1, (system.nv, 50)), rng.uniform(-1, 1, (system.nv, 50))
    p = system.param_values
    for name in spec.functions:
        expected = getattr(whole, name)(q, v, a, p)
        assert np.isfinite(expected).all()
        np.testing.assert_allclose(getattr(parts, name)(q, v, a, p), expected, rtol=1e-13, atol=1e-13, err_msg=name)


def _calls(unit):
    return [line.split("MS_FN(")[1].split(")")[0] for line in unit.splitlines() if "MS_FN(_part" in line]


def test_a_program_without_pieces_in_parts(tmp_path, monkeypatch):
    """A spec whose temporaries carry no pieces (a Program's) is cut in ranges of one order of its
    dependencies, and computes what the numpy printer's rendering of the spec computes."""
    _split_everything(monkeypatch)
    y = sp.symbols("y0:3", real=True)
    prog = Program(y)
    k = prog.param("k")
    a = prog.let(y[0] * y[1] + k)
    chain = [a]
    for i in range(60):
        chain.append(prog.let(sp.sin(chain[-1]) * y[i % 3] + chain[-1 - (i % len(chain))] * k))
    prog.output([chain[-1], chain[-7] * y[2], prog.norm(chain[-3] ** 2 + y[0] ** 2)])
    spec = prog.spec()
    source, parts = _compiled(spec, tmp_path, "program")
    assert source.count(c_parts.UNIT) > 5
    rng = np.random.default_rng(4)
    yv, pv = rng.uniform(-1, 1, (3, 20)), np.array([0.7])
    printed = numpy_backend.render(spec)                     # the numpy printer of the same spec
    np.testing.assert_allclose(parts.rhs(yv, pv), printed.rhs(yv, pv), rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(parts.jac(yv, pv), printed.jac(yv, pv), rtol=1e-12, atol=1e-12)
