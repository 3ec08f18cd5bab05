"""The rolling polygonal disc of spatial_v2's Simulink example 7, on mechsym's compliant ground contact.

A solid disc of radius R = 0.05 m, thickness T = 0.01 m and density 3000 kg/m^3 (mass pi R^2 T rho, the
solid cylinder's inertia diag(Is, Ib, Is), Ib = m R^2 / 2 about its axis, Is = m (3 R^2 + T^2) / 12),
with its axis along the body y axis and the centre of mass at the body origin. Its ground-contact points
are the vertices of a regular polygon with `sides` sides on both faces: vertex k at the angle
a_k = 2 pi k / sides from the body z axis, (R sin a_k, -+T/2, R cos a_k); points m0..m15 lie on the face
y = -T/2 and p0..p15 on y = +T/2 (spatial_v2's order). Ground: K = 1e6, D = 2000, mu = 0.1 ("a soft,
very slippery plastic surface").

Start: centre at z = 0.1 m (the lowest vertex 0.05 m above the ground), upright, yawed by the twist angle
(0.18 rad) about z, moving at 0.6 m/s along x, no rotation, deflections zero. The disc falls for about
0.1 s, bounces a little, then rolls with a wobble; with a twist of 0.22 rad it falls over, slipping.

`mechsym polydisc` writes the columns t, x, y, z (centre), qw, qx, qy, qz (body-to-world rotation),
vx, vy, vz, wx, wy, wz (world frame), n_contact, n_stick, n_slip.
"""
from __future__ import annotations


import numpy as np
import sympy as sp

from mechsym.contact import ContactPoints, GroundContact
from mechsym.core.errors import InputError
from mechsym.core.output import save_animation, save_figure
from mechsym.core.quaternion import about as quat_about, rotation_matrix
from mechsym.spatial.floating import FloatingBody
from mechsym import derive

K, D, MU = 1e6, 2000.0, 0.1
COLUMNS = ("t", "x", "y", "z", "qw", "qx", "qy", "qz", "vx", "vy", "vz", "wx", "wy", "wz",
           "n_contact", "n_stick", "n_slip")


def build(sides: int = 16) -> FloatingBody:
    """The disc as a floating body with its 2 * sides polygon vertices as named points."""
    if not isinstance(sides, (int, np.integer)) or sides < 3:
        raise InputError(f"sides must be a whole number of at least 3, got {sides!r}")
    b = FloatingBody("polydisc", doc=__doc__)
    r = b.parameter("R", 0.05, "m", "disc radius")
    t = b.parameter("T", 0.01, "m", "disc thickness")
    rho = b.parameter("density", 3000.0, "kg/m^3", "density of the disc")
    b.gravity_down("g")
    m = sp.pi * r**2 * t * rho
    i_axis = m * r**2 / 2
    i_side = m * (3 * r**2 + t**2) / 12
    points = {}
    for face, y in (("m", -t / 2), ("p", t / 2)):
        for k in range(sides):
            a = 2 * sp.pi * k / sides
            points[f"{face}{k}"] = (r * sp.sin(a), y, r * sp.cos(a))
    b.body(m, (i_side, i_axis, i_side), points)
    return b


def model(sides: int = 16, params=None, mu: float = MU, stiffness: float = K, damping: float = D):
    """(system, contact points, ground) of example 7."""
    system = derive(build(sides))
    points = ContactPoints(system, {name: ("polydisc", name) for name in system.point_names}, params)
    return system, points, GroundContact(stiffness, damping, mu)


def initial_state(system, twist=0.18, height=0.1, speed=0.6):
    """Upright, yawed by `twist` about z, centre at `height`, moving at `speed` along x."""
    return system.initial_state((0.0, 0.0, height), quat_xyzw=quat_about((0, 0, 1), twist), velocity=(speed, 0.0, 0.0))


def simulate(sides=16, twist=0.18, t_end=1.5, dt=None, rtol=1e-6, atol=None, method="RK45", max_step=2e-3,
             params=None, backend=None, **contact):
    """Example 7 as a ContactRun (table with the CLI's columns and the deflections, timeline, stats).
    max_step: 2 ms (the Simulink model has 10 ms) so that short slips are not stepped over. backend "c":
    the whole run in one compiled call (mechsym.contact.c_run), "numpy": mechsym.core.hybrid on solve_ivp."""
    from mechsym.contact.run import simulate_contact

    system, points, ground = model(sides, params, **contact)
    return simulate_contact(points, ground, initial_state(system, twist), t_end, dt=dt, rtol=rtol, atol=atol,
                            method=method, max_step=max_step, backend=backend)


# ---------------------------------------------------------------- command line

HELP = "spatial_v2 example 7: a polygonal disc rolling on compliant ground (CSV of its motion)"


def configure(p):
    """Options of `mechsym polydisc` (registered in mechanisms.REGISTRY)."""
    from mechsym.app.options import angle, number, positive_int
    from mechsym.app.options import animation_group, backend_group, output_group, plot_group, time_group, tolerance_group

    p.add_argument("--sides", type=positive_int, default=16, help="polygon sides (contact points: 2 x sides)")
    p.add_argument("--twist", type=angle, default=0.18, help="initial yaw about z (rad, or deg with 'deg')")
    time_group(p, 1.5)
    tolerance_group(p, 1e-6)
    p.add_argument("--max-step", type=number, default=2e-3, help="largest integration step [s]")
    p.add_argument("--mu", type=number, default=MU, help="friction coefficient")
    backend_group(p, help="default c: the whole run in one compiled call (compiled once and cached)")
    p.add_argument("--timeline", help="CSV of every point state change (t, point, before, after)")
    output_group(p, required=True)
    plot_group(p, help="PNG/SVG of height, rates and contact counts")
    animation_group(p, help="GIF/MP4 of the disc")
    return p


def run(args) -> int:
    """`mechsym polydisc`: simulate example 7 and write the CSV (and the optional timeline, plot, animation)."""
    from mechsym.app.options import check_command_outputs, run_options
    from mechsym.app.options import write_contact_outputs
    from mechsym.contact.run import contact_width
    from mechsym.core.output import CSV
    from mechsym.core.results import Table

    check_command_outputs(args, CSV, ("--timeline", args.timeline, CSV))
    if args.sides < 3:
        raise InputError(f"--sides must be at least 3, got {args.sides}")
    if not args.max_step > 0:
        raise InputError(f"--max-step must be positive, got {args.max_step}")
    if args.mu < 0:
        raise InputError(f"--mu must be non-negative, got {args.mu}")
    run_options(args, width=contact_width(2 * args.sides),  # before building the points
                what=f"contact simulation of {2 * args.sides} points")
    run = simulate(args.sides, args.twist, args.t_end, args.dt, args.rtol, args.atol, max_step=args.max_step,
                   mu=args.mu, backend=args.backend)
    table = Table({c: run[c] for c in COLUMNS}, run.units, run.title)
    write_contact_outputs(run, table, args, plot, animate)
    return 0


def axis_angles(table):
    """Tilt (the disc axis's elevation above the ground plane: 0 upright) and heading (the yaw of the
    axis from +y, positive about +z), in radians, per sample: the wobble."""
    axis = rotation_matrix(np.stack([table[c] for c in ("qx", "qy", "qz", "qw")], axis=-1))[..., 1].T
    return np.arcsin(np.clip(axis[2], -1.0, 1.0)), np.arctan2(-axis[0], axis[1])


def plot(run, path):
    """Height, tilt and heading of the disc (the wobble), its rates and the contact counts against time."""
    from mechsym.core.plotting import _pyplot

    plt = _pyplot()
    tab = run
    t = tab["t"]
    fig, axes = plt.subplots(4, 1, figsize=(7, 9.5), sharex=True)
    axes[0].plot(t, tab["z"], label="z (centre)")
    axes[0].set_ylabel("z [m]")
    tilt, heading = axis_angles(tab)
    axes[1].plot(t, np.degrees(tilt), label="tilt of the axis")
    axes[1].plot(t, np.degrees(heading), label="heading of the axis")
    axes[1].set_ylabel("angle [deg]")
    axes[1].legend(fontsize=8)
    for c in ("vx", "vy", "vz", "wx", "wy", "wz"):
        axes[2].plot(t, tab[c], label=c, lw=0.9)
    axes[2].set_ylabel("v [m/s], w [rad/s]")
    axes[2].legend(fontsize=7, ncol=6)
    for c in ("n_contact", "n_stick", "n_slip"):
        axes[3].step(t, tab[c], where="post", label=c, lw=0.9)
    axes[3].set_ylabel("points")
    axes[3].legend(fontsize=8)
    axes[3].set_xlabel("t [s]")
    for ax in axes:
        ax.grid(True, alpha=0.3)
    axes[0].set_title("polygonal disc on compliant ground (spatial_v2 example 7)")
    fig.tight_layout()
    save_figure(fig, path, dpi=120)


def animate(run, path, frames=150, fps=25):
    """A 3-D animation of the disc's two polygon faces, with a spoke to the first vertex so that the
    rolling shows, over the path of its centre and the ground (sub-sampled to `frames`; equal scales)."""
    from matplotlib import animation

    from mechsym.core.plotting import _pyplot, frame_rows

    plt = _pyplot()
    tab = run
    k = frame_rows(len(tab), frames)
    local = run.points.local  # 3 x 2 sides
    n = local.shape[1] // 2
    reach = float(np.max(np.linalg.norm(local, axis=0)))
    lo = np.array([tab["x"].min(), tab["y"].min(), 0.0]) - [reach, reach, 0.0]
    hi = np.array([tab["x"].max(), tab["y"].max(), max(tab["z"].max(), 0.0)]) + reach
    fig = plt.figure(figsize=(7, 5))
    ax = fig.add_subplot(projection="3d")
    ax.set_xlim(lo[0], hi[0])
    ax.set_ylim(lo[1], hi[1])
    ax.set_zlim(lo[2], hi[2])
    ax.set_box_aspect(hi - lo)              # equal scales: the disc stays round
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.set_zlabel("z [m]")
    ax.plot([lo[0], hi[0], hi[0], lo[0], lo[0]], [lo[1], lo[1], hi[1], hi[1], lo[1]], 0.0, color="saddlebrown")
    ax.plot(tab["x"], tab["y"], np.zeros(len(tab)), color="0.6", lw=0.6)          # the centre's ground track
    faces = [ax.plot([], [], [], "-", color=c, label=f"face {i}")[0] for i, c in enumerate(("tab:blue", "tab:orange"))]
    spoke = ax.plot([], [], [], "-", color="tab:red", label="spoke")[0]
    trace = ax.plot([], [], [], "k-", lw=0.6, label="centre path")[0]

    def frame(j):
        i = k[j]
        centre = np.array([tab["x"][i], tab["y"][i], tab["z"][i]])
        pts = rotation_matrix([tab[c][i] for c in ("qx", "qy", "qz", "qw")]) @ local + centre[:, None]
        for f, sl in zip(faces, (slice(0, n), slice(n, 2 * n))):
            loop = np.concatenate([pts[:, sl], pts[:, sl][:, :1]], axis=1)
            f.set_data(loop[0], loop[1])
            f.set_3d_properties(loop[2])
        spoke_end = 0.5 * (pts[:, 0] + pts[:, n])
        spoke.set_data([centre[0], spoke_end[0]], [centre[1], spoke_end[1]])
        spoke.set_3d_properties([centre[2], spoke_end[2]])
        trace.set_data(tab["x"][: i + 1], tab["y"][: i + 1])
        trace.set_3d_properties(tab["z"][: i + 1])
        ax.set_title(f"t = {tab['t'][i]:.3f} s   contacts {int(tab['n_contact'][i])} "
                     f"(stick {int(tab['n_stick'][i])}, slip {int(tab['n_slip'][i])})")
        return faces + [spoke, trace]

    anim = animation.FuncAnimation(fig, frame, frames=len(k), blit=False)
    try:
        save_animation(anim, path, fps)
    finally:
        plt.close(fig)
