"""The kinematics solver of one mechanism with fixed parameter values: one configuration (assembly), a path of
them (continuation) and bifurcations crossed on the way (bridging), each stage in its own module.
"""
from __future__ import annotations

import numpy as np

from mechsym.codegen.constants import MAX_STEP, STEP
from mechsym.planar.assembly import Assembly
from mechsym.planar.bridging import Bridging
from mechsym.planar.continuation import Continuation
from mechsym.planar.kinematics import KinematicFunctions, scales, size_scale


class Solver(Assembly, Continuation, Bridging):
    """Newton-Raphson on the constraint equations of one mechanism with fixed parameter values."""

    def __init__(self, funcs: KinematicFunctions, params: np.ndarray):
        self.f, self.con, self.params = funcs, funcs.con, np.asarray(params, float)
        self.scale = size_scale(self.con, self.params)
        self._period = False  # not yet looked for
        self.col_scale, self.coord_scale = scales(self.con, self.scale)
        self.max_step = MAX_STEP * self.col_scale
        self.row_scale = np.array([1.0 if self._is_angle_row(i) else self.scale for i in range(len(self.con.rows))])
        # the scale of each driven coordinate (a length's is the mechanism's size) and the continuation
        # step along it: 0.1 rad, or a tenth of the size
        self.step = STEP * self.coord_scale
        self._reference = None
        self._lattice = {}  # continuation nodes at reference + j * step (one coordinate): j -> q
        self.bridges = []  # the bifurcations crossed so far (Bridge), kept for every later path
        self._skip = []  # spans (theta_a, theta_c) where no bridge holds: not tried again

    def _is_angle_row(self, i):
        con = self.con
        j = con.mechanism.joints[con.row_joint[i]]
        if i >= con.n_joint_rows:
            return j.drive_unit == "rad"
        first = [k for k in range(con.n_joint_rows) if con.row_joint[k] == j.name][0]
        return i - first in j.angle_rows
