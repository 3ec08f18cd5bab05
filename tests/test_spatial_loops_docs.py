"""docs/spatial-loops.md's spatial slider-crank, run from the page's own code: the slider's travel against its
closed form, the crank's power against the rate of the tree's energy."""
import re
from pathlib import Path

import numpy as np

PAGE = Path(__file__).resolve().parent.parent / "docs" / "spatial-loops.md"


def test_spatial_slider_crank_from_the_docs():
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(), re.S)
    assert len(blocks) == 2
    scope = {}
    exec(blocks[0], scope)
    exec(blocks[1], scope)
    r, L, h, c, theta = (scope[k] for k in ("r", "L", "h", "c", "theta"))
    x0 = scope["x0"]
    travel = r * np.cos(theta) + np.sqrt(L ** 2 - (c - r * np.sin(theta)) ** 2 - h ** 2)
    assert np.abs(scope["slide"] + x0 - travel).max() < 1e-12
    s, kin, v, a, tau, omega = (scope[k] for k in ("solver", "kin", "v", "a", "tau", "omega"))
    system = s.s
    H = system.tree.mass_matrix(kin.q)
    bias = system.tree.bias(kin.q, v)
    power = np.einsum("ni,ni->n", v, np.einsum("nij,nj->ni", H, a) + bias)
    assert np.abs(tau[:, 0] * omega - power).max() <= 1e-10 * np.abs(power).max()
    assert scope["reactions"]["B.fx"].shape == theta.shape
