"""The C cache: keyed by construction (the generated source itself, found again through an index of the
declaration), content checked on load, safe when read-only or repaired by concurrent processes."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import agree
from mechanisms import fourbar
from mechsym import derive
from mechsym.codegen import c_backend

pytestmark = pytest.mark.skipif(c_backend.compiler() is None, reason="no C compiler")
ROOT = Path(__file__).resolve().parent.parent


def _reordered():
    """The fourbar with the ground's points declared in the other order (B before A)."""
    m = fourbar.build()
    ground = m.bodies["ground"]
    items = list(ground.points.items())[::-1]
    ground.points.clear()
    ground.points.update(items)
    return m


def test_reordered_points_get_their_own_library(tmp_path, monkeypatch):
    """Reordering a body's points changes the generated code (points are printed in declaration order):
    the library built for one order must not serve the other (it reported A.x = 0.1 where A is at 0)."""
    monkeypatch.setenv("MECHSYM_CACHE", str(tmp_path))
    derive(fourbar.build(), "c")
    mech = _reordered()
    assert list(mech.bodies["ground"].points) == ["B", "A"]
    c, num = derive(mech, "c"), derive(_reordered(), backend="numpy")
    theta = np.linspace(0, 2 * np.pi, 16, endpoint=False)
    table_c, table_num = c.kinematics_table(theta), num.kinematics_table(theta)
    assert np.all(table_num["A.x"] == 0.0)
    for name in table_num.columns:
        assert agree(table_c[name], table_num[name], 1e-12) or np.max(np.abs(table_c[name])) < 1e-12, name


def _cli(args, cache, **popen):
    env = dict(os.environ, MECHSYM_CACHE=str(cache), PYTHONPATH=str(ROOT))
    return subprocess.Popen([sys.executable, "-m", "mechsym", *args], env=env, cwd=str(ROOT),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **popen)


def _unwritable(tmp_path, kind):
    """A cache folder this process cannot write into: without write permission, or below a plain file
    (where even root cannot create it)."""
    if kind == "below a file":
        (tmp_path / "file").write_text("")
        return tmp_path / "file" / "cache"
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    if os.access(folder, os.W_OK):
        pytest.skip("this user can write into a folder without write permission (root)")
    return folder


@pytest.mark.parametrize("kind", ["without permission", "below a file"])
def test_read_only_cache_falls_back_with_one_warning(tmp_path, kind):
    cache = _unwritable(tmp_path, kind)
    out, err = _cli(["inverse", "fourbar", "--omega", "2", "--samples", "8"], cache).communicate(timeout=120)
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "warning" in lines[0] and "cache" in lines[0], err
    assert "internal error" not in err
    rows = [line.split(",") for line in out.splitlines()]
    assert rows[0][:2] == ["theta", "omega"] and "torque" in rows[0] and len(rows) == 9
    ref = derive(fourbar.build(), backend="numpy").inverse(2 * np.pi * np.arange(8) / 8, 2.0)["torque"]
    column = rows[0].index("torque")
    assert agree(np.array([float(r[column]) for r in rows[1:]]), ref, 1e-9)


def test_concurrent_repair_of_a_truncated_library(tmp_path):
    """Eight processes find lib.so truncated at once: every one repairs or waits, none fails, and no
    leftover of a replaced entry stays behind."""
    assert _cli(["inverse", "fourbar", "--omega", "2", "--samples", "4"], tmp_path).wait(timeout=120) == 0
    libs = list(tmp_path.rglob("lib.so"))
    assert len(libs) == 1
    for attempt in range(2):
        data = libs[0].read_bytes()
        libs[0].write_bytes(data[: len(data) // 3])
        procs = [_cli(["inverse", "fourbar", "--omega", "2", "--samples", "4"], tmp_path) for _ in range(8)]
        results = [(p.wait(timeout=180), p.communicate()) for p in procs]
        assert all(code == 0 for code, _ in results), [r for r in results if r[0]]
        assert len({out for _, (out, _) in results}) == 1
        names = sorted(p.name for p in tmp_path.rglob("*"))
        assert not [n for n in names if ".old" in n or n.startswith(".build")], names
        libs = list(tmp_path.rglob("lib.so"))
        assert len(libs) == 1 and libs[0].read_bytes()[:4] == b"\x7fELF"


def test_a_joint_type_whose_rows_change_gets_its_own_library(tmp_path, monkeypatch):
    """The gear pair of docs/joints.md, then the same class (name, module, fields) with another row: the
    generated code differs, so the library of the first must not serve the second."""
    import re

    from mechsym.planar.model import Mechanism

    monkeypatch.setenv("MECHSYM_CACHE", str(tmp_path))
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "joints.md").read_text(), re.S)

    def declared(joint_source):
        scope = {"Mechanism": Mechanism, "__name__": "gears_model"}
        exec(joint_source, scope)
        exec(blocks[1], scope)
        return scope["m"]

    changed = blocks[0].replace("self.r2 * (placed.angle(self.body2) - c)", "2 * self.r2 * (placed.angle(self.body2) - c)")
    assert changed != blocks[0]
    theta = np.linspace(0.0, 1.0, 5)
    derive(declared(blocks[0]), "c").kinematics_table(theta)
    on_c = derive(declared(changed), "c").kinematics_table(theta)["gear2.angle"]
    on_numpy = derive(declared(changed), backend="numpy").kinematics_table(theta)["gear2.angle"]
    assert agree(on_c, on_numpy, 1e-12)
