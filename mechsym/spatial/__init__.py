"""Spatial multibody trees: declaration (Python or URDF), symbolic recursive dynamics, generated code.

    tree = read_urdf("robot.urdf")               # or Tree(...) with body(...) and frame(...)
    system = mechsym.derive(tree, contact_frames=("foot",))
    system.mass_matrix(q), system.bias(q, v), system.frame_jacobian(q, "foot"), ...

See docs/trees.md.
"""
from mechsym.spatial.declare import Tree
from mechsym.spatial.joints import Fixed, Free, Joint, Mimic, Planar, Prismatic, Revolute, Screw, Translation
from mechsym.spatial.system import TreeSystem
from mechsym.spatial.urdf import read_urdf

__all__ = ["Tree", "Joint", "Revolute", "Prismatic", "Fixed", "Free", "Mimic", "Planar", "Screw", "Translation",
           "TreeSystem", "read_urdf"]
