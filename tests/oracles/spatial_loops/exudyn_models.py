"""Exudyn's model of a problem of geometry.py, the CPU-time peer of the benchmark runs.

Every body an ObjectRigidBody (Euler-parameter node at its frame origin, centre-of-mass offset in its inertia),
every joint, tree and closing alike, an Exudyn joint between two bodies: CreateRevoluteJoint,
CreatePrismaticJoint, CreateSphericalJoint; springs as CreateSpringDamper. Redundant constraints (Bricard's
loop, the governor's planar loops) are handled as Exudyn documents it: the dense linear solver with
ignoreSingularJacobian. Exudyn's implicit generalized-alpha solver (index 3) runs with the fixed step h.
"""
from __future__ import annotations

import numpy as np

from tests.reference.exudyn_fixed_step import solve_fixed_step

from .geometry import PROBLEMS, Problem


def run(problem: Problem | str, h, t_end, omega=None, spectral_radius=0.9, **params):
    """(t, {point: (n, 3) world positions, m}, CPU seconds of the solve). `omega`: an initial rigid rotation
    about +z of the whole mechanism (rad/s; the governor's start), else at rest."""
    import exudyn as exu
    from exudyn.utilities import ObjectGround, RigidBodyInertia, SensorBody

    if isinstance(problem, str):
        problem = PROBLEMS[problem](**params)
    sc = exu.SystemContainer()
    mbs = sc.AddSystem()
    number = {"ground": mbs.AddObject(ObjectGround())}
    w = np.array([0.0, 0.0, omega or 0.0])
    for j in problem.joints:
        b = problem.bodies[j.child]
        number[j.child] = mbs.CreateRigidBody(
            referencePosition=list(j.point), referenceRotationMatrix=np.eye(3),
            inertia=RigidBodyInertia(b.mass, b.inertia, b.com, inertiaTensorAtCOM=True),
            initialVelocity=list(np.cross(w, j.point)), initialAngularVelocity=list(w),
            gravity=list(problem.gravity))
    pairs = [(j.kind, j.parent, j.child, j.point, j.axis) for j in problem.joints]
    pairs += [(c.kind, c.body_a, c.body_b, c.point, c.axis) for c in problem.closures]
    for kind, a, b, point, axis in pairs:
        bodies = [number[a], number[b]]
        if kind == "revolute":
            mbs.CreateRevoluteJoint(itemNumbers=bodies, position=list(point), axis=list(axis), show=False)
        elif kind == "prismatic":
            mbs.CreatePrismaticJoint(itemNumbers=bodies, position=list(point), axis=list(axis), show=False)
        elif kind == "spherical":
            mbs.CreateSphericalJoint(itemNumbers=bodies, position=list(point), show=False)
        else:
            raise ValueError(f"joint kind {kind} is not modelled in Exudyn here")
    for pa, pb, k, c, rest in problem.springs:
        (ba, la), (bb, lb) = problem.points[pa], problem.points[pb]
        mbs.CreateSpringDamper(itemNumbers=[number[ba], number[bb]], localPosition0=list(la),
                               localPosition1=list(lb), referenceLength=rest, stiffness=k, damping=c, show=False)
    sensors = {name: mbs.AddSensor(SensorBody(bodyNumber=number[body], localPosition=list(local), storeInternal=True,
                                              outputVariableType=exu.OutputVariableType.Position))
               for name, (body, local) in problem.points.items()}
    mbs.Assemble()
    ok, cpu = solve_fixed_step(mbs, h, t_end, spectral_radius, exu.LinearSolverType.EigenDense)
    if not ok:
        raise RuntimeError(f"Exudyn's solver failed on {problem.name} (h = {h:g})")
    data = {name: mbs.GetSensorStoredData(s) for name, s in sensors.items()}
    t = next(iter(data.values()))[:, 0]
    return t, {name: d[:, 1:4] for name, d in data.items()}, cpu
