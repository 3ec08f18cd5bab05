"""Declaration checks: every problem reported together, with names; mobility from the Jacobian rank."""
from dataclasses import replace

import numpy as np
import pytest

from mechanisms import fourbar, slider_crank
from mechsym import derive
from mechsym.core.errors import AssemblyError, InputError, ModelError, SingularError
from mechsym.planar.model import Mechanism


def test_all_problems_reported_together():
    m = Mechanism("broken")
    L = m.parameter("L", 1.0, "m")
    m.ground(points={"O": (0, 0)})
    m.bar("a", ("O", "P"), L, 1.0)
    m.revolute("j1", "ground", "O", "a")
    m.revolute("j2", "a", "Q", "b")
    m.coordinate("phi", "nope", force="T")
    with pytest.raises(ModelError) as err:
        derive(m, backend="numpy")
    text = str(err.value)
    assert "unknown point 'Q' of body 'a'" in text
    assert "unknown body 'b'" in text
    assert "unknown joint 'nope'" in text


def test_wrong_mobility_names_loops():
    m = fourbar.build()
    del m.joints["M"]  # open chain: two degrees of freedom, one coordinate
    s = derive(m, backend="numpy")
    with pytest.raises(ModelError, match="mobility is 3"):
        s.kinematics([0.0])


def test_too_many_coordinates_names_the_loop():
    m = fourbar.build()
    m.coordinate("phi", "B", force="T2")
    with pytest.raises(ModelError, match=r"mobility is 1 .* 2 coordinate\(s\) .*loop 1 \(.*joints"):
        derive(m, backend="numpy").kinematics(np.array([[0.0, 1.77]]))


def test_overconstrained_parallelogram_warns():
    m = Mechanism("parallelogram")
    m.ground(points={"A": (0, 0), "B": (1, 0), "E": (2, 0)})
    m.bar("c1", ("A", "P"), 1.0, 1.0, guess=1.5)
    m.bar("c2", ("B", "Q"), 1.0, 1.0, guess=1.5)
    m.bar("c3", ("E", "R"), 1.0, 1.0, guess=1.5)
    m.bar("top", ("P", "R"), 2.0, 1.0, points={"Q": (1.0, 0)})
    for j, b1, p, b2 in [("A", "ground", "A", "c1"), ("B", "ground", "B", "c2"), ("E", "ground", "E", "c3"),
                         ("P", "c1", "P", "top"), ("Q", "c2", "Q", "top"), ("R", "c3", "R", "top")]:
        m.revolute(j, b1, p, b2)
    m.coordinate("theta", "A", "torque", guess_at=1.5)
    s = derive(m, backend="numpy")
    assert s.topology.grubler == 0 and len(s.topology.loops) == 2
    with pytest.warns(UserWarning, match="Grübler count 0 differs from the mobility 1"):
        s.kinematics([1.0])


def test_loop_cannot_close_names_input_and_loop(fourbar):
    with pytest.raises(AssemblyError, match=r"theta=.*loop 1 .*joints"):
        fourbar.kinematics([np.pi], params={"l_crank": 0.2})


def test_dead_point_names_input_and_condition():
    """A slider-crank driven by its slider is singular where crank and rod are in line."""
    m = slider_crank.build()
    m.coordinates.clear()
    m.coordinate("s", "guide", force="push", guess_at=0.15)
    m.bodies["crank"] = replace(m.bodies["crank"], guess=1.0)
    m.bodies["rod"] = replace(m.bodies["rod"], guess=-0.3)
    s = derive(m, backend="numpy")
    with pytest.raises(SingularError, match=r"dead point at s=0\.2: .*condition number"):
        s.inverse(np.array([0.2]), 1.0, params={"offset": 0.0})


@pytest.mark.parametrize("override, message", [
    ({"density": -1}, "'density' = -1.0 must be positive"),
    ({"l_rod": float("nan")}, "'l_rod' = nan is not finite"),
    ({"bogus": 1}, "unknown parameter 'bogus'"),
    ({"m_slider": "heavy"}, "is not a number"),
])
def test_bad_parameters(slider_crank, override, message):
    with pytest.raises(InputError, match=message):
        slider_crank.params(override)


def test_negative_mass_expression_is_named():
    m = Mechanism("neg")
    k = m.parameter("k", 1.0, "", positive=False)
    m.ground(points={"O": (0, 0)})
    m.body("arm", mass=k, inertia=0.1, com=(0.5, 0), points={"O": (0, 0)})
    m.revolute("O", "ground", "O", "arm")
    m.coordinate("phi", "O", "T")
    with pytest.raises(InputError, match="body 'arm' has negative mass"):
        derive(m, backend="numpy").params({"k": -2})


def pendulum(gravity=None):
    """A uniform bar of length 1 m, mass 2 kg, pinned at one end; `gravity` is called on the declaration."""
    m = Mechanism("pendulum")
    m.ground(points={"O": (0, 0)})
    m.bar("bar", ("O", "E"), 1.0, 2.0)
    m.revolute("O", "ground", "O", "bar")
    m.coordinate("phi", "O", "T")
    if gravity:
        gravity(m)
    return m


def test_gravity_defaults_to_the_contract():
    """docs/conventions.md: 9.81 m/s^2 along -y unless a model says otherwise. The holding torque of a horizontal
    bar is m g L/2 by statics; the parameter g can be overridden; no_gravity() and gravity_down() change
    the default, and a second 'g' is reported with a hint."""
    s = derive(pendulum(), backend="numpy")
    assert list(s.mechanism.parameters) == ["g"] and s.params()[0] == 9.81
    held = s.inverse([0.0], 0.0)
    assert held["T"][0] == pytest.approx(2.0 * 9.81 * 0.5, rel=1e-12)
    assert held["O.fy"][0] == pytest.approx(2.0 * 9.81, rel=1e-12) and held["O.fx"][0] == 0.0
    assert s.inverse([0.0], 0.0, params={"g": 1.62})["T"][0] == pytest.approx(2.0 * 1.62 * 0.5, rel=1e-12)
    flat = derive(pendulum(lambda m: m.no_gravity()), backend="numpy")
    assert not flat.mechanism.parameters and flat.inverse([0.3], 0.0)["T"][0] == 0.0
    moon = derive(pendulum(lambda m: m.gravity_down("g_moon", 1.62)), backend="numpy")
    assert list(moon.mechanism.parameters) == ["g_moon"]
    assert moon.inverse([0.0], 0.0)["T"][0] == pytest.approx(2.0 * 1.62 * 0.5, rel=1e-12)
    with pytest.raises(ModelError, match="parameter 'g' declared twice .*no_gravity"):
        derive(pendulum(lambda m: m.parameter("g", 1.0)), backend="numpy")


def test_top_level_api():
    """`import mechsym` gives the documented API (loaded on first use: the import itself needs no sympy)."""
    import subprocess
    import sys

    import mechsym
    from mechsym.core.derived import derive as system_derive

    assert mechsym.derive is system_derive and {"derive", "Mechanism", "FloatingBody"} <= set(dir(mechsym))
    s = mechsym.derive(pendulum(lambda m: m.no_gravity()), backend="numpy")
    assert isinstance(s, mechsym.System) and isinstance(mechsym.load_mechanism("fourbar"), mechsym.Mechanism)
    from mechsym.spatial import Tree, read_urdf

    assert mechsym.Tree is Tree and mechsym.read_urdf is read_urdf
    with pytest.raises(AttributeError, match="no attribute 'derivee'"):
        mechsym.derivee
    light = subprocess.run([sys.executable, "-c", "import sys, mechsym; print('sympy' in sys.modules)"],
                           capture_output=True, text=True, check=True)
    assert light.stdout.strip() == "False"


@pytest.mark.parametrize("unit", ["m", "kg", "kg m^2", "kg/m", "kg/m^2", "kg/m^3"])
def test_planar_and_3d_parameters_share_one_rule(unit):
    """A length, mass, inertia or density (per length, area or volume) is positive in a planar mechanism,
    on a 3-D body and in a 3-D tree alike (the first two declared different unit sets: a planar density
    per area and a 3-D density per length were let through negative; a tree admitted any default and
    override); `nonnegative` is understood by all three."""
    from mechsym.spatial.floating import FloatingBody
    from mechsym.spatial import Tree

    planar, body, tree = Mechanism("p"), FloatingBody("b"), Tree("t")
    body.body(1.0, (1.0, 1.0, 1.0))
    tree.body("base")
    for owner in (planar, body, tree):
        owner.parameter("size", -1.0, unit)
        owner.parameter("load", -2.0, "N", nonnegative=True)
        with pytest.raises(ModelError) as err:
            owner.check()
        assert "parameter 'size' must be positive (default -1.0)" in str(err.value)
        assert "parameter 'load' must not be negative (default -2.0)" in str(err.value)
        with pytest.raises(InputError, match="parameter 'load' = -1.0 must not be negative"):
            owner.resolve_parameters({"size": 1.0, "load": -1.0})


def test_gravity_is_a_direction_times_a_magnitude_in_every_declaration():
    """docs/conventions.md: 9.81 m/s^2 along -y in the plane, along -z in 3-D. The planar mechanism, the 3-D body and
    the tree declare it by one protocol: the vector is the declaration's DOWN times the magnitude g, a
    parameter that gravity_down replaces and no_gravity removes; a second 'g' is reported with a hint."""
    import sympy as sp

    from mechsym.spatial.floating import FloatingBody
    from mechsym.spatial import Tree

    for make, down, axis in ((lambda: Mechanism("p"), (0, -1), "-y"), (lambda: FloatingBody("b"), (0, 0, -1), "-z"),
                             (lambda: Tree("t"), (0, 0, -1), "-z")):
        d = make()
        g = d.parameters["g"]
        assert list(d.parameters) == ["g"] and g.default == 9.81 and g.unit == "m/s^2" and axis in g.doc
        assert d.gravity == tuple(c * g.symbol for c in down) and d.gravity_magnitude == g.symbol
        moon = make()
        g_moon = moon.gravity_down("g_moon", 1.62)
        assert list(moon.parameters) == ["g_moon"] and moon.gravity == tuple(c * g_moon for c in down)
        free = make()
        free.no_gravity()
        assert not free.parameters and free.gravity == (0,) * len(down) and free.gravity_magnitude == sp.Integer(0)
        twice = make()
        twice.parameter("g", 1.0)
        assert "parameter 'g' declared twice (it is the default gravity" in twice._problems[0]
