"""The UGV figures of docs/ugv.md: the shipped tracks, Figure 24 (torque for constant leg angles), Figure 25
(optimised leg angles and the vehicle in sequence) and the animation along a track; the analyses they draw
are in mechanisms/ugv_study.py."""
from __future__ import annotations

import math

import numpy as np

from mechanisms import tracks
from mechanisms.ugv_optimize import Schedule, optimize
from mechanisms.ugv_study import DEG, LIMITS, Vehicle, sweep, torque_along
from mechsym.core.output import save_animation, save_figure


def _pyplot():
    import matplotlib

    from mechsym.core.plotting import headless

    headless(matplotlib)
    import matplotlib.pyplot as plt

    return plt


def _finish(plt, fig, path):
    """Save the figure to `path` (if given, atomically) and close it there; return it (a notebook shows it)."""
    if path:
        save_figure(fig, path, dpi=110)
    return fig


def _draw_vehicle(ax, vehicle, pose, k, color="k", alpha=1.0):
    """Body, legs and wheels of sample k of a pose (1-D arrays)."""
    from matplotlib.patches import Circle

    p = {name: (float(np.ravel(a)[k]), float(np.ravel(b)[k])) for name, (a, b) in pose.points().items()}
    ax.plot(*zip(p["Jr"], p["Jf"]), "-", color=color, lw=4, alpha=alpha, solid_capstyle="round")
    ax.plot(*zip(p["Jr"], p["Wr"]), "-", color=color, lw=2, alpha=alpha)
    ax.plot(*zip(p["Jf"], p["Wf"]), "-", color=color, lw=2, alpha=alpha)
    for w in ("Wr", "Wf"):
        ax.add_patch(Circle(p[w], vehicle.r, fill=False, color=color, lw=1.2, alpha=alpha))
    ax.plot(*p["C_body"], "o", color=color, ms=3, alpha=alpha)
    return p


def _span(track, lo, hi):
    """The x range a figure shows: the vehicle with a margin, within the track's domain (a CSV track
    ends where its points end)."""
    return max(lo, track.domain[0]), min(hi, track.domain[1])


def _track_line(ax, track, x_lo, x_hi):
    xs = np.linspace(x_lo, x_hi, 600)
    ax.fill_between(xs, track(xs), track(xs).min() - 0.15, color="0.85")
    ax.plot(xs, track(xs), color="0.3", lw=1)


def figure_sweep(path, track="bump", vehicle=None, n_grid=6, x=None):
    """Figure 24: drive torque along the track for a grid of constant angle pairs (clear pairs only) and the
    peak |torque| of every pair."""
    plt = _pyplot()
    vehicle = vehicle or Vehicle()
    track = tracks.load(track)
    x = np.linspace(0.0, 8.0, 401) if x is None else x
    grid = np.linspace(*LIMITS, n_grid)
    pr, pf = (a.ravel() for a in np.meshgrid(grid, grid, indexing="ij"))
    torque = sweep(track, pr, pf, x, vehicle=vehicle)["torque"]
    clear = vehicle.clearance(pr, pf)
    ok = (clear["wheels"] >= 0) & (clear["rear"] >= 0) & (clear["front"] >= 0)
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 4.6), gridspec_kw={"width_ratios": [1.6, 1]})
    cmap = plt.get_cmap("viridis")
    for i in np.flatnonzero(ok):
        a1.plot(x, torque[:, i], color=cmap((pr[i] - LIMITS[0]) / (LIMITS[1] - LIMITS[0])), lw=0.9,
                alpha=0.4 + 0.6 * (pf[i] - LIMITS[0]) / (LIMITS[1] - LIMITS[0]))
    a1.set_xlabel("front contact x [m]")
    a1.set_ylabel("drive torque -M [N m]")
    a1.set_title(f"torque on '{track.name}' for constant leg angles (colour: phi_r)")
    a1.grid(True, alpha=0.3)
    peak = np.where(ok, np.abs(torque).max(axis=0), np.nan).reshape(n_grid, n_grid)
    im = a2.imshow(peak.T, origin="lower", extent=[grid[0] / DEG, grid[-1] / DEG, grid[0] / DEG, grid[-1] / DEG],
                   aspect="auto", cmap="magma")
    fig.colorbar(im, ax=a2, label="peak |torque| [N m]")
    a2.set_xlabel("phi_r [deg]")
    a2.set_ylabel("phi_f [deg]")
    a2.set_title("peak torque per pair (blank: wheels overlap or hit the body)")
    fig.tight_layout()
    return _finish(plt, fig, path)


def figure_schedule(path, schedule: Schedule, vehicle=None, snapshots=7):
    """Figure 25: (a) the optimal leg angles and the torque along the track, (b) the vehicle in sequence."""
    plt = _pyplot()
    vehicle = vehicle or Vehicle()
    t = schedule.table
    track = _schedule_track(schedule)
    fig = plt.figure(figsize=(12, 6.2))
    grid = fig.add_gridspec(2, 2, height_ratios=[1.3, 1])
    a1 = fig.add_subplot(grid[0, 0])
    a1.plot(t["x_front"], t["phi_r"] / DEG, label="phi_r")
    a1.plot(t["x_front"], t["phi_f"] / DEG, label="phi_f")
    a1.set_ylabel("leg angle [deg]")
    a1.set_xlabel("front contact x [m]")
    a1.legend(fontsize=8)
    a1.grid(True, alpha=0.3)
    a1.set_title(f"optimal angles ({schedule.criterion})")
    a2 = fig.add_subplot(grid[0, 1])
    a2.plot(t["x_front"], t["torque"], label="optimised")
    if schedule.best_constant:
        c = torque_along(track, schedule.best_constant[0], schedule.best_constant[1], t["x_front"][0],
                         t["x_front"][-1], len(t), vehicle=vehicle, limits=(0.01, math.pi - 0.01))
        a2.plot(t["x_front"], c["torque"], "--", label=f"best constant ({schedule.best_constant[0] / DEG:.0f} deg, "
                f"{schedule.best_constant[1] / DEG:.0f} deg)")
    a2.set_xlabel("front contact x [m]")
    a2.set_ylabel("drive torque [N m]")
    a2.legend(fontsize=8)
    a2.grid(True, alpha=0.3)
    a2.set_title(f"criterion {schedule.value:.4g} (best constant {schedule.best_constant[2] if schedule.best_constant else float('nan'):.4g})")
    a3 = fig.add_subplot(grid[1, :])
    pose = vehicle.place(track, schedule.x, schedule.phi_r, schedule.phi_f, paired=True)
    lo, hi = _span(track, float(pose.x_rear.min()) - 0.5, float(schedule.x.max()) + 0.5)
    _track_line(a3, track, lo, hi)
    for j, k in enumerate(np.linspace(0, len(schedule.x) - 1, snapshots).astype(int)):
        _draw_vehicle(a3, vehicle, pose, k, color=plt.get_cmap("plasma")(j / max(snapshots - 1, 1)))
    a3.set_aspect("equal")
    a3.set_xlim(lo, hi)
    a3.set_xlabel("x [m]")
    a3.set_title("the vehicle along the track")
    fig.tight_layout()
    return _finish(plt, fig, path)


def _schedule_track(schedule):
    return getattr(schedule, "track", None) or tracks.load("bump")


def _along(track, x, phi_r, phi_f, vehicle):
    """(vehicle, track, x, phi_r, phi_f, pose) of the vehicle placed along the track at the front-contact
    positions x (default 81 over 0..8 m), the leg angles constants or arrays along x."""
    vehicle = vehicle or Vehicle()
    track = tracks.load(track)
    x = np.linspace(0.0, 8.0, 81) if x is None else np.asarray(x, float)
    pr = np.broadcast_to(np.asarray(phi_r, float), x.shape).copy()
    pf = np.broadcast_to(np.asarray(phi_f, float), x.shape).copy()
    return vehicle, track, x, pr, pf, vehicle.place(track, x, pr, pf, paired=True)


def animate(path, track="bump", x=None, phi_r=90 * DEG, phi_f=90 * DEG, vehicle=None, fps=20):
    """A GIF (or MP4) of the vehicle along the track; phi_r, phi_f constants or arrays along x."""
    plt = _pyplot()
    from matplotlib import animation
    from matplotlib.patches import Circle

    vehicle, track, x, pr, pf, pose = _along(track, x, phi_r, phi_f, vehicle)
    torque = vehicle.forces(pose)["torque"]
    pts = pose.points()
    lo, hi = _span(track, float(pose.x_rear.min()) - 0.6, float(x.max()) + 0.6)
    fig, ax = plt.subplots(figsize=(9, 2.8))
    _track_line(ax, track, lo, hi)
    top = max(float(np.max(pts["Jr"][1])), float(np.max(pts["Jf"][1]))) + 0.3
    ax.set_xlim(lo, hi)
    ax.set_ylim(float(track(np.linspace(lo, hi, 200)).min()) - 0.15, top)
    ax.set_aspect("equal")
    body, = ax.plot([], [], "-", color="k", lw=4, solid_capstyle="round", label="body")
    leg_r, = ax.plot([], [], "-", color="k", lw=2, label="rear leg")
    leg_f, = ax.plot([], [], "-", color="k", lw=2, label="front leg")
    wheels = [ax.add_patch(Circle((0, 0), vehicle.r, fill=False, lw=1.5, label=f"{end} wheel")) for end in ("rear", "front")]
    label = ax.text(0.01, 0.95, "", transform=ax.transAxes, va="top", fontsize=9)

    def frame(k):
        def at(name):
            return float(pts[name][0][k]), float(pts[name][1][k])

        body.set_data(*zip(at("Jr"), at("Jf")))
        leg_r.set_data(*zip(at("Jr"), at("Wr")))
        leg_f.set_data(*zip(at("Jf"), at("Wf")))
        wheels[0].center, wheels[1].center = at("Wr"), at("Wf")
        label.set_text(f"x = {x[k]:.2f} m   phi_r = {pr[k] / DEG:.1f} deg   phi_f = {pf[k] / DEG:.1f} deg   "
                       f"torque = {torque[k]:.2f} N m")
        return [body, leg_r, leg_f, *wheels, label]

    fig.tight_layout()
    anim = animation.FuncAnimation(fig, frame, frames=len(x), blit=True)
    try:
        save_animation(anim, path, fps)
    finally:
        plt.close(fig)


def figure_tracks(path, vehicle=None, phi_r=90 * DEG, phi_f=90 * DEG):
    """The shipped tracks and the drive torque along each at one angle pair."""

    plt = _pyplot()
    vehicle = vehicle or Vehicle()
    fig, axes = plt.subplots(2, 1, figsize=(9, 6), sharex=True)
    x = np.linspace(0.0, 8.0, 801)
    for name in tracks.SHIPPED:
        t = torque_along(name, phi_r, phi_f, samples=801, vehicle=vehicle)
        axes[0].plot(x, tracks.load(name)(x), label=name)
        axes[1].plot(x, t["torque"], label=name)
    axes[0].set_ylabel("track y [m]")
    axes[0].legend(fontsize=8)
    axes[0].set_title("shipped tracks")
    axes[1].set_ylabel("drive torque [N m]")
    axes[1].set_xlabel("front contact x [m]")
    axes[1].set_title(f"torque along each (phi_r = {phi_r / DEG:.0f} deg, phi_f = {phi_f / DEG:.0f} deg)")
    for a in axes:
        a.grid(True, alpha=0.3)
    fig.tight_layout()
    return _finish(plt, fig, path)


def figures(out_dir, vehicle=None):
    """The documentation figures (docs/ugv.md): tracks, Figure 24, Figure 25 and a GIF; returns the paths."""
    import os

    vehicle = vehicle or Vehicle()
    paths = [os.path.join(out_dir, n) for n in ("ugv_tracks.png", "ugv_fig24.png", "ugv_fig25.png", "ugv_bump.gif")]
    figure_tracks(paths[0], vehicle)
    figure_sweep(paths[1], "bump", vehicle)
    sched = optimize("bump", "torque-variation", vehicle=vehicle)
    figure_schedule(paths[2], sched, vehicle)
    x = np.linspace(0.0, 8.0, 61)
    animate(paths[3], "bump", x, np.interp(x, sched.x, sched.phi_r), np.interp(x, sched.x, sched.phi_f), vehicle)
    return paths


def view(track="bump", x=None, phi_r=90 * DEG, phi_f=90 * DEG, vehicle=None, rim=24):
    """The vehicle along the track in the browser (a plotly Figure: mechsym.core.view.linkage_figure): the
    body, the legs and the wheels (rims of `rim` points, a spoke to the contact point) at the front-contact
    position the slider chooses, the track traced under the two contacts; beside it the drive torque and
    the normal forces against x_front. phi_r, phi_f: constants or arrays along x."""
    from mechsym.core.results import Table
    from mechsym.core.view import linkage_figure

    vehicle, _, x, _, _, pose = _along(track, x, phi_r, phi_f, vehicle)
    forces = vehicle.forces(pose, ("Nr", "Nf", "torque"))
    pts = {k: (np.ravel(a), np.ravel(b)) for k, (a, b) in pose.points().items()}
    columns, units = {"x_front": x}, {"x_front": "m", "torque": "N m", "Nr": "N", "Nf": "N"}
    for name in ("Jr", "Jf", "Wr", "Wf", "T", "D", "C_body"):
        columns[f"{name}.x"], columns[f"{name}.y"] = pts[name]
    bodies = {"body": ["Jr", "C_body", "Jf"], "rear leg": ["Jr", "Wr"], "front leg": ["Jf", "Wf"],
              "rear spoke": ["Wr", "T"], "front spoke": ["Wf", "D"]}
    turn = 2 * np.pi * np.arange(rim) / rim
    for wheel, end in (("Wr", "rear"), ("Wf", "front")):
        names = [f"{end} rim {i}" for i in range(rim)]
        for name, a in zip(names, turn):
            columns[f"{name}.x"] = pts[wheel][0] + vehicle.r * np.cos(a)
            columns[f"{name}.y"] = pts[wheel][1] + vehicle.r * np.sin(a)
        bodies[f"{end} wheel"] = names
    columns.update({n: np.ravel(forces[n]) for n in ("torque", "Nr", "Nf")})
    table = Table(columns, units, f"ugv on the track '{track}'")
    return linkage_figure(table, bodies, "x_front", columns=["torque", "Nr", "Nf"], trace=["T", "D"], units=units,
                          title=table.title)
