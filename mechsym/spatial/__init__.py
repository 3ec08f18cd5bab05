"""Spatial multibody trees: declaration (Python or URDF), symbolic recursive dynamics, generated code.

    tree = read_urdf("robot.urdf")               # or Tree(...) with body(...) and frame(...)
    system = derive_tree(tree, contact_frames=("foot",))
    system.mass_matrix(q), system.bias(q, v), system.frame_jacobian(q, "foot"), ...

See docs/trees.md.
"""
from mechsym.spatial.declare import Tree
from mechsym.spatial.joints import Fixed, Free, Joint, Mimic, Planar, Prismatic, Revolute, Screw, Translation
from mechsym.spatial.system import TreeSystem, derive_tree
from mechsym.spatial.urdf import read_urdf

__all__ = ["Tree", "Joint", "Revolute", "Prismatic", "Fixed", "Free", "Mimic", "Planar", "Screw", "Translation",
           "TreeSystem",
           "derive_tree", "read_urdf"]
