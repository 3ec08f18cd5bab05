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


def test_inverse_plot_draws_one_line_per_speed_with_a_legend(fourbar):
    """Two speeds: two lines, each over one turn (no jump from 2 pi back to 0), each the torque of its own
    speed as a single-speed inverse computes it, told apart by the legend."""
    theta = np.linspace(0, 2 * np.pi, 36, endpoint=False)
    table = fourbar.inverse(theta, omega=[5.0, 10.0])
    fig = table.plot(None, "theta", ["torque"])
    lines = fig.axes[0].get_lines()
    assert [line.get_label() for line in lines] == ["torque, omega = 5 rad/s", "torque, omega = 10 rad/s"]
    assert fig.axes[0].get_legend() is not None
    for line, omega in zip(lines, (5.0, 10.0)):
        assert np.all(np.diff(line.get_xdata()) > 0)
        assert np.allclose(line.get_ydata(), fourbar.inverse(theta, omega=omega)["torque"], rtol=0, atol=1e-12)
    quasi = fourbar.inverse(theta, 0.0, inertia=False)
    del quasi.columns["omega"]                       # as the quasi-static command writes it: one line
    assert [line.get_label() for line in quasi.plot(None, "theta", ["torque"]).axes[0].get_lines()] == ["torque"]


def test_csv_numbers_are_the_shortest_text_that_reads_back(tmp_path):
    """0.03 is written 0.03 (not 0.029999999999999999), every value reads back to the same double, and with
    one significant digit fewer it would not."""
    rng = np.random.default_rng(3)
    values = np.concatenate([[0.03, 0.1 + 0.2, 1e-300, -2.5e17, 0.0, 1 / 3], rng.standard_normal(200) * 10.0 ** rng.integers(-12, 12, 200)])
    t = Table({"x": values, "status": np.array(["ok"] * len(values), dtype=object)})
    t.to_csv(tmp_path / "a.csv")
    Table({"x": values}).to_csv(tmp_path / "b.csv")
    for name in ("a.csv", "b.csv"):
        lines = (tmp_path / name).read_text().splitlines()
        fields = [line.split(",")[0] for line in lines[1:]]
        assert fields[:3] == ["0.03", "0.30000000000000004", "1e-300"]
        assert np.array_equal(np.array(fields, float), values)
        for field, value in zip(fields, values):     # shortest: one significant digit fewer does not read back
            digits = len(field.lstrip("-").split("e")[0].replace(".", "").strip("0"))
            assert digits <= 17 and (digits <= 1 or float(f"{value:.{digits - 2}e}") != value), field
