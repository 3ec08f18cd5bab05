"""The view of a planar mechanism: the linkage at the sample chosen by a slider or played, every body and
named point labelled on hover, the paths of the traced points; beside it columns of a table against the
driven coordinate, with a cursor on the slider's sample."""
from __future__ import annotations

import numpy as np

from mechsym.core.errors import InputError
from mechsym.core.results import _label
from mechsym.core.view.page import animate, frame_budget, json_size, plotly

HOVER = "%{text}<br>x = %{x:.6g} m<br>y = %{y:.6g} m<extra></extra>"


def body_points(mechanism) -> dict:
    """Moving body -> the names of its points, in declaration order, closed into a polygon when it has
    three or more (a ternary link is drawn as a plate)."""
    out = {}
    for b in mechanism.moving_bodies:
        names = list(mechanism.bodies[b].points)
        out[b] = names + names[:1] if len(names) >= 3 else names * (2 if len(names) == 1 else 1)
    return out


def linkage_figure(system, table, positions=None, columns=None, trace=None, frames=None, title=None):
    """A plotly Figure of the mechanism of planar `system` through the rows of `table` (a kinematics,
    inverse or run table with the driven coordinate's column): frame k draws row k.

    positions: the table with every named point's POINT.x, POINT.y at those rows (default: `table`);
    columns: the columns of `table` drawn against the coordinate (default: the coordinate's force where the
    table has it, else the moving bodies' angles); trace: the points whose paths are drawn (default every
    point of a moving body); frames: at most this many frames (evenly spread; the first and last kept)."""
    go = plotly()
    from plotly.subplots import make_subplots

    mech = system.mechanism
    coord = system.coordinate_names[0]
    positions = table if positions is None else positions
    if coord not in table:
        raise InputError(f"the table has no column '{coord}' (the driven coordinate of '{mech.name}')")
    bodies = body_points(mech)
    moving = list(dict.fromkeys(p for names in bodies.values() for p in names))
    fixed = list(mech.bodies[mech.fixed].points) if mech.fixed in mech.bodies else []
    missing = [f"{p}.x" for p in dict.fromkeys(moving + fixed) if f"{p}.x" not in positions]
    if missing:
        raise InputError(f"the table has no positions of the points {', '.join(missing[:4])} ...: give a "
                         "kinematics table, or a run written with every point (forward --all)")
    if len(positions) != len(table):
        raise InputError(f"positions have {len(positions)} rows, the table {len(table)}")
    columns = list(columns or default_columns(mech, table))
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
    unit = table.units.get(coord) or (mech.coordinates[0].unit if mech.coordinates else "")

    fig = make_subplots(rows=1, cols=2, column_widths=[0.55, 0.45], horizontal_spacing=0.08,
                        subplot_titles=("linkage", "against " + coord))

    def bodies_at(k):
        return [go.Scatter(x=[x[p][k] for p in names], y=[y[p][k] for p in names], mode="lines+markers",
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
                                 name=mech.fixed, marker={"size": 11, "symbol": "triangle-up", "color": "black"},
                                 text=[f"body {mech.fixed} (fixed), point {p}" for p in fixed], hovertemplate=HOVER),
                      row=1, col=1)
    for c in columns:
        fig.add_trace(go.Scatter(x=theta, y=np.asarray(table[c], float), mode="lines", name=_label(c, table.units)),
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
    fig.update_xaxes(title_text=_label(coord, {coord: unit}), row=1, col=2)
    fig.update_yaxes(title_text=", ".join(_label(c, table.units) for c in columns), row=1, col=2)
    fig.update_layout(title=title or table.title or mech.name, hovermode="closest", height=620,
                      meta={"frames": [int(k) for k in rows], "coordinate": coord})
    return fig


def default_columns(mech, table) -> list:
    """The driving force where the table has it (an inverse or forward table), else the moving bodies' angles."""
    forces = [c.force for c in mech.coordinates if c.force in table]
    return forces or [f"{b}.angle" for b in mech.moving_bodies if f"{b}.angle" in table]

