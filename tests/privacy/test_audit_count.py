"""Audits of GROUP BY COUNT with private keys, each with a negative control.

The target unit contributes maximally (more rows than the declared limit), so
that a rewrite which trusted the declaration instead of enforcing it would
leak; the negative controls reproduce exactly such bugs and must be flagged.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from sqlglot import exp

import dpsql
import dpsql.rewrite.first_group_of_rows as first_group_module
import dpsql.rewrite.unit_level as unit_level_module
from dpsql.accounting import Accountant
from tests.privacy.audit import audit

pytestmark = pytest.mark.slow

EPSILON = 1.0
TARGET = 10_000
TRIALS = 1500
UNLIMITED = dpsql.Budget(epsilon=1e9, delta=0.9)


def table(with_target: bool, target_key: str) -> pa.Table:
    """200 one-row units in group 'shared' (+ 50 in 'other'); the target has 30 rows."""
    units = list(range(200)) + list(range(200, 250))
    keys = ["shared"] * 200 + ["other"] * 50
    if with_target:
        units += [TARGET] * 30
        keys += [target_key] * 30
    return pa.table({"pid": units, "k": keys})


def connection(data: pa.Table, rows_per_group: int = 3) -> dpsql.Connection:
    con = dpsql.connect(budget=UNLIMITED)
    con.register("t", data, privacy_unit="pid", max_groups_per_unit=1,
                 max_rows_per_group=rows_per_group)
    return con


def shared_count_event(con: dpsql.Connection, truth: dict[str, int], delta: float):
    """E = both released cells of group 'shared' are at least their values on D."""

    def run(seed: int) -> bool:
        con.budget = Accountant(UNLIMITED)  # thousands of runs: spending is not under test
        rows = con.sql("SELECT k, COUNT(*) AS n, COUNT(DISTINCT pid) AS u FROM t GROUP BY k",
                       epsilon=EPSILON, delta=delta, seed=seed).fetchall()
        shared = next((r for r in rows if r[0] == "shared"), None)
        return shared is not None and shared[1] >= truth["n"] and shared[2] >= truth["u"]

    return run


def count_audit(trials: int, rows_per_group: int = 3):
    delta = 1e-6
    # On D, after bounding the target to its rows limit.
    truth = {"n": 200 + rows_per_group, "u": 201}
    d = connection(table(True, "shared"), rows_per_group)
    neighbour = connection(table(False, "shared"), rows_per_group)
    return audit(shared_count_event(d, truth, delta), shared_count_event(neighbour, truth, delta),
                 trials=trials, delta=delta)


def test_group_by_count_with_private_keys_keeps_its_epsilon():
    result = count_audit(TRIALS)
    print(result)
    assert result.epsilon_lower <= EPSILON, result
    assert result.hits_neighbour > 0  # the event is not degenerate


def test_negative_control_unenforced_row_limit_is_flagged(monkeypatch):
    """A rewrite that trusts max_rows_per_group instead of enforcing it must be caught.
    (The partials' bounds are raised with it: packed into a BIGINT by bounds of 3 rows, a
    count of 30 would come out modulo their radix, within them again.)"""
    enforce, bound = unit_level_module.pair_partial, unit_level_module.partial_bound
    monkeypatch.setattr(unit_level_module, "pair_partial",
                        lambda spec, c, values: enforce(spec, 10**6, values))
    monkeypatch.setattr(unit_level_module, "partial_bound", lambda spec, c: bound(spec, 10**6))
    result = count_audit(TRIALS // 3)
    print(result)
    assert result.epsilon_lower > EPSILON, result


def test_group_by_count_at_the_default_limits_keeps_its_epsilon():
    """One group and one row per unit, dpsql's defaults: the counts come from one aggregate
    per unit over its rows (strategy ``first_group_of_rows``), not from its pairs."""
    con = connection(table(True, "shared"), rows_per_group=1)
    plan = con.explain("SELECT k, COUNT(*), COUNT(DISTINCT pid) FROM t GROUP BY k",
                       epsilon=EPSILON, delta=1e-6).data["rewritten_sql"]
    assert "MIN(__dp_first) %" in plan and "__dp_pairs" not in plan
    result = count_audit(TRIALS, rows_per_group=1)
    print(result)
    assert result.epsilon_lower <= EPSILON, result
    assert result.hits_neighbour > 0


def test_negative_control_unclamped_count_of_the_first_group_is_flagged(monkeypatch):
    """The same plan counting every row of the unit instead of its one clamped row must be
    caught: the audit has power against this plan."""
    monkeypatch.setattr(first_group_module, "in_quanta", lambda count, spec: exp.Count(
        this=exp.Star()))
    result = count_audit(TRIALS // 3, rows_per_group=1)
    print(result)
    assert result.epsilon_lower > EPSILON, result


SELECTIONS = {
    # COUNT(*) alone, Laplace, with a floor of one person (so that the selection counts
    # people, not the released rows): the truncated geometric on the exact unit count.
    "truncated_geometric": "SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS "
                           "(min_privacy_units_per_group = 1) k, COUNT(*) FROM t GROUP BY k",
    # The released unit count is thresholded (its noise is reused; selection costs only δ).
    "laplace_threshold": "SELECT k, COUNT(*), COUNT(DISTINCT pid) FROM t GROUP BY k",
}


def selection_audit(trials: int, method: str):
    """E = the target's exclusive group 'solo' is released; it never exists on D'."""
    delta = 0.02
    sql = SELECTIONS[method]
    d = connection(table(True, "solo"))
    neighbour = connection(table(False, "solo"))
    assert d.explain(sql, epsilon=EPSILON, delta=delta).to_dict()["partition_selection"][
        "method"] == method

    def event(con):
        def run(seed: int) -> bool:
            con.budget = Accountant(UNLIMITED)
            rows = con.sql(sql, epsilon=EPSILON, delta=delta, seed=seed).fetchall()
            return any(r[0] == "solo" for r in rows)
        return run

    return audit(event(d), event(neighbour), trials=trials, delta=delta)


@pytest.mark.parametrize("method", SELECTIONS)
def test_partition_selection_releases_a_one_unit_group_at_most_delta_often(method):
    result = selection_audit(TRIALS, method)
    print(result)
    assert result.hits_neighbour == 0
    assert result.epsilon_lower <= EPSILON, result


LEAKY = {
    "truncated_geometric": ("dpsql.plan.truncated_geometric_probability",
                            lambda counts, *a: np.ones(len(counts))),
    "laplace_threshold": ("dpsql.analysis.sensitivity.selection_threshold",
                          lambda *a, **k: 1.0),
}


@pytest.mark.parametrize("method", SELECTIONS)
def test_negative_control_selection_that_releases_too_much_is_flagged(monkeypatch, method):
    """Each selection with a bug that keeps small groups (a threshold of 1; a geometric that
    keeps every group) must be caught: the audit has power against the method in use."""
    monkeypatch.setattr(*LEAKY[method])
    result = selection_audit(TRIALS // 4, method)
    print(result)
    assert result.epsilon_lower > EPSILON, result
