"""Hard contact: the force LCP, impulses and friction against independent routes."""
import itertools

import numpy as np
import pytest

from mechsym.contact.box import RigidBox
from mechsym.core.quaternion import rotation_matrix as quat_to_rot
from mechsym.contact.hard import ContactError, HardContacts, Plane
from mechsym.contact.hard_forces import contact_forces
from mechsym.contact.hard_impulse import impulse
from mechsym.contact.lcp import LCPError, lemke, solve_lcp
from mechsym.core.errors import InputError

BOTTOM = ["corner++-", "corner+--", "corner-+-", "corner---"]


@pytest.fixture(scope="module")
def chain():
    from mechanisms import chain3_hard

    model = chain3_hard.Chain3Tree()
    return model, chain3_hard.contacts(model)


def box_contacts(box, names=BOTTOM, plane=None):
    return HardContacts(box, {n: n for n in names}, plane)


def quat(axis, angle):
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    return np.concatenate([np.sin(angle / 2) * axis, [np.cos(angle / 2)]])


def enumerate_lcp(W, d):
    """Every complementary basic solution of LCP(W, d): lam_S = -W_SS^-1 d_S, lam >= 0, W lam + d >= 0."""
    n = len(d)
    found = []
    for r in range(n + 1):
        for S in itertools.combinations(range(n), r):
            S = list(S)
            lam = np.zeros(n)
            if S:
                sub = W[np.ix_(S, S)]
                if np.linalg.cond(sub) > 1e10:
                    continue
                lam[S] = np.linalg.solve(sub, -d[S])
            w = W @ lam + d
            scale = 1e-9 * (np.abs(d).max() + np.abs(W).max() * np.abs(lam).max())
            if lam.min() >= -1e-9 * max(1, np.abs(lam).max()) and w.min() >= -scale:
                found.append(lam)
    return found


def problem(hc, q, v, tau):
    """W and d of the frictionless LCP assembled here from the protocol (H, C, frame Jacobians, biases)."""
    model = hc.model
    H, C = model.mass_matrix(q), model.bias(q, v)
    n = hc.B[0]
    J = np.array([n @ model.frame_jacobian(q, c.frame)[:3] for c in hc.contacts])
    b = np.array([n @ model.frame_bias(q, v, c.frame)[:3] for c in hc.contacts])
    Hi = np.linalg.inv(H)
    return J @ Hi @ J.T, J @ Hi @ (tau - C) + b, J, H, C


def random_box_state(rng):
    q = np.concatenate([rng.normal(size=3), quat(rng.normal(size=3), rng.uniform(-0.6, 0.6))])
    return q, rng.normal(size=6) * 2, rng.normal(size=6) * 10


def test_lemke_matches_enumeration_on_random_p_matrices():
    rng = np.random.default_rng(1)
    for _ in range(200):
        n = rng.integers(1, 6)
        A = rng.normal(size=(n, n))
        M = A @ A.T + 0.1 * np.eye(n) + 0.3 * rng.normal(size=(n, n))  # positive definite part: a P-matrix
        M = M if np.all(np.linalg.eigvals(M + M.T).real > 0) else A @ A.T + np.eye(n)
        q = rng.normal(size=n) * 3
        z, _ = lemke(M, q)
        ref = enumerate_lcp(M, q)
        assert len(ref) == 1
        np.testing.assert_allclose(z, ref[0], atol=1e-10 * (1 + np.abs(ref[0]).max()))


def test_lemke_reports_a_ray():
    with pytest.raises(LCPError, match="ray"):
        lemke(np.array([[-1.0]]), np.array([-1.0]))
    with pytest.raises(LCPError, match="ray"):
        lemke(np.array([[0.0, 1.0], [-1.0, 0.0]]) * 0 - np.eye(2), np.array([-1.0, -2.0]))


def test_warm_start_is_taken_and_agrees():
    rng = np.random.default_rng(2)
    A = rng.normal(size=(4, 4))
    M, q = A @ A.T + np.eye(4), rng.normal(size=4)
    z, w, info = solve_lcp(M, q)
    z2, w2, info2 = solve_lcp(M, q, guess=z > 0)
    assert info2["warm"] and not info["warm"]
    np.testing.assert_allclose(z2, z, atol=1e-12)
    z3, _, info3 = solve_lcp(M, q, guess=~(z > 0))        # a wrong guess falls back to Lemke
    assert not info3["warm"]
    np.testing.assert_allclose(z3, z, atol=1e-12)


@pytest.mark.parametrize("which", ["chain", "box3"])
def test_frictionless_forces_equal_the_unique_enumerated_solution(which, chain):
    rng = np.random.default_rng(3)
    for _ in range(30):
        if which == "chain":
            model, hc = chain
            q, v, tau = rng.normal(size=3), rng.normal(size=3) * 2, rng.normal(size=3) * 5
        else:
            model = RigidBox(1.7, (0.4, 0.3, 0.2))
            hc = box_contacts(model, BOTTOM[:3])
            q, v, tau = random_box_state(rng)
        W, d, J, H, C = problem(hc, q, v, tau)
        assert np.linalg.eigvalsh(W).min() > 1e-9            # positive definite: a unique solution
        ref = enumerate_lcp(W, d)
        assert len(ref) == 1
        sol = contact_forces(q, v, tau, hc)
        np.testing.assert_allclose(sol.lam[:, 0], ref[0], atol=1e-9 * (1 + np.abs(ref[0]).max()))
        assert np.all(sol.lam[:, 1:] == 0)
        # the equations of motion with the contact forces, to 1e-10
        res = H @ sol.qdd + C - tau - J.T @ sol.lam[:, 0]
        assert np.abs(res).max() <= 1e-10 * max(1.0, np.abs(tau).max(), np.abs(C).max())


def test_redundant_contacts_give_the_minimum_norm_solution():
    """Four coplanar corners: W is singular, every complementary solution gives the same qdd; ours has the
    least norm of all (enumerated) and is symmetric for a symmetric load."""
    rng = np.random.default_rng(4)
    box = RigidBox(2.0, (0.4, 0.3, 0.2))
    hc = box_contacts(box)
    for _ in range(20):
        q, v, tau = random_box_state(rng)
        W, d, J, H, C = problem(hc, q, v, tau)
        assert np.linalg.matrix_rank(W, 1e-9) == 3
        ref = enumerate_lcp(W, d)
        sol = contact_forces(q, v, tau, hc)
        for lam in ref:
            qdd = np.linalg.solve(H, tau - C + J.T @ lam)
            np.testing.assert_allclose(sol.qdd, qdd, atol=1e-9 * (1 + np.abs(qdd).max()))
            assert np.linalg.norm(sol.lam[:, 0]) <= np.linalg.norm(lam) * (1 + 1e-9)
    q = np.array([0, 0, 0.1, 0, 0, 0, 1.0])
    for mu in (0.0, 0.8):
        sol = contact_forces(q, np.zeros(6), np.zeros(6), hc, mu=mu)
        np.testing.assert_allclose(sol.lam[:, 0], box.mass * box.g / 4, rtol=1e-12)
        assert np.abs(sol.lam[:, 1:]).max() < 1e-12
        assert np.abs(sol.qdd).max() < 1e-12


def test_gap_acceleration_recomputed_along_the_motion(chain):
    """zeta'' of the solution equals the second derivative of the gap along q(t) = q + v t + qdd t^2/2
    (central differences, Richardson-extrapolated), for the frictionless and the frictional LCP."""
    model, hc = chain
    rng = np.random.default_rng(5)
    solved = 0
    for mu in (0.0, 0.3):
        for _ in range(10):
            q, v, tau = rng.normal(size=3), rng.normal(size=3), rng.normal(size=3) * 5
            try:
                sol = contact_forces(q, v, tau, hc, mu=mu)
            except ContactError:        # sliding with friction may have no solution (Painleve)
                continue
            solved += 1

            def d2(h):
                g = [hc.gaps(q + v * s + 0.5 * sol.qdd * s * s) for s in (-h, 0.0, h)]
                return (g[0] - 2 * g[1] + g[2]) / h ** 2

            fd = (4 * d2(1e-3) - d2(2e-3)) / 3
            np.testing.assert_allclose(sol.accel, fd, atol=1e-6 * (1 + np.abs(fd).max()))
            on = sol.lam[:, 0] > 0
            assert np.abs(sol.accel[on]).max(initial=0) < 1e-9 * (1 + np.abs(fd).max())
            assert np.all(sol.accel >= -1e-9 * (1 + np.abs(fd).max()))
    assert solved >= 15


def test_friction_lcp_obeys_coulomb_and_the_equations_of_motion():
    """Box on three corners pushed sideways: forces inside the pyramid (|ft1| + |ft2| <= mu fn for k = 4),
    sticking contacts with zero tangential acceleration, slipping ones on a facet opposing the sliding
    acceleration; H qdd + C = tau + sum J_i^T lam_i to 1e-10."""
    rng = np.random.default_rng(6)
    box = RigidBox(1.0, (0.4, 0.3, 0.2))
    hc = box_contacts(box, BOTTOM[:3])
    q = np.array([0, 0, 0.1, 0, 0, 0, 1.0])
    seen = set()
    for _ in range(40):
        tau = np.concatenate([rng.normal(size=2) * 8, [rng.normal() * 3], rng.normal(size=3)])
        mu = 0.5
        sol = contact_forces(q, np.zeros(6), tau, hc, mu=mu)
        Jc = hc.jacobian(q)
        res = box.mass_matrix(q) @ sol.qdd + box.bias(q, np.zeros(6)) - tau - np.einsum("ijk,ij->k", Jc, sol.lam)
        assert np.abs(res).max() < 1e-10 * (1 + np.abs(tau).max())
        lam = sol.lam
        assert np.all(np.abs(lam[:, 1]) + np.abs(lam[:, 2]) <= mu * lam[:, 0] * (1 + 1e-9) + 1e-12)
        at = Jc[:, 1:, :] @ sol.qdd + hc.bias(q, np.zeros(6))[:, 1:]
        for i, s in enumerate(sol.state):
            seen.add(int(s))
            if s == 1:
                assert np.abs(at[i]).max() < 1e-9 * (1 + np.abs(tau).max())
            elif s == 2 and np.linalg.norm(at[i]) > 1e-9:
                assert lam[i, 1:] @ at[i] <= 1e-9                 # friction opposes the sliding
            elif s == 0:
                assert lam[i, 0] == 0
    assert {1, 2} <= seen


def test_sliding_contact_gets_kinetic_friction(chain):
    model, hc = chain
    q = np.array([-0.9, 0.2, 0.4])
    v = np.array([0.3, -0.2, 1.0])
    sol = contact_forces(q, v, np.zeros(3), hc, mu=0.4, active=["C"])
    vt = (hc.jacobian(q) @ v)[2, 1]
    assert sol.state[2] == 2
    np.testing.assert_allclose(sol.lam[2, 1], -np.sign(vt) * 0.4 * sol.lam[2, 0], rtol=1e-12)
    assert sol.lam[0, 0] == sol.lam[1, 0] == 0


def test_vectorised_over_states(chain):
    model, hc = chain
    rng = np.random.default_rng(7)
    q, v, tau = rng.normal(size=(4, 3)), rng.normal(size=(4, 3)), rng.normal(size=(4, 3))
    many = contact_forces(q, v, tau, hc)
    for i in range(4):
        one = contact_forces(q[i], v[i], tau[i], hc)
        np.testing.assert_array_equal(many.lam[i], one.lam)
        np.testing.assert_array_equal(many.qdd[i], one.qdd)


# ---------------------------------------------------------------- impulses

def test_impulse_conserves_momentum_and_meets_restitution(chain):
    model, hc = chain
    rng = np.random.default_rng(8)
    for e in (0.0, 0.4, 1.0):
        for _ in range(10):
            q, v = rng.normal(size=3), rng.normal(size=3) * 3
            res = impulse(q, v, hc, e=e)
            H, Jc = model.mass_matrix(q), hc.jacobian(q)
            np.testing.assert_allclose(H @ (res.v_plus - v), np.einsum("ijk,ij->k", Jc, res.Lam), atol=1e-10 * (1 + np.abs(H @ v).max()))
            assert np.all(res.Lam[:, 0] >= 0)
            after, before = res.rate_after, res.rate_before
            tol = 1e-9 * (1 + np.abs(before).max())
            assert np.all(after + e * before >= -tol)                      # no contact approaches after
            on = res.Lam[:, 0] > tol
            np.testing.assert_allclose(after[on], -e * before[on], atol=tol)  # Newton's law where Lam > 0


def test_impact_lcp_when_the_block_system_pulls():
    """A box tilted, one corner landing while the other rotates away: the block solution over both gives a
    negative impulse; the impact LCP keeps the leaving corner free."""
    box = RigidBox(1.0, (0.4, 0.3, 0.2))
    hc = box_contacts(box, ["corner+--", "corner---"])
    q = np.concatenate([[0, 0, 0.2], quat([0, 1, 0], 0.3)])
    v = np.array([0, 0, -1.0, 0, 8.0, 0])
    rates = hc.rates(q, v)[:, 0]
    assert rates.min() < 0 and rates.max() > 0
    res = impulse(q, v, hc, e=0.0)
    assert not res.info["block"]
    assert res.Lam[np.argmax(rates), 0] == 0 and res.Lam[np.argmin(rates), 0] > 0
    np.testing.assert_allclose(res.rate_after[np.argmin(rates)], 0, atol=1e-12)


def test_flat_box_impulse_closed_form():
    """Lam = m v (1 + e) / 4 on every corner by symmetry (minimum norm), v+ = -e v; with friction too."""
    box = RigidBox(2.5, (0.4, 0.3, 0.2))
    hc = box_contacts(box)
    q = np.array([0, 0, 0.1, 0, 0, 0, 1.0])
    vz = -3.0
    for e, mu in ((0.0, 0.0), (0.5, 0.0), (1.0, 0.0), (0.5, 0.8)):
        res = impulse(q, np.array([0, 0, vz, 0, 0, 0]), hc, e=e, mu=mu)
        np.testing.assert_allclose(res.Lam[:, 0], box.mass * -vz * (1 + e) / 4, rtol=1e-12)
        np.testing.assert_allclose(res.v_plus, [0, 0, -e * vz, 0, 0, 0], atol=1e-12)


def test_frictional_impulse_sticks_or_slides_within_the_pyramid():
    box = RigidBox(1.0, (0.4, 0.3, 0.2))
    hc = box_contacts(box)
    q = np.array([0, 0, 0.1, 0, 0, 0, 1.0])
    for vx, mu, state in ((0.5, 0.8, 1), (5.0, 0.1, 2)):
        res = impulse(q, np.array([vx, 0, -2.0, 0, 0, 0]), hc, e=0.0, mu=mu)
        Lam = res.Lam
        assert np.all(np.abs(Lam[:, 1]) + np.abs(Lam[:, 2]) <= mu * Lam[:, 0] * (1 + 1e-9) + 1e-12)
        assert set(res.state[Lam[:, 0] > 0]) == {state}
        np.testing.assert_allclose(Lam[:, 0].sum(), 2.0 * box.mass, rtol=1e-12)
        if state == 1:  # sticking, minimum norm: symmetric about the x-z plane; the friction's pitching moment
            np.testing.assert_allclose(Lam[[0, 2], :], Lam[[1, 3], :], atol=1e-12)   # taken by the +x pair
            np.testing.assert_allclose(Lam[:, 1], -vx * box.mass / 4, rtol=1e-12)
            np.testing.assert_allclose(0.4 * (Lam[0, 0] - Lam[2, 0]), 0.1 * vx * box.mass, rtol=1e-12)
        H, Jc = box.mass_matrix(q), hc.jacobian(q)
        np.testing.assert_allclose(H @ (res.v_plus - [vx, 0, -2, 0, 0, 0]), np.einsum("ijk,ij->k", Jc, Lam), atol=1e-12)
    # sliding: the impulse takes exactly mu * 2 kg m/s of the tangential momentum
    np.testing.assert_allclose(res.v_plus[0], 5.0 - 0.1 * 2.0, rtol=1e-12)


def test_sliding_contacts_get_the_minimum_norm_loads():
    """A flat box whose corners slip (an impact while sliding, a push beyond friction from rest): the loads
    are not unique (four corners, three constrained directions), the minimum-norm ones are symmetric about
    the x-z plane, and the friction's pitching moment c mu sum(N) is taken by the difference of the pairs,
    2 a (N_front - N_back) = c mu sum(N) per pair (a = 0.2 m half length, c = 0.1 m half height)."""
    box = RigidBox(2.0, (0.4, 0.3, 0.2))
    hc = box_contacts(box)
    q = np.array([0, 0, 0.1, 0, 0, 0, 1.0])
    mu = 0.2
    res = impulse(q, np.array([1.0, 0, -1.0, 0, 0, 0]), hc, e=0.0, mu=mu)
    assert list(res.state) == [2, 2, 2, 2]
    total = box.mass * 1.0
    front, back = (total / 2 + 0.1 * mu * total / 0.4) / 2, (total / 2 - 0.1 * mu * total / 0.4) / 2
    np.testing.assert_allclose(res.Lam[:, 0], [front, front, back, back], rtol=1e-12)
    np.testing.assert_allclose(res.Lam[:, 1], -mu * res.Lam[:, 0], rtol=1e-12)
    np.testing.assert_allclose(res.v_plus, [1.0 - mu * total / box.mass, 0, 0, 0, 0, 0], atol=1e-12)
    mu, g = 0.5, 9.81
    sol = contact_forces(q, np.zeros(6), np.array([20.0, 0, 0, 0, 0, 0]), hc, mu=mu)   # 20 N > mu m g
    assert list(sol.state) == [2, 2, 2, 2]
    total = box.mass * g
    front, back = (total / 2 + 0.1 * mu * total / 0.4) / 2, (total / 2 - 0.1 * mu * total / 0.4) / 2
    np.testing.assert_allclose(sol.lam[:, 0], [front, front, back, back], rtol=1e-12)
    np.testing.assert_allclose(sol.qdd[0], (20.0 - mu * total) / box.mass, rtol=1e-12)


# ---------------------------------------------------------------- bad input and geometry

def test_bad_input():
    box = RigidBox()
    with pytest.raises(InputError, match="no frame 'foot'"):
        HardContacts(box, {"f": "foot"})
    hc = box_contacts(box)
    q, v = np.array([0, 0, 0.1, 0, 0, 0, 1.0]), np.zeros(6)
    with pytest.raises(InputError, match="mu of contact 'corner\\+\\+-' must be >= 0"):
        contact_forces(q, v, v, hc, mu=-0.1)
    with pytest.raises(InputError, match="restitution e of contact 'corner\\+--' must be in \\[0, 1\\]"):
        impulse(q, v, hc, e=[0.5, 1.2, 0, 0])
    with pytest.raises(InputError, match="plane normal must not be zero"):
        Plane((0, 0, 0), (0, 0, 0))
    with pytest.raises(InputError, match="q must have 7 values"):
        contact_forces(q[:6], v, v, hc)


def test_ray_termination_names_time_and_contacts():
    """Painleve: a slender body sliding on one corner with large friction has no consistent contact force."""
    box = RigidBox(1.0, (1.0, 0.05, 0.05))
    hc = box_contacts(box, ["corner---"])
    q = np.concatenate([[0, 0, 0.3], quat([0, 1, 0], -0.5)])
    v = np.array([-3.0, 0, 0, 0, 0, 0])
    R = quat_to_rot(q[3:])
    v[:3] = R.T @ np.array([-3.0, 0, 0])                    # corner sliding along -x
    assert hc.rates(q, v)[0, 1] < 0
    with pytest.raises(ContactError, match=r"t = 0\.25 s \(contacts: corner---\)"):
        contact_forces(q, v, np.zeros(6), hc, mu=5.0, t=0.25)


def test_sphere_radius_and_tilted_plane():
    """A sphere foot's gap is the centre's distance to the plane minus r; a ball-like body on a tilted plane
    with enough friction rolls: normal force m g cos(tilt), friction m g sin(tilt) I / (I + m r^2)."""
    box = RigidBox(1.0, (0.2, 0.2, 0.2))
    tilt = np.deg2rad(5)
    plane = Plane.tilted(tilt, "y")
    hc = HardContacts(box, {"c": ("centre", 0.1)}, plane)
    q = np.concatenate([[0, 0, 0.3], [0, 0, 0, 1.0]])
    np.testing.assert_allclose(hc.gaps(q), 0.3 * np.cos(tilt) - 0.1, rtol=1e-12)
    sol = contact_forces(q, np.zeros(6), np.zeros(6), hc, mu=0.5)
    np.testing.assert_allclose(sol.lam[0, 0], 9.81 * np.cos(tilt), rtol=1e-12)
    inertia = box.inertia[1, 1]
    np.testing.assert_allclose(np.linalg.norm(sol.lam[0, 1:]), 9.81 * np.sin(tilt) * inertia / (inertia + 0.01),
                               rtol=1e-9)
    assert sol.state[0] == 1
