"""What every bounding strategy shares: the generated names, the filter and the public
domain, one unit's bounded partial in one group, the total-rows cap, and the sum per group.

Every name here is in dpsql's reserved namespace (``dpsql.names``): no query or catalog
can name a column or a table ``__dp_…``, so the analyst's identifiers never capture them.
"""

from __future__ import annotations

from sqlglot import exp

from dpsql.expr.nodes import as_bigint, as_double, exact_sum, number
from dpsql.expr.totality import error_free
from dpsql.plan import Bounding, GroupKey, PrivacyPlan, StatSpec
from dpsql.rewrite import quantiles
from dpsql.rewrite.values import RowValues, group_partial, in_quanta, limit, weighted_partial

UNIT = "__dp_unit"
RANK = "__dp_rank"
FACTOR = "__dp_factor"
ROWS = "__dp_rows"
PAIRS = "__dp_pairs"
RECORDS = "__dp_records"
HEAVY = "__dp_heavy"
KEPT = "__dp_kept"
CELLS = "__dp_cells"
CODES = "__dp_codes"
CODE = "__dp_code"
GROUP_RANK = "__dp_grank"
FIRST = "__dp_first"
OPENS = "__dp_opens"
ONCE = "__dp_m"
"""The alias of a CTE's query inside ``computed_once``'s filter."""
GROUP_RANKS = 2**32
"""Groups' ranks count modulo 2³² below the order of the first pairs: order < 2³¹, so the
BIGINT key cannot overflow; only past 2³² distinct groups can two ranks tie."""


def keys(plan: PrivacyPlan) -> list[exp.Column]:
    return [exp.column(k) for k in plan.key_names]


def output_columns(query: exp.Select) -> list[exp.Column]:
    """Columns naming each output of ``query`` — as identifiers, never re-parsed as SQL
    (a key named "a b" or "x, pid" stays one column)."""
    return [exp.column(item.alias_or_name) for item in query.expressions]


def over(inner: exp.Select, alias: str, *items: exp.Expression | str) -> exp.Select:
    """SELECT items FROM (inner) AS alias, building in place (no tree copies)."""
    return exp.select(*items, copy=False).from_(inner.subquery(alias, copy=False), copy=False)


def table_as(table: str, alias: str) -> exp.Expression:
    """``table AS alias``."""
    return exp.alias_(exp.to_table(table), alias, table=True)


def one_row() -> exp.Select:
    return exp.select(exp.alias_(number(1), "__dp_one"))


def row_filter(plan: PrivacyPlan, unit: exp.Expression | None) -> exp.Expression | None:
    """WHERE of the query, plus unit IS NOT NULL."""
    parts = [exp.paren(error_free(plan.where, plan.column_types))] if plan.where is not None else []
    if unit is not None:
        parts.append(exp.Not(this=exp.Is(this=unit, expression=exp.Null())))
    return exp.and_(*parts) if parts else None


def domain_values(key: GroupKey) -> list[exp.Expression]:
    """The public domain's values (``catalog.key_values``) as literals of their type
    (sqlglot's ``convert``: exact integers, typed dates and timestamps); floats as
    ``number`` writes them.

    >>> import datetime as dt
    >>> key = GroupKey("d", "d", (dt.date(2024, 1, 31), dt.datetime(2024, 1, 31, 9), True,
    ...                           2**60 + 1, 0.5, "a", None))
    >>> print(", ".join(v.sql("duckdb") for v in domain_values(key)))
    CAST('2024-01-31' AS DATE), CAST('2024-01-31 09:00:00' AS TIMESTAMP), TRUE, \
1152921504606846977, 0.5, 'a'
    """
    return [number(v) if isinstance(v, float) else exp.convert(v)
            for v in key.domain if v is not None]


def in_domain(plan: PrivacyPlan) -> exp.Expression | None:
    """Public-domain membership of the keys (values outside a public domain are dropped)."""
    parts = []
    for key in plan.keys:
        if key.public:
            values = domain_values(key)
            parts.append(exp.In(this=exp.column(key.column), expressions=values)
                         if values else exp.false())
    return exp.and_(*parts) if parts else None


def pairs_in_domain(plan: PrivacyPlan) -> exp.Expression | None:
    """Public-domain membership of (unit, group) pairs, as semi-joins with the domain values.

    Not an IN list: engines push a filter on grouping keys below the aggregate, and
    DuckDB runs an IN list of six or more values as a hash join over every row (a
    third of the per-unit floor at 10M rows); a semi-join stays on the pairs.
    """
    parts = []
    for key in plan.keys:
        if key.public:
            values = domain_values(key)
            if not values:
                parts.append(exp.false())
                continue
            table = exp.values([(v,) for v in values], alias="__dp_d", columns=["v"])
            members = exp.select("v").from_(table, copy=False).subquery(copy=False)
            parts.append(exp.In(this=exp.column(key.column), query=members))
    return exp.and_(*parts) if parts else None


def pair_partial(spec: StatSpec, c: int, values: RowValues) -> exp.Expression:
    """One unit's contribution to one group, clamped to the per-group bound (in quanta):
    at most c rows, or the statistic's own fewer (``StatSpec.kept_rows``)."""
    if spec.per_group:
        return group_partial(spec, values)
    c = spec.kept_rows(c)
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
    the bound of the rows it keeps of c (each clamp above is within it)."""
    return spec.group_bound if spec.per_group else spec.kept_rows(c) * spec.row_bound


def cap_total(plan: PrivacyPlan, kept: exp.Select) -> exp.Select:
    """Scale each unit's partials by min(1, r / its total clamped rows)."""
    limits = plan.contribution
    clamped = limit(exp.column(ROWS), 0, limits.rows_per_group)
    total = exp.Window(this=exact_sum(clamped), partition_by=[exp.column(UNIT)])
    # A DOUBLE literal: Spark would divide a decimal literal (5.0) in DECIMAL, DuckDB in DOUBLE.
    ratio = exp.Div(this=as_double(number(limits.max_rows_per_unit)), expression=total)
    factor = exp.Least(this=number(1), expressions=[ratio], ignore_nulls=True)
    extra = [exp.alias_(as_bigint(total.copy()), quantiles.TOTAL)] if plan.histograms else []
    return over(kept, "__dp_c", "*", exp.alias_(factor, FACTOR), *extra)


def per_group(plan: PrivacyPlan, kept: exp.Select) -> exp.Select:
    """The kept pairs' partials summed per group (each unit once for ``units``)."""
    scaled, c = plan.contribution.caps_total, plan.contribution.rows_per_group
    items = keys(plan)
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
    query = over(kept, "__dp_b", *items)
    return query.group_by(*keys(plan), copy=False) if plan.keys else query


def with_kept(query: exp.Select, kept: exp.Select, bounding: Bounding,
              name: str = KEPT) -> exp.Select:
    """``query`` with the CTE ``name`` (``KEPT``: the kept pairs; ``CELLS``: the kept
    rows' cells, ``kept_rows_ranked``) if it reads it; computed once for all its readers
    where the strategy says so (``Bounding.compute_once``).

    An engine that reuses a CTE only when it is non-deterministic (Spark: SPARK-36447)
    computes it once when filtered by ``RAND() < 2``, which holds on every row (RAND is in
    [0, 1)). Caching (``persist``) cost more than the second computation
    (docs/benchmarks.md).

    >>> kept = exp.select("u", "k").from_("t")
    >>> query = exp.select("*").from_(f"{KEPT} AS a").join(f"{KEPT} AS b", on="a.u = b.u")
    >>> print(with_kept(query, kept, Bounding("all_pairs", "", compute_once=True)).sql())
    WITH __dp_kept AS (SELECT * FROM (SELECT u, k FROM t) AS __dp_m WHERE RAND() < 2) SELECT * \
FROM __dp_kept AS a JOIN __dp_kept AS b ON a.u = b.u
    """
    reads = sum(table.name == name for table in query.find_all(exp.Table))
    if not reads:
        return query
    if bounding.compute_once and reads > 1:
        kept = exp.select("*").from_(kept.subquery(ONCE, copy=False), copy=False).where(
            exp.LT(this=exp.Rand(), expression=number(2)), copy=False)
    return query.with_(name, as_=kept, copy=False)
