"""mechsym.planar.stickslip on a model other than PASIBOT: a cart on the floor (prismatic joint, Coulomb friction)
carrying an arm that turns at a constant speed. Its stick/slip run is checked against the closed forms of
the cart's horizontal and vertical balance, Coulomb's law at every switch, and the energy balance; and a
hybrid run whose right-hand side cannot be evaluated at a trial state rejects the step instead of failing."""
import numpy as np
import pytest

from mechsym import derive
from mechsym.core import hybrid
from mechsym.core.errors import InputError
from mechsym.core.runner import StepRejected
from mechsym.planar.model import Mechanism
from mechsym.planar.stickslip import StickSlip, sliding

M_CART, RHO, R, G, OMEGA = 1.0, 2.0, 0.2, 9.81, 10.0


def shaker():
    m = Mechanism("shaker")
    m_cart = m.parameter("m_cart", M_CART, "kg", "cart mass")
    rho = m.parameter("density", RHO, "kg/m", "arm linear density")
    r = m.parameter("r", R, "m", "arm length")
    m.parameter("mu_s", 0.2, "", "static friction", positive=False, nonnegative=True)
    m.parameter("mu_k", 0.15, "", "kinetic friction", positive=False, nonnegative=True)
    m.gravity_down("g", G)
    m.ground(points={"O": (0, 0)})
    m.body("cart", mass=m_cart, inertia=0.01, com=(0, 0), points={"P": (0, 0)})
    m.bar("arm", ("P", "Q"), r, rho)
    m.prismatic("slide", "ground", "O", "cart", "P", axis=(1, 0))
    m.revolute("pin", "cart", "P", "arm")
    m.coordinate("theta", "pin", force="torque")
    m.coordinate("x", "slide", force="friction")
    return m


@pytest.fixture(scope="module")
def system():
    return derive(shaker(), backend="numpy")


def closed_form(theta):
    """Friction needed to hold the cart and the normal force, with the arm at constant speed OMEGA."""
    m_arm, c = RHO * R, R / 2
    return -m_arm * c * OMEGA**2 * np.cos(theta), (M_CART + m_arm) * G - m_arm * c * OMEGA**2 * np.sin(theta)


def test_stick_slip_run_against_the_closed_forms(system):
    model = StickSlip(system, "x", 0.2, 0.15, omega=OMEGA)
    model.seed(np.array([0.0, 0.0]))
    y0 = np.array([0.0, OMEGA, 0.0, 0.0, 0.0, 0.0])
    run = hybrid.run(model.modes(max_step=0.05), model.choose, y0, (0.0, 0.7), rtol=1e-10, atol=1e-12)
    kinds = [e.transition for e in run.events]
    assert {"stick->slip", "slip stops"} <= set(kinds) and "lift-off" not in kinds
    m_arm, c = RHO * R, R / 2
    for e in run.events:  # Coulomb's law at the switches, from the closed forms
        need, fn = closed_form(e.y[0])
        if e.transition == "stick->slip":
            assert abs(need) == pytest.approx(0.2 * fn, abs=1e-9)
        else:
            assert e.y[3] == 0.0
    t = np.linspace(0.0, 0.7, 141)
    y, modes = run.sample(t)
    assert np.max(np.abs(y[:, 0] - OMEGA * t)) < 1e-9
    for mode in np.unique(modes):
        sel = modes == mode
        u = model.along(mode, t[sel], y[sel])
        need, fn = closed_form(y[sel, 0])
        assert np.allclose(u["fn"], fn, rtol=1e-10, atol=0)
        if sliding(mode):
            sign = 1.0 if mode == "slip+" else -1.0
            assert np.allclose(u["friction"], -sign * 0.15 * fn, rtol=1e-10, atol=0)
            assert np.allclose(u["xdd"], (u["friction"] - need) / (M_CART + m_arm), rtol=0, atol=1e-9)
        else:
            assert np.allclose(u["friction"], need, rtol=0, atol=1e-10)
            assert np.all(np.abs(u["friction"]) <= 0.2 * fn * (1 + 1e-9))
    # work in = delta(KE + PE) + friction dissipation
    e0, e1 = model.energy(y[0]), model.energy(y[-1])
    work, lost = y[-1, 4] - y[0, 4], y[-1, 5] - y[0, 5]
    assert lost > 0 and abs(work - (e1 - e0) - lost) <= 1e-8 * abs(work)
    assert sum(d for _, _, d in model.slips(run)) == pytest.approx(y[-1, 2], abs=1e-12)


def test_stick_slip_refuses_a_model_it_cannot_handle(system):
    with pytest.raises(InputError, match="exceeds static friction"):
        StickSlip(system, "x", 0.1, 0.2, omega=OMEGA)
    with pytest.raises(InputError, match="either"):
        StickSlip(system, "x", 0.2, 0.1)
    with pytest.raises(InputError, match="stick/slip needs two coordinates"):
        StickSlip(system, "y", 0.2, 0.1, omega=OMEGA)


def test_a_trial_state_that_cannot_be_reached_rejects_the_step():
    """y' = 1, but the right-hand side refuses (StepRejected, as a configuration tracker does) any state more
    than 0.05 beyond the last it evaluated: the integrator's long first steps are rejected and retried
    shorter, and the run ends at t_end with y = t. A state refused for good ends the run with the reason."""
    reached = [0.0]

    def rhs(t, y):
        if y[0] > reached[0] + 0.05:
            raise StepRejected(f"cannot reach y = {y[0]:.3g}")
        reached[0] = max(reached[0], y[0])
        return [1.0]

    run = hybrid.run([hybrid.Mode("m", rhs)], "m", [0.0], (0.0, 1.0), rtol=1e-10)
    assert run.status == "done" and run.segments[-1].y1[0] == pytest.approx(1.0, abs=1e-12)

    def wall(t, y):
        if y[0] > 0.5:
            raise StepRejected("a dead point at y = 0.5")
        return [1.0]

    with pytest.raises(InputError, match="a dead point at y = 0.5"):
        hybrid.run([hybrid.Mode("m", wall)], "m", [0.0], (0.0, 1.0), rtol=1e-10)


@pytest.mark.skipif(__import__("mechsym.codegen.c_backend", fromlist=["compiler"]).compiler() is None,
                    reason="no C compiler")
@pytest.mark.parametrize("drive", [{"omega": OMEGA}, {"force": lambda t, th, w: 0.3 * np.cos(th)}])
def test_one_c_call_per_state_equals_the_full_solve(system, drive):
    """On C a state's unknowns come from the multipliers of four rows (ms_track_rows) and the contact's
    one or two free accelerations in closed form: equal to the full A U = C of the same state, for every
    contact, imposed speed or imposed torque; and the C run equals the numpy run."""
    c = derive(shaker(), backend="c")
    model = StickSlip(c, "x", 0.2, 0.15, **drive)
    model.seed(np.array([0.3, 0.0]))
    for theta in (0.3, 0.32, 0.35):
        y = np.array([theta, OMEGA, 0.001, 0.02, 0.0, 0.0])
        for contact in ("stick", "slip+", "slip-"):
            full = model.solve(contact, 0.1, y)
            fast = model.quick(contact, 0.1, y)
            assert fast is not None
            for k, v in fast.items():
                assert v == pytest.approx(full[k], rel=1e-10, abs=1e-12), (contact, k)
    if "omega" in drive:
        runs = {}
        for name, sys_ in (("c", c), ("numpy", system)):
            m = StickSlip(sys_, "x", 0.2, 0.15, **drive)
            m.seed(np.array([0.0, 0.0]))
            y0 = np.array([0.0, OMEGA, 0.0, 0.0, 0.0, 0.0])
            runs[name] = hybrid.run(m.modes(max_step=0.05), m.choose, y0, (0.0, 0.7), rtol=1e-10, atol=1e-12)
        assert [e.transition for e in runs["c"].events] == [e.transition for e in runs["numpy"].events]
        assert np.allclose([e.t for e in runs["c"].events], [e.t for e in runs["numpy"].events], rtol=0, atol=1e-9)
