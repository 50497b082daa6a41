"""Audit of ``max_rows_per_unit="auto"``: the whole path on neighbouring databases.

A query on such a table is two releases: a histogram of people by their number of rows
(a quarter of ε, half of δ; its bins released by partition selection), from which the
limit is chosen for the count (``suggest.limit_for_error``: among the released edges), then
the query itself with the rest, its noise calibrated to that limit.

D': 40 one-row people; D adds a target with 64 rows. ``SELECT COUNT(*)`` at ε = 1, δ = 10⁻²:
the 40-person bin is released almost always and the target's bin almost never, so the limit
is 1 on both sides and the target moves the count from 40 to 41 under Laplace noise of
scale 1/0.75. Events: E, the answer exceeds 40.5 (honest log-ratio about 0.5 ≤ 1); F, the
answer is more than 20 from 40 (honest: both about 10⁻¹¹).

Negative control: the limit read from the exact data (64 on D, 1 on D'): on D the target
adds 64 rows under noise of scale 85, so F happens most of the time, and on D' never.
About 40 s of CPU.
"""

from __future__ import annotations

import dataclasses
import warnings

import pyarrow as pa
import pytest

import dpsql
import dpsql.owner as owner_module
from tests.privacy.audit import audit

pytestmark = pytest.mark.slow

EPSILON, DELTA = 1.0, 1e-2
NEIGHBOUR = pa.table({"pid": list(range(40))})
WITH_TARGET = pa.table({"pid": list(range(40)) + [99] * 64})


def answer(table: pa.Table, seed: int) -> float:
    con = dpsql.connect(budget=dpsql.Budget(epsilon=10, delta=0.5), seed=seed, cache=False)
    con.register("t", table, privacy_unit="pid", max_rows_per_unit="auto")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpsql.PrivacyWarning)
        ((value,),) = con.sql("SELECT COUNT(*) FROM t", epsilon=EPSILON,
                              delta=DELTA).fetchall()
    con.close()
    return value


EVENTS = {"E": lambda v: v > 40.5, "F": lambda v: abs(v - 40) > 20}


@pytest.mark.parametrize("event", list(EVENTS))
def test_an_auto_row_limit_keeps_the_promise(event):
    happens = EVENTS[event]
    result = audit(lambda s: happens(answer(WITH_TARGET, s)),
                   lambda s: happens(answer(NEIGHBOUR, s)), trials=100, delta=DELTA)
    assert result.epsilon_lower <= EPSILON, result


def test_a_limit_read_from_the_data_is_caught(monkeypatch):
    """Negative control: the largest exact contribution as the limit."""
    def exact(asker, table, *, epsilon, delta, **_):
        con = getattr(asker, "con", asker)  # estimate_first hands a tally of the costs
        info = con.catalog.get(table)
        rows = con.backend.run_sql(f"SELECT MAX(n) FROM (SELECT COUNT(*) AS n FROM {table} "
                                    "GROUP BY pid)").column(0)[0].as_py()
        con.catalog.add(dataclasses.replace(info, max_rows_per_unit=rows, auto_limits=()))
        return rows

    monkeypatch.setattr(owner_module, "estimate_limits", exact)
    result = audit(lambda s: EVENTS["F"](answer(WITH_TARGET, s)),
                   lambda s: EVENTS["F"](answer(NEIGHBOUR, s)), trials=60, delta=DELTA)
    assert result.epsilon_lower > EPSILON, result
