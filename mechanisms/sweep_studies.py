"""The shipped models' studies for `mechsym sweep` and mechsym.studies.sweep: picklable callables
f(system, params) -> {name: number} with their command-line options (registered in mechanisms.REGISTRY).

    mechsym sweep start-torque pasibot --param density=1:2:3 --out st.csv
    mechsym sweep min-friction pasibot --omega 3 --param l8=0.025,0.03 --out mu.csv
    mechsym sweep optimize ugv --criterion peak-torque --tracks bump,step --param m_body=250:350:3 --out o.csv

Each class names its model (MODEL), its result columns (`names`), its options (`configure`, `from_args`).
A study builds what it needs from the model's own modules (PASIBOT's two support builds, the UGV's
statics), which cache them per process; `prepare` fills those caches (and the C cache) once in the calling
process before any task leaves.
"""
from __future__ import annotations

from dataclasses import dataclass

from mechsym.app.options import number, positive_int
from mechsym.core.errors import InputError


@dataclass(frozen=True)
class StartTorque:
    """PASIBOT: the smallest constant crank torque that carries the biped through a step from rest
    (bisection on forward runs, tol in N m)."""

    tol: float = 1e-5
    backend: str = "c"
    MODEL = "pasibot"
    HELP = "PASIBOT start torque (bisection on forward runs) per parameter set"

    @property
    def names(self):
        return ["start_torque"]

    @staticmethod
    def configure(p):
        p.add_argument("--tol", type=number, default=1e-5, help="bisection tolerance [N m]")

    @classmethod
    def from_args(cls, args):
        if not args.tol > 0:
            raise InputError(f"--tol must be positive, got {args.tol}")
        return cls(args.tol, args.backend)

    def prepare(self, system):
        from mechanisms import pasibot as pb

        for leg in ("unprimed", "primed"):
            pb.system("foot", leg, self.backend)

    def __call__(self, system, params):
        from mechanisms import pasibot as pb
        from mechanisms.pasibot_study import start_torque

        pb.check_params(params)
        return {"start_torque": start_torque(params, tol=self.tol, backend=self.backend)}


@dataclass(frozen=True)
class MinFriction:
    """PASIBOT: the smallest friction coefficient (mu_s = mu_k) without foot slip at a crank speed."""

    omega: float = 3.0
    steps: int = 1
    tol: float = 1e-4
    backend: str = "c"
    MODEL = "pasibot"
    HELP = "PASIBOT minimum friction without slip (bisection on slip runs) per parameter set"

    @property
    def names(self):
        return ["min_friction"]

    @staticmethod
    def configure(p):
        p.add_argument("--omega", type=number, default=3.0, help="crank speed [rad/s]")
        p.add_argument("--steps", type=positive_int, default=1, help="steps simulated per trial")
        p.add_argument("--tol", type=number, default=1e-4, help="bisection tolerance on mu")

    @classmethod
    def from_args(cls, args):
        if not args.tol > 0:
            raise InputError(f"--tol must be positive, got {args.tol}")
        return cls(args.omega, args.steps, args.tol, args.backend)

    prepare = StartTorque.prepare

    def __call__(self, system, params):
        from mechanisms import pasibot as pb
        from mechanisms.pasibot_study import min_friction

        pb.check_params(params)
        return {"min_friction": min_friction(self.omega, params, self.steps, tol=self.tol, backend=self.backend)}


@dataclass(frozen=True)
class Optimize:
    """UGV: the optimal leg-angle schedule's criterion value on each of several tracks (columns
    value_TRACK, e.g. value_bump), per vehicle parameter set."""

    tracks: tuple = ("bump",)
    criterion: str = "torque-variation"
    mu: float = 0.6
    samples: int = 81
    MODEL = "ugv"
    needs_system = False  # the UGV's statics are their own build, not a derived linkage
    HELP = "UGV leg-angle optimisation over several tracks per parameter set"

    @property
    def names(self):
        return [f"value_{_column(t)}" for t in self.tracks]

    @staticmethod
    def configure(p):
        p.add_argument("--criterion", default="torque-variation",
                       choices=["torque-variation", "peak-torque", "energy", "grip"])
        p.add_argument("--tracks", default="bump", help="comma-separated shipped tracks (bump, step, washboard, ramp)")
        p.add_argument("--mu", type=number, default=0.6, help="friction coefficient (no slip: |F| <= mu N)")
        p.add_argument("--samples", type=positive_int, default=81, help="track positions per optimisation")

    @classmethod
    def from_args(cls, args):
        from mechanisms.tracks import SHIPPED

        tracks = tuple(t.strip() for t in args.tracks.split(",") if t.strip())
        unknown = [t for t in tracks if t not in SHIPPED]
        if not tracks or unknown:
            raise InputError(f"unknown track '{(unknown or [''])[0]}' (shipped: {', '.join(SHIPPED)})")
        return cls(tracks, args.criterion, args.mu, args.samples)

    def __call__(self, system, params):
        from mechanisms import ugv_optimize as uo
        from mechanisms import ugv_study as us

        vehicle = us.Vehicle(params)
        return {f"value_{_column(t)}": uo.optimize(t, self.criterion, self.mu, samples=self.samples,
                                                   vehicle=vehicle).value for t in self.tracks}


def _column(name):
    return "".join(c if c.isalnum() else "_" for c in name)
