"""Audit of a rows limit and bounds estimated together (``max_rows_per_unit="auto"`` with
``bounds="auto"``): the whole path on neighbouring databases.

Such a query is four releases: a histogram of people by their number of rows and one of
the column's magnitudes drawn with one row per person (a twelfth of ε and a sixth of δ
each, their bins released by partition selection), people by (rows bin, value bin) over the
released bins (a twelfth of ε, public keys: no δ), then the query with the rest, its limit
and clamp chosen together from the released bins (``suggest.limit_for_error``, a
post-processing of the first three). By sequential composition the whole is (ε, δ)-DP.

D': 40 one-row people with income 1.5; D adds a target with 64 rows of income 10⁹.
``SELECT SUM(income)`` at ε = 1, δ = 10⁻²: the 40-person bins are released almost always
and the target's (one person in each histogram) almost never, so both sides choose limit
1 and a clamp a few doublings above 2 (the extrapolated tail), and the target moves the
sum by at most that clamp under Laplace noise of scale clamp/0.75. Events: E, the answer
exceeds 61; F, the answer is more than 30 from 60.

Negative control: the limit and the clamp read from the exact data (64 rows and 2³⁰ on D,
1 and 2 on D'): on D the target adds 64·10⁹ under noise of scale 2·10¹¹, so F happens
almost always, and on D' almost never. About 3 min of CPU.
"""

from __future__ import annotations

import warnings

import pyarrow as pa
import pytest

import dpsql
import dpsql.autobounds as autobounds
import dpsql.suggest as suggest
from tests.privacy.audit import audit

pytestmark = pytest.mark.slow

EPSILON, DELTA = 1.0, 1e-2
NEIGHBOUR = pa.table({"pid": list(range(40)), "income": [1.5] * 40})
WITH_TARGET = pa.table({"pid": list(range(40)) + [99] * 64,
                        "income": [1.5] * 40 + [1e9] * 64})


def answer(table: pa.Table, seed: int) -> float:
    con = dpsql.connect(budget=dpsql.Budget(epsilon=10, delta=0.5), seed=seed, cache=False)
    con.register("t", table, privacy_unit="pid", max_rows_per_unit="auto",
                 bounds={"income": "auto"})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpsql.PrivacyWarning)
        ((value,),) = con.sql("SELECT SUM(income) FROM t", epsilon=EPSILON,
                              delta=DELTA).fetchall()
    con.close()
    return value


@pytest.fixture(autouse=True)
def fewer_bins(monkeypatch):
    monkeypatch.setattr(autobounds, "POWERS", range(0, 32))


EVENTS = {"E": lambda v: v > 61, "F": lambda v: abs(v - 60) > 30}


@pytest.mark.parametrize("event", list(EVENTS))
def test_a_limit_and_bounds_estimated_together_keep_the_promise(event):
    happens = EVENTS[event]
    result = audit(lambda s: happens(answer(WITH_TARGET, s)),
                   lambda s: happens(answer(NEIGHBOUR, s)), trials=100, delta=DELTA)
    assert result.epsilon_lower <= EPSILON, result


def test_a_limit_and_bounds_read_from_the_data_are_caught(monkeypatch):
    """Negative control: the largest exact contribution and value, not the released bins."""
    def exact(table: pa.Table):
        rows = max(table.column("pid").value_counts().field("counts").to_pylist())
        top = max(table.column("income").to_pylist())
        return lambda *_, **__: (rows, {"income": (0.0, 2.0 ** int(top).bit_length())}, {})

    def run(table: pa.Table, seed: int) -> bool:
        monkeypatch.setattr(suggest, "limit_for_error", exact(table))
        return EVENTS["F"](answer(table, seed))

    result = audit(lambda s: run(WITH_TARGET, s), lambda s: run(NEIGHBOUR, s), trials=60,
                   delta=DELTA)
    assert result.epsilon_lower > 2 * EPSILON, result
