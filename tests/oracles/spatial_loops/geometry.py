"""The problems, as numbers: bodies, tree joints, closing joints and gravity of Bricard's mechanism, the flyball
governor (rigid couplers, and the benchmark's spring-damper couplers), a spatial RSSR crank-rocker and a delta robot.

One convention for every model (README.md): the declared configuration is the reference configuration; every body
frame is aligned with the world axes there, its origin at the point of the joint that attaches it to its parent;
every joint coordinate is zero there. A revolute angle is the child's rotation relative to its parent about the
joint's axis (right-handed; the axis is fixed in the parent and given in world axes at the reference); a prismatic
coordinate is the child's displacement along its axis; a spherical joint is a unit quaternion (identity at the
reference, Pinocchio's order x, y, z, w), its speed the child's angular velocity relative to the parent in the
child's axes. SI units: m, kg, s, rad.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

G = 9.81


@dataclass(frozen=True)
class Body:
    name: str
    mass: float
    com: np.ndarray            # centre of mass in the body frame (m)
    inertia: np.ndarray        # 3x3 inertia about the centre of mass, body axes (kg m^2)


@dataclass(frozen=True)
class Joint:
    name: str
    kind: str                  # revolute | prismatic | spherical | translation | universal
    parent: str
    child: str
    point: np.ndarray          # world position at the reference configuration
    axis: np.ndarray = None    # unit axis, world axes at the reference (universal: the first axis)
    axis2: np.ndarray = None   # universal only: the second axis (fixed in the child)


@dataclass(frozen=True)
class Closure:
    """A loop-closing joint between body_a and body_b at `point` (world, reference configuration)."""
    name: str
    kind: str                  # revolute | spherical | weld
    body_a: str
    body_b: str
    point: np.ndarray
    axis: np.ndarray = None


@dataclass(frozen=True)
class Problem:
    name: str
    bodies: dict
    joints: list
    closures: list
    gravity: np.ndarray
    points: dict = field(default_factory=dict)     # reported point -> (body, position in the body frame)
    driven: tuple = ()                             # the coordinates an assembly is given (README.md)
    springs: list = field(default_factory=list)    # (point a, point b, stiffness, damping, rest length)


def _v(*x):
    return np.array(x, dtype=float)


def cuboid(mass, sides, rotation=np.eye(3)):
    """Inertia about the centre of a uniform box with the given side lengths along the columns of `rotation`."""
    a, b, c = sides
    local = mass / 12.0 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])
    return rotation @ local @ rotation.T


def slender_rod(mass, length, direction):
    """Inertia about the centre of a thin rod (no inertia about its own axis)."""
    u = np.asarray(direction, float) / np.linalg.norm(direction)
    return mass * length ** 2 / 12.0 * (np.eye(3) - np.outer(u, u))


def combine(parts):
    """(mass, com, inertia about com) of rigidly joined parts, each (mass, com, inertia about its com)."""
    m = sum(p[0] for p in parts)
    c = sum(p[0] * np.asarray(p[1]) for p in parts) / m
    inertia = np.zeros((3, 3))
    for mi, ci, ii in parts:
        d = np.asarray(ci) - c
        inertia += ii + mi * (d @ d * np.eye(3) - np.outer(d, d))
    return m, c, inertia


# --------------------------------------------------------------------------------------------------------------
# Bricard's mechanism (IFToMM benchmark A04; README.md gives the sources)
BRICARD = dict(length=1.0, mass=1.0, side=0.1, g=G, t_end=10.0)


def bricard(length=1.0, mass=1.0, side=0.1, g=G, split=False, **_):
    """split=True: the loop cut in the middle of link5 instead of at j6: link5 in two halves (link5, from j5,
    and link6, from the ground through j6), welded at link5's midpoint; coordinates j1..j6."""
    L = length
    pts = [_v(0, 0, 0), _v(L, 0, 0), _v(L, -L, 0), _v(L, -L, L), _v(0, -L, L), _v(0, 0, L)]
    axes = [_v(0, 1, 0), _v(0, 0, 1), _v(1, 0, 0), _v(0, 1, 0), _v(0, 0, 1), _v(1, 0, 0)]
    bodies, joints = {}, []
    parent = "ground"
    for i in range(5):
        name = f"link{i + 1}"
        d = pts[i + 1] - pts[i]
        sides = [side, side, side]
        sides[int(np.argmax(np.abs(d)))] = L
        bodies[name] = Body(name, mass, d / 2, cuboid(mass, sides))
        joints.append(Joint(f"j{i + 1}", "revolute", parent, name, pts[i], axes[i]))
        parent = name
    closures = [Closure("j6", "revolute", "link5", "ground", pts[5], axes[5])]
    points = {f"j{i + 1}": (f"link{i}", pts[i] - pts[i - 1]) for i in range(1, 6)}   # joint points, link ends
    if split:
        half = (pts[5] - pts[4]) / 2
        sides = [side, side, side]
        sides[int(np.argmax(np.abs(half)))] = L / 2
        bodies["link5"] = Body("link5", mass / 2, half / 2, cuboid(mass / 2, sides))
        bodies["link6"] = Body("link6", mass / 2, -half / 2, cuboid(mass / 2, sides))
        joints.append(Joint("j6", "revolute", "ground", "link6", pts[5], axes[5]))
        closures = [Closure("link5_link6", "weld", "link5", "link6", pts[4] + half)]
        points["j6"] = ("link6", np.zeros(3))
    return Problem("bricard", bodies, joints, closures, _v(0, -g, 0), points, driven=("j1",))


# --------------------------------------------------------------------------------------------------------------
# Flyball governor (IFToMM benchmark A05; README.md gives the sources)
GOVERNOR = dict(density=3000.0, shaft=1.0, width=0.01, rod=1.0, slider=0.1, ball=5.0, xab=0.1, s0=0.5,
                alpha=np.deg2rad(30.0), omega0=2 * np.pi, coupler=0.5, g=G, t_end=10.0,
                stiffness=8e5, damping=4e4, rest=0.5)


def governor(couplers="rigid", density=3000.0, shaft=1.0, width=0.01, rod=1.0, slider=0.1, ball=5.0, xab=0.1,
             s0=0.5, alpha=np.deg2rad(30.0), coupler=0.5, g=G, stiffness=8e5, damping=4e4, rest=0.5, **_):
    """couplers='rigid': coupler rods (same section and density as the rods) hinged to the rods' midpoints and to
    the slider, closing two loops; couplers='springs': the benchmark's spring-dampers instead (an open tree)."""
    m_shaft = density * shaft * width * width
    m_rod = density * rod * width * width
    m_slider = density * slider ** 3
    bodies = {
        "shaft": Body("shaft", m_shaft, _v(0, 0, shaft / 2), cuboid(m_shaft, [width, width, shaft])),
        "slider": Body("slider", m_slider, _v(0, 0, 0), cuboid(m_slider, [slider] * 3)),
    }
    joints = [Joint("shaft", "revolute", "ground", "shaft", _v(0, 0, 0), _v(0, 0, 1)),
              Joint("slider", "prismatic", "shaft", "slider", _v(0, 0, s0), _v(0, 0, 1))]
    closures, points, springs = [], {"S": ("slider", _v(0, 0, 0))}, []
    for side, sign in (("1", 1.0), ("2", -1.0)):
        top = _v(sign * xab / 2, 0, shaft)
        u = _v(sign * np.cos(alpha), 0, -np.sin(alpha))                   # along the rod, outward and down
        rot = np.column_stack([u, _v(0, 1, 0), np.cross(u, _v(0, 1, 0))])
        m, c, inertia = combine([(m_rod, rod / 2 * u, cuboid(m_rod, [rod, width, width], rot)),
                                 (ball, rod * u, np.zeros((3, 3)))])
        rod_name = f"rod{side}"
        bodies[rod_name] = Body(rod_name, m, c, inertia)
        joints.append(Joint(rod_name, "revolute", "shaft", rod_name, top, _v(0, -sign, 0)))
        mid = top + rod / 2 * u                                            # C: the rod's midpoint
        on_slider = _v(sign * slider / 2, 0, s0)                           # E: the slider's side
        points[f"C{side}"] = (rod_name, mid - top)
        points[f"ball{side}"] = (rod_name, rod * u)
        points[f"E{side}"] = ("slider", on_slider - _v(0, 0, s0))
        if couplers == "rigid":
            d = on_slider - mid
            length = np.linalg.norm(d)
            w = d / length
            m_c = density * length * width * width
            rot_c = np.column_stack([w, _v(0, 1, 0), np.cross(w, _v(0, 1, 0))])
            name = f"coupler{side}"
            bodies[name] = Body(name, m_c, d / 2, cuboid(m_c, [length, width, width], rot_c))
            joints.append(Joint(name, "revolute", rod_name, name, mid, _v(0, -sign, 0)))
            closures.append(Closure(f"{name}_slider", "revolute", name, "slider", on_slider, _v(0, -sign, 0)))
        else:
            springs.append((f"E{side}", f"C{side}", stiffness, damping, rest))
    driven = ("shaft", "slider")
    return Problem(f"governor-{couplers}", bodies, joints, closures, _v(0, 0, -g), points, driven, springs)


# --------------------------------------------------------------------------------------------------------------
# RSSR crank-rocker (dimensions of our own, README.md)
RSSR = dict(crank=0.04, rocker=0.08, pivot=(-0.05, 0.05, 0.05), coupler_mass=0.3, crank_mass=0.2, rocker_mass=0.25,
            coupler_radius=0.005, g=G)


def rssr(crank=0.04, rocker=0.08, pivot=(-0.05, 0.05, 0.05), coupler_mass=0.3, crank_mass=0.2, rocker_mass=0.25,
         coupler_radius=0.005, g=G, **_):
    """Crank about +z through the origin (A = (crank, 0, 0) at the reference), rocker about +y through `pivot`,
    its tip B at pivot + rocker*(0, 0, -1) at the reference; coupler A-B with a spherical joint at each end
    (the one at B closes the loop). The coupler's length is |AB| at the reference."""
    O = _v(0, 0, 0)
    A = _v(crank, 0, 0)
    Q = _v(*pivot)
    B = Q + _v(0, 0, -rocker)
    d = B - A
    bodies = {
        "crank": Body("crank", crank_mass, A / 2, slender_rod(crank_mass, crank, A)),
        "coupler": Body("coupler", coupler_mass, d / 2,
                        slender_rod(coupler_mass, np.linalg.norm(d), d)
                        + coupler_mass * coupler_radius ** 2 / 2 * np.outer(d, d) / (d @ d)),
        "rocker": Body("rocker", rocker_mass, (B - Q) / 2,
                       slender_rod(rocker_mass, rocker, B - Q)),
    }
    joints = [Joint("crank", "revolute", "ground", "crank", O, _v(0, 0, 1)),
              Joint("coupler", "spherical", "crank", "coupler", A),
              Joint("rocker", "revolute", "ground", "rocker", Q, _v(0, 1, 0))]
    closures = [Closure("coupler_rocker", "spherical", "coupler", "rocker", B)]
    points = {"A": ("crank", A - O), "B": ("rocker", B - Q)}
    return Problem("rssr", bodies, joints, closures, _v(0, 0, -g), points, driven=("crank",))


# --------------------------------------------------------------------------------------------------------------
# Delta robot (three legs; our own dimensions, README.md)
DELTA = dict(base=0.20, platform=0.05, arm=0.20, forearm=0.45, arm_mass=0.20, forearm_mass=0.10,
             platform_mass=0.50, g=G)
CIRCLE = dict(radius=0.05, height=-0.33, period=1.0)      # the platform's path: z = height, centre on the z axis


def delta_leg_frames(i):
    """(radial unit vector, motor axis) of leg i (at 0, 120, 240 degrees about z)."""
    phi = 2 * np.pi * i / 3
    r = _v(np.cos(phi), np.sin(phi), 0)
    return r, _v(-np.sin(phi), np.cos(phi), 0)


def delta(base=0.20, platform=0.05, arm=0.20, forearm=0.45, arm_mass=0.20, forearm_mass=0.10, platform_mass=0.50,
          g=G, **_):
    """Motors on the base circle, axes tangent (a positive angle lowers the arm); the arms horizontal and
    radial at the reference; forearms as thin rods hinged at the elbow by a universal joint (first axis the
    motor's, second perpendicular to it and to the forearm), closed on the platform by spherical joints; the
    platform translates (its parallelograms keep its orientation), its joint a 3-D translation."""
    P = _v(0, 0, delta_reference_height(base, platform, arm, forearm))
    bodies = {"platform": Body("platform", platform_mass, _v(0, 0, 0), 1e-3 * np.eye(3))}
    joints = [Joint("platform", "translation", "ground", "platform", P)]
    closures = []
    points = {"platform": ("platform", _v(0, 0, 0))}
    for i in range(3):
        r, t = delta_leg_frames(i)
        motor = base * r
        elbow = (base + arm) * r
        wrist = P + platform * r
        f = wrist - elbow
        n = np.cross(t, f) / np.linalg.norm(np.cross(t, f))
        bodies[f"arm{i}"] = Body(f"arm{i}", arm_mass, arm / 2 * r, slender_rod(arm_mass, arm, r))
        bodies[f"forearm{i}"] = Body(f"forearm{i}", forearm_mass, f / 2, slender_rod(forearm_mass, forearm, f))
        joints.append(Joint(f"motor{i}", "revolute", "ground", f"arm{i}", motor, t))
        joints.append(Joint(f"elbow{i}", "universal", f"arm{i}", f"forearm{i}", elbow, t, n))
        closures.append(Closure(f"wrist{i}", "spherical", f"forearm{i}", "platform", wrist))
        points[f"elbow{i}"] = (f"arm{i}", elbow - motor)
        points[f"wrist{i}"] = (f"forearm{i}", f)
    return Problem("delta", bodies, joints, closures, _v(0, 0, -g), points,
                   driven=("platform.x", "platform.y", "platform.z"))


def delta_reference_height(base=0.20, platform=0.05, arm=0.20, forearm=0.45, **_):
    """z of the platform's centre at the reference configuration (m)."""
    return -np.sqrt(forearm ** 2 - (base + arm - platform) ** 2)


def delta_platform_coordinates(position, **params):
    """The platform's coordinates (its displacement from the reference) for a world position of its centre."""
    x, y, z = np.asarray(position, float) - _v(0, 0, delta_reference_height(**params))
    return {"platform.x": x, "platform.y": y, "platform.z": z}


PROBLEMS = {"bricard": bricard, "governor": governor, "rssr": rssr, "delta": delta}
