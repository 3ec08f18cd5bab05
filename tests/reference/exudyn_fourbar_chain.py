"""The N-four-bar chain (IFToMM benchmark A02) in Exudyn, for the benchmark beside mechsym.

Redundant coordinates: each of the 2N+1 bars is an ObjectRigidBody2D on a NodeRigidBody2D (x, y, angle of
its centre), pinned by ObjectJointRevolute2D (ground pivots Ai at (i, 0); crank i from Ai to Bi, coupler i
from B(i-1) to Bi), gravity 9.81 m/s^2 along -y (LoadMassProportional). The start is the benchmark's:
every crank vertical, B0 moving along +x at 1 m/s. Exudyn's implicit solver (generalized-alpha, index 3,
spectral radius 0.9, Exudyn's default; at 1 the run fails at an aligned position) runs with the fixed step `h`; crank0's angle is
returned on the uniform grid of the steps (from its centre's position).
"""
from __future__ import annotations

import numpy as np

from .exudyn_fixed_step import solve_fixed_step


def run_chain(n_loops, h, t_end=20.0, rho_inf=0.9, length=1.0, mass=1.0, g=9.81):
    """(t, theta of crank0, CPU seconds of the solve) with the fixed step h; raises RuntimeError if the
    solver fails."""
    import exudyn as exu
    from exudyn.utilities import (InertiaRodX, MarkerBodyPosition, NodeRigidBody2D, ObjectGround,
                                  ObjectJointRevolute2D, ObjectRigidBody2D, LoadMassProportional,
                                  MarkerBodyMass, SensorBody)

    sc = exu.SystemContainer()
    mbs = sc.AddSystem()
    ground = mbs.AddObject(ObjectGround())
    inertia = mass * length**2 / 12
    omega0 = -1.0 / length  # B0 along +x at 1 m/s with the crank vertical

    def bar(centre, angle, v, w):
        node = mbs.AddNode(NodeRigidBody2D(referenceCoordinates=[centre[0], centre[1], angle],
                                           initialVelocities=[v[0], v[1], w]))
        body = mbs.AddObject(ObjectRigidBody2D(mass=mass, inertia=inertia, nodeNumber=node))
        mbs.AddLoad(LoadMassProportional(markerNumber=mbs.AddMarker(MarkerBodyMass(bodyNumber=body)),
                                         loadVector=[0, -g, 0]))
        return body

    def pin(body1, local1, body2, local2):
        m1 = mbs.AddMarker(MarkerBodyPosition(bodyNumber=body1, localPosition=[*local1, 0]))
        m2 = mbs.AddMarker(MarkerBodyPosition(bodyNumber=body2, localPosition=[*local2, 0]))
        mbs.AddObject(ObjectJointRevolute2D(markerNumbers=[m1, m2]))

    half = 0.5 * length
    cranks = [bar((i * length, half), np.pi / 2, (-omega0 * half, 0.0), omega0) for i in range(n_loops + 1)]
    for i, c in enumerate(cranks):
        pin(ground, (i * length, 0.0), c, (-half, 0.0))
    for i in range(1, n_loops + 1):
        coupler = bar(((i - 0.5) * length, length), 0.0, (-omega0 * length, 0.0), 0.0)
        pin(cranks[i - 1], (half, 0.0), coupler, (-half, 0.0))
        pin(coupler, (half, 0.0), cranks[i], (half, 0.0))
    sensor = mbs.AddSensor(SensorBody(bodyNumber=cranks[0], storeInternal=True,
                                      outputVariableType=exu.OutputVariableType.Position))
    mbs.Assemble()
    ok, cpu = solve_fixed_step(mbs, h, t_end, rho_inf, exu.LinearSolverType.EigenSparse)
    if not ok:
        raise RuntimeError(f"Exudyn's solver failed (N = {n_loops}, h = {h:g})")
    data = mbs.GetSensorStoredData(sensor)
    theta = np.unwrap(np.arctan2(data[:, 2], data[:, 1]))
    return data[:, 0], theta, cpu
