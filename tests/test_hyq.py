"""The shipped HyQ: the URDF under mechanisms/data equals example-robot-data's model, the standing pose,
the commands (params, export compiling as standalone C99 and reproducing the library, fall)."""
import ctypes
import json
import subprocess

import numpy as np
import pytest

from conftest import agree
from mechanisms import hyq
from mechsym.app.cli import main
from mechsym.codegen import c_backend

pin = pytest.importorskip("pinocchio")


@pytest.fixture(scope="module")
def system():
    return hyq.system()


def test_shipped_urdf_is_example_robot_data_hyq(system):
    erd = pytest.importorskip("example_robot_data")
    model = erd.load("hyq").model
    data = model.createData()
    q = hyq.standing()
    assert agree(system.mass_matrix(q), pin.crba(model, data, q), 1e-10)
    pin.framesForwardKinematics(model, data, q)
    for foot in hyq.FEET:
        assert agree(system.frame_position(q, foot), data.oMf[model.getFrameId(foot)].translation, 1e-10)
    assert agree(hyq.standing(), erd.load("hyq").q0, 0)


def test_params_json(capsys):
    assert main(["params", "hyq", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["parameters"]["trunk.m"] == 60.96 and out["parameters"]["g"] == 9.81
    assert out["coordinates"][:7] == ["base.x", "base.y", "base.z", "base.qx", "base.qy", "base.qz", "base.qw"]
    assert set(hyq.FEET) <= set(out["frames"])


def test_params_bad_value(capsys):
    assert main(["params", "hyq", "--param", "lf_upperleg.m=-1"]) == 2
    assert "lf_upperleg" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.skipif(c_backend.compiler() is None, reason="no C compiler")
def test_export_compiles_standalone_and_reproduces(system, tmp_path, capsys):
    from mechsym.codegen.export import CFLAGS

    assert main(["export", "hyq", "--out", str(tmp_path)]) == 0
    cc = c_backend.compiler()
    lib = tmp_path / "libhyq.so"
    proc = subprocess.run([cc, *CFLAGS.split(), "-shared", "-fPIC", "-o", str(lib), str(tmp_path / "hyq.c"), "-lm"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    dll = ctypes.CDLL(str(lib))
    D = ctypes.POINTER(ctypes.c_double)
    rng = np.random.default_rng(0)
    q = np.tile(hyq.standing(), (3, 1))
    q[:, 7:] += rng.uniform(-0.3, 0.3, (3, 12))
    v = rng.standard_normal((3, 18))
    p = system.param_values
    out = np.empty((3, 18))
    dll.hyq_bias.argtypes = [ctypes.c_int, D, D, D, D, D]
    dll.hyq_bias(3, q.ctypes.data_as(D), v.ctypes.data_as(D), v.ctypes.data_as(D), p.ctypes.data_as(D),
                 out.ctypes.data_as(D))
    assert agree(out, system.bias(q, v), 1e-14)
    assert main(["export", "hyq", "--out", str(tmp_path)]) == 0
    assert "up to date" in capsys.readouterr().out
    (tmp_path / "hyq.h").write_text("/* edited */\n")
    assert main(["export", "hyq", "--out", str(tmp_path)]) == 2             # refuses to replace an edit
    assert "differs" in capsys.readouterr().err and (tmp_path / "hyq.h").read_text() == "/* edited */\n"
    assert main(["export", "hyq", "--out", str(tmp_path), "--force"]) == 0


def test_fall_holds_the_pose_while_falling(tmp_path):
    from mechanisms.hyq_fall import fall

    table = fall(t_end=0.3, dt=0.05)
    t = table["t"]
    assert agree(table["base.vz"], -9.81 * t, 1e-8)                 # free fall of the whole robot
    assert agree(table["com.z"], table["com.z"][0] - 0.5 * 9.81 * t ** 2, 1e-8)
    assert np.abs(table["lf_kfe_joint"] + 1.5).max() < 1e-6         # held: gravity acts on every link alike
    out = tmp_path / "fall.csv"
    assert main(["hyq", "fall", "--t-end", "0.1", "--out", str(out)]) == 0
    assert out.read_text().splitlines()[0].startswith("t,base.x,base.y,base.z,base.qx")


def test_params_text_without_json_holds_the_json_values(capsys):
    """`params hyq` prints lines to read (as `params fourbar` does), JSON only with --json; every parameter
    line carries the JSON's value and unit."""
    assert main(["params", "hyq", "--param", "trunk.m=61.5"]) == 0
    text = capsys.readouterr().out
    assert main(["params", "hyq", "--param", "trunk.m=61.5", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)
    lines = text.splitlines()
    assert lines[:2] == ["model hyq", "parameters:"] and "bodies:" in lines and "coordinates:" in lines
    shown = {}
    for line in lines[2:lines.index("bodies:")]:
        name, rest = (part.strip() for part in line.split("=", 1))
        value, _, unit = rest.partition(" ")
        shown[name] = (float(value), unit)
    assert list(shown) == list(data["parameters"]) and shown["trunk.m"] == (61.5, "kg")
    assert all(abs(v - data["parameters"][n]) <= 1e-9 * abs(data["parameters"][n]) and u == (data["units"][n] or "")
               for n, (v, u) in shown.items())
    assert f"  trunk: mass {data['bodies']['trunk']['mass']:.6g} kg" in text
    assert lines[-1].startswith("frames: ") and set(hyq.FEET) <= set(lines[-1][len("frames: "):].split(", "))
