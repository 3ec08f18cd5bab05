"""Andrews' squeezing mechanism as the Test Set for IVP Solvers writes it (Mazzia, Magherini, Iavernaro,
release 2.3, problem "andrews"; Hairer & Wanner, "Solving ODEs II", VII.7): the seven relative angles
q = (beta, Theta, gamma, Phi, delta, Omega, epsilon), the 7 x 7 mass matrix M(q), the forces f(q, q')
(the driving torque, the spring on link 3, the velocity terms), the six loop-closure rows g(q) and their
Jacobian G = dg/dq, all written by hand here from the test set's description, independent of mechsym.

The index-3 DAE  M q'' = f - G^T lambda, g(q) = 0  is integrated here in its index-1 form: with
h(q, q') the terms of g'' = G q'' + h quadratic in the speeds (differentiated by hand below),

    [M  G^T] [q''   ]   [f ]
    [G   0 ] [lambda] = [-h],

a first-order ODE in (q, q') for scipy's solve_ivp (the constraints hold to the integration error).
"""
from __future__ import annotations

import numpy as np

P = dict(m1=.04325, m2=.00365, m3=.02373, m4=.00706, m5=.07050, m6=.00706, m7=.05498,
         xa=-.06934, ya=-.00227, xb=-.03635, yb=.03273, xc=.014, yc=.072, c0=4530.,
         i1=2.194e-6, i2=4.410e-7, i3=5.255e-6, i4=5.667e-7, i5=1.169e-5, i6=5.667e-7, i7=1.912e-5,
         d=28e-3, da=115e-4, e=2e-2, ea=1421e-5, rr=7e-3, ra=92e-5, l0=7785e-5,
         ss=35e-3, sa=1874e-5, sb=1043e-5, sc=18e-3, sd=2e-2, ta=2308e-5, tb=916e-5,
         u=4e-2, ua=1228e-5, ub=449e-5, zf=2e-2, zt=4e-2, fa=1421e-5, mom=33e-3)

# The test set's consistent initial values (angles; every speed zero).
Q0 = np.array([-0.0617138900142764496358948458001, 0.0, 0.455279819163070380255912382449,
               0.222668390165885884674473185609, 0.487364979543842550225598953530,
               -0.222668390165885884674473185609, 1.23054744454982119249735015568])

# The test set's reference solution at t = 0.03 s (its file andrews.f, subroutine solut: PSIDE at rtol =
# atol = 1e-14 in Cray double precision): the angles, then the speeds.
REFERENCE_Q = np.array([0.1581077119629904e+2, -0.1575637105984298e+2, 0.4082224013073101e-1,
                        -0.5347301163226948e+0, 0.5244099658805304e+0, 0.5347301163226948e+0,
                        0.1048080741042263e+1])
REFERENCE_QD = np.array([0.1139920302151208e+4, -0.1424379294994111e+4, 0.1103291221937134e+2,
                         0.1929337464421385e+2, 0.5735699284790808e+0, -0.1929337464421385e+2,
                         0.3231791658026955e+0])


def parts(q, qd, p=P):
    """(M, f, G, h, g) at angles q and speeds qd."""
    be, th, ga, ph, de, om, ep = q
    bed, thd, gad, phd, ded, omd, epd = qd
    rr, d, ss, e, zt, zf, u = p["rr"], p["d"], p["ss"], p["e"], p["zt"], p["zf"], p["u"]
    m2, m4, m6 = p["m2"], p["m4"], p["m6"]
    ee, ff = p["e"] - p["ea"], p["zf"] - p["fa"]
    dtype = np.result_type(q, qd, float)  # (complex for a complex-step check of the derivatives)
    M = np.zeros((7, 7), dtype)
    M[0, 0] = p["m1"] * p["ra"]**2 + m2 * (rr**2 - 2 * p["da"] * rr * np.cos(th) + p["da"]**2) + p["i1"] + p["i2"]
    M[1, 0] = M[0, 1] = m2 * (p["da"]**2 - p["da"] * rr * np.cos(th)) + p["i2"]
    M[1, 1] = m2 * p["da"]**2 + p["i2"]
    M[2, 2] = p["m3"] * (p["sa"]**2 + p["sb"]**2) + p["i3"]
    M[3, 3] = m4 * ee**2 + p["i4"]
    M[4, 3] = M[3, 4] = m4 * (ee**2 + zt * ee * np.sin(ph)) + p["i4"]
    M[4, 4] = m4 * (zt**2 + 2 * zt * ee * np.sin(ph) + ee**2) + p["m5"] * (p["ta"]**2 + p["tb"]**2) + p["i4"] + p["i5"]
    M[5, 5] = m6 * ff**2 + p["i6"]
    M[6, 5] = M[5, 6] = m6 * (ff**2 - u * ff * np.sin(om)) + p["i6"]
    M[6, 6] = m6 * (ff**2 - 2 * u * ff * np.sin(om) + u**2) + p["m7"] * (p["ua"]**2 + p["ub"]**2) + p["i6"] + p["i7"]
    # the spring from D on link 3 to C, its force on D
    xd = p["sd"] * np.cos(ga) + p["sc"] * np.sin(ga) + p["xb"]
    yd = p["sd"] * np.sin(ga) - p["sc"] * np.cos(ga) + p["yb"]
    length = np.sqrt((xd - p["xc"]) ** 2 + (yd - p["yc"]) ** 2)
    pull = -p["c0"] * (length - p["l0"]) / length
    fx, fy = pull * (xd - p["xc"]), pull * (yd - p["yc"])
    f = np.array([
        p["mom"] - m2 * p["da"] * rr * thd * (thd + 2 * bed) * np.sin(th),
        m2 * p["da"] * rr * bed**2 * np.sin(th),
        fx * (p["sc"] * np.cos(ga) - p["sd"] * np.sin(ga)) + fy * (p["sd"] * np.cos(ga) + p["sc"] * np.sin(ga)),
        m4 * zt * ee * ded**2 * np.cos(ph),
        -m4 * zt * ee * phd * (phd + 2 * ded) * np.cos(ph),
        -m6 * u * ff * epd**2 * np.cos(om),
        m6 * u * ff * omd * (omd + 2 * epd) * np.cos(om)])
    sb, cb, sbt, cbt = np.sin(be), np.cos(be), np.sin(be + th), np.cos(be + th)
    spd, cpd, soe, coe = np.sin(ph + de), np.cos(ph + de), np.sin(om + ep), np.cos(om + ep)
    G = np.zeros((6, 7), dtype)
    G[0::2, 0], G[1::2, 0] = -rr * sb + d * sbt, rr * cb - d * cbt
    G[0::2, 1], G[1::2, 1] = d * sbt, -d * cbt
    G[0, 2], G[1, 2] = -ss * np.cos(ga), -ss * np.sin(ga)
    G[2, 3], G[2, 4] = -e * cpd, -e * cpd + zt * np.sin(de)
    G[3, 3], G[3, 4] = -e * spd, -e * spd - zt * np.cos(de)
    G[4, 5], G[4, 6] = zf * soe, zf * soe - u * np.cos(ep)
    G[5, 5], G[5, 6] = -zf * coe, -zf * coe - u * np.sin(ep)
    g = np.array([rr * cb - d * cbt - ss * np.sin(ga) - p["xb"], rr * sb - d * sbt + ss * np.cos(ga) - p["yb"],
                  rr * cb - d * cbt - e * spd - zt * np.cos(de) - p["xa"],
                  rr * sb - d * sbt + e * cpd - zt * np.sin(de) - p["ya"],
                  rr * cb - d * cbt - zf * coe - u * np.sin(ep) - p["xa"],
                  rr * sb - d * sbt - zf * soe + u * np.cos(ep) - p["ya"]])
    # g'' = G q'' + h: the speeds' squares of each row's terms (d^2/dt^2 cos x = -sin x x'' - cos x x'^2)
    w1, w2 = bed, bed + thd
    crank_x = -rr * cb * w1**2 + d * cbt * w2**2
    crank_y = -rr * sb * w1**2 + d * sbt * w2**2
    h = np.array([crank_x + ss * np.sin(ga) * gad**2, crank_y - ss * np.cos(ga) * gad**2,
                  crank_x + e * spd * (phd + ded)**2 + zt * np.cos(de) * ded**2,
                  crank_y - e * cpd * (phd + ded)**2 + zt * np.sin(de) * ded**2,
                  crank_x + zf * coe * (omd + epd)**2 + u * np.sin(ep) * epd**2,
                  crank_y + zf * soe * (omd + epd)**2 - u * np.cos(ep) * epd**2])
    return M, f, G, h, g


def rhs(t, y, p=P):
    """(q', q'') of the index-1 form at y = (q, q')."""
    q, qd = y[:7], y[7:]
    M, f, G, h, _ = parts(q, qd, p)
    big = np.zeros((13, 13))
    big[:7, :7], big[:7, 7:], big[7:, :7] = M, G.T, G
    return np.concatenate([qd, np.linalg.solve(big, np.concatenate([f, -h]))[:7]])


def integrate(t_end=0.03, rtol=1e-14, atol=1e-14, method="DOP853"):
    """scipy's solve_ivp on the index-1 form from the test set's initial values: its result object."""
    from scipy.integrate import solve_ivp

    return solve_ivp(rhs, (0.0, t_end), np.concatenate([Q0, np.zeros(7)]), method=method, rtol=rtol, atol=atol)
