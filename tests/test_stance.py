"""mechsym.planar.stance on the UGV declaration: the wheelbase against Eq. 39 written by hand, and the refusals.
(The poses against the declaration's rows, and the derivatives by complex step: tests/test_ugv.py.)"""
from types import SimpleNamespace

import numpy as np
import pytest

from mechanisms import ugv
from mechsym.core.errors import InputError, ModelError
from mechsym.planar.rolling import ContactStatics
from mechsym.planar.stance import Stance


@pytest.fixture(scope="module")
def statics():
    mech = ugv.build()
    return ContactStatics(mech, ugv.contacts(mech), ugv.ties())


def test_spacing_is_eq_39(statics):
    stance = Stance(statics, "body", ("phi_r", "phi_f"), lead="front")
    values = list(statics.mechanism.resolve_parameters(None).values())
    rng = np.random.default_rng(2)
    pr, pf = rng.uniform(0.3, 2.8, 50), rng.uniform(0.3, 2.8, 50)
    L, l = 0.83, 0.35
    R, gamma = stance.spacing(values, (pr, pf))
    dx, dy = L - l * np.cos(pr) - l * np.cos(pf), l * (np.sin(pr) - np.sin(pf))
    assert np.allclose(R, np.hypot(dx, dy), rtol=1e-14, atol=0)
    assert np.allclose(gamma, np.arctan2(dy, dx), rtol=0, atol=1e-14)
    assert set(stance.outputs) == {"spin_r", "spin_f"}


def test_refusals(statics):
    with pytest.raises(InputError, match="reference 'hull' is not a moving body"):
        Stance(statics, "hull", ("phi_r", "phi_f"))
    with pytest.raises(InputError, match=r"inputs \['phi_x'\] are not coordinates"):
        Stance(statics, "body", ("phi_r", "phi_x"))
    with pytest.raises(InputError, match="no contact named 'middle'"):
        Stance(statics, "body", ("phi_r", "phi_f"), lead="middle")
    with pytest.raises(ModelError, match="do not place every body from 'body'"):
        Stance(statics, "body", ("phi_r",))  # the front leg's angle is left open
    one = SimpleNamespace(mechanism=statics.mechanism, constraints=statics.constraints, contacts=statics.contacts[:1])
    with pytest.raises(InputError, match="needs two rolling contacts, got 1"):
        Stance(one, "body", ("phi_r", "phi_f"))
