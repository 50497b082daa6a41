"""Audit of a statement of two releases: they compose to the statement's ε, not twice it.

``SELECT a.n, b.s FROM (SELECT COUNT(*) ...) a CROSS JOIN (SELECT COUNT(*) ... WHERE k =
'shared') b``: one person (the target) has 30 rows in 'shared', ten times the declared 3
rows per group, so each part's bounding must cut them to 3. The event reads both released
values at once (each at least its value on D after bounding, 253 and 203): on D its chance
is about ¼, on D′ = D minus the target about ¼·e^{-ε}, so a split that gave each part the
whole ε (the negative control) shows an ε near 2ε. The bounded aggregates are computed once
per database (with a fixed salt) and released with a fresh seeded noise per trial.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

import dpsql
import dpsql.composed as composed_module
from dpsql.compile import seeded_salt
from dpsql.grouping import run_bounded
from dpsql.mechanisms import Sampler
from dpsql.release import NoisyEngine, release
from tests.privacy.audit import audit

pytestmark = pytest.mark.slow

EPSILON = 1.0
TRIALS = 1500
TARGET = 10_000
QUERY = ("SELECT a.n, b.s FROM (SELECT COUNT(*) AS n FROM t) a CROSS JOIN "
         "(SELECT COUNT(*) AS s FROM t WHERE k = 'shared') b")


def table(with_target: bool) -> pa.Table:
    """200 one-row units in 'shared', 50 in 'other'; the target adds 30 rows to 'shared'."""
    units = list(range(250)) + ([TARGET] * 30 if with_target else [])
    keys = ["shared"] * 200 + ["other"] * 50 + (["shared"] * 30 if with_target else [])
    return pa.table({"pid": units, "k": keys})


def composed_event(with_target: bool):
    """E = both released counts are at least their values on D after bounding."""
    con = dpsql.connect(budget=dpsql.Budget(epsilon=1e9, delta=0.5))
    con.register("t", table(with_target), privacy_unit="pid", max_groups_per_unit=1,
                 max_rows_per_group=3)
    compiled = con.compile(QUERY, epsilon=EPSILON, delta=0)
    assert [p.cost.epsilon for p in compiled.parts] in ([0.5, 0.5], [EPSILON, EPSILON])
    exact = run_bounded(con.backend, compiled, seeded_salt(0))
    engine = NoisyEngine()

    def run(seed: int) -> bool:
        (n, s), = release(compiled, exact, Sampler(seed), engine=engine).fetchall()
        return n >= 253 and s >= 203

    return run


def composed_audit(trials: int):
    return audit(composed_event(True), composed_event(False), trials=trials, delta=0.0)


def test_two_releases_keep_the_statements_epsilon():
    result = composed_audit(TRIALS)
    print(result)
    assert result.epsilon_lower <= EPSILON, result
    assert result.hits_neighbour > 0


def test_negative_control_every_part_at_the_whole_epsilon_is_flagged(monkeypatch):
    """Each part given the statement's ε (and the exact cost check switched off) must be
    caught: the two parts then leak about 2ε together."""
    monkeypatch.setattr(composed_module, "epsilon_shares",
                        lambda total, written, weights: [total] * len(written))
    monkeypatch.setattr(composed_module.ComposedQuery, "verify_cost", lambda self: None)
    result = composed_audit(TRIALS)
    print(result)
    assert result.epsilon_lower > EPSILON, result
