"""Audit of a statistic with rows of its own (``StatSpec.rows``, from ``TableInfo.rows_for``):
a column's aggregates keep fewer rows per person than the rest of the query, and their noise
is calibrated to those rows.

D': 40 one-row people with x = 1.5; D adds a target with 8 rows of x = 10. The table keeps
8 rows per person, x in [0, 10], and x keeps 1 row of its own. ``SELECT COUNT(*), SUM(x)``
at ε = 1: each column has half, so SUM(x) gets Laplace noise of scale 10/0.5 = 20 and the
target moves it from 60 to 70. Event: SUM(x) above 110 (honest log-ratio 0.5).

Negative control: the rewrite ignores the column's own rows (keeps the table's 8) while the
noise stays calibrated to 1 row: the target moves the sum by 80 and the event is caught.
About 20 s of CPU.
"""

from __future__ import annotations

import dataclasses
import functools

import pyarrow as pa
import pytest

import dpsql
from dpsql.rewrite import frame, unit_level
from tests.privacy.audit import audit

pytestmark = pytest.mark.slow

EPSILON = 1.0
NEIGHBOUR = pa.table({"pid": list(range(40)), "x": [1.5] * 40})
WITH_TARGET = pa.table({"pid": list(range(40)) + [99] * 8, "x": [1.5] * 40 + [10.0] * 8})


def summed(table: pa.Table, seed: int) -> float:
    con = dpsql.connect(budget=dpsql.Budget(epsilon=10), seed=seed, cache=False)
    con.register("t", table, privacy_unit="pid", max_rows_per_unit=8, bounds={"x": (0, 10)})
    con.catalog.add(dataclasses.replace(con.catalog.get("t"), rows_for={"x": 1}))
    ((_, value),) = con.sql("SELECT COUNT(*), SUM(x) FROM t", epsilon=EPSILON).fetchall()
    con.close()
    return value


def happens(value: float) -> bool:
    return value > 110


def test_a_statistic_with_its_own_rows_keeps_the_promise():
    result = audit(lambda s: happens(summed(WITH_TARGET, s)),
                   lambda s: happens(summed(NEIGHBOUR, s)), trials=100, delta=0.0)
    assert result.epsilon_lower <= EPSILON, result


def test_own_rows_the_rewrite_ignores_are_caught(monkeypatch):
    """Negative control: every statistic keeps the query's rows, the noise its own."""
    def ignoring(function):
        @functools.wraps(function)
        def call(spec, c, *rest):
            return function(dataclasses.replace(spec, rows=None), c, *rest)
        return call

    for module in (frame, unit_level):
        for name in ("pair_partial", "partial_bound"):
            monkeypatch.setattr(module, name, ignoring(getattr(frame, name)))
    result = audit(lambda s: happens(summed(WITH_TARGET, s)),
                   lambda s: happens(summed(NEIGHBOUR, s)), trials=100, delta=0.0)
    assert result.epsilon_lower > EPSILON, result
