"""Andrews' squeezing mechanism: seven bodies in a plane, one spring, a constant driving torque.

The DAE test problem of E. Hairer and G. Wanner, "Solving Ordinary Differential Equations II" (2nd ed.,
Springer 1996), section VII.7, after Giles (1978) and Manning (1981), as given in the Test Set for IVP
Solvers (F. Mazzia, C. Magherini, F. Iavernaro, release 2.3, University of Bari 2006: problem "andrews",
its parameters and initial values). The fixed points O (the crank's pivot, the origin), A, B and C are
in the ground's frame; no gravity. Bodies and their angles (the test set's coordinates):

    crank   (body 1)  about O, angle beta; K at rr from O
    rod     (body 2)  pinned to the crank at K, angle beta + Theta; P at d from K, opposite its x axis
    link3   (body 3)  about B, angle gamma; P at (0, -ss), the spring's end D at (sd, -sc)
    link5   (body 5)  about A, angle delta; F at zt along its x axis
    link4   (body 4)  pinned to link5 at F, angle Phi + delta; P at (0, -e)
    link7   (body 7)  about A, angle epsilon; G at (0, -u)
    link6   (body 6)  pinned to link7 at G, angle Omega + epsilon; P at zf along its x axis

P joins the rod, link3, link4 and link6. The spring (its parameters spring_k = c0 = 4530 N/m and
spring_l0 = l0 = 0.07785 m) pulls D towards C; the torque mom = 0.033 N m (MOM, `forward --torque 0.033`)
drives the crank. Where the test set fixes a body's inertia about its pivot only through
m (a^2 + b^2) + I, its centre of mass is placed at (a, b) in the body's frame (without gravity, no
motion depends on that placement; the pivots' reactions do). The coordinate is beta, at rest at
beta0 = -0.0617138900142764 (the test set's consistent initial values; all speeds zero).
"""
from mechsym.planar.model import Mechanism

BETA0 = -0.0617138900142764496358948458001
# The test set's initial angles (beta, Theta, gamma, Phi, delta, Omega, epsilon): the assembly's guesses.
START = (BETA0, 0.0, 0.455279819163070380255912382449, 0.222668390165885884674473185609,
         0.487364979543842550225598953530, -0.222668390165885884674473185609, 1.23054744454982119249735015568)
MOM = 0.033  # N m: the test set's driving torque (forward --torque 0.033)
SIGNED = ("xa", "ya", "xb", "yb", "xc", "yc")  # the fixed points' coordinates

# name: (value, unit, description), the test set's parameter table
PARAMETERS = {
    "m1": (0.04325, "kg", "mass of the crank"), "m2": (0.00365, "kg", "mass of the rod"),
    "m3": (0.02373, "kg", "mass of link3"), "m4": (0.00706, "kg", "mass of link4"),
    "m5": (0.07050, "kg", "mass of link5"), "m6": (0.00706, "kg", "mass of link6"),
    "m7": (0.05498, "kg", "mass of link7"),
    "i1": (2.194e-6, "kg m^2", "centroidal inertia of the crank"), "i2": (4.410e-7, "kg m^2", "of the rod"),
    "i3": (5.255e-6, "kg m^2", "of link3"), "i4": (5.667e-7, "kg m^2", "of link4"),
    "i5": (1.169e-5, "kg m^2", "of link5"), "i6": (5.667e-7, "kg m^2", "of link6"),
    "i7": (1.912e-5, "kg m^2", "of link7"),
    "xa": (-0.06934, "m", "x of A"), "ya": (-0.00227, "m", "y of A"),
    "xb": (-0.03635, "m", "x of B"), "yb": (0.03273, "m", "y of B"),
    "xc": (0.014, "m", "x of C"), "yc": (0.072, "m", "y of C"),
    "d": (28e-3, "m", "K to P on the rod"), "da": (115e-4, "m", "K to the rod's centre of mass"),
    "e": (2e-2, "m", "F to P on link4"), "ea": (1421e-5, "m", "P to link4's centre of mass"),
    "rr": (7e-3, "m", "O to K on the crank"), "ra": (92e-5, "m", "O to the crank's centre of mass"),
    "ss": (35e-3, "m", "B to P on link3"), "sa": (1874e-5, "m", "link3's centre of mass, x"),
    "sb": (1043e-5, "m", "link3's centre of mass, -y"), "sc": (18e-3, "m", "link3's spring end D, -y"),
    "sd": (2e-2, "m", "link3's spring end D, x"), "ta": (2308e-5, "m", "link5's centre of mass, x"),
    "tb": (916e-5, "m", "link5's centre of mass, y"), "u": (4e-2, "m", "A to G on link7"),
    "ua": (1228e-5, "m", "link7's centre of mass, x"), "ub": (449e-5, "m", "link7's centre of mass, -y"),
    "zf": (2e-2, "m", "G to P on link6"), "zt": (4e-2, "m", "A to F on link5"),
    "fa": (1421e-5, "m", "P to link6's centre of mass"),
}


def build() -> Mechanism:
    m = Mechanism("andrews", doc=__doc__)
    m.no_gravity()
    p = {name: m.parameter(name, value, unit, doc, positive=name not in SIGNED) for name, (value, unit, doc) in
         PARAMETERS.items()}
    beta, theta, gamma, phi, delta, omega, epsilon = START
    m.ground(points={"O": (0, 0), "A": (p["xa"], p["ya"]), "B": (p["xb"], p["yb"]), "C": (p["xc"], p["yc"])})
    m.body("crank", p["m1"], p["i1"], (p["ra"], 0), {"O": (0, 0), "K": (p["rr"], 0)}, guess=beta)
    m.body("rod", p["m2"], p["i2"], (-p["da"], 0), {"K": (0, 0), "P": (-p["d"], 0)}, guess=beta + theta)
    m.body("link3", p["m3"], p["i3"], (p["sa"], -p["sb"]), {"B": (0, 0), "P": (0, -p["ss"]), "D": (p["sd"], -p["sc"])},
           guess=gamma)
    m.body("link5", p["m5"], p["i5"], (p["ta"], p["tb"]), {"A": (0, 0), "F": (p["zt"], 0)}, guess=delta)
    m.body("link4", p["m4"], p["i4"], (0, -(p["e"] - p["ea"])), {"F": (0, 0), "P": (0, -p["e"])}, guess=phi + delta)
    m.body("link7", p["m7"], p["i7"], (p["ua"], -p["ub"]), {"A": (0, 0), "G": (0, -p["u"])}, guess=epsilon)
    m.body("link6", p["m6"], p["i6"], (p["zf"] - p["fa"], 0), {"G": (0, 0), "P": (p["zf"], 0)}, guess=omega + epsilon)
    m.revolute("O", "ground", "O", "crank")
    m.revolute("K", "crank", "K", "rod")
    m.revolute("B", "ground", "B", "link3")
    m.revolute("A5", "ground", "A", "link5", "A")
    m.revolute("F", "link5", "F", "link4")
    m.revolute("A7", "ground", "A", "link7", "A")
    m.revolute("G", "link7", "G", "link6")
    m.revolute("P3", "rod", "P", "link3")
    m.revolute("P4", "rod", "P", "link4")
    m.revolute("P6", "rod", "P", "link6")
    m.spring("spring", ("link3", "D"), ("ground", "C"), stiffness=4530.0, free_length=0.07785)
    m.coordinate("beta", "O", force="torque", guess_at=beta)
    return m
