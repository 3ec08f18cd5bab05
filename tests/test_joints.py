"""A new joint type is one class: the gear pair of docs/joints.md, run from the page's own code."""
import re
from pathlib import Path

import numpy as np
import pytest

from conftest import agree
from mechsym.codegen import c_backend
from mechsym.model import Mechanism
from mechsym.system import derive

PAGE = Path(__file__).resolve().parent.parent / "docs" / "joints.md"


def _declared():
    """The gear pair class and the declaration, executed from docs/joints.md."""
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(), re.S)
    assert len(blocks) == 2
    scope = {"Mechanism": Mechanism}
    exec(blocks[0], scope)
    exec(blocks[1], scope)
    return scope["m"]


@pytest.mark.parametrize("backend", ["numpy", pytest.param("c", marks=pytest.mark.skipif(
    c_backend.compiler() is None, reason="no C compiler"))])
def test_gear_pair_from_the_docs(backend):
    s = derive(_declared(), backend)
    r1, r2, i1, i2 = 0.05, 0.1, 2e-4, 3e-3
    theta = np.linspace(-1.0, 2.0, 13)
    table = s.kinematics_table(theta)
    assert agree(table["gear2.angle"], -(r1 / r2) * theta, 1e-12)
    alpha = 4.0
    inv = s.inverse(theta, 0.0, alpha=alpha)
    assert agree(inv["torque"], np.full_like(theta, (i1 + i2 * (r1 / r2) ** 2) * alpha), 1e-12)
    # the tooth force accelerates gear 2: I2 alpha2 = r2 ft (alpha2 = -(r1/r2) alpha, ft along its row)
    assert agree(r2 * inv["mesh.ft"], np.full_like(theta, i2 * -(r1 / r2) * alpha), 1e-12)


def test_a_joint_must_be_a_joint_type():
    from mechsym.errors import InputError

    with pytest.raises(InputError, match="is not a joint"):
        Mechanism("m").add_joint(("A", "B"))
