"""The views' figures (mechsym.core.view) checked against independent routes, without a browser
(tests/test_view_browser.py reads what the browser draws): a 3-D tree's links at a run's rows equal
Pinocchio's frame placements and a URDF's visual box equals Pinocchio's geometry placement; the crank of a
forward run's view lies where the closed form puts it; a sweep's heat map holds the table's figures under
its parameter sets; a long run is thinned to frames that keep the file under the limit; bad input is one
line and exit code 2."""
import numpy as np
import pytest

from mechsym.core.errors import InputError
from mechsym.core.results import Table


def frame_traces(fig, k):
    """The traces frame k of the figure draws, by name."""
    frame = next(f for f in fig.frames if f.name == str(k))
    return {t.name: t for t in frame.data}


def test_tree_links_and_contact_arrows_equal_pinocchio_frames():
    pin = pytest.importorskip("pinocchio")
    from mechanisms import hyq

    system = hyq.system()
    rng = np.random.default_rng(3)
    q = np.tile(hyq.standing(), (5, 1))
    q[:, 7:] += rng.uniform(-0.4, 0.4, (5, 12))
    quat = rng.normal(size=(5, 4))
    q[:, 3:7] = quat / np.linalg.norm(quat, axis=1)[:, None]
    columns = {n: q[:, i] for i, n in enumerate(system.coordinate_names)}
    force = rng.uniform(0, 300, (5, 3))
    columns.update({f"lf_foot.{k}": force[:, i] for i, k in enumerate(("ft1", "ft2", "fn"))})
    fig = system.view(table=Table({"t": np.arange(5) * 0.1, **columns}), frames=5)

    model = pin.buildModelFromUrdf(str(hyq.URDF), pin.JointModelFreeFlyer())
    data = model.createData()
    for k in range(5):
        pin.framesForwardKinematics(model, data, q[k])
        traces = frame_traces(fig, k)
        links = traces["links"]
        for name, x, y, z in zip(links.text, links.x, links.y, links.z):
            if name:
                want = data.oMf[model.getFrameId(name)].translation
                assert np.abs(np.array([x, y, z]) - want).max() < 1e-9, (k, name)
        arrow = traces["contact forces"]
        tail, tip = np.array([arrow.x[:2], arrow.y[:2], arrow.z[:2]]).T
        assert np.abs(tail - data.oMf[model.getFrameId("lf_foot")].translation).max() < 1e-9
        direction = (tip - tail) / np.linalg.norm(tip - tail)
        assert np.abs(direction - force[k] / np.linalg.norm(force[k])).max() < 1e-12


URDF = """<robot name="two">
  <link name="base"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="arm">
    <inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial>
    <visual><origin xyz="0.3 0.02 -0.1" rpy="0.4 -0.3 1.1"/><geometry><box size="0.5 0.1 0.2"/></geometry></visual>
  </link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="arm"/><origin xyz="0 0.1 0.5" rpy="0 0.7 0"/>
    <axis xyz="0.6 0 0.8"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
</robot>"""


def test_a_visual_box_lies_where_pinocchio_places_it(tmp_path):
    pin = pytest.importorskip("pinocchio")
    from mechsym import derive, read_urdf

    path = tmp_path / "two.urdf"
    path.write_text(URDF)
    system = derive(read_urdf(str(path), floating=False), backend="numpy")
    angles = np.array([-0.8, 0.3, 1.9])
    fig = system.view(table=Table({"j1": angles}), urdf=str(path))
    model = pin.buildModelFromUrdf(str(path))
    geometry = pin.buildGeomFromUrdf(model, str(path), pin.GeometryType.VISUAL)
    data, gdata = model.createData(), pin.GeometryData(geometry)
    corners = np.array([[sx, sy, sz] for sx in (-0.25, 0.25) for sy in (-0.05, 0.05) for sz in (-0.1, 0.1)])
    for k, a in enumerate(angles):
        pin.updateGeometryPlacements(model, data, geometry, gdata, np.array([a]))
        place = gdata.oMg[0]
        want = corners @ place.rotation.T + place.translation
        box = frame_traces(fig, k)["arm"]
        got = np.column_stack([box.x, box.y, box.z])
        assert len(got) == 8 and len(box.i) == 12
        order = lambda v: v[np.lexsort(np.round(v, 4).T)]  # noqa: E731
        assert np.abs(order(got) - order(want)).max() <= 1e-6  # the page keeps a micrometre


def test_robot_meshes_resolve_through_example_robot_data_and_thin_to_the_budget():
    erd = pytest.importorskip("example_robot_data")
    trimesh = pytest.importorskip("trimesh")
    from mechsym.core.view.meshes import link_meshes, resolve

    root = erd.getModelPath("ur_description/urdf/ur5_robot.urdf")
    urdf = f"{root}/ur_description/urdf/ur5_robot.urdf"
    meshes = link_meshes(urdf, faces=20_000)
    assert set(meshes) == {"base_link", "shoulder_link", "upper_arm_link", "forearm_link", "wrist_1_link",
                           "wrist_2_link", "wrist_3_link"}
    assert sum(len(m.faces) for m in meshes.values()) <= 20_000
    original = trimesh.load(str(resolve("package://example-robot-data/robots/ur_description/meshes/ur5/visual/"
                                        "upperarm.dae", root)), force="mesh")
    thinned = meshes["upper_arm_link"].vertices
    extent = np.ptp(original.vertices, axis=0).max()
    # vertex clustering keeps the outline to a cell (a 12th of the extent at the coarsest grid it accepts)
    assert np.abs(thinned.min(axis=0) - original.vertices.min(axis=0)).max() < extent / 12
    assert np.abs(thinned.max(axis=0) - original.vertices.max(axis=0)).max() < extent / 12


def test_thinning_keeps_a_sphere_a_sphere():
    trimesh = pytest.importorskip("trimesh")
    from mechsym.core.view.meshes import LinkMesh, thin

    sphere = trimesh.creation.icosphere(subdivisions=5, radius=1.0)
    out = thin(LinkMesh("s", np.asarray(sphere.vertices), np.asarray(sphere.faces)), 2000)
    radius = np.linalg.norm(out.vertices, axis=1)
    assert 200 < len(out.faces) <= 2000
    assert radius.max() <= 1 + 1e-12 and radius.min() > 0.9  # cell means of a convex surface: inside, near it
    assert out.faces.max() == len(out.vertices) - 1


def test_a_forward_run_is_drawn_where_the_crank_turns():
    from mechsym import derive, load_mechanism

    system = derive(load_mechanism("fourbar"), backend="numpy")
    run = system.forward(0.05, 0.0, 3.0, 2.0)
    fig = run.view(system, frames=50)
    length = system.params()[system.param_names.index("l_crank")]
    shown = fig.layout.meta["frames"]
    assert len(shown) == 50 and shown[0] == 0 and shown[-1] == len(run) - 1
    for k in shown[::7]:
        t = frame_traces(fig, k)["crank"]
        theta = run["theta"][k]
        assert list(t.text) == ["body crank, point A", "body crank, point P"]
        assert np.allclose([t.x, t.y], [[0, length * np.cos(theta)], [0, length * np.sin(theta)]], rtol=0, atol=1e-9)


def test_a_sweep_heat_map_holds_each_figure_under_its_parameter_set():
    from mechsym.core.view import sweep_figure
    from mechsym.core.view.sweep import grid_parameters

    a, b = np.meshgrid([0.1, 0.2, 0.3], [1.0, 2.0], indexing="ij")
    a, b = a.ravel(), b.ravel()
    peak = a * 10 + b
    status = np.array(["ok"] * 5 + ["error"])
    peak[5] = np.nan
    table = Table({"a": a, "b": b, "peak": peak, "rms": a - b, "status": status,
                   "message": np.array([""] * 5 + ["cannot assemble"])}, {"peak": "N m"})
    assert grid_parameters(table) == ["a", "b"]
    fig = sweep_figure(table)
    heat = fig.data[0]
    for i in range(5):
        row, col = list(heat.y).index(b[i]), list(heat.x).index(a[i])
        assert heat.z[row][col] == peak[i]
        assert f"a = {a[i]:.6g}" in heat.text[row][col] and f"b = {b[i]:.6g}" in heat.text[row][col]
    row, col = list(heat.y).index(b[5]), list(heat.x).index(a[5])
    assert np.isnan(heat.z[row][col]) and "cannot assemble" in heat.text[row][col]
    rms = fig.data[1]
    assert rms.name == "rms" and rms.z[0][1] == pytest.approx(a[2] - b[2])  # at (a = 0.2, b = 1.0)
    line = sweep_figure(Table({"a": a[::2], "peak": peak[::2]}))
    assert list(line.data[0].x) == list(a[::2]) and list(line.data[0].y) == list(peak[::2])


def test_frames_are_thinned_to_keep_the_page_under_the_limit(tmp_path):
    from mechsym.core.view.page import LIMIT, MAX_FRAMES, frame_budget, write_html

    rows = frame_budget(100_000, 1_000)
    assert len(rows) == MAX_FRAMES and rows[0] == 0 and rows[-1] == 99_999
    heavy = frame_budget(100_000, 40_000)
    assert len(heavy) * 40_000 + 5_000_000 < LIMIT and heavy[-1] == 99_999
    import plotly.graph_objects as go

    with pytest.raises(InputError, match="over the"):
        write_html(go.Figure(), tmp_path / "big.html", limit=1000)
    assert not (tmp_path / "big.html").exists()


@pytest.mark.parametrize("argv, message", [
    (["view", "fourbar", "--out", "{tmp}/v.png"], "must be an .html file"),
    (["view", "fourbar", "--run", "{tmp}/absent.csv", "--out", "{tmp}/v.html"], "does not exist"),
    (["view", "fourbar", "--run", "{tmp}/t.csv", "--out", "{tmp}/v.html"], "no column 'theta'"),
    (["view", "fourbar", "--samples", "8", "--columns", "nope", "--out", "{tmp}/v.html"], "no column 'nope'"),
    (["view", "fourbar", "--samples", "8", "--trace", "Q", "--out", "{tmp}/v.html"], "no named point 'Q'"),
    (["view", "hyq", "--run", "{tmp}/t.csv", "--out", "{tmp}/v.html"], "no column 'base.x'"),
    (["view", "ugv", "--out", "{tmp}/v.html"], "mechsym ugv torque|sweep|optimize|animate|view"),
])
def test_bad_input_is_one_line_and_exit_code_2(tmp_path, capsys, argv, message):
    from mechsym.app.cli import main

    (tmp_path / "t.csv").write_text("t,x\n0,1\n1,2\n")
    assert main([a.format(tmp=tmp_path) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and err.count("\n") == 1
    assert not (tmp_path / "v.html").exists()


def test_the_python_example_of_docs_view_runs(tmp_path, monkeypatch):
    import re
    from pathlib import Path

    page = Path(__file__).resolve().parent.parent / "docs" / "view.md"
    blocks = re.findall(r"```python\n(.*?)```", page.read_text(), re.S)
    assert len(blocks) == 1
    monkeypatch.chdir(tmp_path)
    scope = {}
    exec(blocks[0], scope)
    fig = scope["fig"]
    assert [t.name for t in fig.data[:3]] == ["crank", "coupler", "rocker"]
    assert len(fig.frames) == 120 and fig.layout.sliders[0].steps[-1].label == f"{scope['theta'][-1]:.4g}"
    for name in ("fourbar.html", "forward.html"):
        size = (tmp_path / name).stat().st_size
        assert 4e6 < size < 10e6


def test_the_ugv_view_stands_its_wheels_on_the_track():
    """`mechsym ugv view`: in every frame the spokes drawn from the wheel centres to the contact points
    are one wheel radius long and the contact points lie on the track's profile."""
    from mechanisms import tracks, ugv_figures
    from mechanisms.ugv_study import Vehicle

    vehicle = Vehicle()
    fig = ugv_figures.view("bump", np.linspace(2.0, 6.0, 21), vehicle=vehicle)
    profile = tracks.load("bump")
    assert len(fig.frames) == 21
    for frame in fig.frames:
        traces = {t.name: t for t in frame.data}
        for spoke in ("rear spoke", "front spoke"):
            (cx, tx), (cy, ty) = traces[spoke].x, traces[spoke].y
            assert abs(np.hypot(tx - cx, ty - cy) - vehicle.r) < 1e-9
            assert abs(ty - float(profile(np.array([tx]))[0])) < 1e-9


def test_without_plotly_a_view_is_refused_naming_the_extra(tmp_path, capsys, monkeypatch):
    import sys

    from mechsym.app.cli import main

    monkeypatch.setitem(sys.modules, "plotly.graph_objects", None)  # import fails as if not installed
    assert main(["view", "fourbar", "--out", str(tmp_path / "v.html")]) == 2
    assert "pip install 'mechsym[view]'" in capsys.readouterr().err
