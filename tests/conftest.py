import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="session")
def fourbar():
    from mechanisms import fourbar
    from mechsym.system import derive

    return derive(fourbar.build())


@pytest.fixture(scope="session")
def slider_crank():
    from mechanisms import slider_crank
    from mechsym.system import derive

    return derive(slider_crank.build())


def agree(a, b, tol):
    """Norm-wise agreement of CONTRACTS.md: max|a - b| <= tol * max|b|."""
    import numpy as np

    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.max(np.abs(a - b))) <= tol * float(np.max(np.abs(b)))
