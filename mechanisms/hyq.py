"""HyQ, the hydraulic quadruped of IIT, from its URDF (shipped without meshes in mechanisms/data, with its
licence, so that mechsym needs no robot package to run it).

A floating base (Pinocchio's free flyer, base link `base_link` with the trunk merged into it), 12 revolute
joints in the order lf, lh, rf, rh (haa, hfe, kfe each), feet as frames lf_foot, lh_foot, rf_foot, rh_foot.
By default masses, centres of mass, inertias and link lengths are run-time parameters (LINK.m, LINK.cx,
..., JOINT.x, ...: `mechsym params hyq`), gravity is g along -z.
"""
from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

URDF = Path(__file__).parent / "data" / "hyq.urdf"
FEET = ("lf_foot", "lh_foot", "rf_foot", "rh_foot")
LEGS = ("lf", "lh", "rf", "rh")
# the standing pose: base 0.5775 m high, front legs (haa, hfe, kfe) = (-0.2, 0.75, -1.5), hind (-0.2, -0.75, 1.5)
STANDING_JOINTS = {"lf": (-0.2, 0.75, -1.5), "lh": (-0.2, -0.75, 1.5), "rf": (-0.2, 0.75, -1.5), "rh": (-0.2, -0.75, 1.5)}


def build(symbolic=("mass", "com", "inertia", "length")):
    """HyQ's Tree (mechsym.spatial.Tree) from the shipped URDF."""
    from mechsym.spatial import read_urdf

    return read_urdf(str(URDF), floating=True, symbolic=symbolic)


@functools.lru_cache(maxsize=None)
def system(backend=None):
    """The derived HyQ (generated C, cached on disk), with the feet as contact frames."""
    from mechsym import derive

    return derive(build(), contact_frames=FEET, backend=backend)


def standing(height=0.5775):
    """q of the standing pose (19,): base at (0, 0, height), identity orientation, the legs as above."""
    joints = [a for leg in LEGS for a in STANDING_JOINTS[leg]]
    return np.array([0.0, 0.0, height, 0.0, 0.0, 0.0, 1.0, *joints])
