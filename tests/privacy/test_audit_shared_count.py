"""Audit of COUNT(*), SUM(x) and AVG(y) over columns declared NOT NULL: one noisy count serves
all three (docs/mechanisms.md §12), SUM(x) = 5·N + Sx and AVG(y) = 5 + Sy/N, with a target
whose rows break the declaration.

Three statistics, Laplace, ε/3 each: the rows N (bound c = 3, t = 9) and the centred sums
Sx = Σ(x − 5), Sy = Σ(y − 5), whose bound is half the range, c·(10 − 0)/2 = 15 (t = 45).
D': 200 one-row units with x = 5; y = 5 for 197 of them and 0 for 3: N = 200, Sx = 0,
Sy = −15. The target has 30 rows of 1e6 in x and y, a row of NULLs and one of NaN (NULLs under
a NOT NULL declaration count as rows and as the centre, adding 0): it adds c = 3 to N and 15
to each centred sum, so on D N = 203, Sx = 15, Sy = 0. Every statistic is recovered from the
release (N = COUNT(*), Sx = SUM − 5·N, Sy = (AVG − 5)·N) and each moves by its full bound,
so the events have likelihood ratio exactly e^ε (``events.py``).

The negative control trusts ``max_rows_per_group`` (no per-group clamp of the partials, as in
test_audit_aggregates.py): the target's 32 rows then move the shared count by 32 and the
centred sums by 150, and F becomes (almost) impossible on D.

Measured with these seeds (ε = 1 claimed; lower bounds at 99 % confidence, larger of E and F):
honest 0.03 (600 trials per side; three statistics must all exceed their values on D, so
the events are rarer, P_D(E) = 84/600, and the Clopper–Pearson slack larger than for two),
control 1.83 (200 trials per side). About 20 s.
"""

from __future__ import annotations

import math

import pyarrow as pa
import pytest

import dpsql
import dpsql.rewrite.unit_level as unit_level_module
from tests.privacy.events import EPSILON, TARGET, UNLIMITED, Events, run_audit

pytestmark = pytest.mark.slow

TRIALS = 600
CONTROL_TRIALS = 200
C = 3
TOLERANCE = 1e-7  # float error of the recovered sums is ~1e-13, their grid ~1e-5

QUERY = "SELECT COUNT(*) AS n, SUM(x) AS s, AVG(y) AS a FROM t"


def statistics(row: tuple) -> tuple[int, float, float]:
    """(N, Sx, Sy) from the released COUNT(*), SUM(x) and AVG(y)."""
    n, s, a = row
    return n, s - 5.0 * n, (a - 5.0) * n


EVENTS: Events = {
    "E: N, Sx, Sy >= values on D": lambda rows: (lambda n, sx, sy: n >= 203 and
                                                 sx >= 15 - TOLERANCE and sy >= -TOLERANCE)(
        *statistics(rows[0])),
    "F: N, Sx, Sy <= values on D'": lambda rows: (lambda n, sx, sy: n <= 200 and
                                                  sx <= TOLERANCE and sy <= -15 + TOLERANCE)(
        *statistics(rows[0])),
}


def connection(with_target: bool) -> dpsql.Connection:
    units, xs, ys = list(range(200)), [5.0] * 200, [5.0] * 197 + [0.0] * 3
    if with_target:
        hostile = [1e6] * 30 + [None, math.nan]
        units += [TARGET] * len(hostile)
        xs += hostile
        ys += hostile
    con = dpsql.connect(budget=UNLIMITED)
    con.register("t", pa.table({"pid": units, "x": xs, "y": ys}), privacy_unit="pid",
                 bounds={"x": (0, 10), "y": (0, 10)}, max_rows_per_group=C,
                 not_null=["x", "y"])
    return con


def test_the_plan_is_the_audited_one():
    plan = connection(True).compile(QUERY, epsilon=EPSILON).plan
    assert [s.kind for s in plan.stats] == ["rows", "centered_sum", "centered_sum"]
    assert [plan.sensitivity(s.name).bound * s.quantum for s in plan.stats] == [C, 15, 15]


def test_shared_count_keeps_its_epsilon():
    assert run_audit(connection, QUERY, EVENTS, TRIALS) <= EPSILON


def test_negative_control_shared_count_with_unenforced_row_limit_is_flagged(monkeypatch):
    enforce = unit_level_module.pair_partial
    monkeypatch.setattr(unit_level_module, "pair_partial",
                        lambda spec, c, values: enforce(spec, 10**6, values))
    assert run_audit(connection, QUERY, EVENTS, CONTROL_TRIALS) > EPSILON
