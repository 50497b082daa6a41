"""Golden bounded queries: the exact SQL each rewrite branch prints, one file per case.

The neighbour checks and audits prove what the rewrite enforces; these files show how, so a
reviewer sees every change to the bounded SQL in a diff. Each case is one branch of
``dpsql/rewrite``: row-level privacy, a global aggregate per person, public keys (a semi-join
on the domain, no ranking; more groups than the limit: the choice among the domain's codes),
private keys (the salted group choice of heavy units; at the default limits, counts alone
choose each unit's group by one aggregate over its rows, and a sum takes its first pair's
partials packed in a BIGINT), a binding
total row cap, BigQuery per-group bounds, COUNT(DISTINCT), quantile histograms (of the rows
joined to the kept pairs; by private groups alone, of the kept rows ranked in a window), and a
join source. Regenerate after an intended change with ``DPSQL_UPDATE_GOLDEN=1 pytest
tests/test_golden_rewrite.py`` and read the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dpsql.catalog import Catalog, TableInfo
from dpsql.compile import compile_query

GOLDEN = Path(__file__).parent / "golden"
COLUMNS = {"pid": "BIGINT", "k": "VARCHAR", "region": "VARCHAR", "x": "DOUBLE", "n": "INTEGER"}


def catalog() -> Catalog:
    cat = Catalog()
    cat.add(TableInfo.private("t", columns=COLUMNS, privacy_unit="pid", bounds={"x": (0, 10)},
                              max_groups_per_unit=2, max_rows_per_group=3,
                              public_keys={"region": ["east", "west"]}))
    cat.add(TableInfo.private("capped", columns=COLUMNS, privacy_unit="pid",
                              bounds={"x": (0, 10)}, max_groups_per_unit=3,
                              max_rows_per_group=3, max_rows_per_unit=4))
    cat.add(TableInfo.private("wide", columns=COLUMNS, privacy_unit="pid", bounds={"x": (0, 10)},
                              max_groups_per_unit=2, max_rows_per_group=3,
                              public_keys={"region": ["east", "west", "north"],
                                           "k": ["a", "b"]}))
    cat.add(TableInfo.private("defaults", columns=COLUMNS, privacy_unit="pid",
                              bounds={"x": (0, 10)}))
    cat.add(TableInfo.private("rows", columns=COLUMNS, row_privacy=True, bounds={"x": (0, 10)}))
    cat.add(TableInfo(name="lookup", columns={"k": "VARCHAR(8)", "w": "DOUBLE"}, public=True))
    return cat


CASES = {
    "row_level": ("SELECT k, SUM(x), COUNT(*) FROM rows GROUP BY k", {"delta": 1e-6}),
    "global_per_person": ("SELECT COUNT(*), AVG(x) FROM t", {}),
    "public_keys": ("SELECT region, COUNT(*), SUM(x) FROM t GROUP BY region", {}),
    "public_keys_group_choice": ("SELECT region, k, COUNT(*) FROM wide GROUP BY region, k",
                                 {"delta": 1e-6}),
    "private_keys_group_choice": ("SELECT k, COUNT(*) FROM t GROUP BY k", {"delta": 1e-6}),
    "first_group_counts": ("SELECT k, COUNT(*), COUNT(x), COUNT(DISTINCT pid) FROM defaults "
                           "GROUP BY k", {"delta": 1e-6}),
    "first_pair_packed": ("SELECT k, SUM(x), AVG(x) FROM defaults GROUP BY k", {"delta": 1e-6}),
    "total_row_cap": ("SELECT k, COUNT(*), SUM(x) FROM capped GROUP BY k", {"delta": 1e-6}),
    "per_group_bounds": ("SELECT region, SUM(x, contribution_bounds_per_group => (0, 20)) "
                         "FROM t GROUP BY region", {"dialect": "bigquery"}),
    "count_distinct": ("SELECT region, COUNT(DISTINCT k) FROM t GROUP BY region", {}),
    "quantile": ("SELECT region, MEDIAN(x) FROM t GROUP BY region", {}),
    "quantile_group_choice": ("SELECT k, COUNT(*), MEDIAN(x) FROM t GROUP BY k",
                              {"delta": 1e-6}),
    "join_source": ("SELECT SUM(LEAST(GREATEST(l.w, 0), 5)) FROM t JOIN lookup l ON t.k = l.k",
                    {}),
}


def public_values(table: str, column: str) -> tuple:
    raise AssertionError("the golden catalog lists its public keys")


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_bounded_query_is_the_golden_one(name):
    sql, options = CASES[name]
    compiled = compile_query(sql, catalog(), epsilon=1.0, delta=options.get("delta", 0.0),
                             dialect=options.get("dialect", "duckdb"),
                             public_values=public_values)
    text = f"-- {sql}\n{compiled.bounded_sql(pretty=True)}\n"
    path = GOLDEN / f"{name}.sql"
    if os.environ.get("DPSQL_UPDATE_GOLDEN"):
        path.write_text(text)
    assert path.read_text() == text, f"{path.name} changed: regenerate and read the diff"
