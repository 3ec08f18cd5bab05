"""Self-consistency checks of the sympy.physics.mechanics oracle (no mechsym involved)."""
import numpy as np
import pytest

from . import mechanics_models as mm

MODELS = ["fourbar", "slider-crank"]
THETA = np.linspace(0.0, 2 * np.pi, 73)


def _rel_err(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


@pytest.mark.parametrize("model", MODELS)
def test_closure_residual(model):
    assert np.max(np.abs(mm.closure_residual(model, THETA))) < 1e-12


@pytest.mark.parametrize("params", [None, dict(l_crank=0.04, l_rocker=0.13, d_ground=0.11)])
def test_fourbar_geometry(params):
    p = dict(mm.DEFAULTS["fourbar"], **(params or {}))
    pos = mm.positions("fourbar", THETA, params)
    pt = {k: np.array([pos[k + ".x"], pos[k + ".y"]]) for k in "ABPMC"}
    dist = lambda a, b: np.hypot(*(pt[a] - pt[b]))
    np.testing.assert_allclose(pt["B"][0], p["d_ground"], atol=1e-15)
    np.testing.assert_allclose(dist("P", "A"), p["l_crank"], rtol=1e-12)
    np.testing.assert_allclose(dist("M", "B"), p["l_rocker"], rtol=1e-12)
    np.testing.assert_allclose(dist("M", "P"), p["l_coupler"] / 2, rtol=1e-12)
    np.testing.assert_allclose(dist("C", "P"), p["l_coupler"], rtol=1e-12)
    np.testing.assert_allclose(pt["C"], 2 * pt["M"] - pt["P"], atol=1e-14)
    assert np.all(pt["M"][1] > 0)                                  # assembly branch
    for body, (a, b) in dict(crank="AP", coupler="PC", rocker="BM").items():
        np.testing.assert_allclose([pos[body + ".x"], pos[body + ".y"]],
                                   (pt[a] + pt[b]) / 2, atol=1e-14)
        ang = pos[body + ".angle"]
        np.testing.assert_allclose(np.array([np.cos(ang), np.sin(ang)]) * dist(b, a),
                                   pt[b] - pt[a], atol=1e-14)


@pytest.mark.parametrize("params", [None, dict(l_crank=0.06, offset=-0.02)])
def test_slider_crank_geometry(params):
    p = dict(mm.DEFAULTS["slider-crank"], **(params or {}))
    pos = mm.positions("slider-crank", THETA, params)
    pt = {k: np.array([pos[k + ".x"], pos[k + ".y"]]) for k in "OPS"}
    np.testing.assert_allclose(np.hypot(*pt["P"]), p["l_crank"], rtol=1e-12)
    np.testing.assert_allclose(np.hypot(*(pt["S"] - pt["P"])), p["l_rod"], rtol=1e-12)
    np.testing.assert_allclose(pt["S"][1], p["offset"], atol=1e-15)
    assert np.all(pt["S"][0] > 0)
    np.testing.assert_allclose([pos["rod.x"], pos["rod.y"]], (pt["P"] + pt["S"]) / 2, atol=1e-14)
    np.testing.assert_allclose([pos["slider.x"], pos["slider.y"]], pt["S"], atol=0)
    np.testing.assert_allclose(pos["slider.angle"], 0.0)
    ang = pos["rod.angle"]
    np.testing.assert_allclose(np.array([np.cos(ang), np.sin(ang)]) * p["l_rod"],
                               pt["S"] - pt["P"], atol=1e-14)


@pytest.mark.parametrize("model", MODELS)
def test_power_balance(model):
    """T*omega = d(KE+PE)/dt along theta(t) = th + w t + a t^2/2 (central differences)."""
    rng = np.random.default_rng(1)
    th = THETA
    w = rng.uniform(-5, 5, th.size)
    a = rng.uniform(-50, 50, th.size)
    h = 1e-5
    e = [sum(mm.energy(model, th + w * s + a * s * s / 2, w + a * s)) for s in (-h, h)]
    dedt = (e[1] - e[0]) / (2 * h)
    power = mm.inverse_torque(model, th, w, a) * w
    assert _rel_err(power, dedt) < 1e-7


@pytest.mark.parametrize("model", MODELS)
def test_reduced_mass_is_acceleration_coefficient(model):
    """The Kane route's alpha coefficient equals 2*KE/omega^2 from the body energies."""
    w = 3.0
    dt = mm.inverse_torque(model, THETA, w, 7.0) - mm.inverse_torque(model, THETA, w, 0.0)
    m = mm.reduced_mass(model, THETA)
    assert np.all(m > 0)
    assert _rel_err(dt / 7.0, m) < 1e-10
    ke, _ = mm.energy(model, THETA, w)
    assert _rel_err(ke, 0.5 * m * w * w) < 1e-12


@pytest.mark.parametrize("model", MODELS)
def test_peer_route_matches_vectorised(model):
    th = np.linspace(0.0, 2 * np.pi, 37)
    assert _rel_err(mm.peer_inverse_route(model)(th, 2.0), mm.inverse_torque(model, th, 2.0)) < 1e-10
    for scalar in (False, True):
        assert _rel_err(mm.peer_inverse_newton(model, scalar=scalar)(th, 2.0), mm.inverse_torque(model, th, 2.0)) < 1e-10


@pytest.mark.parametrize("model", MODELS)
def test_energy_conserved_without_torque(model):
    t = np.linspace(0.0, 1.0, 201)
    th, w = mm.forward(model, 0.0, 0.3, 12.0, t)
    ke, pe = mm.energy(model, th, w)
    e = ke + pe
    assert np.max(np.abs(e - e[0])) < 1e-8 * np.max(ke)
    assert np.ptp(th) > 1.0                                      # it really moved


@pytest.mark.parametrize("model", MODELS)
def test_work_energy_with_constant_torque(model):
    t = np.linspace(0.0, 0.5, 101)
    torque = 0.05
    th, w = mm.forward(model, torque, 0.0, 4.0, t)
    ke, pe = mm.energy(model, th, w)
    e = ke + pe
    assert np.max(np.abs((e - e[0]) - torque * (th - th[0]))) < 1e-8 * np.max(ke)


@pytest.mark.parametrize("model", MODELS)
def test_forward_acceleration_matches_inverse(model):
    """The mass_matrix/forcing route reproduces the alpha the inverse route was asked for."""
    for th0, w0, a0 in [(0.4, 2.0, 30.0), (2.5, -3.0, -10.0), (5.0, 0.0, 5.0)]:
        tq = float(mm.inverse_torque(model, th0, w0, a0))

        def slope(h):      # central difference of omega(t) at t = 0
            w = [mm.forward(model, tq, th0, w0, [0.0, s])[1][-1] for s in (h, -h)]
            return (w[0] - w[1]) / (2 * h)
        alpha = (4 * slope(5e-4) - slope(1e-3)) / 3                  # Richardson, O(h^4)
        assert abs(alpha - a0) < 1e-6 * max(abs(a0), 1.0)


def test_parameter_override_and_errors():
    base = mm.inverse_torque("fourbar", THETA, 0.0)
    heavy = mm.inverse_torque("fourbar", THETA, 0.0, params=dict(density=2.0))
    np.testing.assert_allclose(heavy, 2 * base, rtol=1e-12)       # statics scale with mass
    np.testing.assert_allclose(mm.inverse_torque("slider-crank", THETA, 0.0, params=dict(g=0.0)),
                               0.0, atol=1e-15)
    with pytest.raises(KeyError):
        mm.positions("fourbar", THETA, dict(l_rod=1.0))
    with pytest.raises(KeyError):
        mm.positions("pendulum", THETA)


def _spec_bodies(model):
    """(name, mass, centroidal inertia) straight from the written specification."""
    p = mm.DEFAULTS[model]
    rod = lambda n, l: (n, p["density"] * l, p["density"] * l**3 / 12)
    if model == "fourbar":
        return [rod("crank", p["l_crank"]), rod("coupler", p["l_coupler"]),
                rod("rocker", p["l_rocker"])]
    return [rod("crank", p["l_crank"]), rod("rod", p["l_rod"]), ("slider", p["m_slider"], 0.0)]


def _spec_mass_and_pe(model, th, h=1e-6):
    """M(theta) and PE(theta) from positions() and hand-written masses/inertias only."""
    lo, mid, hi = (mm.positions(model, th + s) for s in (-h, 0.0, h))
    m_red, pe = 0.0, 0.0
    for name, m, inertia in _spec_bodies(model):
        d = lambda k: (hi[f"{name}.{k}"] - lo[f"{name}.{k}"]) / (2 * h)
        dang = np.angle(np.exp(1j * (hi[name + ".angle"] - lo[name + ".angle"]))) / (2 * h)
        m_red = m_red + m * (d("x") ** 2 + d("y") ** 2) + inertia * dang**2
        pe = pe + m * mm.DEFAULTS[model]["g"] * mid[name + ".y"]
    return m_red, pe


@pytest.mark.parametrize("model", MODELS)
def test_against_hand_lagrange(model):
    """T = M a + M'/2 w^2 + V' with M, V built from positions() and the spec's masses."""
    th = THETA
    m_red, _ = _spec_mass_and_pe(model, th)
    assert _rel_err(mm.reduced_mass(model, th), m_red) < 1e-8
    _, pe = mm.energy(model, th, 0.0)
    assert _rel_err(pe, _spec_mass_and_pe(model, th)[1]) < 1e-12
    h = 1e-4
    dm = (_spec_mass_and_pe(model, th + h)[0] - _spec_mass_and_pe(model, th - h)[0]) / (2 * h)
    dv = (_spec_mass_and_pe(model, th + h)[1] - _spec_mass_and_pe(model, th - h)[1]) / (2 * h)
    w, a = 2.5, -4.0
    assert _rel_err(mm.inverse_torque(model, th, w, a), m_red * a + 0.5 * dm * w * w + dv) < 1e-6


# (joint, first body, second body, point) as the specification names them; None is the ground
_JOINTS = {
    "fourbar": [("A", None, "crank", "A"), ("P", "crank", "coupler", "P"),
                ("M", "coupler", "rocker", "M"), ("B", None, "rocker", "B")],
    "slider-crank": [("O", None, "crank", "O"), ("P", "crank", "rod", "P"), ("S", "rod", "slider", "S")],
}


@pytest.mark.parametrize("omega, alpha", [(0.0, 0.0), (4.0, 0.0), (-3.0, 40.0)])
@pytest.mark.parametrize("model", MODELS)
def test_reactions_satisfy_newton_euler(model, omega, alpha):
    """Each body's m a = sum F + m g and I alpha = sum (r - r_G) x F + T with the reactions of the opened
    Kane equations, positions from positions(), masses and inertias from the written specification."""
    g = mm.DEFAULTS[model]["g"]
    r = mm.reactions(model, THETA, omega, alpha)
    pos = mm.positions(model, THETA)
    acc = mm.body_accelerations(model, THETA, omega, alpha)
    scale = max(np.max(np.abs(v)) for v in r.values())
    for body, m, inertia in _spec_bodies(model):
        fx, fy = np.zeros_like(THETA), -m * g * np.ones_like(THETA)
        mz = r["torque"] if body == "crank" else np.zeros_like(THETA)
        if body == "slider":
            fy, mz = fy + r["guide.fn"], mz + r["guide.m"]
        for joint, first, second, pt in _JOINTS[model]:
            sign = 1.0 if body == second else -1.0 if body == first else 0.0
            jx, jy = sign * r[joint + ".fx"], sign * r[joint + ".fy"]
            rx, ry = pos[pt + ".x"] - pos[body + ".x"], pos[pt + ".y"] - pos[body + ".y"]
            fx, fy, mz = fx + jx, fy + jy, mz + rx * jy - ry * jx
        ax, ay, dw = acc[body]
        assert np.max(np.abs(m * ax - fx)) < 1e-10 * scale, body
        assert np.max(np.abs(m * ay - fy)) < 1e-10 * scale, body
        assert np.max(np.abs(inertia * dw - mz)) < 1e-10 * scale * mm.DEFAULTS[model]["l_crank"], body


@pytest.mark.parametrize("model", MODELS)
def test_reaction_route_torque_matches_reduced_kane(model):
    """The opened system's torque equals the reduced (constrained) Kane equation's."""
    for omega, alpha in [(0.0, 0.0), (5.0, -30.0)]:
        assert _rel_err(mm.reactions(model, THETA, omega, alpha)["torque"],
                        mm.inverse_torque(model, THETA, omega, alpha)) < 1e-10


def test_reactions_scale_and_slider_moment():
    """Statics scale with density and gravity; a point-mass slider carries no guide moment."""
    base = mm.reactions("fourbar", THETA, 0.0)
    heavy = mm.reactions("fourbar", THETA, 0.0, params=dict(density=2.0, g=4.905))
    for k in base:
        np.testing.assert_allclose(heavy[k], base[k], rtol=1e-10, atol=1e-14)
    r = mm.reactions("slider-crank", THETA, 3.0, 2.0)
    assert np.max(np.abs(r["guide.m"])) < 1e-12 * np.max(np.abs(r["guide.fn"]))
    assert np.all(r["guide.fn"] > 0)                      # the slider's weight rests on the guide
