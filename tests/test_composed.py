"""Several releases in one statement: parts, shares of ε, one charge, one result, intervals.

Each part is released as the query it is on its own, at its share of ε (docs/mechanisms.md
§15): the exact tests compare each part with that stand-alone query, so a part that spent
more than its share would show; the charge is checked against the ledger.
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction

import pytest

import dpsql
from dpsql.accounting.values import Cost
from dpsql.composed import ComposedQuery, epsilon_shares
from dpsql.engines import ENGINES
from dpsql.errors import InternalError, UnsupportedQueryError
from dpsql.exact import float_at_most
from dpsql.grouping import compile_statement
from grammar_tests.catalog import connect

CROSS = ("SELECT a.n, b.m FROM (SELECT COUNT(*) AS n FROM pums) a "
         "CROSS JOIN (SELECT AVG(age) AS m FROM pums) b")
RATIO = ("SELECT (SELECT COUNT(*) FROM pums WHERE married = 1) * 1.0 / "
         "(SELECT COUNT(*) FROM pums) AS share")
UNION = ("SELECT COUNT(*) AS n FROM pums WHERE sex = 0 "
         "UNION ALL SELECT COUNT(*) FROM pums WHERE sex = 1")


@pytest.fixture(scope="module")
def con() -> dpsql.Connection:
    return connect()


def test_each_part_is_the_stand_alone_query_at_its_share(con) -> None:
    q = con.compile(CROSS, epsilon=1, delta=0)
    assert isinstance(q, ComposedQuery) and q.cost == Cost(1.0, 0.0)
    shares = [float_at_most(Fraction(1, 3)), float_at_most(Fraction(2, 3))]
    assert [p.cost.epsilon for p in q.parts] == shares
    alone = con.compile("SELECT COUNT(*) AS n FROM pums", epsilon=shares[0], delta=0)
    assert q.parts[0].plan == alone.plan
    assert q.labels == ("a", "b") and q.columns == ("n", "m")


def test_shares_follow_the_statistics_per_unit_and_never_add_up_to_more() -> None:
    """COUNT (1 statistic) and AVG (2: a sum and a count) get 1/3 and 2/3 of ε, so that
    every statistic has the same noise scale relative to its bound."""
    shares = epsilon_shares(0.1, [None, None, None], [1, 2, 4])
    assert sum(map(Fraction, shares)) <= Fraction(1, 10)
    assert [Fraction(s) for s in shares] == [Fraction(float_at_most(Fraction(k, 70)))
                                             for k in (1, 2, 4)]
    assert epsilon_shares(1.0, [0.25, None, None], [5, 1, 3]) == [0.25, 0.1875, 0.5625]


def test_one_ledger_entry_for_the_statement_with_every_parts_mechanisms() -> None:
    con = connect()
    before = len(con.budget.charges)
    result = con.sql(RATIO, epsilon=0.5, delta=0)
    assert result.cost == Cost(0.5, 0.0)
    assert len(con.budget.charges) == before + 1
    charge = con.budget.charges[-1]
    assert (charge.epsilon, charge.query) == (0.5, RATIO)
    assert sum(e.epsilon for e in charge.events) == pytest.approx(0.5)


def test_a_cost_that_differs_from_the_parts_is_an_internal_error(con) -> None:
    q = con.compile(CROSS, epsilon=1, delta=0)
    with pytest.raises(InternalError, match="differs from its parts"):
        dataclasses.replace(q, cost=Cost(0.9, 0.0))
    with pytest.raises(InternalError, match="differs from its parts"):
        dataclasses.replace(q, shares=(0.5, 0.5))


def test_projections_keep_the_parts_intervals_and_others_have_none(con) -> None:
    cross = con.sql(CROSS, epsilon=1, delta=0)
    bounds = cross.ci(0.95).to_pylist()[0]
    n_part = cross.parts[0].ci(0.95).to_pylist()[0]
    assert (bounds["n_lower"], bounds["n_upper"]) == (n_part["n_lower"], n_part["n_upper"])
    ratio = con.sql(RATIO, epsilon=1, delta=0)
    assert "share_lower" not in ratio.ci(0.95).column_names
    assert any("no interval for share" in note for note in ratio.notes())
    union = con.sql(UNION, epsilon=1, delta=0)
    rows = union.ci(0.95).to_pylist()
    assert [r["n"] for r in rows] == [p.table.column(0)[0].as_py() for p in union.parts]
    assert all(r["n_lower"] <= r["n"] <= r["n_upper"] for r in rows)


def test_explain_shows_each_part_and_the_post_processing(con) -> None:
    info = con.explain(RATIO, epsilon=1).to_dict()
    assert [p["epsilon"] for p in info["parts"]] == [0.5, 0.5]  # one statistic each
    assert info["post_processing"].startswith("SELECT")
    assert "__dp_part_0" in info["post_processing"]
    assert [c["name"] for c in info["columns"]] == ["share"]
    assert "parts" in str(con.explain(RATIO, epsilon=1))


def test_the_outer_query_cannot_capture_a_parts_names(con) -> None:
    """Inside a part, `pums` and its columns; outside, only the parts' released columns."""
    with pytest.raises(UnsupportedQueryError, match="does not run over their columns"):
        con.compile("SELECT a.age FROM (SELECT COUNT(*) AS n FROM pums) a, "
                    "(SELECT COUNT(*) AS m FROM pums) b", epsilon=1)


def test_a_query_around_releases_is_bound_over_typed_columns_before_the_charge() -> None:
    """Text plus a number binds over columns of no type, not over the released ones: it is
    refused at compile time, and nothing is charged (it was charged, then failed)."""
    con = connect()
    sql = ("SELECT a.n + b.region AS x FROM (SELECT COUNT(*) AS n FROM visits) a CROSS JOIN "
           "(SELECT region, COUNT(*) AS c FROM visits GROUP BY region) b")
    spent = con.budget.spent
    with pytest.raises(UnsupportedQueryError, match="region string"):
        con.sql(sql, epsilon=1)
    assert con.budget.spent == spent
    con.sql(sql.replace("b.region", "b.c"), epsilon=1)


def test_a_composed_statement_is_answered_afresh_and_charged_each_time() -> None:
    con = connect()
    con.seed = None  # a seeded answer is never cached: the cache is what is under test
    before = len(con.budget.charges)
    first = con.sql(UNION, epsilon=0.5, delta=0)
    second = con.sql(UNION, epsilon=0.5, delta=0)
    assert first.cost == second.cost == Cost(0.5, 0.0)
    assert len(con.budget.charges) == before + 2


def test_spark_gets_each_parts_query_from_the_same_builders(con) -> None:
    """The statement around the parts runs in DuckDB over released tables on either engine."""
    spark = compile_statement(CROSS, con.catalog, epsilon=1, engine=ENGINES["spark"])
    duck = compile_statement(CROSS, con.catalog, epsilon=1)
    assert [str(p.plan) for p in spark.parts] == [str(p.plan) for p in duck.parts]
    assert all(p.bounded.engine.name == "spark" for p in spark.parts)
    assert spark.outer == duck.outer


def test_evaluate_refuses_several_releases(con) -> None:
    with pytest.raises(UnsupportedQueryError, match="evaluate each grouping set or part"):
        con.evaluate(UNION, runs=2, epsilon=1, delta=0)
