"""Strategy ``kept_rows_ranked``: quantiles by private groups beside counts, from the rows.

The groups' histograms and counts come from each integer unit's rows in its first g
groups, ranked over the rows themselves: no (unit, group) aggregate, and no join of the
rows back to the kept pairs.

Each row joins its group's codes (``pairs.coded``) and carries its pair's order, ``order
· 2³² + rank`` (``pairs.pair_ordered``: the same BIGINT that the first-pair strategies
order the pairs by). Over a window of the unit's rows in that order, the pair's
``DENSE_RANK`` is its rank among the unit's pairs, so rank ≤ g keeps the same pairs; a
pair's rows are peers, so each histogram's n is ``COUNT(bucket)`` over the peers (``RANGE``
from the current row to the current row), and so is each count's (``COUNT(*)``,
``COUNT(value)``); the pair's first row is the one whose ``ROW_NUMBER`` equals its
``RANK``: it carries the pair's clamped counts (``frame.pair_partial``'s) and counts the
pair for the units. The histograms then sum the same per-value weights
(``quantiles.weight_sum``) as the join of the rows to the kept pairs.

The kept rows are aggregated once, per (group's rank, each histogram's bucket): these
*cells* carry each count's sum over the pairs' first rows and each histogram's Σ weight,
and the counts per group and each histogram per (group, bucket) are sums of the cells,
with the keys from the codes by the group's rank. The kept rows are read once, so that an
engine that inlines a CTE at each reference (Spark) does not rank them twice nor store
them to share: it computes the cells once where it needs to be told
(``Bounding.compute_once``), and they are at most the groups times each histogram's
buckets and one more (its NULL), never more than the kept rows
(docs/benchmarks.md, "Spark: MEDIAN BY's kept rows aggregated once into cells": with
nobody over the limit, from 2.9–3.0× Spark's floor to 2.3×).
"""

from __future__ import annotations

from sqlglot import exp

from dpsql.expr.nodes import as_bigint, exact_sum, number
from dpsql.plan import Bounding, HistogramSpec, PrivacyPlan
from dpsql.rewrite import quantiles
from dpsql.rewrite.frame import (
    CELLS,
    FIRST,
    GROUP_RANK,
    OPENS,
    RANK,
    UNIT,
    keys,
    over,
    partial_bound,
    with_kept,
)
from dpsql.rewrite.pairs import rows_in_pair_order, with_keys
from dpsql.rewrite.values import RowValues, in_quanta, limit


def build(plan: PrivacyPlan, bounding: Bounding) -> exp.Select:
    """The counts and histograms per group of each unit's rows in its first g groups."""
    g = plan.contribution.groups_per_unit
    buckets = [exp.alias_(quantiles.bucket(spec, plan.column_types, plan.column_bounds),
                          quantiles.bucket_column(spec)) for spec in plan.histograms]
    counted = tuple(s for s in plan.stats if s.kind in ("rows", "count"))
    values = RowValues(counted, plan.column_types, plan.column_bounds)
    ordered, with_codes = rows_in_pair_order(plan, exp.column(plan.privacy_unit),
                                             [*values.select_items(), *buckets])
    counts = [exp.alias_(_in_unit(exp.Count(this=exp.column(quantiles.bucket_column(spec))),
                                  pair=True), quantiles.values_column(spec))
              for spec in plan.histograms]
    counts += [exp.alias_(_in_unit(exp.Count(this=exp.Star() if spec.kind == "rows"
                                             else exp.column(values.of[spec.name])),
                                   pair=True), spec.name) for spec in counted]
    opens = exp.EQ(this=_in_unit(exp.RowNumber()), expression=_in_unit(exp.Rank()))
    ranked = over(ordered, "__dp_w",
                  exp.column(GROUP_RANK), *(exp.column(b.alias) for b in buckets), *counts,
                  exp.alias_(opens, OPENS), exp.alias_(_in_unit(exp.DenseRank()), RANK))
    kept = over(ranked, "__dp_k", "*").where(
        exp.Between(this=exp.column(RANK), low=number(1), high=number(g)), copy=False)
    sums = [exp.alias_(as_bigint(exact_sum(exp.column(spec.name))), spec.name)
            for spec in plan.stats]
    spine = exp.select(GROUP_RANK, *sums).from_(CELLS, copy=False).group_by(GROUP_RANK,
                                                                            copy=False)
    by_rank = quantiles.attach(plan, spine, _weights, by=[GROUP_RANK])
    outputs = [exp.column(spec.name) for spec in (*plan.stats, *plan.histograms)]
    query = with_keys(by_rank, [*keys(plan), *outputs], set(plan.key_names))
    return with_kept(with_codes(query), _cells(plan, kept), bounding, CELLS)


def _cells(plan: PrivacyPlan, kept: exp.Select) -> exp.Select:
    """The ``kept`` rows per (group's rank, each histogram's bucket): each statistic's sum
    over the pairs' first rows, which carry the pair's clamped count (``frame.pair_partial``'s
    clamp; one per pair for ``units``), and each histogram's Σ per-value weight
    (``quantiles.weight_sum``) over the cell's rows."""
    c = plan.contribution.rows_per_group
    buckets = [exp.column(quantiles.bucket_column(spec)) for spec in plan.histograms]
    items: list[exp.Expression] = [exp.column(GROUP_RANK), *buckets]
    for spec in plan.stats:
        partial, bound = (number(1), 1) if spec.kind == "units" else (
            in_quanta(limit(exp.column(spec.name), 0, spec.kept_rows(c)), spec),
            partial_bound(spec, c))
        opening = exp.Case(ifs=[exp.If(this=exp.column(OPENS), true=partial)],
                           default=number(0))
        items.append(exp.alias_(as_bigint(exact_sum(opening, bound)), spec.name))
    items += [exp.alias_(quantiles.weight_sum(plan, spec, "__dp_q"),
                         quantiles.weight_column(spec)) for spec in plan.histograms]
    return (exp.select(*items).from_(kept.subquery("__dp_q", copy=False), copy=False)
            .group_by(exp.column(GROUP_RANK), *(b.copy() for b in buckets), copy=False))


def _weights(spec: HistogramSpec) -> exp.Select:
    """The histogram's Σ weight per (group's rank, bucket) from the cells, whose other
    histograms' buckets split them further."""
    bucket = exp.column(quantiles.bucket_column(spec))
    weight = as_bigint(exact_sum(exp.column(quantiles.weight_column(spec))))
    return (exp.select(GROUP_RANK, exp.alias_(bucket, quantiles.BUCKET),
                       exp.alias_(weight, quantiles.WEIGHT))
            .from_(CELLS, copy=False)
            .where(quantiles.bucketed(bucket.name), copy=False)
            .group_by(GROUP_RANK, bucket.copy(), copy=False))


def _in_unit(function: exp.Expression, pair: bool = False) -> exp.Window:
    """``function`` over the unit's rows in pair order; over the pair's rows (its peers in
    that order) if ``pair``."""
    frame = exp.WindowSpec(kind="RANGE", start="CURRENT ROW", end="CURRENT ROW") \
        if pair else None
    in_order = exp.Order(expressions=[exp.Ordered(this=exp.column(FIRST))])
    return exp.Window(this=function, partition_by=[exp.column(UNIT)], order=in_order,
                      spec=frame)
