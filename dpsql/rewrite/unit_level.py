"""The bounded query of the strategies that keep (unit, group) *pairs*: ``all_pairs``,
``first_pair``, ``first_pairs_by_window`` and ``heavy_units_by_hash``.

Each unit's rows are aggregated per (unit, group) to bounded partials (counts to c rows,
sums weighted to c values at the unit's mean: ``values.weighted_partial``); the strategy's
``Keep`` keeps at most g pairs per unit; a unit's partials are scaled down if it exceeds
``max_rows_per_unit``; the kept partials are summed per group. Histograms and distinct
values join the same kept pairs, so they count the same groups per unit.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from dpsql.plan import Bounding, PrivacyPlan
from dpsql.rewrite import distinct, quantiles
from dpsql.rewrite.expressions import source
from dpsql.rewrite.frame import (
    KEPT,
    ROWS,
    UNIT,
    cap_total,
    keys,
    one_row,
    pair_partial,
    pairs_in_domain,
    partial_bound,
    per_group,
    row_filter,
    with_kept,
)
from dpsql.rewrite.values import RowValues

Keep = Callable[[PrivacyPlan, Bounding, exp.Select, list[exp.Expression],
                 exp.Expression | None, dict[str, int]], exp.Select]
"""A strategy's choice of pairs: ``keep(plan, bounding, rows, partials, domain, bounds)``
gives the pairs of ``rows`` (the unit, the keys and the row values) with their
``partials``, at most g per unit, only those in the public ``domain`` (if any); ``bounds``
holds the largest |partial| of those that have one (``partial_bound``)."""


def builder(keep: Keep) -> Callable[[PrivacyPlan, Bounding], exp.Select]:
    """The bounded query of a pair strategy whose choice is ``keep``."""
    def build(plan: PrivacyPlan, bounding: Bounding) -> exp.Select:
        return _bounded(plan, bounding, keep)
    return build


def _bounded(plan: PrivacyPlan, bounding: Bounding, keep: Keep) -> exp.Select:
    limits = plan.contribution
    c = limits.rows_per_group
    unit = exp.column(plan.privacy_unit)
    pair_stats = tuple(s for s in plan.stats if s.kind not in ("units", "distinct"))
    values = RowValues(pair_stats, plan.column_types, plan.column_bounds)
    present, counts = quantiles.pair_counts(plan)
    rows = exp.select(exp.alias_(unit.copy(), UNIT), *keys(plan), *values.select_items(),
                      *present)
    rows = rows.from_(source(plan), copy=False)
    where = row_filter(plan, unit)
    if where is not None:
        rows = rows.where(where, copy=False)
    partials = [exp.alias_(pair_partial(s, c, values), s.name) for s in pair_stats] + counts
    if limits.caps_total:
        partials.append(exp.alias_(exp.Count(this=exp.Star()), ROWS))
    bounds = {s.name: partial_bound(s, c) for s in pair_stats}
    kept = keep(plan, bounding, rows, partials, pairs_in_domain(plan), bounds)
    if limits.caps_total:
        kept = cap_total(plan, kept)
    if not plan.histograms and not distinct.specs(plan):
        return per_group(plan, kept)
    return with_kept(_attached(plan, bounding, unit), kept, bounding)


def _attached(plan: PrivacyPlan, bounding: Bounding, unit: exp.Column) -> exp.Select:
    """The sums per group of the kept pairs (``KEPT``) with the histograms and distinct
    counts of the same pairs."""
    summed = any(s.kind != "distinct" for s in plan.stats)
    spine = per_group(plan, exp.select("*").from_(KEPT)) if summed or plan.keys \
        else one_row()
    query = quantiles.attach(plan, spine, lambda spec: quantiles.unit_weights(
        plan, spec, KEPT, row_filter(plan, unit), bounding.in_rows)) \
        if plan.histograms else spine
    if distinct.specs(plan):
        query = distinct.attach(plan, query, KEPT, row_filter(plan, unit))
    return query
