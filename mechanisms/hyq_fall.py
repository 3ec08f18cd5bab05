"""`mechsym hyq fall`: HyQ released from the standing pose with no ground, its joints held at the pose by
a PD law tau = kp (q* - q) - kd qd (the base is free): the trunk falls at g while the legs keep their
shape. Writes the columns of docs/conventions.md (base.*, joints, speeds, com.*) as CSV."""
from __future__ import annotations

import numpy as np

from mechsym.core.errors import InputError

HELP = "free fall from the standing pose with a PD hold of the joints"


def configure(parser):
    from mechsym.app.options import number, param
    from mechsym.app.options import backend_group, output_group, plot_group, time_group, tolerance_group

    time_group(parser, 1.0)
    tolerance_group(parser)
    parser.add_argument("--kp", type=number, default=500.0, help="PD stiffness [N m/rad]")
    parser.add_argument("--kd", type=number, default=20.0, help="PD damping [N m s/rad]")
    parser.add_argument("--height", type=number, default=0.5775, help="initial base height [m]")
    parser.add_argument("--param", action="append", type=param, default=[], metavar="NAME=VALUE")
    backend_group(parser)
    output_group(parser, help="CSV file (default: the table on stdout)")
    plot_group(parser, help="PNG/SVG of the heights of the base and the centre of mass")


def fall(t_end=1.0, dt=None, rtol=1e-9, atol=None, kp=500.0, kd=20.0, height=0.5775, params=None, backend=None):
    from mechanisms import hyq
    from mechsym.spatial.run import simulate

    if kp < 0 or kd < 0:
        raise InputError(f"kp and kd must be non-negative, got {kp}, {kd}")
    system = hyq.system(backend)
    q0 = hyq.standing(height)
    target = q0[7:]

    def torque(t, q, v):
        tau = np.zeros(system.nv)
        tau[6:] = kp * (target - q[7:]) - kd * v[6:]
        return tau

    return simulate(system, q0, np.zeros(system.nv), t_end, dt=dt, rtol=rtol, atol=atol, torque=torque,
                    params=params)


def run(args) -> int:
    from mechsym.app.options import check_command_outputs, run_options, write_outputs

    check_command_outputs(args)
    run_options(args)
    table = fall(args.t_end, args.dt, args.rtol, args.atol, args.kp, args.kd, args.height, dict(args.param),
                 args.backend)
    write_outputs(table, args.out, drawings=[(args.plot, lambda p: table.plot(p, "t", ["base.z", "com.z"], ylabel="m"))],
                  stdout=True)
    return 0
