"""Generated code is the same in every process: a Program's forward-mode derivatives are numbered from
sets of symbols, whose order follows Python's hash seed; unordered, the free body's C differed between two
runs of one declaration (and its results by 1e-10), so the compiled cache, keyed by the declaration, held
whichever the first run wrote."""
import hashlib
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

SOURCE = """
import hashlib
from mechanisms import disc
from mechsym.spatial.floating_loads import BodyTorque, floating_program
program = floating_program(disc.system(), [disc.Disc().connector(), BodyTorque("drive", (0.0, 0.0, 0.0))])
print(hashlib.sha256(program.c_source().encode()).hexdigest())
"""


def _digest(seed: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", SOURCE], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()[-1]


def test_a_programs_source_does_not_depend_on_the_hash_seed():
    digests = {_digest(seed) for seed in ("1", "2", "3")}
    assert len(digests) == 1 and all(len(d) == 2 * hashlib.sha256().digest_size for d in digests)
