"""Audits of ``max_rows_per_unit`` on GROUP BY over public keys, each with a negative control.

Sixteen public keys, max_groups_per_unit = g = 16, max_rows_per_group = c = 16 and
max_rows_per_unit = r = 16 < g·c = 256. With q = min(g, r/c) = 1 every statistic has normalised
norms L1 = L2 = 1 (``normalised_norms``): one unit moves the statistic's cells by one per-cell
bound *in total*, however many groups it touches.

D': 400 one-row units per key with x = 2 (per key COUNT(*) = 400, SUM(x) = 800; large enough
that released values, never below 0, are moved there almost never). D adds a target
unit with 18 rows in every key: 16 of x = 1e6 (clamped to 10), a NULL and a NaN. Per key its
partials are clamped to c = 16 rows (COUNT 16, SUM 160); over its 16 groups that is T = 256
clamped rows, so ``cap_total`` scales every partial by r/T = 1/16: the target adds exactly 1 row
and 10 to each key, 16 rows and 160 in all: the whole L1 the noise is calibrated for, spread
thin. A rewrite that skipped the scaling (the negative control) adds 16 and 160 per key: 16×.

Events on the normalised shift W = Σ over released cells of (cell − value on D')/bound, with
bound c for COUNT and 10·c for SUM: W is centred on 0 on D', on k on D (k statistics in the
query) and on 16k without the cap.

- E: W ≥ k ("the cells are at least their values on D"), and
- F: W ≤ 0 ("the cells are at most their values on D'").

Laplace (δ = 0, one statistic; discrete Laplace with t = c/ε per COUNT cell, 10·c/ε per SUM
cell, so W is a sum of 16 Laplace(1) variables), computed exactly for COUNT by convolution (SUM,
on its finer grid, is the same up to rounding): P_D(E) = P_D'(F) = 0.502 and P_D'(E) = P_D(F) =
0.430, a log-ratio of 0.15 ≤ ε. The honest bound is far below ε because a shift spread over 16
cells reaches its full e^ε only on events as unlikely as "all 16 cells ≥ their values on D"
(≈ 3e-5). Without the cap P_D(F) = 0.0031 against P_D'(F) = 0.502 (log-ratio 5.1).

Gaussian (δ = 1e-2, COUNT(*) and SUM(x): L1 = 2, L2 = √2, so ``explain()`` reports
"gaussian", σ = 42.5 per COUNT cell, 2.66 bounds): W ~ N(mean, 15.0²) over the 32 cells. Honest
mean 2 (μ = 0.13: P_D'(E) = 0.447 against 0.5), no cap 32 (μ = 2.13: P_D(F) = 0.017 against
0.5, which the δ-corrected bound ln((p_D' − δ)/p_D) still flags). Spread thin, the target's L2 is
a quarter of the bound's (the worst case for L2 puts the r rows in one group, where the cap does
not bind), so here too the negative control is what shows that the audit has power. δ = 1e-2
rather than a production 1e-6 makes σ small enough for that (as in ``test_audit_gaussian``).

Measured with these seeds (99 % confidence, larger of E and F):

=======================  ===========================  ===================================
audit                    honest ε_lb (trials/side)    without the cap ε_lb (trials/side)
=======================  ===========================  ===================================
COUNT(*), Laplace        0.000 (300)                  2.24 (150)
SUM(x), Laplace          0.000 (300)                  2.08 (150)
COUNT + SUM, Gaussian    0.000 (300)                  2.50 (200)
=======================  ===========================  ===================================

About 35 s of CPU in all (2,800 queries of ~12 ms).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import pyarrow as pa
import pytest

import dpsql
import dpsql.rewrite.unit_level as unit_level_module
from dpsql.accounting import Accountant
from tests.privacy.events import audit_events, describe, largest

pytestmark = pytest.mark.slow

EPSILON = 1.0
TARGET = 10_000
UNLIMITED = dpsql.Budget(epsilon=1e9, delta=0.9)
KEYS = [f"k{i:02d}" for i in range(16)]
C = 16                 # max_rows_per_group
R = 16                 # max_rows_per_unit, far below len(KEYS) · C
HI = 10.0              # bounds of x: [0, HI]
PER_KEY = 400
ON_NEIGHBOUR = {"n": float(PER_KEY), "s": 2.0 * PER_KEY}   # per key on D'
BOUND = {"n": C, "s": C * HI}           # per-cell bound of each statistic


@dataclass(frozen=True)
class Case:
    query: str
    names: tuple[str, ...]  # the query's statistics, in column order
    delta: float
    mechanism: str
    trials: int             # per side, honest audit
    control_trials: int     # per side, negative control


CASES = {
    "count": Case("SELECT k, COUNT(*) AS n FROM t GROUP BY k", ("n",), 0.0, "laplace", 300, 150),
    "sum": Case("SELECT k, SUM(x) AS s FROM t GROUP BY k", ("s",), 0.0, "laplace", 300, 150),
    "gaussian": Case("SELECT k, COUNT(*) AS n, SUM(x) AS s FROM t GROUP BY k", ("n", "s"), 1e-2,
                     "gaussian", 300, 200),
}


def connection(with_target: bool) -> dpsql.Connection:
    units = list(range(PER_KEY * len(KEYS)))
    keys, xs = KEYS * PER_KEY, [2.0] * len(units)
    if with_target:
        for key in KEYS:
            units += [TARGET] * 18
            keys += [key] * 18
            xs += [1e6] * 16 + [None, math.nan]
    con = dpsql.connect(budget=UNLIMITED)
    con.register("t", pa.table({"pid": units, "k": keys, "x": xs}), privacy_unit="pid",
                 bounds={"x": (0, HI)}, max_groups_per_unit=len(KEYS), max_rows_per_group=C,
                 max_rows_per_unit=R, public_keys={"k": KEYS})
    return con


def normalised_shift(rows: list[tuple], names: tuple[str, ...]) -> float:
    """W: the sum over every released cell of (cell − value on D')/bound."""
    assert sorted(row[0] for row in rows) == KEYS
    return sum((value - ON_NEIGHBOUR[name]) / BOUND[name]
               for row in rows for name, value in zip(names, row[1:], strict=True))


def events(case: Case) -> dict[str, Callable[[list[tuple]], bool]]:
    on_d = len(case.names)  # the target adds 1/16 of a bound to each of 16 cells per statistic
    return {
        "E: W >= value on D": lambda rows: normalised_shift(rows, case.names) >= on_d,
        "F: W <= value on D'": lambda rows: normalised_shift(rows, case.names) <= 0,
    }


def runner(con: dpsql.Connection, case: Case) -> Callable[[int], list[tuple]]:
    def run(seed: int) -> list[tuple]:
        con.budget = Accountant(UNLIMITED)  # hundreds of runs: spending is not under test
        return con.sql(case.query, epsilon=EPSILON, delta=case.delta, seed=seed).fetchall()
    return run


def cap_audit(case: Case, trials: int) -> float:
    d, neighbour = connection(True), connection(False)
    plan = d.explain(case.query, epsilon=EPSILON, delta=case.delta).to_dict()
    assert {c["mechanism"] for c in plan["columns"][1:]} == {case.mechanism}
    assert [c["l1_sensitivity"] for c in plan["columns"][1:]] == [
        BOUND[name] for name in case.names]  # q = min(g, r/c) = 1 bound per statistic
    results = audit_events(runner(d, case), runner(neighbour, case), events(case),
                           trials=trials, delta=case.delta)
    print(describe(results))
    assert all(r.hits_d + r.hits_neighbour > 0 for r in results.values())  # not degenerate
    return largest(results)


@pytest.mark.parametrize("name", CASES)
def test_rows_per_unit_cap_keeps_its_epsilon(name):
    case = CASES[name]
    assert cap_audit(case, case.trials) <= EPSILON


@pytest.mark.parametrize("name", CASES)
def test_negative_control_uncapped_rows_per_unit_is_flagged(monkeypatch, name):
    """A rewrite that never scales a unit's partials down to r rows (factor 1), while the plan's
    sensitivity still counts on the cap, must be caught."""
    honest = unit_level_module.cap_total

    def uncapped(plan, kept):
        loose = replace(plan.contribution, max_rows_per_unit=10**9)
        return honest(replace(plan, contribution=loose), kept)

    monkeypatch.setattr(unit_level_module, "cap_total", uncapped)
    case = CASES[name]
    assert cap_audit(case, case.control_trials) > EPSILON
