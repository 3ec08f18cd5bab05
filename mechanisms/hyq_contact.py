"""HyQ dropped onto hard ground: the two scenarios of the RSC hard-contact study, with friction beyond it.

HyQ (mechanisms.hyq: its URDF derived by mechsym.spatial with its four feet as contact frames) starts at
rest in its standing pose (mechanisms.hyq.standing), its feet spheres of r = 0.02175 m:

* drop:   the trunk pitched 5 degrees about y, the lowest foot 1 m above the ground z = 0;
* tilted: the trunk level, the lowest foot 0.5 m above the plane z = 0 tilted 5 degrees about y, measured
          along the plane's normal.

The contacts are hard (mechsym.contact.hard_run.simulate_hard): frictionless by default as in the study,
--mu for Coulomb friction (pyramid, 4 facets), --restitution for e; the joints hold the standing pose
with the PD controller (kp 300 N m/rad, kd 10 N m s/rad). Columns (docs/conventions.md, Spatial trees):
t, base.x .. base.qw, the twelve joint angles by name, com.x/y/z, and per foot FOOT.fn, FOOT.ft1, FOOT.ft2,
FOOT.impulse.

    mechsym hyq drop [--mu 0] [--restitution 0] [--t-end 2] [--dt D] [--rtol 1e-9] [--kp 300] [--kd 10]
                     --out FILE.csv [--timeline EVENTS.csv] [--plot P.png] [--animate A.gif]
    mechsym hyq tilted ...
"""
from __future__ import annotations

import numpy as np

from mechsym.core.errors import InputError

FEET = ("lf_foot", "lh_foot", "rf_foot", "rh_foot")
RADIUS = 0.02175
TILT = np.deg2rad(5.0)
LEGS = ("lf", "lh", "rf", "rh")
_CACHE = {}


def robot():
    """(TreeModel of HyQ with its feet as contact frames, the standing q0) from the shipped model."""
    if "model" not in _CACHE:
        from mechanisms import hyq
        from mechsym.contact.tree_model import TreeModel

        _CACHE["model"] = (TreeModel(hyq.system()), hyq.standing())
    return _CACHE["model"]


def initial_state(scenario):
    """(contacts, q0) of a scenario: 'drop' or 'tilted'."""
    from mechsym.contact.hard import Contact, HardContacts, Plane
    from mechsym.core.quaternion import about as quat_about

    model, q_stand = robot()
    q = q_stand.copy()
    if scenario == "drop":
        plane, height = Plane(), 1.0
        q[3:7] = quat_about((0.0, 1.0, 0.0), TILT)     # the trunk pitched about y
    elif scenario == "tilted":
        plane, height = Plane.tilted(TILT, "y"), 0.5
    else:
        raise InputError(f"unknown HyQ scenario '{scenario}' (drop, tilted)")
    contacts = HardContacts(model, [Contact(f, f, RADIUS) for f in FEET], plane)
    n = np.asarray(plane.normal)
    q[:3] += n * (height - contacts.gaps(q).min())     # along the normal: the lowest foot at `height`
    return contacts, q


def simulate(scenario="drop", mu=0.0, e=0.0, t_end=2.0, dt=None, rtol=1e-9, atol=None, kp=300.0, kd=10.0,
             route="auto"):
    """(HardRun, table with docs/conventions.md's columns) of a scenario (route: simulate_hard's)."""
    from mechsym.contact.hard_run import pd_hold, simulate_hard
    from mechsym.core.results import Table

    contacts, q0 = initial_state(scenario)
    model = contacts.model
    run = simulate_hard(contacts, q0, np.zeros(model.nv), t_end, mu=mu, e=e, dt=dt, rtol=rtol, atol=atol,
                        controller=pd_hold(model, q0, kp, kd), route=route)
    t = run
    cols = {"t": t["t"]}
    cols.update({n: t[n] for n in model.q_names})
    q = np.column_stack([t[n] for n in model.q_names])
    com = model.com(model.normalise(q))
    cols.update({"com.x": com[:, 0], "com.y": com[:, 1], "com.z": com[:, 2]})
    for f in FEET:
        for c in ("fn", "ft1", "ft2", "impulse"):
            cols[f"{f}.{c}"] = t[f"{f}.{c}"]
    units = {"t": "s", "com.x": "m", "com.y": "m", "com.z": "m", **t.units}
    table = Table(cols, units, f"HyQ {scenario}: hard contact, mu = {mu:g}, e = {e:g}")
    if not all(np.all(np.isfinite(v)) for v in cols.values()):
        raise InputError(f"HyQ {scenario}: the simulation gave non-finite values")
    return run, table


# ---------------------------------------------------------------- command line

HELP = "HyQ dropped onto hard ground (CSV, plots, animation)"
HELPS = {"drop": "trunk pitched 5 deg, lowest foot 1 m above the ground",
         "tilted": "lowest foot 0.5 m above a plane tilted 5 deg about y"}


def configure(s):
    """The options of `mechsym hyq drop` and `mechsym hyq tilted` (subcommands of mechanisms.hyq_cli)."""
    from mechsym.app.options import number
    from mechsym.app.options import animation_group, output_group, plot_group, time_group, tolerance_group

    s.add_argument("--mu", type=number, default=0.0, help="friction coefficient (default 0: frictionless)")
    s.add_argument("--restitution", type=number, default=0.0, help="coefficient of restitution e in [0, 1]")
    time_group(s, 2.0)
    tolerance_group(s)
    s.add_argument("--kp", type=number, default=300.0, help="PD hold stiffness [N m/rad]")
    s.add_argument("--kd", type=number, default=10.0, help="PD hold damping [N m s/rad]")
    output_group(s, required=True)
    s.add_argument("--timeline", help="CSV of the contact events (t, contact, before, after, impulse)")
    plot_group(s, help="PNG/SVG: contact forces, impulses and the centre of mass against time")
    animation_group(s, help="GIF/MP4 of the robot (legs as lines)")
    return s


def run(args) -> int:
    """`mechsym hyq drop|tilted`: simulate and write the CSV (and the optional timeline, plot, animation)."""
    from mechsym.app.options import check_command_outputs, run_options, write_outputs
    from mechsym.core.output import CSV

    check_command_outputs(args, CSV, ("--timeline", args.timeline, CSV))  # before the simulation
    run_options(args)
    result, table = simulate(args.hyq_command, args.mu, args.restitution, args.t_end, args.dt, args.rtol, args.atol,
                             args.kp, args.kd)
    st = result.stats
    write_outputs(table, args.out, f"; {st['impacts']} impacts, {st['events']} contact events, "
                  f"{st['rhs_evaluations']} right-hand sides, {st['wall']:.2f} s",
                  [(args.timeline, lambda p: result.timeline_table().to_csv(p)),
                   (args.plot, lambda p: _atomic(p, lambda tmp: plot(table, tmp))),
                   (args.animate, lambda p: _atomic(p, lambda tmp: animate(result, tmp)))])
    return 0


def _atomic(path, write):
    """write(tmp) into a temporary file beside `path` (same extension), renamed into place by the one
    writer (mechsym.core.output.atomic: with the command's other files, once it has succeeded)."""
    from mechsym.core.output import atomic

    with atomic(path) as tmp:
        write(tmp)


def plot(table, path):
    """The study's figures: normal contact forces, impulses and the centre of mass against time."""
    from mechsym.core.plotting import _pyplot

    plt = _pyplot()
    t = table["t"]
    fig, axes = plt.subplots(4, 1, figsize=(8, 10), sharex=True)
    for f in FEET:
        axes[0].plot(t, table[f"{f}.fn"], label=f)
        axes[1].plot(t, np.hypot(table[f"{f}.ft1"], table[f"{f}.ft2"]), label=f)
        imp = table[f"{f}.impulse"]
        k = np.flatnonzero(imp)
        axes[2].vlines(t[k], 0, imp[k], color=axes[0].lines[-1].get_color())
        axes[2].plot(t[k], imp[k], "o", ms=3, color=axes[0].lines[-1].get_color(), label=f)
    for c in ("x", "y", "z"):
        axes[3].plot(t, table[f"com.{c}"], label=f"com.{c}")
    for ax, label in zip(axes, ("normal force [N]", "tangential force [N]", "impulse [N s]", "centre of mass [m]")):
        ax.set_ylabel(label)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    axes[-1].set_xlabel("t [s]")
    axes[0].set_title(table.title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def animate(result, path, frames=60, fps=20):
    """The robot as lines (trunk outline through the hips, each leg hip-knee-foot) over the plane."""
    from matplotlib import animation

    from mechsym.core.plotting import _pyplot, frame_rows

    plt = _pyplot()
    model = result.contacts.model
    t = result["t"]
    k = frame_rows(len(t), frames)
    q = model.normalise(np.column_stack([result[n] for n in model.q_names])[k])
    chain = {leg: [model.frame_position(q, f"{leg}_{part}") for part in ("hipassembly", "upperleg", "lowerleg", "foot")]
             for leg in LEGS}
    trunk = [chain[leg][0] for leg in ("lf", "rf", "rh", "lh", "lf")]
    allp = np.concatenate([np.concatenate(v) for v in chain.values()])
    lo, hi = allp.min(axis=0), allp.max(axis=0)
    centre, half = (lo + hi) / 2, max(hi - lo) / 2 + 0.1
    fig = plt.figure(figsize=(4.5, 4.5))
    ax = fig.add_subplot(projection="3d")
    plane = result.contacts.plane
    n, p0 = np.asarray(plane.normal), np.asarray(plane.point)
    gx, gy = np.meshgrid(np.linspace(centre[0] - half, centre[0] + half, 2), np.linspace(centre[1] - half, centre[1] + half, 2))
    gz = p0[2] - (n[0] * (gx - p0[0]) + n[1] * (gy - p0[1])) / n[2]
    ax.plot_surface(gx, gy, gz, alpha=0.2, color="saddlebrown")
    lines = ([ax.plot([], [], [], "-o", ms=3, color="k", label=leg)[0] for leg in LEGS]
             + [ax.plot([], [], [], "-", color="b", label="trunk")[0]])
    ax.set_xlim(centre[0] - half, centre[0] + half)
    ax.set_ylim(centre[1] - half, centre[1] + half)
    ax.set_zlim(min(lo[2], gz.min()) - 0.05, min(lo[2], gz.min()) + 2 * half)
    title = ax.set_title("")

    def frame(j):
        for line, leg in zip(lines, LEGS):
            pts = np.array([c[j] for c in chain[leg]])
            line.set_data(pts[:, 0], pts[:, 1])
            line.set_3d_properties(pts[:, 2])
        pts = np.array([c[j] for c in trunk])
        lines[-1].set_data(pts[:, 0], pts[:, 1])
        lines[-1].set_3d_properties(pts[:, 2])
        title.set_text(f"HyQ, t = {t[k[j]]:.3f} s")
        return lines

    anim = animation.FuncAnimation(fig, frame, frames=len(k), blit=False)
    writer = animation.PillowWriter(fps=fps) if str(path).lower().endswith(".gif") else animation.FFMpegWriter(fps=fps)
    anim.save(path, writer=writer, dpi=70)
    plt.close(fig)
