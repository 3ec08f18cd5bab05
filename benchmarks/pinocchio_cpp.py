"""Pinocchio's C++ loop (benchmarks/pinocchio_loop.cpp), the strongest peer of mechsym's batched entry points:
built once against the pin wheel's headers and libraries (Eigen's headers from the bench extra's
cmeel-eigen, or EIGEN_INCLUDE) at -O3 -march=native, and run on any model saved as a Pinocchio binary."""
from __future__ import annotations

import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PREFIX = os.path.join(sys.prefix, "lib", f"python{sys.version_info.major}.{sys.version_info.minor}",
                      "site-packages", "cmeel.prefix")


def eigen():
    """The folder holding Eigen/Core, or None."""
    for p in (os.environ.get("EIGEN_INCLUDE"), os.path.join(PREFIX, "include", "eigen3"), "/usr/include/eigen3",
              "/usr/local/include/eigen3"):
        if p and os.path.exists(os.path.join(p, "Eigen", "Core")):
            return p
    return None


def build(folder) -> str:
    """The path of the loop's executable built into `folder`; a RuntimeError saying why it could not be."""
    import pinocchio as pin

    include = eigen()
    if include is None:
        raise RuntimeError("Eigen's headers not found: pip install cmeel-eigen, or set EIGEN_INCLUDE")
    exe = os.path.join(folder, "pinocchio_loop")
    defines = ["-DBOOST_MPL_CFG_NO_PREPROCESSED_HEADERS", "-DBOOST_MPL_LIMIT_LIST_SIZE=30",
               "-DBOOST_MPL_LIMIT_VECTOR_SIZE=30", "-DBOOST_FUSION_INVOKE_MAX_ARITY=12", "-DNDEBUG"]
    cmd = ["c++", "-O3", "-march=native", "-std=c++17", *defines, f"-I{PREFIX}/include", f"-I{include}",
           os.path.join(HERE, "pinocchio_loop.cpp"), "-o", exe, f"-L{PREFIX}/lib", "-lpinocchio_default",
           "-lboost_serialization", f"-Wl,-rpath,{PREFIX}/lib"]
    t = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        last = [line for line in proc.stderr.splitlines() if "error" in line][:1]
        raise RuntimeError(f"not built with Pinocchio {pin.__version__} ({last[0] if last else 'compiler failed'})")
    print(f"(C++ loop over Pinocchio built in {time.perf_counter() - t:.0f} s)", flush=True)
    return exe


def runner(exe, model, n, folder, frames=()):
    """A function running the loop on `model` (saved into `folder`) over n random states: its microseconds per
    state, [crba, nonLinearEffects] and with `frames` [jacobians, biases] of those frames."""
    binary = os.path.join(folder, "model.bin")
    model.saveToBinary(binary)

    def run():
        out = subprocess.run([exe, binary, str(n), *frames], capture_output=True, text=True, check=True).stdout
        return [float(x) for x in out.split()]

    return run
