"""Interactive views in the browser: one self-contained HTML file (plotly's offline HTML, its JavaScript
inlined: it opens with no network) of a planar mechanism through its samples, of a 3-D tree through a run,
or of a sweep's table. docs/view.md says what each shows and why plotly.

The figures are built from a derived system's answers and from tables only (a planar `System`'s
mechanism, its kinematics table; a `TreeSystem`'s frame placements; a `Table`), as `core.plotting`
draws its pictures, so that `System.view`, `TreeSystem.view` and `RunResult.view` reach them from every
layer above. plotly is an optional extra (`pip install mechsym[view]`); without it a view is refused with
one line saying so.
"""
from mechsym.core.view.page import LIMIT, write_html
from mechsym.core.view.planar import linkage_figure, mechanism_view
from mechsym.core.view.sweep import sweep_figure
from mechsym.core.view.tree import tree_figure

__all__ = ["LIMIT", "write_html", "linkage_figure", "mechanism_view", "tree_figure", "sweep_figure"]
