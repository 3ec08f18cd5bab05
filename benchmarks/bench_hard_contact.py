"""Hard contact on HyQ: the per-state contact solve against Pinocchio, the 2 s drop against MuJoCo.

1. Per state, four feet on the ground: mechsym's contact_forces (H, C, the feet's Jacobians and biases from
   one generated call, M = J H^-1 J^T, d, Lemke with a check; the C route, one state and N states in one
   call, and the Python route) against Pinocchio's forwardDynamics with the four normal rows
   (computeAllTerms, frame Jacobians and classical accelerations, the KKT solve), on the same state; their
   q'' agree.
2. Scenario 1 (`mechsym hyq drop`, frictionless and mu = 0.8): wall time of the event-driven run for 2 s
   (C and Python routes, warm cache, in-process) with its right-hand-side, LCP and event counts, beside
   MuJoCo stepping the same 2 s at 1 ms and 0.1 ms (its soft contacts at their default time constant, 20 ms)
   and at 0.1 ms with contacts as stiff as that step allows (time constant 2 steps), the end heights of the
   centre of mass side by side. The MuJoCo model: its URDF import with the meshes removed, a free joint,
   spheres of 0.02175 m at the feet and a box around the trunk (its mesh's bounds: 1.29 x 0.596 x 0.374 m, so
   that the trunk cannot pass through the floor; the run counts its contacts), position actuators kp 300 kv
   10 holding the standing pose with nothing else at the joints, as mechsym's PD hold: the URDF's effort
   limits (150 N m), joint ranges and joint damping (0.1 N m s/rad) are removed (with them the legs buckle
   under the landing and the frictionless run ends with the trunk on the floor); condim 1 frictionless, 3
   (elliptic cone) with mu = 0.8. With mu = 0.8 also the run without the slow-slide rule (slow_stop=False: a
   slide slower than slow_slip runs on until it stops by itself), its switches, rhs and wall time beside the
   rule's.

Run: python benchmarks/bench_hard_contact.py  (needs the bench extra: mujoco)
"""
import re
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import example_robot_data as erd  # noqa: E402
import pinocchio as pin  # noqa: E402

from mechanisms import hyq_contact  # noqa: E402
from mechsym.contact.hard_forces import contact_forces  # noqa: E402


def per_state(n=2000):
    contacts, _ = hyq_contact.initial_state("drop")
    q = hyq_contact.robot()[1].copy()
    q[2] -= contacts.gaps(q).min()
    model = erd.load("hyq").model
    data = model.createData()
    rng = np.random.default_rng(1)
    v = 0.05 * rng.standard_normal(model.nv)
    v[:6] = 0
    tau = np.concatenate([np.zeros(6), rng.standard_normal(12)])
    fids = [model.getFrameId(f) for f in hyq_contact.FEET]

    def pinocchio_solve():
        pin.computeAllTerms(model, data, q, v)
        pin.forwardKinematics(model, data, q, v, np.zeros(model.nv))
        pin.updateFramePlacements(model, data)
        J = np.array([pin.getFrameJacobian(model, data, f, pin.LOCAL_WORLD_ALIGNED)[2] for f in fids])
        gamma = np.array([pin.getFrameClassicalAcceleration(model, data, f, pin.LOCAL_WORLD_ALIGNED).linear[2]
                          for f in fids])
        return pin.forwardDynamics(model, data, tau, J, gamma)

    sol = contact_forces(q, v, tau, contacts)
    ref = pinocchio_solve()
    py = contact_forces(q, v, tau, contacts, route="python")
    print(f"per-state contact solve, HyQ, 4 feet: lam = {np.round(sol.lam[:, 0], 3)} N, "
          f"max |q''(mechsym) - q''(pinocchio)| = {np.abs(sol.qdd - ref).max():.2e}, "
          f"C route against Python route {np.abs(sol.qdd - py.qdd).max():.2e}")
    guess = sol.info["z"] > 0
    for name, fn in (("mechsym contact_forces, C route, cold (Lemke)", lambda: contact_forces(q, v, tau, contacts)),
                     ("mechsym contact_forces, C route, warm start from the previous active set",
                      lambda: contact_forces(q, v, tau, contacts, guess=guess)),
                     ("mechsym contact_forces, Python route (generated terms, numpy assembly and Lemke)",
                      lambda: contact_forces(q, v, tau, contacts, route="python")),
                     ("pinocchio forwardDynamics (+ Jacobians, drifts)", pinocchio_solve)):
        fn()
        reps = n if "Python" not in name else n // 10
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        print(f"  {name}: {1e6 * (time.perf_counter() - t0) / reps:.1f} us per state")
    many = 1000
    Q, V, T = np.tile(q, (many, 1)), np.tile(v, (many, 1)), np.tile(tau, (many, 1))
    for mu in (0.0, 0.8):
        contact_forces(Q[:2], V[:2], T[:2], contacts, mu=mu)
        t0 = time.perf_counter()
        contact_forces(Q, V, T, contacts, mu=mu)
        print(f"  mechsym contact_forces over {many} states in one call, mu = {mu}: "
              f"{1e6 * (time.perf_counter() - t0) / many:.1f} us per state")


TRUNK_BOX = ((0.0, 0.0, 0.083), (0.645, 0.298, 0.187))   # centre and half sizes in the trunk frame (m)


def mujoco_model(mu, timeconst=None):
    """MuJoCo's HyQ holding its pose as mechsym's PD hold does (module docstring); `timeconst`: the soft
    contacts' time constant (s), MuJoCo's default 0.02 if None."""
    import mujoco

    robot = erd.load("hyq")
    text = open(robot.urdf).read()
    text = re.sub(r"<visual>.*?</visual>", "", text, flags=re.S)
    text = re.sub(r"<collision>.*?</collision>", "", text, flags=re.S)
    for link in ("base_link", "floating_base", "trunk_imu") + hyq_contact.FEET:   # massless links: no inertial
        text = re.sub(rf'<link name="{link}">.*?</link>', f'<link name="{link}"/>', text, flags=re.S)
    spec = mujoco.MjSpec.from_string(text)
    spec.option.timestep = 1e-3
    base = spec.body("trunk")                                   # base_link is massless, fixed to the trunk
    base.add_freejoint()
    geoms = []
    for f in hyq_contact.FEET:
        g = spec.body(f).add_geom()
        g.type = mujoco.mjtGeom.mjGEOM_SPHERE
        g.size = [hyq_contact.RADIUS, 0, 0]
        geoms.append(g)
    trunk = base.add_geom()
    trunk.name = "trunk_box"
    trunk.type = mujoco.mjtGeom.mjGEOM_BOX
    trunk.pos, trunk.size = TRUNK_BOX
    floor = spec.worldbody.add_geom()
    floor.type = mujoco.mjtGeom.mjGEOM_PLANE
    floor.size = [5, 5, 0.1]
    for g in geoms + [trunk, floor]:
        g.condim = 3 if mu > 0 else 1
        g.friction = [mu, 0.005, 0.0001]
        if timeconst is not None:
            g.solref = [timeconst, 1.0]
    model_pin = robot.model
    joints = [model_pin.names[i] for i in range(2, model_pin.njoints)]
    for j in joints:
        joint = spec.joint(j)            # nothing at the joint but the actuator, as mechsym's PD hold
        joint.limited = mujoco.mjtLimited.mjLIMITED_FALSE
        joint.actfrclimited = mujoco.mjtLimited.mjLIMITED_FALSE
        joint.damping = np.zeros(3)
        a = spec.add_actuator()
        a.target = j
        a.trntype = mujoco.mjtTrn.mjTRN_JOINT
        a.set_to_position(kp=300.0, kv=10.0)
    m = spec.compile()
    return m, joints


def mujoco_run(mu, q0, dt, t_end=2.0, timeconst=None, watch=False):
    """(wall, steps, first contact time, centre of mass at t_end, steps with the trunk box on the floor:
    counted only with `watch`, whose check per step would add to the wall time)."""
    import mujoco

    m, joints = mujoco_model(mu, timeconst)
    box = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, "trunk_box")
    m.opt.timestep = dt
    d = mujoco.MjData(m)
    d.qpos[:3] = q0[:3]
    d.qpos[3:7] = [q0[6], q0[3], q0[4], q0[5]]                 # MuJoCo's quaternion is (w, x, y, z)
    for k, j in enumerate(joints):
        adr = m.jnt_qposadr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, j)]
        d.qpos[adr] = q0[7 + k]
    d.ctrl[:] = q0[7:]                                         # actuators in the order of `joints`
    steps = int(round(t_end / dt))
    mujoco.mj_forward(m, d)
    t0 = time.perf_counter()
    first, trunk = None, 0
    for _ in range(steps):
        mujoco.mj_step(m, d)
        if first is None and d.ncon:
            first = d.time
        if watch and d.ncon:
            trunk += bool(np.any(d.contact.geom[:d.ncon] == box))
    wall = time.perf_counter() - t0
    com = d.subtree_com[0].copy()
    return wall, steps, first, com, trunk


def slow_stops(mu):
    """Scenario 1 on the C route with and without the slow-slide rule, best of 3 each."""
    from mechsym.contact.hard_run import pd_hold, simulate_hard
    from timing import best_of

    contacts, q0 = hyq_contact.initial_state("drop")
    for rule in (False, True):
        def one():
            return simulate_hard(contacts, q0, np.zeros(contacts.model.nv), 2.0, mu=mu,
                                 controller=pd_hold(contacts.model, q0), slow_stop=rule)

        wall, run = best_of(one, 3)
        st = run.stats
        com = contacts.model.com(run.sample([2.0])[0, :contacts.model.nq])
        print(f"  slow-slide rule {'on ' if rule else 'off'}: {wall:.2f} s for 2 s, "
              f"{st['switches']} switches ({sum(e.name == 'stick' for e in run.events)} by the stick guard), "
              f"{st['rhs_evaluations']} rhs, {st['lcp_solves']} LCPs, {st['events']} contact events; "
              f"com.z at 2 s = {com[2]:.5f} m")


def scenario():
    contacts, q0 = hyq_contact.initial_state("drop")
    t0 = time.perf_counter()
    hyq_contact.simulate("drop", t_end=0.01)
    print(f"a first 0.01 s run (imports scipy.integrate, loads the cached libraries): {time.perf_counter() - t0:.2f} s")
    for mu in (0.0, 0.8):
        for route in ("c", "python"):
            try:
                t0 = time.perf_counter()
                run, table = hyq_contact.simulate("drop", mu=mu, t_end=2.0, route=route)
                total = time.perf_counter() - t0
                end = np.array([table["com.x"][-1], table["com.y"][-1], table["com.z"][-1]])
                st = run.stats
                first = run.timeline[0].t
                print(f"mechsym hyq drop, mu = {mu}, {route} route: {st['wall']:.2f} s for 2 s, {total:.2f} s with "
                      f"the output table ({st['rhs_evaluations']} rhs, {st['lcp_solves']} LCPs, {st['switches']} "
                      f"switches, {st['impacts']} impacts, {st['events']} contact events); first touchdown "
                      f"{first:.6f} s; com at 2 s = {np.round(end, 4)}")
            except Exception as exc:  # noqa: BLE001 - a benchmark reports what failed and goes on
                print(f"mechsym hyq drop, mu = {mu}, {route} route: failed: {exc}")
        if mu > 0:
            slow_stops(mu)
        for dt, timeconst in ((1e-3, None), (1e-4, None), (1e-4, 2e-4)):
            wall, steps, first, com, _ = mujoco_run(mu, q0, dt, timeconst=timeconst)
            trunk = mujoco_run(mu, q0, dt, timeconst=timeconst, watch=True)[4]
            soft = "default contacts" if timeconst is None else f"contact time constant {timeconst:g} s"
            print(f"  MuJoCo, mu = {mu}, dt = {dt:g}, {soft}: {wall:.2f} s for {steps} steps; first contact "
                  f"{first:.4f} s; com at 2 s = {np.round(com, 4)}, com.z {com[2]:.4f} m against mechsym's "
                  f"{end[2]:.4f} m; trunk on the floor in {trunk} steps")


if __name__ == "__main__":
    per_state()
    scenario()
