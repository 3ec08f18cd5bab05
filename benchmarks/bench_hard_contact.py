"""Hard contact on HyQ: the per-state contact solve against Pinocchio, the 2 s drop against MuJoCo.

1. Per state, four feet on the ground: mechsym's contact_forces (H, C, the feet's Jacobians and biases from
   one generated call, M = J H^-1 J^T, d, Lemke with a check; the C route, one state and N states in one
   call, and the Python route) against Pinocchio's forwardDynamics with the four normal rows
   (computeAllTerms, frame Jacobians and classical accelerations, the KKT solve), on the same state; their
   q'' agree.
2. Scenario 1 (`mechsym hyq drop`, frictionless and mu = 0.8): wall time of the event-driven run for 2 s
   (C and Python routes, warm cache, in-process) with its right-hand-side, LCP and event counts, beside
   MuJoCo (its URDF import with the meshes removed, a free joint, spheres of 0.02175 m at the feet, position
   actuators kp 300 kv 10 holding the standing pose; condim 1 frictionless, 3 with mu = 0.8) stepping the
   same 2 s at 1 ms and 0.1 ms. With mu = 0.8 also the run without the slow-slide rule (slow_stop=False: a
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
from mechsym.contact.hard import contact_forces  # noqa: E402


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


def mujoco_model(mu):
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
    for f in hyq_contact.FEET:
        g = spec.body(f).add_geom()
        g.type = mujoco.mjtGeom.mjGEOM_SPHERE
        g.size = [hyq_contact.RADIUS, 0, 0]
        g.condim = 3 if mu > 0 else 1
        g.friction = [mu, 0.005, 0.0001]
    floor = spec.worldbody.add_geom()
    floor.type = mujoco.mjtGeom.mjGEOM_PLANE
    floor.size = [5, 5, 0.1]
    floor.condim = 3 if mu > 0 else 1
    floor.friction = [mu, 0.005, 0.0001]
    model_pin = robot.model
    joints = [model_pin.names[i] for i in range(2, model_pin.njoints)]
    for j in joints:
        a = spec.add_actuator()
        a.target = j
        a.trntype = mujoco.mjtTrn.mjTRN_JOINT
        a.set_to_position(kp=300.0, kv=10.0)
    m = spec.compile()
    return m, joints


def mujoco_run(mu, q0, dt, t_end=2.0):
    import mujoco

    m, joints = mujoco_model(mu)
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
    first = None
    for _ in range(steps):
        mujoco.mj_step(m, d)
        if first is None and d.ncon:
            first = d.time
    wall = time.perf_counter() - t0
    com = d.subtree_com[0]
    return wall, steps, first, com


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
                st = run.stats
                first = run.timeline[0].t
                print(f"mechsym hyq drop, mu = {mu}, {route} route: {st['wall']:.2f} s for 2 s, {total:.2f} s with "
                      f"the output table ({st['rhs_evaluations']} rhs, {st['lcp_solves']} LCPs, {st['switches']} "
                      f"switches, {st['impacts']} impacts, {st['events']} contact events); first touchdown "
                      f"{first:.6f} s; com at 2 s = "
                      f"{np.round([table['com.x'][-1], table['com.y'][-1], table['com.z'][-1]], 4)}")
            except Exception as exc:  # noqa: BLE001 - a benchmark reports what failed and goes on
                print(f"mechsym hyq drop, mu = {mu}, {route} route: failed: {exc}")
        if mu > 0:
            slow_stops(mu)
        for dt in (1e-3, 1e-4):
            wall, steps, first, com = mujoco_run(mu, q0, dt)
            print(f"  MuJoCo, mu = {mu}, dt = {dt:g}: {wall:.2f} s for {steps} steps; first contact "
                  f"{first:.4f} s; com at 2 s = {np.round(com, 4)}")


if __name__ == "__main__":
    per_state()
    scenario()
