"""The bounding strategy is chosen by one ordered rule table from the plan and the engine's
traits, never from the data (``dpsql.rewrite.choose``).

Which rows a person keeps, and so what one person's row can change, must be decided the
same way whatever the rows hold: these tests make that structural — the chooser is handed
the plan and the traits only, imports nothing that reads data, and gives the same strategy
and the same bounded SQL over an empty table and over a hostile one.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pyarrow as pa
import pytest

import dpsql
from dpsql.analysis import analyze
from dpsql.catalog import Catalog, TableInfo
from dpsql.engines import DUCKDB, ENGINES, SPARK
from dpsql.errors import InternalError
from dpsql.plan import STRATEGIES, Bounding
from dpsql.rewrite import BUILDERS
from dpsql.rewrite.choose import RULES, choose

CHOOSER = Path(__file__).resolve().parents[1] / "dpsql" / "rewrite" / "choose.py"
COLUMNS = {"pid": "BIGINT", "name": "VARCHAR", "k": "VARCHAR", "r": "VARCHAR", "tm": "TIME",
           "x": "DOUBLE"}
QUERIES = [
    ("SELECT k, SUM(x) FROM t GROUP BY k", {}, "first_pair"),
    ("SELECT k, COUNT(*) FROM t GROUP BY k", {}, "first_group_of_rows"),
    ("SELECT k, COUNT(*) FROM t GROUP BY k", {"max_groups_per_unit": 3},
     "first_pairs_by_window"),
    ("SELECT k, MEDIAN(x), COUNT(*) FROM t GROUP BY k", {"max_groups_per_unit": 2},
     "kept_rows_ranked"),
    ("SELECT r, SUM(x) FROM t GROUP BY r", {"public_keys": {"r": ["a", "b"]},
                                           "max_groups_per_unit": 2}, "all_pairs"),
    ("SELECT COUNT(*), AVG(x) FROM t", {}, "all_pairs"),
    ("SELECT k, COUNT(*) FROM t GROUP BY k", {"privacy_unit": "name"}, "heavy_units_by_hash"),
    ("SELECT k, SUM(x) FROM t GROUP BY k", {"row_privacy": True}, "row_level"),
]


def plan(sql: str, limits: dict):
    cat = Catalog()
    options = {"privacy_unit": "pid", "bounds": {"x": (0, 10)}} | limits
    if options.get("row_privacy"):
        options.pop("privacy_unit")
    cat.add(TableInfo.private("t", columns=COLUMNS, **options))
    return analyze(sql, cat, epsilon=1, delta=1e-6)


def test_the_rules_name_every_strategy_once_and_each_has_its_builder():
    assert [rule.strategy for rule in RULES] == list(dict.fromkeys(r.strategy for r in RULES))
    assert {rule.strategy for rule in RULES} == set(STRATEGIES) == set(BUILDERS)


@pytest.mark.parametrize(("sql", "limits", "strategy"), QUERIES)
@pytest.mark.parametrize("engine", sorted(ENGINES))
def test_each_plan_gets_its_strategy_and_the_last_rule_takes_any_plan(sql, limits, strategy,
                                                                     engine):
    bounding = choose(plan(sql, limits), ENGINES[engine])
    assert bounding.strategy == strategy
    assert RULES[-1].applies(plan(sql, limits), ENGINES[engine])


def test_the_chooser_is_handed_the_plan_and_the_engine_and_imports_no_data_reader():
    """Its only inputs are the plan (built before any data is read) and the engine's
    traits; its module imports neither an engine, a connection nor a table library."""
    assert list(inspect.signature(choose).parameters) == ["plan", "engine"]
    for rule in RULES:
        assert len(inspect.signature(rule.applies).parameters) == 2, rule.strategy
    imported = set()
    for node in ast.walk(ast.parse(CHOOSER.read_text())):
        if isinstance(node, ast.ImportFrom):
            imported.add(node.module)
        elif isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
    allowed = {"__future__", "math", "collections.abc", "dataclasses", "dpsql.engines",
               "dpsql.errors", "dpsql.plan", "dpsql.rewrite.digest"}
    assert imported <= allowed, imported - allowed


def hostile_rows(n: int) -> pa.Table:
    """Many groups per person, NULL and extreme values, one person in every group."""
    pids = [i % 7 for i in range(n)] + [10**12] * 50
    return pa.table({
        "pid": pa.array(pids, pa.int64()),
        "name": [f"p{p}" for p in pids],
        "k": [f"k{i % 40}" if i % 9 else None for i in range(len(pids))],
        "r": ["a" if i % 2 else "zz" for i in range(len(pids))],
        "tm": pa.array([None] * len(pids), pa.time64("us")),
        "x": [float(i) * 1e12 if i % 5 else float("nan") for i in range(len(pids))],
    })


@pytest.mark.parametrize(("sql", "limits", "strategy"), QUERIES)
def test_the_strategy_and_the_bounded_sql_are_the_same_over_any_data(sql, limits, strategy):
    """An empty table and a hostile one: the same strategy and the same bounded SQL."""
    compiled = []
    for rows in (hostile_rows(0), hostile_rows(500)):
        con = dpsql.connect(budget=dpsql.Budget(epsilon=10, delta=1e-5))
        options = {"privacy_unit": "pid", "bounds": {"x": (0, 10)}} | limits
        if options.get("row_privacy"):
            options.pop("privacy_unit")
        con.register("t", rows, **options)
        compiled.append(con.compile(sql, epsilon=1, delta=1e-6))
        assert con.sql(sql, epsilon=1, delta=1e-6) is not None
    assert compiled[0].bounding == compiled[1].bounding
    assert compiled[0].bounding.strategy == strategy
    assert compiled[0].bounded_sql() == compiled[1].bounded_sql()


def test_each_engine_gets_the_form_its_traits_ask_for():
    one_group = plan("SELECT k, SUM(x) FROM t GROUP BY k", {})
    assert choose(one_group, DUCKDB).options == ("g=1", "packed")
    assert choose(one_group, SPARK).options == ("g=1", "in_rows")
    quantile = plan("SELECT k, MEDIAN(x), COUNT(*) FROM t GROUP BY k", {"max_groups_per_unit": 2})
    assert choose(quantile, SPARK).compute_once and not choose(quantile, DUCKDB).compute_once
    by_time = plan("SELECT tm, SUM(x), MEDIAN(x) FROM t GROUP BY tm", {"max_groups_per_unit": 2})
    pairs = choose(by_time, SPARK)  # Spark refuses TIME in a reused CTE
    assert pairs.strategy == "first_pairs_by_window" and not pairs.compute_once
    # kept_rows_ranked's cells carry the group's rank, never the TIME key
    ranked = choose(plan("SELECT tm, MEDIAN(x) FROM t GROUP BY tm", {"max_groups_per_unit": 2}),
                    SPARK)
    assert ranked.strategy == "kept_rows_ranked" and ranked.compute_once


def test_a_strategy_outside_the_closed_set_is_refused():
    with pytest.raises(InternalError, match="unknown bounding strategy"):
        Bounding("sample_and_hope", "why not")  # type: ignore[arg-type]
