"""Audit of COUNT(DISTINCT s) for a non-unit column (Laplace noise), with a negative control.

D': 200 one-row units, each with its own value of s: the distinct count is 200. D adds a
target unit with 30 rows of 30 new values (plus a NULL and a repeat of another unit's value)
in the one group; max_rows_per_group = c = 3, so the rewrite keeps 3 of the target's values
and the count is 203 on D. The statistic's bound is c = 3 (explain: L1 = 3), so the discrete
Laplace noise has t = 3/ε and a shift by the whole bound has likelihood ratio exactly e^ε for

- E: "the released count is ≥ 203" (likely on D) and F: "it is ≤ 200" (likely on D').

The negative control is a rewrite that keeps every distinct value of a unit (no per-unit
limit): the target then adds 30 values, which F catches.

Measured with these seeds (ε = 1 claimed; lower bounds at 99 % confidence, larger of E and F):
honest 300 trials per side → ε_lb = 0.43; control 80 trials per side → ε_lb = 1.55 (F never
happens on D). About 22 s of CPU in all (760 queries).
"""

from __future__ import annotations

from dataclasses import replace

import pyarrow as pa
import pytest

import dpsql
import dpsql.rewrite.distinct as distinct_module
from tests.privacy.events import EPSILON, TARGET, run_audit

pytestmark = pytest.mark.slow

TRIALS = 300
CONTROL_TRIALS = 80
C = 3
QUERY = "SELECT COUNT(DISTINCT s) AS d FROM t"
EVENTS = {
    "E: distinct count >= value on D": lambda rows: rows[0][0] >= 200 + C,
    "F: distinct count <= value on D'": lambda rows: rows[0][0] <= 200,
}


def distinct_connection(with_target: bool) -> dpsql.Connection:
    units, values = list(range(200)), [f"u{i}" for i in range(200)]
    if with_target:
        units += [TARGET] * 32
        values += [f"t{i}" for i in range(30)] + [None, "u0"]
    con = dpsql.connect(budget=dpsql.Budget(epsilon=1e9, delta=0.9))
    con.register("t", pa.table({"pid": units, "s": values}), privacy_unit="pid",
                 max_rows_per_group=C)
    return con


def test_count_distinct_of_a_value_keeps_its_epsilon():
    plan = distinct_connection(True).explain(QUERY, epsilon=EPSILON).to_dict()
    assert plan["columns"][0]["l1_sensitivity"] == C
    epsilon_lower = run_audit(distinct_connection, QUERY, EVENTS, TRIALS)
    assert epsilon_lower <= EPSILON


def test_negative_control_distinct_values_without_a_per_unit_limit_is_flagged(monkeypatch):
    """A rewrite that lets a unit add all its distinct values (c ignored) must be caught."""
    honest = distinct_module.distinct_counts

    def unlimited(plan, spec, kept, filters):
        loose = replace(plan, contribution=replace(plan.contribution, max_rows_per_group=10**6))
        return honest(loose, spec, kept, filters)

    monkeypatch.setattr(distinct_module, "distinct_counts", unlimited)
    epsilon_lower = run_audit(distinct_connection, QUERY, EVENTS, CONTROL_TRIALS)
    assert epsilon_lower > EPSILON
