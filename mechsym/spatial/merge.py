"""The moving bodies of a tree: fixed joints folded into their parents, in Pinocchio's depth-first order,
and every named frame as a placement on one of them (the first stage of mechsym.spatial.derive). A joint
whose motion subspace turns with its coordinates (a universal joint) moves its body through its `hinges`:
constant-subspace joints, each but the last moving a massless link of its own (the cross, a named frame)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sp

from mechsym.core.errors import InputError, ModelError
from mechsym.spatial.declare import Tree
from mechsym.spatial.joint_geometry import exact
from mechsym.spatial.straight import ONE, ZERO, _add, _mm, _mv

__all__ = ["Link", "FramePlace", "merge"]

@dataclass
class Link:
    """A moving body of the merged tree (fixed joints folded into their parent)."""

    name: str              # the body the joint moves
    joint: object          # a mechsym.spatial.joints.Joint with coordinates
    parent: int            # index of the parent moving body, -1 for the world
    R_place: list          # 3x3 numbers: the joint frame in the parent's frame at q = 0
    p_place: list          # 3 expressions
    mass: sp.Expr
    h: list                # first moment m c about the body origin (body frame)
    Io: list               # 3x3 inertia about the body origin (body frame)
    iq: int = 0            # first index among the joints' coordinates (a mimic joint's included)
    iv: int = 0            # first index among the joints' speeds (likewise)
    nq: int = 0            # the joint's coordinates and speeds (a mimic joint: one each)
    nv: int = 0
    declared: object = None  # the declared joint whose reaction the wrench into this subtree is: `joint`, or a
                             # universal joint on its last hinge; None on the cross (mechsym.spatial.joints.hinges)


@dataclass
class FramePlace:
    name: str
    link: int              # moving body it is fixed on (-1: the world)
    R: list                # 3x3 numbers
    p: list                # 3 expressions


def merge(tree: Tree, inertia=True):
    """The moving bodies in Pinocchio's depth-first order (children in declaration order), every named
    frame (bodies, joints and declared frames) as a placement on one of them, and the sizes of q and v (a
    mimic joint has no coordinate of its own: the joints' coordinates number more, see `Link.iq`)."""
    tree.check()
    children = {name: [] for name in tree.bodies}
    for b in tree.bodies.values():
        if b.parent is not None:
            children[b.parent].append(b.name)
    root = tree.root
    links, frames = [], {}
    attach = {}            # declared body -> (link index, R numeric 3x3, p exprs)

    def inertia_terms(b, R, p):
        """(m, m c', Io') of declared body b placed at (R, p) in its moving body's frame."""
        m = b.mass
        c = _add(_mv(R, list(b.com)), p)
        Rn = sp.Matrix(R)
        Ic = Rn * b.inertia * Rn.T
        cc = sum(ci * ci for ci in c)
        Io = [[Ic[i, j] + m * ((cc if i == j else 0) - c[i] * c[j]) for j in range(3)] for i in range(3)]
        return m, [m * ci for ci in c], Io

    def add_mass(k, b, R, p):
        if k < 0 or not inertia:             # (the structure alone: names, frames and sizes)
            return
        m, h, Io = inertia_terms(b, R, p)
        link = links[k]
        link.mass = link.mass + m
        link.h = _add(link.h, h)
        link.Io = [[link.Io[i][j] + Io[i][j] for j in range(3)] for i in range(3)]

    def visit(name):
        b = tree.bodies[name]
        eye = [[ONE if i == j else ZERO for j in range(3)] for i in range(3)]
        if b.parent is None:
            if b.joint is not None:              # a root joint (the floating base's)
                links.append(Link(name, b.joint, -1, eye, [ZERO] * 3, ZERO, [ZERO] * 3, [[ZERO] * 3 for _ in range(3)],
                                  declared=b.joint))
                attach[name] = (0, eye, [ZERO] * 3)
                add_mass(0, b, eye, [ZERO] * 3)
                if b.joint.name not in tree.bodies:
                    frames[b.joint.name] = FramePlace(b.joint.name, 0, eye, [ZERO] * 3)
            else:
                attach[name] = (-1, eye, [ZERO] * 3)
        else:
            k, Rp, pp = attach[b.parent]
            Rj = [[exact(x) for x in row] for row in np.asarray(b.origin_R)]
            R = _mm(Rp, Rj)
            p = _add(_mv(Rp, list(b.origin_xyz)), pp)
            if b.joint.merges_into_parent:
                attach[name] = (k, R, p)
                add_mass(k, b, R, p)
            else:
                for piece, moved in b.joint.hinges(name):      # a universal joint: its cross, then the body
                    links.append(Link(moved, piece, k, R, p, ZERO, [ZERO] * 3, [[ZERO] * 3 for _ in range(3)],
                                      declared=b.joint if moved == name else None))
                    k, R, p = len(links) - 1, eye, [ZERO] * 3
                    if moved != name:
                        if moved in tree.bodies or moved in tree.frames:
                            raise InputError(f"tree '{tree.name}': '{moved}', the cross of joint '{b.joint.name}', "
                                             f"is also declared as a body or frame")
                        frames[moved] = FramePlace(moved, k, eye, [ZERO] * 3)
                attach[name] = (k, eye, [ZERO] * 3)
                add_mass(len(links) - 1, b, eye, [ZERO] * 3)
            k2, R2, p2 = attach[name]
            if b.joint.name not in tree.bodies:       # a joint named like a link: the name is the link's
                frames[b.joint.name] = FramePlace(b.joint.name, k2, R2, p2)
        k, R, p = attach[name]
        frames[name] = FramePlace(name, k, R, p)

    stack = [root.name]
    while stack:                                  # depth first, iteratively (a long chain is fine)
        name = stack.pop()
        visit(name)
        stack.extend(reversed(children[name]))
    for f in tree.frames.values():
        k, Rb, pb = attach[f.body]
        Rf = [[exact(x) for x in row] for row in np.asarray(f.R)]
        frames[f.name] = FramePlace(f.name, k, _mm(Rb, Rf), _add(_mv(Rb, list(f.xyz)), pb))
    iq = iv = 0
    for link in links:
        link.nq, link.nv = (1, 1) if link.joint.mimic is not None else (link.joint.nq, link.joint.nv)
        link.iq, link.iv = iq, iv
        iq += link.nq
        iv += link.nv
    if not links:
        raise ModelError(tree.name, ["no moving joint: nothing to derive"])
    return links, frames, sum(lk.joint.nq for lk in links), sum(lk.joint.nv for lk in links)
