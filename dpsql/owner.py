"""The bounds and limits a catalog needs, learned from the data privately: the data owner's
tools (``suggest_bounds``, ``bounding_report``) and the estimates of what a catalog declares
``"auto"`` (``estimate_bounds``, ``estimate_limits``).

Each runs ordinary private queries on a connection — the histograms of ``dpsql.suggest``
and ``dpsql.autobounds`` —, charged like any other: these are releases, paid from the
budget, never peeks. The connection's methods of the same names call these functions;
they live apart from ``Connection`` because they are clients of it (they ask it questions)
rather than part of how it answers one. ``con.evaluate`` (noise-free, owner only) is in
``dpsql.evaluate``.

An analyst's query over a column declared ``bounds="auto"`` pays for its estimate from its
own budget (``estimate_first``): the estimate then stands in the connection's catalog, and
later queries use it for free.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Protocol

from sqlglot import exp

from dpsql import autobounds, suggest
from dpsql.accounting.values import Cost, total
from dpsql.errors import (
    BoundsNeeded,
    CatalogError,
    PrivacyWarning,
    ProgrammingError,
    UnsupportedQueryError,
)

if TYPE_CHECKING:
    from dpsql.accounting import BudgetKeeper
    from dpsql.catalog import Catalog, TableInfo
    from dpsql.compile import CompiledQuery
    from dpsql.plan import PrivacyPlan


class Asker(Protocol):
    """What these tools need of a connection (``dpsql.connection.Connection``): its catalog
    and budget, and its two ways of asking."""

    catalog: Catalog
    budget: BudgetKeeper

    def sql(self, query: str, *, epsilon: float | None = None,
            delta: float | None = None) -> Any:
        """The noisy answer to ``query`` (a ``Result``), charged."""

    def compile(self, query: str, *, dialect: str | None = None) -> CompiledQuery:
        """``query`` compiled against the catalog; no data read."""


def suggest_bounds(con: Asker, table: str, *, epsilon: float, delta: float,
                   group_by: str | None = None,
                   coverage: float = suggest.COVERAGE) -> suggest.BoundsSuggestion:
    """Propose value bounds and contribution limits for ``table`` from its data,
    privately (``dpsql.suggest``): private histograms charged like any query, the
    budget split evenly over them. ``group_by`` names the column queries will group
    by, for its group limits. The catalog is not changed: register the table again
    with ``**suggestion.options()``, or paste ``suggestion.toml()`` into its entry.

    >>> import dpsql
    >>> from dpsql.datasets import pums_path
    >>> con = dpsql.connect(budget=dpsql.Budget(epsilon=2.0, delta=1e-6), seed=1)
    >>> con.register("pums", str(pums_path("PUMS_dup")), privacy_unit="pid")
    >>> s = suggest_bounds(con, "pums", epsilon=1.0, delta=1e-6)
    >>> s.bounds["age"], s.max_rows_per_unit
    ((0.0, 128.0), 4)
    """
    info = con.catalog.get(table)
    if group_by is not None and group_by.lower() not in set(info.columns) - {
            info.privacy_unit}:
        raise CatalogError(f"group_by={group_by!r} is not a column of {info.name} other "
                           "than its privacy unit")
    if not 0 < coverage < 1:
        raise ProgrammingError(f"coverage={coverage!r}: need 0 < coverage < 1, e.g. 0.95")
    group = group_by.lower() if group_by else None
    columns = suggest.numeric_columns(info, group)
    limits = [] if info.privacy_unit is None else ["max_rows_per_unit"] + (
        [] if group is None else ["max_groups_per_unit", "max_rows_per_group"])
    answers, cost = released(
        con, [autobounds.histogram_sql(info, c) for c in columns] +
        [suggest.contribution_sql(info, limit, [group] if group else []) for limit in limits],
        epsilon, delta)
    bounds = {c: autobounds.bounds_from_bins(rows) for c, rows in
              zip(columns, answers[:len(columns)], strict=True)}
    histograms = dict(zip(limits, answers[len(columns):], strict=True))
    found = {limit: suggest.limit_from_bins(rows, coverage=coverage)
             for limit, rows in histograms.items()}
    return suggest.BoundsSuggestion(info.name, bounds, group_by=group, cost=cost, **found,
                                    cuts=_suggested_cuts(bounds, answers, histograms, found))


def _suggested_cuts(bounds: dict[str, tuple[float, float]], answers: list[list[tuple]],
                    histograms: dict[str, list[tuple]], found: dict[str, int | None]
                    ) -> tuple[suggest.SuggestedCut, ...]:
    """What each suggestion cuts, from the histograms already released (free): the limits'
    own, and for bounds the value histograms against the people the rows histogram counts."""
    rows = histograms.get("max_rows_per_unit")
    people = None if rows is None else suggest.people_in(rows)
    cuts = [suggest.limit_cut(name, limit, histograms[name])
            for name, limit in found.items() if limit]
    cuts += [suggest.bounds_cut(column, bound, answer, people)
             for (column, bound), answer in zip(bounds.items(), answers[:len(bounds)],
                                                strict=True)]
    return tuple(cuts)


def bounding_report(con: Asker, query: str, *, epsilon: float, delta: float,
                    dialect: str | None = None) -> suggest.BoundingReport:
    """What the query's contribution limits and clamps cut, estimated privately: for
    each limit, the share of people whose rows it drops (from private histograms of
    contributions, as ``suggest_bounds`` draws them, over the rows the query's WHERE
    keeps) and the limit that would keep 95% of them whole; for each clamp of a summed
    or averaged column, the share of values outside it; a warning with the fix when
    either surely cuts 5% or more (``suggest.WARN_SHARE``).
    A paid release of its own (``epsilon``, ``delta`` split over the histograms), on
    request: answering a query does not run it. One private table, no joins.
    """
    plan = con.compile(query, dialect=dialect).plan
    if len(plan.private_tables) != 1 or not isinstance(plan.relation, str) or \
            plan.privacy_unit is None:
        raise UnsupportedQueryError(
            "bounding_report covers queries over one private table with a privacy unit "
            "(no joins or subqueries): ask suggest_bounds for each table instead")
    info = con.catalog.get(plan.private_tables[0])
    keys = [k.column for k in plan.keys if isinstance(k.column, str)]
    limits, clamped = _declared_limits(plan, keys), _clamped_columns(plan, info)
    answers, cost = released(
        con, [suggest.contribution_sql(info, name, keys, plan.where) for name, _ in limits] +
        [autobounds.histogram_sql(info, column, plan.where) for column in clamped],
        epsilon, delta)
    checks = [suggest.LimitCheck(name, limit, suggest.share_above(rows, limit),
                                 suggest.limit_from_bins(rows, coverage=suggest.COVERAGE))
              for (name, limit), rows in zip(limits, answers[:len(limits)], strict=True)]
    checks += [suggest.ClampCheck(column, info.bounds[column],
                                  suggest.share_outside(rows, *info.bounds[column]),
                                  autobounds.bounds_from_bins(rows))
               for column, rows in zip(clamped, answers[len(limits):], strict=True)]
    return suggest.BoundingReport(query, tuple(checks), cost)


def _declared_limits(plan: PrivacyPlan, keys: list[str]) -> list[tuple[str, int]]:
    """The contribution limits the query applies, by name (the per-group ones only for a
    grouped query)."""
    limits = plan.contribution
    declared = {"max_rows_per_unit": limits.max_rows_per_unit,
                "max_groups_per_unit": limits.max_groups_per_unit if keys else None,
                "max_rows_per_group": limits.max_rows_per_group}
    return [(name, limit) for name, limit in declared.items() if limit]


def _clamped_columns(plan: PrivacyPlan, info: TableInfo) -> list[str]:
    """The table's columns the query sums or averages, clamped to their declared bounds."""
    return sorted({spec.expr.name.lower() for spec in plan.stats
                   if spec.kind in ("sum", "centered_sum") and not spec.per_group
                   and isinstance(spec.expr, exp.Column)
                   and spec.expr.name.lower() in info.bounds})


def released(con: Asker, queries: list[str], epsilon: float, delta: float
             ) -> tuple[list[list[tuple]], Cost]:
    """Run private helper queries with (ε, δ) split evenly over them (checked against
    the budget before the first runs): each one's rows, and what they spent together."""
    each_e, each_d = suggest.shares(epsilon, delta, max(len(queries), 1))
    con.budget.check(epsilon, delta)
    results = [con.sql(sql, epsilon=each_e, delta=each_d) for sql in queries]
    return [r.fetchall() for r in results], total(r.cost for r in results)


def estimate_first(con: Asker, need: BoundsNeeded) -> tuple[tuple[float, float], Cost]:
    """Estimate the ``"auto"`` bounds and limits a query needs from its own budget: the
    (ε, δ) left for the query, and what the estimates were charged (part of the query's
    cost). A rows limit is estimated together with the bounds of the columns the query
    sums or averages on that table, chosen for the query (``estimate_limits``).

    The whole query's cost is checked against the budget first, so a query that could
    not be paid in full spends nothing on its bounds.
    """
    limited = {table for table, _ in need.limits}
    cells = {(t, c) for t, c, use in need.served if t in limited and use in ("sum", "avg")}
    each_e, each_d, rest_e, rest_d = autobounds.split(
        need.epsilon, need.delta, len(need.columns) + len(need.limits) + len(cells))
    con.budget.check(need.epsilon, need.delta)
    tally = _Tally(con)
    for table, _ in need.limits:
        estimate_limits(tally, table, epsilon=each_e, delta=each_d,
                        served=[(c, use) for t, c, use in need.served if t == table],
                        query_epsilon=rest_e, groups=need.groups, shares=need.shares)
    for table, column in need.columns:
        if table not in limited:
            estimate_column_bounds(tally, con.catalog.get(table), column, epsilon=each_e,
                                   delta=each_d, query_epsilon=rest_e, groups=need.groups,
                                   levels=[use for t, c, use in need.served
                                           if (t, c) == (table, column)])
    return (rest_e, rest_d), total(tally.paid)


class _Tally:
    """A connection that keeps what each of its answers cost (what ``estimate_first``
    charged)."""

    def __init__(self, con: Asker) -> None:
        self.con, self.catalog, self.budget = con, con.catalog, con.budget
        self.paid: list[Cost] = []

    def sql(self, query: str, *, epsilon: float | None = None,
            delta: float | None = None) -> Any:
        result = self.con.sql(query, epsilon=epsilon, delta=delta)
        self.paid.append(result.cost)
        return result

    def compile(self, query: str, *, dialect: str | None = None) -> CompiledQuery:
        return self.con.compile(query, dialect=dialect)


def estimate_bounds(con: Asker, table: str, column: str, *, epsilon: float,
                    delta: float) -> tuple[float, float]:
    """Estimate the bounds of a column declared ``bounds="auto"`` (``dpsql.autobounds``).

    A private query, charged like any other; the bounds then replace ``"auto"`` in this
    connection's catalog, and queries use them for free. Queries that need them call
    this with a share of their own budget; call it to choose the share yourself.
    Returns (lo, hi).
    """
    info = con.catalog.get(table)
    if column.lower() not in info.auto_bounds:
        raise CatalogError(f'{info.name}.{column} is not declared bounds="auto" (or its '
                           "bounds are already estimated: see catalog.get(table).bounds)")
    return estimate_column_bounds(con, info, column.lower(), epsilon=epsilon, delta=delta)


def estimate_column_bounds(con: Asker, info: TableInfo, name: str, *, epsilon: float,
                           delta: float, query_epsilon: float | None = None, groups: int = 1,
                           levels: Sequence[str | float] = ()) -> tuple[float, float]:
    """``estimate_bounds`` for any numeric column: also those a query in the BigQuery
    syntax leaves to the engine, as ZetaSQL does (``SUM(x)`` with no bounds). The bounds
    are chosen for a sum over ``groups`` groups at ``query_epsilon``
    (``autobounds.bounds_for_error``; with none given, at what ``AUTO_SHARE`` would leave
    a query that spent ``epsilon`` on them), or, when the query's uses of the column
    (``levels``: "sum", "avg" or a quantile's level) are all quantiles, for them
    (``autobounds.bounds_for_quantile``)."""
    rows = con.sql(autobounds.histogram_sql(info, name), epsilon=epsilon,
                   delta=delta).fetchall()
    per_unit = 1 if info.row_level else info.max_rows_per_unit or 1
    quantiles = [q for q in levels if not isinstance(q, str)]
    if quantiles and len(quantiles) == len(levels):
        lo, hi = autobounds.bounds_for_quantile(rows, min(quantiles), max(quantiles))
    else:
        lo, hi = autobounds.bounds_for_error(
            rows, noise_per_unit=autobounds.noise_per_unit(
                _query_epsilon(epsilon, query_epsilon), per_unit), groups=groups)
    con.catalog.add(dataclasses.replace(
        info, bounds={**info.bounds, name: (lo, hi)},
        auto_bounds=tuple(c for c in info.auto_bounds if c != name)))
    why = "bounds=\"auto\"" if name in info.auto_bounds else "none declared"
    warnings.warn(f"{info.name}.{name}: bounds estimated as [{lo:g}, {hi:g}] with "
                  f"epsilon={epsilon:g}, delta={delta:g} ({why})", PrivacyWarning,
                  stacklevel=4)
    return lo, hi


def _query_epsilon(epsilon: float, query_epsilon: float | None) -> float:
    """The ε of the query an estimate serves: given, or what ``AUTO_SHARE`` would leave a
    query that spent ``epsilon`` on it (3ε)."""
    if query_epsilon is not None:
        return query_epsilon
    share = autobounds.AUTO_SHARE[0]
    return float(Fraction(epsilon) * (1 - share) / share)


def estimate_limits(con: Asker, table: str, *, epsilon: float, delta: float,
                    served: Sequence[tuple[str, str | float]] = (),
                    query_epsilon: float | None = None, groups: int = 1,
                    shares: int = autobounds.NOISE_STATISTICS) -> int:
    """Estimate a ``max_rows_per_unit="auto"`` (the only limit that may be ``"auto"``:
    the others depend on each query's GROUP BY), with the ``"auto"`` bounds of the columns
    the query ``served`` (column, and "sum", "avg" or a quantile's level q): a private
    histogram of people by their rows (``dpsql.suggest``) and one of each column's
    magnitudes, one row per person (``dpsql.autobounds``), then, for each column summed or
    averaged, people by (rows bin, value bin) over the bins those released
    (``suggest.cells_sql``), each at (``epsilon``, ``delta``); then the limit and bounds
    that minimise the expected error of the query's statistics (with no column, a count)
    over ``groups`` groups at ``query_epsilon`` split over ``shares`` noisy columns
    (``suggest.limit_for_error``; 1 if no bin is released). Private queries, charged like
    any other; the limit and bounds then replace ``"auto"`` in this connection's catalog
    (with no per-group limit declared, the limit caps rows per group too), and a column
    whose aggregates are better served by fewer rows keeps its own (``TableInfo.rows_for``).
    Queries that need it call this with a share of their own budget. Returns the limit.
    """
    info = con.catalog.get(table)
    if "max_rows_per_unit" not in info.auto_limits:
        raise CatalogError(f'{info.name}.max_rows_per_unit is not declared "auto" (or is '
                           "already estimated: see catalog.get(table).max_rows_per_unit)")
    # The histograms have one row per person whatever their rows: they need no row limit.
    con.catalog.add(dataclasses.replace(info, auto_limits=()))
    try:
        rows = con.sql(suggest.contribution_sql(info, "max_rows_per_unit"),
                       epsilon=epsilon, delta=delta).fetchall()
        values = {c: con.sql(autobounds.histogram_sql(info, c), epsilon=epsilon,
                             delta=delta).fetchall() for c in sorted({c for c, _ in served if c})}
        edges = sorted({int(edge) for edge, n in rows if edge is not None})
        cells = {c: con.sql(suggest.cells_sql(info, c, edges, labels), epsilon=epsilon,
                            delta=delta).fetchall()
                 for c in sorted({c for c, use in served if use in ("sum", "avg")})
                 if edges and (labels := sorted({v for v, _ in values[c] if v is not None}))}
    except BaseException:
        con.catalog.add(info)
        raise
    counts = any(use == "count" for _, use in served)
    limit, bounds, own = suggest.limit_for_error(
        rows, values, served=served, groups=groups, cells=cells,
        counted=[c for c in values if counts and c in info.not_null],
        noise_per_row=autobounds.noise_per_unit(_query_epsilon(epsilon, query_epsilon), 1,
                                                shares))
    con.catalog.add(dataclasses.replace(
        info, max_rows_per_unit=limit, auto_limits=(), bounds={**info.bounds, **bounds},
        auto_bounds=tuple(c for c in info.auto_bounds if c not in bounds), rows_for=own))
    said = "".join(f", {info.name}.{c} in [{lo:g}, {hi:g}]"
                   + (f" over {own[c]} rows per person" if c in own else "")
                   for c, (lo, hi) in bounds.items())
    warnings.warn(f"{info.name}.max_rows_per_unit estimated as {limit}{said} with "
                  f"epsilon={epsilon:g}, delta={delta:g} each (\"auto\")", PrivacyWarning,
                  stacklevel=3)
    return limit
