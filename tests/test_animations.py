"""Every command that writes an animation is checked by what each frame draws (conftest.animated records the
lines of every frame as it is written): the frame count and the rows or angles shown follow the run's grid
and frame options, and each frame's links, points and traces equal an independent route at that frame: the
positions in the CSV that the same run writes, the model's kinematics by another formulation (Pinocchio for
HyQ, the hip-fixed build for PASIBOT, the declared geometry of the discs turned by scipy's rotation), and the
rigidity of every link. Each check is also run on a deliberately broken drawing (frame k showing the next
sample, a link through a point of another body, a shifted angle) and must then fail."""
import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.spatial.transform import Rotation

from mechsym.app.cli import main
from mechsym.core.results import read_csv

ROUND_OFF = 1e-12


def spread(n, frames):
    """The rows an animation of at most `frames` frames of an n-row run shows: evenly spread over the run,
    its first and last rows included (every row if n <= frames)."""
    rows = np.floor(np.linspace(0, n - 1, min(n, frames))).astype(int)
    assert rows[0] == 0 and rows[-1] == n - 1 and len(np.unique(rows)) == len(rows)
    assert len(rows) < 3 or np.ptp(np.diff(rows)) <= 1                         # evenly spread
    return rows


def close(a, b, tol=ROUND_OFF):
    """Equal to round-off, relative to the size of b (at least 1 m)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    return a.shape == b.shape and float(np.max(np.abs(a - b))) <= tol * max(float(np.max(np.abs(b))), 1.0)


def shown_time(texts):
    """The time a frame's title states ("t = 0.123 s")."""
    text = next(t for t in texts if "t = " in t)
    return float(text.split("t = ")[1].split()[0])


def rigid(frames, label):
    """The mutual distances of the points an artist draws stay the same through the frames (one link)."""
    d = np.array([np.linalg.norm(f[label][:, None, :] - f[label][None, :, :], axis=-1) for f in frames])
    assert np.max(np.abs(d - d[0])) <= ROUND_OFF * max(np.max(d), 1.0), f"{label} changes shape"


def broken(check, *args):
    """The check fails (the drawing it was given is wrong)."""
    with pytest.raises(AssertionError) as failure:
        check(*args)
    print("broken drawing caught:", str(failure.value).splitlines()[0])


# ---------------------------------------------------------------- planar kinematics (`mechsym kinematics`)

def check_kinematics(frames, table, mech):
    """Frame j shows sample j (one frame per sample of the grid): each moving link through its declared
    points at their CSV positions; the point paths are the CSV's columns; every link keeps its shape."""
    n = len(table)
    assert len(frames) == n                                          # one frame per sample of the grid
    for j, frame in enumerate(frames):
        for name in (p for b in mech.bodies.values() for p in b.points):
            assert np.array_equal(frame[f"{name} path"], np.column_stack([table[f"{name}.x"], table[f"{name}.y"]]))
        for b in mech.moving_bodies:
            xy = [(table[f"{p}.x"][j], table[f"{p}.y"][j]) for p in mech.bodies[b].points]
            assert close(frame[b], xy * (2 if len(xy) == 1 else 1)), (j, b)
    for b in mech.moving_bodies:
        rigid(frames, b)


def test_kinematics_animation(tmp_path, animated, monkeypatch):
    """`mechsym kinematics fourbar`: frame k draws every link through its declared points at sample k of the
    CSV, the point paths are the CSV's columns, and the links keep their shape."""
    from mechsym import derive
    from mechsym.core import plotting
    from mechanisms import fourbar

    out, gif = tmp_path / "k.csv", tmp_path / "k.gif"

    def run():
        assert main(["kinematics", "fourbar", "--samples", "12", "--out", str(out), "--animate", str(gif)]) == 0
        return animated["k.gif"], read_csv(out)

    mech = derive(fourbar.build(), backend="numpy").mechanism
    frames, table = run()
    assert len(table) == 12 and gif.read_bytes()[:3] == b"GIF"
    check_kinematics(frames, table, mech)
    segments = plotting._body_segments
    monkeypatch.setattr(plotting, "_body_segments", lambda s, t, k: segments(s, t, (k + 1) % len(t)))
    broken(check_kinematics, *run(), mech)                                 # frame k draws sample k + 1

    def crossed(s, t, k):
        segs = segments(s, t, k)
        (b0, xy0), (b1, xy1) = segs[0], segs[1]
        return [(b0, np.vstack([xy0[:-1], xy1[-1:]])), (b1, xy1)] + segs[2:]

    monkeypatch.setattr(plotting, "_body_segments", crossed)
    broken(check_kinematics, *run(), mech)                                 # a link ends at another link's point


# ---------------------------------------------------------------- PASIBOT (`mechsym pasibot animate`)

def check_pasibot(frames, count):
    """Frame j shows the crank angle theta_j of `count` evenly spread over step 0: every ground-frame link
    holds the points of the hip-fixed build (another fixed body, another set of equations) at theta_j, all
    of them moved by one rigid motion; the supporting foot (body 1) stays where it stands."""
    from mechanisms import pasibot as pb

    theta = np.linspace(*pb.step_window(0), count)
    assert len(frames) == count
    mech = pb.system("foot").mechanism
    hip = pb.system("hip").kinematics_table(theta)
    for j, frame in enumerate(frames):
        ref = {b: np.array([(hip[f"{p}.x"][j], hip[f"{p}.y"][j]) for p in mech.bodies[b].points]) for b in mech.bodies}
        a = np.vstack(list(ref.values()))
        b = np.vstack([frame[k] for k in ref])
        # the drawing orders a link's points along it: the rigid motion is fitted on the centroids and
        # scatter of the sets, then each link's moved points must be the drawn ones as a set
        ca, cb = a.mean(0), b.mean(0)
        u, _, vt = np.linalg.svd((a - ca).T @ (b - cb))
        rot = (u @ vt).T
        assert np.linalg.det(rot) > 0
        for k, r in ref.items():
            moved = (r - ca) @ rot.T + cb
            assert np.max(np.abs(np.sort(moved, axis=0) - np.sort(frame[k], axis=0))) <= 1e-9, (j, k)
        assert close(frame["joints"], b)
        foot = frame["1"]                       # the standing foot: flat on the ground, its ankle at the origin
        assert close(foot, frames[0]["1"]) and np.max(np.abs(foot[:, 1])) <= ROUND_OFF
        assert np.min(np.linalg.norm(foot, axis=1)) <= ROUND_OFF
        assert abs(float(frame["texts"][0].split("= ")[1].split()[0]) - theta[j]) <= 0.005  # θ8 to 2 decimals


def test_pasibot_animation(tmp_path, animated, monkeypatch):
    from mechanisms import pasibot as pb

    gif = tmp_path / "gait.gif"

    def run():
        assert main(["pasibot", "animate", "--out", str(gif), "--frames", "6"]) == 0
        return animated["gait.gif"]

    check_pasibot(run(), 6)
    table = pb.kinematics_table
    monkeypatch.setattr(pb, "kinematics_table", lambda theta, *a, **k: table(np.asarray(theta) + 0.05, *a, **k))
    broken(check_pasibot, run(), 6)                                         # angles off the option's grid


# ---------------------------------------------------------------- UGV (`mechsym ugv animate`)

def check_ugv(frames, x, phi_r, phi_f):
    """Frame j shows the front contact at x_j of the option's grid: each wheel a circle of radius r tangent
    to the track (the front one at x_j, the rear one where the tangency equation has its root), the legs
    from the body's joints to the wheel centres, the body and legs rigid, each leg at its angle to the body."""
    from mechanisms import tracks
    from mechanisms.ugv_study import Vehicle

    track, r = tracks.load("bump"), Vehicle().r
    assert len(frames) == len(x)

    def foot(w, xs):        # (w - point of the track at xs) and its product with the track's tangent there
        d = np.asarray(w) - (xs, float(track(xs)))
        return d, d @ (1.0, float(track.eval(xs)[1]))

    for j, frame in enumerate(frames):
        (wr, rr), (wf, rf) = frame["rear wheel"], frame["front wheel"]
        assert rr == r and rf == r
        d, tangent = foot(wf, x[j])
        assert abs(np.linalg.norm(d) - r) <= ROUND_OFF and abs(tangent) <= ROUND_OFF, j
        xr = brentq(lambda s: foot(wr, s)[1], wr[0] - r, wr[0] + r, xtol=1e-15)
        assert abs(np.linalg.norm(foot(wr, xr)[0]) - r) <= 1e-10, j
        jr, jf = frame["body"]
        assert close(frame["rear leg"], [jr, wr]) and close(frame["front leg"], [jf, wf])
        for leg, joint, other, phi in (("rear leg", jr, jf, phi_r), ("front leg", jf, jr, phi_f)):
            a, b = frame[leg][1] - joint, other - joint
            angle = np.arctan2(abs(a[0] * b[1] - a[1] * b[0]), a @ b)
            assert abs(angle - phi) <= 1e-9, (j, leg, angle)
        assert abs(float(frame["texts"][-1].split("x = ")[1].split()[0]) - x[j]) <= 0.005
    for label in ("body", "rear leg", "front leg"):
        rigid(frames, label)


def test_ugv_animation(tmp_path, animated, monkeypatch):
    from mechanisms.ugv_study import Vehicle

    gif = tmp_path / "ugv.gif"

    def run():
        assert main(["ugv", "animate", "--out", str(gif), "--samples", "6", "--phi-r", "80deg", "--phi-f", "100deg"]) == 0
        return animated["ugv.gif"]

    x = np.linspace(0.0, 8.0, 6)
    check_ugv(run(), x, np.radians(80), np.radians(100))
    place = Vehicle.place
    monkeypatch.setattr(Vehicle, "place", lambda self, track, xs, *a, **k: place(self, track, xs + 0.1, *a, **k))
    broken(check_ugv, run(), x, np.radians(80), np.radians(100))           # the vehicle 0.1 m ahead of x_j


def run_command(monkeypatch, animated, tmp_path, module, args):
    """`mechsym ARGS --out run.csv --animate run.gif`, holding the run that module.simulate returned to the
    command: (that run, the CSV, the animation's frames)."""
    held, simulate = [], module.simulate

    def holding(*a, **k):
        held.append(simulate(*a, **k))
        return held[-1]

    monkeypatch.setattr(module, "simulate", holding)
    out, gif = tmp_path / "run.csv", tmp_path / "run.gif"
    assert main([*args, "--out", str(out), "--animate", str(gif)]) == 0
    assert gif.read_bytes()[:3] == b"GIF"
    return held[0], read_csv(out), animated["run.gif"]


def off_by_one(monkeypatch):
    """Break every sub-sampled animation: frame k shows the row after the one it should."""
    from mechsym.core import plotting

    rows = plotting.frame_rows
    monkeypatch.setattr(plotting, "frame_rows", lambda n, frames: np.minimum(rows(n, frames) + 1, n - 1))


# ---------------------------------------------------------------- HyQ (`mechsym hyq drop --animate`)

LEG_PARTS = ("hipassembly", "upperleg", "lowerleg", "foot")


def check_hyq(frames, table, frames_option=60):
    """Frame j shows row k_j of the CSV (60 evenly spread rows): each leg drawn through the origins of its
    hip, upper leg, lower leg and foot frames as Pinocchio's forward kinematics places them for the CSV's
    configuration of that row (base position, quaternion, joint angles by name), the trunk through the hips."""
    pin = pytest.importorskip("pinocchio")
    erd = pytest.importorskip("example_robot_data")
    model = erd.load("hyq").model
    data = model.createData()
    base = [f"base.{c}" for c in ("x", "y", "z", "qx", "qy", "qz", "qw")]
    rows = spread(len(table), frames_option)
    assert len(frames) == len(rows)
    for frame, k in zip(frames, rows):
        q = np.array([table[c][k] for c in base + list(model.names)[2:]])
        pin.forwardKinematics(model, data, q)
        pin.updateFramePlacements(model, data)
        assert close(pin.centerOfMass(model, data, q), [table[f"com.{c}"][k] for c in "xyz"], 1e-10)
        origin = {f: data.oMf[model.getFrameId(f)].translation.copy() for f in
                  (f"{leg}_{part}" for leg in ("lf", "lh", "rf", "rh") for part in LEG_PARTS)}
        for leg in ("lf", "lh", "rf", "rh"):
            assert close(frame[leg], [origin[f"{leg}_{p}"] for p in LEG_PARTS], 1e-10), (k, leg)
        assert close(frame["trunk"], [origin[f"{leg}_hipassembly"] for leg in ("lf", "rf", "rh", "lh", "lf")], 1e-10)
        assert abs(shown_time(frame["texts"]) - table["t"][k]) <= 5e-4


def test_hyq_animation(tmp_path, animated, monkeypatch):
    """`mechsym hyq drop` through the first touchdown (0.45 s): 60 frames of the 1001-row CSV."""
    from mechanisms import hyq_contact

    (run, _), table, frames = run_command(monkeypatch, animated, tmp_path, hyq_contact, ["hyq", "drop", "--t-end", "0.6"])
    assert len(table) == 1001 and np.max(table["lf_foot.impulse"] + table["rf_foot.impulse"]) > 0
    check_hyq(frames, table)
    off_by_one(monkeypatch)
    hyq_contact.animate(run, tmp_path / "broken.gif", frames=8)
    broken(check_hyq, animated["broken.gif"], table, 8)


# ---------------------------------------------------------------- chain3 (`mechsym chain3 --animate`)

def check_chain3(frames, table, frames_option=150):
    """Frame j shows row k_j (at most `frames_option` evenly spread rows): the chain through the base pin O = (0, h) and A, B,
    C of the CSV, each link of its declared length l = 1 m."""
    rows = spread(len(table), frames_option)
    assert len(frames) == len(rows)
    for frame, k in zip(frames, rows):
        xy = [(0.0, 1.5)] + [(table[f"{p}.x"][k], table[f"{p}.y"][k]) for p in "ABC"]
        assert close(frame["chain"], xy), k
        assert np.allclose(np.linalg.norm(np.diff(frame["chain"], axis=0), axis=1), 1.0, rtol=0, atol=ROUND_OFF)
        assert abs(shown_time(frame["texts"]) - table["t"][k]) <= 5e-4


def test_chain3_animation(tmp_path, animated, monkeypatch):
    from mechanisms import chain3

    run, table, frames = run_command(monkeypatch, animated, tmp_path, chain3, ["chain3", "--t-end", "0.5", "--dt", "0.01"])
    assert len(table) == 51
    check_chain3(frames, table)
    chain3.animate(run, tmp_path / "fewer.gif", frames=8)          # sub-sampled: rows 0, 7, 14, ... 50
    check_chain3(animated["fewer.gif"], table, 8)
    off_by_one(monkeypatch)
    chain3.animate(run, tmp_path / "broken.gif", frames=8)
    broken(check_chain3, animated["broken.gif"], table, 8)


# ---------------------------------------------------------------- polydisc (`mechsym polydisc --animate`)

def check_polydisc(frames, table, sides=16, radius=0.05, thickness=0.01):
    """Frame j shows row j (every row: fewer than 150): the two faces are the declared polygon vertices
    (radius R, faces at y = -T/2 and +T/2 in the body frame) turned by scipy's rotation of the CSV's
    quaternion and moved to its centre, the spoke from the centre to the middle of the first vertices, the
    centre's path the CSV's positions up to that row."""
    assert len(frames) == len(table)
    a = 2 * np.pi * np.arange(sides) / sides
    for k, frame in enumerate(frames):
        centre = np.array([table[c][k] for c in "xyz"])
        turn = Rotation.from_quat([table[c][k] for c in ("qx", "qy", "qz", "qw")])
        for face, y in (("face 0", -thickness / 2), ("face 1", thickness / 2)):
            local = np.column_stack([radius * np.sin(a), np.full(sides, y), radius * np.cos(a)])
            world = turn.apply(local) + centre
            assert close(frame[face], np.vstack([world, world[:1]])), (k, face)
        assert close(frame["spoke"], [centre, turn.apply([0.0, 0.0, radius]) + centre])
        assert np.array_equal(frame["centre path"], np.column_stack([table[c][: k + 1] for c in "xyz"]))
        assert abs(shown_time(frame["texts"]) - table["t"][k]) <= 5e-4


def test_polydisc_animation(tmp_path, animated, monkeypatch):
    from mechanisms import polydisc

    run, table, frames = run_command(monkeypatch, animated, tmp_path, polydisc, ["polydisc", "--t-end", "0.1", "--dt", "0.005"])
    assert len(table) == 21
    check_polydisc(frames, table)
    off_by_one(monkeypatch)
    polydisc.animate(run, tmp_path / "broken.gif")
    broken(check_polydisc, animated["broken.gif"], table)


# ---------------------------------------------------------------- disc and cart (`mechsym disc|cart --animate`)

def check_wheels(frames, table, quaternions, wheels, heading=None, frames_option=120):
    """Frame j shows row k_j (at most `frames_option` evenly spread rows): each wheel's rim a circle of its radius about its
    centre (the body's centre of the CSV plus the wheel's offset turned by scipy's rotation of the run's
    quaternion), in the plane normal to the axle; the spoke from the wheel's centre to the rim, turning with
    the body (the same point in the body frame in every frame); the axle through the wheel centres (for the
    cart its direction in the ground plane is the CSV's heading)."""
    rows = spread(len(table), frames_option)
    assert len(frames) == len(rows)
    spokes = []
    for k, frame in zip(rows, frames):
        centre = np.array([table[c][k] for c in "xyz"])
        turn = Rotation.from_quat(quaternions[k])
        axis = turn.apply([1.0, 0.0, 0.0])
        for i, (offset, radius) in enumerate(wheels):
            hub = centre + turn.apply(offset)
            rim = frame[f"rim {i}"]
            assert np.allclose(np.linalg.norm(rim - hub, axis=1), radius, rtol=0, atol=ROUND_OFF), (k, i)
            assert np.max(np.abs((rim - hub) @ axis)) <= ROUND_OFF
            assert close(frame[f"spoke {i}"][0], hub) and close(frame[f"spoke {i}"][1], rim[0])
            spokes.append(turn.inv().apply(rim[0] - hub))
        axle = frame["axle"]
        assert close(axle.mean(axis=0), centre) and np.linalg.norm(np.cross(axle[-1] - axle[0], axis)) <= ROUND_OFF
        if heading is not None:
            assert abs(np.angle(np.exp(1j * (np.arctan2(axis[1], axis[0]) - heading[k])))) <= ROUND_OFF
        assert abs(shown_time(frame["texts"]) - table["t"][k]) <= 5e-4
    spokes = np.array(spokes).reshape(len(frames), len(wheels), 3)
    assert np.max(np.abs(spokes - spokes[0])) <= ROUND_OFF


def quaternions(run):
    return np.column_stack([run.columns[c] for c in ("qx", "qy", "qz", "qw")])


def test_disc_animation(tmp_path, animated, monkeypatch):
    from mechanisms import disc

    run, table, frames = run_command(monkeypatch, animated, tmp_path, disc, [
        "disc", "--radius", "0.2", "--mass", "1", "--inertia", "0.02,0.01,0.01", "--stiffness", "1e5", "--damping",
        "1e3", "--mu", "0.3", "--v0=0,1,0", "--omega0=-5,0,0.5", "--tilt", "10deg", "--t-end", "0.2", "--dt", "0.01"])
    assert len(table) == 21
    quat = quaternions(run)
    check_wheels(frames, table, quat, [(np.zeros(3), 0.2)])
    off_by_one(monkeypatch)
    shape = [(np.zeros(3), np.array([1.0, 0.0, 0.0]), 0.2)]
    disc.animate(run.columns, shape, tmp_path / "broken.gif")
    broken(check_wheels, animated["broken.gif"], table, quat, [(np.zeros(3), 0.2)])


def test_cart_animation(tmp_path, animated, monkeypatch):
    from mechanisms import cart, disc

    run, table, frames = run_command(monkeypatch, animated, tmp_path, cart,
                                     ["cart", "--t-end", "0.2", "--dt", "0.01", "--v0", "0.5", "--yaw-rate", "2"])
    wheels = [(np.array([s * 0.25, 0.0, 0.0]), 0.15) for s in (-1.0, 1.0)]
    assert len(table) == 21 and np.ptp(table["heading"]) > 0.05
    check_wheels(frames, table, quaternions(run), wheels, table["heading"])
    off_by_one(monkeypatch)
    shape = [(offset, np.array([1.0, 0.0, 0.0]), r) for offset, r in wheels]
    disc.animate(run.columns, shape, tmp_path / "broken.gif", frames=6)
    broken(check_wheels, animated["broken.gif"], table, quaternions(run), wheels, table["heading"], 6)
