"""The N-four-bar chain of the IFToMM multibody benchmark A02: N parallelogram loops in a row.

The ground holds N+1 pivots A0 ... AN, 1 m apart along x. Crank i (i = 0 ... N) runs from Ai to Bi, coupler i
(i = 1 ... N) from B(i-1) to Bi: 2N+1 uniform slender bars of length l = 1 m and mass 1 kg (density 1 kg/m).
theta is the angle of crank0 (A0 -> B0); one degree of freedom. The benchmark starts with every crank
vertical (theta = 90 deg) and B0 moving along +x at 1 m/s (omega = -1 rad/s), for 20 s under gravity
(M. Gonzalez et al., "A benchmarking system for MBS simulation software", Multibody Syst. Dyn. 16 (2006),
problem A02, N = 40).

Whenever the cranks are horizontal (theta = 0 or 180 deg) every bar lies on the ground line: there each
dyad of coupler i and crank i may turn about its coincident ends, so the parallelogram branch crosses
other branches (a bifurcation; the mobility jumps from 1 to N+1 there). The motion stays on the
parallelogram branch, on which every crank keeps the angle theta.
"""
from mechsym.planar.model import Mechanism

N_LOOPS = 2  # the loops of the shipped model; build(n) declares any other count


def build(n: int = N_LOOPS) -> Mechanism:
    if int(n) != n or n < 1:
        raise ValueError(f"a four-bar chain needs a whole number of loops >= 1, got {n}")
    n = int(n)
    m = Mechanism("fourbar-chain" if n == N_LOOPS else f"fourbar-chain-{n}", doc=__doc__)
    length = m.parameter("l", 1.0, "m", "length of every bar and spacing of the ground pivots")
    rho = m.parameter("density", 1.0, "kg/m", "linear density of every bar (1 kg per bar)")
    m.gravity_down("g")
    m.ground(points={f"A{i}": (i * length, 0) for i in range(n + 1)})
    for i in range(n + 1):
        m.bar(f"crank{i}", (f"A{i}", f"B{i}"), length, rho, guess=1.5707963267948966)
        m.revolute(f"A{i}", "ground", f"A{i}", f"crank{i}")
    for i in range(1, n + 1):
        m.bar(f"coupler{i}", (f"B{i - 1}", f"B{i}"), length, rho)
        m.revolute(f"coupler{i}_B{i - 1}", f"crank{i - 1}", f"B{i - 1}", f"coupler{i}")
        m.revolute(f"coupler{i}_B{i}", f"coupler{i}", f"B{i}", f"crank{i}")
    m.coordinate("theta", "A0", force="torque", guess_at=1.5707963267948966)
    return m
