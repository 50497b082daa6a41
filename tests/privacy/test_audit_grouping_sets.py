"""Audit of GROUP BY ROLLUP: the sets' releases compose to the statement's ε, not k times it.

One person (the target) has 30 rows in group 'shared', ten times the declared 3 rows per
group, so each set's bounding must cut them. The event reads both sets at once, the 'shared'
cell of (k) and the total of (): on D its chance is about ¼, on D′ = D minus the target about
¼·e^{-ε}, so a composition that gave each set the whole ε (the negative control) shows an ε
near 2ε. The bounded aggregates are computed once per database (with a fixed salt) and
released with a fresh seeded noise per trial.

Two designs are audited: every set measured at ε/2 (the option consistent_totals = FALSE),
and what dpsql chooses here, the finest set (k) measured at the whole ε with the total summed
from its cells (``consistency.derives_better``).
"""

from __future__ import annotations

import pyarrow as pa
import pytest

import dpsql
import dpsql.grouping as grouping_module
from dpsql.compile import seeded_salt
from dpsql.exact import as_fraction
from dpsql.grouping import run_bounded
from dpsql.mechanisms import Sampler
from dpsql.release import NoisyEngine, release
from tests.privacy.audit import audit

pytestmark = pytest.mark.slow

EPSILON = 1.0
TRIALS = 1500
TARGET = 10_000
QUERY = "SELECT {clause} k, COUNT(*) AS n FROM t GROUP BY ROLLUP (k)"
MEASURED = "WITH DIFFERENTIAL_PRIVACY OPTIONS (consistent_totals = FALSE)"


def table(with_target: bool) -> pa.Table:
    """200 one-row units in 'shared', 50 in 'other'; the target adds 30 rows to 'shared'."""
    units = list(range(250)) + ([TARGET] * 30 if with_target else [])
    keys = ["shared"] * 200 + ["other"] * 50 + (["shared"] * 30 if with_target else [])
    return pa.table({"pid": units, "k": keys})


def rollup_event(with_target: bool, clause: str):
    """E = the released 'shared' cell and the released total are at least their values on
    D after bounding (203 and 253)."""
    con = dpsql.connect(budget=dpsql.Budget(epsilon=1e9, delta=0.5))
    con.register("t", table(with_target), privacy_unit="pid", max_groups_per_unit=1,
                 max_rows_per_group=3, public_keys={"k": ["shared", "other"]})
    compiled = con.compile(QUERY.format(clause=clause), epsilon=EPSILON, delta=0)
    assert (compiled.finest is None) == (clause == MEASURED)
    exact = run_bounded(con.backend, compiled, seeded_salt(0))
    engine = NoisyEngine()

    def run(seed: int) -> bool:
        rows = release(compiled, exact, Sampler(seed), engine=engine).fetchall()
        cells = {key: n for key, n in rows}
        return cells["shared"] >= 203 and cells[None] >= 253

    return run


def rollup_audit(trials: int, clause: str):
    return audit(rollup_event(True, clause), rollup_event(False, clause), trials=trials,
                 delta=0.0)


@pytest.mark.parametrize("clause", [MEASURED, ""], ids=["each set measured", "summed"])
def test_rollup_keeps_the_statements_epsilon(clause: str):
    result = rollup_audit(TRIALS, clause)
    print(result)
    assert result.epsilon_lower <= EPSILON, result
    assert result.hits_neighbour > 0


def test_negative_control_every_set_at_the_whole_epsilon_is_flagged(monkeypatch):
    """Each set given the statement's ε (and the exact cost check switched off) must be
    caught: the two sets then leak about 2ε together."""
    monkeypatch.setattr(grouping_module, "exact_share", lambda total, parts: as_fraction(total))
    monkeypatch.setattr(grouping_module.GroupedQuery, "verify_cost", lambda self: None)
    result = rollup_audit(TRIALS, MEASURED)
    print(result)
    assert result.epsilon_lower > EPSILON, result
