"""`mechsym cart`: a two-wheeled cart (a wheelset) rolling dynamically over the flat track z = 0.

One floating rigid body (mechsym.spatial.floating): an axle along the body x axis with two wheels of radius r at
x = -b ('left') and x = +b ('right'), its centre of mass midway; each wheel touches the ground through its
own rolling-disc contact (mechsym.contact.rolling_disc.RollingDisc, Exudyn's penalty connector, here with
rolling friction). A body-fixed torque -T about the axle drives it towards +y (as `mechsym disc`).

It starts upright with the axle along x, both wheels at the static penetration m g / (2 k), moving along
+y at v0 with the matching spin and turning at `yaw_rate` about the vertical.

Closed forms (tests/contact/test_disc_vs_exudyn.py): driven straight, rolling friction c_r |f_n| v on each
wheel balances the drive at the terminal speed v_inf = T / (r c_r m g), reached as
v(t) = v_inf + (v0 - v_inf) exp(-t / tau), tau = (m + I_axle / r^2) / (c_r m g), up to the creep slip of
the friction zone; energy: the kinetic and potential energy change by the work of the drive and of the
contact forces (friction, damping, the contact springs), to the integration accuracy.

Columns: t, x, y, z, vx, vy, vz, wx, wy, wz (world frame), heading (the axle's angle about +z from +x,
unwrapped), and per wheel left.f_lat, left.f_long, left.f_n, left.slip_lat, left.slip_long, right.* (the
contact force on the wheel and its slip, docs/rolling-disc.md).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from mechsym.contact.rolling_disc import RollingDisc
from mechsym.core.errors import InputError

G = 9.81
WHEELS = ("left", "right")
WHEEL_COLUMNS = ("f_lat", "f_long", "f_n", "slip_lat", "slip_long")
COLUMNS = ("t", "x", "y", "z", "vx", "vy", "vz", "wx", "wy", "wz", "heading",
           *(f"{w}.{c}" for w in WHEELS for c in WHEEL_COLUMNS))


@dataclass(frozen=True)
class Cart:
    """The wheelset (SI units): wheels of `radius` at +-`half_track` along the axle; mass and principal
    inertia (about the axle, then two transverse axes) of the whole; per-wheel contact parameters."""

    radius: float = 0.15
    half_track: float = 0.25
    mass: float = 4.0
    inertia: tuple = (0.06, 0.2, 0.2)
    stiffness: float = 4e4
    damping: float = 400.0
    mu: float = 0.5
    zone: float = 1e-3
    linear_zone: bool = False
    rolling_friction: float = 0.1
    torque: float = 1.0
    v0: float = 0.0
    yaw_rate: float = 0.0

    def check(self):
        for name in ("radius", "half_track", "mass", "stiffness", "zone"):
            v = getattr(self, name)
            if not (math.isfinite(v) and v > 0):
                raise InputError(f"{name} must be positive and finite, got {v!r}")
        for name in ("damping", "mu", "rolling_friction"):
            v = getattr(self, name)
            if not (math.isfinite(v) and v >= 0):
                raise InputError(f"{name} must be non-negative and finite, got {v!r}")
        for name in ("torque", "v0", "yaw_rate"):
            if not math.isfinite(getattr(self, name)):
                raise InputError(f"{name} must be finite, got {getattr(self, name)!r}")
        if len(self.inertia) != 3 or not all(math.isfinite(i) and i > 0 for i in self.inertia):
            raise InputError(f"inertia must be three positive numbers, got {tuple(self.inertia)!r}")

    def wheels(self) -> dict:
        """The two rolling-disc contacts, by name."""
        return {name: RollingDisc(name, radius=self.radius, stiffness=self.stiffness, zone=self.zone,
                                  damping=self.damping, mu=self.mu, linear_zone=self.linear_zone,
                                  rolling_friction=self.rolling_friction, centre=(side * self.half_track, 0.0, 0.0))
                for name, side in zip(WHEELS, (-1.0, 1.0))}

    def body_values(self) -> dict:
        return {"mass": self.mass, "Ixx": self.inertia[0], "Iyy": self.inertia[1], "Izz": self.inertia[2]}

    @property
    def penetration(self):
        """Static penetration of each wheel, m g / (2 k)."""
        return self.mass * G / (2 * self.stiffness)

    def terminal_speed(self):
        """T / (r c_r m g): the drive balanced by the rolling friction of both wheels."""
        return self.torque / (self.radius * self.rolling_friction * self.mass * G)

    def time_constant(self):
        """(m + I_axle / r^2) / (c_r m g): how fast the speed approaches the terminal speed."""
        return (self.mass + self.inertia[0] / self.radius**2) / (self.rolling_friction * self.mass * G)


def system():
    """The wheelset as a floating body; mass and principal inertias are parameters."""
    from mechanisms import disc

    return disc.system("cart", __doc__, 4.0, (0.06, 0.2, 0.2))


def simulate(cart: Cart, t_end=6.0, dt=None, rtol=1e-9, atol=None, method="BDF", backend=None):
    """Simulate; a RunResult with COLUMNS, the quaternion qw..qz and the heading, and the integrator's stats."""
    from mechanisms.disc import columns
    from mechsym.spatial.floating_loads import BodyTorque

    cart.check()
    sys3 = system()
    wheels = cart.wheels()
    ode = sys3.loaded([*wheels.values(), BodyTorque("drive", (-cart.torque, 0.0, 0.0))], backend)
    y0 = sys3.initial_state((0.0, 0.0, cart.radius - cart.penetration), velocity=(0.0, cart.v0, 0.0),
                            omega=(-cart.v0 / cart.radius, 0.0, cart.yaw_rate), omega_frame="world")
    run = ode.simulate(y0, t_end, dt, rtol, atol, method, params=ode.params(cart.body_values()),
                       columns=lambda grid, y: columns(sys3, grid, y, {f"{name}.": w for name, w in wheels.items()}))
    cols = run.columns
    axle = np.stack([cols["qw"]**2 + cols["qx"]**2 - cols["qy"]**2 - cols["qz"]**2,
                     2 * (cols["qx"] * cols["qy"] + cols["qw"] * cols["qz"])])
    cols["heading"] = np.unwrap(np.arctan2(axle[1], axle[0]))
    return run


def energy_balance(cart: Cart, cols):
    """(mechanical energy minus its initial value, work done on the body since t = 0) on the samples:
    kinetic + potential energy against the integral (Simpson) of the drive's power and the power of both
    contacts (force on the wheel times the velocity of its material contact point, rolling friction
    times the wheel centre's velocity). They agree to the integration and quadrature accuracy."""
    from scipy.integrate import cumulative_simpson

    sys3 = system()
    y = sys3.state_from_columns(cols)
    values = cart.body_values()
    kinetic, potential = sys3.energy(y, sys3.params(values))
    power = -cart.torque * y[10]                                     # the drive -T about body x
    for wheel in cart.wheels().values():
        c = wheel.contact(sys3, y)
        centre_velocity = wheel.disc_states(y)[1]
        power = power + np.einsum("ni,ni->n", c.contact_force, c.contact_velocity) + \
            np.einsum("ni,ni->n", c.rolling_force, centre_velocity)
    energy = kinetic + potential
    return energy - energy[0], cumulative_simpson(power, x=cols["t"], initial=0.0)


# ---------------------------------------------------------------- command line

HELP = "a two-wheeled cart (wheelset) driven over flat ground with rolling-disc contacts (CSV of its motion)"


def configure(p):
    from mechanisms.disc import vector
    from mechsym.app.options import number
    from mechsym.app.options import animation_group, output_group, plot_group, time_group, tolerance_group

    d = Cart()
    p.add_argument("--radius", type=number, default=d.radius, help=f"wheel radius [m] ({d.radius})")
    p.add_argument("--half-track", type=number, default=d.half_track,
                   help=f"distance of each wheel from the centre along the axle [m] ({d.half_track})")
    p.add_argument("--mass", type=number, default=d.mass, help=f"mass of axle and wheels [kg] ({d.mass})")
    p.add_argument("--inertia", type=vector(3), default=d.inertia,
                   help="principal inertias IXX,IYY,IZZ about the axle (body x), y, z [kg m^2] (0.06,0.2,0.2)")
    p.add_argument("--stiffness", type=number, default=d.stiffness,
                   help=f"contact stiffness per wheel [N/m] ({d.stiffness:g})")
    p.add_argument("--damping", type=number, default=d.damping,
                   help=f"contact damping per wheel [N s/m] ({d.damping:g})")
    p.add_argument("--mu", type=number, default=d.mu, help=f"dry friction coefficient ({d.mu})")
    p.add_argument("--mu-zone", type=number, default=d.zone, help=f"regularisation zone v_mu [m/s] ({d.zone:g})")
    p.add_argument("--linear-zone", action="store_true", help="linear instead of quadratic regularisation")
    p.add_argument("--rolling-friction", type=number, default=d.rolling_friction,
                   help=f"rolling friction c_r per wheel [s/m] ({d.rolling_friction})")
    p.add_argument("--torque", type=number, default=d.torque,
                   help=f"drive: body-fixed torque -T about the axle [N m] ({d.torque})")
    p.add_argument("--v0", type=number, default=0.0, help="initial speed along +y, rolling [m/s] (0)")
    p.add_argument("--yaw-rate", type=number, default=0.0, help="initial turning rate about +z [rad/s] (0)")
    time_group(p, required=True)
    tolerance_group(p)
    output_group(p, required=True)
    plot_group(p, help="PNG/SVG of the motion and the wheel forces")
    animation_group(p, help="GIF/MP4 of the cart")
    return p


def run(args) -> int:
    from mechanisms import disc
    from mechsym.app.options import check_command_outputs, run_options, write_outputs
    from mechsym.core.results import Table

    check_command_outputs(args)
    run_options(args)
    cart = Cart(radius=args.radius, half_track=args.half_track, mass=args.mass, inertia=tuple(args.inertia),
                stiffness=args.stiffness, damping=args.damping, mu=args.mu, zone=args.mu_zone,
                linear_zone=args.linear_zone, rolling_friction=args.rolling_friction, torque=args.torque,
                v0=args.v0, yaw_rate=args.yaw_rate)
    cart.check()
    result = simulate(cart, args.t_end, args.dt, rtol=args.rtol, atol=args.atol)
    cols, st = result.columns, result.stats
    units = dict(disc.UNITS, heading="rad")
    units.update({f"{w}.{c}": disc.UNITS[c] for w in WHEELS for c in WHEEL_COLUMNS})
    table = Table({c: cols[c] for c in COLUMNS}, units, "cart: wheelset on rolling-disc contacts")
    shape = [(np.array([side * cart.half_track, 0.0, 0.0]), np.array([1.0, 0.0, 0.0]), cart.radius)
             for side in (-1.0, 1.0)]
    prefixes = tuple(f"{w}." for w in WHEELS)
    write_outputs(table, args.out, f"; {st['steps']} steps, {st['jacobians']} Jacobians, {st['wall']:.3f} s "
                  f"({st['method']}, {st['backend']})",
                  [(args.plot, lambda p: disc.plot(cols, p, prefixes=prefixes, title="cart (two rolling discs)")),
                   (args.animate, lambda p: disc.animate(cols, shape, p, title="cart"))])
    return 0
