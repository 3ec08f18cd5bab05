"""The visual geometry of a URDF's links for a view: each link's <visual> elements (meshes read with
trimesh, boxes, cylinders, spheres) as one triangle mesh in the link's frame, thinned to a face budget.

A mesh's file name is resolved as ROS tools resolve it: `package://PACKAGE/PATH` through the folders of
ROS_PACKAGE_PATH, the folders above the URDF (one of them named PACKAGE) and, where it is installed,
example-robot-data's model folder; `file://PATH` and a relative path from the URDF's folder. A mesh that
cannot be found or read is left out with one warning naming the link and the file (the link is still drawn
as a line between joint frames)."""
from __future__ import annotations

import os
import warnings
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mechsym.core.errors import InputError


@dataclass(frozen=True)
class LinkMesh:
    """One link's visual geometry in its frame: vertices (n, 3) [m], faces (m, 3), an RGB colour or None."""

    link: str
    vertices: np.ndarray
    faces: np.ndarray
    color: str | None = None


def link_meshes(urdf_path, faces=40_000) -> dict:
    """link name -> LinkMesh of every link of the URDF file that has a visual, all of them together thinned
    to about `faces` triangles (vertex clustering: `thin`). Needs trimesh (the view extra)."""
    try:
        import trimesh
    except ImportError:
        raise InputError("the view of a URDF's visual meshes needs trimesh, which is not installed: "
                         "pip install 'mechsym[view]'") from None

    root = ET.parse(urdf_path).getroot()
    folder = Path(urdf_path).resolve().parent
    materials = {m.get("name"): _rgba(m) for m in root.findall("material")}
    found = {}
    for link in root.findall("link"):
        parts = []
        color = None
        for visual in link.findall("visual"):
            mesh = _geometry(trimesh, visual.find("geometry"), folder, link.get("name"))
            if mesh is None:
                continue
            mesh.apply_transform(_origin(visual.find("origin")))
            parts.append(mesh)
            material = visual.find("material")
            if material is not None:
                color = _rgba(material) or materials.get(material.get("name")) or color
        if parts:
            mesh = trimesh.util.concatenate(parts)
            found[link.get("name")] = LinkMesh(link.get("name"), np.asarray(mesh.vertices, float),
                                               np.asarray(mesh.faces, np.int64), color)
    total = sum(len(m.faces) for m in found.values())
    if total > faces:
        share = faces / total
        found = {k: thin(m, max(12, int(len(m.faces) * share))) for k, m in found.items()}
    return found


def thin(mesh: LinkMesh, faces: int) -> LinkMesh:
    """The mesh with about `faces` triangles or fewer: its vertices merged on a grid (each cell's mean),
    triangles whose corners fall in fewer than three cells dropped, duplicates removed. The cell size
    halves until the budget is met from the coarsest grid that keeps the mesh's outline."""
    v, f = mesh.vertices, mesh.faces
    if len(f) <= faces:
        return mesh
    extent = max(np.ptp(v, axis=0).max(), 1e-9)
    best = None
    for cells in (4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256):
        key = np.floor((v - v.min(axis=0)) / (extent / cells)).astype(np.int64)
        _, cell, counts = np.unique(key, axis=0, return_inverse=True, return_counts=True)
        cell = cell.ravel()
        tri = cell[f]
        keep = (tri[:, 0] != tri[:, 1]) & (tri[:, 1] != tri[:, 2]) & (tri[:, 0] != tri[:, 2])
        tri = np.unique(np.sort(tri[keep], axis=1), axis=0) if keep.any() else tri[:0]
        if len(tri) > faces and best is not None:
            break
        centre = np.zeros((len(counts), 3))
        np.add.at(centre, cell, v)
        best = (centre / counts[:, None], cell[f][keep])
        if len(tri) > faces:
            break
    vertices, tri = best
    used, tri = np.unique(tri, return_inverse=True)
    return LinkMesh(mesh.link, vertices[used], tri.reshape(-1, 3), mesh.color)


def _geometry(trimesh, geometry, folder, link):
    if geometry is None or not len(geometry):
        return None
    shape = geometry[0]
    size = lambda name, default="1 1 1": np.array([float(a) for a in shape.get(name, default).split()])  # noqa: E731
    if shape.tag == "box":
        return trimesh.creation.box(extents=size("size"))
    if shape.tag == "cylinder":
        return trimesh.creation.cylinder(radius=float(shape.get("radius")), height=float(shape.get("length")),
                                         sections=16)
    if shape.tag == "sphere":
        return trimesh.creation.icosphere(subdivisions=1, radius=float(shape.get("radius")))
    if shape.tag != "mesh":
        return None
    name = shape.get("filename", "")
    path = resolve(name, folder)
    if path is None:
        warnings.warn(f"link '{link}': mesh '{name}' not found; drawn as a line between joint frames")
        return None
    try:
        mesh = trimesh.load(str(path), force="mesh")
    except Exception as exc:  # a reader's own failure (format, dependency): that link drawn without its mesh
        warnings.warn(f"link '{link}': mesh '{path}' cannot be read ({type(exc).__name__}: {exc})")
        return None
    mesh.apply_scale(size("scale"))
    return mesh


def resolve(name, folder) -> Path | None:
    """The file a URDF's mesh file name names (see the module docstring), or None."""
    if name.startswith("file://"):
        path = Path(name[len("file://"):])
        return path if path.is_file() else None
    if not name.startswith("package://"):
        path = (Path(folder) / name)
        return path if path.is_file() else None
    package, _, rest = name[len("package://"):].partition("/")
    roots = [Path(p) for p in os.environ.get("ROS_PACKAGE_PATH", "").split(os.pathsep) if p]
    candidates = [r / package / rest for r in roots] + [a / rest for a in Path(folder).parents if a.name == package]
    candidates += [a / package / rest for a in Path(folder).parents]
    candidates += _example_robot_data(package, rest)
    return next((c for c in candidates if c.is_file()), None)


def _example_robot_data(package, rest) -> list:
    """Where example-robot-data (if installed) keeps `package`'s `rest`."""
    try:
        from example_robot_data import getModelPath
    except ImportError:
        return []
    found = []
    for sub in (f"{package}/{rest}", rest, rest.removeprefix("robots/")):
        try:
            found.append(Path(getModelPath(sub)) / sub)
        except OSError:
            continue
    return found


def _origin(element) -> np.ndarray:
    """The 4x4 transform of a URDF <origin>: xyz, and rpy as URDF reads it (Rz(yaw) Ry(pitch) Rx(roll):
    trimesh's static xyz Euler angles)."""
    from trimesh.transformations import euler_matrix

    if element is None:
        return np.eye(4)
    out = euler_matrix(*(float(a) for a in element.get("rpy", "0 0 0").split()), axes="sxyz")
    out[:3, 3] = [float(a) for a in element.get("xyz", "0 0 0").split()]
    return out


def _rgba(element):
    color = element.find("color") if element is not None else None
    if color is None or not color.get("rgba"):
        return None
    r, g, b, *_ = (float(a) for a in color.get("rgba").split())
    return f"rgb({int(255 * r)},{int(255 * g)},{int(255 * b)})"
