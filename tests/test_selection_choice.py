"""Which partition selection a query with aggregates over private keys gets.

The chooser's noise comes first (least error per cell); among the selections that keep
every cell's noise as it is, the one releasing a group at fewer units (n₅₀) wins.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest

import dpsql
from dpsql import datasets
from dpsql.analysis import analyze, sensitivity
from dpsql.catalog import Catalog, TableInfo
from dpsql.mechanisms.selection import truncated_geometric_probability, units_for_release

COLUMNS = {"pid": "BIGINT", "specialty": "VARCHAR", "cost": "DOUBLE"}


def plan_of(sql: str, *, epsilon=1.0, delta=1e-6, groups=1):
    cat = Catalog()
    cat.add(TableInfo.private("visits", columns=COLUMNS, privacy_unit="pid",
                              bounds={"cost": (0, 1000)}, max_groups_per_unit=groups))
    return analyze(sql, cat, epsilon=epsilon, delta=delta)


def threshold_plan(sql: str, monkeypatch, **options):
    """The same query planned with the threshold only (the design before the swap)."""
    with monkeypatch.context() as patch:
        patch.setattr(sensitivity, "_separate_selection", lambda draft, units: draft)
        return plan_of(sql, **options)


def n50(plan) -> int:
    """The fewest people released with probability ½, read off the curve explain() shows."""
    selection, noise = plan.selection, plan.selection_noise()
    return units_for_release(lambda n: float(selection.chance(np.array([n]), noise)[0]))


SUM_BY_KEY = "SELECT specialty, SUM(cost) FROM visits GROUP BY specialty"


def test_a_sum_over_private_keys_swaps_the_threshold_for_the_geometric(monkeypatch):
    plan = plan_of(SUM_BY_KEY)
    before = threshold_plan(SUM_BY_KEY, monkeypatch)
    assert before.selection.method == "laplace_threshold"
    assert plan.selection.truncated_geometric and plan.noise.kind == "laplace"
    # Same noise on the released cell, fewer units needed to release a group.
    sum_name = plan.aggregates[0].stats[0]
    assert plan.noise_for(sum_name).scale <= before.noise_for(sum_name).scale * (1 + 1e-9)
    assert n50(plan) < n50(before)
    # The unit count is computed for selection but is no longer a noised statistic.
    assert [plan.stat(s.name).kind for s in plan.sensitivities] == ["sum"]
    assert plan.statistics_per_unit == 1
    # The noise and the selection split the query's ε and never exceed it.
    used = Fraction(plan.noise.epsilon) + Fraction(plan.selection.epsilon)
    assert plan.noise.epsilon == pytest.approx(0.5, rel=1e-5) and used <= 1
    assert plan.selection.delta == pytest.approx(1e-6)
    plan.verify_cost()


def test_a_released_unit_count_keeps_the_threshold():
    plan = plan_of("SELECT specialty, COUNT(DISTINCT pid) FROM visits GROUP BY specialty")
    assert plan.selection.method == "laplace_threshold"


def test_gaussian_noise_keeps_the_gaussian_threshold():
    sql = ("SELECT specialty, COUNT(*), SUM(cost), AVG(cost) FROM visits GROUP BY specialty")
    plan = plan_of(sql, groups=4, delta=1e-5)
    assert plan.noise.kind == "gaussian" and plan.selection.method == "gaussian_threshold"


QUERIES = [SUM_BY_KEY, "SELECT specialty, COUNT(*) FROM visits GROUP BY specialty",
           "SELECT specialty, AVG(cost), SUM(cost) FROM visits GROUP BY specialty"]


@pytest.mark.parametrize("sql", QUERIES)
@pytest.mark.parametrize("groups", [1, 2, 3, 5, 10])
@pytest.mark.parametrize("delta", [1e-6, 1e-9])
def test_the_choice_never_adds_noise_and_never_releases_fewer_groups(monkeypatch, sql, groups,
                                                                     delta):
    plan = plan_of(sql, groups=groups, delta=delta)
    before = threshold_plan(sql, monkeypatch, groups=groups, delta=delta)
    # A threshold on the released count of rows may need more people with one row each
    # (up to the allowance), never more noise (tests/test_count_threshold.py).
    allowance = sensitivity.COUNT_THRESHOLD_ALLOWANCE if plan.selection.statistic else 1
    assert n50(plan) <= allowance * n50(before)
    for agg in plan.aggregates:
        for name in agg.stats:
            assert plan.noise_for(name).std <= before.noise_for(name).std * (1 + 1e-9)
    assert plan.noise.gaussian_std == before.noise.gaussian_std
    plan.verify_cost()


def test_verify_cost_refuses_a_split_that_overspends():
    plan = plan_of(SUM_BY_KEY)
    greedy = replace(plan, selection=replace(plan.selection, epsilon=0.6))
    with pytest.raises(dpsql.InternalError, match="differs"):
        greedy.verify_cost()


def test_end_to_end_the_geometric_releases_noisy_sums_only():
    con = dpsql.connect()
    con.register("visits", datasets.visits(20_000), privacy_unit="patient_id",
                 bounds={"cost": (0, 2000)})
    sql = "SELECT specialty, SUM(cost) AS total FROM visits GROUP BY specialty"
    explained = con.explain(sql, epsilon=1.0, delta=1e-6).to_dict()
    assert explained["partition_selection"]["method"] == "truncated_geometric"
    result = con.sql(sql, epsilon=1.0, delta=1e-6)
    table = result.arrow()
    assert table.column_names == ["specialty", "total"]
    assert 0 < table.num_rows <= 50
    assert con.budget.spent.epsilon == pytest.approx(1.0)
    assert con.budget.spent.delta == pytest.approx(1e-6)


@pytest.mark.parametrize(("sql", "method"), [
    ("SELECT specialty, SUM(cost) AS total FROM visits GROUP BY specialty",
     "truncated_geometric: kept at random by its exact count of people"),
    ("SELECT specialty, COUNT(DISTINCT patient_id) AS n FROM visits GROUP BY specialty",
     "laplace_threshold: kept if the noisy count of people >= "),
])
def test_explain_text_gives_the_release_curve_of_private_keys(sql, method):
    """The text says how a group is chosen and P(release | n people) at each listed n, as
    the selection's own probability functions give it (no data read)."""
    con = dpsql.connect()
    con.register("visits", datasets.visits(2_000), privacy_unit="patient_id",
                 bounds={"cost": (0, 2000)})
    explained = con.explain(sql, epsilon=1.0, delta=1e-6)
    text, selection = str(explained), explained.to_dict()["partition_selection"]
    assert f"groups: private keys, {method}" in text
    curve = text.splitlines()[-1]
    assert curve.startswith("  P(group released | n people): n=1 <1%")
    for n, p in selection["release_probability"].items():
        shown = "<1%" if 0 < p < 0.005 else ">99%" if 0.995 <= p < 1 else f"{p:.0%}"
        assert f"n={n} {shown}" in curve
    assert "100%" in curve and con.budget.spent.epsilon == 0


def rows_plan(sql: str, rows: int, **options):
    """bench_utility's limits: at most r rows per person, in at most r groups."""
    cat = Catalog()
    cat.add(TableInfo.private("visits", columns=COLUMNS, privacy_unit="pid",
                              bounds={"cost": (0, 1000)}, max_groups_per_unit=rows,
                              max_rows_per_group=rows, max_rows_per_unit=rows))
    return analyze(sql, cat, epsilon=1.0, delta=1e-6, **options)


@pytest.mark.parametrize(("sql", "rows", "method", "people", "before"), [
    (SUM_BY_KEY, 1, "truncated_geometric", 26, 26),
    (SUM_BY_KEY, 3, "truncated_geometric", 76, 76),
    (SUM_BY_KEY, 10, "gaussian_selection", 143, 250),
    ("SELECT specialty FROM visits GROUP BY specialty", 1, "truncated_geometric", 14, 14),
    ("SELECT specialty FROM visits GROUP BY specialty", 3, "truncated_geometric", 40, 40),
    ("SELECT specialty FROM visits GROUP BY specialty", 10, "gaussian_selection", 76, 132),
])
def test_gaussian_thresholding_when_people_touch_many_groups(sql, rows, method, people,
                                                              before):
    """Issue 40: n₅₀ (people for a 50 % chance, as explain() shows it) at r rows per person;
    ``before`` is the truncated geometric's, the choice until then. The same at r = 1 and 3,
    Gaussian thresholding (L2 = √r) far fewer at r = 10."""
    plan = rows_plan(sql, rows)
    assert plan.selection.method == method and n50(plan) == people <= before
    selection = plan.selection
    geometric = units_for_release(lambda n: float(truncated_geometric_probability(
        n, selection.epsilon, selection.delta, selection.max_groups_per_unit)))
    assert geometric == before
    if method == "gaussian_selection":
        assert selection.sigma > 0 and 0 < selection.noise_delta < selection.delta
        # the count of people is selection's alone: not a noised statistic of the query
        assert plan.noise is None or [plan.stat(s.name).kind
                                      for s in plan.sensitivities] == ["sum"]
    plan.verify_cost()


def test_gaussian_thresholding_end_to_end_and_in_explain():
    """The keys released and the curve explain() prints come from the same selection."""
    con = dpsql.connect()
    con.register("visits", datasets.visits(20_000), privacy_unit="patient_id",
                 bounds={"cost": (0, 2000)},
                 max_groups_per_unit=10, max_rows_per_group=10, max_rows_per_unit=10)
    sql = "SELECT specialty, SUM(cost) AS n FROM visits GROUP BY specialty"
    explained = con.explain(sql, epsilon=1.0, delta=1e-6)
    selection = explained.to_dict()["partition_selection"]
    assert selection["method"] == "gaussian_selection"
    assert selection["sigma"] == pytest.approx(26.44, abs=0.01)
    assert selection["release_probability"]["200"] > 0.98
    assert "gaussian_selection: kept if the count of people plus its own Gaussian noise" in str(
        explained)
    table = con.sql(sql, epsilon=1.0, delta=1e-6).arrow()
    assert table.column_names == ["specialty", "n"] and 0 < table.num_rows <= 50
    assert con.budget.spent.epsilon == pytest.approx(1.0)
    assert con.budget.spent.delta == pytest.approx(1e-6)
