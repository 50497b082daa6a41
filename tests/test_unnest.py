"""UNNEST of an array of constants (``dpsql.analysis.unnest``): the neighbour check of the
contribution bounds on the cross-joined rows, the answers, the public keys, the refusals."""

from __future__ import annotations

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import dpsql
from dpsql.analysis.unnest import MAX_ELEMENTS
from tests.support import LIMITS, assert_within_plan, hostile_table, make_plan, run_bounded

CROSSED = [
    "SELECT e, COUNT(*), SUM(x) FROM t CROSS JOIN UNNEST([1, 2, 3]) AS u(e) GROUP BY e",
    "SELECT COUNT(*), SUM(x), AVG(x), COUNT(DISTINCT pid) FROM t, UNNEST([1, 2, 3, 4, 5]) AS u(e)",
    "SELECT k, e, COUNT(*) FROM t CROSS JOIN UNNEST(['a', 'b']) AS u(e) GROUP BY k, e",
    "SELECT k, SUM(x * e) FROM t CROSS JOIN UNNEST([1, 2, 3, 3]) AS u(e) GROUP BY k",
]


def units(data: pa.Table) -> list[int]:
    return sorted({u for u in data.column("pid").to_pylist() if u is not None})


def without(data: pa.Table, unit: int) -> pa.Table:
    return data.filter(pc.fill_null(pc.not_equal(data.column("pid"), unit), True))


@pytest.mark.parametrize("limits", LIMITS, ids=lambda d: ",".join(f"{v}" for v in d.values()))
@pytest.mark.parametrize("sql", CROSSED)
def test_removing_any_unit_moves_the_crossed_statistics_within_the_plan(sql, limits):
    """A k-element array repeats each person's rows k times; the limits hold on the joined
    rows, so D and D minus one person's rows differ by at most the planned sensitivity
    (hostile values: ±1e12, ±inf, NaN, NULL; persons with 1 to 40 rows)."""
    plan = make_plan(sql, **limits)
    data = hostile_table()
    full = run_bounded(data, plan, salt="fixed")
    for unit in units(data):
        assert_within_plan(plan, full, run_bounded(without(data, unit), plan, salt="fixed"),
                           unit)


def test_bounding_before_the_join_would_not_hold():
    """The negative control: the unbounded cross join moves a COUNT by k times a person's
    rows, beyond the plan's bound — what the check above would catch had the limits been
    applied to the table's rows before the join."""
    sql = "SELECT COUNT(*) FROM t CROSS JOIN UNNEST([1, 2, 3]) AS u(e)"
    plan = make_plan(sql, max_groups_per_unit=1, max_rows_per_group=40)
    bound = plan.sensitivities[0].bound
    data = hostile_table()
    con = duckdb.connect()

    def count(table: pa.Table) -> int:
        con.register("t", table)
        return con.sql(sql).fetchall()[0][0]

    moves = [count(data) - count(without(data, u)) for u in units(data)]
    assert max(moves) > bound  # a 40-row person moves it by 120
    assert max(moves) == 3 * 40


def connection() -> dpsql.Connection:
    con = dpsql.connect(budget=dpsql.Budget(epsilon=1e12, delta=0.5), cache=False)
    con.register("t", pa.table({"pid": [1, 1, 2, 3], "k": ["a", "b", "a", "b"],
                                "x": [1.0, 2.0, 3.0, 4.0]}), privacy_unit="pid",
                 bounds={"x": (0, 10)}, max_groups_per_unit=4, max_rows_per_group=2)
    return con


def test_the_elements_are_public_keys_and_the_answer_is_exact_at_huge_epsilon():
    con = connection()
    sql = ("SELECT e, COUNT(*) AS n, SUM(x) AS s FROM t CROSS JOIN UNNEST([3, 1, 2, 9]) AS u(e) "
           "GROUP BY e ORDER BY e")
    rows = con.sql(sql, epsilon=1e9, delta=0).fetchall()
    assert [(e, n) for e, n, _ in rows] == [(1, 4), (2, 4), (3, 4), (9, 4)]
    assert [s for _, _, s in rows] == pytest.approx([10.0] * 4, abs=1e-3)
    assert con.explain(sql, epsilon=1).to_dict()["partition_selection"] == "public"


def test_bigquery_names_the_element_by_the_alias_and_a_comma_joins():
    con = dpsql.connect(budget=dpsql.Budget(epsilon=1e12, delta=0.5), dialect="bigquery",
                        cache=False)
    con.register("t", pa.table({"pid": [1, 2], "x": [1.0, 2.0]}), privacy_unit="pid",
                 bounds={"x": (0, 10)}, max_groups_per_unit=2)
    sql = "SELECT e, COUNT(*) FROM t, UNNEST(['p', 'q']) AS e GROUP BY e ORDER BY e"
    assert con.sql(sql, epsilon=1e9, delta=0).fetchall() == [("p", 2), ("q", 2)]


@pytest.mark.parametrize(("sql", "message"), [
    ("SELECT COUNT(*) FROM t CROSS JOIN UNNEST([x]) AS u(e)", "no columns"),
    ("SELECT COUNT(*) FROM t CROSS JOIN UNNEST([random()]) AS u(e)", "function calls"),
    ("SELECT COUNT(*) FROM t CROSS JOIN UNNEST([1, NULL]) AS u(e)", "NULL"),
    ("SELECT COUNT(*) FROM t CROSS JOIN UNNEST([(SELECT 1)]) AS u(e)", "subqueries"),
    ("SELECT COUNT(*) FROM t CROSS JOIN UNNEST([1, 'a']) AS u(e)", "same kind"),
    ("SELECT COUNT(*) FROM t CROSS JOIN UNNEST(k) AS u(e)", "UNNEST of a column"),
    ("SELECT COUNT(*) FROM t CROSS JOIN UNNEST([]) AS u(e)", "at least one"),
    ("SELECT COUNT(*) FROM t CROSS JOIN UNNEST([1, 2]) AS u(e, f)", "one column"),
    ("SELECT COUNT(*) FROM t CROSS JOIN UNNEST([" + ", ".join(["1"] * (MAX_ELEMENTS + 1))
     + "]) AS u(e)", "at most 1000"),
    ("SELECT COUNT(*) FROM UNNEST([1, 2]) AS u(e)", "public tables are for lookups"),
    ("SELECT COUNT(*) FROM t CROSS JOIN t AS s", "Cross joins with tables"),
])
def test_refused_before_reading_data(sql, message):
    with pytest.raises(dpsql.UnsupportedQueryError, match=message):
        connection().explain(sql, epsilon=1)


def test_with_offset_is_refused():
    con = dpsql.connect(dialect="bigquery")
    con.register("t", pa.table({"pid": [1], "x": [1.0]}), privacy_unit="pid")
    with pytest.raises(dpsql.UnsupportedQueryError, match="WITH OFFSET"):
        con.explain("SELECT COUNT(*) FROM t CROSS JOIN UNNEST([1, 2]) AS e WITH OFFSET",
                    epsilon=1)
