"""Post-processing of released values: window functions over aggregates, QUALIFY, and an
outer query over a DP release in a CTE or subquery (dpsql/analysis/outer.py).

What must hold: every such value is a function of the *released* (noisy) rows — equal to that
function applied to the released columns, and different from it applied to the exact ones —
and it costs exactly what the release alone costs.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import dpsql
from dpsql.evaluate import truth
from grammar_tests.catalog import connect

WINDOWS = ("SELECT region, COUNT(*) AS n, COUNT(*) * 100.0 / SUM(COUNT(*)) OVER () AS pct, "
           "SUM(COUNT(*)) OVER (ORDER BY region) AS running, "
           "RANK() OVER (ORDER BY COUNT(*) DESC, region) AS r FROM visits GROUP BY region "
           "ORDER BY region")
RELEASE = "SELECT specialty, SUM(cost) AS t FROM visits GROUP BY specialty"


@pytest.fixture(scope="module")
def con() -> dpsql.Connection:
    return connect()


def columns(result: dpsql.Result) -> dict[str, np.ndarray]:
    return {name: np.array(result.arrow().column(name).to_pylist(), dtype=float)
            for name in result.columns if name not in ("region", "specialty")}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_windows_are_functions_of_the_released_counts(con, seed):
    got = columns(con.sql(WINDOWS, seed=seed))
    n = got["n"]
    assert got["pct"] == pytest.approx(n * 100 / n.sum())
    assert np.array_equal(got["running"], np.cumsum(n))
    order = sorted(range(len(n)), key=lambda i: (-n[i], i))  # regions are in ORDER BY order
    assert [int(got["r"][i]) for i in order] == list(range(1, len(n) + 1))


def test_windows_read_noisy_not_exact_values(con):
    exact = truth(con, con.compile(WINDOWS), seed=0).fetchall()
    noisy = con.sql(WINDOWS, seed=5).fetchall()
    exact_n = np.array([row[1] for row in exact], dtype=float)
    assert [row[1] for row in noisy] != list(exact_n)  # the noise moved some count
    assert [row[2] for row in noisy] != pytest.approx(list(exact_n * 100 / exact_n.sum()))


@pytest.mark.parametrize("seed", [1, 2])
def test_an_outer_query_reads_the_released_rows(con, seed):
    released = con.sql(RELEASE, seed=seed).arrow().column("t").to_pylist()
    outer = con.sql(f"WITH s AS ({RELEASE}) SELECT AVG(t) AS mean, MAX(t) AS top, "
                    "COUNT(*) AS groups FROM s", seed=seed).fetchall()
    assert outer == [(pytest.approx(np.mean(released)), max(released), len(released))]
    exact = truth(con, con.compile(RELEASE), seed=0).arrow().column("t").to_pylist()
    assert outer[0][0] != pytest.approx(np.mean(exact))


def test_an_outer_query_costs_what_its_release_costs(con):
    nested = con.compile(f"SELECT AVG(t) FROM ({RELEASE}) AS s", epsilon=0.3, delta=1e-7)
    alone = con.compile(RELEASE, epsilon=0.3, delta=1e-7)
    assert nested.cost == alone.cost and nested.events == alone.events
    assert nested.bounded_sql() == alone.bounded_sql()


@pytest.mark.parametrize("sql, message", [
    ("SELECT * FROM __dp_release", "reserved"),
    (f"SELECT AVG(specialty) FROM ({RELEASE}) AS s", "cannot run on the released rows"),
    (f"SELECT AVG(t) FROM ({RELEASE}) AS s JOIN regions r ON TRUE", "a table beside releases"),
    ("SELECT region, COUNT(*) FROM visits GROUP BY region QUALIFY COUNT(*) > 1", "HAVING"),
    ("SELECT region, LEAD(COUNT(*), 1, 'x') OVER () FROM visits GROUP BY region", "a number"),
    ("SELECT region, NTILE(0) OVER (ORDER BY COUNT(*)) FROM visits GROUP BY region", "NTILE"),
])
def test_refused_before_any_data_is_read(con, sql, message):
    spent = con.budget.spent
    with pytest.raises(dpsql.UnsupportedQueryError, match=message):
        con.compile(sql)
    assert con.budget.spent == spent


def test_a_column_the_release_lacks_is_unknown(con):
    """An unknown name is a CatalogError (exit 3 on the command line), as for a table."""
    with pytest.raises(dpsql.CatalogError, match="not a column of the release"):
        con.compile(f"SELECT AVG(cost) FROM ({RELEASE}) AS s")


def test_a_numeric_cast_of_an_aggregate_keeps_its_interval(con):
    result = con.sql("SELECT COUNT(*)::INT AS n, CAST(COUNT(*) AS VARCHAR) AS t FROM visits",
                     seed=1)
    assert set(result.ci().column_names) == {"n", "t", "n_lower", "n_upper"}
    assert "(1 row; 95% CIs" in repr(result) and "n_lower" not in repr(result)


def test_a_shown_result_names_the_default_limits_that_bounded_it():
    """Free (the plan, not the data): limits nobody declared are named under the table."""
    con = dpsql.connect(budget=dpsql.Budget(epsilon=10))
    table = pa.table({"pid": [1, 1, 2], "k": ["a", "b", "a"]})
    con.register("t", table, privacy_unit="pid", public_keys={"k": ["a", "b"]})
    con.register("d", table, privacy_unit="pid", max_rows_per_group=2, max_groups_per_unit=2,
                 public_keys={"k": ["a", "b"]})
    grouped = con.sql("SELECT k, COUNT(*) AS n FROM t GROUP BY k", epsilon=0.1)
    assert grouped.default_limits == {"max_rows_per_group": 1, "max_groups_per_unit": 1}
    assert "bounded by default limits (max_rows_per_group=1, max_groups_per_unit=1)" in repr(
        grouped)
    total = con.sql("SELECT COUNT(*) AS n FROM t", epsilon=0.1)
    assert total.default_limits == {"max_rows_per_group": 1}  # no keys: no groups limit
    declared = con.sql("SELECT k, COUNT(*) AS n FROM d GROUP BY k", epsilon=0.1)
    assert declared.default_limits == {} and "default limits" not in repr(declared)
