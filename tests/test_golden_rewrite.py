"""Golden bounded queries: the exact SQL each bounding strategy prints, named by it.

The neighbour checks and audits prove what the rewrite enforces; these files show how, so a
reviewer sees every change to the bounded SQL in a diff. Each file is named by the strategy
that built it (``dpsql.plan.STRATEGIES``, chosen by ``dpsql.rewrite.choose``): the file
``<strategy>.sql`` holds its main case, ``<strategy>-<variant>.sql`` the others (a total
row cap, BigQuery per-group bounds, COUNT(DISTINCT), quantile histograms, a join source,
and each engine's own form: ``-spark`` files are Spark SQL, built for Spark's traits). The
second line of each file is the strategy, its options and why it was chosen. Regenerate
after an intended change with ``DPSQL_UPDATE_GOLDEN=1 pytest tests/test_golden_rewrite.py``
and read the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dpsql.catalog import Catalog, TableInfo
from dpsql.compile import compile_query
from dpsql.engines import ENGINES
from dpsql.plan import STRATEGIES

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
    cat.add(TableInfo.private("named", columns=COLUMNS | {"name": "VARCHAR"}, privacy_unit="name",
                              bounds={"x": (0, 10)}, max_groups_per_unit=2))
    cat.add(TableInfo(name="lookup", columns={"k": "VARCHAR(8)", "w": "DOUBLE"}, public=True))
    return cat


CASES = {
    "row_level": ("SELECT k, SUM(x), COUNT(*) FROM rows GROUP BY k", {"delta": 1e-6}),
    "all_pairs": ("SELECT region, COUNT(*), SUM(x) FROM t GROUP BY region", {}),
    "all_pairs-global_per_person": ("SELECT COUNT(*), AVG(x) FROM t", {}),
    "all_pairs-per_group_bounds": ("SELECT region, SUM(x, contribution_bounds_per_group => "
                                   "(0, 20)) FROM t GROUP BY region", {"dialect": "bigquery"}),
    "all_pairs-count_distinct": ("SELECT region, COUNT(DISTINCT k) FROM t GROUP BY region", {}),
    "all_pairs-quantile": ("SELECT region, MEDIAN(x) FROM t GROUP BY region", {}),
    "all_pairs-quantile-spark": ("SELECT MEDIAN(x), SUM(x) FROM t", {"engine": "spark"}),
    "all_pairs-join_source": ("SELECT SUM(LEAST(GREATEST(l.w, 0), 5)) FROM t JOIN lookup l "
                              "ON t.k = l.k", {}),
    "first_pair": ("SELECT k, SUM(x), AVG(x) FROM defaults GROUP BY k", {"delta": 1e-6}),
    "first_pair-spark": ("SELECT k, SUM(x), AVG(x) FROM defaults GROUP BY k",
                         {"delta": 1e-6, "engine": "spark"}),
    "first_pairs_by_window": ("SELECT k, COUNT(*) FROM t GROUP BY k", {"delta": 1e-6}),
    "first_pairs_by_window-spark": ("SELECT k, COUNT(*) FROM t GROUP BY k",
                                    {"delta": 1e-6, "engine": "spark"}),
    "first_pairs_by_window-public_keys": ("SELECT region, k, COUNT(*) FROM wide "
                                          "GROUP BY region, k", {"delta": 1e-6}),
    "first_pairs_by_window-total_row_cap": ("SELECT k, COUNT(*), SUM(x) FROM capped GROUP BY k",
                                            {"delta": 1e-6}),
    "heavy_units_by_hash": ("SELECT k, COUNT(*), SUM(x) FROM named GROUP BY k", {"delta": 1e-6}),
    "kept_rows_ranked": ("SELECT k, COUNT(*), MEDIAN(x) FROM t GROUP BY k", {"delta": 1e-6}),
    "kept_rows_ranked-spark": ("SELECT k, COUNT(*), MEDIAN(x) FROM t GROUP BY k",
                               {"delta": 1e-6, "engine": "spark"}),
    "first_group_of_rows": ("SELECT k, COUNT(*), COUNT(x), COUNT(DISTINCT pid) FROM defaults "
                            "GROUP BY k", {"delta": 1e-6}),
}


def public_values(table: str, column: str) -> tuple:
    raise AssertionError("the golden catalog lists its public keys")


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_bounded_query_is_the_golden_one(name):
    sql, options = CASES[name]
    compiled = compile_query(sql, catalog(), epsilon=1.0, delta=options.get("delta", 0.0),
                             dialect=options.get("dialect", "duckdb"),
                             public_values=public_values,
                             engine=ENGINES[options.get("engine", "duckdb")])
    assert compiled.bounding.strategy == name.split("-")[0]
    text = f"-- {sql}\n-- bounding: {compiled.bounding}\n{compiled.bounded_sql(pretty=True)}\n"
    path = GOLDEN / f"{name}.sql"
    if os.environ.get("DPSQL_UPDATE_GOLDEN"):
        path.write_text(text)
    assert path.read_text() == text, f"{path.name} changed: regenerate and read the diff"


def test_every_strategy_has_its_golden_file_and_no_file_is_stale():
    assert {name.split("-")[0] for name in CASES} == set(STRATEGIES)
    assert {path.stem for path in GOLDEN.glob("*.sql")} == set(CASES)
