"""The view of a planar mechanism: the linkage at the sample chosen by a slider or played, every body and
named point labelled on hover, the paths of the traced points; beside it columns of a table against the
driven coordinate, with a cursor on the slider's sample."""
from __future__ import annotations

import numpy as np

from mechsym.core.errors import InputError
from mechsym.core.results import _label
from mechsym.core.view.page import animate, frame_budget, json_size, plotly

HOVER = "%{text}<br>x = %{x:.6g} m<br>y = %{y:.6g} m<extra></extra>"


def polylines(bodies) -> dict:
    """Body -> the names of its points in the order drawn: closed into a polygon when it has three or more
    (a ternary link is drawn as a plate), doubled when it has one."""
    return {b: names + names[:1] if len(names) >= 3 else names * (2 if len(names) == 1 else 1)
            for b, names in bodies.items()}


def mechanism_view(system, table, positions=None, columns=None, trace=None, frames=None, title=None):
    """`linkage_figure` of planar `system`: its moving bodies with their named points, the fixed body's
    points as marks, its driven coordinate, and (default columns) the driving force where the table has it,
    else the first three moving bodies' angles."""
    mech = system.mechanism
    coord = system.coordinate_names[0]
    forces = [c.force for c in mech.coordinates if c.force in table]
    columns = columns or forces or [f"{b}.angle" for b in mech.moving_bodies if f"{b}.angle" in table][:3]
    units = {coord: mech.coordinates[0].unit} if mech.coordinates else {}
    return linkage_figure(table, {b: list(mech.bodies[b].points) for b in mech.moving_bodies}, coord, positions,
                          columns, trace, list(mech.bodies[mech.fixed].points) if mech.fixed in mech.bodies else [],
                          mech.fixed, frames, title or table.title or mech.name, units)


def linkage_figure(table, bodies, coordinate, positions=None, columns=(), trace=None, fixed=(), fixed_name="fixed",
                   frames=None, title=None, units=None):
    """A plotly Figure of a planar linkage through the rows of `table` (with the column `coordinate`, the
    slider's): frame k draws row k.

    bodies: body -> its points' names (POINT.x, POINT.y columns of `positions`, default `table`), drawn as
    a polyline or a plate; fixed: points drawn as fixed marks (the body `fixed_name`); columns: columns of
    `table` drawn against the coordinate, a cursor on each at the slider's row; trace: the points whose
    paths are drawn (default every moving point that moves); frames: at most this many frames (evenly
    spread, the first and the last kept); units: more units than the table's."""
    go = plotly()
    from plotly.subplots import make_subplots

    coord = coordinate
    positions = table if positions is None else positions
    if coord not in table:
        raise InputError(f"the table has no column '{coord}' (the driven coordinate)")
    bodies = polylines(bodies)
    moving = list(dict.fromkeys(p for names in bodies.values() for p in names))
    fixed = list(fixed)
    missing = [f"{p}.x" for p in dict.fromkeys(moving + fixed) if f"{p}.x" not in positions]
    if missing:
        raise InputError(f"the table has no positions of the points {', '.join(missing[:4])} ...: give a "
                         "kinematics table, or a run written with every point (forward --all)")
    if len(positions) != len(table):
        raise InputError(f"positions have {len(positions)} rows, the table {len(table)}")
    columns = list(columns or ())
    unknown = [c for c in columns if c not in table]
    if unknown:
        raise InputError(f"the table has no column {', '.join(map(repr, unknown))} (columns: {', '.join(table.names)})")
    if trace is None:  # every point of a moving body that moves
        trace = [p for p in moving if np.ptp(positions[f"{p}.x"]) + np.ptp(positions[f"{p}.y"]) > 0]
    unknown = [p for p in trace if p not in moving + fixed]
    if unknown:
        raise InputError(f"no named point {', '.join(map(repr, unknown))} to trace (points: {', '.join(moving + fixed)})")
    x = {p: np.asarray(positions[f"{p}.x"], float) for p in moving + fixed}
    y = {p: np.asarray(positions[f"{p}.y"], float) for p in moving + fixed}
    theta = np.asarray(table[coord], float)
    units = {**(units or {}), **table.units}
    unit = units.get(coord, "")

    fig = make_subplots(rows=1, cols=2, column_widths=[0.55, 0.45], horizontal_spacing=0.08,
                        subplot_titles=("linkage", "against " + coord))

    def bodies_at(k):
        return [go.Scatter(x=[x[p][k] for p in names], y=[y[p][k] for p in names],
                           mode="lines+markers" if len(names) <= 6 else "lines",
                           name=b, text=[f"body {b}, point {p}" for p in names], hovertemplate=HOVER,
                           line={"width": 3, "simplify": False}, marker={"size": 7})
                for b, names in bodies.items()]

    def cursors_at(k):
        return [go.Scatter(x=[theta[k]], y=[np.asarray(table[c], float)[k]], mode="markers", name=f"{c} now",
                           marker={"size": 10, "symbol": "x"}, showlegend=False,
                           hovertemplate=f"{coord} = %{{x:.6g}}<br>{c} = %{{y:.6g}}<extra></extra>")
                for c in columns]

    for t in bodies_at(0):
        fig.add_trace(t, row=1, col=1)
    for c in cursors_at(0):
        fig.add_trace(c, row=1, col=2)
    moving_traces = list(range(len(fig.data)))
    for p in trace:
        fig.add_trace(go.Scatter(x=x[p], y=y[p], mode="lines", name=f"{p} path", line={"width": 1},
                                 opacity=0.6, text=[f"path of {p}"] * len(theta), hovertemplate=HOVER),
                      row=1, col=1)
    if fixed:
        fig.add_trace(go.Scatter(x=[x[p][0] for p in fixed], y=[y[p][0] for p in fixed], mode="markers",
                                 name=fixed_name, marker={"size": 11, "symbol": "triangle-up", "color": "black"},
                                 text=[f"body {fixed_name} (fixed), point {p}" for p in fixed], hovertemplate=HOVER),
                      row=1, col=1)
    for c in columns:
        fig.add_trace(go.Scatter(x=theta, y=np.asarray(table[c], float), mode="lines", name=_label(c, units)),
                      row=1, col=2)

    rows = frame_budget(len(theta), json_size([t.to_plotly_json() for t in bodies_at(0) + cursors_at(0)]), frames=frames)
    names = [str(k) for k in rows]
    fig.frames = [go.Frame(name=str(k), data=bodies_at(k) + cursors_at(k), traces=moving_traces) for k in rows]
    animate(fig, names, [f"{theta[k]:.4g}" for k in rows], f"{coord} [{unit}] = " if unit else f"{coord} = ")

    allx = np.concatenate(list(x.values()))
    ally = np.concatenate(list(y.values()))
    pad = 0.05 * max(np.ptp(allx), np.ptp(ally), 1e-9)
    fig.update_xaxes(range=[allx.min() - pad, allx.max() + pad], title_text="x [m]", row=1, col=1)
    fig.update_yaxes(range=[ally.min() - pad, ally.max() + pad], title_text="y [m]", scaleanchor="x", scaleratio=1,
                     row=1, col=1)
    fig.update_xaxes(title_text=_label(coord, units), row=1, col=2)
    fig.update_yaxes(title_text=_label(columns[0], units) if len(columns) == 1 else
                     " ".join(sorted({f"[{units[c]}]" for c in columns if c in units})), row=1, col=2)
    fig.update_layout(title=title or table.title, hovermode="closest", height=620,
                      meta={"frames": [int(k) for k in rows], "coordinate": coord})
    return fig
