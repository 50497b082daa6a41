"""Partition selection by a threshold on the query's own noisy count of rows (issue 40).

A query that releases COUNT(*) (or COUNT(x)) over private keys already pays for that count's
noise. A group holding only one person's rows has a count of at most c (their rows in one
group), so keeping a group iff its released count ≥ τ, with P(c + noise ≥ τ) ≤ δ' for each
of the person's g groups, spends only δ; the unit count is then not noised and every
statistic gets the whole ε (docs/mechanisms.md §6, "A threshold on the released count").
The statistical audit with its control is tests/privacy/test_audit_count_threshold.py.
"""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest

import dpsql
from dpsql import datasets
from dpsql.analysis import analyze, sensitivity
from dpsql.catalog import Catalog, TableInfo
from dpsql.mechanisms.selection import split_delta, units_for_release

COLUMNS = {"pid": "BIGINT", "specialty": "VARCHAR", "cost": "DOUBLE"}
COUNT_BY_KEY = "SELECT specialty, COUNT(*) AS n FROM visits GROUP BY specialty"


def plan_of(sql: str, *, groups: int = 1, rows: int = 1, total: int | None = None,
            epsilon: float = 1.0, delta: float = 1e-6, public: bool = False):
    cat = Catalog()
    cat.add(TableInfo.private(
        "visits", columns=COLUMNS, privacy_unit="pid", bounds={"cost": (0, 1000)},
        max_groups_per_unit=groups, max_rows_per_group=rows, max_rows_per_unit=total,
        public_keys={"specialty": ["a", "b"]} if public else None))
    return analyze(sql, cat, epsilon=epsilon, delta=delta)


def n50(plan) -> int:
    selection, noise = plan.selection, plan.selection_noise()
    return units_for_release(lambda n: float(selection.chance(np.array([n]), noise)[0]))


CONFIGS = [(g, c, r, eps, delta) for g, c, r in [(1, 1, None), (3, 3, 3), (10, 10, 10),
                                                 (1, 4, None), (2, 5, 6)]
           for eps in (0.1, 1.0, 5.0) for delta in (1e-6, 1e-9)]


@pytest.mark.parametrize(("groups", "rows", "total", "epsilon", "delta"), CONFIGS)
def test_a_group_of_one_persons_rows_passes_at_most_delta_prime_of_the_time(
        groups, rows, total, epsilon, delta, monkeypatch):
    """Exact: with the count's own noise N (in the answer's units, its grid included),
    P(c + N ≥ τ) ≤ δ' = 1 − (1 − δ)^{1/g}, and τ is the least grid point that holds
    (one step lower breaks it). The allowance is lifted so that every configuration is
    checked, chosen or not."""
    monkeypatch.setattr(sensitivity, "COUNT_THRESHOLD_ALLOWANCE", math.inf)
    plan = plan_of(COUNT_BY_KEY, groups=groups, rows=rows, total=total, epsilon=epsilon,
                   delta=delta)
    selection = plan.selection
    assert selection.statistic == plan.aggregates[0].stats[0] and not selection.separate
    noise = plan.selection_noise()
    most = plan.sensitivity(selection.statistic).bound * plan.stat(selection.statistic).quantum
    assert most == rows  # the c rows one person adds to one group, in the answer's units
    allowed = split_delta(selection.delta, groups)
    assert noise.tail(selection.threshold - most) <= allowed
    assert noise.tail(selection.threshold - noise.granularity - most) > allowed
    assert selection.delta == pytest.approx(delta) and selection.delta <= delta
    plan.verify_cost()


@pytest.mark.parametrize(("groups", "rows", "total", "people"), [
    (1, 1, None, 15), (3, 3, 3, 46), (10, 10, 10, 165)])
def test_the_released_count_is_as_noisy_as_with_public_keys(groups, rows, total, people):
    """bench_utility's r = 1, 3, 10: the count keeps all of ε (its noise is the noise it has
    when the keys are public) and a group of n people with one row each is released with
    chance ½ from ``people`` on (the separate selections paid half of ε for 26, 76, 143)."""
    plan = plan_of(COUNT_BY_KEY, groups=groups, rows=rows, total=total)
    public = plan_of(COUNT_BY_KEY, groups=groups, rows=rows, total=total, public=True)
    name = plan.aggregates[0].stats[0]
    assert plan.selection.method == "laplace_threshold" and plan.selection.statistic == name
    assert plan.noise_for(name) == public.noise_for(name)
    assert [plan.stat(s.name).kind for s in plan.sensitivities] == ["rows"]
    assert n50(plan) == people
    assert plan.selection.epsilon == 0 and plan.cost.epsilon == 1.0


def test_a_released_count_of_people_keeps_its_own_threshold():
    plan = plan_of("SELECT specialty, COUNT(DISTINCT pid), COUNT(*) FROM visits "
                   "GROUP BY specialty")
    assert plan.selection.method == "laplace_threshold" and plan.selection.statistic is None


def test_a_floor_of_people_keeps_a_selection_that_counts_people():
    plan = plan_of("SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (min_privacy_units_per_group = 5)"
                   " specialty, COUNT(*) FROM visits GROUP BY specialty")
    assert plan.selection.statistic is None and plan.selection.min_units == 5


def test_past_the_allowance_the_separate_selection_stays():
    """Three statistics at 3 groups of 4 rows: thresholding AVG's count of rows would need
    more than twice the people (with one row each) of the truncated geometric."""
    plan = plan_of("SELECT specialty, AVG(cost) FROM visits GROUP BY specialty",
                   groups=3, rows=4)
    assert plan.selection.method == "truncated_geometric"


def test_gaussian_noise_thresholds_the_count_with_its_gaussian_tail():
    plan = plan_of("SELECT specialty, COUNT(*), SUM(cost), AVG(cost) FROM visits "
                   "GROUP BY specialty", groups=4, delta=1e-5)
    selection = plan.selection
    assert plan.noise.kind == "gaussian" and selection.method == "gaussian_threshold"
    assert selection.statistic is not None and selection.delta == pytest.approx(5e-6)
    noise = plan.selection_noise()
    assert noise.kind == "gaussian"
    assert noise.tail(selection.threshold - 1) <= split_delta(selection.delta, 4)
    plan.verify_cost()


def test_released_counts_are_the_thresholded_values_and_explain_says_so():
    """End to end: every released count reached τ (the value compared is the value
    released), the charge is the query's ε and δ, and explain names the count."""
    con = dpsql.connect(budget=dpsql.Budget(epsilon=10, delta=1e-4), cache=False)
    con.register("visits", datasets.visits(20_000), privacy_unit="patient_id",
                 max_groups_per_unit=10, max_rows_per_group=10, max_rows_per_unit=10)
    explained = con.explain(COUNT_BY_KEY, epsilon=1.0, delta=1e-6)
    selection = explained.to_dict()["partition_selection"]
    assert selection["statistic"] == "COUNT(*)" and selection["epsilon"] == 0
    text = str(explained)
    assert f"laplace_threshold: kept if its released COUNT(*) >= {selection['threshold']:g}" \
        in text
    assert "P(group released | n people, one row each): n=1 <1%" in text
    for seed in range(5):
        counts = con.sql(COUNT_BY_KEY, epsilon=1.0, delta=1e-6, seed=seed).arrow().column("n")
        assert 0 < len(counts) <= 50
        assert min(counts.to_pylist()) >= math.floor(selection["threshold"])
    assert con.budget.spent.epsilon == pytest.approx(5.0)
    assert con.budget.spent.delta == pytest.approx(5e-6)


def test_a_rho_budget_charges_the_threshold_its_delta_alone():
    """The threshold is an (0, δ) step: under a ρ budget it adds no ρ, in memory and in the
    ledger alike (it used to be refused as a Laplace step of ε = 0)."""
    table = pa.table({"pid": list(range(300)), "k": [f"g{i % 3}" for i in range(300)]})
    con = dpsql.connect(budget=dpsql.Budget(rho=5.0, delta=1e-4))
    con.register("t", table, privacy_unit="pid")
    con.sql("SELECT k, COUNT(*) FROM t GROUP BY k", epsilon=1.0, delta=1e-6).fetchall()
    assert con.budget.rho_spent == pytest.approx(0.5)
