"""Audit of a query the engine answers with (discrete) Gaussian noise, with a negative control.

Query: ``SELECT k, COUNT(*), SUM(x), COUNT(DISTINCT pid) ... GROUP BY k`` over six public keys
with ``max_groups_per_unit = 6``: 3 statistics × 6 groups = 18 statistics per unit (L1 = 18,
L2 = √18 in per-cell bounds; in shares of m = 6 bounds, L1 = 3 and L2 = √(1/2)), so at ε = 1,
δ = 1e-2 ``explain()`` reports mechanism "gaussian" with σ = 6·u·bound = 8.11·bound per cell
(u ≈ 1.35 per share).

The target unit has 10 rows of x = 1e6 (plus a NULL) in *every* group: after clamping it moves
each of the 18 cells by exactly its bound (3 rows, 3·10, 1 unit), so its normalised shift
vector is (1, …, 1) and the Gaussian's privacy loss is a function of the single statistic

    W = Σ_cells (cell − value on D) / bound      (W ~ N(0, 18u²) on D, N(−18, 18u²) on D').

Half-spaces in W are the most powerful events (Neyman–Pearson), so the audit uses
E = {W ≥ 0} ("the target's cells, normalised, are at least their value on D") and its mirror
F = {W ≤ −18}. With μ = √18/u ≈ 0.52 the true ratio P_D(E)/P_D'(E) = 0.5/Φ(−μ) ≈ e^0.51, and
(ε, δ)-DP says P_D(E) ≤ e^ε P_D'(E) + δ, so the Clopper–Pearson bound is taken with δ subtracted:
ε_lb = ln((p_D,lower − δ)/p_D',upper). A Gaussian mechanism reaches its ε only on events of
probability ~δ, which no affordable number of trials resolves, so the honest bound is a modest
share of ε (δ = 1e-2 rather than a production 1e-6 makes μ larger and the audit stronger; the
calibration code path is the same). The negative control is what shows the audit has power.

Negative control: a calibration that calibrates σ for one cell instead of the query's 18 (its
L2 divided by √18): the noise is ~3.7× too small (μ ≈ 1.9) and must be flagged.

Measured with these seeds (ε = 1, δ = 1e-2 claimed; 99 % confidence, larger of E and F):
honest 0.122 (400 trials per side; F: 97 vs 175 hits), control 1.96 (200 per side; E: 100 vs 2,
F: 4 vs 101). About 33 s in all on one core (a query costs ~16 ms here).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import pyarrow as pa
import pytest

import dpsql
import dpsql.analysis.sensitivity as sensitivity_module
import dpsql.mechanisms.chooser as chooser_module
from dpsql.accounting import Accountant
from tests.privacy.events import audit_events, describe, largest

pytestmark = pytest.mark.slow

EPSILON = 1.0
DELTA = 1e-2
TARGET = 10_000
TRIALS = 400           # per side, honest audit
CONTROL_TRIALS = 200   # per side, negative control
UNLIMITED = dpsql.Budget(epsilon=1e9, delta=0.9)
KEYS = ["a", "b", "c", "d", "e", "f"]
C = 3

QUERY = "SELECT k, COUNT(*) AS r, SUM(x) AS s, COUNT(DISTINCT pid) AS u FROM t GROUP BY k"
# Per group on D: 40 one-row units with x = 5, plus the target's clamped contribution.
ON_D = {"r": 43.0, "s": 230.0, "u": 41.0}
BOUND = {"r": C, "s": C * 10.0, "u": 1.0}
CELLS = len(KEYS) * len(ON_D)


def connection(with_target: bool) -> dpsql.Connection:
    units, keys, xs = list(range(40 * len(KEYS))), KEYS * 40, [5.0] * (40 * len(KEYS))
    if with_target:
        for key in KEYS:
            units += [TARGET] * 11
            keys += [key] * 11
            xs += [1e6] * 10 + [None]
    con = dpsql.connect(budget=UNLIMITED)
    con.register("t", pa.table({"pid": units, "k": keys, "x": xs}), privacy_unit="pid",
                 bounds={"x": (0, 10)}, max_rows_per_group=C, max_groups_per_unit=len(KEYS),
                 public_keys={"k": KEYS})
    return con


def normalised_shift(rows: list[tuple]) -> float:
    """W: the sum over the target's cells of (cell − value on D)/bound."""
    assert sorted(row[0] for row in rows) == KEYS
    return sum((value - ON_D[name]) / BOUND[name]
               for row in rows for name, value in zip(ON_D, row[1:], strict=True))


EVENTS: dict[str, Callable[[list[tuple]], bool]] = {
    "E: W >= 0 (value on D)": lambda rows: normalised_shift(rows) >= 0,
    "F: W <= -18 (value on D')": lambda rows: normalised_shift(rows) <= -CELLS,
}


def runner(con: dpsql.Connection) -> Callable[[int], list[tuple]]:
    def run(seed: int) -> list[tuple]:
        con.budget = Accountant(UNLIMITED)  # thousands of runs: spending is not under test
        return con.sql(QUERY, epsilon=EPSILON, delta=DELTA, seed=seed).fetchall()
    return run


def gaussian_audit(trials: int) -> float:
    d, neighbour = connection(True), connection(False)
    plan = d.explain(QUERY, epsilon=EPSILON, delta=DELTA).data
    assert plan["mechanism"]["kind"] == "gaussian"
    assert plan["statistics_per_unit"] == CELLS and plan["delta"] == DELTA
    results = audit_events(runner(d), runner(neighbour), EVENTS, trials=trials, delta=DELTA)
    print(describe(results))
    return largest(results)


def test_gaussian_query_keeps_its_epsilon_delta():
    epsilon_lower = gaussian_audit(TRIALS)
    assert epsilon_lower <= EPSILON


def test_negative_control_gaussian_calibrated_for_one_statistic_is_flagged(monkeypatch):
    honest = chooser_module.discrete_gaussian_sigma
    monkeypatch.setattr(chooser_module, "discrete_gaussian_sigma",
                        lambda l2, epsilon, delta, **kw: honest(l2 / math.sqrt(CELLS), epsilon,
                                                                delta, **kw))
    # Bypass the memoised calibration (it would return the honest plan, and must not keep
    # the broken one for later tests).
    monkeypatch.setattr(sensitivity_module, "_choose_noise", chooser_module.choose_noise)
    epsilon_lower = gaussian_audit(CONTROL_TRIALS)
    assert epsilon_lower > EPSILON
