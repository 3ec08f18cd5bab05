"""Reference runs of a rolling disc in Exudyn itself (ObjectConnectorRollingDiscPenalty), for tests.

`run_disc(DiscCase(...), dt=...)` builds, in Exudyn, a rigid disc (ObjectRigidBody on a NodeRigidBodyEP)
with its axle along the body x axis on the ground plane z = 0, connected to the ground by
ObjectConnectorRollingDiscPenalty, with gravity 9.81 m/s^2 along -z and an optional body-fixed torque -T
about the axle (positive T drives the untilted disc towards +y). The disc is tilted about the world y axis
by `tilt` (a positive tilt lowers the axle's +x end) and starts with its centre above the origin at the
static penetration m g / k, with the given velocity and angular velocity (world frame).

Exudyn's implicit solver (generalized-alpha, spectral radius 0.9 by default; 1.0 is the trapezoidal
rule) runs with the fixed step `dt`; the result is sampled on the uniform grid t = 0, dt_out, ..., t_end.

The returned `DiscRun` holds Exudyn's raw outputs and, mapped to mechsym's conventions (see
docs/rolling-disc.md), the columns of `mechsym disc`:
    f_lat  =  ForceLocal[0]   along the axle's projection on the plane (Exudyn's w_lat)
    f_long = -ForceLocal[1]   along the direction of rolling (Exudyn's w2 points against it)
    f_n    =  ForceLocal[2]   along +z, positive when pressing
    slip_lat = VelocityLocal[0], slip_long = -VelocityLocal[1]
(forces on the disc; Exudyn's ForceLocal leaves out the rolling friction).

Results are cached: in-process, and on disk as .npz under $MECHSYM_EXUDYN_CACHE (default
~/.cache/mechsym/exudyn), keyed by the case, the solver settings and Exudyn's version. Set
MECHSYM_EXUDYN_CACHE=off to disable the disk cache.

Run as a script to reproduce the convergence study of docs/rolling-disc.md:
    python -m tests.reference.exudyn_disc [--no-cache]
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

G = 9.81

__all__ = ["DiscCase", "DiscRun", "SolverSettings", "run_disc", "convergence_table", "build_disc",
           "connector_outputs", "generalized_forces", "euler_parameter_torque", "exudyn_available",
           "CASES", "EXTRA_CASES", "STEPS", "REFERENCE_STEP"]


def exudyn_available():
    try:
        import exudyn  # noqa: F401
    except ImportError:
        return False
    return True


@dataclass(frozen=True)
class DiscCase:
    """A disc on the plane z = 0; SI units, vectors in the world frame."""

    mass: float = 1.0
    radius: float = 0.2
    inertia: tuple = (0.02, 0.01, 0.01)       # principal, about body x (the axle), y, z
    stiffness: float = 1e5
    damping: float = 1e3
    mu: tuple = (0.3, 0.3)                     # (lateral, longitudinal) = Exudyn's dryFriction
    zone: float = 1e-3                         # v_mu, dryFrictionProportionalZone
    linear_zone: bool = False                  # useLinearProportionalZone
    viscous: tuple = (0.0, 0.0)                # viscousFriction (s/m)
    friction_angle: float = 0.0                # dryFrictionAngle (rad)
    rolling_friction: float = 0.0              # rollingViscousFriction (s/m)
    tilt: float = 0.0                          # about world y; positive lowers the axle's +x end
    v0: tuple = (0.0, 0.0, 0.0)
    omega0: tuple = (0.0, 0.0, 0.0)
    torque: float = 0.0                        # body-fixed torque -T about the axle
    t_end: float = 1.0
    gravity: float = G

    @property
    def penetration(self):
        return self.mass * self.gravity / self.stiffness

    def start_position(self):
        """Centre above the origin, the lowest rim point at the static penetration m g / k."""
        return np.array([0.0, 0.0, self.radius * np.cos(self.tilt) - self.penetration])

    def rotation(self):
        c, s = np.cos(self.tilt), np.sin(self.tilt)
        return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


#: The three reference cases of issue 7 (disc 1 kg, r = 0.2 m, I = diag(0.02, 0.01, 0.01), k = 1e5,
#: d = 1e3, v_mu = 1e-3).
CASES = {
    "a_rolling": DiscCase(mu=(0.3, 0.3), v0=(0.0, 1.0, 0.0), omega0=(-5.0, 0.0, 0.0)),
    "b_sliding": DiscCase(mu=(0.2, 0.2), v0=(0.0, 2.0, 0.0)),
    "c_driven": DiscCase(mu=(0.3, 0.3), torque=0.5),
}

#: Further cases (not in the issue): a disc tilted by 0.1 rad rolling off at 1 m/s; it leans and curves.
EXTRA_CASES = {
    "d_tilted": DiscCase(mu=(0.3, 0.3), tilt=0.1, v0=(0.0, 1.0, 0.0), omega0=(-5.0, 0.0, 0.0)),
}

#: The step sizes of the convergence study; 3.125e-5 s is the reference step.
STEPS = (1e-4, 5e-5, 3.125e-5, 1.5625e-5)
REFERENCE_STEP = 3.125e-5


@dataclass(frozen=True)
class SolverSettings:
    spectral_radius: float = 0.9               # generalized-alpha; 1.0 = trapezoidal rule
    newton_rtol: float = 1e-8
    newton_atol: float = 1e-10
    discontinuous_tol: float = 1e-9            # N: Exudyn's default 1 N is far too coarse here
    discontinuous_max: int = 50
    modified_newton: bool = True               # Exudyn's default; 2x faster here, same result to 1e-8


@dataclass
class DiscRun:
    """Exudyn's result on the uniform grid `t` (arrays have len(t) rows)."""

    case: DiscCase
    dt: float
    t: np.ndarray
    position: np.ndarray          # centre, world
    velocity: np.ndarray          # centre, world
    omega: np.ndarray             # angular velocity, world
    rotation: np.ndarray          # n x 3 x 3 body-to-world rotation matrices
    contact_point: np.ndarray     # connector output Position
    force_local: np.ndarray       # connector output ForceLocal, Exudyn's J1 = (w_lat, w2, n)
    velocity_local: np.ndarray    # connector output VelocityLocal (slip of the disc's contact point in J1)
    trail_velocity: np.ndarray    # connector output Velocity (velocity of the trail, world)
    wall_time: float              # seconds spent in SolveDynamic (the run that produced the data)
    exudyn_version: str = ""
    settings: dict = field(default_factory=dict)

    # mechsym's columns (docs/rolling-disc.md)
    @property
    def f_lat(self):
        return self.force_local[:, 0]

    @property
    def f_long(self):
        return -self.force_local[:, 1]

    @property
    def f_n(self):
        return self.force_local[:, 2]

    @property
    def slip_lat(self):
        return self.velocity_local[:, 0]

    @property
    def slip_long(self):
        return -self.velocity_local[:, 1]

    def columns(self):
        """mechsym disc's CSV columns as a dict of 1-D arrays."""
        out = {"t": self.t}
        for i, a in enumerate("xyz"):
            out[a] = self.position[:, i]
        for i, a in enumerate("xyz"):
            out["v" + a] = self.velocity[:, i]
        for i, a in enumerate("xyz"):
            out["w" + a] = self.omega[:, i]
        out.update(f_lat=self.f_lat, f_long=self.f_long, f_n=self.f_n,
                   slip_lat=self.slip_lat, slip_long=self.slip_long)
        return out


# ---------------------------------------------------------------- building the model

def build_disc(case: DiscCase, *, position=None, velocity=None, rotation=None, omega=None, data=None,
               gravity=True, plane_point=(0.0, 0.0, 0.0), plane_normal=(0.0, 0.0, 1.0)):
    """Build the disc in a fresh Exudyn system; returns (SC, mbs, items dict). State defaults: the case's
    start. `data` = the connector's 3 data coordinates (slip lat, slip long in J1, gap); None = consistent
    with the state, obtained from Exudyn's own outputs. plane_point (the ground marker's position) and
    the unit plane_normal are for probing the law only: the runs use the plane z = 0."""
    import exudyn as exu
    import exudyn.itemInterface as ii
    from exudyn.rigidBodyUtilities import GetRigidBodyNode

    position = case.start_position() if position is None else np.asarray(position, float)
    velocity = np.asarray(case.v0 if velocity is None else velocity, float)
    rotation = case.rotation() if rotation is None else np.asarray(rotation, float)
    omega = np.asarray(case.omega0 if omega is None else omega, float)

    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    node = GetRigidBodyNode(exu.NodeType.RotationEulerParameters, position=list(position),
                            velocity=list(velocity), rotationMatrix=rotation.tolist(),
                            angularVelocity=list(omega))
    n_body = mbs.AddNode(node)
    inertia6 = [case.inertia[0], case.inertia[1], case.inertia[2], 0.0, 0.0, 0.0]  # xx,yy,zz,yz,xz,xy
    o_body = mbs.AddObject(ii.ObjectRigidBody(mass=case.mass, inertia=inertia6, nodeNumber=n_body))
    m_body = mbs.AddMarker(ii.MarkerNodeRigid(nodeNumber=n_body))
    o_ground = mbs.AddObject(ii.ObjectGround())
    m_ground = mbs.AddMarker(ii.MarkerBodyRigid(bodyNumber=o_ground, localPosition=list(plane_point)))
    data0 = [0.0, 0.0, 0.0] if data is None else list(data)
    n_data = mbs.AddNode(ii.NodeGenericData(initialCoordinates=data0,
                                            numberOfDataCoordinates=3))
    o_disc = mbs.AddObject(ii.ObjectConnectorRollingDiscPenalty(
        markerNumbers=[m_ground, m_body], nodeNumber=n_data, discRadius=case.radius,
        discAxis=[1.0, 0.0, 0.0], planeNormal=list(plane_normal),
        dryFriction=list(case.mu), dryFrictionProportionalZone=case.zone,
        useLinearProportionalZone=bool(case.linear_zone), viscousFriction=list(case.viscous),
        dryFrictionAngle=case.friction_angle, rollingViscousFriction=case.rolling_friction,
        contactStiffness=case.stiffness, contactDamping=case.damping,
        visualization=ii.VObjectConnectorRollingDiscPenalty(show=False)))
    if gravity:
        m_mass = mbs.AddMarker(ii.MarkerBodyMass(bodyNumber=o_body))
        mbs.AddLoad(ii.LoadMassProportional(markerNumber=m_mass, loadVector=[0.0, 0.0, -case.gravity]))
    if case.torque:
        mbs.AddLoad(ii.LoadTorqueVector(markerNumber=m_body, loadVector=[-case.torque, 0.0, 0.0],
                                        bodyFixed=True))
    items = dict(node=n_body, body=o_body, marker=m_body, data_node=n_data, connector=o_disc)
    mbs.Assemble()
    if data is None:
        # Exudyn's connector acts only where its *stored* gap is negative and rubs only along a stored,
        # non-zero slip: start it consistent with the initial state, read from Exudyn itself.
        vl = np.array(mbs.GetObjectOutput(o_disc, exu.OutputVariableType.VelocityLocal))
        pc = np.array(mbs.GetObjectOutput(o_disc, exu.OutputVariableType.Position))
        gap = float(np.dot(pc, plane_normal))           # Exudyn's Position output is pC - p0
        mbs.SetNodeParameter(n_data, "initialCoordinates", [float(vl[0]), float(vl[1]), gap])
        mbs.Assemble()
    return SC, mbs, items


def connector_outputs(mbs, connector):
    """Exudyn's connector outputs in the current (initial) configuration: a dict of numpy arrays."""
    import exudyn as exu

    O = exu.OutputVariableType
    out = {name: np.array(mbs.GetObjectOutput(connector, getattr(O, name)))
           for name in ("Position", "Velocity", "VelocityLocal", "ForceLocal", "RotationMatrix")}
    out["RotationMatrix"] = out["RotationMatrix"].reshape(3, 3)
    return out


def generalized_forces(mbs, connector):
    """The connector's share of Exudyn's ODE2 right-hand side in the initial configuration (the system's
    generalized forces with the connector minus those without it, which removes the body's gyroscopic
    terms): [fx, fy, fz, q0, q1, q2, q3] for the disc's Euler-parameter node, q = 2 G^T torque."""
    import exudyn as exu

    settings = exu.SimulationSettings()
    settings.solution.file.write = False  # no solution/ folder in the working directory

    def rhs():
        solver = exu.MainSolverImplicitSecondOrder()
        solver.InitializeSolver(mbs, settings)
        solver.ComputeODE2RHS(mbs)
        return np.array(solver.GetSystemResidual())[:7]

    with_connector = rhs()
    mbs.SetObjectParameter(connector, "activeConnector", False)
    try:
        without = rhs()
    finally:
        mbs.SetObjectParameter(connector, "activeConnector", True)
    return with_connector - without


def euler_parameter_torque(rotation, q):
    """The torque (world frame) whose generalized force on Euler parameters p is q = 2 G(p)^T torque."""
    from exudyn.rigidBodyUtilities import RotationMatrix2EulerParameters

    p0, p1, p2, p3 = RotationMatrix2EulerParameters(np.asarray(rotation, float))
    g = np.array([[-p1, p0, -p3, p2], [-p2, p3, p0, -p1], [-p3, -p2, p1, p0]])
    return 0.5 * g @ np.asarray(q, float)


# ---------------------------------------------------------------- running it

def _settings(case, dt, dt_out, s: SolverSettings):
    import exudyn as exu

    ss = exu.SimulationSettings()
    ti = ss.timeIntegration
    ti.endTime = case.t_end
    ti.numberOfSteps = int(round(case.t_end / dt))
    ti.adaptiveStep = False
    ti.automaticStepSize = False
    ti.verboseMode = 0
    ti.generalizedAlpha.spectralRadius = s.spectral_radius
    ti.generalizedAlpha.computeInitialAccelerations = True
    ti.newton.relativeTolerance = s.newton_rtol
    ti.newton.absoluteTolerance = s.newton_atol
    ti.newton.useModifiedNewton = s.modified_newton
    ti.newton.maxIterations = 50
    ti.discontinuous.iterationTolerance = s.discontinuous_tol
    ti.discontinuous.maxIterations = s.discontinuous_max
    ti.discontinuous.ignoreMaxIterations = True
    ss.solution.file.write = False
    ss.solution.sensors.writePeriod = dt_out
    ss.displayStatistics = False
    ss.displayComputationTime = False
    return ss


def _simulate(case: DiscCase, dt: float, dt_out: float, s: SolverSettings):
    import exudyn as exu
    import exudyn.itemInterface as ii

    SC, mbs, it = build_disc(case)
    O = exu.OutputVariableType
    sensors = {}
    for name, var in (("position", O.Position), ("velocity", O.Velocity), ("omega", O.AngularVelocity),
                      ("rotation", O.RotationMatrix)):
        sensors[name] = mbs.AddSensor(ii.SensorBody(bodyNumber=it["body"], outputVariableType=var,
                                                    writeToFile=False, storeInternal=True))
    for name, var in (("contact_point", O.Position), ("force_local", O.ForceLocal),
                      ("velocity_local", O.VelocityLocal), ("trail_velocity", O.Velocity)):
        sensors[name] = mbs.AddSensor(ii.SensorObject(objectNumber=it["connector"], outputVariableType=var,
                                                      writeToFile=False, storeInternal=True))
    mbs.Assemble()
    ss = _settings(case, dt, dt_out, s)
    t0 = time.perf_counter()
    ok = mbs.SolveDynamic(ss, solverType=exu.DynamicSolverType.GeneralizedAlpha)
    wall = time.perf_counter() - t0
    if ok is False:
        raise RuntimeError(f"Exudyn's solver failed for {case} with dt = {dt}")
    data = {name: np.array(mbs.GetSensorStoredData(sn)) for name, sn in sensors.items()}
    t = data["position"][:, 0]
    n = int(round(case.t_end / dt_out)) + 1
    grid = np.linspace(0.0, case.t_end, n)
    # Exudyn stores the initial state and then every step whose time has passed the next write time
    right = np.clip(np.searchsorted(t, grid), 1, len(t) - 1)          # the stored sample nearest each grid time
    keep = np.where(np.abs(t[right - 1] - grid) <= np.abs(t[right] - grid), right - 1, right)
    if np.max(np.abs(t[keep] - grid)) > 1e-9 * max(1.0, case.t_end):
        raise RuntimeError(f"Exudyn's sensor times do not hit the output grid (dt = {dt}, dt_out = {dt_out})")
    out = {name: a[keep, 1:] for name, a in data.items()}
    out["rotation"] = out["rotation"].reshape(-1, 3, 3)
    return grid, out, wall


_memory = {}


def _cache_dir():
    where = os.environ.get("MECHSYM_EXUDYN_CACHE", "")
    if where.lower() in ("off", "0", "no", "false"):
        return None
    return Path(where) if where else Path.home() / ".cache" / "mechsym" / "exudyn"


def _key(case, dt, dt_out, s):
    import exudyn as exu

    blob = json.dumps({"case": dataclasses.asdict(case), "dt": dt, "dt_out": dt_out,
                       "settings": dataclasses.asdict(s), "exudyn": exu.__version__, "v": 1},
                      sort_keys=True, default=list)
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


def run_disc(case: DiscCase, dt: float = REFERENCE_STEP, *, dt_out: float | None = None,
             settings: SolverSettings = SolverSettings(), cache: bool = True) -> DiscRun:
    """Run `case` in Exudyn with the fixed step dt; sample on the grid of step dt_out (default
    t_end/1000, which must be a multiple of dt). Cached unless cache=False (then always re-run)."""
    import exudyn as exu

    dt_out = case.t_end / 1000 if dt_out is None else dt_out
    ratio = dt_out / dt
    if abs(ratio - round(ratio)) > 1e-9 * ratio:
        raise ValueError(f"dt_out = {dt_out} must be a multiple of dt = {dt}")
    key = _key(case, dt, dt_out, settings)
    if cache and key in _memory:
        return _memory[key]
    folder = _cache_dir() if cache else None
    path = folder / f"disc_{key}.npz" if folder else None
    if path is not None and path.exists():
        z = np.load(path)
        run = DiscRun(case=case, dt=dt, t=z["t"], position=z["position"], velocity=z["velocity"],
                      omega=z["omega"], rotation=z["rotation"], contact_point=z["contact_point"],
                      force_local=z["force_local"], velocity_local=z["velocity_local"],
                      trail_velocity=z["trail_velocity"], wall_time=float(z["wall_time"]),
                      exudyn_version=str(z["exudyn_version"]), settings=dataclasses.asdict(settings))
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            t, out, wall = _simulate(case, dt, dt_out, settings)
        run = DiscRun(case=case, dt=dt, t=t, wall_time=wall, exudyn_version=exu.__version__,
                      settings=dataclasses.asdict(settings), **out)
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp.npz")
            np.savez(tmp, t=run.t, position=run.position, velocity=run.velocity, omega=run.omega,
                     rotation=run.rotation, contact_point=run.contact_point, force_local=run.force_local,
                     velocity_local=run.velocity_local, trail_velocity=run.trail_velocity,
                     wall_time=run.wall_time, exudyn_version=run.exudyn_version)
            os.replace(tmp, path)
    if cache:
        _memory[key] = run
    return run


# ---------------------------------------------------------------- convergence study

def _trajectory(run):
    return np.hstack([run.position, run.velocity, run.omega])


def _forces(run):
    return np.column_stack([run.f_lat, run.f_long, run.f_n])


def convergence_table(steps=STEPS, cases=CASES, settings=SolverSettings(), cache=True):
    """Rows (case, dt, wall time, max|traj - traj(dt/2)| , same norm-wise, max|f - f(dt/2)|, norm-wise)."""
    rows = []
    for name, case in cases.items():
        runs = [run_disc(case, dt, settings=settings, cache=cache) for dt in steps]
        for a, b in zip(runs, runs[1:] + [None]):
            if b is None:
                rows.append((name, a.dt, a.wall_time, None, None, None, None))
                continue
            ta, tb, fa, fb = _trajectory(a), _trajectory(b), _forces(a), _forces(b)
            dtraj = float(np.max(np.abs(ta - tb)))
            dforce = float(np.max(np.abs(fa - fb)))
            rows.append((name, a.dt, a.wall_time, dtraj, dtraj / float(np.max(np.abs(tb))),
                         dforce, dforce / float(np.max(np.abs(fb)))))
    return rows


def main(argv=None):
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-cache", action="store_true", help="re-run Exudyn (wall times are then fresh)")
    ap.add_argument("--spectral-radius", type=float, default=SolverSettings.spectral_radius)
    ap.add_argument("--extra", action="store_true", help="also the cases of EXTRA_CASES")
    args = ap.parse_args(argv)
    cases = {**CASES, **EXTRA_CASES} if args.extra else CASES
    rows = convergence_table(cases=cases, settings=SolverSettings(spectral_radius=args.spectral_radius),
                             cache=not args.no_cache)
    print(f"{'case':10s} {'dt':>10s} {'wall s':>8s} {'max|dtraj|':>11s} {'rel':>9s} "
          f"{'max|dF|':>10s} {'rel':>9s}")
    for name, dt, wall, dtr, rtr, df, rf in rows:
        if dtr is None:
            print(f"{name:10s} {dt:10.4g} {wall:8.3f}")
        else:
            print(f"{name:10s} {dt:10.4g} {wall:8.3f} {dtr:11.3e} {rtr:9.2e} {df:10.3e} {rf:9.2e}")


if __name__ == "__main__":
    main()
