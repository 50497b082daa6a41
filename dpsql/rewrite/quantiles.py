"""Bucket histograms for quantiles, in SQL, with each unit's weight bounded exactly.

Per group, a quantile needs the weights h_b of B equal buckets of [lo, hi]. A unit's weight
must be bounded (the exponential mechanism's sensitivity, `dpsql.mechanisms.exponential`)
without looking at its values, so the rewrite makes it a function of *how many* values the
unit has in the group, never of which:

- each value falls in bucket ⌊(v − lo)·B/(hi − lo)⌋, clamped to [0, B − 1] (so ±inf and
  out-of-bound values land in the end buckets); NULL and NaN have no bucket;
- a unit with n values in a group gives each weight w = min(S, ⌊c·S/n⌋) (S = WEIGHT_SCALE),
  so its n·w ≤ min(n, c)·S: at most c rows in the group, in exact integers;
- when ``max_rows_per_unit`` r binds, w becomes ⌊w·min(T, r)/T⌋, with T the unit's clamped
  row total over its kept groups (the same T that scales its noisy partials): the unit's
  weight over all groups is then at most min(T, r)·S ≤ r·S;
- only the (unit, group) pairs the rest of the query keeps (the salted-hash choice of at most
  g groups per unit) contribute: the histogram joins the same kept pairs, which also carry
  each pair's n (``pair_counts``, counted in the aggregate that builds the pairs); or, for
  quantiles by private groups beside nothing but counts (``COUNT(*)``, ``COUNT(x)``), it sums
  the kept rows themselves, which carry their pair's n counted in the window that ranks them
  (``weight_sum`` over them, ``kept_rows_ranked``).

A unit's weights depend only on its own rows, so removing it subtracts its weights and leaves
every other unit's unchanged, and the integer sums do not depend on the engine's order.

The bounded query returns, per group, one list of {b: bucket, w: weight} per histogram
(``ARRAY_AGG`` of a struct: ``list`` in DuckDB, ``collect_list`` in Spark); absent buckets
weigh 0.

>>> import sqlglot
>>> from dpsql.plan import HistogramSpec
>>> spec = HistogramSpec("__dp_h0", sqlglot.parse_one("age"), 0, 100, buckets=4)
>>> print(bucket(spec, {"age": "INTEGER"}, {}).sql(pretty=True))
CASE
  WHEN age IS NULL
  THEN NULL
  ELSE CAST(FLOOR(LEAST(GREATEST((
    CAST(age AS DOUBLE) - 0
  ) * 0.04, 0), 3)) AS BIGINT)
END
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from sqlglot import exp

from dpsql.expr.nodes import as_bigint, as_double, exact_sum, number
from dpsql.plan import WEIGHT_SCALE, HistogramSpec, PrivacyPlan
from dpsql.rewrite.expressions import missing, same_keys, same_pair, source
from dpsql.rewrite.values import limit, raw_value

BUCKET = "__dp_bucket"
WEIGHT = "__dp_w"
TOTAL = "__dp_total"
"""Column of the kept pairs holding the unit's clamped row total T (when r binds)."""


def bucket(spec: HistogramSpec, types: Mapping[str, str],
           bounds: Mapping[str, tuple[float, float]]) -> exp.Expression:
    """The value's bucket in [0, B − 1]; NULL for NULL and NaN."""
    raw, is_float = raw_value(spec.expr, types, bounds)
    offset = exp.paren(exp.Sub(this=as_double(raw.copy()), expression=number(spec.lo)))
    scaled = exp.Mul(this=offset, expression=number(spec.buckets / (spec.hi - spec.lo)))
    # Clamp, then FLOOR: Spark's FLOOR returns BIGINT and (in ANSI mode) fails on ±inf.
    index = as_bigint(exp.Floor(this=limit(scaled, 0, spec.buckets - 1)))
    return exp.Case(ifs=[exp.If(this=missing(raw, is_float=is_float), true=exp.Null())],
                    default=index)


def bucket_column(spec: HistogramSpec) -> str:
    """The rows' column holding this histogram's bucket (``bucket``), where the rows carry
    one per histogram (``kept_rows_ranked``)."""
    return f"{spec.name}_bucket"


def values_column(spec: HistogramSpec) -> str:
    """The column of the kept pairs (or of the kept rows, ``kept_rows_ranked``) holding
    how many values the pair has in this histogram."""
    return f"{spec.name}_values"


def pair_counts(plan: PrivacyPlan) -> tuple[list[exp.Expression], list[exp.Expression]]:
    """Row items (1 where the value has a bucket, NULL where it has none) and the pair
    aggregates counting them: each histogram's n per (unit, group), for ``unit_weights``.

    >>> import sqlglot, types
    >>> from dpsql.plan import HistogramSpec
    >>> spec = HistogramSpec("__dp_h0", sqlglot.parse_one("age"), 0, 100, buckets=4)
    >>> plan = types.SimpleNamespace(histograms=(spec,), column_types={}, column_bounds={})
    >>> rows, pairs = pair_counts(plan)
    >>> for item in rows + pairs: print(item.sql())
    CASE WHEN age IS NULL THEN NULL ELSE 1 END AS __dp_h0_present
    COUNT(__dp_h0_present) AS __dp_h0_values
    """
    rows, pairs = [], []
    for spec in plan.histograms:
        raw, is_float = raw_value(spec.expr, plan.column_types, plan.column_bounds)
        present = exp.Case(ifs=[exp.If(this=missing(raw, is_float=is_float), true=exp.Null())],
                           default=number(1))
        rows.append(exp.alias_(present, f"{spec.name}_present"))
        pairs.append(exp.alias_(exp.Count(this=exp.column(f"{spec.name}_present")),
                                values_column(spec)))
    return rows, pairs


def attach(plan: PrivacyPlan, spine: exp.Select,
           weights: Callable[[HistogramSpec], exp.Select],
           by: Sequence[str] | None = None) -> exp.Select:
    """``spine`` (one row per group) with one histogram list column per plan histogram,
    built from each histogram's ``weights``: a SELECT of the keys, ``BUCKET`` and
    ``WEIGHT`` (``row_weights``, ``unit_weights``); or of the columns ``by`` that name the
    groups instead of the keys (the group's rank, ``kept_rows_ranked``)."""
    keys = plan.key_names if by is None else by
    query = exp.select(exp.Column(this=exp.Star(), table=exp.to_identifier("__dp_s")))
    query = query.from_(spine.subquery("__dp_s", copy=False), copy=False)
    for spec in plan.histograms:
        lists = exp.select(*(exp.column(k) for k in keys),
                           exp.alias_(_entries(), spec.name)).from_(
            weights(spec).subquery("__dp_hw", copy=False), copy=False)
        if keys:
            lists = lists.group_by(*(exp.column(k) for k in keys), copy=False)
        alias = f"{spec.name}_t"
        query = query.select(exp.column(spec.name, table=alias), copy=False)
        query = query.join(lists.subquery(alias, copy=False), on=same_keys(keys, "__dp_s", alias),
                           join_type="left", copy=False)
    return query


def _entries() -> exp.Expression:
    """ARRAY_AGG({b: bucket, w: weight}) over one group's non-empty buckets: the rows
    without a bucket, which ``unit_weights`` joins, are a NULL bucket that weighs nothing."""
    struct = exp.Struct(expressions=[
        exp.PropertyEQ(this=exp.to_identifier("b"), expression=exp.column(BUCKET)),
        exp.PropertyEQ(this=exp.to_identifier("w"), expression=exp.column(WEIGHT))])
    return exp.Filter(this=exp.ArrayAgg(this=struct), expression=exp.Where(this=bucketed()))


def bucketed(column: str = BUCKET) -> exp.Expression:
    """The value in ``column`` has a bucket (is not NULL)."""
    return exp.Not(this=exp.Is(this=exp.column(column), expression=exp.Null()))


def _rows(plan: PrivacyPlan, spec: HistogramSpec, unit: exp.Expression | None,
          filters: exp.Expression | None, *, unbucketed: bool = False) -> exp.Select:
    """SELECT [unit,] keys, bucket FROM the table WHERE filters: the rows with a bucket
    only, or with ``unbucketed`` also the rows without one (a NULL bucket)."""
    items = [exp.alias_(unit.copy(), "__dp_unit")] if unit is not None else []
    items += [exp.column(k) for k in plan.key_names]
    items.append(exp.alias_(bucket(spec, plan.column_types, plan.column_bounds), BUCKET))
    rows = exp.select(*items).from_(source(plan), copy=False)
    if filters is not None:
        rows = rows.where(filters.copy(), copy=False)
    outer = exp.select("*").from_(rows.subquery("__dp_hr", copy=False), copy=False)
    return outer if unbucketed else outer.where(bucketed(), copy=False)


def row_weights(plan: PrivacyPlan, spec: HistogramSpec,
                filters: exp.Expression | None) -> exp.Select:
    """Row-level privacy: each row is a unit with one value, weight S."""
    group = [*(exp.column(k) for k in plan.key_names), exp.column(BUCKET)]
    weight = as_bigint(exp.Mul(this=exp.Count(this=exp.Star()), expression=number(WEIGHT_SCALE)))
    return exp.select(*group, exp.alias_(weight, WEIGHT)).from_(
        _rows(plan, spec, None, filters).subquery("__dp_hc", copy=False),
        copy=False).group_by(*group, copy=False)


def per_value_weight(c: int, values: exp.Expression) -> exp.Expression:
    """min(S, ⌊c·S/n⌋) for a unit with n values in the group: n × it is at most c·S."""
    return exp.Least(this=number(WEIGHT_SCALE),
                     expressions=[exp.IntDiv(this=number(c * WEIGHT_SCALE), expression=values)])


def unit_weights(plan: PrivacyPlan, spec: HistogramSpec, kept: str,
                 filters: exp.Expression | None, in_rows: bool = False) -> exp.Select:
    """Σ over the rows of kept (unit, group) pairs of the per-value weight, per (group, bucket).

    A unit's weight per value depends on how many values it has in the group, which the
    kept pairs carry (``pair_counts``): the rows are joined to them once (a join costs a
    fraction of a window partitioned by unit in DuckDB, and sums the same: a unit with n
    values in a bucket adds n × its weight). Without keys every unit is kept, its one pair
    is itself (a total cap is its rows per group) and n is its count of rows with a bucket:
    with ``in_rows`` (``Bounding.in_rows``) that count is taken over the unit's rows in a
    window instead (``_counted_in_window``).

    The rows without a bucket are joined too (``_entries`` drops their NULL bucket): a
    filter on the rows would make DuckDB's optimizer, which guesses that a fifth of a
    file's rows pass it, take them for fewer than the kept pairs and build the join's hash
    table on the rows (docs/benchmarks.md).
    """
    keys = plan.key_names
    unit = exp.column(plan.privacy_unit)
    group = [*(exp.column(k, table="__dp_q") for k in keys), exp.column(BUCKET, table="__dp_q")]
    if in_rows and not keys:
        return _counted_in_window(plan, spec, _rows(plan, spec, unit, filters), group)
    rows = _rows(plan, spec, unit, filters, unbucketed=True)
    return (_weighed(plan, spec, "__dp_v", group)
            .from_(rows.subquery("__dp_q", copy=False), copy=False)
            .join(exp.to_table(kept).as_("__dp_v"), on=same_pair(keys, "__dp_q", "__dp_v"),
                  join_type="inner", copy=False)
            .group_by(*group, copy=False))


def weight_column(spec: HistogramSpec) -> str:
    """The column holding this histogram's Σ per-value weight where a table carries one
    per histogram (the kept rows' cells, ``kept_rows_ranked``)."""
    return f"{spec.name}_weight"


def weight_sum(plan: PrivacyPlan, spec: HistogramSpec, counts: str) -> exp.Expression:
    """Σ per-value weight, exact, with each row's n (and total) in table ``counts``."""
    limits = plan.contribution
    # A row without a bucket (joined by ``unit_weights``, summed into a cell without a
    # bucket by ``kept_rows_ranked``) may belong to a pair with n = 0: GREATEST keeps it
    # from dividing by zero wherever an engine computes this.
    values = exp.Greatest(this=exp.column(values_column(spec), table=counts),
                          expressions=[number(1)])
    per_value = per_value_weight(limits.rows_per_group, values)
    if limits.caps_total:
        total = exp.column(TOTAL, table=counts)
        capped = exp.Least(this=total.copy(), expressions=[number(limits.max_rows_per_unit)])
        per_value = exp.IntDiv(this=exp.paren(exp.Mul(this=per_value, expression=capped)),
                               expression=total)
    # 0 ≤ per_value ≤ WEIGHT_SCALE: the LEAST above, scaled by at most 1 under a total cap.
    return as_bigint(exact_sum(per_value, WEIGHT_SCALE))


def _weighed(plan: PrivacyPlan, spec: HistogramSpec, counts: str,
             group: list[exp.Expression]) -> exp.Select:
    """SELECT group, Σ per-value weight, with each row's n (and total) in table ``counts``."""
    return exp.select(*(exp.alias_(g.copy(), g.name) for g in group),
                      exp.alias_(weight_sum(plan, spec, counts), WEIGHT))


def _counted_in_window(plan: PrivacyPlan, spec: HistogramSpec, rows: exp.Select,
                       group: list[exp.Expression]) -> exp.Select:
    """``unit_weights`` of a keyless histogram with each unit's n counted over its rows
    (``COUNT(*) OVER (PARTITION BY unit)``) instead of joined from the kept pairs: the
    same n (a row has a bucket exactly where ``pair_counts`` counts it present, under the
    same filters). Spark shuffles the rows once for the window where the join shuffled
    both them and the per-unit counts (docs/benchmarks.md).
    """
    counted = exp.select(BUCKET, exp.alias_(
        exp.Window(this=exp.Count(this=exp.Star()), partition_by=[exp.column("__dp_unit")]),
        values_column(spec))).from_(rows.subquery("__dp_x"), copy=False)
    return (_weighed(plan, spec, "__dp_q", group)
            .from_(counted.subquery("__dp_q", copy=False), copy=False)
            .group_by(*(g.copy() for g in group), copy=False))
