"""A planar three-link chain falling onto compliant ground (mechsym's planar example of issue 6).

Three uniform links of length l = 1 m and mass 1 kg (density 1 kg/m) are pinned in series: link1 from the
base pin O, 1.5 m above the ground, to A; link2 from A to B; link3 from B to the tip C. The coordinates
are the relative joint angles theta1 (link1 against the ground frame), theta2 (link2 against link1) and
theta3 (link3 against link2), all passive. Gravity 9.81 m/s^2 along -y; the ground is y = 0.

Contact points sit at the moving link ends A, B and C, each on the link it ends (the pins A and B carry
one point each, not one per link, so that a pin touching the ground is one contact). Ground: K = 1e6,
D = 2000, mu = 0.5 (spatial_v2's "safe floor").

Started horizontal (all angles zero) at rest, the chain swings down; B and C strike the ground (A can not:
it stays 0.5 m above it) and slide and stick there.

`mechsym chain3` writes the columns t, theta1..3, theta1d..3d, the deflections A.ux, B.ux, C.ux, the
contact points A.x, A.y, B.x, B.y, C.x, C.y, and n_contact, n_stick, n_slip.
"""
from __future__ import annotations

import numpy as np

from mechsym.contact import ContactPoints, GroundContact
from mechsym.core.output import save_animation, save_figure
from mechsym.planar.model import Mechanism

K, D, MU = 1e6, 2000.0, 0.5
CONTACT_POINTS = {"A": ("link1", "A"), "B": ("link2", "B"), "C": ("link3", "C")}


def build() -> Mechanism:
    m = Mechanism("chain3", doc=__doc__)
    length = m.parameter("l", 1.0, "m", "length of every link")
    rho = m.parameter("density", 1.0, "kg/m", "linear density of every link (1 kg per link)")
    height = m.parameter("h", 1.5, "m", "height of the base pin O above the ground")
    m.gravity_down("g")
    m.ground(points={"O": (0, height)})
    m.bar("link1", ("O", "A"), length, rho)
    m.bar("link2", ("A", "B"), length, rho)
    m.bar("link3", ("B", "C"), length, rho)
    m.revolute("O", "ground", "O", "link1")
    m.revolute("A", "link1", "A", "link2")
    m.revolute("B", "link2", "B", "link3")
    m.coordinate("theta1", "O")
    m.coordinate("theta2", "A")
    m.coordinate("theta3", "B")
    return m


def model(params=None, mu=MU, stiffness=K, damping=D, backend=None):
    """(system, contact points at A, B, C, ground). backend "c": generated C (compiled once, cached), whose
    simulation tracks each state in one call."""
    from mechsym import derive

    system = derive(build(), backend=backend)
    return system, ContactPoints(system, CONTACT_POINTS, params), GroundContact(stiffness, damping, mu)


def simulate(t_end=1.5, theta0=(0.0, 0.0, 0.0), thetad0=(0.0, 0.0, 0.0), dt=None, rtol=1e-8, atol=None,
             method="RK45", **contact):
    """The fall as a ContactRun (columns t, theta1..3, their rates, deflections, contact points and counts).
    contact: params, mu, stiffness, damping, backend (as `model`)."""
    from mechsym.contact.run import simulate_contact

    system, points, ground = model(**contact)
    state0 = np.concatenate([np.asarray(theta0, float), np.asarray(thetad0, float)])
    return simulate_contact(points, ground, state0, t_end, dt=dt, rtol=rtol, atol=atol, method=method)


# ---------------------------------------------------------------- command line

HELP = "a planar three-link chain falling onto compliant ground (CSV of its motion)"


def _angles(text):
    """Three comma-separated angles (radians, or degrees with 'deg')."""
    import argparse

    from mechsym.app.options import angle

    parts = str(text).split(",")
    if len(parts) != 3 or any(not part.strip() for part in parts):
        raise argparse.ArgumentTypeError(f"expected 3 comma-separated values, got '{text}'")
    return tuple(angle(part.strip()) for part in parts)


def configure(p):
    """Options of `mechsym chain3` (registered in mechanisms.REGISTRY)."""
    from mechsym.app.options import number
    from mechsym.app.options import (animation_group, backend_group, output_group, plot_group, time_group,
                                  tolerance_group)

    time_group(p, 1.5)
    tolerance_group(p, 1e-8)
    p.add_argument("--theta0", type=_angles, default=(0.0, 0.0, 0.0),
                   help="initial theta1,theta2,theta3 (relative joint angles; rad, or deg with 'deg')")
    p.add_argument("--thetad0", type=_angles, default=(0.0, 0.0, 0.0), help="initial rates [rad/s]")
    p.add_argument("--mu", type=number, default=MU, help="friction coefficient")
    p.add_argument("--stiffness", type=number, default=K, help="ground stiffness K [N/m^1.5]")
    p.add_argument("--damping", type=number, default=D, help="ground damping D [N s/m^1.5]")
    backend_group(p, help="evaluation backend (default c: generated C, compiled once and cached)")
    p.add_argument("--timeline", help="CSV of every point state change (t, point, before, after)")
    output_group(p, required=True)
    plot_group(p, help="PNG/SVG: the chain at a few instants over the point paths, heights and contacts")
    animation_group(p, help="GIF/MP4 of the chain")
    return p


def run(args) -> int:
    """`mechsym chain3`: simulate the fall and write the CSV (and the optional timeline, plot, animation)."""
    from mechsym.app.options import check_command_outputs, run_options
    from mechsym.app.options import write_contact_outputs
    from mechsym.core.output import CSV

    check_command_outputs(args, CSV, ("--timeline", args.timeline, CSV))
    run_options(args)
    result = simulate(args.t_end, args.theta0, args.thetad0, args.dt, args.rtol, args.atol, mu=args.mu,
                      stiffness=args.stiffness, damping=args.damping, backend=args.backend)
    write_contact_outputs(result, result, args, plot, animate)
    return 0


def _polyline(table, k, base):
    """x, y of O, A, B, C at sample k."""
    xs = [base[0]] + [table[f"{n}.x"][k] for n in "ABC"]
    ys = [base[1]] + [table[f"{n}.y"][k] for n in "ABC"]
    return xs, ys


def _base(result):
    values = result.points.model.values
    return 0.0, values["h"]


def plot(result, path, snapshots=6):
    """Left: the chain at a few instants over the paths of B and C and the ground; right: the heights of
    A, B, C and the contact counts."""
    from mechsym.core.plotting import _pyplot

    plt = _pyplot()
    t = result
    base = _base(result)
    fig = plt.figure(figsize=(11, 5))
    ax = fig.add_subplot(1, 2, 1)
    for name in "BC":
        ax.plot(t[f"{name}.x"], t[f"{name}.y"], lw=0.8, alpha=0.6, label=f"path of {name}")
    for alpha, k in zip(np.linspace(0.25, 1.0, snapshots), np.linspace(0, len(t) - 1, snapshots).astype(int)):
        xs, ys = _polyline(t, k, base)
        ax.plot(xs, ys, "-o", color="k", alpha=alpha, ms=3)
        ax.annotate(f"{t['t'][k]:.2f} s", (xs[-1], ys[-1]), fontsize=7, alpha=alpha)
    ax.axhline(0.0, color="saddlebrown", lw=2)
    ax.set_aspect("equal")
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.legend(fontsize=8)
    ax.grid(True, alpha=0.3)
    ax.set_title("three-link chain falling onto compliant ground")
    right = fig.add_subplot(2, 2, 2)
    for name in "ABC":
        right.plot(t["t"], t[f"{name}.y"], label=f"{name}.y")
    right.set_ylabel("height [m]")
    right.legend(fontsize=8)
    right.grid(True, alpha=0.3)
    counts = fig.add_subplot(2, 2, 4, sharex=right)
    for c in ("n_contact", "n_stick", "n_slip"):
        counts.step(t["t"], t[c], where="post", label=c)
    counts.set_ylabel("points")
    counts.set_xlabel("t [s]")
    counts.legend(fontsize=8)
    counts.grid(True, alpha=0.3)
    fig.tight_layout()
    save_figure(fig, path, dpi=120)


def animate(result, path, frames=150, fps=25):
    """An animation of the chain over the ground (sub-sampled to `frames`)."""
    from matplotlib import animation

    from mechsym.core.plotting import _pyplot, frame_rows

    plt = _pyplot()
    t = result
    base = _base(result)
    k = frame_rows(len(t), frames)
    xs = np.concatenate([[base[0]]] + [t[f"{n}.x"] for n in "ABC"])
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.set_xlim(min(xs.min(), -0.2) - 0.1, xs.max() + 0.1)
    ax.set_ylim(-0.1, base[1] + 0.2)
    ax.set_aspect("equal")
    ax.axhline(0.0, color="saddlebrown", lw=2)
    ax.grid(True, alpha=0.3)
    line = ax.plot([], [], "-o", color="k", ms=4, label="chain")[0]
    title = ax.set_title("")

    def frame(j):
        i = k[j]
        line.set_data(*_polyline(t, i, base))
        title.set_text(f"t = {t['t'][i]:.3f} s   contacts {int(t['n_contact'][i])} "
                       f"(stick {int(t['n_stick'][i])}, slip {int(t['n_slip'][i])})")
        return [line, title]

    anim = animation.FuncAnimation(fig, frame, frames=len(k), blit=False)
    try:
        save_animation(anim, path, fps)
    finally:
        plt.close(fig)
