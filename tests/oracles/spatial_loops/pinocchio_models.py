"""Pinocchio's reference of each problem: its spanning tree as a pin.Model, its closing joints as
RigidConstraintModel closures, and assembly, consistent velocities and constrained forward dynamics on it.

Closures: a spherical closure is one CONTACT_3D (the two points coincide); a weld, one CONTACT_6D. A revolute
closure is two CONTACT_3D points on its axis, at the joint's point and `AXIS_OFFSET` along the axis: six rows of
which five are independent, the sixth (the second point's component along the axis) repeating the first's. A CONTACT_6D would also lock the
rotation about the axis, which a revolute joint leaves free: it is not a revolute closure. Redundant rows (that
one, and the mechanism's own: Bricard's loop, the governor's planar loops) are what Pinocchio's proximal
algorithm resolves; its settings are PROXIMAL (accuracy, mu, iterations), tight.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from .geometry import PROBLEMS, Problem

AXIS_OFFSET = 0.1                   # m, the second point of a revolute closure along its axis
PROXIMAL = (1e-14, 1e-12, 200)      # pin.ProximalSettings(accuracy, mu, max_iter)


def proximal():
    return pin.ProximalSettings(*PROXIMAL)


def _joint_model(j):
    if j.kind == "revolute":
        return pin.JointModelRevoluteUnaligned(*j.axis)
    if j.kind == "prismatic":
        return pin.JointModelPrismaticUnaligned(*j.axis)
    if j.kind == "spherical":
        return pin.JointModelSpherical()
    if j.kind == "translation":
        return pin.JointModelTranslation()
    raise ValueError(f"joint {j.name}: kind {j.kind} has no single Pinocchio joint")


@dataclass
class Reference:
    """A problem built in Pinocchio: model, data, closures (one list of (joint a, point a, joint b, point b) per
    closure point, the same points the RigidConstraintModels hold), coordinate names and their v indices."""
    problem: Problem
    model: object
    data: object
    constraint_models: list
    points: list                 # (joint id a, local point a, joint id b, local point b)
    coordinate: dict             # coordinate name -> index in v
    q_index: dict                # coordinate name -> index in q (one-dimensional joints and translations)
    body_joint: dict             # body name -> Pinocchio joint id
    origin: dict                 # body name -> frame origin at the reference (world)

    @property
    def nv(self):
        return self.model.nv


def build(problem: Problem | str, **params) -> Reference:
    """Pinocchio's tree and closures of a problem (an instance or a name of geometry.PROBLEMS)."""
    if isinstance(problem, str):
        problem = PROBLEMS[problem](**params)
    model = pin.Model()
    model.gravity = pin.Motion(np.r_[problem.gravity, 0.0, 0.0, 0.0])
    body_joint, origin, coordinate, q_index = {"ground": 0}, {"ground": np.zeros(3)}, {}, {}
    for j in problem.joints:
        parent = body_joint[j.parent]
        placement = pin.SE3(np.eye(3), j.point - origin[j.parent])
        if j.kind == "universal":
            first = model.addJoint(parent, pin.JointModelRevoluteUnaligned(*j.axis), placement, j.name + ".1")
            coordinate[j.name + ".1"] = model.joints[first].idx_v
            q_index[j.name + ".1"] = model.joints[first].idx_q
            jid = model.addJoint(first, pin.JointModelRevoluteUnaligned(*j.axis2), pin.SE3.Identity(),
                                 j.name + ".2")
            coordinate[j.name + ".2"] = model.joints[jid].idx_v
            q_index[j.name + ".2"] = model.joints[jid].idx_q
        else:
            jid = model.addJoint(parent, _joint_model(j), placement, j.name)
            iv, iq = model.joints[jid].idx_v, model.joints[jid].idx_q
            if j.kind == "translation":
                coordinate.update({f"{j.name}.{c}": iv + k for k, c in enumerate("xyz")})
                q_index.update({f"{j.name}.{c}": iq + k for k, c in enumerate("xyz")})
            elif j.kind == "spherical":
                coordinate.update({f"{j.name}.w{c}": iv + k for k, c in enumerate("xyz")})
            else:
                coordinate[j.name], q_index[j.name] = iv, iq
        b = problem.bodies[j.child]
        model.appendBodyToJoint(jid, pin.Inertia(b.mass, b.com, b.inertia), pin.SE3.Identity())
        body_joint[j.child], origin[j.child] = jid, j.point
    points, cms = [], []
    for c in problem.closures:
        if c.kind == "weld":                       # one CONTACT_6D; its residual rows: three points
            at = [c.point + d for d in (np.zeros(3), AXIS_OFFSET * np.eye(3)[0], AXIS_OFFSET * np.eye(3)[1])]
        elif c.kind == "spherical":
            at = [c.point]
        else:
            at = [c.point, c.point + AXIS_OFFSET * c.axis]
        ja, jb = body_joint[c.body_a], body_joint[c.body_b]
        for p in at:
            points.append((ja, p - origin[c.body_a], jb, p - origin[c.body_b]))
        kind = pin.ContactType.CONTACT_6D if c.kind == "weld" else pin.ContactType.CONTACT_3D
        for p in at[:1] if c.kind == "weld" else at:
            cms.append(pin.RigidConstraintModel(kind, model, ja, pin.SE3(np.eye(3), p - origin[c.body_a]), jb,
                                                pin.SE3(np.eye(3), p - origin[c.body_b]), pin.ReferenceFrame.LOCAL))
    return Reference(problem, model, model.createData(), cms, points, coordinate, q_index, body_joint, origin)


def residual(ref: Reference, q):
    """Closure residual (world, m): point on body a minus point on body b, for every closure point."""
    pin.forwardKinematics(ref.model, ref.data, q)
    return np.array([ref.data.oMi[ja].act(pa) - ref.data.oMi[jb].act(pb) for ja, pa, jb, pb in ref.points]).ravel()


def _point_jacobian(ref, jid, p_world):
    if jid == 0:
        return np.zeros((3, ref.nv))
    J = pin.getJointJacobian(ref.model, ref.data, jid, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)
    r = p_world - ref.data.oMi[jid].translation
    return J[:3] - np.cross(r, J[3:].T).T


def jacobian(ref: Reference, q):
    """d residual / d v (rows as in `residual`)."""
    pin.computeJointJacobians(ref.model, ref.data, q)
    rows = []
    for ja, pa, jb, pb in ref.points:
        rows.append(_point_jacobian(ref, ja, ref.data.oMi[ja].act(pa))
                    - _point_jacobian(ref, jb, ref.data.oMi[jb].act(pb)))
    return np.vstack(rows)


def drift(ref: Reference, q, v):
    """The residual's second derivative at zero acceleration (m/s^2): the J'v of J a + J'v = 0."""
    pin.forwardKinematics(ref.model, ref.data, q, v, np.zeros(ref.nv))
    out = []
    for ja, pa, jb, pb in ref.points:
        acc = []
        for jid, p in ((ja, pa), (jb, pb)):
            if jid == 0:
                acc.append(np.zeros(3))
                continue
            vel, a = ref.data.v[jid], ref.data.a[jid]
            local = a.linear + np.cross(a.angular, p) + np.cross(vel.angular, vel.linear + np.cross(vel.angular, p))
            acc.append(ref.data.oMi[jid].rotation @ local)
        out.append(acc[0] - acc[1])
    return np.concatenate(out)


def _index(ref, names):
    return [ref.coordinate[n] for n in names]


def assemble(ref: Reference, driven: dict, q_guess=None, step=0.05, tol=1e-14, iterations=30):
    """A configuration q closing every loop with the driven coordinates (name -> value, m or rad) held: Newton
    with minimum-norm steps on the other coordinates, continued from q_guess (default: the reference
    configuration) in increments of the driven values no larger than `step`."""
    model = ref.model
    q = pin.neutral(model) if q_guess is None else np.array(q_guess, float)
    fixed = _index(ref, driven)
    free = [i for i in range(model.nv) if i not in fixed]
    start = np.array([q[ref.q_index[n]] for n in driven])
    target = np.array(list(driven.values()), float)
    count = max(1, int(np.ceil(np.max(np.abs(target - start)) / step)))
    for k in range(1, count + 1):
        for n, value in zip(driven, start + (target - start) * k / count):
            q[ref.q_index[n]] = value
        for _ in range(iterations):
            r = residual(ref, q)
            if np.max(np.abs(r)) < tol:
                break
            dv = np.zeros(model.nv)
            dv[free] = -np.linalg.lstsq(jacobian(ref, q)[:, free], r, rcond=1e-10)[0]
            q = pin.integrate(model, q, dv)
    r = residual(ref, q)
    if np.max(np.abs(r)) > 1e-12:
        raise RuntimeError(f"{ref.problem.name}: no assembly for {driven} (residual {np.max(np.abs(r)):.1e})")
    return q


def velocity(ref: Reference, q, rates: dict):
    """The consistent v with the driven coordinates' rates given (name -> m/s or rad/s); the others the
    minimum-norm solution of J v = 0."""
    fixed = _index(ref, rates)
    free = [i for i in range(ref.nv) if i not in fixed]
    v = np.zeros(ref.nv)
    v[fixed] = list(rates.values())
    J = jacobian(ref, q)
    v[free] = -np.linalg.lstsq(J[:, free], J[:, fixed] @ v[fixed], rcond=1e-10)[0]
    return v


def spring_forces(ref: Reference, q, v):
    """Generalized forces (v's layout) of the problem's spring-dampers, f = k (l - rest) + c dl/dt along the
    line between their two points (tension positive)."""
    if not ref.problem.springs:
        return np.zeros(ref.nv)
    pin.computeJointJacobians(ref.model, ref.data, q)
    pin.forwardKinematics(ref.model, ref.data, q, v)
    out = np.zeros(ref.nv)
    for a, b, k, c, rest in ref.problem.springs:
        ends = []
        for name in (a, b):
            body, local = ref.problem.points[name]
            jid = ref.body_joint[body]
            p = ref.data.oMi[jid].act(local)
            J = _point_jacobian(ref, jid, p)
            ends.append((p, J))
        (pa, Ja), (pb, Jb) = ends
        d = pb - pa
        length = np.linalg.norm(d)
        e = d / length
        rate = e @ ((Jb - Ja) @ v)
        tension = k * (length - rest) + c * rate
        out += (Ja - Jb).T @ (tension * e)          # pulls a towards b and b towards a
    return out


def dynamics(ref: Reference):
    """A function (q, v, tau=None) -> joint accelerations, with Pinocchio's constraint data initialised once
    (pin.initConstraintDynamics) and pin.constraintDynamics per call, PROXIMAL settings; pin.aba for a tree
    without closures; spring-dampers included. The per-state peer of a benchmark."""
    models = pin.StdVec_RigidConstraintModel()
    datas = pin.StdVec_RigidConstraintData()
    for cm in ref.constraint_models:
        models.append(cm)
        datas.append(cm.createData())
    data = ref.model.createData()
    if models:
        pin.initConstraintDynamics(ref.model, data, models, datas)
    settings = proximal()
    zero = np.zeros(ref.nv)

    def accelerations(q, v, tau=None):
        tau = (zero if tau is None else np.asarray(tau, float))
        if ref.problem.springs:
            tau = tau + spring_forces(ref, q, v)
        if not models:
            return pin.aba(ref.model, data, q, v, tau).copy()
        return pin.constraintDynamics(ref.model, data, q, v, tau, models, datas, settings).copy()

    return accelerations


def forward_dynamics(ref: Reference, q, v, tau=None):
    """Joint accelerations (v's units per second) at one state: `dynamics(ref)` called once."""
    return dynamics(ref)(q, v, tau)


def energy(ref: Reference, q, v):
    """(kinetic, potential) energy in J; the potential is zero with every centre of mass at the world origin."""
    kinetic = pin.computeKineticEnergy(ref.model, ref.data, q, v)
    return kinetic, pin.computePotentialEnergy(ref.model, ref.data, q)


def point_positions(ref: Reference, q, names=None):
    """World positions (m) of the problem's reported points."""
    pin.forwardKinematics(ref.model, ref.data, q)
    out = {}
    for name, (body, p) in ref.problem.points.items():
        if names is None or name in names:
            out[name] = ref.data.oMi[ref.body_joint[body]].act(p)
    return out


def acceleration(ref: Reference, q, v, accelerations: dict):
    """The consistent joint accelerations with the driven coordinates' accelerations given (J a = -J'v)."""
    fixed = _index(ref, accelerations)
    free = [i for i in range(ref.nv) if i not in fixed]
    a = np.zeros(ref.nv)
    a[fixed] = list(accelerations.values())
    J = jacobian(ref, q)
    a[free] = np.linalg.lstsq(J[:, free], -drift(ref, q, v) - J[:, fixed] @ a[fixed], rcond=1e-10)[0]
    return a


def inverse_dynamics(ref: Reference, q, v, a, actuated, forces=False):
    """The forces of the actuated coordinates (names; N m or N) that produce the consistent motion (q, v, a):
    pin.rnea's joint forces = S^T tau + J^T lambda, solved for tau and the closure forces lambda (N, world, on
    each closure point's body a; body b takes -lambda). forces=True returns (tau, lambda)."""
    full = pin.rnea(ref.model, ref.data, q, v, a)
    S = np.zeros((len(actuated), ref.nv))
    S[np.arange(len(actuated)), _index(ref, actuated)] = 1.0
    solution = np.linalg.lstsq(np.hstack([S.T, jacobian(ref, q).T]), full, rcond=1e-12)[0]
    tau = solution[:len(actuated)]
    return (tau, solution[len(actuated):].reshape(-1, 3)) if forces else tau


def reactions(ref: Reference, q, v, a, closure_forces):
    """Every joint's reaction at (q, v, a) with the closure forces (as `inverse_dynamics` returns them):
    {joint: (force, moment)}, N and N m in world axes at the joint's point, exerted by the joint's first body
    (tree: the parent; closure: body_a) on its second; a driven joint's moment includes its drive. A universal
    joint reports the force across it (its cross is massless). Unique only where the closure rows are
    independent (the RSSR, the delta), not for redundant loops."""
    pin.forwardKinematics(ref.model, ref.data, q, v, a)
    fext = pin.StdVec_Force()
    for _ in range(ref.model.njoints):
        fext.append(pin.Force.Zero())
    for (ja, pa, jb, pb), lam in zip(ref.points, closure_forces):
        for jid, p, f in ((ja, pa, lam), (jb, pb, -lam)):
            if jid:
                local = ref.data.oMi[jid].rotation.T @ f
                fext[jid] = fext[jid] + pin.Force(local, np.cross(p, local))
    pin.rnea(ref.model, ref.data, q, v, a, fext)
    out = {}
    for j in ref.problem.joints:
        jid = ref.model.getJointId(j.name + (".2" if j.kind == "universal" else ""))
        R = ref.data.oMi[jid].rotation
        f = ref.data.f[jid]
        out[j.name] = (R @ f.linear, R @ f.angular)
    k = 0
    pin.forwardKinematics(ref.model, ref.data, q)
    for c in ref.problem.closures:
        ja = ref.points[k][0]
        R = ref.data.oMi[ja].rotation if ja else np.eye(3)
        offsets = {"spherical": [], "revolute": [c.axis], "weld": list(np.eye(3)[:2])}[c.kind]
        lam = closure_forces[k:k + 1 + len(offsets)]
        moment = -sum((np.cross(AXIS_OFFSET * R @ d, f) for d, f in zip(offsets, lam[1:])), np.zeros(3))
        out[c.name] = (-lam.sum(axis=0), moment)
        k += len(lam)
    return out
