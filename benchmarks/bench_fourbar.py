"""Fourbar benchmark: mechsym (numpy and C backends) against sympy.physics.mechanics and PyDy, in one run.

Prints: cold and warm derivation/load, C generation and compile time; per-sample inverse dynamics with
every reaction over 10^5 crank angles on each backend; the sympy.physics.mechanics route (Newton on the
loop constraints and the Kane equation per angle in Python, as usually written and hand-tuned); the PyDy
right-hand side with its lambdify and Cython backends; 2 s of forward motion at rtol 1e-9 on every route;
the flop count of the generated per-sample code and the time it implies at one flop per cycle. Ratios
are against the peers measured in this run, and the issue's targets are marked met or missed.

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

QUICK = "--quick" in sys.argv
N_ANGLES = 10_000 if QUICK else 100_000


def best_of(fn, repeat=5):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def in_fresh_process(code, cache):
    env = dict(os.environ, MECHSYM_CACHE=cache, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def cpu_hz():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("cpu MHz"):
                return float(line.split(":")[1]) * 1e6
    except OSError:
        pass
    return 3.0e9


def main():
    from mechanisms import fourbar
    from mechsym.system import derive

    rows = []

    def row(label, seconds, per=None, ref=None):
        per_text = f"{seconds / per * 1e6:10.3f} us/unit" if per else " " * 18
        ratio = f"   x{ref / seconds:8.1f} vs peer" if ref else ""
        rows.append(f"{label:58s} {seconds:10.4f} s {per_text}{ratio}")
        print(rows[-1], flush=True)

    print(f"fourbar benchmark ({N_ANGLES} crank angles)\n")
    # -- derivation and code generation -----------------------------------------------------------
    cache = tempfile.mkdtemp(prefix="mechsym-bench-cache-")
    t = time.perf_counter()
    derive(fourbar.build())
    row("derive, numpy backend (sympy + lambdify)", time.perf_counter() - t)
    code = ("import time; t = time.perf_counter(); from mechanisms import fourbar; from mechsym.system import derive; "
            "derive(fourbar.build(), 'c'); print(time.perf_counter() - t)")
    row("cold: derive + generate C + compile (fresh process, empty cache)", in_fresh_process(code, cache))
    row("warm: derive + load C from cache (fresh process)", in_fresh_process(code, cache))
    from mechsym.codegen.c_source import generate
    from mechsym.codegen import c_backend

    num = derive(fourbar.build())
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

    n_peer = 2000
    sub = theta[:: N_ANGLES // n_peer][:n_peer]
    peer_times = {}
    for label, scalar in (("numpy lambdify, numpy.linalg.solve", False), ("hand-tuned: math lambdify, Cramer", True)):
        route = oracle.peer_inverse_newton("fourbar", scalar=scalar)
        route(sub[:10], 2.0)
        peer_times[label] = best_of(lambda: route(sub, 2.0), repeat=3) / n_peer
        row(f"peer: Newton + Kane eq. per angle ({label})", peer_times[label] * n_peer, n_peer)
    t_peer = peer_times["numpy lambdify, numpy.linalg.solve"]
    print()
    per_sample = {}
    for system, label in ((num, "numpy"), (c, "C")):
        system.inverse(theta[:100], 2.0)
        t = best_of(lambda: system.inverse(theta, 2.0), repeat=5)
        per_sample[label] = t / N_ANGLES
        row(f"mechsym inverse dynamics, every reaction, {label} backend", t, N_ANGLES, t_peer * N_ANGLES)
    t = best_of(lambda: c.inverse(theta, [1.0, 2.0, 3.0, 4.0, 5.0]), repeat=3)
    row("mechsym C, five speeds at once (linear in omega^2)", t, 5 * N_ANGLES, 5 * t_peer * N_ANGLES)
    a, b = c.inverse(theta, 2.0), num.inverse(theta, 2.0)
    err = max(np.max(np.abs(a[k] - b[k])) / max(np.max(np.abs(b[k])), 1e-300) for k in b.names)
    print(f"  C vs numpy, every column, norm-wise: {err:.2e}")
    ref = oracle.inverse_torque("fourbar", theta[::97], 2.0)
    print(f"  torque vs sympy.physics.mechanics, norm-wise: "
          f"{np.max(np.abs(a['torque'][::97] - ref)) / np.max(np.abs(ref)):.2e}")
    for label, target in (("numpy", 10), ("C", 100)):
        for peer, t in peer_times.items():
            ratio = t / per_sample[label]
            print(f"  target {label} >= {target}x the peer per angle ({peer}): x{ratio:.1f}, "
                  f"{'met' if ratio >= target else 'MISSED'}")
    print()

    # -- flops ----------------------------------------------------------------------------------------
    f = meta["flops"]
    # per sample in the C kernel: a chord step (residual, solve), the Jacobian and its factorisation, two
    # solves for the coefficients, gamma, the applied loads, three transposed solves
    flops = f["phi"] + f["jacobian"] + f["factor"] + 6 * f["solve"] + f["gamma"] + f["applied"]
    hz = cpu_hz()
    print(f"generated per-sample work: about {flops} flops ({f}); at one flop per cycle "
          f"({hz / 1e9:.2f} GHz) that is {flops / hz * 1e6:.3f} us/sample; measured on the C backend "
          f"{per_sample['C'] * 1e6:.3f} us/sample (x{per_sample['C'] * hz / flops:.1f} the limit)")
    print()

    # -- forward dynamics -----------------------------------------------------------------------------
    t_fwd_c = best_of(lambda: c.forward(0.0, 0.0, 0.0, 2.0, rtol=1e-9), repeat=5)
    t_fwd_np = best_of(lambda: num.forward(0.0, 0.0, 0.0, 2.0, rtol=1e-9), repeat=1)
    peers = pydy_peers(theta)
    for label, (t_rhs, t_run) in peers.items():
        row(f"PyDy {label}: right-hand side per call", t_rhs, 1)
        row(f"PyDy {label}: 2 s of motion, solve_ivp DOP853 rtol 1e-9", t_run)
    ref_cython = peers.get("cython", (None, None))[1]
    row("mechsym numpy: 2 s of motion (solve_ivp DOP853, reduced form)", t_fwd_np, None, ref_cython)
    tab = c.forward(0.0, 0.0, 0.0, 2.0, rtol=1e-9)
    row(f"mechsym C: 2 s of motion (DOP853 in C, {tab.nfev} rhs)", t_fwd_c, None, ref_cython)
    print(f"{'':58s} {t_fwd_c / tab.nfev * 1e6:.3f} us per right-hand side, integrator included")
    if ref_cython:
        ratio = ref_cython / t_fwd_c
        print(f"  target C forward >= 5x PyDy Cython: x{ratio:.1f}, {'met' if ratio >= 5 else 'MISSED'}")
    print("\n(ratios: peer time / mechsym time; inverse rows against the per-angle sympy.physics.mechanics"
          " route with numpy.linalg.solve, forward rows against PyDy's Cython backend)")


def pydy_peers(theta):
    """PyDy's ODE function (lambdify and Cython) for the same Kane equations as the oracle."""
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
        t_rhs = best_of(lambda: [rhs(x0, 0.0, r, pvals) for _ in range(n)], repeat=3) / n
        t_run = best_of(lambda: solve_ivp(lambda tt, x: rhs(x, tt, r, pvals), (0, 2.0), x0, method="DOP853",
                                          rtol=1e-9, atol=1e-9), repeat=1)
        out[gen] = (t_rhs, t_run)
    return out


if __name__ == "__main__":
    main()
