"""Hostile query text: whatever the analyst sends, dpsql answers or raises a dpsql.Error.

These pin the crashes found by the adversarial review (a RecursionError escaped for deeply
nested expressions); extreme ε, δ and bounds are in tests/test_extremes.py.
"""

from __future__ import annotations

import pytest

import dpsql
from dpsql.parse import MAX_DEPTH, depth, parse


@pytest.fixture(scope="module")
def con() -> dpsql.Connection:
    con = dpsql.connect(budget=dpsql.Budget(epsilon=1e9, delta=0.5))
    con.register("pums", "datasets/PUMS_dup.csv", privacy_unit="pid", bounds={"age": (0, 100)})
    return con


@pytest.mark.parametrize("predicate", [
    "(" * 100_000 + "age > 1" + ")" * 100_000,
    "NOT " * 10_000 + "age > 1",
    " AND ".join(["age > 1"] * 5_000),
    " + ".join(["age"] * 5_000) + " > 1",
    "CASE WHEN " * 2_000 + "age > 1" + " THEN TRUE END" * 2_000,
])
def test_deep_nesting_is_refused_with_a_parse_error(con, predicate):
    with pytest.raises(dpsql.ParseError, match="nested too deeply"):
        con.sql(f"SELECT COUNT(*) FROM pums WHERE {predicate}", epsilon=1)
    assert con.budget.spent.epsilon == 0


def test_nesting_below_the_limit_is_answered(con):
    sql = "SELECT COUNT(*) FROM pums WHERE " + " AND ".join(["age > 1"] * 150)
    assert depth(parse(sql)) < MAX_DEPTH
    con.sql(sql, epsilon=1).fetchall()
    nested = "SELECT COUNT(*) FROM pums WHERE " + "(" * 30 + "age > 1" + ")" * 30
    con.sql(nested, epsilon=1).fetchall()
