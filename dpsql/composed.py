"""Statements of several releases, charged once: the parts, their shares of ε, one result.

A statement whose subqueries, CTEs, UNION ALL branches or scalar subqueries are each a
private aggregate query (``dpsql.analysis.composition``) is planned as those queries, each
analysed, bounded and released on its own, and the statement around them, run over their
released tables in the noise-free engine (post-processing). The k parts are k mechanisms on
the same database, so by basic composition (Dwork & Roth 2014, Thm 3.16) the statement is
(Σεᵢ, Σδᵢ)-DP ≤ (ε, δ)-DP: the ledger is charged once, with every part's mechanisms.

ε goes to the parts that name no ε of their own (a part's ``WITH DIFFERENTIAL_PRIVACY
OPTIONS (epsilon = ...)`` fixes its own) in proportion to the statistics one person can change
in each, so that every part's noise, per statistic and relative to its bound, is the same: the
split that minimises their summed normalised variance under Laplace noise. δ goes in equal
shares to the parts that spend δ (docs/mechanisms.md §15).

>>> from dpsql.catalog import Catalog, TableInfo
>>> from dpsql.grouping import compile_statement
>>> cat = Catalog()
>>> _ = cat.add(TableInfo.private("t", columns={"pid": "INT", "x": "INT"}, privacy_unit="pid",
...                               bounds={"x": (0, 10)}))
>>> q = compile_statement("SELECT COUNT(*) FROM t UNION ALL SELECT WITH DIFFERENTIAL_PRIVACY "
...                       "OPTIONS (epsilon = 0.25) COUNT(*) FROM t", cat, epsilon=1)
>>> [p.cost.epsilon for p in q.parts], q.cost.epsilon
([0.75, 0.25], 1.0)
>>> q = compile_statement("SELECT (SELECT COUNT(*) FROM t) AS n, (SELECT AVG(x) FROM t) AS m",
...                       cat, epsilon=0.75)
>>> [p.plan.statistics_per_unit for p in q.parts], [p.cost.epsilon for p in q.parts]
([1, 2], [0.25, 0.5])
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import duckdb
import pyarrow as pa
from sqlglot import exp

from dpsql.accounting.composition import MechanismEvent
from dpsql.accounting.values import DATASETS_SEPARATOR, Cost
from dpsql.analysis import analyze
from dpsql.analysis.composition import PART, Composition, composition, projections
from dpsql.analysis.options import written_parameters
from dpsql.catalog import Catalog
from dpsql.compile import CompiledQuery
from dpsql.engines import DUCKDB, EngineTraits
from dpsql.errors import InternalError, PrivacyError, UnsupportedQueryError
from dpsql.exact import as_fraction, share_at_most, total_at_least
from dpsql.expr.totality import guard_division
from dpsql.mechanisms import validate_privacy
from dpsql.plan import PrivacyPlan


@dataclass(frozen=True)
class Composed:
    """Compiled parts charged as one statement: ``cost`` covers them all, each part spends
    exactly its ``epsilon_shares`` entry (checked exactly when built)."""

    sql: str
    parts: tuple[CompiledQuery, ...]
    cost: Cost

    def __post_init__(self) -> None:
        self.verify_cost()

    @property
    def labels(self) -> tuple[str, ...]:
        raise NotImplementedError

    @property
    def epsilon_shares(self) -> tuple[float, ...]:
        raise NotImplementedError

    def verify_cost(self) -> None:
        """Each part spends exactly its share of ε, and the parts' ε and δ sum to at most the
        charge, in exact rationals. Each part's cost is read as its decimal, as the part's own
        check reads it against its mechanisms (``PrivacyPlan.verify_cost``); a part's own ε
        is the decimal its text wrote, and shares are never above theirs in either reading
        (``share_at_most``)."""
        shares = self.epsilon_shares
        if len(self.parts) != len(shares) or not self.parts:
            raise InternalError(f"{len(shares)} shares of epsilon, {len(self.parts)} queries")
        spent_eps = sum((as_fraction(p.cost.epsilon) for p in self.parts), Fraction(0))
        spent_delta = sum((as_fraction(p.cost.delta) for p in self.parts), Fraction(0))
        if any(Fraction(p.cost.epsilon) != Fraction(s) for p, s in zip(self.parts, shares,
                                                                        strict=True)) or \
                spent_eps > as_fraction(self.cost.epsilon) or \
                spent_delta > as_fraction(self.cost.delta):
            raise InternalError(f"statement cost {self.cost} differs from its parts': "
                                + "; ".join(f"{s} {p.cost}" for s, p in self.labelled))

    @property
    def labelled(self) -> list[tuple[str, CompiledQuery]]:
        return list(zip(self.labels, self.parts, strict=True))

    @property
    def plan(self) -> PrivacyPlan:
        return self.parts[0].plan

    @property
    def events(self) -> tuple[MechanismEvent, ...]:
        """Every part's mechanisms, as the accountant composes them."""
        return tuple(e for part in self.parts for e in part.events)

    @property
    def dataset(self) -> str:
        """Every private table any part reads (the charge counts against each's budget)."""
        names = dict.fromkeys(n for p in self.parts for n in p.plan.private_tables)
        return DATASETS_SEPARATOR.join(names)

    @property
    def statistics_per_unit(self) -> int:
        """Released cells one person can change over all parts: the sum of the parts'."""
        return sum(p.plan.statistics_per_unit for p in self.parts)

    @property
    def mechanism(self) -> str:
        """The parts' mechanisms, each named once, e.g. ``laplace+truncated_geometric``."""
        kinds = [k for p in self.parts for k in p.plan.mechanism.split("+") if k]
        return "+".join(dict.fromkeys(kinds))

    @functools.cached_property
    def release_digest(self) -> str:
        """The SHA-256 of the labels, every part's own release digest and the statement."""
        text = "\n".join(f"{s}={p.release_digest}" for s, p in self.labelled)
        return hashlib.sha256(f"{self.cost}\n{text}\n{self}".encode()).hexdigest()

    @property
    def salted(self) -> bool:
        return any(p.salted for p in self.parts)

    def bounded_sql(self, dialect: str | None = None, *, pretty: bool = False) -> str:
        """Every part's bounded query, each after a comment naming it."""
        return ";\n".join(f"-- {self.kind} {s}\n{p.bounded_sql(dialect, pretty=pretty)}"
                          for s, p in self.labelled)

    kind = "part"


@dataclass(frozen=True)
class ComposedQuery(Composed):
    """A statement of several releases: its parts (``names`` as the statement calls them),
    the ε each was given, and ``outer``, the statement over their released tables
    (``__dp_part_<i>``, DuckDB SQL), which reads nothing else."""

    names: tuple[str, ...] = ()
    shares: tuple[float, ...] = ()
    outer: str = ""
    columns: tuple[str, ...] = ()
    """The statement's output columns (``output_columns``)."""
    projected: tuple[tuple[int, int] | None, ...] | None = None
    """Per output column, the (part, column) whose interval it keeps (``projections``):
    part -1 for a UNION ALL of the parts as they are; None: no interval."""

    @property
    def labels(self) -> tuple[str, ...]:
        return self.names

    @property
    def epsilon_shares(self) -> tuple[float, ...]:
        return self.shares

    def __str__(self) -> str:
        return "\n".join([f"composed statement of {len(self.parts)} releases: cost {self.cost}",
                          *(f"part {s}:\n{p.plan}" for s, p in self.labelled),
                          f"post-processing: {self.outer}"])


def statement_parameters(written: Sequence[tuple[float | None, float | None]],
                         epsilon: float | None, delta: float | None, default_epsilon: float,
                         default_delta: float, remaining: tuple[float, float] | None = None
                         ) -> tuple[float, float]:
    """The statement's (ε, δ): ``remaining`` (what is left after paid estimates), else the
    call's; else, when every part names its own, their sum (rounded up); else the default.
    Refused (PrivacyError) when the parts' own ask more than that, or all of ε while other
    parts name none."""
    total = []
    for i, (call, default, name) in enumerate(((epsilon, default_epsilon, "epsilon"),
                                               (delta, default_delta, "delta"))):
        own = [w[i] for w in written if w[i] is not None]
        fixed = sum((as_fraction(v) for v in own), Fraction(0))
        value = remaining[i] if remaining is not None else call if call is not None else \
            total_at_least(fixed) if len(own) == len(written) else default
        if call is not None and len(own) == len(written) and fixed != as_fraction(call):
            raise PrivacyError(
                f"every part names its own {name}, adding up to {float(fixed):g}, and the "
                f"call passes {name}={call!r}; give {name} in one place (the budget is charged "
                "for exactly one)")
        if fixed > as_fraction(value) or (fixed == as_fraction(value) and i == 0
                                          and len(own) < len(written)):
            raise PrivacyError(
                f"the parts' own {name} (OPTIONS ({name} = ...)) add up to {float(fixed):g}, "
                f"which leaves nothing of the statement's {name}={value:g} for the "
                f"{len(written) - len(own)} other parts; give the statement more "
                f"(e.g. {name}={2 * float(fixed):g}) or each part its own {name}")
        total.append(value)
    return validate_privacy(total[0], total[1])


def epsilon_shares(total: float, written: Sequence[float | None],
                   weights: Sequence[int]) -> list[float]:
    """Each part's ε: its own, or a share of what the parts' own leave of ``total`` in
    proportion to its weight (its released statistics per unit), the largest float not
    above it, read as binary or decimal (docs/mechanisms.md §15).

    >>> epsilon_shares(1.0, [None, None], [1, 2]), epsilon_shares(1.0, [0.25, None], [1, 1])
    ([0.3333333333333333, 0.6666666666666666], [0.25, 0.75])
    """
    fixed = sum((as_fraction(w) for w in written if w is not None), Fraction(0))
    weight = sum(v for w, v in zip(written, weights, strict=True) if w is None)
    rest = as_fraction(total) - fixed
    return [w if w is not None else share_at_most(rest * v / weight)
            for w, v in zip(written, weights, strict=True)]


def compiled_parts(compile_one: Callable[[int, float, float], CompiledQuery],
                   epsilons: Sequence[float], delta: float,
                   written: Sequence[float | None]) -> tuple[CompiledQuery, ...]:
    """Part i compiled by ``compile_one(i, ε_i, δ_i)``: δ_i its own, else an equal share of
    what the parts' own leave, given only to the parts that spend δ (private keys, Gaussian
    noise). Which parts those are follows from their plans, never the data."""
    free = as_fraction(delta) - sum((as_fraction(w) for w in written if w is not None),
                                    Fraction(0))

    def compiled(users: Sequence[bool]) -> tuple[CompiledQuery, ...]:
        share = free / max(sum(users), 1)
        return tuple(compile_one(i, e, w if w is not None else
                                 share_at_most(share) if u else 0.0)
                     for i, (e, w, u) in enumerate(zip(epsilons, written, users, strict=True)))

    opened = [w is None for w in written]
    parts = compiled(opened)
    users = [o and p.cost.delta > 0 for o, p in zip(opened, parts, strict=True)]
    if users != opened and any(users):
        parts = compiled(users)
    return parts


def compile_composed(sql: str, ast: exp.Expression, found: Composition, catalog: Catalog, *,
                     epsilon: float | None, delta: float | None, default_epsilon: float,
                     default_delta: float, remaining: tuple[float, float] | None,
                     engine: EngineTraits = DUCKDB, **options: Any) -> ComposedQuery:
    """The parts of ``found`` compiled at their shares of the statement's (ε, δ) (``remaining``
    replaces it, as in ``compile_query``); the charge is ε, and δ if any part spends δ."""
    written = [written_parameters(p) for p in found.parts]
    total = statement_parameters(written, epsilon, delta, default_epsilon, default_delta,
                                 remaining)

    def compile_one(i: int, eps: float, dlt: float) -> CompiledQuery:
        return CompiledQuery.of(analyze(found.parts[i], catalog, **options,
                                        default_epsilon=total[0], default_delta=total[1],
                                        remaining=(eps, dlt)), engine)

    equal = epsilon_shares(total[0], [w[0] for w in written], [1] * len(written))
    deltas = [w[1] for w in written]
    weights = [p.plan.statistics_per_unit for p in compiled_parts(compile_one, equal, total[1],
                                                                  deltas)]
    epsilons = epsilon_shares(total[0], [w[0] for w in written], weights)
    parts = compiled_parts(compile_one, epsilons, total[1], deltas)
    spends_delta = any(p.cost.delta > 0 for p in parts)
    columns = [[c.name for c in p.plan.columns] for p in parts]
    projected = projections(found.outer, columns, [not p.plan.keys for p in parts])
    outer = guard_division(found.outer, floor=False).sql(dialect="duckdb")
    return ComposedQuery(sql=sql, parts=parts, names=found.labels, shares=tuple(epsilons),
                         cost=Cost(epsilon=total[0], delta=total[1] if spends_delta else 0.0),
                         outer=outer, columns=output_columns(outer, columns),
                         projected=None if projected is None else tuple(
                             _with_interval(p, parts) for p in projected))


def output_columns(outer: str, columns: list[list[str]]) -> tuple[str, ...]:
    """The columns of ``outer`` over the parts' tables, found by running it in DuckDB over
    empty tables (every column of NULL type): a name it cannot bind is refused here, before
    anything is charged, by a message that depends on the query text only."""
    con = duckdb.connect()
    try:
        for i, names in enumerate(columns):
            con.register(f"{PART}{i}", pa.table({n: pa.nulls(0) for n in names}))
        return tuple(con.sql(outer).columns)
    except duckdb.Error as error:
        raise UnsupportedQueryError(
            f"the query around the releases does not run over their columns: "
            f"{str(error).splitlines()[0]}; the parts release "
            + "; ".join(f"{PART}{i}: {', '.join(names)}" for i, names in enumerate(columns))
        ) from None
    finally:
        con.close()


def _with_interval(projection: tuple[int, int] | None, parts: tuple[CompiledQuery, ...]
                   ) -> tuple[int, int] | None:
    """``projection`` if the part's column is an aggregate (it has an interval)."""
    if projection is None:
        return None
    part, column = projection
    if part >= 0 and parts[part].plan.columns[column].aggregate is None:
        return None
    return projection


__all__ = ["Composed", "ComposedQuery", "compile_composed", "composition"]
