"""The rewrite stage: a PrivacyPlan becomes SQL that enforces its bounds.

The bounded query aggregates per (unit, group) first, keeps at most
``max_groups_per_unit`` groups per unit chosen by a keyed hash with a fresh
secret salt (independent of values), clamps each unit's per-group partials,
scales a unit's partials down if it exceeds ``max_rows_per_unit``, and then
aggregates per group. Only the (unit, group) pairs are ranked, never raw rows.
The tree is dialect-neutral sqlglot; backends print it in their dialect.

>>> from dpsql.analysis import analyze
>>> from dpsql.catalog import Catalog, TableInfo
>>> cat = Catalog()
>>> _ = cat.add(TableInfo.private("t", columns={"pid": "INT", "x": "INT"}, row_privacy=True,
...                               bounds={"x": (0, 5)}))
>>> print(rewrite(analyze("SELECT SUM(x) FROM t", cat, epsilon=1, delta=0), salt="s").sql())
SELECT CAST(COALESCE(SUM(CASE WHEN CAST(...) END), 0) AS DOUBLE) AS __dp_s0 FROM t
"""

from __future__ import annotations

from sqlglot import exp

from dpsql.plan import BoundedQuery, PrivacyPlan, StatSpec
from dpsql.rewrite.expressions import as_bigint, as_double, bounded, missing, number

UNIT = "__dp_unit"
RANK = "__dp_rank"
HASH = "__dp_hash"
FACTOR = "__dp_factor"
ROWS = "__dp_rows"


def rewrite(plan: PrivacyPlan, *, salt: str) -> BoundedQuery:
    """Build the bounded aggregate query for ``plan``, salting the group choice with ``salt``."""
    if plan.row_level:
        return BoundedQuery(_row_level(plan))
    return BoundedQuery(_unit_level(plan, salt))


def _keys(plan: PrivacyPlan) -> list[exp.Column]:
    return [exp.column(k.name) for k in plan.keys]


def _filter(plan: PrivacyPlan, unit: exp.Expression | None) -> exp.Expression | None:
    """WHERE of the query, plus unit IS NOT NULL and public-domain membership."""
    parts = [exp.paren(plan.where.copy())] if plan.where is not None else []
    if unit is not None:
        parts.append(exp.Not(this=exp.Is(this=unit, expression=exp.Null())))
    for key in plan.keys:
        if key.public:
            values = [exp.Literal.string(v) if isinstance(v, str) else number(v)
                      for v in key.domain if v is not None]
            parts.append(exp.In(this=exp.column(key.column), expressions=values)
                         if values else exp.false())
    return exp.and_(*parts) if parts else None


def _value(spec: StatSpec, plan: PrivacyPlan) -> exp.Expression:
    """Row-level value of a statistic: what COUNT counts, or the value in integer quanta."""
    cleaned = bounded(spec.expr, plan.column_types, plan.column_bounds)
    if spec.kind == "count":
        return cleaned
    # A bare column needs no catalog clamp: the clamp to [lo, hi] below is at least as tight.
    value = as_double(spec.expr.copy() if isinstance(spec.expr, exp.Column) else cleaned)
    quanta = exp.Round(this=exp.Div(this=value.copy(), expression=number(spec.value_quantum)))
    units = as_bigint(_limit(quanta, spec.lo_units, spec.hi_units))
    if spec.kind == "centered_sum":
        units = exp.Sub(this=exp.Mul(this=number(2), expression=units),
                        expression=number(spec.lo_units + spec.hi_units))
    return exp.Case(ifs=[exp.If(this=missing(value, is_float=True), true=exp.Null())],
                    default=units)


def _limit(node: exp.Expression, lo: float, hi: float) -> exp.Expression:
    """LEAST(GREATEST(node, lo), hi) for a node known not to be NULL."""
    raised = exp.Greatest(this=node, expressions=[number(lo)], ignore_nulls=True)
    return exp.Least(this=raised, expressions=[number(hi)], ignore_nulls=True)


def _row_values(plan: PrivacyPlan) -> list[exp.Expression]:
    return [exp.alias_(_value(s, plan), s.name) for s in plan.stats
            if s.kind in ("count", "sum", "centered_sum")]


def _row_level(plan: PrivacyPlan) -> exp.Select:
    """Every row is its own unit: clamp values and aggregate per group directly."""
    items = _keys(plan)
    for spec in plan.stats:
        if spec.kind in ("units", "rows"):
            final = as_bigint(exp.Count(this=exp.Star()))
        elif spec.kind == "count":
            final = as_bigint(exp.Count(this=_value(spec, plan)))
        else:
            final = _coalesced_sum(_value(spec, plan))
        items.append(exp.alias_(final, spec.name))
    query = exp.select(*items).from_(plan.relation, copy=False)
    where = _filter(plan, None)
    if where is not None:
        query = query.where(where, copy=False)
    return query.group_by(*_keys(plan), copy=False) if plan.keys else query


def _coalesced_sum(value: exp.Expression) -> exp.Expression:
    return as_double(exp.Coalesce(this=exp.Sum(this=value), expressions=[number(0)]))


def _pair_partial(spec: StatSpec, c: int) -> exp.Expression:
    """One unit's contribution to one group, clamped to the per-group bound (in quanta)."""
    if spec.kind == "rows":
        return _limit(exp.Count(this=exp.Star()), 0, c)
    if spec.kind == "count":
        return _limit(exp.Count(this=exp.column(spec.name)), 0, c)
    total = exp.Coalesce(this=exp.Sum(this=exp.column(spec.name)), expressions=[number(0)])
    if spec.kind == "sum":
        return _limit(total, c * min(spec.lo_units, 0), c * max(spec.hi_units, 0))
    return _limit(total, -c * spec.row_bound, c * spec.row_bound)


def _unit_level(plan: PrivacyPlan, salt: str) -> exp.Select:
    limits = plan.contribution
    c = limits.rows_per_group
    unit = exp.column(plan.privacy_unit)
    rows = exp.select(exp.alias_(unit.copy(), UNIT), *_keys(plan), *_row_values(plan))
    rows = rows.from_(plan.relation, copy=False)
    where = _filter(plan, unit)
    if where is not None:
        rows = rows.where(where, copy=False)
    group = [exp.column(UNIT), *_keys(plan)]
    partials = [exp.alias_(_pair_partial(s, c), s.name) for s in plan.stats if s.kind != "units"]
    pairs = _over(rows, "__dp_r", *group, *partials).group_by(*group, copy=False)
    if limits.caps_total:
        pairs = pairs.select(exp.alias_(exp.Count(this=exp.Star()), ROWS), copy=False)
    kept = _keep_groups(plan, pairs, salt)
    if limits.caps_total:
        kept = _cap_total(plan, kept)
    return _per_group(plan, kept)


def _over(inner: exp.Select, alias: str, *items: exp.Expression | str) -> exp.Select:
    """SELECT items FROM (inner) AS alias, building in place (no tree copies)."""
    return exp.select(*items, copy=False).from_(inner.subquery(alias, copy=False), copy=False)


def _keep_groups(plan: PrivacyPlan, pairs: exp.Select, salt: str) -> exp.Select:
    """At most g groups per unit, chosen by a salted hash of (unit, keys): value-blind."""
    g = plan.contribution.groups_per_unit
    if not plan.keys or _public_domain_size(plan) <= g:
        return pairs
    digest = exp.Anonymous(this="HASH", expressions=[exp.Literal.string(salt),
                                                     exp.column(UNIT), *_keys(plan)])
    hashed = _over(pairs, "__dp_p", "*", exp.alias_(digest, HASH))
    window = exp.Window(this=exp.RowNumber(), partition_by=[exp.column(UNIT)],
                        order=exp.Order(expressions=[exp.Ordered(this=exp.column(HASH))]))
    ranked = _over(hashed, "__dp_h", "*", exp.alias_(window, RANK))
    rank_ok = exp.LTE(this=exp.column(RANK), expression=number(g))
    return _over(ranked, "__dp_k", "*").where(rank_ok, copy=False)


def _public_domain_size(plan: PrivacyPlan) -> float:
    if not all(k.public for k in plan.keys):
        return float("inf")
    size = 1
    for key in plan.keys:
        size *= len(key.domain)
    return size


def _cap_total(plan: PrivacyPlan, kept: exp.Select) -> exp.Select:
    """Scale each unit's partials by min(1, r / its total clamped rows)."""
    limits = plan.contribution
    clamped = _limit(exp.column(ROWS), 0, limits.rows_per_group)
    total = exp.Window(this=exp.Sum(this=clamped), partition_by=[exp.column(UNIT)])
    ratio = exp.Div(this=number(float(limits.max_rows_per_unit)), expression=total)
    factor = exp.Least(this=number(1), expressions=[ratio], ignore_nulls=True)
    return _over(kept, "__dp_c", "*", exp.alias_(factor, FACTOR))


def _per_group(plan: PrivacyPlan, kept: exp.Select) -> exp.Select:
    scaled = plan.contribution.caps_total
    items = _keys(plan)
    for spec in plan.stats:
        if spec.kind == "units":
            items.append(exp.alias_(as_bigint(exp.Count(this=exp.Star())), spec.name))
            continue
        partial: exp.Expression = exp.column(spec.name)
        if scaled:
            # Truncation toward zero keeps |partial × factor| within the scaled bound.
            partial = as_bigint(exp.Trunc(this=exp.Mul(this=partial,
                                                       expression=exp.column(FACTOR))))
        if spec.kind in ("rows", "count"):
            final = as_bigint(exp.Coalesce(this=exp.Sum(this=partial), expressions=[number(0)]))
        else:
            final = _coalesced_sum(partial)
        items.append(exp.alias_(final, spec.name))
    query = _over(kept, "__dp_b", *items)
    return query.group_by(*_keys(plan), copy=False) if plan.keys else query
