"""Audits of SUM, AVG and COUNT(DISTINCT unit) (Laplace noise), each with a negative control.

Every audit runs the real query through ``dpsql.connect(...).sql(..., seed=seed)`` on D and on
D' = D minus one *target* unit whose contribution is maximal and hostile (values far outside the
bounds, more rows than ``max_rows_per_group``, NULL and NaN rows). The target touches a single
group (or exactly ``max_groups_per_unit`` public groups) and the query releases every statistic
it touches, so the privacy loss of the observed cells is the whole ε. Events (``events.py``):

- E: "every released cell the target influences is ≥ its value on D";
- F: its mirror, "every such cell is ≤ its value on D'".

For discrete Laplace with scale t and a shift of one full bound, P(X ≥ 0)/P(X ≥ bound) =
e^{bound/t}, and the shares add up to ε, so both events have likelihood ratio exactly e^ε: the
honest audits are limited only by the Clopper–Pearson slack at this many trials.

Each negative control monkeypatches a realistic bug and must be flagged by the same events: a
rewrite that skips clamping (values and per-group partials), one that does not enforce
``max_rows_per_group``, and a sensitivity pass that forgets how many groups a unit may touch.

Measured with these seeds (ε = 1 claimed; lower bounds at 99 % confidence, larger of E and F):

==========================  ===========  ==============================  ============
audit (trials per side)     honest ε_lb  negative control (trials)       control ε_lb
==========================  ===========  ==============================  ============
SUM, global (600)           0.500        no clamping at all (200)        2.47
AVG + COUNT, global (600)   0.528        row limit not enforced (200)    1.84
SUM + AVG, global (600)     0.528        row limit not enforced (200)    1.84
COUNT(DISTINCT pid) (600)   0.465        L1 ignores the 3 groups (250)   2.00
==========================  ===========  ==============================  ============

About 70 s in all on one core (a query costs 9–13 ms here).
"""

from __future__ import annotations

import math
from dataclasses import replace

import pyarrow as pa
import pytest

import dpsql
import dpsql.analysis.sensitivity as sensitivity_module
import dpsql.rewrite.frame as frame_module
import dpsql.rewrite.unit_level as unit_level_module
import dpsql.rewrite.values as values_module
from tests.privacy.events import (
    EPSILON,
    TARGET,
    UNLIMITED,
    Events,
    run_audit,
)

pytestmark = pytest.mark.slow

TRIALS = 600           # per side, honest audits
CONTROL_TRIALS = 200   # per side, negative controls
MILD_CONTROL_TRIALS = 250
HUGE = 1e6             # the target's values: far outside every bound below
C = 3                  # max_rows_per_group


def hostile_values(rows: int = 30) -> list[float | None]:
    """The target's values: ``rows`` huge values, plus a NULL and a NaN (both ignored)."""
    return [HUGE] * rows + [None, math.nan]


# ---------------------------------------------------------------------------------------------
# SUM with bounds. D': 200 one-row units with x = 2 (sum 400). The target has 30 rows of 1e6
# (plus NULL and NaN): each value is clamped to [-5, 10] and its partial to c·[−5, 10], so it
# adds c·10 = 30, the statistic's bound (c·max(|lo|, |hi|)). SUM is 430 on D, 400 on D'.

SUM_QUERY = "SELECT SUM(x) AS s FROM t"
SUM_EVENTS: Events = {
    "E: SUM >= value on D": lambda rows: rows[0][0] >= 430.0,
    "F: SUM <= value on D'": lambda rows: rows[0][0] <= 400.0,
}


def sum_connection(with_target: bool) -> dpsql.Connection:
    units, xs = list(range(200)), [2.0] * 200
    if with_target:
        target = hostile_values()
        units += [TARGET] * len(target)
        xs += target
    con = dpsql.connect(budget=UNLIMITED)
    con.register("t", pa.table({"pid": units, "x": xs}), privacy_unit="pid",
                 bounds={"x": (-5, 10)}, max_rows_per_group=C)
    return con


def test_sum_with_bounds_keeps_its_epsilon():
    epsilon_lower = run_audit(sum_connection, SUM_QUERY, SUM_EVENTS, TRIALS)
    assert epsilon_lower <= EPSILON


def test_negative_control_sum_without_clamping_is_flagged(monkeypatch):
    """A rewrite that clamps neither values nor per-group partials must be caught."""
    def no_clamp(node, lo, hi):
        return node
    monkeypatch.setattr(values_module, "limit", no_clamp)
    monkeypatch.setattr(frame_module, "limit", no_clamp)
    epsilon_lower = run_audit(sum_connection, SUM_QUERY, SUM_EVENTS, CONTROL_TRIALS)
    assert epsilon_lower > EPSILON


# ---------------------------------------------------------------------------------------------
# AVG (global), released together with COUNT(x): the same statistic as AVG's count (explain:
# 2 statistics per unit), so one unit moves the count by c = 3 and the centred sum Σ(x − 5) by
# c·(hi − lo)/2 = 15, each with half of ε (t = 6 and t = 30). D': 197 units with x = 5 (the
# centre) and 3 with x = 0: count 200, centred sum −15. The target (30 rows of 1e6 → 10, NULL,
# NaN) adds 3 and 15: on D the count is 203 and the centred sum 0, so AVG = 5 exactly.
# The released AVG is 5 + S/max(N, 1) (clamped to [0, 10]), so S = (AVG − 5)·N is recovered
# from the release up to float error (~1e-13), far below the sum's grid (~1.5e-5).


def centred_sum(avg: float, count: float) -> float:
    return (avg - 5.0) * max(count, 1.0)


AVG_QUERY = "SELECT AVG(x) AS a, COUNT(x) AS n FROM t"
AVG_EVENTS: Events = {
    "E: count, centred sum >= values on D":
        lambda rows: rows[0][1] >= 203 and rows[0][0] >= 5.0,
    "F: count, centred sum <= values on D'":
        lambda rows: rows[0][1] <= 200 and centred_sum(*rows[0]) <= -15.0 + 1e-7,
}


def avg_connection(with_target: bool) -> dpsql.Connection:
    units, xs = list(range(200)), [5.0] * 197 + [0.0] * 3
    if with_target:
        target = hostile_values()
        units += [TARGET] * len(target)
        xs += target
    con = dpsql.connect(budget=UNLIMITED)
    con.register("t", pa.table({"pid": units, "x": xs}), privacy_unit="pid",
                 bounds={"x": (0, 10)}, max_rows_per_group=C)
    return con


def test_avg_keeps_its_epsilon():
    epsilon_lower = run_audit(avg_connection, AVG_QUERY, AVG_EVENTS, TRIALS)
    assert epsilon_lower <= EPSILON


def trust_the_row_limit(monkeypatch) -> None:
    """The bug of the controls below: a rewrite that trusts max_rows_per_group (no
    per-group clamp of the partials)."""
    enforce = unit_level_module.pair_partial
    monkeypatch.setattr(unit_level_module, "pair_partial",
                        lambda spec, c, values: enforce(spec, 10**6, values))


def test_negative_control_avg_with_unenforced_row_limit_is_flagged(monkeypatch):
    trust_the_row_limit(monkeypatch)
    epsilon_lower = run_audit(avg_connection, AVG_QUERY, AVG_EVENTS, CONTROL_TRIALS)
    assert epsilon_lower > EPSILON


# ---------------------------------------------------------------------------------------------
# SUM and AVG of the same column: SUM is released from the AVG's two statistics (SUM = 5·N + S,
# docs/mechanisms.md §12), on the same data as the AVG audit. Both statistics are recovered
# from the two released cells: N = SUM / AVG (a whole number: rounded), S = SUM − 5·N. A SUM
# drawn as a third statistic, or computed from values the noise was not calibrated for, would
# show here as a loss above ε.


def count_and_centred_sum(total: float, avg: float) -> tuple[int, float]:
    count = round(total / avg)
    return count, total - 5.0 * count


SUM_AVG_QUERY = "SELECT SUM(x) AS s, AVG(x) AS a FROM t"
SUM_AVG_EVENTS: Events = {
    "E: count, centred sum >= values on D":
        lambda rows: count_and_centred_sum(*rows[0])[0] >= 203 and rows[0][1] >= 5.0,
    "F: count, centred sum <= values on D'":
        lambda rows: (lambda n, s: n <= 200 and s <= -15.0 + 1e-7)(
            *count_and_centred_sum(*rows[0])),
}


def test_sum_beside_avg_keeps_its_epsilon():
    epsilon_lower = run_audit(avg_connection, SUM_AVG_QUERY, SUM_AVG_EVENTS, TRIALS)
    assert epsilon_lower <= EPSILON


def test_negative_control_sum_beside_avg_with_unenforced_row_limit_is_flagged(monkeypatch):
    trust_the_row_limit(monkeypatch)
    epsilon_lower = run_audit(avg_connection, SUM_AVG_QUERY, SUM_AVG_EVENTS, CONTROL_TRIALS)
    assert epsilon_lower > EPSILON


# ---------------------------------------------------------------------------------------------
# COUNT(DISTINCT pid) with public keys a, b, c, d and max_groups_per_unit = 3. D': 50 one-row
# units per key. The target has 10 rows in each of a, b and c (exactly 3 groups), so it adds 1
# to three cells whose noise has t = L1/ε = 3: ε/3 each. a, b, c are 51 on D, 50 on D'.

DISTINCT_QUERY = "SELECT k, COUNT(DISTINCT pid) AS u FROM t GROUP BY k"
KEYS = ["a", "b", "c", "d"]
TOUCHED = ("a", "b", "c")
DISTINCT_EVENTS: Events = {
    "E: units in a, b, c >= values on D":
        lambda rows: all(u >= 51 for k, u in rows if k in TOUCHED),
    "F: units in a, b, c <= values on D'":
        lambda rows: all(u <= 50 for k, u in rows if k in TOUCHED),
}


def distinct_connection(with_target: bool) -> dpsql.Connection:
    units, keys = list(range(200)), KEYS * 50
    if with_target:
        units += [TARGET] * 10 * len(TOUCHED)
        keys += [key for key in TOUCHED for _ in range(10)]
    con = dpsql.connect(budget=UNLIMITED)
    con.register("t", pa.table({"pid": units, "k": keys}), privacy_unit="pid",
                 max_groups_per_unit=len(TOUCHED), max_rows_per_group=C,
                 public_keys={"k": KEYS})
    return con


def test_count_distinct_units_with_public_keys_keeps_its_epsilon():
    epsilon_lower = run_audit(distinct_connection, DISTINCT_QUERY, DISTINCT_EVENTS, TRIALS)
    assert epsilon_lower <= EPSILON


def test_negative_control_sensitivity_forgetting_groups_is_flagged(monkeypatch):
    """A sensitivity pass that bounds one group's change but forgets a unit touches g groups.

    The noise is then calibrated for L1 = 1 instead of 3: the target's three cells cost 3ε. No
    cell moves far (the loss is only multiplied by g), hence a few more trials.
    """
    honest = sensitivity_module.sensitivity_of
    monkeypatch.setattr(sensitivity_module, "sensitivity_of", lambda spec, limits: honest(
        spec, replace(limits, max_groups_per_unit=1)))
    epsilon_lower = run_audit(distinct_connection, DISTINCT_QUERY, DISTINCT_EVENTS,
                              MILD_CONTROL_TRIALS)
    assert epsilon_lower > EPSILON
