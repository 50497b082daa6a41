"""Queries with ROLLUP, CUBE or GROUPING SETS: one compiled query per grouping set, charged once.

Each grouping set is planned as the same query grouped by that set alone
(``dpsql.analysis.grouping_sets.set_query``): its own contribution bounding, noise and
partition selection (public keys keep every cell; private keys select their groups; the
empty set is the global total), at an equal share of the statement's ε and δ. The k sets are
k mechanisms run on the same database, so by basic composition (Dwork & Roth 2014, Thm 3.16)
the statement is (Σεᵢ, Σδᵢ)-DP ≤ (ε, δ)-DP, whatever each set's bounding keeps
(docs/mechanisms.md §14). The ledger is charged once, for the whole statement, with every
part's mechanisms; the answer is one table, the sets' rows one after another.

>>> from dpsql.catalog import Catalog, TableInfo
>>> cat = Catalog()
>>> _ = cat.add(TableInfo.private("t", columns={"pid": "INT", "k": "VARCHAR"}, privacy_unit="pid",
...                               public_keys={"k": ["x", "y"]}))
>>> q = compile_statement("SELECT k, COUNT(*) AS n FROM t GROUP BY ROLLUP (k)", cat, epsilon=1)
>>> [str(s) for s in q.sets], [p.cost.epsilon for p in q.parts], q.cost.epsilon
(['(k)', '()'], [0.5, 0.5], 1.0)
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Protocol

import pyarrow as pa

from dpsql.accounting.composition import MechanismEvent
from dpsql.accounting.values import Cost
from dpsql.analysis import analyze, privacy_parameters
from dpsql.analysis.grouping_sets import GroupingSet, grouping_sets, has_grouping_sets, set_query
from dpsql.analysis.options import consistent_totals
from dpsql.catalog import Catalog
from dpsql.compile import CompiledQuery, compile_query
from dpsql.engines import DUCKDB, EngineTraits
from dpsql.errors import InternalError, UnsupportedQueryError
from dpsql.exact import as_fraction, float_at_most
from dpsql.parse import parse
from dpsql.plan import PrivacyPlan, exact_share


@dataclass(frozen=True)
class GroupedQuery:
    """A statement with grouping sets: its sets, one ``CompiledQuery`` per set (in order) and
    the cost charged for all of them (frozen; checked exactly when built)."""

    sql: str
    sets: tuple[GroupingSet, ...]
    parts: tuple[CompiledQuery, ...]
    cost: Cost
    consistent_totals: bool = True
    """Whether the release fits the sets over public keys so that they add up
    (``dpsql.consistency``; the option ``consistent_totals`` of the query's clause)."""

    def __post_init__(self) -> None:
        self.verify_cost()

    def verify_cost(self) -> None:
        """Each set spends exactly its equal share of ε (the largest float not above ε/k) and
        at most its share of δ, and the parts sum to at most the charge, in exact rationals
        (each part has checked its own mechanisms: ``PrivacyPlan.verify_cost``)."""
        if len(self.parts) != len(self.sets) or not self.parts:
            raise InternalError(f"{len(self.sets)} grouping sets, {len(self.parts)} queries")
        share = Fraction(float_at_most(exact_share(self.cost.epsilon, len(self.parts))))
        spent_eps = sum((Fraction(p.cost.epsilon) for p in self.parts), Fraction(0))
        spent_delta = sum((Fraction(p.cost.delta) for p in self.parts), Fraction(0))
        if any(Fraction(p.cost.epsilon) != share for p in self.parts) or spent_eps > \
                as_fraction(self.cost.epsilon) or spent_delta > as_fraction(self.cost.delta):
            raise InternalError(f"grouping sets cost {self.cost} differs from their parts': "
                                + "; ".join(f"{s} {p.cost}" for s, p in self.labelled))

    @property
    def labelled(self) -> list[tuple[GroupingSet, CompiledQuery]]:
        return list(zip(self.sets, self.parts, strict=True))

    @property
    def plan(self) -> PrivacyPlan:
        """The first set's plan: every set releases the same columns and aggregates."""
        return self.parts[0].plan

    @property
    def events(self) -> tuple[MechanismEvent, ...]:
        """Every set's mechanisms, as the accountant composes them."""
        return tuple(e for part in self.parts for e in part.events)

    @property
    def dataset(self) -> str:
        return self.parts[0].dataset

    @property
    def statistics_per_unit(self) -> int:
        """Released cells one person can change over all sets: the sum of the sets' (each
        counts g groups, or 1 for the empty set, times its statistics)."""
        return sum(p.plan.statistics_per_unit for p in self.parts)

    @property
    def mechanism(self) -> str:
        """The sets' mechanisms, each named once, e.g. ``laplace+truncated_geometric``."""
        kinds = [k for p in self.parts for k in p.plan.mechanism.split("+") if k]
        return "+".join(dict.fromkeys(kinds))

    def __str__(self) -> str:
        sets = ", ".join(map(str, self.sets))
        return "\n".join([f"grouping sets {sets}: cost {self.cost}",
                          *(f"set {s}:\n{p.plan}" for s, p in self.labelled)])

    @functools.cached_property
    def release_digest(self) -> str:
        """The SHA-256 of the sets and every part's own release digest."""
        text = "\n".join(f"{s}={p.release_digest}" for s, p in self.labelled)
        return hashlib.sha256(f"{self.cost} {self.consistent_totals}\n{text}".encode()
                              ).hexdigest()

    @property
    def salted(self) -> bool:
        return any(p.salted for p in self.parts)

    def bounded_sql(self, dialect: str | None = None, *, pretty: bool = False) -> str:
        """Every set's bounded query, each after a comment naming its set."""
        return ";\n".join(f"-- grouping set {s}\n{p.bounded_sql(dialect, pretty=pretty)}"
                          for s, p in self.labelled)


class Executes(Protocol):
    def execute(self, compiled: CompiledQuery, *, salt: str) -> pa.Table: ...


def run_bounded(backend: Executes, compiled: CompiledQuery | GroupedQuery, salt: str
            ) -> pa.Table | tuple[pa.Table, ...]:
    """The bounded aggregates of a compiled query, or of each set of a grouped one (the
    same salt for all: it is chosen before and independently of the data)."""
    if isinstance(compiled, GroupedQuery):
        return tuple(backend.execute(part, salt=salt) for part in compiled.parts)
    return backend.execute(compiled, salt=salt)


def compile_statement(sql: str, catalog: Catalog, *, epsilon: float | None = None,
                      delta: float | None = None, default_epsilon: float = 1.0,
                      default_delta: float = 0.0, dialect: str = "duckdb",
                      public_values: Callable[[str, str], tuple[Any, ...]] | None = None,
                      quantile_ci: float | None = None,
                      remaining: tuple[float, float] | None = None,
                      engine: EngineTraits = DUCKDB) -> CompiledQuery | GroupedQuery:
    """``compile_query``, or, for grouping sets, a ``GroupedQuery``: each of the k sets
    analysed as its own query with ε/k of the statement's ε (``remaining`` replaces the
    statement's (ε, δ), as in ``compile_query``). δ goes in equal shares to the sets that
    spend δ at δ/k (private keys, Gaussian noise), the others get none. Which sets those are
    follows from the plans, never the data. The charge is ε, and δ if any set spends δ."""
    options = {"epsilon": epsilon, "delta": delta, "default_epsilon": default_epsilon,
               "default_delta": default_delta, "dialect": dialect, "quantile_ci": quantile_ci,
               "remaining": remaining, "engine": engine}
    if public_values is not None:
        options["public_values"] = public_values
    ast = parse(sql, dialect=dialect)
    consistent = consistent_totals(ast)
    if not has_grouping_sets(ast):
        if consistent is not None:
            raise UnsupportedQueryError(
                "consistent_totals: an option of ROLLUP, CUBE and GROUPING SETS, whose "
                "subtotals it makes add up; this query has none, so drop the option")
        return compile_query(sql, catalog, **options)
    sets = grouping_sets(ast)
    total = privacy_parameters(ast, catalog, epsilon=epsilon, delta=delta,
                               default_epsilon=default_epsilon, default_delta=default_delta,
                               remaining=remaining)
    del options["remaining"], options["engine"]

    def compiled(deltas: list[Fraction]) -> tuple[CompiledQuery, ...]:
        share = float_at_most(exact_share(total[0], len(sets)))
        return tuple(CompiledQuery.of(analyze(set_query(ast, s), catalog, **options,
                                              remaining=(share, float_at_most(d))), engine)
                     for s, d in zip(sets, deltas, strict=True))

    parts = compiled([as_fraction(total[1]) / len(sets)] * len(sets))
    users = [p.cost.delta > 0 for p in parts]
    if 0 < sum(users) < len(sets):  # δ only for the sets that spend it
        parts = compiled([as_fraction(total[1]) / sum(users) if u else Fraction(0)
                          for u in users])
    return GroupedQuery(sql=sql, sets=sets, parts=parts,
                        cost=Cost(epsilon=total[0], delta=total[1] if any(users) else 0.0),
                        consistent_totals=consistent is not False)
