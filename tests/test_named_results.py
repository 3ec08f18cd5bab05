"""Named results: System.reduced's fields against the kinetic and potential energy, System.kinematics'
layout against the kinematics table."""
import numpy as np

from mechsym.dynamics import energies


def test_reduced_fields_against_energy(fourbar):
    theta = np.linspace(0, 2 * np.pi, 13)
    kin = fourbar.kinematics(theta)
    r = fourbar.reduced(kin)
    big_m, half_dm, g = r  # still unpacks as a tuple
    assert r.M is big_m and r.half_dM is half_dm and r.G is g and r.M.shape == (13,)
    kinetic, potential = energies(fourbar, kin, 2.0)
    assert np.allclose(r.M, 2 * kinetic / 4.0, rtol=1e-13)  # T = 1/2 M omega^2


def test_kinematics_layout_matches_the_table(slider_crank):
    theta = np.linspace(0, 2 * np.pi, 5)
    kin = slider_crank.kinematics(theta)
    table = slider_crank.kinematics_table(theta)
    for i, b in enumerate(slider_crank.constraints.bodies):
        assert np.array_equal(kin.q[:, 3 * i], table[f"{b}.x"]) and np.array_equal(kin.q[:, 3 * i + 2], table[f"{b}.angle"])
    n = len(slider_crank.constraints.bodies) * 3
    assert kin.dq.shape == (5, n, 1) and kin.ddq.shape == (5, n) and kin.theta.shape == (5, 1)
