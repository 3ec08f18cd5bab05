"""Spatial multibody trees: declaration (Python or URDF), symbolic recursive dynamics, generated code.

    tree = read_urdf("robot.urdf")               # or Tree(...) with body(...) and frame(...)
    system = mechsym.derive(tree, contact_frames=("foot",))
    system.mass_matrix(q), system.bias(q, v), system.frame_jacobian(q, "foot"), ...

A tree whose loops are closed by joints between frames (`Tree.close`) derives as a `LoopSystem`
(mechsym.spatial.loops; docs/spatial-loops.md). See docs/trees.md.
"""
from mechsym.spatial.declare import Tree
from mechsym.spatial.joint_geometry import Screw, Translation
from mechsym.spatial.joints import (Cylindrical, Fixed, Free, Joint, Mimic, Planar, Prismatic, Revolute, Spherical,
                                    Universal)
from mechsym.spatial.loops import LoopSystem
from mechsym.spatial.system import TreeSystem
from mechsym.spatial.urdf import read_urdf

__all__ = ["Tree", "Joint", "Revolute", "Prismatic", "Cylindrical", "Spherical", "Universal", "Fixed", "Free", "Mimic",
           "Planar", "Screw", "Translation", "TreeSystem", "LoopSystem", "read_urdf"]
