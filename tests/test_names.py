"""Names an analyst writes can never be bound in place of the names dpsql generates.

The attack these tests pin: a subquery that leaves the privacy unit out gets the unit
appended under a generated name; an analyst who aliases another column with that name (or
with a join's renamed name) made DuckDB bind *their* column as the unit, so one person's
30 visits counted as 30 people. The reserved namespace (``dpsql.names``) closes the class:
the grammar corpus refuses every reserved identifier (grammar_tests/names.sql) and checks
that no rewritten query defines a name twice (``test_generated_names_are_unique``).
"""

from __future__ import annotations

import pyarrow as pa
import pytest

import dpsql

HEAVY = 0
VISITS = 30


def visits(with_heavy: bool) -> pa.Table:
    """40 people with one visit each, and (in D) one person with 30 visits."""
    people = [*([HEAVY] * VISITS if with_heavy else []), *range(1, 41)]
    return pa.table({"pid": people, "visit_id": range(100, 100 + len(people)),
                     "ward": ["x" if p == HEAVY else "y" for p in people]})


def answer(sql: str, with_heavy: bool, **limits) -> float:
    """The query's answer with noise far below 1 (ε = 1e6), on D or on D minus HEAVY."""
    con = dpsql.connect(budget=dpsql.Budget(epsilon=1e9, delta=0.5))
    con.register("visits", visits(with_heavy), privacy_unit="pid", **limits)
    ((value,),) = con.sql(sql, epsilon=1e6).fetchall()
    return value


@pytest.mark.parametrize("sql", [
    "SELECT COUNT(*) FROM (SELECT visit_id AS vid FROM visits) s",
    "SELECT COUNT(*) FROM (SELECT visit_id AS pid FROM visits) s",
    "SELECT COUNT(*) FROM (SELECT * REPLACE (visit_id AS pid) FROM visits) s",
    "SELECT COUNT(*) FROM visits a JOIN (SELECT visit_id AS a_pid, pid FROM visits) b "
    "ON a.pid = b.pid",
    "SELECT COUNT(*) FROM visits AS v(person, pid, ward)",
])
def test_one_person_moves_a_count_by_at_most_its_row_limit(sql: str) -> None:
    """Removing the person with 30 visits moves the count by at most 1 row (the default)."""
    assert abs(answer(sql, True) - answer(sql, False)) <= 1


def test_the_capturing_alias_is_refused_before_any_data_is_read() -> None:
    con = dpsql.connect(budget=dpsql.Budget(epsilon=1.0))
    con.register("visits", visits(True), privacy_unit="pid")
    with pytest.raises(dpsql.UnsupportedQueryError, match="reserved"):
        con.sql("SELECT COUNT(*) FROM (SELECT visit_id AS __dp_unit_of FROM visits) s")
    assert con.budget.spent.epsilon == 0


@pytest.mark.parametrize(("name", "columns", "unit"), [
    ("__dp_source", {"pid": "INT"}, "pid"),
    ("visits", {"pid": "INT", "__DP_unit_of": "INT"}, "pid"),
    ("visits", {"__dp_unit": "INT"}, "__dp_unit"),
])
def test_the_catalog_refuses_reserved_names(name, columns, unit) -> None:
    con = dpsql.connect()
    table = pa.table({c: pa.array([1], pa.int32()) for c in columns})
    with pytest.raises(dpsql.CatalogError, match="reserved"):
        con.register(name, table, privacy_unit=unit)
