"""The rewrite stage: a PrivacyPlan becomes SQL that enforces its bounds.

The bounded query aggregates per (unit, group) first, keeps at most
``max_groups_per_unit`` groups per unit chosen by a keyed hash with a fresh
secret salt (independent of values), bounds each unit's per-group partials (counts to c
rows, sums weighted to c values at the unit's mean: ``values.weighted_partial``),
scales a unit's partials down if it exceeds ``max_rows_per_unit``, and then
aggregates per group. Two plans choose over the rows themselves, in the same order and
so the same pairs: quantiles by private groups beside counts rank the rows in a window
(``_quantiles_of_kept_rows``), and counts alone at one group per unit take the smallest
order over each unit's rows (``_counts_of_first_groups``).
The tree is dialect-neutral sqlglot; backends print it in their dialect.

>>> from dpsql.analysis import analyze
>>> from dpsql.catalog import Catalog, TableInfo
>>> cat = Catalog()
>>> _ = cat.add(TableInfo.private("t", columns={"pid": "INT", "x": "INT"}, row_privacy=True,
...                               bounds={"x": (0, 5)}))
>>> sql = rewrite(analyze("SELECT SUM(x) FROM t", cat, epsilon=1, delta=0))
>>> print(sql.ast.sql(pretty=True, max_text_width=40))
SELECT
  CAST(COALESCE(
    SUM(
      CASE
        WHEN x IS NULL
        THEN NULL
        ELSE LEAST(GREATEST(x, 0), 5)
      END
    ),
    0
  ) AS DOUBLE) AS __dp_s0
FROM t
"""

from __future__ import annotations

import math
from collections.abc import Callable

from sqlglot import exp

from dpsql.expr.nodes import (
    COMPUTE_ONCE,
    INLINED_FORM,
    ArgMinNull,
    as_bigint,
    as_double,
    exact_sum,
    number,
)
from dpsql.expr.totality import error_free
from dpsql.plan import BoundedQuery, GroupKey, PrivacyPlan, StatSpec
from dpsql.rewrite import distinct, quantiles
from dpsql.rewrite.digest import (
    SALT_CONSTANTS,
    integer_unit,
    key_code,
    keyed_hash,
    salt_constants,
    unit_order,
)
from dpsql.rewrite.expressions import same_keys, source
from dpsql.rewrite.packing import packed
from dpsql.rewrite.values import (
    RowValues,
    aggregate,
    group_partial,
    in_quanta,
    limit,
    weighted_partial,
)
from dpsql.rewrite.widths import read_within_widths

UNIT = "__dp_unit"
RANK = "__dp_rank"
FACTOR = "__dp_factor"
ROWS = "__dp_rows"
PAIRS = "__dp_pairs"
RECORDS = "__dp_records"
HEAVY = "__dp_heavy"
KEPT = "__dp_kept"
CODES = "__dp_codes"
CODE = "__dp_code"
GROUP_RANK = "__dp_grank"
FIRST = "__dp_first"
OPENS = "__dp_opens"
GROUP_RANKS = 2**32
"""Groups' ranks count modulo 2³² below the order of ``_keep_first``: order < 2³¹, so the
BIGINT key cannot overflow; only past 2³² distinct groups can two ranks tie."""


def rewrite(plan: PrivacyPlan) -> BoundedQuery:
    """Build the bounded aggregate query for ``plan``; the group choice reads the salt from
    the query parameter ``digest.SALT`` (bound by the backend for each run)."""
    query = _row_level(plan) if plan.row_level else _unit_level(plan)
    return BoundedQuery(read_within_widths(query, plan.reads))


def _keys(plan: PrivacyPlan) -> list[exp.Column]:
    return [exp.column(k) for k in plan.key_names]


def _output_columns(query: exp.Select) -> list[exp.Column]:
    """Columns naming each output of ``query`` — as identifiers, never re-parsed as SQL
    (a key named "a b" or "x, pid" stays one column)."""
    return [exp.column(item.alias_or_name) for item in query.expressions]


def _filter(plan: PrivacyPlan, unit: exp.Expression | None) -> exp.Expression | None:
    """WHERE of the query, plus unit IS NOT NULL."""
    parts = [exp.paren(error_free(plan.where, plan.column_types))] if plan.where is not None else []
    if unit is not None:
        parts.append(exp.Not(this=exp.Is(this=unit, expression=exp.Null())))
    return exp.and_(*parts) if parts else None


def _domain_values(key: GroupKey) -> list[exp.Expression]:
    """The public domain's values (``catalog.key_values``) as literals of their type
    (sqlglot's ``convert``: exact integers, typed dates and timestamps); floats as
    ``number`` writes them.

    >>> import datetime as dt
    >>> key = GroupKey("d", "d", (dt.date(2024, 1, 31), dt.datetime(2024, 1, 31, 9), True,
    ...                           2**60 + 1, 0.5, "a", None))
    >>> print(", ".join(v.sql("duckdb") for v in _domain_values(key)))
    CAST('2024-01-31' AS DATE), CAST('2024-01-31 09:00:00' AS TIMESTAMP), TRUE, \
1152921504606846977, 0.5, 'a'
    """
    return [number(v) if isinstance(v, float) else exp.convert(v)
            for v in key.domain if v is not None]


def _in_domain(plan: PrivacyPlan) -> exp.Expression | None:
    """Public-domain membership of the keys (values outside a public domain are dropped)."""
    parts = []
    for key in plan.keys:
        if key.public:
            values = _domain_values(key)
            parts.append(exp.In(this=exp.column(key.column), expressions=values)
                         if values else exp.false())
    return exp.and_(*parts) if parts else None


def _pairs_in_domain(plan: PrivacyPlan) -> exp.Expression | None:
    """Public-domain membership of (unit, group) pairs, as semi-joins with the domain values.

    Not an IN list: engines push a filter on grouping keys below the aggregate, and
    DuckDB runs an IN list of six or more values as a hash join over every row (a
    third of the per-unit floor at 10M rows); a semi-join stays on the pairs.
    """
    parts = []
    for key in plan.keys:
        if key.public:
            values = _domain_values(key)
            if not values:
                parts.append(exp.false())
                continue
            table = exp.values([(v,) for v in values], alias="__dp_d", columns=["v"])
            members = exp.select("v").from_(table, copy=False).subquery(copy=False)
            parts.append(exp.In(this=exp.column(key.column), query=members))
    return exp.and_(*parts) if parts else None


def _row_level(plan: PrivacyPlan) -> exp.Select:
    """Every row is its own unit: clamp values and aggregate per group directly."""
    values = RowValues(plan.stats, plan.column_types, plan.column_bounds)
    items = _keys(plan)
    for spec in plan.stats:
        if spec.kind in ("units", "rows"):
            final = as_bigint(exp.Count(this=exp.Star()))
        elif spec.kind in ("count", "distinct"):
            final = as_bigint(aggregate(spec, values.inline(spec)))
        else:
            final = as_double(aggregate(spec, values.inline(spec)))
        items.append(exp.alias_(final, spec.name))
    conditions = [c for c in (_filter(plan, None), _in_domain(plan)) if c is not None]
    where = exp.and_(*conditions) if conditions else None
    if not items:  # a global query of quantiles only: one row to attach them to
        return quantiles.attach(plan, _one_row(), lambda spec: quantiles.row_weights(
            plan, spec, where))
    query = exp.select(*items).from_(source(plan), copy=False)
    if where is not None:
        query = query.where(where.copy(), copy=False)
    if plan.keys:
        query = query.group_by(*_keys(plan), copy=False)
    if not plan.histograms:
        return query
    return quantiles.attach(plan, query, lambda spec: quantiles.row_weights(plan, spec, where))


def _one_row() -> exp.Select:
    return exp.select(exp.alias_(number(1), "__dp_one"))


def pair_partial(spec: StatSpec, c: int, values: RowValues) -> exp.Expression:
    """One unit's contribution to one group, clamped to the per-group bound (in quanta)."""
    if spec.per_group:
        return group_partial(spec, values)
    if spec.kind == "rows":
        # Every pair has a row: at c = 1 its clamped count is 1, and the pairs' aggregate
        # then has no count to keep (docs/benchmarks.md).
        rows = number(1) if c == 1 else limit(exp.Count(this=exp.Star()), 0, c)
        return in_quanta(rows, spec)
    value = exp.column(values.of[spec.name])
    if spec.kind == "count":
        return in_quanta(limit(exp.Count(this=value), 0, c), spec)
    return weighted_partial(spec, value, c)


def partial_bound(spec: StatSpec, c: int) -> int:
    """The largest |partial| ``pair_partial`` gives: the statistic's per-group bound, or
    the bound of c rows (each clamp above is within it)."""
    return spec.group_bound if spec.per_group else c * spec.row_bound


def _unit_level(plan: PrivacyPlan) -> exp.Select:
    limits = plan.contribution
    c = limits.rows_per_group
    unit = exp.column(plan.privacy_unit)
    if _ranks_rows(plan):
        return _quantiles_of_kept_rows(plan, unit)
    if _first_group_of_rows(plan):
        return _counts_of_first_groups(plan, unit)
    pair_stats = tuple(s for s in plan.stats if s.kind not in ("units", "distinct"))
    values = RowValues(pair_stats, plan.column_types, plan.column_bounds)
    present, counts = quantiles.pair_counts(plan)
    rows = exp.select(exp.alias_(unit.copy(), UNIT), *_keys(plan), *values.select_items(),
                      *present)
    rows = rows.from_(source(plan), copy=False)
    where = _filter(plan, unit)
    if where is not None:
        rows = rows.where(where, copy=False)
    partials = [exp.alias_(pair_partial(s, c, values), s.name) for s in pair_stats] + counts
    if limits.caps_total:
        partials.append(exp.alias_(exp.Count(this=exp.Star()), ROWS))
    bounds = {s.name: partial_bound(s, c) for s in pair_stats}
    kept = _keep_groups(plan, rows, partials, _pairs_in_domain(plan), bounds)
    if limits.caps_total:
        kept = cap_total(plan, kept)
    if not plan.histograms and not distinct.specs(plan):
        return _per_group(plan, kept)
    # Histograms and distinct values join the same kept pairs (so the same groups per unit).
    summed = any(s.kind != "distinct" for s in plan.stats)
    spine = _per_group(plan, exp.select("*").from_(KEPT)) if summed or plan.keys \
        else _one_row()
    query = quantiles.attach(plan, spine, lambda spec: quantiles.unit_weights(
        plan, spec, KEPT, _filter(plan, unit))) if plan.histograms else spine
    if distinct.specs(plan):
        query = distinct.attach(plan, query, KEPT, _filter(plan, unit))
    # Spark computes them once for the histograms' join (docs/benchmarks.md: quantiles
    # gain, the distinct values' join did not).
    kept.meta[COMPUTE_ONCE] = bool(plan.histograms) and _once_on_spark(plan)
    return query.with_(KEPT, as_=kept, copy=False)


def _once_on_spark(plan: PrivacyPlan) -> bool:
    """Whether Spark may compute the kept pairs or rows once (``COMPUTE_ONCE``): not with a
    TIME column among the unit and the keys, which Spark refuses in the non-deterministic
    CTE that does it (UNSUPPORTED_TIME_TYPE); it computes them at each reference instead."""
    return not any(_is_time(plan.column_types.get(column, "")) for column in (
        plan.privacy_unit, *(k.column for k in plan.keys)))


def _ranks_rows(plan: PrivacyPlan) -> bool:
    """Whether the plan's histograms are built from the kept *rows*
    (``_quantiles_of_kept_rows``) rather than from the rows joined to the kept pairs: a
    grouped query of quantiles beside nothing but counts (of units, rows or values,
    without per-group bounds), an integer unit, groups to choose, and no total-rows cap
    (whose total over the kept pairs the pairs carry). Which plan runs depends on the SQL
    text and the declared limits, never on the data.

    >>> from dpsql.analysis import analyze
    >>> from dpsql.catalog import Catalog, TableInfo
    >>> cat = Catalog()
    >>> _ = cat.add(TableInfo.private("t", columns={"pid": "INT", "k": "TEXT", "x": "INT"},
    ...                               privacy_unit="pid", bounds={"x": (0, 5)}))
    >>> def ranks(sql): return _ranks_rows(analyze(sql, cat, epsilon=1, delta=1e-6))
    >>> ranks("SELECT k, MEDIAN(x) FROM t GROUP BY k"), ranks("SELECT MEDIAN(x) FROM t")
    (True, False)
    >>> ranks("SELECT k, MEDIAN(x), COUNT(*), COUNT(x) FROM t GROUP BY k")
    True
    >>> ranks("SELECT k, MEDIAN(x), SUM(x) FROM t GROUP BY k")
    False
    """
    return (bool(plan.histograms and plan.keys) and not plan.contribution.caps_total
            and all(s.kind in ("units", "rows", "count") and not s.per_group
                    for s in plan.stats)
            and integer_unit(plan.column_types.get(plan.privacy_unit, ""))
            and _public_domain_size(plan) > plan.contribution.groups_per_unit)


def _quantiles_of_kept_rows(plan: PrivacyPlan, unit: exp.Column) -> exp.Select:
    """The groups' histograms and counts from each unit's rows in its first g groups,
    ranked over the rows themselves: no (unit, group) aggregate, and no join of the rows
    back to the kept pairs.

    Each row joins its group's codes (``_coded``) and carries its pair's order, ``order ·
    2³² + rank`` (``_pair_ordered``: the same BIGINT that ``_keep_first`` orders the pairs
    by). Over a window of the unit's rows in that order, the pair's ``DENSE_RANK`` is its
    rank among the unit's pairs, so rank ≤ g keeps the same pairs; a pair's rows are peers,
    so each histogram's n is ``COUNT(bucket)`` over the peers (``RANGE`` from the current
    row to the current row), and so is each count's (``COUNT(*)``, ``COUNT(value)``); the
    pair's first row is the one whose ``ROW_NUMBER`` equals its ``RANK``: it carries the
    pair's clamped counts (``pair_partial``'s) and counts the pair for the units. The
    histograms then sum the same per-value weights (``quantiles.kept_row_weights``) as the
    join of the rows to the kept pairs, and the keys come from the codes by the group's
    rank. Spark runs the same SQL, with the kept rows computed once (``COMPUTE_ONCE``).
    """
    g = plan.contribution.groups_per_unit
    buckets = [exp.alias_(quantiles.bucket(spec, plan.column_types, plan.column_bounds),
                          quantiles.bucket_column(spec)) for spec in plan.histograms]
    counted = tuple(s for s in plan.stats if s.kind in ("rows", "count"))
    values = RowValues(counted, plan.column_types, plan.column_bounds)
    ordered, with_codes = _rows_in_pair_order(plan, unit, [*values.select_items(), *buckets])
    in_order = exp.Order(expressions=[exp.Ordered(this=exp.column(FIRST))])

    def over(function: exp.Expression, pair: bool = False) -> exp.Window:
        frame = exp.WindowSpec(kind="RANGE", start="CURRENT ROW", end="CURRENT ROW") \
            if pair else None
        return exp.Window(this=function, partition_by=[exp.column(UNIT)],
                          order=in_order.copy(), spec=frame)

    counts = [exp.alias_(over(exp.Count(this=exp.column(quantiles.bucket_column(spec))),
                              pair=True), quantiles.values_column(spec))
              for spec in plan.histograms]
    counts += [exp.alias_(over(exp.Count(this=exp.Star() if spec.kind == "rows"
                                         else exp.column(values.of[spec.name])), pair=True),
                          spec.name) for spec in counted]
    opens = exp.EQ(this=over(exp.RowNumber()), expression=over(exp.Rank()))
    ranked = _over(ordered, "__dp_w",
                   exp.column(GROUP_RANK), *(exp.column(b.alias) for b in buckets), *counts,
                   exp.alias_(opens, OPENS), exp.alias_(over(exp.DenseRank()),
                                                        RANK))
    kept = _over(ranked, "__dp_k", "*").where(
        exp.Between(this=exp.column(RANK), low=number(1), high=number(g)), copy=False)
    keys = set(plan.key_names)
    c = plan.contribution.rows_per_group
    partials = [exp.alias_(in_quanta(limit(exp.column(spec.name), 0, c), spec), spec.name)
                for spec in counted]  # pair_partial's clamp of the pair's count
    pairs = exp.select(GROUP_RANK, *partials).from_(KEPT, copy=False).where(
        exp.column(OPENS), copy=False)
    spine = _per_group(plan, _with_keys(pairs, [*_keys(plan), *_output_columns(pairs)[1:]],
                                        keys))
    names = [*_keys(plan), exp.column(quantiles.BUCKET), exp.column(quantiles.WEIGHT)]
    query = quantiles.attach(plan, spine, lambda spec: _with_keys(
        quantiles.kept_row_weights(plan, spec, KEPT, GROUP_RANK), names, keys))
    kept.meta[COMPUTE_ONCE] = _once_on_spark(plan)
    return with_codes(query).with_(KEPT, as_=kept, copy=False)


def _first_group_of_rows(plan: PrivacyPlan) -> bool:
    """Whether each unit's one group is found by one aggregate over its rows
    (``_counts_of_first_groups``) rather than over its pairs: a grouped query of counts
    alone (of units at any c; of rows and values at c = 1, dpsql's default), g = 1, an
    integer unit, groups to choose, and no total-rows cap. Which plan runs depends on the
    SQL text and the declared limits, never on the data.

    >>> from dpsql.analysis import analyze
    >>> from dpsql.catalog import Catalog, TableInfo
    >>> def first(sql, c=1):
    ...     cat = Catalog()
    ...     _ = cat.add(TableInfo.private("t", columns={"pid": "INT", "k": "TEXT", "x": "INT"},
    ...                                   privacy_unit="pid", bounds={"x": (0, 5)},
    ...                                   max_rows_per_group=c))
    ...     return _first_group_of_rows(analyze(sql, cat, epsilon=1, delta=1e-6))
    >>> first("SELECT k, COUNT(*), COUNT(x), COUNT(DISTINCT pid) FROM t GROUP BY k")
    True
    >>> first("SELECT k, COUNT(*) FROM t GROUP BY k", c=2)
    False
    >>> first("SELECT k, COUNT(DISTINCT pid) FROM t GROUP BY k", c=2)
    True
    >>> first("SELECT k, SUM(x) FROM t GROUP BY k"), first("SELECT COUNT(*) FROM t")
    (False, False)
    """
    limits = plan.contribution
    return (bool(plan.keys) and not plan.histograms and not limits.caps_total
            and limits.groups_per_unit == 1
            and all(s.kind == "units" or (s.kind in ("rows", "count")
                                          and limits.rows_per_group == 1)
                    for s in plan.stats)
            and not any(s.per_group for s in plan.stats)
            and integer_unit(plan.column_types.get(plan.privacy_unit, ""))
            and _public_domain_size(plan) > 1)


def _counts_of_first_groups(plan: PrivacyPlan, unit: exp.Column) -> exp.Select:
    """Each unit's counts in its first group, from one aggregate per unit over its rows:
    no (unit, group) aggregate.

    Each row joins its group's codes (``_coded``) and carries its pair's order, ``order ·
    2³² + rank`` (``_pair_ordered``: the BIGINT ``_keep_first`` takes the smallest of), so
    the smallest over the unit's rows is its first pair's, and that order modulo 2³² is
    the pair's group rank. At c = 1 the pair's clamped count of rows is 1, and its
    clamped count of values is 1 exactly when one of its rows has a value: when the
    smallest order over the rows with a value is the first pair's. A unit counts once for
    its group. The keys come from the codes by the group's rank.

    >>> from dpsql.analysis import analyze
    >>> from dpsql.catalog import Catalog, TableInfo
    >>> cat = Catalog()
    >>> _ = cat.add(TableInfo.private("t", columns={"pid": "INT", "k": "TEXT", "x": "INT"},
    ...                               privacy_unit="pid", bounds={"x": (0, 5)}))
    >>> plan = analyze("SELECT k, COUNT(x) FROM t GROUP BY k", cat, epsilon=1, delta=1e-6)
    >>> sql = rewrite(plan).ast.sql()
    >>> "MIN(CASE WHEN NOT __dp_v0 IS NULL THEN __dp_first END) = MIN(__dp_first)" in sql
    True
    """
    counted = tuple(s for s in plan.stats if s.kind in ("rows", "count"))
    values = RowValues(counted, plan.column_types, plan.column_bounds)
    ordered, with_codes = _rows_in_pair_order(plan, unit, values.select_items())
    first = exp.Min(this=exp.column(FIRST))
    partials = [exp.alias_(in_quanta(number(1) if spec.kind == "rows" else _first_has(
        values.of[spec.name], first), spec), spec.name) for spec in counted]
    rank = exp.Mod(this=first.copy(), expression=number(GROUP_RANKS))
    chosen = (_over(ordered, "__dp_k", exp.column(UNIT), exp.alias_(rank, GROUP_RANK),
                    *partials)
              .group_by(exp.column(UNIT), copy=False))
    names = [*_keys(plan), *(exp.column(spec.name) for spec in counted)]
    return with_codes(_per_group(plan, _with_keys(chosen, names, set(plan.key_names))))


def _rows_in_pair_order(plan: PrivacyPlan, unit: exp.Column, items: list[exp.Expression]
                        ) -> tuple[exp.Select, Callable[[exp.Select], exp.Select]]:
    """The query's rows (unit, keys and ``items``), each joined to its group's codes
    (``_coded``) and carrying its pair's order as ``FIRST`` (``_pair_ordered``); and what
    adds the CTEs they read (the codes, and the rows where stored) to a query over them."""
    rows = exp.select(exp.alias_(unit.copy(), UNIT), *_keys(plan), *items)
    rows = rows.from_(source(plan), copy=False).where(_filter(plan, unit), copy=False)
    records, groups = _groups_of(plan, rows, _pairs_in_domain(plan))
    ordered, key = _pair_ordered(_coded(plan, records, (GROUP_RANK, CODE, *SALT_CONSTANTS)))
    return (_over(ordered, "__dp_o", "*", exp.alias_(key, FIRST)),
            lambda query: _with_codes(query, plan, rows, records, groups))


def _first_has(value: str, first: exp.Expression) -> exp.Expression:
    """1 if a row of the unit's first pair has a ``value`` (the smallest ``first`` over
    the rows with one is the smallest over all), else 0: the pair's count of values
    clamped to c = 1."""
    with_value = exp.Min(this=exp.Case(ifs=[exp.If(
        this=exp.Not(this=exp.Is(this=exp.column(value), expression=exp.Null())),
        true=exp.column(FIRST))]))
    return exp.Case(ifs=[exp.If(this=exp.EQ(this=with_value, expression=first.copy()),
                                true=number(1))], default=number(0))


def _is_time(sql_type: str) -> bool:
    """Whether a column of this type holds times of day (TIME, TIMETZ; not TIMESTAMP).

    >>> _is_time("TIME"), _is_time("TIME WITH TIME ZONE"), _is_time("TIMESTAMP")
    (True, True, False)
    """
    name = sql_type.upper()
    return name.startswith("TIME") and not name.startswith("TIMESTAMP")


def _over(inner: exp.Select, alias: str, *items: exp.Expression | str) -> exp.Select:
    """SELECT items FROM (inner) AS alias, building in place (no tree copies)."""
    return exp.select(*items, copy=False).from_(inner.subquery(alias, copy=False), copy=False)


def _keep_groups(plan: PrivacyPlan, rows: exp.Select, partials: list[exp.Expression],
                 domain: exp.Expression | None, bounds: dict[str, int]) -> exp.Select:
    """The (unit, group) pairs of ``rows`` with their ``partials``, at most g groups per unit,
    chosen by a salted hash of (unit, keys): value-blind; only pairs whose public keys are
    in their ``domain`` (the filter, if any) are kept. ``bounds`` holds the largest
    |partial| of the partials that have one (``partial_bound``).

    An integer unit's pairs are all ordered by ``digest.unit_order`` (``_keep_first``);
    other units' by an MD5 per pair, for the heavy units alone (``_keep_heavy``). Either
    way a unit's choice depends only on its own pairs and the salt.
    """
    g = plan.contribution.groups_per_unit
    pairs = _pairs(rows, _keys(plan), partials)
    names = _output_columns(pairs)
    if not plan.keys or _public_domain_size(plan) <= g:
        return _in(pairs, names, domain)
    if integer_unit(plan.column_types.get(plan.privacy_unit, "")):
        return _keep_first(plan, rows, partials, pairs, g, domain, bounds)
    query, heavy = _keep_heavy(plan, names, g)
    query = query.with_(PAIRS, as_=_in(pairs, names, domain), copy=False)
    return query.with_(HEAVY, as_=heavy, copy=False)


def _pairs(rows: exp.Select, group: list[exp.Column], partials: list[exp.Expression]
           ) -> exp.Select:
    """The ``partials`` of each unit in each group of ``rows`` (by the ``group`` columns)."""
    by = [exp.column(UNIT), *group]
    return (_over(rows.copy(), "__dp_r", *by, *(p.copy() for p in partials))
            .group_by(*(c.copy() for c in by), copy=False))


def _in(groups: exp.Select, names: list[exp.Column], domain: exp.Expression | None
        ) -> exp.Select:
    """The ``names`` of ``groups`` (the pairs, or the distinct groups) in the public
    ``domain`` (all of them without one). Filtering whole pairs or groups is the same as
    filtering their rows, and far cheaper."""
    if domain is None:
        return groups
    return _over(groups, "__dp_a", *names).where(domain.copy(), copy=False)


DOMAIN_CODES = 2**16
"""The most groups a public domain may have for the codes to be computed from its values
(``_domain_groups``) rather than from the distinct groups of the pairs."""


def _domain_groups(plan: PrivacyPlan) -> exp.Select | None:
    """The groups of the public domain, as a SELECT of the key columns (the product of each
    key's values), when every key is a text column (``TEXT_TYPES``) with a public domain of
    at most ``DOMAIN_CODES`` groups; else None.

    Their codes are the codes of the same groups in the rows (the same text), so the
    choice is the same; but the codes read no rows, and the inner join of the rows to the
    codes drops the rows outside the domain, which a semi-join would do otherwise
    (docs/benchmarks.md). The keys released come from these codes: a text literal
    has the type of a text column in both engines, so they keep it. (An integer literal's
    type is not its column's, and a cast to the column's type would write each engine's
    own name for it into the SQL.)

    >>> from dpsql.plan import GroupKey
    >>> import types
    >>> plan = types.SimpleNamespace(keys=(GroupKey("k", "k", ("a", None, "b")),
    ...                                    GroupKey("m", "m", ("x",))), key_names=["k", "m"],
    ...                              column_types={"k": "VARCHAR", "m": "VARCHAR"})
    >>> print(_domain_groups(plan).sql())
    SELECT k, m FROM (VALUES ('a'), ('b')) AS __dp_v0(k) CROSS JOIN (VALUES ('x')) AS __dp_v1(m)
    >>> plan.keys = (GroupKey("k", "k", ("a", 1)),)  # a public table's other values
    >>> print(_domain_groups(plan))
    None
    """
    columns = []
    for key in plan.keys:
        # A text column's domain read from a public table may hold other values: those
        # keep the semi-join's own comparison.
        text = key.public and plan.column_types.get(key.column, "").upper() in TEXT_TYPES \
            and all(isinstance(v, str) for v in key.domain if v is not None)
        values = _domain_values(key) if text else []
        if not values:
            return None
        columns.append(values)
    if math.prod(len(values) for values in columns) > DOMAIN_CODES:
        return None
    tables = [exp.values([(v,) for v in values], alias=f"__dp_v{i}", columns=[key.name])
              for i, (key, values) in enumerate(zip(plan.keys, columns, strict=True))]
    query = exp.select(*_keys(plan)).from_(tables[0], copy=False)
    for table in tables[1:]:
        query = query.join(table, join_type="cross", copy=False)
    return query


TEXT_TYPES = ("VARCHAR", "TEXT", "STRING")
"""Key column types whose public values ``_domain_groups`` writes as literals."""


def _distinct_groups(plan: PrivacyPlan, rows: exp.Select, records: exp.Expression
                     ) -> exp.Select:
    """The distinct groups of ``rows``, as a SELECT of the key columns: from their table,
    or from the CTE that ``records`` reads."""
    if isinstance(records, exp.Subquery):
        groups = rows.copy()
        groups.set("expressions", _keys(plan))
    else:
        groups = exp.select(*_keys(plan)).from_(RECORDS, copy=False)
    return groups.distinct(copy=False)


def _codes(plan: PrivacyPlan, groups: exp.Select) -> exp.Select:
    """Per group of ``groups``: its ``key_code``, the keyed constants of ``unit_order`` and
    its rank in the order of the keys (from 1, one per group: it also names the group where
    the keys are not carried)."""
    by_keys = exp.Order(expressions=[exp.Ordered(this=k, nulls_first=False)
                                     for k in _keys(plan)])
    return _over(groups, "__dp_d", *_keys(plan), *_code_columns(plan),
                 exp.alias_(exp.Window(this=exp.RowNumber(), order=by_keys), GROUP_RANK))


def _code_columns(plan: PrivacyPlan) -> list[exp.Expression]:
    """The group's ``key_code`` and the salt's constants, over the key columns."""
    key_types = [(k.name, plan.column_types.get(k.column, "")) for k in plan.keys]
    return [exp.alias_(key_code(key_types), CODE), *salt_constants()]


def _keep_first(plan: PrivacyPlan, rows: exp.Select, partials: list[exp.Expression],
                pairs: exp.Select, g: int, domain: exp.Expression | None,
                bounds: dict[str, int]) -> exp.Select:
    """Each integer unit's first g pairs, by ``unit_order`` and then by the keys; ``pairs``
    are the ``partials`` of ``rows`` per (unit, keys).

    The groups are coded before the pairs are formed: each row joins the codes of its
    group (``_codes``: one row per group, its rank among the keys and its keyed constants)
    and the pairs are aggregated per (unit, rank), two integers, not per (unit, keys):
    the aggregate over every row then hashes no text (docs/benchmarks.md). The codes are
    the distinct groups of the rows (in the public ``domain``, if any), or the domain's
    own groups (``_domain_groups``); the inner join drops the rows outside them.

    Every pair is ordered (no search for the units over the limit), so the running time
    does not depend on how many units exceed it. The order is one BIGINT, ``order · 2³² +
    rank``: the group's rank among the keys stands in for them, the same order. g = 1: one
    aggregate per unit, which takes its first pair's rank and partials
    (``_first_by_packed_min``); g > 1: a window over each unit's pairs, ranked by it. A
    join to the codes on the rank gives the keys back after the choice.

    Spark inlines the codes CTE at each reference, so its SQL forms the pairs per (unit,
    keys) and keeps the keys with their pair (the ``INLINED_FORM``s, written by the Spark
    backend): g = 1 takes each column by ``ArgMinNull``; g > 1 hashes each pair's code in
    its row and orders by (order, keys), filtering the pairs by ``domain``, as it joins no
    codes.
    """
    records, groups = _groups_of(plan, rows, domain)
    coded = _pairs(_coded(plan, records, (GROUP_RANK,)), [exp.column(GROUP_RANK)], partials)
    coded.meta[INLINED_FORM] = pairs
    names = _output_columns(pairs)
    keys = set(plan.key_names)
    carried = [exp.column(GROUP_RANK), *(c for c in names if c.name not in keys)]
    if g == 1:
        kept = _with_keys(_first_by_packed_min(plan, carried, bounds), names, keys)
        kept.meta[INLINED_FORM] = _first_by_min(plan, names)
    else:
        ordered, first = _ordered_pairs(plan, by_rank=True)
        # BETWEEN, not <=: DuckDB turns a window ranked by one column and cut at ≤ g into
        # a top-N aggregate, which is slower (docs/benchmarks.md).
        kept = _with_keys(_first_by_window(
            ordered, [first], carried,
            exp.Between(this=exp.column(RANK), low=number(1), high=number(g))), names, keys)
        inlined = exp.select("*", *_code_columns(plan)).from_(PAIRS)
        inlined, order = _unit_ordered(inlined if domain is None else inlined.where(domain))
        kept.meta[INLINED_FORM] = _first_by_window(
            inlined, [order, *_keys(plan)], names, exp.LTE(this=exp.column(RANK),
                                                           expression=number(g)))
    kept = _with_codes(kept, plan, rows, records, groups)
    return kept.with_(PAIRS, as_=coded, copy=False)


def _groups_of(plan: PrivacyPlan, rows: exp.Select, domain: exp.Expression | None
               ) -> tuple[exp.Expression, exp.Select]:
    """What the coded rows are read from (``_records``) and the groups to code: the
    domain's own groups (``_domain_groups``), or the distinct groups of the rows in the
    public ``domain`` (all of them without one)."""
    records = _records(plan, rows)
    groups = _domain_groups(plan)
    if groups is None:
        groups = _in(_distinct_groups(plan, rows, records), _keys(plan), domain)
    return records, groups


def _with_codes(query: exp.Select, plan: PrivacyPlan, rows: exp.Select,
                records: exp.Expression, groups: exp.Select) -> exp.Select:
    """``query`` with the CTEs it reads for the coded rows: ``CODES`` of the ``groups``,
    and ``RECORDS`` (the ``rows``) where the ``records`` read them from it."""
    if not isinstance(records, exp.Subquery):
        query = query.with_(RECORDS, as_=rows, copy=False)
    return query.with_(CODES, as_=_codes(plan, groups), copy=False)


def _records(plan: PrivacyPlan, rows: exp.Select) -> exp.Expression:
    """What the codes and the pairs read ``rows`` from: the rows themselves (a subquery,
    copied for each reader) when they come from a table or a query of one table's rows,
    which DuckDB scans twice more cheaply than it stores them (docs/benchmarks.md); the
    CTE ``RECORDS``, computed once, when they come from a join, an aggregate, a window, a
    set operation or DISTINCT."""
    costly = (exp.Join, exp.AggFunc, exp.Window, exp.SetOperation, exp.Distinct)
    if isinstance(plan.relation, str) or not plan.relation.find(*costly):
        return rows.subquery("__dp_r")
    return _as(RECORDS, "__dp_r")


def _coded(plan: PrivacyPlan, records: exp.Expression, taken: tuple[str, ...]) -> exp.Select:
    """The rows of ``records`` with the columns ``taken`` from their group's codes (its
    rank ``GROUP_RANK``; its ``CODE`` and the salt's constants to order its pairs)."""
    return (exp.select(exp.Column(this=exp.Star(), table=exp.to_identifier("__dp_r")),
                       *(exp.column(c, table="__dp_c") for c in taken))
            .from_(records.copy(), copy=False)
            .join(_as(CODES, "__dp_c"), on=same_keys(plan.key_names, "__dp_r", "__dp_c"),
                  copy=False))


def _ordered_pairs(plan: PrivacyPlan, by_rank: bool) -> tuple[exp.Select, exp.Expression]:
    """The pairs joined to their group's codes — by the group's rank where the pairs carry
    it (``by_rank``), else by the keys — with ``unit_order``'s steps, and the BIGINT that
    orders a unit's pairs: ``order · 2³² + rank``."""
    same_group = exp.EQ(this=exp.column(GROUP_RANK, table="__dp_p"),
                        expression=exp.column(GROUP_RANK, table="__dp_c")) if by_rank \
        else same_keys(plan.key_names, "__dp_p", "__dp_c")
    taken = (CODE, *SALT_CONSTANTS) if by_rank else (CODE, *SALT_CONSTANTS, GROUP_RANK)
    rows = (exp.select(exp.Column(this=exp.Star(), table=exp.to_identifier("__dp_p")),
                       *(exp.column(c, table="__dp_c") for c in taken))
            .from_(_as(PAIRS, "__dp_p"), copy=False)
            .join(_as(CODES, "__dp_c"), on=same_group, copy=False))
    return _pair_ordered(rows)


def _pair_ordered(rows: exp.Select) -> tuple[exp.Select, exp.Expression]:
    """``rows`` (with their group's rank, code and the salt's constants) with
    ``unit_order``'s steps, and the BIGINT that orders a unit's pairs: ``order · 2³² +
    rank`` (``GROUP_RANKS``)."""
    rows, order = _unit_ordered(rows)
    return rows, exp.Add(this=exp.Mul(this=order, expression=number(GROUP_RANKS)),
                         expression=exp.Mod(this=exp.column(GROUP_RANK),
                                            expression=number(GROUP_RANKS)))


def _first_by_min(plan: PrivacyPlan, columns: list[exp.Column]) -> exp.Select:
    """Per unit, ``columns`` of its first pair (the smallest ``_ordered_pairs`` order), from
    pairs that carry their keys (Spark's form), one ``ArgMinNull`` each."""
    rows, first = _ordered_pairs(plan, by_rank=False)
    ordered = _over(rows, "__dp_o", "*", exp.alias_(first, FIRST))
    taken = [_of_first(c.name) for c in columns if c.name != UNIT]
    return (_over(ordered, "__dp_k", exp.column(UNIT), *taken)
            .group_by(exp.column(UNIT), copy=False))


def _of_first(column: str) -> exp.Expression:
    """``column`` of the unit's first pair (the smallest ``FIRST``), under its own name."""
    return exp.alias_(ArgMinNull(this=exp.column(column), expression=exp.column(FIRST)), column)


def _first_by_packed_min(plan: PrivacyPlan, columns: list[exp.Column],
                         bounds: dict[str, int]) -> exp.Select:
    """Per unit, ``columns`` (its group's rank and partials) of its first pair (the
    smallest ``_ordered_pairs`` order by the rank), in few aggregates, for DuckDB pays per
    aggregate (docs/benchmarks.md): the rank is the smallest order modulo 2³²
    (``_pair_ordered``), the partials with a bound in ``bounds`` travel as the digits of a
    few BIGINTs (``packing``), one ``ArgMinNull`` per pack, and the others one each."""
    rows, first = _ordered_pairs(plan, by_rank=True)
    names = [c.name for c in columns if c.name not in (UNIT, GROUP_RANK)]
    packs = packed([(name, bounds[name]) for name in names if name in bounds])
    in_packs = {column for pack in packs for column, _ in pack.fields}
    alone = [name for name in names if name not in in_packs]
    ordered = _over(rows, "__dp_o", "*", exp.alias_(first, FIRST),
                    *(exp.alias_(pack.code(), pack.name) for pack in packs))

    rank = exp.Mod(this=exp.Min(this=exp.column(FIRST)), expression=number(GROUP_RANKS))
    chosen = (_over(ordered, "__dp_k", exp.column(UNIT), exp.alias_(rank, GROUP_RANK),
                    *(_of_first(pack.name) for pack in packs), *map(_of_first, alone))
              .group_by(exp.column(UNIT), copy=False))
    unpacked = [exp.alias_(pack.field(column, exp.column(pack.name)), column)
                for pack in packs for column, _ in pack.fields]
    return _over(chosen, "__dp_m", exp.column(UNIT), exp.column(GROUP_RANK), *unpacked,
                 *map(exp.column, alone))


def _with_keys(chosen: exp.Select, names: list[exp.Column], keys: set[str]) -> exp.Select:
    """``names`` over the ``chosen`` pairs, which carry their group's rank instead of the
    ``keys``: the keys come from the codes of that rank (one row per rank)."""
    return (exp.select(*(exp.column(c.name, table="__dp_c" if c.name in keys else "__dp_z")
                         for c in names))
            .from_(chosen.subquery("__dp_z", copy=False), copy=False)
            .join(_as(CODES, "__dp_c"),
                  on=exp.EQ(this=exp.column(GROUP_RANK, table="__dp_z"),
                            expression=exp.column(GROUP_RANK, table="__dp_c")), copy=False))


def _as(table: str, alias: str) -> exp.Expression:
    """``table AS alias``."""
    return exp.alias_(exp.to_table(table), alias, table=True)


def _unit_ordered(rows: exp.Select) -> tuple[exp.Select, exp.Column]:
    """``rows`` (pairs with their code and the salt's constants) with ``unit_order``'s
    steps as columns, and the last of them: the pair's order within its unit."""
    steps = unit_order(UNIT, CODE)
    for step, (name, value) in enumerate(steps):
        rows = _over(rows, f"__dp_s{step}", "*", exp.alias_(value, name))
    return rows, exp.column(steps[-1][0])


def _first_by_window(rows: exp.Select, order: list[exp.Expression], names: list[exp.Column],
                     kept: exp.Expression) -> exp.Select:
    """The pairs of ``rows`` whose rank within their unit by ``order`` satisfies ``kept``.
    The order must break every tie, so that the choice is the same each time."""
    window = exp.Window(this=exp.RowNumber(), partition_by=[exp.column(UNIT)],
                        order=exp.Order(expressions=[exp.Ordered(this=o) for o in order]))
    ranked = _over(rows, "__dp_o", "*", exp.alias_(window, RANK))
    return _over(ranked, "__dp_k", *names).where(kept, copy=False)


def _keep_heavy(plan: PrivacyPlan, names: list[exp.Column], g: int
                ) -> tuple[exp.Select, exp.Select]:
    """Text (and other non-integer) units: the units with more than g groups ("heavy") rank
    their pairs by ``keyed_hash`` of (unit, keys), an MD5 per pair; the others keep all.
    Which branch a unit takes depends only on its own rows. Returns the kept pairs and the
    CTE ``HEAVY`` they read."""
    heavy = (exp.select(UNIT).from_(PAIRS, copy=False).group_by(UNIT, copy=False)
             .having(exp.GT(this=exp.Count(this=exp.Star()), expression=number(g)), copy=False))
    heavy_units = exp.select(UNIT).from_(HEAVY, copy=False).subquery(copy=False)
    in_heavy = exp.In(this=exp.column(UNIT), query=heavy_units)
    light = exp.select(*names).from_(PAIRS, copy=False).where(exp.Not(this=in_heavy.copy()),
                                                             copy=False)
    key_types = [(k.name, plan.column_types.get(k.column, "")) for k in plan.keys]
    unit_type = plan.column_types.get(plan.privacy_unit, "")
    rows = exp.select("*").from_(PAIRS, copy=False).where(in_heavy, copy=False)
    order = keyed_hash([(UNIT, unit_type), *key_types])
    chosen = _first_by_window(rows, [order, *_keys(plan)], names,
                              exp.LTE(this=exp.column(RANK), expression=number(g)))
    kept = exp.union(light, chosen, distinct=False, copy=False)
    return exp.select("*").from_(kept.subquery("__dp_kept", copy=False), copy=False), heavy


def _public_domain_size(plan: PrivacyPlan) -> float:
    if not all(k.public for k in plan.keys):
        return math.inf
    return math.prod(len(k.domain) for k in plan.keys)


def cap_total(plan: PrivacyPlan, kept: exp.Select) -> exp.Select:
    """Scale each unit's partials by min(1, r / its total clamped rows)."""
    limits = plan.contribution
    clamped = limit(exp.column(ROWS), 0, limits.rows_per_group)
    total = exp.Window(this=exact_sum(clamped), partition_by=[exp.column(UNIT)])
    # A DOUBLE literal: Spark would divide a decimal literal (5.0) in DECIMAL, DuckDB in DOUBLE.
    ratio = exp.Div(this=as_double(number(limits.max_rows_per_unit)), expression=total)
    factor = exp.Least(this=number(1), expressions=[ratio], ignore_nulls=True)
    extra = [exp.alias_(as_bigint(total.copy()), quantiles.TOTAL)] if plan.histograms else []
    return _over(kept, "__dp_c", "*", exp.alias_(factor, FACTOR), *extra)


def _per_group(plan: PrivacyPlan, kept: exp.Select) -> exp.Select:
    scaled, c = plan.contribution.caps_total, plan.contribution.rows_per_group
    items = _keys(plan)
    for spec in plan.stats:
        if spec.kind == "distinct":
            continue
        if spec.kind == "units":
            items.append(exp.alias_(as_bigint(exp.Count(this=exp.Star())), spec.name))
            continue
        partial: exp.Expression = exp.column(spec.name)
        if scaled:
            # Truncation toward zero keeps |partial × factor| within the scaled bound.
            partial = as_bigint(exp.Trunc(this=exp.Mul(this=partial,
                                                       expression=exp.column(FACTOR))))
        # Scaling by FACTOR ≤ 1 (truncated) keeps a partial within its bound.
        total = exp.Coalesce(this=exact_sum(partial, partial_bound(spec, c)),
                             expressions=[number(0)])
        final = as_bigint(total) if spec.kind in ("rows", "count") else as_double(total)
        items.append(exp.alias_(final, spec.name))
    query = _over(kept, "__dp_b", *items)
    return query.group_by(*_keys(plan), copy=False) if plan.keys else query
