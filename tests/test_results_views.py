"""Table's views for notebooks and pandas, and a System in LaTeX."""
import numpy as np

from mechsym.core.results import Table


def test_html_table_with_units_and_elided_rows():
    t = Table({"theta": np.arange(30.0), "status": np.array(["ok"] * 30, dtype=object)}, {"theta": "rad"}, "demo")
    html = t._repr_html_()
    assert "<th>theta [rad]</th>" in html and "<th>status</th>" in html and "demo (30 rows)" in html
    assert "10 more rows" in html and html.count("<tr>") == 1 + 20 + 1  # header, 20 rows, the elision


def test_to_pandas_keeps_columns_order_and_units():
    t = Table({"a": np.array([1.0, np.nan]), "status": np.array(["ok", "error"], dtype=object)}, {"a": "m"})
    df = t.to_pandas()
    assert list(df.columns) == ["a", "status"] and df.attrs["units"] == {"a": "m"}
    assert np.isnan(df["a"][1]) and df["status"][1] == "error"


def test_system_latex_shows_the_newton_euler_system(fourbar):
    text = fourbar._repr_latex_()
    assert text.startswith("$$") and r"\underbrace" in text and "l_{crank}" in text
    assert "9 Newton-Euler rows" in fourbar._repr_latex_(max_rows=5)
