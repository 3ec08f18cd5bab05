"""`mechsym disc`: a thin disc on the ground plane z = 0 with Exudyn's penalty rolling-disc contact.

The disc is a floating rigid body (mechsym.rigid3d) with its axle along the body x axis, gravity 9.81 m/s^2
along -z, the contact law of mechsym.contact.rolling_disc (Exudyn's ObjectConnectorRollingDiscPenalty)
applied at its centre (force, world frame) and as a moment (torque about the centre, in the body frame).
It starts with its centre above the origin at the static penetration m g / k, tilted about the world y
axis by `tilt` (a positive tilt lowers the axle's +x end), with the given velocity and angular velocity
(world frame). `torque` T is the body-fixed torque -T about the axle (positive T drives towards +y).

Integration: scipy's solve_ivp with LSODA (it switches to BDF once the friction regularisation makes the
problem stiff; its Jacobian is by finite differences), rtol = atol = 1e-10 by default, max_step 1 ms.

Columns: t, x, y, z, vx, vy, vz, wx, wy, wz (world frame), f_lat, f_long, f_n (contact force on the disc
along the axle's horizontal projection, the direction of rolling, +z), slip_lat, slip_long
(docs/rolling-disc.md).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from mechsym.contact.rolling_disc import PARALLEL_TOLERANCE, rolling_disc_contact
from mechsym.errors import InputError

G = 9.81
COLUMNS = ("t", "x", "y", "z", "vx", "vy", "vz", "wx", "wy", "wz",
           "f_lat", "f_long", "f_n", "slip_lat", "slip_long")


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
        for name in ("damping",):
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


def build(disc: Disc):
    """The disc as a mechsym floating body (mass, principal inertia about body x (axle), y, z)."""
    from mechsym.rigid3d import FloatingBody

    b = FloatingBody("disc", doc=__doc__)
    b.body(disc.mass, tuple(float(i) for i in disc.inertia))
    return b


def contact(disc: Disc, position, velocity, axis, omega):
    """The rolling-disc law for the disc's states (world frame arrays (..., 3))."""
    return rolling_disc_contact(position, velocity, axis, omega, disc.radius, stiffness=disc.stiffness,
                                zone=disc.zone, damping=disc.damping, mu=disc.mu,
                                linear_zone=disc.linear_zone, viscous=disc.viscous,
                                friction_angle=disc.friction_angle)


def simulate(disc: Disc, t_end=1.0, dt=None, rtol=1e-10, atol=1e-10, method="LSODA", max_step=1e-3):
    """Simulate; returns (columns dict, stats dict)."""
    from scipy.integrate import solve_ivp

    from mechsym.rigid3d import check_run, derive_floating, quat_about, rotation_matrix, uniform_grid

    disc.check()
    dt = check_run(t_end, dt, {})
    system = derive_floating(build(disc))
    y0 = system.initial_state(disc.start_position(), quat_about((0.0, 1.0, 0.0), disc.tilt), disc.v0,
                              disc.omega0, omega_frame="world")
    axle = np.array([1.0, 0.0, 0.0])
    drive = np.array([-disc.torque, 0.0, 0.0])

    def load(t, q, qd, s):
        rot = rotation_matrix(q[3:7])
        c = contact(disc, q[:3], qd[:3], rot @ axle, rot @ qd[3:6])
        return np.concatenate([c.force, rot.T @ c.torque + drive]), ()

    ode = system.ode(load=load)
    t0 = time.perf_counter()
    sol = solve_ivp(ode.rhs, (0.0, float(t_end)), system.normalise(y0), method=method, rtol=rtol, atol=atol,
                    dense_output=True, max_step=max_step)
    wall = time.perf_counter() - t0
    if sol.status < 0:
        raise InputError(f"disc: integration failed at t = {sol.t[-1]:.6g}: {sol.message}")
    grid = uniform_grid(sol.t[-1], dt)
    y = system.normalise(sol.sol(grid))
    world = system.world_columns(y)
    cols = {"t": grid}
    cols.update({k: world[k] for k in COLUMNS[1:10]})
    rot = rotation_matrix(y[3:7])                       # 3 x 3 x N
    axis = np.einsum("ijn,j->ni", rot, axle)
    c = contact(disc, y[:3].T, y[7:10].T, axis, np.stack([world["wx"], world["wy"], world["wz"]], axis=1))
    cols.update(f_lat=c.f_lat, f_long=c.f_long, f_n=c.f_n, slip_lat=c.slip_lat, slip_long=c.slip_long)
    stats = dict(wall=wall, rhs_evaluations=int(sol.nfev), jacobians=int(sol.njev), steps=len(sol.t) - 1,
                 method=method)
    return cols, stats


# ---------------------------------------------------------------- command line

HELP = "a disc rolling on the ground with Exudyn's penalty rolling-disc contact (CSV of its motion)"


def _vector(n, *, kind="number"):
    import argparse

    from mechsym.cli import angle, number

    conv = angle if kind == "angle" else number

    def parse(text):
        parts = [p for p in str(text).split(",")]
        if len(parts) != n or any(not p.strip() for p in parts):
            raise argparse.ArgumentTypeError(f"expected {n} comma-separated values, got '{text}'")
        return tuple(conv(p.strip()) for p in parts)

    parse.__name__ = f"{n}-vector"
    return parse


def configure(p):
    """Options of `mechsym disc` (registered in mechanisms.COMMANDS)."""
    from mechsym.cli import angle, number

    p.add_argument("--radius", type=number, required=True, help="disc radius [m]")
    p.add_argument("--mass", type=number, required=True, help="disc mass [kg]")
    p.add_argument("--inertia", type=_vector(3), help="principal inertias IXX,IYY,IZZ about the axle (body x), "
                   "y, z [kg m^2] (default: the thin disc, m r^2/2, m r^2/4, m r^2/4)")
    p.add_argument("--stiffness", type=number, required=True, help="contact stiffness k [N/m]")
    p.add_argument("--damping", type=number, required=True, help="contact damping d [N s/m]")
    p.add_argument("--mu", type=number, required=True, help="dry friction coefficient")
    p.add_argument("--mu-zone", type=number, default=1e-3, help="regularisation zone v_mu [m/s] (1e-3)")
    p.add_argument("--linear-zone", action="store_true", help="linear instead of quadratic regularisation")
    p.add_argument("--viscous", type=_vector(2), default=(0.0, 0.0), help="viscous friction DX,DY [s/m]")
    p.add_argument("--friction-angle", type=angle, default=0.0, help="friction angle (rad, or deg with 'deg')")
    p.add_argument("--tilt", type=angle, default=0.0,
                   help="rotation about world y (rad or deg); positive lowers the axle's +x end")
    p.add_argument("--v0", type=_vector(3), required=True, help="initial velocity VX,VY,VZ (world) [m/s]")
    p.add_argument("--omega0", type=_vector(3), required=True,
                   help="initial angular velocity WX,WY,WZ (world) [rad/s]")
    p.add_argument("--torque", type=number, default=0.0, help="body-fixed torque -T about the axle [N m]")
    p.add_argument("--t-end", type=number, required=True, help="end time [s]")
    p.add_argument("--dt", type=number, help="output step (default t_end/1000)")
    p.add_argument("--out", required=True, help="CSV file")
    p.add_argument("--plot", help="PNG/SVG of the motion and contact forces")
    return p


def disc_from_args(args) -> Disc:
    r, m = args.radius, args.mass
    if not r > 0:
        raise InputError(f"--radius must be positive, got {r}")
    if not m > 0:
        raise InputError(f"--mass must be positive, got {m}")
    inertia = args.inertia if args.inertia is not None else (m * r * r / 2, m * r * r / 4, m * r * r / 4)
    for opt, v in (("--stiffness", args.stiffness), ("--mu-zone", args.mu_zone)):
        if not v > 0:
            raise InputError(f"{opt} must be positive, got {v}")
    for opt, v in (("--damping", args.damping), ("--mu", args.mu)):
        if v < 0:
            raise InputError(f"{opt} must be non-negative, got {v}")
    if min(args.viscous) < 0:
        raise InputError(f"--viscous must be non-negative, got {','.join(map(str, args.viscous))}")
    if min(inertia) <= 0:
        raise InputError(f"--inertia must be positive, got {','.join(map(str, inertia))}")
    if args.t_end <= 0:
        raise InputError(f"--t-end must be positive, got {args.t_end}")
    disc = Disc(radius=r, mass=m, inertia=tuple(inertia), stiffness=args.stiffness, damping=args.damping,
                mu=(args.mu, args.mu), zone=args.mu_zone, linear_zone=args.linear_zone,
                viscous=tuple(args.viscous), friction_angle=args.friction_angle, tilt=args.tilt,
                v0=tuple(args.v0), omega0=tuple(args.omega0), torque=args.torque)
    disc.check()
    return disc


def run(args) -> int:
    """`mechsym disc`: simulate and write the CSV (and the optional plot)."""
    from mechsym.results import Table

    disc = disc_from_args(args)
    cols, st = simulate(disc, args.t_end, args.dt)
    units = {"t": "s", "x": "m", "y": "m", "z": "m", "vx": "m/s", "vy": "m/s", "vz": "m/s",
             "wx": "rad/s", "wy": "rad/s", "wz": "rad/s", "f_lat": "N", "f_long": "N", "f_n": "N",
             "slip_lat": "m/s", "slip_long": "m/s"}
    table = Table({c: cols[c] for c in COLUMNS}, units, "disc: rolling-disc penalty contact")
    table.to_csv(args.out)
    print(f"wrote {args.out} ({len(table)} rows, {len(COLUMNS)} columns); {st['steps']} steps, "
          f"{st['rhs_evaluations']} right-hand sides, {st['wall']:.2f} s ({st['method']})")
    if args.plot:
        plot(cols, args.plot)
        print(f"wrote {args.plot}")
    return 0


def plot(cols, path):
    from mechsym.plotting import _pyplot
    from mechsym.results import _makedirs

    plt = _pyplot()
    _makedirs(path)
    t = cols["t"]
    fig, axes = plt.subplots(3, 1, figsize=(7, 7.5), sharex=True)
    for c in ("vx", "vy", "vz", "wx", "wy", "wz"):
        axes[0].plot(t, cols[c], label=c, lw=0.9)
    axes[0].set_ylabel("v [m/s], w [rad/s]")
    axes[0].legend(fontsize=7, ncol=6)
    for c in ("f_lat", "f_long", "f_n"):
        axes[1].plot(t, cols[c], label=c, lw=0.9)
    axes[1].set_ylabel("force on the disc [N]")
    axes[1].legend(fontsize=8)
    for c in ("slip_lat", "slip_long"):
        axes[2].plot(t, cols[c], label=c, lw=0.9)
    axes[2].set_ylabel("slip [m/s]")
    axes[2].legend(fontsize=8)
    axes[2].set_xlabel("t [s]")
    for ax in axes:
        ax.grid(True, alpha=0.3)
    axes[0].set_title("disc on the ground (penalty rolling-disc contact)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
