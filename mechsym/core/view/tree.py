"""The view of a 3-D tree (a TreeSystem): its bodies as the URDF's visual meshes where the file has them,
else as links between joint frames, through the rows of a run (slider, play/pause), rotated and zoomed
with the mouse; every frame's axes on demand (a click on 'frame axes' in the legend); the contact forces
of a run (CONTACT.fn, .ft1, .ft2) as arrows from the contact frames."""
from __future__ import annotations

import numpy as np

from mechsym.core.errors import InputError
from mechsym.core.view.page import animate, frame_budget, json_size, plotly

AXIS_COLOURS = ("red", "green", "blue")
MESH_FACES = 40_000           # a still view's faces, all meshes together
MOVING_MESH_FACES = 8_000     # a run's: every frame carries every vertex
DIGITS = 6                    # a mesh vertex in the page, in m (a micrometre)


def neutral(system) -> np.ndarray:
    """q with every joint at zero and a floating base at the origin, unrotated."""
    names = system.coordinate_names
    q = np.zeros(len(names))
    if "base.qw" in names:
        q[names.index("base.qw")] = 1.0
    return q


def coordinates(system, table) -> np.ndarray:
    """The run's q (N, nq) from its columns named as the system's coordinates (docs/conventions.md)."""
    names = system.coordinate_names
    missing = [n for n in names if n not in table]
    if missing:
        raise InputError(f"the run has no column {', '.join(map(repr, missing[:4]))} of the coordinates of tree "
                         f"'{system.declaration.name}' ({', '.join(names)})")
    return np.column_stack([np.asarray(table[n], float) for n in names])


def tree_figure(system, table=None, urdf=None, params=None, axes=False, frames=None, title=None):
    """A plotly Figure of the tree of `system` through the rows of `table` (a run with a column per
    coordinate; None: the neutral pose), its links' meshes read from the URDF file `urdf` where it has
    them (mechsym.core.view.meshes), the frames' axes shown from the start with `axes`, at most `frames`
    frames (evenly spread)."""
    go = plotly()
    tree = system.declaration
    q = neutral(system)[None] if table is None else coordinates(system, table)
    contacts = [c for c in system.frame_names if table is not None and f"{c}.fn" in table]
    force = np.stack([np.column_stack([np.asarray(table[f"{c}.{k}"], float) for k in ("ft1", "ft2", "fn")])
                      for c in contacts], axis=1) if contacts else np.zeros((len(q), 0, 3))
    meshes = {}
    if urdf is not None:
        from mechsym.core.view.meshes import link_meshes

        budget = MESH_FACES if len(q) == 1 else MOVING_MESH_FACES
        meshes = {k: m for k, m in link_meshes(urdf, budget).items() if k in system.frame_names}
    segments = [(b.parent, b.name) for b in tree.bodies.values() if b.parent is not None]
    segments += [(f.body, f.name) for f in tree.frames.values()]

    def poses(rows):
        qs = q[rows]
        return ({f: system.frame_position(qs, f, params) for f in system.frame_names},
                {f: system.frame_rotation(qs, f, params) for f in system.frame_names})

    pos, rot = poses(np.arange(len(q)))
    size = max(np.ptp(np.concatenate(list(pos.values())), axis=0).max(), 0.1)
    peak = np.abs(force).max() if force.size else 0.0
    arrow = 0.3 * size / peak if peak > 0 else 0.0

    def traces(k):
        p = {f: v[k] for f, v in pos.items()}
        r = {f: v[k] for f, v in rot.items()}
        out = [go.Scatter3d(x=_joined(p, segments, 0), y=_joined(p, segments, 1), z=_joined(p, segments, 2),
                            mode="lines+markers", name="links", line={"width": 5, "color": "#444"},
                            marker={"size": 3}, text=_joined_names(segments), hovertemplate="frame %{text}<extra></extra>")]
        for link, m in meshes.items():
            v = np.round(m.vertices @ r[link].T + p[link], DIGITS)
            out.append(go.Mesh3d(x=v[:, 0], y=v[:, 1], z=v[:, 2], i=m.faces[:, 0], j=m.faces[:, 1], k=m.faces[:, 2],
                                 name=link, color=m.color or "#b0b8c8", flatshading=True,
                                 hovertemplate=f"{link}<extra></extra>"))
        for i, colour in enumerate(AXIS_COLOURS):
            ends = [(p[f], p[f] + 0.08 * size * r[f][:, i]) for f in system.frame_names]
            xyz = [sum(([a[c], b[c], None] for a, b in ends), []) for c in range(3)]
            out.append(go.Scatter3d(x=xyz[0], y=xyz[1], z=xyz[2], mode="lines", name="frame axes",
                                    legendgroup="axes", showlegend=i == 0, visible=True if axes else "legendonly",
                                    line={"color": colour, "width": 4}, hoverinfo="skip"))
        if contacts:
            tips = [p[c] + arrow * force[k, j] for j, c in enumerate(contacts)]
            xyz = [sum(([p[c][a], t[a], None] for c, t in zip(contacts, tips)), []) for a in range(3)]
            labels = sum(([f"{c}: fn = {force[k, j, 2]:.4g} N"] * 3 for j, c in enumerate(contacts)), [])
            out.append(go.Scatter3d(x=xyz[0], y=xyz[1], z=xyz[2], mode="lines+markers", name="contact forces",
                                    line={"width": 7, "color": "darkorange"}, marker={"size": 3, "color": "darkorange"},
                                    text=labels, hovertemplate="%{text}<extra></extra>"))
        return out

    first = traces(0)
    fig = go.Figure(first)
    if contacts:  # the contact plane, z = 0
        lo = np.concatenate(list(pos.values())).min(axis=0) - 0.2 * size
        hi = np.concatenate(list(pos.values())).max(axis=0) + 0.2 * size
        fig.add_trace(go.Mesh3d(x=[lo[0], hi[0], hi[0], lo[0]], y=[lo[1], lo[1], hi[1], hi[1]], z=[0, 0, 0, 0],
                                i=[0, 0], j=[1, 2], k=[2, 3], color="lightgrey", opacity=0.4, name="ground",
                                hoverinfo="skip"))
    labels = np.asarray(table["t"], float) if table is not None and "t" in table else np.arange(len(q))
    if len(q) > 1:
        rows = frame_budget(len(q), json_size([t.to_plotly_json() for t in first]), frames=frames)
        fig.frames = [go.Frame(name=str(k), data=traces(k), traces=list(range(len(first)))) for k in rows]
        animate(fig, [str(k) for k in rows], [f"{labels[k]:.4g}" for k in rows],
                "t [s] = " if table is not None and "t" in table else "row ", redraw=True)
    points = np.concatenate(list(pos.values()) + [pos[c] + arrow * force[:, j] for j, c in enumerate(contacts)])
    reach = max((np.linalg.norm(m.vertices, axis=1).max() for m in meshes.values()), default=0.0)
    centre = (points.min(axis=0) + points.max(axis=0)) / 2
    half = np.ptp(points, axis=0).max() / 2 + reach + 0.05 * size
    fig.update_layout(title=title or f"{tree.name}", height=720, uirevision="view",
                      scene={"aspectmode": "cube",
                             **{f"{a}axis": {"range": [centre[i] - half, centre[i] + half], "title": f"{a} [m]"}
                                for i, a in enumerate("xyz")}},
                      meta={"frames": [int(k) for k in (rows if len(q) > 1 else [0])]})
    return fig


def _joined(p, segments, axis):
    return sum(([p[a][axis], p[b][axis], None] for a, b in segments), [])


def _joined_names(segments):
    return sum(([a, b, ""] for a, b in segments), [])
