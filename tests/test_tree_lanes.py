"""A tree's batched entry points on SIMD lanes (8 states per block, structure of arrays: mechsym.codegen.c_lanes,
c_source.render_straight): over N states they compute what the per-state route computes one state at a time
(the remainder past the last full block, a block with a wide angle, a tree printed in parts), and what the
numpy rendering of the same spec computes."""
import numpy as np
import pytest

from mechsym.codegen import c_backend, c_parts, callables, numpy_backend
from mechsym.codegen.c_source import render_straight
from mechsym.codegen.keys import cache_key
from mechsym.spatial import read_urdf
from mechsym.spatial.system import LANES, TreeSystem
from test_trees import random_urdf

pytestmark = pytest.mark.skipif(c_backend.compiler() is None, reason="no C compiler")

N = 21          # two full blocks and five states past them
TOL = 1e-12

MIMIC = """<?xml version="1.0"?><robot name="mimic">
<link name="base"/>
""" + "".join(f"""<link name="l{i}"><inertial><origin xyz="0.05 0.01 0.1" rpy="0.1 0.2 0.3"/><mass value="{1 + i}"/>
<inertia ixx="0.01" iyy="0.02" izz="0.025" ixy="0.001" ixz="0" iyz="0.002"/></inertial></link>""" for i in range(4)) + """
<joint name="a" type="revolute"><parent link="base"/><child link="l0"/><origin xyz="0 0 0.3"/><axis xyz="0 1 0"/>
<limit lower="-2" upper="2" effort="1" velocity="1"/></joint>
<joint name="b" type="revolute"><parent link="l0"/><child link="l1"/><origin xyz="0 0.1 0.3"/><axis xyz="1 0 0"/>
<limit lower="-2" upper="2" effort="1" velocity="1"/><mimic joint="a" multiplier="-0.5" offset="0.2"/></joint>
<joint name="c" type="continuous"><parent link="l1"/><child link="l2"/><origin xyz="0.2 0 0.1" rpy="0.3 0 0"/>
<axis xyz="0 0.6 0.8"/></joint>
<joint name="d" type="prismatic"><parent link="l2"/><child link="l3"/><origin xyz="0 0 0.2"/><axis xyz="0 0 1"/>
<limit lower="-2" upper="2" effort="1" velocity="1"/></joint>
</robot>"""


def _states(system, n, seed):
    rng = np.random.default_rng(seed)
    q = rng.uniform(-3, 3, (n, system.nq))
    if system.floating:
        q[:, 3:7] /= np.linalg.norm(q[:, 3:7], axis=1)[:, None]
    return q, rng.uniform(-2, 2, (n, system.nv)), rng.uniform(-2, 2, (n, system.nv))


def _evaluate(system, q, v, a):
    """name -> (N, ...) values of the functions on lanes, through the system's entry points."""
    H, b, J, jb = system.contact_terms(q, v)
    flat = lambda x: x.reshape(q.shape[:-1] + (-1,))
    return {"mass": system.mass_matrix(q), "bias": system.bias(q, v), "gravity": system.gravity(q),
            "inverse": system.inverse(q, v, a), "forward": system.forward(q, v, a),
            "contact": np.concatenate([flat(H), b, flat(J), flat(jb)], -1)}


def _close(got, expected, what):
    err = np.abs(got - expected).max() / np.abs(expected).max()
    assert err <= TOL, f"{what}: {err:.2e}"


@pytest.mark.parametrize("tree, frames", [(lambda: read_urdf(random_urdf(5, n=7), floating=True), ("l6",)),
                                          (lambda: read_urdf(MIMIC), ("l3",))], ids=["floating", "mimic"])
def test_batched_states_on_lanes_equal_one_state_at_a_time(tree, frames):
    """N states in one call (blocks of 8 on lanes, with the sines and cosines of ms_lanes.h) against one call
    per state (the per-state loop, libm's sines and cosines) and the numpy rendering of the spec; a block in
    which one state has an angle beyond MS_TRIG_MAX is evaluated state by state, and agrees too."""
    system = TreeSystem(tree(), frames)
    assert set(LANES) <= set(system.spec("main").functions)
    q, v, a = _states(system, N, 1)
    hinge = next(system.coordinate_names.index(link.joint.name) for link in system.links
                 if type(link.joint).__name__ in ("Revolute", "Continuous") and link.joint.mimic is None)
    q[12, hinge] = 2.5e5                      # an angle of the second block beyond MS_TRIG_MAX
    batched = _evaluate(system, q, v, a)
    for k in range(N):
        one = _evaluate(system, q[k], v[k], a[k])
        for name, values in batched.items():
            _close(values[k], one[name].reshape(values[k].shape), f"{name}, state {k}")
    printed = numpy_backend.render(system.spec("main"))        # the numpy printer of the same spec
    p = system.param_values
    for name in set(LANES) - {"forward"}:
        expected = getattr(printed, name)(q.T, v.T, a.T, p).T
        _close(batched[name].reshape(N, -1), expected.reshape(N, -1), f"{name} against numpy")
    # forward: a backward-stable solve, H x = tau - bias to round-off relative to |H| |x| (H as numpy prints it)
    H = printed.mass(q.T, v.T, a.T, p).T.reshape(N, system.nv, system.nv)
    rhs = a - printed.bias(q.T, v.T, a.T, p).T
    x = batched["forward"]
    residual = np.abs(np.einsum("nij,nj->ni", H, x) - rhs).max(1)
    scale = np.abs(H).max((1, 2)) * np.abs(x).max(1) + np.abs(rhs).max(1)
    assert (residual <= 1e-13 * scale).all(), (residual / scale).max()


def test_a_tree_in_parts_on_lanes(tmp_path, monkeypatch):
    """Printed in parts (every function, parts of a few temporaries), the lanes call the parts' lane
    functions with a per-lane workspace: N states in one call equal one call per state."""
    for name, value in (("SPEC_SIZE", 0), ("WHOLE", 0), ("PIECE_SIZE", 8), ("PART_SIZE", 40)):
        monkeypatch.setattr(c_parts, name, value)
    system = TreeSystem(read_urdf(random_urdf(8, n=6), floating=True), backend="numpy")
    spec = system.spec("main")
    source = render_straight(spec, callables.PREFIX, lanes=spec.lanes)
    assert "int MS_FN(_lanes" in source and source.count(c_parts.UNIT) > 10
    compiled = c_backend.build_source("lanes-parts", cache_key(source),
                                      lambda: (source, callables.layout(spec)), tmp_path)
    fns = callables.CFunctions(compiled)
    q, v, a = _states(system, N, 2)
    p = system.param_values
    for name in spec.functions:
        f = getattr(fns, name)
        batched = f(q.T, v.T, a.T, p)
        assert np.isfinite(batched).all(), name
        one = np.stack([f(q[k][:, None], v[k][:, None], a[k][:, None], p)[..., 0] for k in range(N)], -1)
        _close(batched, one, name)


def test_lane_code_is_compiled_only_when_batches_come(tmp_path, monkeypatch):
    """A cold derive and one-state calls build one library (the per-state loops); the first call of 8 states
    or more builds the second (the lanes), and prepare(batched=True) loads it from the cache. A routing check
    is needed here because the lanes' results equal the per-state loops' to round-off: no value can tell which
    code ran or what the cold start compiled, only the libraries in the cache can."""
    monkeypatch.setenv("MECHSYM_CACHE", str(tmp_path))
    tree = read_urdf(random_urdf(11, n=4))

    def libraries():
        return sorted(p.name.rsplit("-", 1)[0] for p in tmp_path.iterdir() if p.name.startswith("tree-"))

    system = TreeSystem(tree)
    q, v, a = _states(system, 9, 3)
    one = [system.inverse(q[k], v[k], a[k]) for k in range(9)]
    short = system.inverse(q[:7], v[:7], a[:7])             # 7 states: no full block, the per-state loop
    assert libraries() == [f"tree-{tree.name}"]
    batched = system.inverse(q, v, a)
    assert libraries() == [f"tree-{tree.name}", f"tree-{tree.name}-lanes"]
    _close(batched, np.array(one), "inverse on lanes against one state at a time")
    _close(short, np.array(one[:7]), "inverse, 7 states, against one state at a time")
    again = TreeSystem(tree).prepare(batched=True)           # from the cache: nothing compiled
    assert libraries() == [f"tree-{tree.name}", f"tree-{tree.name}-lanes"]
    _close(again.inverse(q, v, a), batched, "inverse on lanes, loaded from the cache")
