"""Strategy ``row_level``: every row is its own privacy unit.

Nothing to choose: each row's values are clamped and aggregated per group directly (a
row is in one group), and the public domain filters the keys.
"""

from __future__ import annotations

from sqlglot import exp

from dpsql.expr.nodes import as_bigint, as_double
from dpsql.plan import Bounding, PrivacyPlan
from dpsql.rewrite import quantiles
from dpsql.rewrite.expressions import source
from dpsql.rewrite.frame import in_domain, keys, one_row, row_filter
from dpsql.rewrite.values import RowValues, aggregate


def build(plan: PrivacyPlan, bounding: Bounding) -> exp.Select:
    """The per-group aggregates of the clamped rows (and their histograms)."""
    values = RowValues(plan.stats, plan.column_types, plan.column_bounds)
    items = keys(plan)
    for spec in plan.stats:
        if spec.kind in ("units", "rows"):
            final = as_bigint(exp.Count(this=exp.Star()))
        elif spec.kind in ("count", "distinct"):
            final = as_bigint(aggregate(spec, values.inline(spec)))
        else:
            final = as_double(aggregate(spec, values.inline(spec)))
        items.append(exp.alias_(final, spec.name))
    conditions = [c for c in (row_filter(plan, None), in_domain(plan)) if c is not None]
    where = exp.and_(*conditions) if conditions else None
    if not items:  # a global query of quantiles only: one row to attach them to
        return quantiles.attach(plan, one_row(), lambda spec: quantiles.row_weights(
            plan, spec, where))
    query = exp.select(*items).from_(source(plan), copy=False)
    if where is not None:
        query = query.where(where.copy(), copy=False)
    if plan.keys:
        query = query.group_by(*keys(plan), copy=False)
    if not plan.histograms:
        return query
    return quantiles.attach(plan, query, lambda spec: quantiles.row_weights(plan, spec, where))
