"""Spatial closed loops against Pinocchio's constrained dynamics (tests/oracles/spatial_loops: each problem as a
Pinocchio tree with RigidConstraintModel closures, pin.constraintDynamics with ProximalSettings(1e-14, 1e-12,
200), checked there against a maximal-coordinate formulation).

Each problem's numbers (geometry.PROBLEMS: bodies, tree joints, closing joints, gravity) are declared here as a
mechsym Tree with Tree.close, independently of the shipped models; q and v are mapped joint by joint (every
coordinate is zero at the reference in both). At consistent states from the oracle's assembly and velocities
(random driven values and rates), the joint accelerations agree to 1e-9 of their size.
"""
import numpy as np
import pytest

pm = pytest.importorskip("tests.oracles.spatial_loops.pinocchio_models")
geometry = pytest.importorskip("tests.oracles.spatial_loops.geometry")

from mechsym.core.quaternion import about as quat_about  # noqa: E402
from mechsym.spatial import Prismatic, Revolute, Spherical, Tree  # noqa: E402
from mechsym.spatial import loop_dynamics as dyn  # noqa: E402
from mechsym.spatial.loop_kinematics import LoopSolver  # noqa: E402
from mechsym.spatial.loops import LoopSystem  # noqa: E402


def _turn_gravity_down(gravity):
    """A rotation taking the problem's gravity to -z (mechsym's trees pull along -z)."""
    g = np.asarray(gravity, float) / np.linalg.norm(gravity)
    down = np.array([0.0, 0.0, -1.0])
    axis = np.cross(g, down)
    if np.linalg.norm(axis) < 1e-12:
        return np.eye(3) if g @ down > 0 else np.diag([1.0, -1.0, -1.0])
    from mechsym.core.quaternion import rotation_matrix as rotation

    angle = np.arccos(np.clip(g @ down, -1, 1))
    return rotation(quat_about(axis, angle))


def declare(problem):
    """The problem as a mechsym Tree (universal and translation joints as chains of revolute or prismatic
    joints through massless bodies), and for each oracle joint the names of its coordinates here."""
    R = _turn_gravity_down(problem.gravity)
    tree = Tree(problem.name)
    tree.body("ground")
    origin = {"ground": np.zeros(3)}
    names = {}
    massless = dict(mass=0.0, inertia=(0, 0, 0, 0, 0, 0))
    for j in problem.joints:
        xyz = R @ (j.point - origin[j.parent])
        b = problem.bodies[j.child]
        body = dict(mass=b.mass, com=R @ b.com, inertia=R @ b.inertia @ R.T)
        if j.kind == "universal":
            tree.body(f"{j.child}_cross", j.parent, Revolute(f"{j.name}.1", axis=R @ j.axis), xyz=xyz, **massless)
            tree.body(j.child, f"{j.child}_cross", Revolute(f"{j.name}.2", axis=R @ j.axis2), **body)
            names[j.name] = [f"{j.name}.1", f"{j.name}.2"]
        elif j.kind == "translation":
            parent = j.parent
            for k, c in enumerate("xyz"):
                child = j.child if c == "z" else f"{j.child}_{c}"
                tree.body(child, parent, Prismatic(f"{j.name}.{c}", axis=R[:, k]), xyz=xyz if k == 0 else (0, 0, 0),
                          **(body if c == "z" else massless))
                parent = child
            names[j.name] = [f"{j.name}.{c}" for c in "xyz"]
        else:
            joint = {"revolute": lambda: Revolute(j.name, axis=R @ j.axis),
                     "prismatic": lambda: Prismatic(j.name, axis=R @ j.axis),
                     "spherical": lambda: Spherical(j.name)}[j.kind]()
            tree.body(j.child, j.parent, joint, xyz=xyz, **body)
            names[j.name] = [j.name]
        origin[j.child] = j.point
    for c in problem.closures:
        for side in ("a", "b"):
            body = c.body_a if side == "a" else c.body_b
            tree.frame(f"{c.name}_{side}", body, xyz=R @ (c.point - origin[body]))
        joint = Revolute(c.name, axis=R @ c.axis) if c.kind == "revolute" else Spherical(c.name)
        tree.close(c.name, f"{c.name}_a", f"{c.name}_b", joint)
    assert abs(np.linalg.norm(problem.gravity) - 9.81) < 1e-12          # mechsym's default g
    return tree, names


def _maps(system, ref, names):
    """(our q index, their q index) and (our v index, their v index) pairs."""
    qmap, vmap = [], []
    ours_q = {n: i for i, n in enumerate(system.coordinate_names)}
    ours_v = {n: i for i, n in enumerate(system.speed_names)}
    for j in ref.problem.joints:
        jid = ref.model.getJointId(j.name if j.kind != "universal" else j.name + ".1")
        if j.kind == "spherical":
            iq, iv = ref.model.joints[jid].idx_q, ref.model.joints[jid].idx_v
            qmap += [(ours_q[f"{j.name}.{c}"], iq + k) for k, c in enumerate(("qx", "qy", "qz", "qw"))]
            vmap += [(ours_v[f"{j.name}.{c}"], iv + k) for k, c in enumerate(("wx", "wy", "wz"))]
            continue
        for k, name in enumerate(names[j.name]):
            if j.kind == "universal":
                joint = ref.model.joints[ref.model.getJointId(name)]
                iq, iv = joint.idx_q, joint.idx_v
            else:
                iq, iv = ref.model.joints[jid].idx_q + k, ref.model.joints[jid].idx_v + k
            qmap.append((ours_q[name], iq))
            vmap.append((ours_v[name], iv))
    return np.array(qmap), np.array(vmap)


@pytest.mark.parametrize("backend", ["numpy", "c"])
@pytest.mark.parametrize("name", ["bricard", "governor", "rssr", "delta"])
def test_forward_dynamics_equals_pinocchio(name, backend):
    """numpy: the KKT system in numpy; c: one generated C call a state (mechsym.spatial.loop_compiled)."""
    ref = pm.build(name)
    tree, names = declare(ref.problem)
    system = LoopSystem(tree, backend=backend)
    solver = LoopSolver(system)
    qmap, vmap = _maps(system, ref, names)
    rng = np.random.default_rng(7)
    driven = ref.problem.driven
    worst = 0.0
    for _ in range(4):
        lengths = {n for n in driven if n.startswith(("platform", "slider"))}
        values = {n: rng.uniform(-1, 1) * (0.03 if n in lengths else 0.3) for n in driven}
        q_pin = pm.assemble(ref, values)
        v_pin = pm.velocity(ref, q_pin, {n: rng.normal() for n in driven})
        a_pin = pm.forward_dynamics(ref, q_pin, v_pin)
        q = np.zeros(system.nq)
        q[qmap[:, 0]] = q_pin[qmap[:, 1]]
        v = np.zeros(system.nv)
        v[vmap[:, 0]] = v_pin[vmap[:, 1]]
        phi, _, _ = system.closure(q[None])
        assert np.abs(phi).max() < 1e-11
        a = dyn.accelerations(solver, q, v, np.zeros(system.nv))
        worst = max(worst, np.abs(a[vmap[:, 0]] - a_pin[vmap[:, 1]]).max() / np.abs(a_pin).max())
    assert worst < 1e-9


@pytest.mark.parametrize("name", ["bricard", "governor"])
def test_benchmark_free_motion_equals_pinocchio(name):
    """The shipped models over the benchmark's 10 s (2 s unless MECHSYM_SLOW) at rtol 1e-12 against the oracle's
    run of Pinocchio's constrained dynamics at rtol 1e-12: every joint coordinate to 1e-8 rad (m)."""
    import os

    from mechanisms import bricard, governor

    runs = pytest.importorskip("tests.oracles.spatial_loops.reference_runs")
    t_end = 10.0 if os.environ.get("MECHSYM_SLOW") else 2.0
    reference = runs.free_motion(name, t_end=t_end)
    module = {"bricard": bricard, "governor": governor}[name]
    system = LoopSystem(module.build())
    solver = LoopSolver(system)
    q0, v0 = (np.zeros(system.nq), np.zeros(system.nv)) if name == "bricard" else module.initial_state(system)
    run = dyn.forward(solver, q0, v0, t_end, dt=0.01, rtol=1e-12)
    ref = pm.build(name)
    ours = np.column_stack([run[n] for n in system.coordinate_names])
    theirs = reference["q"][:, [ref.q_index[n.replace("J", "j")] for n in system.coordinate_names]]
    assert ours.shape == theirs.shape
    assert np.abs(ours - theirs).max() < 1e-8


def test_rssr_rocker_follows_the_crank_as_pinocchio_assembles_it():
    """The shipped RSSR (its coupler's spin taken by a universal joint) against the oracle's S-S one: the rocker's
    angle at each crank angle (the spin changes nothing else) to 1e-12."""
    from mechanisms import rssr

    ref = pm.build("rssr")
    solver = LoopSolver(LoopSystem(rssr.build(), backend="numpy"))
    theta = np.linspace(0, 2 * np.pi, 25)[:-1]
    kin = solver.sweep(theta)
    rocker = kin.q[:, solver.s.coordinate_names.index("rocker")]
    q, expected = None, []
    for t in theta:
        q = pm.assemble(ref, {"crank": t}, q)
        expected.append(q[ref.q_index["rocker"]])
    assert np.abs(rocker - np.array(expected)).max() < 1e-12


def test_delta_robot_inverse_dynamics_equals_sympy_mechanics():
    """The delta robot (declared from the oracle's numbers) follows its platform's circle (driven: the platform's
    coordinates; forces on the motors): its motor torques equal the oracle's derivation with
    sympy.physics.mechanics (Lagrange's equations with holonomic constraints, forearms as particles) to 1e-10, and
    so does the force each forearm exerts on the platform (the wrist closures' reactions)."""
    delta_sympy = pytest.importorskip("tests.oracles.spatial_loops.delta_sympy")
    problem = geometry.delta()
    tree, _ = declare(problem)
    for c in ("x", "y", "z"):
        tree.drive(f"platform.{c}", force=f"F{c}")
    system = LoopSystem(tree, backend="numpy")
    solver = LoopSolver(system)
    circle = geometry.CIRCLE
    times = np.linspace(0, circle["period"], 25)
    w = 2 * np.pi / circle["period"]
    z0 = geometry.delta_reference_height()
    rho = circle["radius"]
    theta = np.column_stack([rho * np.cos(w * times), rho * np.sin(w * times), np.full_like(times, circle["height"] - z0)])
    thetad = np.column_stack([-rho * w * np.sin(w * times), rho * w * np.cos(w * times), 0 * times])
    thetadd = np.column_stack([-rho * w ** 2 * np.cos(w * times), -rho * w ** 2 * np.sin(w * times), 0 * times])
    kin = solver.sweep(theta)
    v = solver.velocities(kin.q, thetad)
    a = solver.accelerations(kin.q, v, thetadd)
    motors = [system.speed_names.index(f"motor{i}") for i in range(3)]
    tau, lam = dyn.inverse(solver, kin.q, v, a, actuated=motors)
    expected, _, _, legs = delta_sympy.inverse_dynamics(times, forces=True)
    assert np.abs(tau - expected).max() <= 1e-10 * np.abs(expected).max()
    react = dyn.reactions(solver, kin.q, v, a, tau, lam, actuated=motors)
    wrists = np.stack([np.column_stack([react[f"wrist{i}.f{c}"] for c in "xyz"]) for i in range(3)], axis=1)
    assert np.abs(wrists - legs).max() <= 1e-10 * np.abs(legs).max()


def test_governor_with_spring_dampers_equals_pinocchio():
    """The benchmark's own governor (spring-dampers C-E, an open tree with force elements): the tree's forward
    dynamics against Pinocchio's ABA with the oracle's spring forces, at random states, to 1e-9."""
    from mechanisms import governor
    from mechsym.spatial import TreeSystem

    ref = pm.build("governor", couplers="springs")
    system = TreeSystem(governor.build(couplers="springs"), backend="numpy")
    iq = [ref.q_index[n] for n in system.coordinate_names]
    iv = [ref.coordinate[n] for n in system.coordinate_names]
    rng = np.random.default_rng(3)
    for _ in range(4):
        q = rng.uniform(-0.2, 0.2, system.nq)
        v = rng.normal(size=system.nv)
        q_pin, v_pin = np.zeros(ref.nv), np.zeros(ref.nv)
        q_pin[iq], v_pin[iv] = q, v
        expected = pm.forward_dynamics(ref, q_pin, v_pin)[iv]
        assert np.abs(system.forward(q, v, np.zeros(system.nv)) - expected).max() <= 1e-9 * np.abs(expected).max()


def _peak(x, y):
    """The largest y over samples x (uniform) refined by the parabola through the largest sample and its two
    neighbours: (x, y) there."""
    i = int(np.argmax(y))
    a, b, c = y[i - 1], y[i], y[i + 1]
    shift = 0.5 * (a - c) / (a - 2 * b + c)
    return x[i] + shift * (x[1] - x[0]), b - 0.25 * (a - c) * shift


def test_bricard_j1_stops_where_its_range_ends():
    """`mechsym kinematics bricard` stops J1 near 3.66519 rad because J1 cannot go further on this assembly's
    branch, not because the continuation fails: Pinocchio's assembly of the benchmark geometry, continued
    along J2 through that point, finds J1's largest value there (to the message's 6 digits) and no assembly
    1e-3 beyond it, and mechsym continued along J2 passes the point with J1 rising, then falling, to the same
    largest value (1e-8). (The benchmark's free fall swings J1 between 0 and about pi.)"""
    from mechsym.core.errors import SingularError

    system = LoopSystem(_bricard_tree(drive="J1"), backend="numpy")
    with pytest.raises(SingularError, match="J1 reaches its limit there on this branch and turns back") as stop:
        LoopSolver(system).sweep(np.linspace(0, 3.7, 38))
    stopped = float(str(stop.value).split("near J1=")[1].split(":")[0])
    ref = pm.build("bricard")
    j1, j2 = list(ref.q_index)[:2]
    q = pm.assemble(ref, {j1: 3.6})
    for b in np.arange(q[ref.q_index[j2]], 1.45, 0.05):
        q = pm.assemble(ref, {j2: b}, q_guess=q)
    fine = np.arange(1.45, 1.70, 0.0025)
    path = []
    for b in fine:
        q = pm.assemble(ref, {j2: b}, q_guess=q)
        path.append(q[ref.q_index[j1]])
    at, largest = _peak(fine, np.array(path))
    assert abs(largest - stopped) < 1e-5 and np.ptp(path) > 1e-3
    with pytest.raises(RuntimeError, match="no assembly"):
        pm.assemble(ref, {j1: largest + 1e-3}, q_guess=pm.assemble(ref, {j2: at}, q_guess=q), step=1e-4)
    around_j2 = LoopSystem(_bricard_tree(drive="J2"), backend="numpy")
    solver = LoopSolver(around_j2)
    start = LoopSolver(system).sweep(np.linspace(0, 3.6, 37)).q[-1]
    kin = solver.sweep(np.concatenate([np.linspace(start[1], 1.45, 12), fine]), start=start)
    ours = kin.q[12:, 0]
    assert ours[0] < largest and ours[-1] < largest
    assert abs(_peak(fine, ours)[1] - largest) < 1e-8


def _bricard_tree(drive):
    """Bricard's shipped declaration with `drive` driven instead of J1."""
    from mechanisms import bricard

    tree = bricard.build()
    tree.drives.clear()
    tree.drive(drive)
    return tree
