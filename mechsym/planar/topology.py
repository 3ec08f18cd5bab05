"""The joint graph of a mechanism: connectivity, independent loops and the Grübler mobility count.

Bodies are nodes and joints are edges. A spanning tree grown from the fixed body gives one independent
loop per joint outside the tree (a fundamental cycle). The loops name the joints they pass through, so
that a loop that cannot close can be reported by name.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from mechsym.core.errors import ModelError
from mechsym.planar.model import Mechanism


@dataclass(frozen=True)
class Loop:
    """An independent loop: the bodies and joints met going round it."""

    index: int
    bodies: tuple
    joints: tuple

    def describe(self) -> str:
        """One line: the loop's number, its bodies in order and its joints."""
        path = "-".join(self.bodies + self.bodies[:1])
        return f"loop {self.index} ({path}; joints {', '.join(self.joints)})"


@dataclass(frozen=True)
class Topology:
    tree: dict  # body -> (parent body, joint name) for every body but the fixed one
    order: tuple  # bodies in breadth-first order from the fixed body
    loops: tuple
    grubler: int

    def loops_through(self, joint: str) -> list:
        """The independent loops that pass through a joint."""
        return [loop for loop in self.loops if joint in loop.joints]


def analyse(mech: Mechanism) -> Topology:
    """Spanning tree, independent loops and Grübler count; raises ModelError for a disconnected body."""
    mech.check()
    adjacency = {b: [] for b in mech.bodies}
    for j in mech.joints.values():
        adjacency[j.body1].append((j.body2, j.name))
        adjacency[j.body2].append((j.body1, j.name))
    tree, order, queue = {}, [mech.fixed], deque([mech.fixed])
    seen = {mech.fixed}
    tree_joints = set()
    while queue:
        body = queue.popleft()
        for other, joint in adjacency[body]:
            if other not in seen:
                seen.add(other)
                tree[other] = (body, joint)
                tree_joints.add(joint)
                order.append(other)
                queue.append(other)
    loose = [b for b in mech.bodies if b not in seen]
    if loose:
        raise ModelError(mech.name, [f"body '{b}' is not connected to the fixed body '{mech.fixed}'" for b in loose])
    loops = []
    for j in mech.joints.values():
        if j.name in tree_joints:
            continue
        path1, path2 = _path_to_root(tree, j.body1), _path_to_root(tree, j.body2)
        common = next(b for b in path1 if b in path2)
        up = path1[: path1.index(common) + 1]
        down = path2[: path2.index(common)]
        bodies = tuple(up + list(reversed(down)))
        joints = [tree[b][1] for b in path1[: path1.index(common)]]
        joints += [tree[b][1] for b in reversed(path2[: path2.index(common)])]
        loops.append(Loop(len(loops) + 1, bodies, tuple([j.name] + joints)))
    n_moving = len(mech.bodies) - 1
    grubler = 3 * n_moving - sum(j.constraint_count for j in mech.joints.values())
    return Topology(tree, tuple(order), tuple(loops), grubler)


def _path_to_root(tree, body):
    path = [body]
    while body in tree:
        body = tree[body][0]
        path.append(body)
    return path
