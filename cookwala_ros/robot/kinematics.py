"""Tool position for the workspace check, fast enough to run beside the stop path.

The robot description (cookwala_ros.robot.description) is the source of the chain; this
precomputes every joint's fixed origin transform once, so one forward-kinematics evaluation is a
handful of 4x4 products (tens of microseconds instead of rebuilding each transform per call).
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np


class ToolKinematics:
    def __init__(self, chain: Sequence):
        """`chain`: joints root -> tool with origin(), type, axis and name (robot.description.JointSpec)."""
        self._steps = []
        for joint in chain:
            axis = np.asarray(joint.axis, dtype=float)
            norm = float(np.linalg.norm(axis)) or 1.0
            self._steps.append((np.asarray(joint.origin(), dtype=float), joint.type, axis / norm, joint.name))

    def position(self, joint_positions: Mapping[str, float]) -> np.ndarray:
        """xyz [m] of the tool frame in the chain's root frame; missing joints count as 0."""
        t = np.eye(4)
        for origin, kind, axis, name in self._steps:
            t = t @ origin
            if kind in ("revolute", "continuous"):
                angle = joint_positions.get(name, 0.0)
                x, y, z = axis
                c, s = math.cos(angle), math.sin(angle)
                k = 1.0 - c
                rotation = np.array([
                    [c + x * x * k, x * y * k - z * s, x * z * k + y * s, 0.0],
                    [y * x * k + z * s, c + y * y * k, y * z * k - x * s, 0.0],
                    [z * x * k - y * s, z * y * k + x * s, c + z * z * k, 0.0],
                    [0.0, 0.0, 0.0, 1.0]])
                t = t @ rotation
            elif kind == "prismatic":
                shift = np.eye(4)
                shift[:3, 3] = axis * joint_positions.get(name, 0.0)
                t = t @ shift
        return t[:3, 3]
