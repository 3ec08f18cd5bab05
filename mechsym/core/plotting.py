"""Pictures of mechanisms: snapshots with point traces, and animations (GIF or MP4)."""
from __future__ import annotations

import numpy as np

from mechsym.core.output import save_animation, save_figure


def headless(matplotlib):
    """Draw off-screen (Agg), except inside a notebook kernel, whose inline backend shows the figures."""
    import sys

    if "ipykernel" not in sys.modules:
        matplotlib.use("Agg")


def _pyplot():
    import matplotlib

    headless(matplotlib)
    import matplotlib.pyplot as plt

    return plt


def _body_segments(system, table, k):
    """Per moving body, the polyline through its named points at sample k."""
    mech = system.mechanism
    segs = []
    for b in mech.moving_bodies:
        names = list(mech.bodies[b].points)
        xy = [(table[f"{n}.x"][k], table[f"{n}.y"][k]) for n in names]
        if len(xy) == 1:
            xy = xy * 2
        segs.append((b, np.array(xy)))
    return segs


def frame_rows(n, frames):
    """The rows of an n-sample run that an animation of at most `frames` frames shows: evenly spread,
    the first and the last included (every row if n <= frames)."""
    return np.unique(np.linspace(0, n - 1, min(frames, n)).astype(int))


def draw_kinematics(system, table, path=None, snapshots=4):
    """Draw the mechanism at a few samples over the traces of its named points; saved to `path` (PNG or
    SVG) if given; returns the matplotlib Figure."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 6))
    for name in system.kin.point_names:
        ax.plot(table[f"{name}.x"], table[f"{name}.y"], lw=0.8, alpha=0.6)
        ax.annotate(name, (table[f"{name}.x"][0], table[f"{name}.y"][0]), fontsize=8)
    n = len(table)
    for alpha, k in zip(np.linspace(0.3, 1.0, snapshots), np.linspace(0, n - 1, snapshots).astype(int)):
        for _, xy in _body_segments(system, table, k):
            ax.plot(xy[:, 0], xy[:, 1], "-o", color="k", alpha=alpha, ms=3)
    ax.set_aspect("equal")
    ax.grid(True, alpha=0.3)
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.set_title(f"{system.mechanism.name}: links and point paths")
    fig.tight_layout()
    if path:
        save_figure(fig, path, dpi=120)
    return fig


def animate_kinematics(system, table, path, fps=25, trace=()):
    """An animation of the mechanism through the samples of a kinematics table."""
    plt = _pyplot()
    from matplotlib import animation

    fig, ax = plt.subplots(figsize=(6, 6))
    xs = np.concatenate([table[f"{n}.x"] for n in system.kin.point_names])
    ys = np.concatenate([table[f"{n}.y"] for n in system.kin.point_names])
    pad = 0.05 * max(np.ptp(xs), np.ptp(ys), 1e-3)
    ax.set_xlim(xs.min() - pad, xs.max() + pad)
    ax.set_ylim(ys.min() - pad, ys.max() + pad)
    ax.set_aspect("equal")
    ax.grid(True, alpha=0.3)
    for name in trace:
        ax.plot(table[f"{name}.x"], table[f"{name}.y"], lw=0.8, alpha=0.6, label=f"{name} path")
    lines = [ax.plot([], [], "-o", ms=3, label=b)[0] for b in system.mechanism.moving_bodies]

    def frame(k):
        for line, (_, xy) in zip(lines, _body_segments(system, table, k)):
            line.set_data(xy[:, 0], xy[:, 1])
        return lines

    anim = animation.FuncAnimation(fig, frame, frames=len(table), blit=True)
    try:
        save_animation(anim, path, fps)
    finally:
        plt.close(fig)
