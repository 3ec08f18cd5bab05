"""Force elements on a tree (mechsym.spatial.elements): a spring-damper between two HyQ feet and a
torsional spring-damper at a knee against the same forces applied through Pinocchio's frame Jacobians
(J^T f at the feet's frames, world-aligned; the torque on the knee's speed), at random states."""
import numpy as np
import pytest

pin = pytest.importorskip("pinocchio")

from mechanisms import hyq  # noqa: E402
from mechsym.core.errors import ModelError  # noqa: E402
from mechsym import derive  # noqa: E402
from oracles.robots import Reference  # noqa: E402

K, C, L0 = 800.0, 20.0, 0.5
KT, CT, ANGLE0 = 30.0, 0.5, -1.2


@pytest.fixture(scope="module")
def systems():
    tree = hyq.build()
    tree.spring_damper("feet", ("lf_foot", "lf_foot"), ("rf_foot", "rf_foot"), K, C, free_length=L0)
    tree.torsional("knee", "lf_kfe_joint", stiffness=KT, damping=CT, free_angle=ANGLE0)
    return derive(hyq.build(), backend="numpy"), derive(tree, backend="c")


def pinocchio_loads(ref, q, v):
    """Pinocchio's generalised forces (our v's order) of the two elements, and the spring's length, rate
    and tension, at our state q, v."""
    model, data = ref.model, ref.data
    qp, vp = ref.pinocchio_q(q), ref.G @ v
    pin.forwardKinematics(model, data, qp, vp)
    pin.updateFramePlacements(model, data)
    pin.computeJointJacobians(model, data, qp)
    ends = []
    for name in ("lf_foot", "rf_foot"):
        fid = model.getFrameId(name)
        ends.append((data.oMf[fid].translation.copy(),
                     pin.getFrameVelocity(model, data, fid, pin.LOCAL_WORLD_ALIGNED).linear.copy(),
                     pin.getFrameJacobian(model, data, fid, pin.LOCAL_WORLD_ALIGNED)[:3]))
    (oa, va, ja), (ob, vb, jb) = ends
    length = np.linalg.norm(ob - oa)
    u = (ob - oa) / length
    rate = u @ (vb - va)
    tension = K * (length - L0) + C * rate
    tau = ja.T @ (tension * u) + jb.T @ (-tension * u)
    knee = model.joints[model.getJointId("lf_kfe_joint")]
    angle, speed = qp[knee.idx_q], vp[knee.idx_v]
    tau[knee.idx_v] -= KT * (angle - ANGLE0) + CT * speed
    return ref.G.T @ tau, (length, rate, tension)


def test_elements_match_pinocchio_jacobians(systems):
    plain, sprung = systems
    ref = Reference(sprung, str(hyq.URDF), True)
    qs, vs, _ = ref.states(6, seed=4)
    for q, v in zip(qs, vs):
        q[:3] = hyq.standing()[:3]                              # (the base anywhere: the same forces)
        want, (length, rate, tension) = pinocchio_loads(ref, q, v)
        got = plain.bias(q, v) - sprung.bias(q, v)              # bias = C v + g - Q
        assert np.max(np.abs(got - want)) <= 1e-10 * np.max(np.abs(want))
        cols = sprung.element_columns(q, v)
        assert np.allclose([cols["feet.length"], cols["feet.rate"], cols["feet.force"]], [length, rate, tension],
                           rtol=1e-12, atol=1e-12)
        a = np.random.default_rng(1).standard_normal(sprung.nv)
        assert np.max(np.abs(sprung.inverse(q, v, a) - plain.inverse(q, v, a) + want)) <= 1e-10 * np.max(np.abs(want))


def test_a_tree_element_is_checked_by_name():
    tree = hyq.build()
    tree.spring("s", ("lf_foot", "lf_foot"), ("lf_foot", "nowhere"), 10.0)
    tree.torsional("t", "lf_foot_joint", 1.0)
    with pytest.raises(ModelError) as err:
        derive(tree, backend="numpy")
    text = str(err.value)
    assert "spring 's' names unknown point 'nowhere' of body 'lf_foot'" in text
    assert "spring 's' joins two points of body 'lf_foot'" in text
    assert "torsional spring-damper 't' names 'lf_foot_joint', which is not a revolute joint" in text
