"""Benchmark: HyQ's H, bias, the four foot Jacobians and foot biases per state, mechsym's generated C
against Pinocchio in the same run.

    python benchmarks/bench_hyq.py [--states 10000] [--single 2000] [--repeat 5]

Printed:
1. cold: derivation + C generation + compilation into an empty cache; warm: a fresh interpreter loading
   HyQ from the cache (import included); the flop count of the generated functions.
2. mechsym, per state: contact_terms over --states states in one call (the loop inside C), and one state
   at a time from Python (the same entry point); the same batched with every value folded into the
   code (read_urdf's symbolic=(): no run-time parameters).
3. Pinocchio (its Python bindings) per state for the same quantities: crba, nonLinearEffects,
   computeJointJacobians + getFrameJacobian (LOCAL_WORLD_ALIGNED) for the four feet, and
   forwardKinematics(q, v, 0) + getFrameClassicalAcceleration for the four foot biases; each call
   separately and the sum. The same in C++ (benchmarks/pinocchio_loop.cpp, header-only Pinocchio at -O3
   -march=native, built by benchmarks/pinocchio_cpp.py) when Eigen's headers are found (the bench extra's
   cmeel-eigen, or EIGEN_INCLUDE); otherwise the line says why not. Building it takes a few minutes; --no-cpp skips it.
4. The agreement of the two on the timed states (max difference, norm-wise).
Times are the best of --repeat.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
import pinocchio_cpp  # noqa: E402
from timing import best_time as best  # noqa: E402

FEET = ("lf_foot", "lh_foot", "rf_foot", "rh_foot")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--states", type=int, default=10000)
    ap.add_argument("--single", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--no-cpp", action="store_true", help="skip the C++ loop over Pinocchio")
    ap.add_argument("--rounds", type=int, default=3, help="alternations of the C++ loop and mechsym")
    args = ap.parse_args()

    import pinocchio as pin

    from mechanisms import hyq
    from mechsym import derive

    # 1. cold and warm
    with tempfile.TemporaryDirectory() as cache:
        os.environ["MECHSYM_CACHE"] = cache
        t = time.perf_counter()
        system = derive(hyq.build(), contact_frames=FEET)
        cold = time.perf_counter() - t
        t = time.perf_counter()
        system.prepare(batched=True)       # the batched entry points on lanes: the first batch's library
        lanes = time.perf_counter() - t
        code = ("import time; t = time.perf_counter(); from mechanisms import hyq; "
                "s = hyq.system().prepare(batched=True); print(time.perf_counter() - t)")
        warm = min(float(subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                                        env=dict(os.environ, PYTHONPATH=ROOT), check=True).stdout)
                   for _ in range(3))
        flops = system.flops
        print(f"cold derivation + generation + compilation: {cold:.1f} s (target < 60 s); the lanes' library on "
              f"the first batch: {lanes:.1f} s")
        print(f"warm load in a fresh interpreter (imports and the lanes' library included): {warm:.2f} s "
              "(target < 1 s)")
        print(f"flops per state: H + bias + 4 foot Jacobians and biases {flops['contact']}, "
              f"H alone {flops['mass']}, bias alone {flops['bias']}")

        model = pin.buildModelFromUrdf(str(hyq.URDF), pin.JointModelFreeFlyer())
        data = model.createData()
        rng = np.random.default_rng(0)
        n = args.states
        q = np.array([pin.randomConfiguration(model, -np.ones(model.nq), np.ones(model.nq)) for _ in range(n)])
        v = rng.standard_normal((n, model.nv))

        # 2. mechsym
        batched = best(lambda: system.contact_terms(q, v), args.repeat) / n
        folded = derive(hyq.build(symbolic=()), contact_frames=FEET).prepare(batched=True)
        folded_time = best(lambda: folded.contact_terms(q, v), args.repeat) / n
        m = args.single

        def one_by_one():
            for i in range(m):
                system.contact_terms(q[i], v[i])

        single = best(one_by_one, args.repeat) / m
        print(f"mechsym C, batched over {n} states:    {batched * 1e6:8.3f} us per state")
        print(f"mechsym C, one state per Python call:  {single * 1e6:8.3f} us per state")
        print(f"mechsym C, every value folded into the code (symbolic=()), batched: {folded_time * 1e6:.3f} us "
              f"per state, {folded.flops['contact']} flops")

        # 3. Pinocchio through Python
        ids = [model.getFrameId(f) for f in FEET]
        W = pin.LOCAL_WORLD_ALIGNED
        zero = np.zeros(model.nv)

        def timed(label, fn):
            def loop():
                for i in range(m):
                    fn(q[i], v[i])
            t = best(loop, args.repeat) / m
            print(f"  pinocchio {label:58s} {t * 1e6:8.3f} us")
            return t

        print(f"Pinocchio {pin.__version__} (Python bindings), per state over {m} states:")
        t_crba = timed("crba", lambda qi, vi: pin.crba(model, data, qi))
        t_nle = timed("nonLinearEffects", lambda qi, vi: pin.nonLinearEffects(model, data, qi, vi))
        t_jac = timed("computeJointJacobians + 4 getFrameJacobian",
                      lambda qi, vi: (pin.computeJointJacobians(model, data, qi),
                                      [pin.getFrameJacobian(model, data, f, W) for f in ids]))
        t_acc = timed("forwardKinematics(q, v, 0) + 4 getFrameClassicalAcceleration",
                      lambda qi, vi: (pin.forwardKinematics(model, data, qi, vi, zero),
                                      [pin.getFrameClassicalAcceleration(model, data, f, W) for f in ids]))
        total = t_crba + t_nle + t_jac + t_acc
        print(f"  pinocchio total for the same quantities:                     {total * 1e6:8.3f} us")
        print(f"ratio Pinocchio (Python) / mechsym batched: {total / batched:.1f}; / mechsym single: "
              f"{total / single:.2f}")
        run_cpp = "--no-cpp"
        if not args.no_cpp:
            try:
                run_cpp = pinocchio_cpp.runner(pinocchio_cpp.build(cache), model, n, cache, FEET)
            except RuntimeError as exc:
                run_cpp = str(exc)
        if isinstance(run_cpp, str):
            print(f"C++ loop over Pinocchio: not built ({run_cpp})")
        else:
            # the machine is shared: C++ and mechsym alternate, and each keeps its best round
            lib = system._library("main")
            fn, size = lib.address_function("contact", n), lib.meta["functions"]["contact"]["size"]
            out, acc = np.empty((n, size)), np.zeros((n, model.nv))
            qc, vc, p = np.ascontiguousarray(q), np.ascontiguousarray(v), system.param_values

            def c_alone():
                fn(n, qc.ctypes.data, vc.ctypes.data, acc.ctypes.data, p.ctypes.data, out.ctypes.data)

            cpp, ours, ours_alone = None, [], []
            for _ in range(args.rounds):
                times = run_cpp()
                cpp = times if cpp is None else [min(a, b) for a, b in zip(cpp, times)]
                ours.append(best(lambda: system.contact_terms(q, v), args.repeat) / n * 1e6)
                ours_alone.append(best(c_alone, args.repeat) / n * 1e6)
            labels = ("crba", "nonLinearEffects", "computeJointJacobians + 4 getFrameJacobian",
                      "forwardKinematics(q, v, 0) + 4 getFrameClassicalAcceleration")
            print(f"Pinocchio {pin.__version__} in C++ (header-only, -O3 -march=native), per state over {n} states, "
                  f"best of {args.rounds} rounds alternating with mechsym:")
            for label, t in zip(labels, cpp):
                print(f"  pinocchio {label:58s} {t:8.3f} us")
            print(f"  pinocchio C++ total for the same quantities:                 {sum(cpp):8.3f} us")
            print(f"mechsym C batched in the same rounds: {min(ours):.3f} us per state (contact_terms), "
                  f"{min(ours_alone):.3f} us (the generated function into a preallocated array)")
            print(f"ratio Pinocchio (C++) / mechsym batched: {sum(cpp) / min(ours):.2f} "
                  f"(preallocated: {sum(cpp) / min(ours_alone):.2f})")

        # 4. agreement on a few of the timed states
        k = 50
        H, b, J, jb = system.contact_terms(q[:k], v[:k])
        err = 0.0
        for i in range(k):
            Hp = pin.crba(model, data, q[i])
            Hp = np.triu(Hp) + np.triu(Hp, 1).T
            err = max(err, np.abs(H[i] - Hp).max() / np.abs(Hp).max())
            bp = pin.nonLinearEffects(model, data, q[i], v[i])
            err = max(err, np.abs(b[i] - bp).max() / np.abs(bp).max())
            pin.computeJointJacobians(model, data, q[i])
            pin.forwardKinematics(model, data, q[i], v[i], zero)
            pin.updateFramePlacements(model, data)
            for c, f in enumerate(ids):
                Jp = pin.getFrameJacobian(model, data, f, W)
                ap = pin.getFrameClassicalAcceleration(model, data, f, W).vector
                err = max(err, np.abs(J[i, c] - Jp).max() / np.abs(Jp).max(), np.abs(jb[i, c] - ap).max() / np.abs(ap).max())
        print(f"agreement with Pinocchio on {k} timed states (largest norm-wise difference): {err:.2e}")


if __name__ == "__main__":
    main()
