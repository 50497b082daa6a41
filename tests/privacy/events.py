"""Audit several fixed events on the same runs (one query execution per seed and side).

``audit.audit`` counts one event; here each run's released rows are kept and every event in a
small fixed family is counted on them. Each event's Clopper–Pearson bound is taken at confidence
1 − alpha/len(events) (Bonferroni), so the largest of them is still a valid lower bound on ε at
confidence 1 − alpha. The usual pair is

- E: "every released cell the target influences is ≥ its value on D" (likely on D), and
- F: "every such cell is ≤ its value on D'" (likely on D'), its mirror image.

For Laplace noise both have likelihood ratio exactly e^ε, so the honest audit loses nothing by
looking at both; a bug that shifts D far from D' makes F (almost) impossible on D, which a
Clopper–Pearson upper bound of ≈ 6/trials turns into a clear flag with few trials, whereas E alone
can never show more than ε + ln(1/P_D(E)).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import dpsql
from dpsql.accounting import Accountant
from tests.privacy.audit import AuditResult, epsilon_lower_bound


def audit_events(run_d: Callable[[int], Any], run_neighbour: Callable[[int], Any],
                 events: Mapping[str, Callable[[Any], bool]], *, trials: int, delta: float,
                 alpha: float = 0.01) -> dict[str, AuditResult]:
    """Per event, hits on D (seeds 0..trials−1) and on D' (seeds trials..2·trials−1)."""
    outputs_d = [run_d(seed) for seed in range(trials)]
    outputs_n = [run_neighbour(seed + trials) for seed in range(trials)]
    results = {}
    for name, event in events.items():
        hits_d = sum(bool(event(out)) for out in outputs_d)
        hits_n = sum(bool(event(out)) for out in outputs_n)
        bound = epsilon_lower_bound(hits_d, hits_n, trials, delta, alpha=alpha / len(events))
        results[name] = AuditResult(hits_d, hits_n, trials, bound)
    return results


def largest(results: Mapping[str, AuditResult]) -> float:
    """The ε lower bound the whole family proves (its largest member)."""
    return max(r.epsilon_lower for r in results.values())


def describe(results: Mapping[str, AuditResult]) -> str:
    return "; ".join(f"{name}: {r}" for name, r in results.items())


# Shared by the audits of whole queries with public keys and Laplace noise.
EPSILON = 1.0
TARGET = 10_000
"""The privacy unit of the person removed in the neighbouring database."""
UNLIMITED = dpsql.Budget(epsilon=1e9, delta=0.9)
Events = dict[str, Callable[[list[tuple]], bool]]


def runner(con: dpsql.Connection, query: str, delta: float) -> Callable[[int], list[tuple]]:
    def run(seed: int) -> list[tuple]:
        con.budget = Accountant(UNLIMITED)  # thousands of runs: spending is not under test
        return con.sql(query, epsilon=EPSILON, delta=delta, seed=seed).fetchall()
    return run


def run_audit(make_connection: Callable[[bool], dpsql.Connection], query: str, events: Events,
              trials: int, delta: float = 0.0) -> float:
    d, neighbour = make_connection(True), make_connection(False)
    # The audited query must be what the comments say: Laplace noise, public keys.
    plan = d.explain(query, epsilon=EPSILON, delta=delta).data
    assert plan["mechanism"]["kind"] == "laplace" and plan["partition_selection"] == "public"
    results = audit_events(runner(d, query, delta), runner(neighbour, query, delta), events,
                           trials=trials, delta=delta)
    print(describe(results))
    assert all(r.hits_neighbour + r.hits_d > 0 for r in results.values())  # not degenerate
    return largest(results)
