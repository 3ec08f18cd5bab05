"""Named results: System.reduced's fields against the kinetic and potential energy, System.kinematics'
layout and the kinematics table against the slider-crank's closed-form geometry."""
import numpy as np

from mechsym.planar.dynamics import energies


def test_reduced_fields_against_energy(fourbar):
    theta = np.linspace(0, 2 * np.pi, 13)
    kin = fourbar.kinematics(theta)
    r = fourbar.reduced(kin)
    big_m, half_dm, g = r  # still unpacks as a tuple
    assert r.M is big_m and r.half_dM is half_dm and r.G is g and r.M.shape == (13,)
    kinetic, potential = energies(fourbar, kin, 2.0)
    assert np.allclose(r.M, 2 * kinetic / 4.0, rtol=1e-13)  # T = 1/2 M omega^2


def close(a, b):
    return np.allclose(a, b, rtol=0, atol=1e-12)


def test_kinematics_layout_and_table_against_the_closed_form(slider_crank):
    """Each body's slots of System.kinematics' q, and the table's columns of that name, against the offset
    slider-crank's elementary geometry: P = l1 (cos t, sin t), S on y = e at P.x + sqrt(l2^2 - (e - P.y)^2)."""
    theta = np.linspace(0, 2 * np.pi, 5)
    kin = slider_crank.kinematics(theta)
    table = slider_crank.kinematics_table(theta)
    p = dict(zip(slider_crank.param_names, slider_crank.params()))
    l1, l2, e = p["l_crank"], p["l_rod"], p["offset"]
    px, py = l1 * np.cos(theta), l1 * np.sin(theta)
    sx = px + np.sqrt(l2**2 - (e - py) ** 2)
    expected = {  # body: (x, y, angle) of its centre of mass and frame
        "crank": (px / 2, py / 2, theta),
        "rod": ((px + sx) / 2, (py + e) / 2, np.arctan2(e - py, sx - px)),
        "slider": (sx, np.full_like(theta, e), np.zeros_like(theta)),  # it slides along +x
    }
    assert list(slider_crank.constraints.bodies) == list(expected)
    for i, (body, values) in enumerate(expected.items()):
        for k, (column, value) in enumerate(zip(("x", "y", "angle"), values)):
            assert close(kin.q[:, 3 * i + k], value) and close(table[f"{body}.{column}"], value), (body, column)
    assert close(table["S.x"], sx) and close(table["S.y"], e) and close(table["P.y"], py)
    n = len(slider_crank.constraints.bodies) * 3
    assert kin.dq.shape == (5, n, 1) and kin.ddq.shape == (5, n) and kin.theta.shape == (5, 1)
