"""Queries with ROLLUP, CUBE or GROUPING SETS: one compiled query per grouping set, charged once.

Each grouping set is planned as the same query grouped by that set alone
(``dpsql.analysis.grouping_sets.set_query``): its own contribution bounding, noise and
partition selection (public keys keep every cell; private keys select their groups; the
empty set is the global total), at an equal share of the statement's ε and δ. The k sets are
k mechanisms run on the same database, so by basic composition (Dwork & Roth 2014, Thm 3.16)
the statement is (Σεᵢ, Σδᵢ)-DP ≤ (ε, δ)-DP, whatever each set's bounding keeps
(docs/mechanisms.md §14). The ledger is charged once, for the whole statement, with every
part's mechanisms; the answer is one table, the sets' rows one after another.

When every set's keys are public, one set holds every other's keys and every aggregate is a
count, sum or average, the statement may instead measure only that finest set, at the whole
ε and δ, and release every other set as sums of its noisy cells (post-processing of one
mechanism): chosen, from the plans alone, where its expected error is below that of the
sets measured at their shares and fitted by least squares (``consistency.derives_better``).

>>> from dpsql.catalog import Catalog, TableInfo
>>> cat = Catalog()
>>> _ = cat.add(TableInfo.private("t", columns={"pid": "INT", "k": "VARCHAR", "v": "INT"},
...                               privacy_unit="pid", public_keys={"k": ["x", "y"]}))
>>> q = compile_statement("SELECT k, COUNT(*) AS n FROM t GROUP BY ROLLUP (k)", cat, epsilon=1)
>>> [str(s) for s in q.sets], q.labels, [p.cost.epsilon for p in q.parts], q.cost.epsilon
(['(k)', '()'], ('(k)',), [1.0], 1.0)
>>> q = compile_statement("SELECT k, COUNT(DISTINCT v) AS n FROM t GROUP BY ROLLUP (k)", cat,
...                       epsilon=1)
>>> q.labels, [p.cost.epsilon for p in q.parts]
(('(k)', '()'), [0.5, 0.5])
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import pyarrow as pa

from dpsql.accounting.values import Cost
from dpsql.analysis import analyze, privacy_parameters
from dpsql.analysis.grouping_sets import GroupingSet, grouping_sets, has_grouping_sets, set_query
from dpsql.analysis.options import consistent_totals
from dpsql.catalog import Catalog
from dpsql.compile import CompiledQuery, compile_query
from dpsql.composed import Composed, compile_composed, compiled_parts, composition
from dpsql.consistency import derives_better, finest_set
from dpsql.engines import DUCKDB, EngineTraits
from dpsql.errors import UnsupportedQueryError
from dpsql.exact import share_at_most
from dpsql.names import check_query_names
from dpsql.parse import parse
from dpsql.plan import PrivacyPlan, exact_share


@dataclass(frozen=True)
class GroupedQuery(Composed):
    """A statement with grouping sets: its sets, one ``CompiledQuery`` per set (in order) and
    the cost charged for all of them (frozen; checked exactly when built: each set spends
    exactly its equal share of ε, the largest float not above ε/k, read as binary or decimal)."""

    sets: tuple[GroupingSet, ...] = ()
    kind = "grouping set"
    consistent_totals: bool = True
    """Whether the release fits the sets over public keys so that they add up
    (``dpsql.consistency``; the option ``consistent_totals`` of the query's clause)."""
    derived: tuple[CompiledQuery | None, ...] = ()
    """Empty when every set is measured (``parts``, one per set). Otherwise one entry per
    set: None for the finest set, the only one measured (``parts[0]``, at the whole ε), and
    for every other set that set compiled at an equal share for its columns alone, never run
    nor charged: its cells are sums of the finest set's noisy cells (``consistency.summed``)."""

    @property
    def finest(self) -> int | None:
        """The measured set the others are summed from, or None if every set is measured."""
        return self.derived.index(None) if self.derived else None

    @property
    def set_parts(self) -> tuple[CompiledQuery, ...]:
        """One compiled query per set, in order: what each set's release is shaped by."""
        if not self.derived:
            return self.parts
        return tuple(self.parts[0] if d is None else d for d in self.derived)

    @property
    def labels(self) -> tuple[str, ...]:
        if self.finest is not None:
            return (str(self.sets[self.finest]),)
        return tuple(map(str, self.sets))

    @property
    def epsilon_shares(self) -> tuple[float, ...]:
        """An equal share per measured set: the statement's ε to the finest set when only it
        is measured, else ε/k to each of the k sets."""
        measured = len(self.labels)
        return (share_at_most(exact_share(self.cost.epsilon, measured)),) * measured

    @property
    def plan(self) -> PrivacyPlan:
        """The first set's plan: every set releases the same columns and aggregates."""
        return self.parts[0].plan

    def __str__(self) -> str:
        sets = ", ".join(map(str, self.sets))
        fitted = "" if self.consistent_totals else ", each set as measured"
        if self.finest is not None:
            fitted = f", every set summed from {self.sets[self.finest]}"
        return "\n".join([f"grouping sets {sets}: cost {self.cost}{fitted}",
                          *(f"set {s}:\n{p.plan}" for s, p in self.labelled)])


class Executes(Protocol):
    def execute(self, compiled: CompiledQuery, *, salt: str) -> pa.Table: ...


def run_bounded(backend: Executes, compiled: CompiledQuery | Composed, salt: str
            ) -> pa.Table | tuple[pa.Table, ...]:
    """The bounded aggregates of a compiled query, or of each part of a composed one (the
    same salt for all: it is chosen before and independently of the data)."""
    if isinstance(compiled, Composed):
        return tuple(backend.execute(part, salt=salt) for part in compiled.parts)
    return backend.execute(compiled, salt=salt)


def compile_statement(sql: str, catalog: Catalog, *, epsilon: float | None = None,
                      delta: float | None = None, default_epsilon: float = 1.0,
                      default_delta: float = 0.0, dialect: str = "duckdb",
                      public_values: Callable[[str, str], tuple[Any, ...]] | None = None,
                      quantile_ci: float | None = None,
                      remaining: tuple[float, float] | None = None,
                      engine: EngineTraits = DUCKDB) -> CompiledQuery | Composed:
    """``compile_query``; for a statement of several releases, a ``ComposedQuery``
    (``dpsql.composed``); for grouping sets, a ``GroupedQuery``: each of the k sets
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
    check_query_names(ast)
    if (found := composition(ast, catalog)) is not None:
        return compile_composed(sql, ast, found, catalog, epsilon=epsilon, delta=delta,
                                default_epsilon=default_epsilon, default_delta=default_delta,
                                remaining=remaining, engine=engine, dialect=dialect,
                                quantile_ci=quantile_ci, **(
                                    {} if public_values is None else
                                    {"public_values": public_values}))
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

    share = share_at_most(exact_share(total[0], len(sets)))

    def compile_one(i: int, eps: float, dlt: float) -> CompiledQuery:
        return CompiledQuery.of(analyze(set_query(ast, sets[i]), catalog, **options,
                                        remaining=(eps, dlt)), engine)

    parts = compiled_parts(compile_one, [share] * len(sets), total[1], [None] * len(sets))
    derived: tuple[CompiledQuery | None, ...] = ()
    finest = finest_set([p.plan for p in parts]) if consistent is not False else None
    if finest is not None:
        whole = compiled_parts(lambda _, eps, dlt: compile_one(finest, eps, dlt), [total[0]],
                               total[1], [None])
        if whole[0].plan.noise.kind == parts[finest].plan.noise.kind and \
                derives_better([p.plan for p in parts], whole[0].plan):
            derived = tuple(None if i == finest else p for i, p in enumerate(parts))
            parts = whole
    spends_delta = any(p.cost.delta > 0 for p in parts)
    return GroupedQuery(sql=sql, sets=sets, parts=parts,
                        cost=Cost(epsilon=total[0], delta=total[1] if spends_delta else 0.0),
                        consistent_totals=consistent is not False, derived=derived)
