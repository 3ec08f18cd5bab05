"""The page of a view: plotly's figure as one self-contained HTML file, its animation controls (a slider
and play/pause over named frames), and the frame budget that keeps a file under LIMIT bytes."""
from __future__ import annotations

import json

import numpy as np

from mechsym.core.errors import InputError
from mechsym.core.output import write_text
from mechsym.core.plotting import frame_rows

LIMIT = 10_000_000   # bytes: the largest view file written (plotly's JavaScript, about 4.8 MB, included)
MAX_FRAMES = 400     # a slider longer than this is not scrubbed sample by sample anyway
DIV = "view"         # the id of the figure's element in the page (the browser test finds it by this)


def plotly():
    """plotly.graph_objects, or a one-line InputError naming the extra that installs it."""
    try:
        import plotly.graph_objects as go
    except ImportError:
        raise InputError("an interactive view needs plotly, which is not installed: "
                         "pip install 'mechsym[view]'") from None
    return go


def to_html(fig) -> str:
    """The figure as a complete HTML page with plotly's JavaScript inlined (no network to open it)."""
    return fig.to_html(include_plotlyjs=True, full_html=True, auto_play=False, div_id=DIV,
                       config={"displaylogo": False, "responsive": True})


def write_html(fig, path, limit=LIMIT) -> int:
    """Write the figure's page to `path` atomically (mechsym.core.output); returns its size in bytes. A page
    over `limit` bytes is refused (the frame budget keeps the views mechsym builds under it)."""
    text = to_html(fig)
    size = len(text.encode())
    if size > limit:
        raise InputError(f"the view of '{path}' would be {size / 1e6:.1f} MB, over the {limit / 1e6:.0f} MB limit; "
                         "ask for fewer frames (--frames)")
    write_text(path, text)
    return size


def frame_budget(n, frame_bytes, fixed_bytes=0, frames=None, limit=LIMIT) -> np.ndarray:
    """The rows of an n-sample motion shown as frames: at most `frames` (default MAX_FRAMES), and no more
    than fit under `limit` beside plotly's JavaScript and `fixed_bytes` of static data when each frame
    takes `frame_bytes`; evenly spread, the first and the last included (core.plotting.frame_rows)."""
    room = 0.9 * limit - 5_000_000 - fixed_bytes  # plotly.min.js is about 4.8 MB; a tenth kept in reserve
    fit = max(2, int(room // max(frame_bytes, 1)))
    return frame_rows(n, min(frames or MAX_FRAMES, fit))


def json_size(data) -> int:
    """The bytes that `data` (traces as plain dicts of lists) takes in the page, about."""
    return len(json.dumps(data, default=lambda a: np.asarray(a).tolist()))


def animate(fig, names, labels, prefix, redraw=False, duration=40):
    """A slider over the figure's frames `names` (step labels `labels`, current value after `prefix`) and
    play/pause buttons. `redraw` for 3-D scenes, which plotly redraws whole."""
    step = {"frame": {"duration": 0, "redraw": redraw}, "mode": "immediate", "transition": {"duration": 0}}
    fig.update_layout(
        sliders=[{"active": 0, "currentvalue": {"prefix": prefix}, "pad": {"t": 40},
                  "steps": [{"method": "animate", "label": label, "args": [[name], step]}
                            for name, label in zip(names, labels)]}],
        updatemenus=list(fig.layout.updatemenus) + [{"type": "buttons", "direction": "left", "x": 0.0, "y": 0.0, "xanchor": "right", "yanchor": "top",
                      "pad": {"t": 40, "r": 10}, "showactive": False,
                      "buttons": [{"label": "play", "method": "animate",
                                   "args": [None, {"frame": {"duration": duration, "redraw": redraw},
                                                   "fromcurrent": True, "transition": {"duration": 0}}]},
                                  {"label": "pause", "method": "animate", "args": [[None], step]}]}])
