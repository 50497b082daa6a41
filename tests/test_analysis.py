"""Analysis: grammar, bounds, contribution limits, sensitivities and the mechanism."""

from __future__ import annotations

import math

import pytest
import sqlglot

import dpsql
from dpsql.analysis import analyze
from dpsql.analysis.bounds import Interval, infer_interval
from dpsql.analysis.sensitivity import normalised_norms
from dpsql.catalog import Catalog, TableInfo

COLUMNS = {"pid": "BIGINT", "specialty": "VARCHAR", "region": "VARCHAR", "age": "INTEGER",
           "cost": "DOUBLE"}


def catalog(**options) -> Catalog:
    cat = Catalog()
    options.setdefault("privacy_unit", "pid")
    options.setdefault("bounds", {"age": (0, 100), "cost": (0, 1000)})
    cat.add(TableInfo.private("visits", columns=COLUMNS, **options))
    return cat


def plan_of(sql: str, *, epsilon=1.0, delta=1e-6, **options):
    return analyze(sql, catalog(**options), epsilon=epsilon, delta=delta)


@pytest.mark.parametrize(("expr", "expected"), [
    ("LEAST(GREATEST(cost, 0), 100)", Interval(0, 100)),
    ("GREATEST(LEAST(cost, 50), -5)", Interval(0, 50)),
    ("LEAST(GREATEST(cost, 10), 20000)", Interval(10, 1000)),   # the tighter wins
    ("cost * 2 - age", Interval(-100, 2000)),
    ("-cost", Interval(-1000, 0)),
    ("ABS(cost - 500)", Interval(0, 500)),
    ("LEAST(GREATEST(unknown_col, 1), 3) * (2 + 1)", Interval(3, 9)),
    ("COALESCE(cost, 5000)", Interval(0, 5000)),
])
def test_interval_arithmetic(expr, expected):
    bounds = {"cost": (0.0, 1000.0), "age": (0.0, 100.0)}
    assert infer_interval(sqlglot.parse_one(expr), bounds) == expected


def test_unbounded_column_has_no_finite_interval():
    assert not infer_interval(sqlglot.parse_one("income + 1"), {}).finite


@pytest.mark.parametrize(("groups", "rows", "total", "l1", "l2"), [
    (4, 3, None, 4.0, 2.0),
    (4, 3, 6, 2.0, math.sqrt(2)),
    (4, 3, 7, 7 / 3, math.sqrt(2 + (1 / 3) ** 2)),
    (4, 3, 100, 4.0, 2.0),
    (1, 1, None, 1.0, 1.0),
])
def test_normalised_norms_match_the_worst_case_vector(groups, rows, total, l1, l2):
    assert normalised_norms(groups, rows, total) == pytest.approx((l1, l2))


def test_count_sensitivity_combines_the_three_limits():
    plan = plan_of("SELECT specialty, COUNT(*) FROM visits GROUP BY specialty",
                   max_groups_per_unit=4, max_rows_per_group=3, max_rows_per_unit=6)
    rows = next(s for s in plan.sensitivities if s.name == plan.aggregates[0].stats[0])
    quantum = plan.stat(rows.name).quantum  # r binds: counts in COUNT_QUANTUM
    assert rows.bound * quantum == 3 and quantum < 1
    # L1 = min(r, g·c) = 6 rows; L2 = 3·√2 (two full groups)
    assert rows.bound * quantum * rows.l1 == pytest.approx(6)
    assert rows.bound * quantum * rows.l2 == pytest.approx(3 * math.sqrt(2))


def test_sum_sensitivity_scales_with_value_bound_and_rows():
    plan = plan_of("SELECT SUM(cost) FROM visits", max_rows_per_group=3)
    (stat,) = plan.sensitivities
    (spec,) = plan.stats
    assert stat.bound * spec.quantum == 3000 and stat.l1 == 1 and not plan.selection


def test_avg_uses_count_and_centered_sum():
    plan = plan_of("SELECT AVG(LEAST(GREATEST(cost, 100), 300)) FROM visits")
    kinds = sorted(s.kind for s in plan.stats)
    assert kinds == ["centered_sum", "count"]
    centered = next(s for s in plan.stats if s.kind == "centered_sum")
    assert (centered.lo, centered.hi, centered.center) == (100, 300, 200)
    assert plan.sensitivity(centered.name).bound * centered.quantum == 100


def test_identical_statistics_are_shared():
    plan = plan_of("SELECT COUNT(cost), AVG(cost), COUNT(*) * 2, COUNT(*) FROM visits")
    assert len(plan.stats) == 3   # count(cost), centered_sum(cost), rows
    assert len(plan.aggregates) == 3


def test_private_keys_add_the_unit_count_for_selection():
    plan = plan_of("SELECT specialty, SUM(cost) FROM visits GROUP BY specialty",
                   max_groups_per_unit=2)
    assert {s.kind for s in plan.stats} == {"sum", "units"}
    # Laplace noise: the truncated geometric on the exact count beats the threshold, and
    # the count is then not released (tests/test_selection_choice.py).
    assert plan.selection.truncated_geometric and plan.statistics_per_unit == 2
    assert plan.cost.delta == 1e-6


def test_a_released_unit_count_doubles_as_the_threshold_statistic():
    plan = plan_of("SELECT specialty, COUNT(DISTINCT pid), SUM(cost) FROM visits "
                   "GROUP BY specialty", max_groups_per_unit=2)
    assert plan.selection.method == "laplace_threshold" and plan.selection.threshold > 1
    assert plan.statistics_per_unit == 4


def test_public_keys_skip_selection_and_laplace_spends_no_delta():
    plan = plan_of("SELECT region, COUNT(*) FROM visits GROUP BY region",
                   public_keys={"region": ["north", "south"]})
    assert plan.selection is None
    assert plan.noise.kind == "laplace" and plan.cost.delta == 0.0


def test_private_keys_with_zero_delta_are_refused_with_a_fix():
    with pytest.raises(dpsql.PrivacyError, match="public_keys"):
        plan_of("SELECT specialty, COUNT(*) FROM visits GROUP BY specialty", delta=0.0)


@pytest.mark.parametrize("stats,expected", [(1, "laplace"), (6, "laplace"), (8, "gaussian")])
def test_mechanism_follows_statistics_per_unit(stats, expected):
    plan = plan_of("SELECT region, COUNT(*) FROM visits GROUP BY region",
                   public_keys={"region": [f"r{i}" for i in range(stats)]},
                   max_groups_per_unit=stats, delta=1e-5)
    assert plan.statistics_per_unit == stats
    assert plan.noise.kind == expected


def test_defaults_are_enforced_and_reported():
    plan = plan_of("SELECT specialty, COUNT(*) FROM visits GROUP BY specialty")
    limits = plan.contribution
    assert (limits.max_groups_per_unit, limits.max_rows_per_group) == (1, 1)
    assert dict(limits.sources)["max_groups_per_unit"] == "default"


def test_row_level_privacy_has_unit_contributions():
    plan = plan_of("SELECT specialty, COUNT(*), SUM(cost) FROM visits GROUP BY specialty",
                   privacy_unit=None, row_privacy=True)
    assert plan.row_level and plan.statistics_per_unit == 2  # the row count selects only
    assert all(s.l1 == 1 for s in plan.sensitivities)


@pytest.mark.parametrize(("sql", "error", "match"), [
    ("SELECT COUNT(*) FROM visits; SELECT 1", dpsql.ParseError, "one SQL statement"),
    ("SELEC COUNT(*) FROM visits", dpsql.ParseError, "cannot parse"),
    ("DELETE FROM visits", dpsql.UnsupportedQueryError, "DELETE"),
    ("SELECT COUNT(*) FROM visits UNION SELECT COUNT(*) FROM visits",
     dpsql.UnsupportedQueryError, "set operation"),
    ("SELECT COUNT(*) FROM read_csv('x.csv')", dpsql.UnsupportedQueryError, "register"),
    ("SELECT age FROM visits", dpsql.UnsupportedQueryError, "AVG\\(age\\)"),
    ("SELECT * FROM visits", dpsql.UnsupportedQueryError, "SELECT \\*"),
    ("SELECT pid, COUNT(*) FROM visits GROUP BY pid", dpsql.UnsupportedQueryError,
     "COUNT\\(DISTINCT pid\\)"),
    ("SELECT SUM(income) FROM visits", dpsql.CatalogError, "not in table"),
    ("SELECT SUM(age * pid) FROM visits", dpsql.UnsupportedQueryError, "needs bounds"),
    ("SELECT MAX(age) FROM visits", dpsql.UnsupportedQueryError, "COUNT\\(\\*\\)"),
    ("SELECT COUNT(DISTINCT region, age) FROM visits", dpsql.UnsupportedQueryError,
     "DISTINCT"),
    ("SELECT COUNT(*) FROM visits WHERE CAST(region AS INT) > 1", dpsql.UnsupportedQueryError,
     r"TRY_CAST\(region AS INT\)"),
    ("SELECT COUNT(*) FROM visits WHERE age IN (SELECT 1)", dpsql.UnsupportedQueryError,
     "subquery"),
    ("SELECT COUNT(*) FROM unknown_table", dpsql.CatalogError, "not registered"),
    ("SELECT COUNT(*) FROM visits JOIN other ON true", dpsql.CatalogError, "not registered"),
    ("SELECT COUNT(*) FROM visits a JOIN visits b ON a.age = b.age", dpsql.UnsupportedQueryError,
     "only on their privacy units"),
    ("SELECT COUNT(*) FROM (SELECT * FROM visits LIMIT 5)", dpsql.UnsupportedQueryError,
     "LIMIT inside a subquery"),
    ("SELECT COUNT(*) OVER () FROM visits", dpsql.UnsupportedQueryError, "[Ww]indow"),
    ("SELECT COUNT(*) FROM visits LIMIT age", dpsql.UnsupportedQueryError, "LIMIT"),
    ("SELECT 1 FROM visits", dpsql.UnsupportedQueryError,
     "at least one aggregate"),
])
def test_refusals_name_the_fragment_and_the_fix(sql, error, match):
    with pytest.raises(error, match=match):
        plan_of(sql)


def test_private_keys_alone_use_the_truncated_geometric():
    plan = plan_of("SELECT specialty FROM visits GROUP BY specialty", max_groups_per_unit=2)
    assert plan.noise is None and plan.selection.truncated_geometric
    assert (plan.selection.epsilon, plan.selection.max_groups_per_unit) == (1.0, 2)
    plan.verify_cost()


def test_sum_without_bounds_suggests_both_fixes():
    with pytest.raises(dpsql.UnsupportedQueryError) as info:
        plan_of("SELECT SUM(cost) FROM visits", bounds={})
    message = str(info.value)
    assert 'bounds={"cost": (lo, hi)}' in message and "LEAST(GREATEST(cost" in message
