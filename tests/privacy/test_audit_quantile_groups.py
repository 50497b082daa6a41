"""Audits of quantiles over groups, each with a negative control: under ``max_rows_per_unit``, in
several public groups (``max_groups_per_unit`` > 1), and with private keys.

Common setting: x has bounds [0, 1024], so each of the 1024 buckets is one unit wide and a
release is a midpoint b + 0.5. Every group of D' holds 1024 one-row units, one per bucket.
Bucket j is drawn with probability ∝ exp(−a·dist(qN, [L_j, R_j])) (``dpsql.mechanisms.
exponential``), here a two-sided geometric with scale 1/a rows around rank qN. The target's rows
are x = 1e6, clamped into the top bucket, so its weight W in a group moves that rank by q·W.
a = ε_q/(2·W_tot) with W_tot the most weight one unit may add over all groups
(``quantile_weight_limits``). Every probability below is exact: ``ExponentialQuantile.
probabilities`` of the group histograms, and binomial sums over groups (draws are independent).

1. ``max_rows_per_unit``: QUANTILE_CONT(x, 0.9) BY 16 public keys, ε = 2, g = c = r = 16, so
   W_tot = min(g·c, r) = 16 rows and a = 1/16. The target has 20 rows in every key, each valued
   c/20 of a row, and the cap scales those by r/T (T = 256 clamped rows): 1 row per key, 16 in
   all. Without the cap (control: ``unit_weights`` that ignores r) it weighs 16 rows per key.
   q = 0.9 rather than the median: weight at the top moves rank 0.9·N by 0.9·W, not W/2, which
   nearly doubles the control's power. E: "at least 6 of the 16 keys release a value ≥ 929";
   F: its complement. Per key, P(≥ 929) = 0.314 on D', 0.333 on D and 0.677 without the cap,
   so P(E) = 0.388 on D' and 0.451 on D (log-ratio 0.15 ≤ ε), while without the cap
   P(F) = 0.0031 against 0.612 on D'.

2. Several public groups: MEDIAN(x) BY 6 public keys, ε = 1, g = 3, c = 2 (W_tot = 6 rows,
   a = 1/12). The target has 100 rows in all 6 keys; the rewrite keeps 3 of its groups (salted
   hash) and values each row at 2/100 of a row: 2 rows per kept key. Control: every value at full
   weight (``per_value_weight`` = one row), 100 rows per kept key. E: "at least 2 of the 6 keys
   release a value ≥ 532"; F: its complement. Per key, P(≥ 532) = 0.094 on D' and in a dropped
   key, 0.103 in a kept key on D, 0.959 in a kept key in the control: P(E) = 0.103 on D', 0.111
   on D (log-ratio 0.07), and without the weight P(F) = 0.0037 against 0.897 on D'.

3. Private keys: MEDIAN(x) BY k, ε = 1, δ = 1e-5, g = 2, c = 1. ε is shared: ε/2 for the noisy
   unit count that selects groups (Laplace, threshold 48), ε/2 for the median (W_tot = 2 rows,
   a = 1/8). D' has group 'a' as above; D adds a target with 100 rows in 'a' and 100 in its own
   group 'solo'. S: "'solo' is released" (impossible on D', at most δ on D); E: "'a' is released
   with a median ≥ 524" and F: "'a' is released with a median < 524". P(E) = 0.112 on D', 0.119
   on D (the target weighs 1 row), 0.9957 when every value has full weight (first control). The
   second control releases groups whose noisy unit count reaches 1 ('solo' about half the time),
   which S must flag.

The honest target moves each group's rank by at most a twelfth of the scale 1/a, so the honest
bounds are far below ε (no affordable event sees so small a shift); the negative controls are
what show that the audits have power. Measured with these seeds (99 % confidence, largest of
the events):

=======================  ===========================  ============================  =========
audit                    honest ε_lb (trials/side)    control ε_lb (trials/side)    claimed ε
=======================  ===========================  ============================  =========
1. rows per unit         0.000 (200)                  no cap: 2.43 (250)            2
2. several groups        0.000 (200)                  full weight: 2.10 (80)        1
3. private keys          0.000 (200)                  full weight: 2.41 (100)       1
                                                      threshold 1: 1.90 (100)
=======================  ===========================  ============================  =========

About 80 s of CPU in all (2,260 queries of 10–45 ms, most of it in DuckDB).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

import pyarrow as pa
import pytest

import dpsql
import dpsql.rewrite.quantiles as quantiles_module
from dpsql.accounting import Accountant
from dpsql.expr.nodes import number
from dpsql.plan import WEIGHT_SCALE
from tests.privacy.events import audit_events, describe, largest

pytestmark = pytest.mark.slow

EPSILON = 1.0          # audits 2 and 3 (audit 1 claims CAP_EPSILON)
TARGET = 10_000
UNLIMITED = dpsql.Budget(epsilon=1e9, delta=0.9)
BUCKETS = 1024
HONEST_TRIALS = 200

Rows = list[tuple]
Events = dict[str, Callable[[Rows], bool]]


def table(keys: list[str], target_rows: int, target_keys: list[str] | None) -> pa.Table:
    """One unit per bucket in every key (x = b + 0.5); the target's rows all at x = 1e6."""
    units = list(range(BUCKETS * len(keys)))
    column = [key for key in keys for _ in range(BUCKETS)]
    xs = [b + 0.5 for _ in keys for b in range(BUCKETS)]
    for key in target_keys or []:
        units += [TARGET] * target_rows
        column += [key] * target_rows
        xs += [1e6] * target_rows
    return pa.table({"pid": units, "k": column, "x": xs})


def released_at_least(rows: Rows, value: float) -> int:
    """How many groups release a quantile ≥ value."""
    return sum(released >= value for _, released in rows)


def run_audit(make_connection: Callable[[bool], dpsql.Connection], query: str, events: Events,
              trials: int, epsilon: float, delta: float = 0.0) -> float:
    d, neighbour = make_connection(True), make_connection(False)

    def runner(con: dpsql.Connection) -> Callable[[int], Rows]:
        def run(seed: int) -> Rows:
            con.budget = Accountant(UNLIMITED)  # hundreds of runs: spending is not under test
            return con.sql(query, epsilon=epsilon, delta=delta, seed=seed).fetchall()
        return run

    results = audit_events(runner(d), runner(neighbour), events, trials=trials, delta=delta)
    print(describe(results))
    return largest(results)


# ---------------------------------------------------------------------------------------------
# 1. QUANTILE_CONT(x, 0.9) by 16 public keys under max_rows_per_unit = 16.

CAP_KEYS = [f"k{i:02d}" for i in range(16)]
CAP_EPSILON = 2.0
CAP_QUERY = "SELECT k, QUANTILE_CONT(x, 0.9) AS q FROM t GROUP BY k"
CAP_CONTROL_TRIALS = 250
CAP_EVENTS: Events = {
    "E: >= 6 keys release >= 929": lambda rows: released_at_least(rows, 929) >= 6,
    "F: <= 5 keys release >= 929": lambda rows: released_at_least(rows, 929) <= 5,
}


def cap_connection(with_target: bool) -> dpsql.Connection:
    con = dpsql.connect(budget=UNLIMITED)
    con.register("t", table(CAP_KEYS, 20, CAP_KEYS if with_target else None), privacy_unit="pid",
                 bounds={"x": (0, BUCKETS)}, max_groups_per_unit=16, max_rows_per_group=16,
                 max_rows_per_unit=16, public_keys={"k": CAP_KEYS})
    return con


def cap_audit(trials: int) -> float:
    plan = cap_connection(True).explain(CAP_QUERY, epsilon=CAP_EPSILON).to_dict()
    (column,) = plan["columns"][1:]
    assert column["mechanism"] == "exponential" and column["l1_sensitivity"] == 16  # W_tot = r
    return run_audit(cap_connection, CAP_QUERY, CAP_EVENTS, trials, CAP_EPSILON)


def test_quantile_under_rows_per_unit_keeps_its_epsilon():
    assert cap_audit(HONEST_TRIALS) <= CAP_EPSILON


def test_negative_control_quantile_weights_without_the_total_cap_are_flagged(monkeypatch):
    """Histogram weights not scaled down to r rows per unit, while W_tot still assumes r."""
    honest = quantiles_module.unit_weights

    def uncapped(plan, spec, kept, filters, in_rows=False):
        loose = replace(plan.contribution, max_rows_per_unit=None)
        return honest(replace(plan, contribution=loose), spec, kept, filters, in_rows)

    monkeypatch.setattr(quantiles_module, "unit_weights", uncapped)
    assert cap_audit(CAP_CONTROL_TRIALS) > CAP_EPSILON


# ---------------------------------------------------------------------------------------------
# 2. MEDIAN(x) by 6 public keys; the target is in all 6, at most g = 3 are kept.

GROUP_KEYS = ["a", "b", "c", "d", "e", "f"]
GROUP_QUERY = "SELECT k, MEDIAN(x) AS m FROM t GROUP BY k"
GROUP_CONTROL_TRIALS = 80
GROUP_EVENTS: Events = {
    "E: >= 2 keys release >= 532": lambda rows: released_at_least(rows, 532) >= 2,
    "F: <= 1 key releases >= 532": lambda rows: released_at_least(rows, 532) <= 1,
}


def full_weight(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bug: every value weighs one row, however many values its unit has in the group."""
    monkeypatch.setattr(quantiles_module, "per_value_weight",
                        lambda c, values: number(WEIGHT_SCALE))


def group_connection(with_target: bool) -> dpsql.Connection:
    con = dpsql.connect(budget=UNLIMITED)
    con.register("t", table(GROUP_KEYS, 100, GROUP_KEYS if with_target else None),
                 privacy_unit="pid", bounds={"x": (0, BUCKETS)}, max_groups_per_unit=3,
                 max_rows_per_group=2, public_keys={"k": GROUP_KEYS})
    return con


def group_audit(trials: int) -> float:
    plan = group_connection(True).explain(GROUP_QUERY, epsilon=EPSILON).to_dict()
    (column,) = plan["columns"][1:]
    assert column["mechanism"] == "exponential" and column["l1_sensitivity"] == 6  # g·c
    return run_audit(group_connection, GROUP_QUERY, GROUP_EVENTS, trials, EPSILON)


def test_quantile_in_several_public_groups_keeps_its_epsilon():
    assert group_audit(HONEST_TRIALS) <= EPSILON


def test_negative_control_quantile_in_several_groups_with_full_weights_is_flagged(monkeypatch):
    full_weight(monkeypatch)
    assert group_audit(GROUP_CONTROL_TRIALS) > EPSILON


# ---------------------------------------------------------------------------------------------
# 3. MEDIAN(x) by private keys: partition selection, then the exponential mechanism.

PRIVATE_QUERY = "SELECT k, MEDIAN(x) AS m FROM t GROUP BY k"
PRIVATE_DELTA = 1e-5
PRIVATE_CONTROL_TRIALS = 100


def median_of(rows: Rows, key: str) -> float:
    """The group's released median; NaN when the group is not released (no event holds)."""
    return next((released for k, released in rows if k == key), math.nan)


PRIVATE_EVENTS: Events = {
    "S: 'solo' is released": lambda rows: not math.isnan(median_of(rows, "solo")),
    "E: median of 'a' >= 524": lambda rows: median_of(rows, "a") >= 524,
    "F: median of 'a' < 524": lambda rows: median_of(rows, "a") < 524,
}


def private_connection(with_target: bool) -> dpsql.Connection:
    data = table(["a"], 100, ["a", "solo"] if with_target else None)
    con = dpsql.connect(budget=UNLIMITED)
    con.register("t", data, privacy_unit="pid", bounds={"x": (0, BUCKETS)},
                 max_groups_per_unit=2, max_rows_per_group=1)
    return con


def private_audit(trials: int) -> float:
    plan = private_connection(True).explain(PRIVATE_QUERY, epsilon=EPSILON,
                                            delta=PRIVATE_DELTA).to_dict()
    assert plan["partition_selection"]["method"] == "laplace_threshold"
    assert plan["columns"][1]["mechanism"] == "exponential"
    return run_audit(private_connection, PRIVATE_QUERY, PRIVATE_EVENTS, trials, EPSILON,
                     PRIVATE_DELTA)


def test_quantile_with_private_keys_keeps_its_epsilon():
    assert private_audit(HONEST_TRIALS) <= EPSILON


def leaky_selection(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bug: a selection threshold of 1 (groups of one unit released half the time)."""
    monkeypatch.setattr("dpsql.analysis.sensitivity.selection_threshold", lambda *a, **k: 1.0)


PRIVATE_BUGS = {"full_weight": full_weight, "threshold_1": leaky_selection}


@pytest.mark.parametrize("bug", PRIVATE_BUGS)
def test_negative_control_quantile_with_private_keys_is_flagged(monkeypatch, bug):
    PRIVATE_BUGS[bug](monkeypatch)
    assert private_audit(PRIVATE_CONTROL_TRIALS) > EPSILON
