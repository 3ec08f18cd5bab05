"""UGV half-vehicle (issue 5): equilibrium derived from the per-body rows, independent checks, optimisation, CLI."""
import math

import numpy as np
import pytest

from mechanisms import ugv_optimize as uo
from mechanisms import ugv_study as us
from mechsym.app.cli import main
from mechsym.core.errors import InputError, ModelError
from mechsym.core.results import read_csv
from mechanisms import tracks
from mechanisms.tracks import bump
from mechsym.planar.track import X, Track

DEG = math.pi / 180
G = 9.81
MW, ML, MB, R_WHEEL = 50.0, 20.0, 300.0, 0.30
WEIGHT = (2 * MW + 2 * ML + MB) * G
PAIRS = (np.array([90, 70, 120, 135, 60]) * DEG, np.array([90, 100, 65, 135, 130]) * DEG)


@pytest.fixture(scope="module")
def vehicle():
    return us.Vehicle()


@pytest.fixture(scope="module")
def on_bump(vehicle):
    x = np.linspace(0, 8, 401)
    pose = vehicle.place(bump(), x, *PAIRS)
    return pose, vehicle.forces(pose, us.statics().unknowns)


def cross(a, b):
    return a[0] * b[1] - a[1] * b[0]


def sub(a, b):
    return (a[0] - b[0], a[1] - b[1])


def test_equilibrium_is_derived_from_the_body_rows():
    st = us.statics()
    assert st.A.shape == (16, 16)
    assert st.row_names[:3] == ("body.x", "body.y", "body.m") and st.row_names[-1] == "same torque"
    assert set(st.unknowns) >= {"Fr", "Nr", "Ff", "Nf", "M_r", "M_f", "axle_r.fx", "axle_f.fy", "tau_r", "tau_f"}
    # the closed form solves the numeric per-body system (random states, not only physical ones)
    A, C = st.matrices()
    rng = np.random.default_rng(3)
    p = us.Vehicle().p
    for _ in range(5):
        q = rng.normal(size=15) * 0.4
        beta = rng.normal(size=2) * 0.3
        u = np.linalg.solve(np.array(A(q, beta, p), float), np.array(C(q, beta, p), float).ravel())
        closed = st.solve(q, beta, p)
        got = np.array([float(closed[n]) for n in st.unknowns])
        assert np.max(np.abs(got - u)) <= 1e-10 * np.max(np.abs(u))


def test_pose_satisfies_the_declared_joints(vehicle, on_bump):
    pose, _ = on_bump
    st = us.statics()
    import sympy as sp

    con = st.constraints
    rows = sp.lambdify([list(con.q), [sp.Symbol(c, real=True) for c in ("phi_r", "phi_f", "spin_r", "spin_f")],
                        list(con.params)], list(con.rows), modules="numpy")
    q = pose.coordinates()
    spin_r = q[11] - q[5]
    spin_f = q[14] - q[8]
    res = rows(q, [pose.phi_r, pose.phi_f, spin_r, spin_f], vehicle.p)
    assert max(float(np.max(np.abs(np.asarray(r)))) for r in res) < 1e-12


def test_flat_ground(vehicle):
    flat = Track.from_expr("0*x", "flat")
    x = np.linspace(-3, 5, 17)
    pose = vehicle.place(flat, x, *PAIRS)
    f = vehicle.forces(pose)
    assert np.max(np.abs(f["torque"])) < 1e-9
    assert np.max(np.abs(f["Fr"])) < 1e-9 and np.max(np.abs(f["Ff"])) < 1e-9
    assert np.allclose(f["Nr"] + f["Nf"], WEIGHT, rtol=1e-13, atol=0)
    assert vehicle.weight == pytest.approx(WEIGHT)
    # symmetric vehicle, symmetric legs: the weight splits evenly
    sym = vehicle.forces(vehicle.place(flat, x, [90 * DEG], [90 * DEG]))
    assert np.allclose(sym["Nr"], WEIGHT / 2) and np.allclose(sym["Nf"], WEIGHT / 2)


def test_uniform_slope(vehicle):
    """On a straight slope of angle alpha the same M on both wheels (r F = -M) makes Fr = Ff, so each wheel
    carries half the downhill weight: F = W sin(alpha) / 2, drive torque r W sin(alpha) / 2, and
    Nr + Nf = W cos(alpha), for any leg angles."""
    alpha = math.atan(0.1)
    pose = vehicle.place(Track.from_expr("0.1*x", "slope"), np.linspace(-2, 6, 9), *PAIRS)
    f = vehicle.forces(pose)
    assert np.allclose(f["Fr"], WEIGHT * math.sin(alpha) / 2, rtol=1e-13, atol=0)
    assert np.allclose(f["Ff"], WEIGHT * math.sin(alpha) / 2, rtol=1e-13, atol=0)
    assert np.allclose(f["torque"], R_WHEEL * WEIGHT * math.sin(alpha) / 2, rtol=1e-13, atol=0)
    assert np.allclose(f["Nr"] + f["Nf"], WEIGHT * math.cos(alpha), rtol=1e-13, atol=0)


def test_nine_equations_of_eqs_40_to_42(on_bump):
    """Eqs. 40-42 written by hand from the spec (rear wheel; rear wheel + legs + body; whole vehicle)."""
    pose, f = on_bump
    P = pose.points()
    br, bf = pose.beta_rear, pose.beta_front
    Gr = (f["Fr"] * np.cos(br) - f["Nr"] * np.sin(br), f["Fr"] * np.sin(br) + f["Nr"] * np.cos(br))
    Gf = (f["Ff"] * np.cos(bf) - f["Nf"] * np.sin(bf), f["Ff"] * np.sin(bf) + f["Nf"] * np.cos(bf))
    M = f["M_r"]
    assert np.array_equal(f["M_r"], f["M"]) and np.allclose(f["M_f"], M, atol=1e-12)
    Flw = (f["axle_r.fx"], f["axle_r.fy"])  # leg on rear wheel
    Fwl = (-f["axle_f.fx"], -f["axle_f.fy"])  # front wheel on front leg
    m2 = MW + 2 * ML + MB
    C2 = tuple((MW * P["Wr"][i] + ML * P["C_leg_r"][i] + ML * P["C_leg_f"][i] + MB * P["C_body"][i]) / m2 for i in range(2))
    m3 = m2 + MW
    C3 = tuple((m2 * C2[i] + MW * P["Wf"][i]) / m3 for i in range(2))
    T, D, E = P["T"], P["D"], P["Wf"]
    eqs = [
        Gr[0] + Flw[0], Gr[1] + Flw[1] - MW * G, R_WHEEL * f["Fr"] + M,  # (40)
        Gr[0] + Fwl[0], Gr[1] + Fwl[1] - m2 * G, cross(sub(T, C2), Gr) + cross(sub(E, C2), Fwl) - M,  # (41)
        Gr[0] + Gf[0], Gr[1] + Gf[1] - m3 * G, cross(sub(T, C3), Gr) + cross(sub(D, C3), Gf),  # (42)
    ]
    for e in eqs:  # N and N m; the forces are ~2000 N
        assert np.max(np.abs(e)) <= 1e-10
    # and the decoded 5x5 form (spec section 4, Eq. 43): subsystem 2 moment with the front wheel force
    eq4 = cross(sub(T, C2), Gr) + cross(sub(E, C2), Gf) - M - sub(E, C2)[0] * MW * G
    assert np.max(np.abs(eq4)) <= 1e-10
    # the bump needs torque: propulsive climbing, braking going down
    assert f["torque"].max() > 10 and f["torque"].min() < -10


def _bump_centre_curve(x):
    """The bump's wheel-centre curve W(x) = (x, f) + r n and W'(x), from f, f', f'' written by hand."""
    e = np.exp(-(x - 4) ** 2)
    f, d1, d2 = 0.1 * e, -0.2 * (x - 4) * e, (0.4 * (x - 4) ** 2 - 0.2) * e
    q = np.sqrt(1 + d1 * d1)
    scale = 1 - R_WHEEL * d2 / q ** 3  # 1 - r kappa
    return (x - R_WHEEL * d1 / q, f + R_WHEEL / q), (scale, scale * d1)


def test_virtual_work_along_the_bump(vehicle):
    """dPE/dx_f = M (dtheta_r/dx_f - dpsi/dx_f + dtheta_f/dx_f - dpsi/dx_f), pointwise, with every derivative
    exact and independent of the force solution: x_r(x_f) from |W(x_r) - W(x_f)| = R differentiated
    implicitly, psi = angle(W_f - W_r) - const, each centre of mass rigidly attached to W_r (fixed legs), and
    the wheels rolling without slip, dtheta/dx = -|W'(x)|/r."""
    t = bump()
    x = np.linspace(0.5, 7.5, 141)
    masses = {"C_body": MB, "C_leg_r": ML, "C_leg_f": ML, "Wr": MW, "Wf": MW}
    for pr, pf in zip(*PAIRS):
        pose = vehicle.place(t, x, [pr], [pf])
        xr = pose.x_rear[:, 0]
        (wrx, wry), dwr = _bump_centre_curve(xr)
        (wfx, wfy), dwf = _bump_centre_curve(x)
        ex, ey = wfx - wrx, wfy - wry
        d_xr = (ex * dwf[0] + ey * dwf[1]) / (ex * dwr[0] + ey * dwr[1])
        dex, dey = dwf[0] - dwr[0] * d_xr, dwf[1] - dwr[1] * d_xr
        d_psi = (ex * dey - ey * dex) / (ex * ex + ey * ey)
        P = {k: (a[:, 0], b[:, 0]) for k, (a, b) in pose.points().items()}
        assert np.allclose(P["Wr"][0], wrx, atol=1e-12) and np.allclose(P["Wf"][1], wfy, atol=1e-12)
        # a point rigidly attached to W_r: d(y)/dx_f = W_r,y' dx_r/dx_f + (x_point - W_r,x) dpsi/dx_f
        d_pe = G * sum(m * (dwr[1] * d_xr + (P[k][0] - wrx) * d_psi) for k, m in masses.items())
        d_th_r = -np.hypot(*dwr) / R_WHEEL * d_xr
        d_th_f = -np.hypot(*dwf) / R_WHEEL
        M = vehicle.forces(pose)["M"][:, 0]
        work = M * (d_th_r - d_psi + d_th_f - d_psi)
        assert np.linalg.norm(work - d_pe) <= 1e-6 * np.linalg.norm(d_pe)
        assert np.linalg.norm(work - d_pe) <= 1e-12 * np.linalg.norm(d_pe)  # in fact to rounding


def test_torque_along_and_events(vehicle):
    table = us.torque_along("bump", 90 * DEG, 90 * DEG, samples=161, vehicle=vehicle)
    assert table.names == ["x_front", "x_rear", "pitch", "Fr", "Nr", "Ff", "Nf", "torque"]
    assert table.events == []
    slippery = us.torque_along("bump", 90 * DEG, 90 * DEG, samples=161, mu=0.02, vehicle=vehicle)
    assert any(e.startswith("slip: the rear wheel slips at x_front = ") for e in slippery.events)
    heavy = us.torque_along("bump", 90 * DEG, 90 * DEG, samples=41, params={"body_com": 1.6})
    assert any("rollover: the rear wheel lifts off" in e for e in heavy.events)
    # the sweep gives the same numbers for every pair
    sw = us.sweep("bump", *PAIRS, table["x_front"], vehicle=vehicle, names=("torque", "Nf"))
    one = us.torque_along("bump", PAIRS[0][2], PAIRS[1][2], samples=161, vehicle=vehicle, limits=(0.1, 3.0))
    assert np.allclose(sw["torque"][:, 2], one["torque"], rtol=0, atol=1e-12 * WEIGHT)
    assert np.allclose(sw["Nf"][:, 2], one["Nf"], rtol=0, atol=1e-12 * WEIGHT)


def test_bad_input(vehicle, tmp_path):
    with pytest.raises(InputError, match="outside the limits"):
        us.torque_along("bump", 30 * DEG, 90 * DEG, vehicle=vehicle)
    with pytest.raises(InputError, match="cross the body"):
        us.torque_along("bump", 50 * DEG, 90 * DEG, vehicle=vehicle)
    with pytest.raises(InputError, match="mu = 0"):
        us.torque_along("bump", 90 * DEG, 90 * DEG, mu=0.0, vehicle=vehicle)
    with pytest.raises(InputError, match="mu = -1"):
        uo.optimize("bump", "grip", mu=-1.0, vehicle=vehicle)
    with pytest.raises(InputError, match="not finite at x = 3"):
        us.torque_along("1/(x-3)", 90 * DEG, 90 * DEG, vehicle=vehicle)
    with pytest.raises(InputError, match="exceeds 1/r"):
        us.torque_along("0.3*exp(-100*(x-4)**2)", 90 * DEG, 90 * DEG, vehicle=vehicle)
    x = np.arange(0, 9.001, 0.05)
    short = tmp_path / "short.csv"
    np.savetxt(short, np.c_[x, 0.1 * np.exp(-(x - 4) ** 2)], delimiter=",", header="x,y", comments="")
    with pytest.raises(InputError, match="no placement for the rear wheel behind the front contact x = 0"):
        us.torque_along(str(short), 90 * DEG, 90 * DEG, vehicle=vehicle)
    with pytest.raises(InputError, match="unknown criterion"):
        uo.optimize("bump", "speed", vehicle=vehicle)
    with pytest.raises(InputError, match="'r'"):
        us.Vehicle({"r": -0.3})


def test_contact_statics_errors():
    from mechanisms import ugv
    from mechsym.planar.rolling import ContactStatics

    mech = ugv.build()
    with pytest.raises(InputError, match="16 unknowns .* for 15 equilibrium rows"):
        ContactStatics(mech, ugv.contacts(mech))  # without the torque tie the system is indeterminate
    with pytest.raises(InputError, match="14 unknowns .* for 16 equilibrium rows"):
        ContactStatics(mech, ugv.contacts(mech)[:1], ugv.ties())  # one wheel in the air
    mech.body("loose", 1.0, 0.1, (0, 0), {"P": (0, 0)})
    with pytest.raises(ModelError, match="body 'loose' is held neither by a joint nor by a contact"):
        ContactStatics(mech, ugv.contacts(mech), ugv.ties())


def _schedule_checks(vehicle, sched, mu, margin, limits, rate):
    x = sched.x
    pose = vehicle.place(tracks.load("bump"), x, sched.phi_r, sched.phi_f, paired=True)
    f = vehicle.forces(pose)
    assert np.allclose(sched.table["torque"], f["torque"])
    lo, hi = limits
    assert np.all(sched.phi_r >= lo - 1e-12) and np.all(sched.phi_r <= hi + 1e-12)
    assert np.all(sched.phi_f >= lo - 1e-12) and np.all(sched.phi_f <= hi + 1e-12)
    step = rate * (x[1] - x[0])
    assert np.all(np.abs(np.diff(sched.phi_r)) <= step * (1 + 1e-9))
    assert np.all(np.abs(np.diff(sched.phi_f)) <= step * (1 + 1e-9))
    clear = vehicle.clearance(sched.phi_r, sched.phi_f)
    assert all(np.all(c >= 0) for c in clear.values())
    assert np.all(np.abs(f["Fr"]) <= mu * f["Nr"]) and np.all(np.abs(f["Ff"]) <= mu * f["Nf"])
    assert np.all(f["Nr"] >= margin * WEIGHT) and np.all(f["Nf"] >= margin * WEIGHT)
    assert np.all(sched.table["slip_margin"] >= 0) and np.all(sched.table["rollover_margin"] >= 0)


def _criterion(name, f, th_r, th_f):
    m = f["M"]
    if name == "torque-variation":
        return np.sum(np.diff(m, axis=0) ** 2, axis=0)
    if name == "peak-torque":
        return np.max(np.abs(m), axis=0)
    if name == "energy":
        return np.sum(np.abs(m[:-1]) * (np.abs(np.diff(th_r, axis=0)) + np.abs(np.diff(th_f, axis=0))), axis=0)
    return np.max(np.maximum(np.abs(f["Fr"] / f["Nr"]), np.abs(f["Ff"] / f["Nf"])), axis=0)


@pytest.mark.parametrize("criterion", uo.CRITERIA)
def test_optimize_beats_every_constant_pair(vehicle, criterion):
    mu, margin, limits, rate = 0.6, 0.05, us.LIMITS, uo.RATE
    sched = uo.optimize("bump", criterion, mu=mu, samples=41, vehicle=vehicle)
    assert sched.table.names == ["x_front", "phi_r", "phi_f", "torque", "slip_margin", "rollover_margin"]
    _schedule_checks(vehicle, sched, mu, margin, limits, rate)
    # every constant pair of the DP grid, evaluated independently (sweep and the wheel angles by hand)
    n = sched.info["grid"]
    grid = np.linspace(*limits, n)
    pr, pf = (a.ravel() for a in np.meshgrid(grid, grid, indexing="ij"))
    t = tracks.load("bump")
    pose = vehicle.place(t, sched.x, pr, pf)
    f = vehicle.forces(pose)
    th_r = t.slope(pose.x_rear) - t.arc_length_from(pose.x_rear, 0.0) / R_WHEEL - (pose.pitch - pose.phi_r)
    th_f = t.slope(pose.x_front) - t.arc_length_from(pose.x_front, 0.0) / R_WHEEL - (pose.pitch + pose.phi_f)
    clear = vehicle.clearance(pr, pf)
    ok = (clear["wheels"] >= 0) & (clear["rear"] >= 0) & (clear["front"] >= 0)
    ok &= np.all((np.abs(f["Fr"]) <= mu * f["Nr"]) & (np.abs(f["Ff"]) <= mu * f["Nf"]), axis=0)
    ok &= np.all((f["Nr"] >= margin * WEIGHT) & (f["Nf"] >= margin * WEIGHT), axis=0)
    values = np.where(ok, _criterion(criterion, f, th_r, th_f), np.inf)
    best = float(values.min())
    assert sched.best_constant[2] == pytest.approx(best, rel=1e-9)
    assert sched.value <= best * (1 + 1e-12)
    assert sched.value <= sched.dp_value * (1 + 1e-12)
    if criterion in ("torque-variation", "energy"):  # here the refinement gains on the grid's optimum
        assert sched.refined and sched.value < sched.dp_value * (1 - 1e-4)
    # the reported value is the criterion of the reported schedule
    p1 = vehicle.place(t, sched.x, sched.phi_r, sched.phi_f, paired=True)
    f1 = {k: v[:, None] for k, v in vehicle.forces(p1).items()}
    a_r = t.slope(p1.x_rear) - t.arc_length_from(p1.x_rear, 0.0) / R_WHEEL - (p1.pitch - p1.phi_r)
    a_f = t.slope(p1.x_front) - t.arc_length_from(p1.x_front, 0.0) / R_WHEEL - (p1.pitch + p1.phi_f)
    assert float(_criterion(criterion, f1, a_r[:, None], a_f[:, None])[0]) == pytest.approx(sched.value, rel=1e-9)


def test_minimax_refinement(vehicle):
    """With the limits at 45-160 deg the peak torque is not decided by an angle limit: SLSQP improves the DP
    path, and every constraint still holds at every x."""
    limits = (45 * DEG, 160 * DEG)
    sched = uo.optimize("bump", "peak-torque", samples=41, limits=limits, vehicle=vehicle)
    assert sched.refined and sched.value < sched.dp_value < sched.best_constant[2]
    _schedule_checks(vehicle, sched, 0.6, 0.05, limits, uo.RATE)
    assert np.max(np.abs(sched.table["torque"])) == pytest.approx(sched.value, rel=1e-12)


def _complex_stage(vehicle, track, x, pr, pf, x_rear):
    """The stage quantities at complex leg angles (for the complex step), written from docs/ugv.md apart from
    mechsym.planar.stance: Eq. 39 for the wheelbase, the rear contact by Newton in complex arithmetic from the real
    solution x_rear, psi = angle(W_f - W_r) - gamma, the wheel angles beta - s/r - leg angle with the arc
    length integrated from x_rear along the complex segment, the clearances from the legs' end points, and
    the forces from the compiled closed form at the complex body angles."""
    import sympy as sp

    L, l, r = 0.83, 0.35, R_WHEEL
    fn = sp.lambdify(X, [track.expr, track.expr.diff(X), track.expr.diff(X, 2)])

    def track_fn(xc):
        return [np.asarray(v, complex) * np.ones_like(xc) for v in fn(xc)]

    def centre(xc):
        f, d1, d2 = track_fn(xc)
        q = np.sqrt(1 + d1 * d1)
        return (xc - r * d1 / q, f + r / q), ((1 - r * d2 / q**3), (1 - r * d2 / q**3) * d1), d1

    dx, dy = L - l * np.cos(pr) - l * np.cos(pf), l * (np.sin(pr) - np.sin(pf))
    R2, gamma = dx * dx + dy * dy, np.arctan(dy / dx)
    (wfx, wfy), _, d1f = centre(x.astype(complex))
    xr = x_rear.astype(complex)
    for _ in range(6):
        (wrx, wry), (dwx, dwy), d1r = centre(xr)
        ex, ey = wrx - wfx, wry - wfy
        xr = xr - (ex * ex + ey * ey - R2) / (2 * (ex * dwx + ey * dwy))
    (wrx, wry), _, d1r = centre(xr)
    psi = np.arctan((wfy - wry) / (wfx - wrx)) - gamma
    beta_r, beta_f = np.arctan(d1r), np.arctan(d1f)
    q = [0.0] * 15
    q[2], q[5], q[8] = psi, psi - pr, psi + pf  # the body angles: all the forces depend on (checked below)
    f = dict(zip(us.FORCES, vehicle.statics.compile(us.FORCES, vehicle.p).outputs(q, [beta_r, beta_f])))
    nodes, weights = np.polynomial.legendre.leggauss(8)
    half = (xr - x_rear) / 2
    arc = half * (np.sqrt(1 + track_fn(x_rear[:, None] + half[:, None] * (1 + nodes))[1] ** 2) @ weights)
    out = dict(f, th_r=beta_r - arc / r - (psi - pr), th_f=beta_f - (psi + pf), phi_r=pr, phi_f=pf,
               c_wheels=np.sqrt(R2) - 2 * r, gr=f["Fr"] / f["Nr"], gf=f["Ff"] / f["Nf"])
    for name, (px, py) in (("rear", (l * np.cos(pr), -l * np.sin(pr))), ("front", (L - l * np.cos(pf), -l * np.sin(pf)))):
        ax = px - np.clip(px.real / L, 0, 1) * L if np.any((px.real < 0) | (px.real > L)) else 0 * px
        out[f"c_{name}"] = np.sqrt(ax * ax + py * py) - r
    return out


@pytest.mark.parametrize("track", ["bump", "0.05*sin(2*x) + 0.02*x"])
def test_stage_derivatives_by_complex_step(vehicle, track):
    """Vehicle.stage's derivatives by each sample's own leg angles (mechsym.planar.stance: the closure of the
    declaration differentiated implicitly and symbolically, the closed-form forces by their exact partials)
    against the complex step of an independent complex-arithmetic evaluation, step 1e-30 (no cancellation:
    exact to rounding)."""
    t = tracks.load(track)
    st = us.statics()
    needed = set().union(*(st.solution[n].free_symbols for n in us.FORCES)) & set(st.constraints.q)
    assert needed <= {st.constraints.q[i] for i in (2, 5, 8)}
    rng = np.random.default_rng(5)
    x = np.linspace(1, 7, 121)
    pr, pf = rng.uniform(60, 135, 121) * DEG, rng.uniform(65, 135, 121) * DEG
    pose = vehicle.place(t, x, pr, pf, paired=True)
    base, d_r, d_f = vehicle.stage(pose, 0.0, derivatives=True)
    assert set(d_r) == set(base) == set(d_f)
    h = 1e-30
    for d, (er, ef) in ((d_r, (1j * h, 0)), (d_f, (0, 1j * h))):
        cs = _complex_stage(vehicle, t, x, pr + er, pf + ef, pose.x_rear)
        for k in base:
            exact = np.imag(cs[k]) / h
            assert np.linalg.norm(d[k] - exact) <= 1e-12 * max(np.linalg.norm(exact), 1.0), k  # seen <= 2e-15
            assert np.allclose(np.real(cs[k]), base[k], rtol=1e-12, atol=1e-9) or k in ("th_r", "th_f"), k


def test_optimize_reports_unavoidable_slip(vehicle):
    sched = uo.optimize("bump", "torque-variation", mu=0.03, samples=41, vehicle=vehicle)
    assert not sched.info["feasible"]
    assert any(e.startswith("slip:") and "x_front = " in e for e in sched.events)
    assert np.min(sched.table["slip_margin"]) < 0


def test_cli(tmp_path, capsys):
    out = tmp_path / "t.csv"
    assert main(["ugv", "torque", "--phi-r", "90deg", "--phi-f", "1.4", "--samples", "81", "--out", str(out)]) == 0
    header = out.read_text().splitlines()[0]
    assert header == "x_front,x_rear,pitch,Fr,Nr,Ff,Nf,torque"
    data = np.loadtxt(out, delimiter=",", skiprows=1)
    assert data.shape == (81, 8) and data[0, 0] == 0 and data[-1, 0] == 8
    capsys.readouterr()
    assert main(["ugv", "torque", "--phi-r", "30deg", "--phi-f", "90deg", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: leg angle phi_r = 30 deg is outside the limits") and "\n" not in err
    assert main(["ugv", "torque", "--phi-r", "90deg", "--phi-f", "90deg", "--mu", "0", "--out", str(out)]) == 2
    assert "mu = 0" in capsys.readouterr().err
    assert main(["ugv", "torque", "--phi-r", "90deg", "--phi-f", "90deg", "--mu", "0.02", "--samples", "41",
                 "--out", str(out)]) == 0
    assert "warning: slip: the rear wheel slips at x_front" in capsys.readouterr().out
    opt = tmp_path / "o.csv"
    assert main(["ugv", "optimize", "--criterion", "peak-torque", "--samples", "41", "--out", str(opt)]) == 0
    assert opt.read_text().splitlines()[0] == "x_front,phi_r,phi_f,torque,slip_margin,rollover_margin"
    assert "best constant pair" in capsys.readouterr().out
    assert main(["ugv", "optimize", "--criterion", "grip", "--mu", "-1", "--out", str(opt)]) == 2
    x = np.arange(0, 9.001, 0.05)
    short = tmp_path / "short.csv"
    np.savetxt(short, np.c_[x, 0.1 * np.exp(-(x - 4) ** 2)], delimiter=",", header="x,y", comments="")
    capsys.readouterr()
    for track, message in (("1/(x-3)", "is not finite at x = 3"),
                           ("0.3*exp(-100*(x-4)**2)", "exceeds 1/r = 3.333 1/m"),
                           (str(short), "no placement for the rear wheel behind the front contact x = 0")):
        assert main(["ugv", "torque", "--phi-r", "90deg", "--phi-f", "90deg", "--track", track, "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and message in err and err.count("\n") == 1
    assert main(["inverse", "ugv", "--omega", "1"]) == 2
    assert "use `mechsym ugv" in capsys.readouterr().err
    assert main(["ugv", "equations"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("quasi-static equilibrium of 'ugv': 16 rows x 16 unknowns") and "[same torque]" in text
    assert main(["params", "ugv", "--json"]) == 0
    import json

    info = json.loads(capsys.readouterr().out)
    assert info["parameters"]["r"] == 0.3 and info["parameters"]["L"] == 0.83


@pytest.mark.slow
def test_cli_pictures(tmp_path, plotted):
    """Figures 24 and 25 draw the data their CSV holds: the optimised angles and torque of the schedule, and
    the torque of every clear angle pair of the sweep."""
    sched = tmp_path / "o.csv"
    assert main(["ugv", "optimize", "--criterion", "torque-variation", "--samples", "41", "--out", str(sched),
                 "--plot", str(tmp_path / "fig25.png")]) == 0
    assert main(["ugv", "sweep", "--grid", "4", "--samples", "41", "--out", str(tmp_path / "s.csv"),
                 "--plot", str(tmp_path / "fig24.png")]) == 0
    assert main(["ugv", "animate", "--out", str(tmp_path / "ugv.gif"), "--samples", "6", "--schedule", str(sched)]) == 0
    for name in ("fig25.png", "fig24.png", "ugv.gif"):
        assert (tmp_path / name).stat().st_size > 1000
    table = read_csv(sched)
    lines = {label: (x, y) for _, label, x, y in plotted["fig25.png"]}
    for label, column, scale in (("phi_r", "phi_r", 1 / us.DEG), ("phi_f", "phi_f", 1 / us.DEG),
                                 ("optimised", "torque", 1.0)):
        x, y = lines[label]
        assert np.array_equal(x, table["x_front"]) and np.allclose(y, table[column] * scale, rtol=1e-12, atol=0)
    sweep = read_csv(tmp_path / "s.csv")
    x = np.unique(sweep["x_front"])
    torque = sweep["torque"].reshape(len(x), -1)  # rows: every pair at one position, position by position
    drawn = [(xs, ys) for title, _, xs, ys in plotted["fig24.png"] if title.startswith("torque on")]
    assert 0 < len(drawn) <= torque.shape[1]
    for xs, ys in drawn:
        assert np.array_equal(xs, x) and np.min(np.max(np.abs(torque - ys[:, None]), axis=0)) < 1e-12 * np.max(np.abs(ys))


def test_curvature_check_is_not_keyed_on_a_reused_id():
    """Vehicle.prepare remembered checked tracks by id(track): once a checked track was freed, a new track
    given the same id (CPython reuses it at once) was placed unchecked even with curvature above 1/r."""
    vehicle = us.Vehicle()
    collided = 0
    for _ in range(20):
        checked = Track.from_callable(lambda x: (0 * x, 0 * x, 0 * x), name="flat")
        vehicle.prepare(checked, 0.0, 1.0)
        old = id(checked)
        del checked
        sharp = Track.from_callable(lambda x: (10 * x * x, 20 * x, 20 + 0 * x), name="sharp")
        collided += id(sharp) == old
        with pytest.raises(InputError, match="curvature"):
            vehicle.prepare(sharp, 0.0, 1.0)
        del sharp
    assert collided, "no id was reused in 20 tries: this check did not exercise the case"


def test_wheel_angles_relative_to_the_legs(vehicle):
    """Vehicle.wheel_angles (the motor work's wheel rotations relative to their legs, from the declaration's
    spin coordinates) against rolling without slip written by hand: the wheel's absolute angle beta - s/r
    (s the arc length from x0) minus the leg's angle, pitch - phi_r at the rear and pitch + phi_f at the
    front."""
    x = np.linspace(0.5, 7.5, 29)
    phi_r, phi_f = np.linspace(60, 130, 29) * DEG, np.linspace(120, 70, 29) * DEG
    pose = vehicle.place(bump(), x, phi_r, phi_f, paired=True)
    th_r, th_f = vehicle.wheel_angles(pose, 0.3)
    t, r = pose.track, vehicle.r
    abs_r = t.slope(pose.x_rear) - t.arc_length_from(pose.x_rear, 0.3) / r
    abs_f = t.slope(pose.x_front) - t.arc_length_from(pose.x_front, 0.3) / r
    assert np.max(np.abs(th_r - (abs_r - (pose.pitch - phi_r)))) < 1e-12
    assert np.max(np.abs(th_f - (abs_f - (pose.pitch + phi_f)))) < 1e-12


def _half_unit(text):
    """Half a unit of the last printed digit of a number as docs/ugv.md prints it."""
    decimals = len(text.split(".")[1]) if "." in text else 0
    return 0.5 * 10.0 ** -decimals


def test_docs_criteria_table_regression(vehicle):
    """Regression, not a physical check: docs/ugv.md's table of the four criteria on the bump with the
    defaults (optimised, DP and the best constant pair with its angles), read from the page, is what
    `optimize` gives now, to the digits printed. The physics is checked by
    test_optimize_beats_every_constant_pair and the schedule checks."""
    from pathlib import Path
    import re

    page = (Path(__file__).resolve().parent.parent / "docs" / "ugv.md").read_text()
    rows = re.findall(r"^\| ([a-z-]+) \[[^]]*\] \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \((\d+)°, (\d+)°\) \|$", page, re.M)
    assert sorted(r[0] for r in rows) == sorted(uo.CRITERIA)
    for criterion, optimised, dp, constant, phi_r, phi_f in rows:
        s = uo.optimize("bump", criterion, vehicle=vehicle)
        for value, text in ((s.value, optimised), (s.dp_value, dp), (s.best_constant[2], constant)):
            assert abs(value - float(text)) <= _half_unit(text), (criterion, value, text)
        assert np.round(np.array(s.best_constant[:2]) / DEG).tolist() == [float(phi_r), float(phi_f)], criterion
