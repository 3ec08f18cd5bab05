"""mechsym against an independent derivation with sympy.physics.mechanics (tests/oracles)."""
import numpy as np
import pytest

from conftest import agree
from oracles import mechanics_models as oracle

MODELS = [("fourbar", "fourbar"), ("slider-crank", "slider_crank")]
THETA = np.linspace(0, 2 * np.pi, 181)


@pytest.fixture(params=MODELS, ids=[m for m, _ in MODELS])
def case(request):
    name, fixture = request.param
    return name, request.getfixturevalue(fixture)


def test_positions(case):
    name, system = case
    ours = system.kinematics_table(THETA)
    ref = oracle.positions(name, THETA)
    for key, values in ref.items():
        if key.endswith(".angle"):
            diff = np.angle(np.exp(1j * (ours[key] - values)))
            assert np.max(np.abs(diff)) < 1e-12, key
        else:
            assert np.max(np.abs(ours[key] - values)) < 1e-12, key


@pytest.mark.parametrize("omega, alpha", [(0.0, 0.0), (2.0, 0.0), (6.0, -25.0)])
def test_inverse_torque(case, omega, alpha):
    name, system = case
    ref = oracle.inverse_torque(name, THETA, omega, alpha)
    assert agree(system.inverse(THETA, omega, alpha)["torque"], ref, 1e-8)


def test_inverse_torque_with_other_parameters(case):
    name, system = case
    params = {"density": 2.5, "g": 3.0}
    ref = oracle.inverse_torque(name, THETA, 3.0, 1.0, params=params)
    assert agree(system.inverse(THETA, 3.0, 1.0, params=params)["torque"], ref, 1e-8)


@pytest.mark.parametrize("torque", [0.0, 0.08])
def test_forward_trajectory(case, torque):
    name, system = case
    t_end = 1.0
    table = system.forward(torque, 0.0, 0.0, t_end, dt=0.01, rtol=1e-11, atol=1e-11)
    theta, omega = oracle.forward(name, torque, 0.0, 0.0, table["t"], rtol=1e-11, atol=1e-11)
    assert np.ptp(theta) > 0.3
    assert agree(table["theta"], theta, 1e-8) and agree(table["omega"], omega, 1e-8)


@pytest.fixture(scope="module")
def c_systems():
    """Both mechanisms on the C backend (compiled once per module, or taken from the cache)."""
    from mechanisms import fourbar, slider_crank
    from mechsym import derive
    from mechsym.codegen import c_backend

    if c_backend.compiler() is None:
        pytest.skip("no C compiler")
    return {"fourbar": derive(fourbar.build(), "c"), "slider-crank": derive(slider_crank.build(), "c")}


@pytest.mark.parametrize("backend", ["numpy", "c"])
@pytest.mark.parametrize("omega, alpha", [(3.0, 0.0), (-2.0, 35.0)])
def test_inverse_reactions(case, backend, omega, alpha, request):
    """Every joint reaction of `inverse` against the oracle's opened Kane equations, to 1e-9 of the largest.

    Both follow docs/conventions.md (Forces): `JOINT.fx`, `JOINT.fy` is the force that the joint's
    first-named body exerts on its second (fourbar A ground->crank, P crank->coupler, M coupler->rocker, B ground->rocker; slider-crank
    O ground->crank, P crank->rod, S rod->slider) in world (ground) axes; `guide.fn` is the guide's force on
    the slider along the slide normal (+y, the axis +x turned +90 deg) and `guide.m` its moment on the slider.
    """
    name, system = case
    if backend == "c":
        system = request.getfixturevalue("c_systems")[name]
        assert system.backend.name == "c"
    ours = system.inverse(THETA, omega, alpha)
    ref = oracle.reactions(name, THETA, omega, alpha)
    forces = [k for k in ref if k != "torque"]
    assert sorted(forces) == sorted(k for k in ours.names if k.endswith((".fx", ".fy", ".fn", ".m")))
    scale = max(np.max(np.abs(ref[k])) for k in forces)
    for key in forces:
        assert np.max(np.abs(ours[key] - ref[key])) <= 1e-9 * scale, key
    assert agree(ours["torque"], ref["torque"], 1e-9)


def test_inverse_reactions_with_other_parameters(case):
    name, system = case
    params = {"density": 2.5, "g": 3.0, "l_crank": 0.04}
    ours = system.inverse(THETA, 3.0, 1.0, params=params)
    ref = oracle.reactions(name, THETA, 3.0, 1.0, params=params)
    forces = [k for k in ref if k != "torque"]
    scale = max(np.max(np.abs(ref[k])) for k in forces)
    for key in forces:
        assert np.max(np.abs(ours[key] - ref[key])) <= 1e-9 * scale, key
