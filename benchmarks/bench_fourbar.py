"""Fourbar benchmark: mechsym (numpy and C backends) against the strongest peers, in one run.

Prints: cold and warm derivation/load, C generation and compile time; per-sample inverse dynamics with
every reaction over 10^5 crank angles on each backend, beside sympy.physics.mechanics' Kane equations
lambdified over the same arrays (closed-form positions, vectorised: the torque alone); the flop and
transcendental-call count of the generated per-sample code and the time the machine's measured peak
(SIMD width x FMA x clock, from a small C kernel compiled here) implies; 2 s of forward motion on every
route (C with and without the dense solution kept), each with its error against a tight reference (rtol
1e-13) printed beside its time, simulate on C (solve_ivp over the tracked configuration), and PyDy's
lambdify and Cython right-hand sides. Every timed route gets the same number of repeats (best of REPEAT).

    python benchmarks/bench_fourbar.py [--quick]

Needs `pip install -e .[bench]` (PyDy and Cython) for the PyDy rows.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
from timing import best_time as _best_time  # noqa: E402

QUICK = "--quick" in sys.argv
N_ANGLES = 10_000 if QUICK else 100_000
REPEAT = 5
T_END = 2.0
RTOL = 1e-9


def best_of(fn, repeat=REPEAT):
    return _best_time(fn, repeat)


def in_fresh_process(code, cache):
    env = dict(os.environ, MECHSYM_CACHE=cache, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


PEAK_KERNEL = r"""
#include <stdio.h>
#include <time.h>
typedef double v4 __attribute__((vector_size(32)));
int main(void) {
  v4 acc[12], a = {1.0000001, 1.0000001, 1.0000001, 1.0000001}, b = {1e-9, 1e-9, 1e-9, 1e-9};
  for (int i = 0; i < 12; i++) acc[i] = (v4){i, i + 1, i + 2, i + 3};
  long n = 5000000;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (long k = 0; k < n; k++)
    for (int i = 0; i < 12; i++) acc[i] = acc[i] * a + b;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double s = (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec), sum = 0;
  for (int i = 0; i < 12; i++) for (int j = 0; j < 4; j++) sum += acc[i][j];
  printf("%.6e %.17g\n", 2.0 * 4 * 12 * n / s, sum);
  return 0;
}
"""


PEAK_RUNS = 25  # short runs (about 20 ms each), the best kept: on a shared machine one of them gets a whole core


def machine_peak():
    """Double-precision flops per second of one core at its best: 12 independent chains of 4-wide fused
    multiply-adds (the dependency chains hide the FMA latency), compiled for this CPU, the best of PEAK_RUNS
    short runs. None without gcc."""
    from mechsym.codegen import c_backend

    cc = c_backend.compiler()
    if cc is None:
        return None
    with tempfile.TemporaryDirectory() as d:
        src, exe = Path(d) / "peak.c", Path(d) / "peak"
        src.write_text(PEAK_KERNEL)
        subprocess.run([cc, "-O2", "-march=native", "-o", str(exe), str(src)], check=True, capture_output=True)
        return max(float(subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split()[0])
                   for _ in range(PEAK_RUNS))


def kernel_time(system, theta):
    """Best time of the compiled inverse kernel alone over theta at one speed (the columns of every unknown),
    as mechsym.planar.dynamics.inverse calls it."""
    from mechsym.planar.kinematics import STEP_TOL

    solver, lib = system.solver(), system.functions
    q0 = solver.sweep(theta[:1, None]).q[0]
    args = (theta, solver.params, q0, solver.col_scale, STEP_TOL)
    if lib.meta.get("lanes"):
        return best_of(lambda: lib.inverse_columns(*args, coef=[[0.0, 4.0, 1.0]], hmax=solver.step[0]))
    return best_of(lambda: lib.inverse(*args, hmax=solver.step[0]))


def transcendental_calls(system) -> int:
    """Calls of a transcendental function per sample other than the body angles' sines and cosines (which
    the vectorised kernel evaluates as a polynomial, counted as flops): sqrt, atan2, ... left in the
    expressions."""
    import sympy as sp

    con = system.constraints
    trig = {sp.sin(s) for s in con.q} | {sp.cos(s) for s in con.q}
    exprs = list(con.rows) + list(con.gamma) + list(system.equations.applied)
    other = set()
    for e in exprs:
        other |= {f for f in sp.sympify(e).atoms(sp.Function) if f not in trig}
    return len(other)


SIN_COS_FLOPS = 40  # MS_SIN_COS (runtime/ms_lanes.h): the reduction, two degree-6 polynomials, the quadrant


def main():
    from mechanisms import fourbar
    from mechsym import derive

    rows = []

    def row(label, seconds, per=None, ref=None, note=""):
        per_text = f"{seconds / per * 1e6:10.3f} us/unit" if per else " " * 18
        ratio = f"   x{ref / seconds:7.1f} vs peer" if ref else ""
        rows.append(f"{label:62s} {seconds:10.4f} s {per_text}{ratio}{note}")
        print(rows[-1], flush=True)

    print(f"fourbar benchmark ({N_ANGLES} crank angles, best of {REPEAT} for every timed route)\n")
    # -- derivation and code generation -----------------------------------------------------------
    cache = tempfile.mkdtemp(prefix="mechsym-bench-cache-")
    t = time.perf_counter()
    derive(fourbar.build(), backend="numpy")
    row("derive, numpy backend (sympy + lambdify)", time.perf_counter() - t)
    code = ("import time; t = time.perf_counter(); from mechanisms import fourbar; from mechsym import derive; "
            "derive(fourbar.build(), 'c'); print(time.perf_counter() - t)")
    row("cold: derive + generate C + compile (fresh process, empty cache)", in_fresh_process(code, cache))
    row("warm: derive + load C from cache (fresh process)", in_fresh_process(code, cache))
    from mechsym.codegen import c_backend
    from mechsym.codegen.c_source import generate

    num = derive(fourbar.build(), backend="numpy")
    t = time.perf_counter()
    source, meta = generate(num)
    row("  of which generation of C source", time.perf_counter() - t)
    with tempfile.TemporaryDirectory() as d:
        t = time.perf_counter()
        c_backend.write_entry(Path(d) / "entry", source, meta)
        row("  of which compilation", time.perf_counter() - t)
    c = derive(fourbar.build(), "c")

    # -- inverse dynamics ---------------------------------------------------------------------------
    theta = np.linspace(0, 2 * np.pi, N_ANGLES, endpoint=False)
    from oracles import mechanics_models as oracle

    oracle.inverse_torque("fourbar", theta[:10], 2.0)
    t_peer = best_of(lambda: oracle.inverse_torque("fourbar", theta, 2.0)) / N_ANGLES
    row("peer: sympy.physics.mechanics Kane eq. lambdified over arrays (torque)", t_peer * N_ANGLES, N_ANGLES)
    per_sample = {}
    for system, label in ((num, "numpy"), (c, "C")):
        system.inverse(theta[:100], 2.0)
        t = best_of(lambda: system.inverse(theta, 2.0))
        per_sample[label] = t / N_ANGLES
        row(f"mechsym inverse dynamics, every reaction, {label} backend", t, N_ANGLES, t_peer * N_ANGLES)
    per_sample["C kernel"] = kernel_time(c, theta) / N_ANGLES
    row("  of which the C kernel (one ctypes call, no table)", per_sample["C kernel"] * N_ANGLES, N_ANGLES,
        t_peer * N_ANGLES)
    bare = fourbar.build()
    bare.branches.clear()  # no declared branch condition: the kernel checks the sign of det Phi_q instead
    t = kernel_time(derive(bare, "c"), theta)
    row("  the C kernel, no declared branch condition (det Phi_q's sign)", t, N_ANGLES, t_peer * N_ANGLES)
    t = best_of(lambda: c.inverse(theta, [1.0, 2.0, 3.0, 4.0, 5.0]))
    row("mechsym C, five speeds at once (linear in omega^2)", t, 5 * N_ANGLES, 5 * t_peer * N_ANGLES)
    a, b = c.inverse(theta, 2.0), num.inverse(theta, 2.0)
    err = max(np.max(np.abs(a[k] - b[k])) / max(np.max(np.abs(b[k])), 1e-300) for k in b.names)
    print(f"  C vs numpy, every column, norm-wise: {err:.2e}")
    ref = oracle.inverse_torque("fourbar", theta, 2.0)
    print(f"  torque vs sympy.physics.mechanics, norm-wise: {np.max(np.abs(a['torque'] - ref)) / np.max(np.abs(ref)):.2e}")
    print()

    # -- the machine's limit ----------------------------------------------------------------------------
    f = meta["flops"]
    n_angles = len(num.constraints.bodies)
    # per sample in the vectorised kernel (runtime/ms_blocks.h), one Newton iteration per block (the anchor's
    # reach adapts to keep it there): sines and cosines, the residual, the Jacobian and its factorisation, a
    # solve; at the solution the rotated sines and cosines, the Jacobian and its factorisation again; two
    # solves and gamma for the coefficients, the applied loads, three transposed solves, and the combination
    # of the three right-hand sides into one speed's columns
    flops = (SIN_COS_FLOPS * n_angles + f["phi"] + 2 * f["jacobian"] + 2 * f["factor"] + 6 * f["solve"] + f["gamma"]
             + f["applied"] + 6 * n_angles + 5 * meta["nrow"])
    calls = transcendental_calls(num)
    peak = machine_peak()
    print(f"generated per-sample work: about {flops} flops ({f}; sin/cos as {SIN_COS_FLOPS} flops per angle) "
          f"and {calls} other transcendental calls")
    if peak:
        # another transcendental function costs about 20 vector flops per lane: counted as 20 flops each
        limit = (flops + 20 * calls) / peak
        print(f"machine peak, one core (4-wide FMA kernel compiled here): {peak / 1e9:.1f} GFLOP/s; "
              f"the work above at that peak: {limit * 1e6:.4f} us/sample; measured on C: the kernel "
              f"{per_sample['C kernel'] * 1e6:.4f} us/sample ({100 * limit / per_sample['C kernel']:.1f}% of peak), "
              f"the whole call {per_sample['C'] * 1e6:.4f} us/sample ({100 * limit / per_sample['C']:.1f}% of peak)")
    print()

    # -- forward dynamics at equal accuracy -----------------------------------------------------------
    t_ref = np.linspace(0.0, T_END, 201)
    reference = oracle.forward("fourbar", 0.0, 0.0, 0.0, t_ref, rtol=1e-13, atol=1e-13)[0]

    def error(theta_at_ref):
        return np.max(np.abs(theta_at_ref - reference)) / np.max(np.abs(reference))

    def mechsym_run(system):
        tab = system.forward(0.0, 0.0, 0.0, T_END, dt=T_END / 200, rtol=RTOL)
        return tab, error(tab["theta"])

    peers = pydy_peers(reference, t_ref)
    for label, (t_rhs, t_run, err_run) in peers.items():
        row(f"PyDy {label}: right-hand side per call", t_rhs, 1)
        row(f"PyDy {label}: 2 s of motion, solve_ivp DOP853 rtol {RTOL:g}", t_run, note=f"   error {err_run:.1e}")
    ref_cython = peers.get("cython", (None, None, None))[1]
    ref_lambdify = peers.get("lambdify", (None, None, None))[1]
    for system, label, ref_t in ((num, "numpy", ref_lambdify), (c, "C", ref_cython)):
        t_run = best_of(lambda: system.forward(0.0, 0.0, 0.0, T_END, dt=T_END / 200, rtol=RTOL))
        tab, err_run = mechsym_run(system)
        row(f"mechsym {label}: 2 s of motion, DOP853, rtol {RTOL:g} ({tab.nfev} rhs)", t_run, None, ref_t,
            note=f"   error {err_run:.1e}")
    # the dense solution (every step's interpolant) is kept above; without it the C route makes a step's
    # dense output only where the grid or an event needs it
    bare = lambda: c.forward(0.0, 0.0, 0.0, T_END, dt=T_END / 200, rtol=RTOL, dense_output=False)  # noqa: E731
    t_run = best_of(bare)
    row(f"mechsym C, no dense solution kept ({bare().nfev} rhs)", t_run, None, ref_cython,
        note=f"   error {error(bare()['theta']):.1e}")
    # simulate: solve_ivp's DOP853 (as PyDy's routes) over a right-hand side that tracks the configuration,
    # on C one ms_track_rows call per state (CompiledTracker; ms_walk where a stage lies far from the last state)
    from mechsym.planar.simulate import simulate

    sim = lambda: simulate(c, [0.0], [0.0], T_END, dt=T_END / 200, rtol=RTOL)  # noqa: E731
    t_run = best_of(sim)
    run = sim()
    row(f"mechsym C simulate: solve_ivp DOP853, rtol {RTOL:g} ({run.nfev} rhs)", t_run, None, ref_cython,
        note=f"   error {error(run['theta']):.1e}")
    print("\n(ratios: peer time / mechsym time; inverse rows against the vectorised sympy.physics.mechanics "
          "route, the numpy forward row against PyDy's lambdify route, the C forward row against PyDy's "
          "Cython route; errors: max |theta - reference| / max |reference| on a 201-point grid)")


def pydy_peers(reference, t_ref):
    """PyDy's ODE function (lambdify and Cython) for the same Kane equations as the oracle: per-call time,
    2 s run time and the run's error against the reference on the grid t_ref."""
    try:
        from pydy.codegen.ode_function_generators import generate_ode_function
    except ImportError:
        print("PyDy not installed: pip install -e .[bench]")
        return {}
    import sympy.physics.mechanics as me
    from scipy.integrate import solve_ivp

    from oracles import mechanics_models as oracle

    spec = oracle._SPECS["fourbar"]()
    N, q, u, T = spec["N"], spec["q"], spec["u"], spec["T"]
    t = me.dynamicsymbols._t
    loads = [(b.masscenter, -b.mass * spec["g"] * N.y) for b in spec["bodies"]] + [(spec["crank"], T * N.z)]
    kane = me.KanesMethod(N, q_ind=q[:1], u_ind=u[:1], kd_eqs=[qi.diff(t) - ui for qi, ui in zip(q, u)],
                          q_dependent=q[1:], configuration_constraints=spec["config"], u_dependent=u[1:],
                          velocity_constraints=spec["vel"])
    kane.kanes_equations(spec["bodies"], loads)
    names = [str(p) for p in spec["params"]]
    pvals = np.array([oracle.DEFAULTS["fourbar"][n] for n in names])
    pos = oracle.positions("fourbar", np.array([0.0]))
    q0 = [0.0, pos["coupler.angle"][0], pos["rocker.angle"][0]]
    x0 = np.array(q0 + [0.0, 0.0, 0.0])
    out = {}
    for gen in ("lambdify", "cython"):
        try:
            rhs = generate_ode_function(kane.forcing_full, q, u, spec["params"], mass_matrix=kane.mass_matrix_full,
                                        specifieds=[T], generator=gen)
        except Exception as exc:  # a missing compiler for Cython
            print(f"PyDy {gen} unavailable: {type(exc).__name__}: {exc}")
            continue
        r = np.array([0.0])
        rhs(x0, 0.0, r, pvals)
        n = 2000
        t_rhs = best_of(lambda: [rhs(x0, 0.0, r, pvals) for _ in range(n)]) / n

        def run():
            return solve_ivp(lambda tt, x: rhs(x, tt, r, pvals), (0, T_END), x0, method="DOP853",
                             rtol=RTOL, atol=RTOL, dense_output=True)

        t_run = best_of(run)
        theta = run().sol(t_ref)[0]
        out[gen] = (t_rhs, t_run, np.max(np.abs(theta - reference)) / np.max(np.abs(reference)))
    return out


if __name__ == "__main__":
    main()
