"""Audit of ``bounds="auto"`` (``dpsql.autobounds``): the whole path on neighbouring databases.

A query on a column declared ``"auto"`` is two releases: a private histogram of the values'
magnitudes with a quarter of ε and half of δ (partition selection keeps only bins with
enough people), then the query itself, clamped to bounds read off the released bins (a
post-processing of the first release) with the rest. By sequential composition the whole
is (ε, δ)-DP; this audit checks that the implementation keeps that promise.

D': 40 one-row units with income 1.5 (bin [1, 2)); D adds a target unit with income 10⁹ (bin
[2²⁹, 2³⁰)). ``SELECT SUM(income)`` at ε = 1, δ = 10⁻²: the 40-person bin is released almost
always (threshold ≈ 19 at ε = 0.25, δ = 5·10⁻³) and the target's bin almost never. The
bounds chosen for the answer from those bins (``bounds_for_error``: the tail it extrapolates
beyond [1, 2) is worth a few doublings when noise is this cheap) are [0, 8] on both sides;
the target, clamped to 8, moves the sum from 60 to 68 under Laplace noise of scale 8/0.75.
Events:

- E: the answer exceeds 61 (honest: ln ratio of P_D to P_D' at most ε by construction);
- F: the answer is more than 30 from 60 (honest: both a few percent).

The same audit runs the BigQuery DP syntax with no bounds declared (E only), which leaves
the bounds to the same estimate.

Negative control: bounds taken from the exact data instead of the released bins ([0, 2³⁰]
on D, [0, 2] on D') — the bug this feature must not have. Then F happens on D almost always
(noise of scale 1.4·10⁹) and on D' almost never.

With 100 trials per side the honest audits stay below ε = 1 (E's true log-ratio is 0.65);
the control's F, all 60 trials on D against none on D', gives ε_lb ≈ 2.4 at 99 % confidence,
the most 60 trials can show. The histogram runs over 2⁰ … 2³¹ here (``POWERS`` narrowed, so
that each trial compiles faster); the privacy argument does not depend on the number of bins.
About 2.5 min of CPU.
"""

from __future__ import annotations

import warnings

import pyarrow as pa
import pytest

import dpsql
import dpsql.autobounds as autobounds
from tests.privacy.audit import audit

pytestmark = pytest.mark.slow

EPSILON, DELTA = 1.0, 1e-2
NEIGHBOUR = pa.table({"pid": list(range(40)), "income": [1.5] * 40})
WITH_TARGET = pa.table({"pid": list(range(41)), "income": [1.5] * 40 + [1e9]})


def answer(table: pa.Table, seed: int, *, syntax: str = "auto") -> float:
    """SUM(income) with bounds="auto", or (``syntax="bigquery"``) with no bounds declared
    in the BigQuery DP syntax, which leaves them to dpsql the same way."""
    con = dpsql.connect(budget=dpsql.Budget(epsilon=10, delta=0.5), seed=seed, cache=False)
    auto = {"bounds": {"income": "auto"}} if syntax == "auto" else {}
    con.register("t", table, privacy_unit="pid", **auto)
    sql = "SELECT SUM(income) FROM t" if syntax == "auto" else (
        f"SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = {EPSILON}, delta = {DELTA}) "
        "SUM(income) FROM t")
    options = {"epsilon": EPSILON, "delta": DELTA} if syntax == "auto" else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpsql.PrivacyWarning)
        ((value,),) = con.sql(sql, **options).fetchall()
    con.close()
    return value


@pytest.fixture(autouse=True)
def fewer_bins(monkeypatch):
    monkeypatch.setattr(autobounds, "POWERS", range(0, 32))


EVENTS = {"E": lambda v: v > 61, "F": lambda v: abs(v - 60) > 30}


@pytest.mark.parametrize(("event", "syntax"), [("E", "auto"), ("F", "auto"),
                                               ("E", "bigquery")])
def test_auto_bounds_keep_the_promise(event, syntax):
    happens = EVENTS[event]
    result = audit(lambda s: happens(answer(WITH_TARGET, s, syntax=syntax)),
                   lambda s: happens(answer(NEIGHBOUR, s, syntax=syntax)), trials=100,
                   delta=DELTA)
    assert result.epsilon_lower <= EPSILON, result


def test_bounds_read_from_the_data_are_caught(monkeypatch):
    """Negative control: bounds from the exact data, not from the released bins."""
    def exact(table: pa.Table):
        top = max(table.column("income").to_pylist())
        return lambda rows, **_: (0.0, 2.0 ** (int(top).bit_length()))

    def run(table: pa.Table, seed: int) -> bool:
        monkeypatch.setattr(autobounds, "bounds_for_error", exact(table))
        return EVENTS["F"](answer(table, seed))

    result = audit(lambda s: run(WITH_TARGET, s), lambda s: run(NEIGHBOUR, s), trials=60,
                   delta=DELTA)
    assert result.epsilon_lower > 2 * EPSILON, result  # about 2.4
