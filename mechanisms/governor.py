"""The flyball governor with rigid couplers, problem A05 of the IFToMM library of computational benchmarks for
multibody systems (docs/spatial-loops.md cites the definition): a shaft turning about z, a slider on it, two
rods hinged at the shaft's top at A, B = (+-0.05, 0, 1) m, each with a 5 kg ball at its end, pointing outward
30 degrees below the horizontal, and two couplers from the rods' midpoints C to the slider's sides E =
(+-0.05, 0, 0.5) m (|CE| = 0.5 m, the benchmark's spring rest length, rigid here). Uniform cuboids of density
3000 kg/m^3: shaft and rods 1 x 0.01 x 0.01 m, slider a 0.1 m cube, couplers 0.5 x 0.01 x 0.01 m.

Two loops (each coupler closed on the slider by a revolute joint), planar in the shaft's frame: Grübler's
count -4, mobility 2 (the shaft's spin and the opening). The benchmark: shaft speed 2 pi rad/s at t = 0,
every other rate zero, 10 s (`initial_state`). Both mobilities are driven (shaft and slider); the Python
API runs it (the command line drives one coordinate).

`build(couplers="springs")` is the benchmark's own model: spring-dampers from C to E in place of the couplers
(k = 8e5 N/m, c = 4e4 N s/m, rest length 0.5 m; mechsym.core.forces), an open tree (a TreeSystem).
"""
import numpy as np

from mechsym.spatial import Prismatic, Revolute, Tree

DENSITY, WIDTH, BALL, S0, ALPHA, OMEGA0 = 3000.0, 0.01, 5.0, 0.5, np.deg2rad(30.0), 2 * np.pi
Y = np.array([0.0, 1.0, 0.0])


def _box(mass, sides, axes=np.eye(3)):
    """The inertia about the centre of a uniform box, its sides along the columns of `axes`."""
    a, b, c = sides
    return axes @ np.diag([b * b + c * c, a * a + c * c, a * a + b * b]) * mass / 12 @ axes.T


def _along(u):
    """Axes whose first column is the unit vector u (in the x-z plane), the second y."""
    return np.column_stack([u, Y, np.cross(u, Y)])


STIFFNESS, DAMPING, REST = 8e5, 4e4, 0.5


def build(couplers="rigid"):
    """The tree shaft - slider, shaft - rod - coupler (twice), closed at the slider's sides; or with
    `couplers="springs"` the spring-dampers C-E instead of the couplers (module docstring)."""
    tree = Tree("governor" if couplers == "rigid" else "governor-springs")
    m_bar, m_slider = DENSITY * WIDTH ** 2, DENSITY * 0.1 ** 3
    tree.body("ground")
    tree.body("shaft", "ground", Revolute("shaft", axis=(0, 0, 1)), mass=m_bar, com=(0, 0, 0.5),
              inertia=_box(m_bar, (WIDTH, WIDTH, 1.0)).tolist())
    tree.body("slider", "shaft", Prismatic("slider", axis=(0, 0, 1)), xyz=(0, 0, S0), mass=m_slider,
              inertia=_box(m_slider, (0.1, 0.1, 0.1)).tolist())
    for side, sign in (("1", 1.0), ("2", -1.0)):
        top = np.array([sign * 0.05, 0.0, 1.0])
        u = np.array([sign * np.cos(ALPHA), 0.0, -np.sin(ALPHA)])
        m = m_bar + BALL
        com = (m_bar * u / 2 + BALL * u) / m
        inertia = (_box(m_bar, (1.0, WIDTH, WIDTH), _along(u)) + m_bar * _shifted(u / 2 - com)
                   + BALL * _shifted(u - com))
        axis = (0.0, -sign, 0.0)
        tree.body(f"rod{side}", "shaft", Revolute(f"rod{side}", axis=axis), xyz=tuple(top), mass=m, com=tuple(com),
                  inertia=inertia.tolist())
        mid, end = top + u / 2, np.array([sign * 0.05, 0.0, S0])
        if couplers == "springs":
            tree.frame(f"C{side}", f"rod{side}", xyz=tuple(u / 2))
            tree.frame(f"E{side}", "slider", xyz=(sign * 0.05, 0, 0))
            tree.spring_damper(f"CE{side}", (f"rod{side}", f"C{side}"), ("slider", f"E{side}"), STIFFNESS, DAMPING,
                               free_length=REST)
            continue
        d = end - mid
        m_c = DENSITY * np.linalg.norm(d) * WIDTH ** 2
        tree.body(f"coupler{side}", f"rod{side}", Revolute(f"coupler{side}", axis=axis), xyz=tuple(u / 2), mass=m_c,
                  com=tuple(d / 2), inertia=_box(m_c, (np.linalg.norm(d), WIDTH, WIDTH), _along(d / np.linalg.norm(d))).tolist())
        tree.frame(f"E{side}_coupler", f"coupler{side}", xyz=tuple(d))
        tree.frame(f"E{side}_slider", "slider", xyz=(sign * 0.05, 0, 0))
        tree.close(f"loop{side}", f"E{side}_coupler", f"E{side}_slider", Revolute(f"coupler{side}_slider", axis=axis))
    if couplers == "rigid":
        tree.drive("shaft")
        tree.drive("slider", force="force")
    return tree


def _shifted(d):
    """The parallel-axis term d.d I - d d^T of a unit point mass at offset d."""
    return d @ d * np.eye(3) - np.outer(d, d)


def initial_state(system):
    """(q0, v0) of the benchmark: the declared configuration, the shaft at 2 pi rad/s."""
    v0 = np.zeros(system.nv)
    v0[system.speed_names.index("shaft")] = OMEGA0
    return np.zeros(system.nq), v0
