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
(``quantiles.kept_row_weights``) as the join of the rows to the kept pairs, and the keys
come from the codes by the group's rank. The kept rows are read by the counts and by each
histogram: computed once where the engine needs it (``Bounding.compute_once``).
"""

from __future__ import annotations

from sqlglot import exp

from dpsql.expr.nodes import number
from dpsql.plan import Bounding, PrivacyPlan
from dpsql.rewrite import quantiles
from dpsql.rewrite.frame import (
    FIRST,
    GROUP_RANK,
    KEPT,
    OPENS,
    RANK,
    UNIT,
    keys,
    output_columns,
    over,
    per_group,
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
    key_names = set(plan.key_names)
    c = plan.contribution.rows_per_group
    # pair_partial's clamp of the pair's count
    partials = [exp.alias_(in_quanta(limit(exp.column(spec.name), 0, spec.kept_rows(c)), spec),
                           spec.name) for spec in counted]
    pairs = exp.select(GROUP_RANK, *partials).from_(KEPT, copy=False).where(
        exp.column(OPENS), copy=False)
    spine = per_group(plan, with_keys(pairs, [*keys(plan), *output_columns(pairs)[1:]],
                                      key_names))
    names = [*keys(plan), exp.column(quantiles.BUCKET), exp.column(quantiles.WEIGHT)]
    query = quantiles.attach(plan, spine, lambda spec: with_keys(
        quantiles.kept_row_weights(plan, spec, KEPT, GROUP_RANK), names, key_names))
    return with_kept(with_codes(query), kept, bounding)


def _in_unit(function: exp.Expression, pair: bool = False) -> exp.Window:
    """``function`` over the unit's rows in pair order; over the pair's rows (its peers in
    that order) if ``pair``."""
    frame = exp.WindowSpec(kind="RANGE", start="CURRENT ROW", end="CURRENT ROW") \
        if pair else None
    in_order = exp.Order(expressions=[exp.Ordered(this=exp.column(FIRST))])
    return exp.Window(this=function, partition_by=[exp.column(UNIT)], order=in_order,
                      spec=frame)
