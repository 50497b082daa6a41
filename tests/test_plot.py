"""Result.plot(): bar heights are the noisy values, error bars span exactly the CIs (Agg)."""

from __future__ import annotations

import sys

import pyarrow as pa
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.container import BarContainer  # noqa: E402

import dpsql  # noqa: E402

PEOPLE = pa.table({"pid": list(range(300)), "g": ["a", "b", "c"] * 100,
                   "v": [float(i % 7) for i in range(300)]})


@pytest.fixture
def con():
    con = dpsql.connect(budget=dpsql.Budget(epsilon=10.0, delta=1e-6), seed=3)
    con.register("t", PEOPLE, privacy_unit="pid", bounds={"v": (0, 10)},
                 public_keys={"g": ["a", "b", "c"]})
    con.register("private_keys", PEOPLE, privacy_unit="pid")
    yield con
    con.close()
    plt.close("all")


def drawn(ax) -> tuple[list[float], list[tuple[float, float] | None]]:
    """Bar heights, and each bar's error-bar (bottom, top), or None without one."""
    [bars] = [c for c in ax.containers if isinstance(c, BarContainer)]
    heights = [patch.get_height() for patch in bars.patches]
    if bars.errorbar is None:
        return heights, [None] * len(heights)
    segments = bars.errorbar.lines[2][0].get_segments()
    ends = [(s[0][1], s[1][1]) if len(s) else None for s in segments]
    return heights, ends


def test_one_bar_per_group_with_the_ci_as_error_bar(con):
    res = con.sql("SELECT g, COUNT(*) AS n, SUM(v) AS total FROM t GROUP BY g ORDER BY g",
                  epsilon=1.0)
    ax = res.plot("total", level=0.9)
    heights, ends = drawn(ax)
    bounds = res.ci(0.9).to_pydict()
    assert heights == bounds["total"]
    assert ends == list(zip(bounds["total_lower"], bounds["total_upper"], strict=True))
    half = res.plan.noise_for(res.plan.aggregates[1].stats[0]).ci_halfwidth(0.9)
    assert [(top - bottom) / 2 for bottom, top in ends] == pytest.approx([half] * 3)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["a", "b", "c"]
    assert ax.get_xlabel() == "g" and ax.get_ylabel() == "total"
    assert "90% CI" in ax.get_title() and "SEEDED, NOT PRIVATE" in ax.get_title()


def test_default_y_is_the_first_numeric_aggregate_and_plotting_spends_nothing(con):
    res = con.sql("SELECT g, COUNT(*) AS n, AVG(v) AS mean FROM t GROUP BY g", epsilon=1.0)
    left = con.budget.remaining
    heights, _ = drawn(res.plot())
    assert heights == res.arrow().column("n").to_pylist()
    assert con.budget.remaining == left


def test_asymmetric_avg_intervals_are_drawn_exactly(con):
    res = con.sql("SELECT g, AVG(v) AS mean FROM t GROUP BY g", epsilon=0.05)
    heights, ends = drawn(res.plot())
    bounds = res.ci(0.95).to_pydict()
    assert ends == list(zip(bounds["mean_lower"], bounds["mean_upper"], strict=True))
    below = [h - lo for h, (lo, _) in zip(heights, ends, strict=True)]
    above = [hi - h for h, (_, hi) in zip(heights, ends, strict=True)]
    assert below != pytest.approx(above)  # clipped to [0, 10]: not centred on the value


def test_global_query_draws_one_bar_per_aggregate_column(con):
    res = con.sql("SELECT COUNT(*) AS n, SUM(v) AS total, COUNT(*) * 2 AS twice FROM t",
                  epsilon=1.0)
    ax = res.plot()
    heights, ends = drawn(ax)
    row = res.ci(0.95).to_pylist()[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["n", "total", "twice"]
    assert heights == [row["n"], row["total"], row["twice"]]
    assert ends == [(row["n_lower"], row["n_upper"]),
                    (row["total_lower"], row["total_upper"]), None]
    assert drawn(res.plot("total"))[0] == [row["total"]]


def test_columns_without_intervals_get_no_error_bars(con):
    res = con.sql("SELECT g, COUNT(*) * 2 AS twice FROM t GROUP BY g", epsilon=1.0)
    heights, ends = drawn(res.plot())
    assert heights == res.arrow().column("twice").to_pylist() and ends == [None] * 3


def test_x_names_the_label_column_and_unselected_keys_fall_back_to_row_numbers(con):
    res = con.sql("SELECT g, 'all' AS scope, COUNT(*) AS n FROM t GROUP BY g", epsilon=1.0)
    ax = res.plot(x="scope")
    assert [t.get_text() for t in ax.get_xticklabels()] == ["all"] * 3
    assert [t.get_text() for t in res.plot().get_xticklabels()] == ["a, all", "b, all",
                                                                   "c, all"]
    ax = con.sql("SELECT COUNT(*) AS n FROM t GROUP BY g", epsilon=1.0).plot()
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "2", "3"]
    assert ax.get_xlabel() == "row"


def test_draws_on_a_given_axes(con):
    _, ax = plt.subplots()
    res = con.sql("SELECT g, COUNT(*) AS n FROM t GROUP BY g", epsilon=1.0)
    assert res.plot(ax=ax, color="grey") is ax
    assert ax.patches[0].get_facecolor()[:3] == pytest.approx((0.5, 0.5, 0.5),
                                                                           abs=0.01)


@pytest.mark.parametrize(("sql", "call", "message"), [
    ("SELECT g FROM private_keys GROUP BY g", {}, "nothing to plot: no numeric column"),
    ("SELECT g, COUNT(*) AS n FROM t GROUP BY g HAVING COUNT(*) < -1000", {},
     "nothing to plot: the result has no rows"),
    ("SELECT g, COUNT(*) AS n FROM t GROUP BY g", {"y": "nope"}, "y='nope' is not a column"),
    ("SELECT g, COUNT(*) AS n FROM t GROUP BY g", {"y": "g"}, "not a numeric column"),
    ("SELECT g, COUNT(*) AS n FROM t GROUP BY g", {"x": "h"}, "x='h' is not a column"),
    ("SELECT g, COUNT(*) AS n FROM t GROUP BY g", {"level": 1.5}, "need 0 < level < 1"),
])
def test_nothing_or_the_wrong_thing_to_plot_is_refused(con, sql, call, message):
    res = con.sql(sql, epsilon=1.0)
    with pytest.raises(dpsql.ProgrammingError, match=message):
        res.plot(**call)
    assert plt.get_fignums() == []  # refused before a figure was opened


def test_without_matplotlib_the_error_says_what_to_install(con, monkeypatch):
    res = con.sql("SELECT COUNT(*) AS n FROM t", epsilon=1.0)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match=r"pip install 'dpsql\[plot\]'"):
        res.plot()
