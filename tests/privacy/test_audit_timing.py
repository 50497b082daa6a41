"""Timing audit: how long a query takes must not tell whether one person is in the data.

The red team's attack: an expression that only one person's row reaches (a CASE arm on
their name and diagnosis) and that makes that row cost seconds — ``replace`` nested eight
times, 10⁸ times longer text — so the query's time answers "is that person here?" at
whatever ε the analyst chooses to pay. ``dpsql.expr.size`` bounds every row's work; this
audit times the most expensive row the rule admits (``worst_admitted``: text grown to
``max_text_value`` by distinct replaces until ``max_row_work`` is used up) on D, with the
person, and D' without, interleaved, and bounds the distinguishing advantage of the best
threshold on the time, as the other audits bound events (Clopper–Pearson, ``audit.py``).

The negative control disables the bound (limits a million times larger) and runs the red
team's amplifier: the same test must flag it. The residual channel — one row's worst extra
time against the query's run-to-run jitter — is reported and documented in
docs/privacy.md (Timing).
"""

from __future__ import annotations

import statistics
import time

import pyarrow as pa
import pytest

import dpsql
from dpsql.catalog import WorkLimits
from tests.privacy.audit import epsilon_lower_bound

pytestmark = pytest.mark.slow

PEOPLE = 20_000
RUNS = 150
CONTROL_RUNS = 150
"""Runs a side for the negative control (each run with the person takes seconds)."""
TARGET = "a" * 1024
"""The person's name: the longest text their column holds (its default width), which the
analyst's replaces grow the most."""
BOUND = 1.0
"""The most ε the timing of one row may show at RUNS runs a side (the red team's showed 2.03
at 30 runs; at this bound's sample size, a shift of a tenth of the jitter stays below it)."""


def _table(with_person: bool) -> pa.Table:
    names = [f"person {i}" for i in range(PEOPLE)] + ([TARGET] if with_person else [])
    diagnoses = ["flu"] * PEOPLE + (["hiv"] if with_person else [])
    return pa.table({"pid": list(range(len(names))), "name": names, "diagnosis": diagnoses})


def worst_admitted(limits: WorkLimits, width: int) -> str:
    """The costliest expression the rule admits on a name of ``width`` characters: sums of
    lengths of distinct replaces (no engine can share their work), each growing the name as
    far as ``max_text_value`` and the steps left within ``max_row_work`` allow."""
    spare = limits.max_row_work - 8 * width  # the comparisons and the WHERE around it
    copies = min(limits.max_text_value, spare // 2) // width
    grown = copies * width
    per_term = 3 + 2 * width + 1 + copies + 2 * grown
    terms = [f"length(replace(name, 'a', '{'a' * (copies - 1) + chr(98 + k)}'))"
             for k in range(max(1, spare // per_term))]
    return " + ".join(terms)


def amplifier(levels: int = 8, copies: int = 1) -> str:
    """The red team's expression: ``replace`` nested ``levels`` times, tenfold each (the sum
    of ``copies`` of it, with distinct replacements, for more time without more memory)."""
    terms = []
    for copy in range(copies):
        grown = "lower(name)"
        for _ in range(levels):
            grown = f"replace({grown}, 'a', '{'a' * 9 + chr(98 + copy)}')"
        terms.append(f"length({grown})")
    return " + ".join(terms)


def _query(expression: str) -> str:
    """The red team's shape: ``expression`` in a CASE arm only the person's row reaches.
    Every other row passes too (ELSE TRUE), so the time measures the arm's work, not whether
    the aggregate is empty (DuckDB answers an empty one about a millisecond sooner: a
    channel of its own, which the analyst cannot amplify; docs/privacy.md, Timing)."""
    return (f"SELECT COUNT(*) FROM t WHERE CASE WHEN name = '{TARGET}' AND diagnosis = 'hiv' "
            f"THEN ({expression}) > -1 ELSE TRUE END")


def _timings(limits: WorkLimits, query: str, runs: int = RUNS
             ) -> tuple[list[float], list[float]]:
    """The query's wall-clock time on D and on D', ``runs`` each, interleaved (the order
    alternates, so neither side always follows the other)."""
    cons = {}
    for side in (True, False):
        con = dpsql.connect(budget=dpsql.Budget(epsilon=1e9, delta=0.5), cache=False,
                            limits=limits)
        con.register("t", _table(side), privacy_unit="pid")
        con.sql(query, epsilon=1.0).fetchall()  # compiled and warm
        cons[side] = con
    times: dict[bool, list[float]] = {True: [], False: []}
    for run in range(runs):
        for side in ((True, False) if run % 2 else (False, True)):
            start = time.perf_counter()
            cons[side].sql(query, epsilon=1.0).fetchall()
            times[side].append(time.perf_counter() - start)
    return times[True], times[False]


def timing_epsilon(with_person: list[float], without: list[float]) -> float:
    """The largest ε lower bound over thresholds at the pooled deciles: "slower than t" is
    an event the analyst can observe, and (ε, 0)-DP bounds its probability ratio."""
    pooled = sorted(with_person + without)
    thresholds = [pooled[len(pooled) * k // 10] for k in range(1, 10)]
    return max(epsilon_lower_bound(sum(t > c for t in with_person),
                                   sum(t > c for t in without), len(without), 0.0,
                                   alpha=0.01 / len(thresholds))
               for c in thresholds)


def test_the_costliest_admitted_row_does_not_show_in_the_time():
    limits = WorkLimits()
    query = _query(worst_admitted(limits, len(TARGET)))
    con = dpsql.connect(limits=limits)
    con.register("t", _table(True), privacy_unit="pid")
    assert con.compile(query, epsilon=1.0).plan.row_work <= limits.max_row_work
    with_person, without = _timings(limits, query)
    found = timing_epsilon(with_person, without)
    extra = statistics.median(with_person) - statistics.median(without)
    jitter = statistics.quantiles(without, n=4)
    print(f"\nworst admitted row: median extra {extra * 1e3:.3f} ms, D' quartiles "
          f"{[round(q * 1e3, 2) for q in jitter]} ms, timing ε lower bound {found:.3f}")
    assert found <= BOUND, (found, extra)


def test_negative_control_the_amplifier_without_the_bound_is_flagged():
    unbounded = WorkLimits(max_text_value=2**39, max_row_work=2**39)
    query = _query(amplifier(levels=4, copies=8))
    with pytest.raises(dpsql.UnsupportedQueryError, match="may build a text"):
        _compile_with(WorkLimits(), query)
    with_person, without = _timings(unbounded, query, runs=CONTROL_RUNS)
    found = timing_epsilon(with_person, without)
    print(f"\nunbounded amplifier: median extra "
          f"{(statistics.median(with_person) - statistics.median(without)) * 1e3:.1f} ms, "
          f"timing ε lower bound {found:.3f}")
    assert found > BOUND


def _compile_with(limits: WorkLimits, query: str) -> None:
    con = dpsql.connect(limits=limits)
    con.register("t", _table(True), privacy_unit="pid")
    con.compile(query, epsilon=1.0)
