"""The floating 3-D rigid body: Newton-Euler, quaternion handling, declaration errors."""
import numpy as np
import pytest

from mechsym import derive
from mechsym.core.errors import InputError, ModelError
from mechsym.core.quaternion import about as quat_about, rotation_matrix
from mechsym.spatial.floating import FloatingBody, FloatingSystem

INERTIA = (0.1, 0.2, 0.25)


def brick(mass=2.0, inertia=INERTIA):
    b = FloatingBody("brick")
    m = b.parameter("m", mass, "kg", "mass")
    b.body(m, inertia, points={"corner": (0.1, 0.2, 0.3)})
    return b


@pytest.fixture(scope="module")
def system():
    return derive(brick(), backend="numpy")          # mechsym.derive dispatches on the declaration


def test_derive_dispatches(system):
    assert isinstance(system, FloatingSystem)
    assert system.coordinate_names[:7] == ["x", "y", "z", "qx", "qy", "qz", "qw"]


def test_torque_free_motion_conserves_energy_and_momentum(system):
    y0 = system.initial_state((0, 0, 1), quat_xyzw=quat_about((1, 1, 0), 0.3), velocity=(1, 0, 2), omega=(0.5, 3.0, 0.2))
    table = system.simulate(y0, 2.0, rtol=1e-11)
    y = table.solution(table["t"])
    energy = system.energy(y, system.params()).sum(axis=0)
    assert np.ptp(energy) <= 1e-9 * np.abs(energy).max()
    momentum = np.einsum("nij,jn->in", rotation_matrix(y[3:7].T), np.diag(INERTIA) @ y[10:13])
    assert np.ptp(momentum, axis=1).max() <= 1e-9 * np.abs(momentum).max()
    # the world-frame columns: w_world = R w_body, unit quaternion
    cols = system.world_columns(y)
    np.testing.assert_allclose(np.stack([cols["wx"], cols["wy"], cols["wz"]]),
                               np.einsum("nij,jn->in", rotation_matrix(y[3:7].T), y[10:13]), atol=1e-12)
    assert np.allclose(cols["qw"] ** 2 + cols["qx"] ** 2 + cols["qy"] ** 2 + cols["qz"] ** 2, 1, atol=1e-14)


def test_free_flight_is_a_parabola(system):
    y0 = system.initial_state((1, 2, 3), quat_xyzw=quat_about((0, 1, 0), 1.0), velocity=(0.5, -0.2, 4.0), omega=(1, 2, 3))
    table = system.simulate(y0, 1.0, rtol=1e-11)
    t = table["t"]
    np.testing.assert_allclose(table["z"], 3 + 4 * t - 9.81 * t**2 / 2, atol=1e-9)
    np.testing.assert_allclose(table["x"], 1 + 0.5 * t, atol=1e-9)
    np.testing.assert_allclose(table["vz"], 4 - 9.81 * t, atol=1e-9)


def test_quaternion_drift_is_pulled_back_without_changing_the_rotation(system):
    """A non-unit quaternion represents the same rotation (R uses q/|q|); the stabilising term pulls
    |q| back towards 1 while the rotation stays that of the normalised start."""
    from scipy.integrate import solve_ivp

    y_unit = system.initial_state(omega=(0.0, 0.0, 40.0), omega_frame="body", quat_xyzw=quat_about((1, 0, 0), 0.2))
    y_big = y_unit.copy()
    y_big[3:7] *= 1.05
    ode = system.ode()
    a = solve_ivp(ode.rhs, (0, 2.0), y_unit, rtol=1e-11, atol=1e-12, dense_output=True)
    b = solve_ivp(ode.rhs, (0, 2.0), y_big, rtol=1e-11, atol=1e-12, dense_output=True)
    norms = np.linalg.norm(b.y[3:7], axis=0)
    assert norms[0] == pytest.approx(1.05) and abs(norms[-1] - 1) < 0.05 * 0.05
    t = np.linspace(0, 2, 50)
    np.testing.assert_allclose(rotation_matrix(a.sol(t)[3:7].T), rotation_matrix(b.sol(t)[3:7].T), atol=1e-8)
    assert system.normalise(y_big)[3:7] == pytest.approx(y_unit[3:7])


def test_rotation_matrix_and_axis_angle():
    q = quat_about((0, 0, 1), np.pi / 2)
    np.testing.assert_allclose(q, [0, 0, np.sqrt(0.5), np.sqrt(0.5)], atol=1e-15)     # scalar last
    np.testing.assert_allclose(rotation_matrix(q) @ [1, 0, 0], [0, 1, 0], atol=1e-15)
    np.testing.assert_allclose(rotation_matrix(3 * q), rotation_matrix(q), atol=1e-15)


def test_points_and_accelerations(system):
    y = system.initial_state((0, 0, 1), quat_xyzw=quat_about((0, 0, 1), np.pi / 2))
    np.testing.assert_allclose(system.point_positions(y)[0], [-0.2, 0.1, 1.3], atol=1e-15)
    rate = system.accelerations(y, [2.0, 0, 0, 0, 0, 0.25])
    np.testing.assert_allclose(rate[7:10], [1.0, 0, -9.81])
    np.testing.assert_allclose(rate[10:13], [0, 0, 1.0])


# ---------------------------------------------------------------- bad input

def test_bad_declarations():
    with pytest.raises(InputError, match="non-positive mass|must be positive"):
        derive(brick(mass=-1.0), backend="numpy")
    b = brick(inertia=(1.0, 1.0, 3.0))
    with pytest.raises(InputError, match="triangle inequality"):
        derive(b, backend="numpy").params()
    b = brick(inertia=[[1, 2, 0], [2, 1, 0], [0, 0, 1]])
    with pytest.raises(InputError, match="not positive definite"):
        derive(b, backend="numpy").params()
    with pytest.raises(InputError, match="3x3"):
        FloatingBody("x").body(1.0, [[1, 0], [0, 1]])
    with pytest.raises(ModelError, match="no mass"):
        derive(FloatingBody("empty"), backend="numpy")
    b = FloatingBody("stray")
    b.body(1.0, (1, 1, 1), points={"p": ("a", 0, 0)})
    with pytest.raises(ModelError, match="undeclared symbols"):
        derive(b, backend="numpy")


def test_bad_states_and_parameters(system):
    with pytest.raises(InputError, match="unknown parameter 'mass'"):
        system.params({"mass": 3})
    with pytest.raises(InputError, match="13 values"):
        system.simulate(np.zeros(12), 1.0)
    y0 = system.initial_state()
    y0[8] = np.nan
    with pytest.raises(InputError, match="state0 must be finite"):
        system.simulate(y0, 1.0)
    with pytest.raises(InputError, match="t_end"):
        system.simulate(system.initial_state(), -1.0)
    with pytest.raises(InputError, match=r"quat_xyzw \(the quaternion\) must be non-zero"):
        system.initial_state(quat_xyzw=(0, 0, 0, 0))
    with pytest.raises(InputError, match="velocity must have 3"):
        system.initial_state(velocity=(1, 2))
    with pytest.raises(InputError, match="omega_frame"):
        system.initial_state(omega_frame="inertial")


def test_loaded_body_is_served_from_the_shared_c_cache(tmp_path, monkeypatch):
    """The body under loads goes through the C backend's public cache: a later process (memory cleared,
    building made impossible) loads the same entry as it is, and C agrees with the numpy program."""
    from mechsym.spatial import floating_loads
    from mechsym.codegen import c_backend
    from mechsym.spatial.floating_loads import BodyTorque

    if c_backend.compiler() is None:
        pytest.skip("no C compiler")
    monkeypatch.setenv("MECHSYM_CACHE", str(tmp_path))
    monkeypatch.setattr(floating_loads, "_GENERATED", {})
    body = derive(brick(), backend="numpy")
    y = body.initial_state((0, 0, 1), quat_xyzw=quat_about((1, 2, 0), 0.4), velocity=(0.3, 0, 0), omega=(1, -2, 3))
    first = body.loaded([BodyTorque("drive", (0.1, 0.2, -0.3))])
    rates, jac = first.rates(y), first.jacobians(y)
    (entry,) = tmp_path.glob("floating-brick-*")
    stamp = (entry / "lib.so").stat().st_mtime_ns
    monkeypatch.setattr(floating_loads, "_GENERATED", {})
    monkeypatch.setattr(c_backend, "_LOADED", {})
    monkeypatch.setattr(c_backend, "write_entry", None)
    again = body.loaded([BodyTorque("drive", (0.1, 0.2, -0.3))])
    assert again.backend == "c" and (entry / "lib.so").stat().st_mtime_ns == stamp
    np.testing.assert_array_equal(again.rates(y), rates)
    numpy = body.loaded([BodyTorque("drive", (0.1, 0.2, -0.3))], backend="numpy")
    np.testing.assert_allclose(numpy.rates(y), rates, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(numpy.jacobians(y), jac, rtol=1e-12, atol=1e-12)


def test_no_gravity_is_a_straight_line():
    """The default is 9.81 m/s^2 along -z (test_free_flight_is_a_parabola); no_gravity() removes it."""
    b = brick()
    b.no_gravity()
    s = derive(b, backend="numpy")
    table = s.simulate(s.initial_state((1, 2, 3), velocity=(0.5, -0.2, 4.0), omega=(1, 2, 3)), 1.0, rtol=1e-11)
    t = table["t"]
    np.testing.assert_allclose(np.stack([table["x"], table["y"], table["z"]]),
                               np.stack([1 + 0.5 * t, 2 - 0.2 * t, 3 + 4 * t]), atol=1e-9)


def test_default_gravity_is_the_parameter_g_as_on_a_planar_mechanism():
    """A floating body declares g = 9.81 m/s^2 along -z by default (a run-time parameter, as a planar
    Mechanism's g along -y): the Moon's g gives the Moon's parabola; gravity_down() replaces the default and
    a second 'g' is reported with the hint."""
    b = brick()
    assert b.parameters["g"].default == 9.81
    s = derive(b, backend="numpy")
    table = s.simulate(s.initial_state((0, 0, 3), velocity=(0.0, 0.0, 4.0)), 1.0, rtol=1e-11, params={"g": 1.62})
    t = table["t"]
    np.testing.assert_allclose(table["z"], 3 + 4 * t - 1.62 * t**2 / 2, atol=1e-9)
    replaced = brick()
    replaced.gravity_down("g_moon", 1.62)
    assert "g" not in replaced.parameters and "g_moon" in replaced.parameters
    twice = brick()
    twice.parameter("g", 9.81)
    assert any("default gravity" in p for p in twice._problems)


def test_the_body_runs_on_c_as_on_numpy(system):
    """backend "c": the rates from the body's compiled library equal the numpy ones to rounding on random
    states and wrenches, and a tumbling flight under a load integrated on both agrees far inside its rtol."""
    from mechsym.codegen import c_backend

    if c_backend.compiler() is None:
        pytest.skip("no C compiler")
    on_c = derive(brick(), backend="c")
    assert on_c.backend.name == "c"
    rng = np.random.default_rng(8)
    ys, gens = rng.normal(size=(13, 40)), rng.normal(size=(6, 40))
    ref = system.accelerations(ys, gens)
    np.testing.assert_allclose(on_c.accelerations(ys, gens), ref, rtol=0, atol=1e-13 * np.abs(ref).max())
    np.testing.assert_allclose(on_c.accelerations(ys[:, 3], gens[:, 3]), ref[:, 3], rtol=0,
                               atol=1e-13 * np.abs(ref).max())
    load = lambda t, q, qd, s: (np.array([0.3, 0.0, -0.2, 0.02, -0.01, 0.03]), ())  # noqa: E731
    y0 = system.initial_state((0, 0, 1), quat_xyzw=quat_about((1, 1, 0), 0.3), velocity=(1, 0, 2), omega=(0.5, 3.0, 0.2))
    a, b = on_c.simulate(y0, 2.0, rtol=1e-9, load=load), system.simulate(y0, 2.0, rtol=1e-9, load=load)
    for name in a.names:
        assert np.max(np.abs(a[name] - b[name])) <= 1e-9 * max(1.0, np.abs(b[name]).max()), name


def test_the_free_body_equations_against_a_tree_and_the_floating_body():
    """The free body's equations (mechsym.spatial.floating.bias) against two other formulations: a tree whose
    one body hangs on a free joint (the recursive Newton-Euler, in Pinocchio's body-frame speeds) and the
    FloatingBody's generated rates (world-frame linear speed), at one tumbling state."""
    from mechsym.core.freejoint import FreeJoint
    from mechsym.spatial import Free, Tree
    from mechsym.spatial.floating import bias

    mass, inertia = 1.7, np.array([[0.3, 0.02, -0.01], [0.02, 0.4, 0.03], [-0.01, 0.03, 0.5]])
    tree = Tree("lone")
    tree.body("lump", joint=Free(), mass=mass, inertia=inertia)
    system = derive(tree, backend="numpy")
    q = np.concatenate([[0.3, -0.2, 1.1], quat_about((1, -2, 0.5), 0.7)])
    v = np.array([0.4, -1.2, 0.9, 2.0, -0.7, 1.3])
    R = rotation_matrix(q[3:7])
    lin, ang = bias(mass, inertia, (0.0, 0.0, -9.81), R, v[:3], v[3:], "local")
    np.testing.assert_allclose([*lin, *ang], system.bias(q, v), rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(system.mass_matrix(q), np.block([[mass * np.eye(3), np.zeros((3, 3))],
                                                                [np.zeros((3, 3)), inertia]]), atol=1e-15)

    body = FloatingBody("lump")
    body.body(mass, inertia.tolist())
    free = derive(body, backend="numpy")
    world = FreeJoint("world")
    qw, vw = world.from_pinocchio(q, v)
    y = np.concatenate([qw, vw])
    lin, ang = bias(mass, inertia, (0.0, 0.0, -9.81), R, vw[:3], vw[3:], "world")
    rates = free.accelerations(y)
    np.testing.assert_allclose(rates[7:10], -np.array(lin) / mass, rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(inertia @ rates[10:13], -np.array(ang), rtol=1e-12, atol=1e-12)
