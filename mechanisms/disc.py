"""`mechsym disc`: a thin disc on the ground plane z = 0 with Exudyn's penalty rolling-disc contact.

The disc is a floating rigid body (mechsym.spatial.floating) with its axle along the body x axis, gravity 9.81 m/s^2
along -z, and the connector mechsym.contact.rolling_disc.RollingDisc (Exudyn's
ObjectConnectorRollingDiscPenalty). It starts with its centre above the origin at the static penetration
m g / k, tilted about the world y axis by `tilt` (a positive tilt lowers the axle's +x end), with the
given velocity and angular velocity (world frame). `torque` T is the body-fixed torque -T about the axle
(positive T drives towards +y).

Integration: the right-hand side and its exact Jacobian are generated together in C (mechsym.spatial.floating_loads'
LoadedODE) and handed to scipy's BDF (the friction regularisation makes the problem stiff);
rtol = atol = 1e-9 by default (docs/conventions.md).

Columns: t, x, y, z, vx, vy, vz, wx, wy, wz (world frame), f_lat, f_long, f_n (contact force on the disc
along the axle's horizontal projection, the direction of rolling, +z), slip_lat, slip_long
(docs/rolling-disc.md).
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from mechsym.contact.rolling_disc import PARALLEL_TOLERANCE, RollingDisc
from mechsym.core.errors import InputError
from mechsym.core.output import save_animation, save_figure

G = 9.81
COLUMNS = ("t", "x", "y", "z", "vx", "vy", "vz", "wx", "wy", "wz",
           "f_lat", "f_long", "f_n", "slip_lat", "slip_long")
UNITS = {"t": "s", "x": "m", "y": "m", "z": "m", "vx": "m/s", "vy": "m/s", "vz": "m/s", "wx": "rad/s",
         "wy": "rad/s", "wz": "rad/s", "f_lat": "N", "f_long": "N", "f_n": "N", "slip_lat": "m/s",
         "slip_long": "m/s"}


@dataclass(frozen=True)
class Disc:
    """A disc on z = 0 (SI units, vectors in the world frame); the same fields as the Exudyn reference."""

    radius: float = 0.2
    mass: float = 1.0
    inertia: tuple = (0.02, 0.01, 0.01)
    stiffness: float = 1e5
    damping: float = 1e3
    mu: tuple = (0.3, 0.3)
    zone: float = 1e-3
    linear_zone: bool = False
    viscous: tuple = (0.0, 0.0)
    friction_angle: float = 0.0
    rolling_friction: float = 0.0
    tilt: float = 0.0
    v0: tuple = (0.0, 0.0, 0.0)
    omega0: tuple = (0.0, 0.0, 0.0)
    torque: float = 0.0

    def check(self):
        def finite(name, v):
            if not all(math.isfinite(float(x)) for x in np.atleast_1d(v)):
                raise InputError(f"{name} must be finite, got {v!r}")

        for name in ("radius", "mass", "stiffness", "zone"):
            v = getattr(self, name)
            finite(name, v)
            if not v > 0:
                raise InputError(f"{name} must be positive, got {v!r}")
        for name in ("damping", "rolling_friction"):
            finite(name, getattr(self, name))
            if getattr(self, name) < 0:
                raise InputError(f"{name} must be non-negative, got {getattr(self, name)!r}")
        for name in ("mu", "viscous"):
            v = np.asarray(getattr(self, name), float)
            finite(name, v)
            if (v < 0).any():
                raise InputError(f"{name} must be non-negative, got {v.tolist()!r}")
        for name in ("inertia", "v0", "omega0"):
            v = getattr(self, name)
            if len(v) != 3:
                raise InputError(f"{name} must have 3 components, got {len(v)}")
            finite(name, v)
        if min(self.inertia) <= 0:
            raise InputError(f"inertia must be positive, got {tuple(self.inertia)!r}")
        for name in ("friction_angle", "tilt", "torque"):
            finite(name, getattr(self, name))
        if abs(math.cos(self.tilt)) <= PARALLEL_TOLERANCE:
            raise InputError(f"tilt {self.tilt!r} rad puts the disc axis parallel to the ground normal: "
                             "the contact point is undefined")

    @property
    def penetration(self):
        return self.mass * G / self.stiffness

    def rotation(self):
        c, s = math.cos(self.tilt), math.sin(self.tilt)
        return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])

    def start_position(self):
        return np.array([0.0, 0.0, self.radius * math.cos(self.tilt) - self.penetration])

    def connector(self) -> RollingDisc:
        """The rolling-disc contact of this disc (centred on the body's centre of mass, axle along x)."""
        return RollingDisc("contact", radius=self.radius, stiffness=self.stiffness, zone=self.zone,
                           damping=self.damping, mu=self.mu, linear_zone=self.linear_zone, viscous=self.viscous,
                           friction_angle=self.friction_angle, rolling_friction=self.rolling_friction)

    def body_values(self) -> dict:
        return {"mass": self.mass, "Ixx": self.inertia[0], "Iyy": self.inertia[1], "Izz": self.inertia[2]}


def build(name="disc", doc=__doc__, mass=1.0, inertia=(0.02, 0.01, 0.01)):
    """A wheel (or wheelset) as a mechsym floating body: mass and principal inertias about body x (the
    axle), y, z are parameters, with these defaults (a run's values come from a `Disc` or a `Cart`)."""
    from mechsym.spatial.floating import FloatingBody

    b = FloatingBody(name, doc=doc)
    m = b.parameter("mass", mass, "kg", "mass")
    axes = (("Ixx", "x (the axle)"), ("Iyy", "y"), ("Izz", "z"))
    b.body(m, tuple(b.parameter(n, v, "kg m^2", f"principal inertia about body {a}")
                    for (n, a), v in zip(axes, inertia)))
    return b


@functools.lru_cache(maxsize=None)
def system(*declaration):
    """The derived floating body of `build(*declaration)`, once per process (values are run-time
    parameters)."""
    from mechsym import derive

    return derive(build(*declaration))


def simulate(disc: Disc, t_end=1.0, dt=None, rtol=1e-9, atol=None, method="BDF", backend=None):
    """Simulate; a RunResult with COLUMNS and the quaternion qw..qz, and the integrator's stats."""
    from mechsym.core.quaternion import about as quat_about
    from mechsym.spatial.floating_loads import BodyTorque

    disc.check()
    sys3 = system()
    connector = disc.connector()
    ode = sys3.loaded([connector, BodyTorque("drive", (-disc.torque, 0.0, 0.0))], backend)
    y0 = sys3.initial_state(disc.start_position(), quat_xyzw=quat_about((0.0, 1.0, 0.0), disc.tilt),
                            velocity=disc.v0, omega=disc.omega0, omega_frame="world")
    return ode.simulate(y0, t_end, dt, rtol, atol, method, params=ode.params(disc.body_values()),
                        columns=lambda grid, y: columns(sys3, grid, y, {"": connector}))


def columns(sys3, grid, y, connectors):
    """The world columns of states y (13, N) on `grid` (with the quaternion), and per connector (a dict
    prefix -> RollingDisc) its forces and slips: PREFIX + f_lat, f_long, f_n, slip_lat, slip_long."""
    cols = {"t": grid, **sys3.world_columns(y)}
    for pre, con in connectors.items():
        c = con.contact(sys3, y)
        cols.update({pre + "f_lat": c.f_lat, pre + "f_long": c.f_long, pre + "f_n": c.f_n,
                     pre + "slip_lat": c.slip_lat, pre + "slip_long": c.slip_long})
    return cols


# ---------------------------------------------------------------- command line

HELP = "a disc rolling on the ground with Exudyn's penalty rolling-disc contact (CSV of its motion)"


def vector(n, *, kind="number", allow=()):
    """An argparse type: n comma-separated numbers (or angles); `allow` lists other accepted counts."""
    import argparse

    from mechsym.app.options import angle, number

    conv = angle if kind == "angle" else number

    def parse(text):
        parts = [p for p in str(text).split(",")]
        if len(parts) not in (n, *allow) or any(not p.strip() for p in parts):
            counts = " or ".join(str(c) for c in (*allow, n))
            raise argparse.ArgumentTypeError(f"expected {counts} comma-separated values, got '{text}'")
        return tuple(conv(p.strip()) for p in parts)

    parse.__name__ = f"{n}-vector"
    return parse


def configure(p):
    """Options of `mechsym disc` (registered in mechanisms.REGISTRY)."""
    from mechsym.app.options import angle, number
    from mechsym.app.options import animation_group, output_group, plot_group, time_group, tolerance_group

    p.add_argument("--radius", type=number, required=True, help="disc radius [m]")
    p.add_argument("--mass", type=number, required=True, help="disc mass [kg]")
    p.add_argument("--inertia", type=vector(3), help="principal inertias IXX,IYY,IZZ about the axle (body x), "
                   "y, z [kg m^2] (default: the thin disc, m r^2/2, m r^2/4, m r^2/4)")
    p.add_argument("--stiffness", type=number, required=True, help="contact stiffness k [N/m]")
    p.add_argument("--damping", type=number, required=True, help="contact damping d [N s/m]")
    p.add_argument("--mu", type=vector(2, allow=(1,)), required=True,
                   help="dry friction coefficient MU, or MU_LAT,MU_LONG")
    p.add_argument("--mu-zone", type=number, default=1e-3, help="regularisation zone v_mu [m/s] (1e-3)")
    p.add_argument("--linear-zone", action="store_true", help="linear instead of quadratic regularisation")
    p.add_argument("--viscous", type=vector(2), default=(0.0, 0.0), help="viscous friction DX,DY [s/m]")
    p.add_argument("--friction-angle", type=angle, default=0.0, help="friction angle (rad, or deg with 'deg')")
    p.add_argument("--rolling-friction", type=number, default=0.0,
                   help="rolling friction c_r [s/m]: force -c_r |f_n| v at the centre")
    p.add_argument("--tilt", type=angle, default=0.0,
                   help="rotation about world y (rad or deg); positive lowers the axle's +x end")
    p.add_argument("--v0", type=vector(3), required=True, help="initial velocity VX,VY,VZ (world) [m/s]")
    p.add_argument("--omega0", type=vector(3), required=True,
                   help="initial angular velocity WX,WY,WZ (world) [rad/s]")
    p.add_argument("--torque", type=number, default=0.0, help="body-fixed torque -T about the axle [N m]")
    time_group(p, required=True)
    tolerance_group(p)
    output_group(p, required=True)
    plot_group(p, help="PNG/SVG of the motion and contact forces")
    animation_group(p, help="GIF/MP4 of the disc (rim, axle, contact trail)")
    return p


def disc_from_args(args) -> Disc:
    """The Disc of the command's options, each checked (and the outputs) before simulating."""
    from mechsym.app.options import check_command_outputs, run_options

    check_command_outputs(args)
    run_options(args)
    r, m = args.radius, args.mass
    if not r > 0:
        raise InputError(f"--radius must be positive, got {r}")
    if not m > 0:
        raise InputError(f"--mass must be positive, got {m}")
    inertia = args.inertia if args.inertia is not None else (m * r * r / 2, m * r * r / 4, m * r * r / 4)
    for opt, v in (("--stiffness", args.stiffness), ("--mu-zone", args.mu_zone)):
        if not v > 0:
            raise InputError(f"{opt} must be positive, got {v}")
    mu = tuple(args.mu) * (2 // len(args.mu))
    for opt, v in (("--damping", args.damping), ("--mu", min(mu)), ("--rolling-friction", args.rolling_friction)):
        if v < 0:
            raise InputError(f"{opt} must be non-negative, got {v}")
    if min(args.viscous) < 0:
        raise InputError(f"--viscous must be non-negative, got {','.join(map(str, args.viscous))}")
    if min(inertia) <= 0:
        raise InputError(f"--inertia must be positive, got {','.join(map(str, inertia))}")
    disc = Disc(radius=r, mass=m, inertia=tuple(inertia), stiffness=args.stiffness, damping=args.damping,
                mu=mu, zone=args.mu_zone, linear_zone=args.linear_zone, viscous=tuple(args.viscous),
                friction_angle=args.friction_angle, rolling_friction=args.rolling_friction, tilt=args.tilt,
                v0=tuple(args.v0), omega0=tuple(args.omega0), torque=args.torque)
    disc.check()
    return disc


def run(args) -> int:
    """`mechsym disc`: simulate and write the CSV (and the optional plot and animation)."""
    from mechsym.app.options import write_outputs
    from mechsym.core.results import Table

    disc = disc_from_args(args)
    result = simulate(disc, args.t_end, args.dt, rtol=args.rtol, atol=args.atol)
    cols, st = result.columns, result.stats
    table = Table({c: cols[c] for c in COLUMNS}, UNITS, "disc: rolling-disc penalty contact")
    shape = [(np.zeros(3), np.array([1.0, 0.0, 0.0]), disc.radius)]
    write_outputs(table, args.out, f"; {st['steps']} steps, {st['rhs_evaluations']} right-hand sides, "
                  f"{st['jacobians']} Jacobians, {st['wall']:.3f} s ({st['method']}, {st['backend']})",
                  [(args.plot, lambda p: plot(cols, p)),
                   (args.animate, lambda p: animate(cols, shape, p, title="disc on the ground"))])
    return 0


def plot(cols, path, prefixes=("",), title="disc on the ground (penalty rolling-disc contact)"):
    """Velocities, contact forces and slips against time (one set of force and slip lines per prefix)."""
    from mechsym.core.plotting import _pyplot

    plt = _pyplot()
    t = cols["t"]
    fig, axes = plt.subplots(3, 1, figsize=(7, 7.5), sharex=True)
    for c in ("vx", "vy", "vz", "wx", "wy", "wz"):
        axes[0].plot(t, cols[c], label=c, lw=0.9)
    axes[0].set_ylabel("v [m/s], w [rad/s]")
    axes[0].legend(fontsize=7, ncol=6)
    for pre in prefixes:
        for c in ("f_lat", "f_long", "f_n"):
            axes[1].plot(t, cols[pre + c], label=pre + c, lw=0.9)
        for c in ("slip_lat", "slip_long"):
            axes[2].plot(t, cols[pre + c], label=pre + c, lw=0.9)
    axes[1].set_ylabel("force on the disc [N]")
    axes[1].legend(fontsize=8, ncol=len(prefixes))
    axes[2].set_ylabel("slip [m/s]")
    axes[2].legend(fontsize=8, ncol=len(prefixes))
    axes[2].set_xlabel("t [s]")
    for ax in axes:
        ax.grid(True, alpha=0.3)
    axes[0].set_title(title)
    fig.tight_layout()
    save_figure(fig, path, dpi=120)


def rims(cols, discs, k, n=48):
    """World points of each disc's rim, its axle stub and one spoke at sample k: discs are (centre, axis,
    radius) in the body frame. Returns a list of (rim (n+1, 3), spoke (2, 3)) and the axle polyline."""
    from mechsym.core.quaternion import rotation_matrix

    rot = rotation_matrix([cols[c][k] for c in ("qx", "qy", "qz", "qw")])
    origin = np.array([cols[c][k] for c in ("x", "y", "z")])
    out, axle = [], []
    for centre, axis, radius in discs:
        a = np.asarray(axis, float) / np.linalg.norm(axis)
        u = np.cross(a, [0.0, 0.0, 1.0] if abs(a[2]) < 0.9 else [1.0, 0.0, 0.0])
        u /= np.linalg.norm(u)
        v = np.cross(a, u)
        s = np.linspace(0.0, 2 * np.pi, n + 1)
        rim = np.asarray(centre) + radius * (np.cos(s)[:, None] * u + np.sin(s)[:, None] * v)
        spoke = np.array([centre, np.asarray(centre) + radius * u])
        out.append((origin + rim @ rot.T, origin + spoke @ rot.T))
        axle.append(origin + rot @ np.asarray(centre, float))
    if len(axle) == 1:                                    # a lone disc: a short axle stub through it
        a = rot @ (np.asarray(discs[0][1], float) / np.linalg.norm(discs[0][1]))
        axle = [axle[0] - 0.3 * discs[0][2] * a, axle[0] + 0.3 * discs[0][2] * a]
    return out, np.array(axle)


def animate(cols, discs, path, frames=120, fps=25, title="disc"):
    """A 3-D animation of the discs (rim, spoke, axle) and the path of the body's centre (sub-sampled to
    `frames`); discs: (centre, axis, radius) in the body frame."""
    from matplotlib import animation

    from mechsym.core.plotting import _pyplot, frame_rows

    plt = _pyplot()
    t = cols["t"]
    k = frame_rows(len(t), frames)
    reach = max(r + np.linalg.norm(c) for c, _, r in discs)
    lo = np.array([cols[c].min() for c in "xyz"]) - reach
    hi = np.array([cols[c].max() for c in "xyz"]) + reach
    mid, half = (lo + hi) / 2, max((hi[:2] - lo[:2]).max() / 2, 1e-3)
    top = max(hi[2], 1e-3)
    fig = plt.figure(figsize=(6, 4.5))
    ax = fig.add_subplot(projection="3d")
    ax.set_xlim(mid[0] - half, mid[0] + half)
    ax.set_ylim(mid[1] - half, mid[1] + half)
    ax.set_zlim(0.0, top)
    ax.set_box_aspect((2 * half, 2 * half, top))                 # true proportions
    ax.set_zticks([0.0, round(top, 2)])
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.set_zlabel("z [m]")
    ax.plot(cols["x"], cols["y"], np.zeros_like(t), color="0.6", lw=0.8)       # path of the centre, on the ground
    lines = [(ax.plot([], [], [], color="k", lw=1.2, label=f"rim {i}")[0],
              ax.plot([], [], [], color="tab:red", lw=1.0, label=f"spoke {i}")[0]) for i in range(len(discs))]
    axle = ax.plot([], [], [], color="tab:blue", lw=2.0, label="axle")[0]
    label = ax.set_title("")

    def frame(j):
        shapes, ax_line = rims(cols, discs, k[j])
        for (rim_line, spoke_line), (rim, spoke) in zip(lines, shapes):
            rim_line.set_data_3d(rim[:, 0], rim[:, 1], rim[:, 2])
            spoke_line.set_data_3d(spoke[:, 0], spoke[:, 1], spoke[:, 2])
        axle.set_data_3d(ax_line[:, 0], ax_line[:, 1], ax_line[:, 2])
        label.set_text(f"{title}   t = {t[k[j]]:.3f} s")
        return [*(line for pair in lines for line in pair), axle, label]

    anim = animation.FuncAnimation(fig, frame, frames=len(k), blit=False)
    try:
        save_animation(anim, path, fps)
    finally:
        plt.close(fig)
