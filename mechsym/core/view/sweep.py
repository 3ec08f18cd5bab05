"""The view of a sweep's table (mechsym.studies.sweep: the parameter columns in grid order, the figures,
status and message): over one parameter a line per figure; over two or more a heat map over the first two,
a slider through the sets of the others; a menu chooses the figure; hovering a point or a cell shows the
whole parameter set and, for a failed set, its message."""
from __future__ import annotations

import itertools

import numpy as np

from mechsym.core.errors import InputError
from mechsym.core.results import TEXT_COLUMNS, _label
from mechsym.core.view.page import animate, plotly


def grid_parameters(table) -> list:
    """The parameter columns of a sweep's table: the shortest run of leading columns whose distinct values
    make up the rows as a full grid (a sweep writes its sets in grid order)."""
    names = [n for n in table.names if n not in TEXT_COLUMNS]
    size = 1
    for i, name in enumerate(names[:-1]):
        size *= len(np.unique(np.asarray(table[name], float)))
        if size == len(table):
            return names[:i + 1]
    raise InputError("the table's leading columns do not make a grid of parameter sets; name them (--parameters)")


def sweep_figure(table, parameters=None, figures=None, title=None):
    """A plotly Figure of a sweep's `table`: `parameters` (default `grid_parameters`) against `figures`
    (default every other numeric column)."""
    go = plotly()
    parameters = list(parameters or grid_parameters(table))
    numeric = [n for n in table.names if n not in TEXT_COLUMNS]
    figures = list(figures or [n for n in numeric if n not in parameters])
    unknown = [n for n in parameters + figures if n not in numeric]
    if unknown or not figures:
        raise InputError(f"the table has no numeric column {', '.join(map(repr, unknown or ['to show']))} "
                         f"(columns: {', '.join(table.names)})")
    values = {n: np.asarray(table[n], float) for n in parameters + figures}
    message = np.asarray(table["message"], str) if "message" in table else np.full(len(table), "")
    hover = ["<br>".join([f"{p} = {values[p][i]:.6g}" for p in parameters] + ([message[i]] if message[i] else []))
             for i in range(len(table))]
    fig = go.Figure()
    if len(parameters) == 1:
        p = parameters[0]
        for f in figures:
            fig.add_trace(go.Scatter(x=values[p], y=values[f], mode="lines+markers", name=_label(f, table.units),
                                     text=hover, hovertemplate=f"%{{text}}<br>{f} = %{{y:.6g}}<extra></extra>"))
        fig.update_xaxes(title_text=_label(p, table.units))
        fig.update_layout(title=title or table.title or "sweep", hovermode="closest")
        return fig
    a, b, rest = parameters[0], parameters[1], parameters[2:]
    xa, xb = np.unique(values[a]), np.unique(values[b])
    others = [tuple(r) for r in itertools.product(*(np.unique(values[r]) for r in rest))]
    index = {key: i for i, key in enumerate(zip(*(values[n] for n in parameters)))}
    hover = np.asarray(hover, object)

    def cells(f, other):
        rows = np.array([[index.get((va, vb, *other), -1) for va in xa] for vb in xb])
        z = np.where(rows >= 0, values[f][rows], np.nan)
        text = np.where(rows >= 0, hover[rows], "")
        return go.Heatmap(x=xa, y=xb, z=z, text=text, colorbar={"title": _label(f, table.units)},
                          hovertemplate=f"%{{text}}<br>{f} = %{{z:.6g}}<extra></extra>")

    fig.add_trace(cells(figures[0], others[0]))
    fig.update_layout(updatemenus=[{"buttons": [{"label": f, "method": "restyle",
                                                 "args": [{k: [v] for k, v in _restyle(cells(f, others[0])).items()}]}
                                                for f in figures], "x": 1.0, "xanchor": "right", "y": 1.15}])
    if rest:  # the remaining parameters: a slider through their sets, for the first figure
        names = [str(i) for i in range(len(others))]
        fig.frames = [go.Frame(name=n, data=[cells(figures[0], o)], traces=[0]) for n, o in zip(names, others)]
        animate(fig, names, [", ".join(f"{r} = {v:.4g}" for r, v in zip(rest, o)) for o in others], "", redraw=True)
    fig.update_xaxes(title_text=_label(a, table.units))
    fig.update_yaxes(title_text=_label(b, table.units))
    fig.update_layout(title=title or table.title or "sweep")
    return fig


def _restyle(trace) -> dict:
    data = trace.to_plotly_json()
    return {k: data[k] for k in ("z", "text", "colorbar") if k in data}

