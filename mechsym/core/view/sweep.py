"""The view of a sweep's table (mechsym.studies.sweep: the parameter columns in grid order, the figures,
status and message): over one parameter a line per figure; over two or more a heat map per figure over the
first two, a slider through the sets of the others; hovering a point or a cell shows the whole parameter
set and, for a failed set, its message."""
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
    if len(parameters) == 1:
        fig = go.Figure()
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
    n = len(figures)

    def cells(other):
        rows = np.array([[index.get((va, vb, *other), -1) for va in xa] for vb in xb])
        text = np.where(rows >= 0, hover[rows], "")
        return [go.Heatmap(x=xa, y=xb, z=np.where(rows >= 0, values[f][rows], np.nan), text=text, name=f,
                           colorbar={"title": _label(f, table.units), "y": 1 - (i + 0.5) / n, "len": 0.9 / n},
                           hovertemplate=f"%{{text}}<br>{f} = %{{z:.6g}}<extra></extra>",
                           xaxis=f"x{i + 1 if i else ''}", yaxis=f"y{i + 1 if i else ''}")
                for i, f in enumerate(figures)]

    from plotly.subplots import make_subplots

    fig = make_subplots(rows=n, cols=1, subplot_titles=[_label(f, table.units) for f in figures],
                        vertical_spacing=0.3 / n)
    fig.add_traces(cells(others[0]))
    if rest:  # the remaining parameters: a slider through their sets
        names = [str(i) for i in range(len(others))]
        fig.frames = [go.Frame(name=k, data=cells(o), traces=list(range(n))) for k, o in zip(names, others)]
        animate(fig, names, [", ".join(f"{r} = {v:.4g}" for r, v in zip(rest, o)) for o in others], "", redraw=True)
    fig.update_xaxes(title_text=_label(a, table.units))
    fig.update_yaxes(title_text=_label(b, table.units))
    fig.update_layout(title=title or table.title or "sweep", height=150 + 380 * n)
    return fig
