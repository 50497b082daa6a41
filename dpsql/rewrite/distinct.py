"""COUNT(DISTINCT expr) over the bounded rows: at most c distinct values per (unit, group).

A group's distinct count is the size of the union, over its units, of the values each unit
contributes. The rewrite makes one unit's part of that union small and independent of the
other units:

- each unit keeps at most c = ``rows_per_group`` of its distinct non-NULL values per group,
  the c first by a salted hash of (unit, value) (ties broken by the value), so which values
  it keeps depends only on its own rows;
- only the (unit, group) pairs the rest of the query keeps (at most g groups per unit,
  chosen by the salted hash of the keys) contribute: the values join the same kept pairs.

Removing a unit u then leaves every other unit's kept values unchanged and removes from the
union at most the values only u contributed: at most c per group, in at most g groups
(adding u is symmetric). So the statistic has per-cell bound c, L1 ≤ g·c and L2 ≤ c·√g;
``max_rows_per_unit`` is not used to tighten it (see ``analysis.sensitivity.sensitivity_of``).
A unit with 40 rows of 40 different values in a group still adds at most c values.

>>> from dpsql.analysis import analyze
>>> from dpsql.catalog import Catalog, TableInfo
>>> cat = Catalog()
>>> _ = cat.add(TableInfo.private("t", columns={"pid": "INT", "k": "INT", "s": "VARCHAR"},
...                               privacy_unit="pid", max_rows_per_group=2))
>>> plan = analyze("SELECT COUNT(DISTINCT s) FROM t", cat, epsilon=1, delta=0)
>>> [str(s) for s in specs(plan)]
['__dp_s0=distinct(s)']
"""

from __future__ import annotations

from sqlglot import exp

from dpsql.expr.nodes import as_bigint, number
from dpsql.expr.types import type_class
from dpsql.plan import PrivacyPlan, StatSpec
from dpsql.rewrite.digest import keyed_hash
from dpsql.rewrite.expressions import same_keys, same_pair, source
from dpsql.rewrite.values import present

UNIT = "__dp_unit"
VALUE = "__dp_dv"
RANK = "__dp_drank"


def specs(plan: PrivacyPlan) -> tuple[StatSpec, ...]:
    """The plan's distinct-count statistics (other than the count of units)."""
    return tuple(s for s in plan.stats if s.kind == "distinct")


def attach(plan: PrivacyPlan, spine: exp.Select, kept: str,
           filters: exp.Expression | None) -> exp.Select:
    """``spine`` (one row per group) with one BIGINT column per distinct count (0 if none)."""
    keys = plan.key_names
    query = exp.select(exp.Column(this=exp.Star(), table=exp.to_identifier("__dp_d")))
    query = query.from_(spine.subquery("__dp_d", copy=False), copy=False)
    for spec in specs(plan):
        alias = f"{spec.name}_t"
        count = exp.Coalesce(this=exp.column(spec.name, table=alias), expressions=[number(0)])
        query = query.select(exp.alias_(as_bigint(count), spec.name), copy=False)
        on = same_keys(keys, "__dp_d", alias)
        counts = distinct_counts(plan, spec, kept, filters)
        query = query.join(counts.subquery(alias, copy=False), on=on, join_type="left",
                           copy=False)
    return query


def _values(plan: PrivacyPlan, spec: StatSpec, filters: exp.Expression | None) -> exp.Select:
    """The distinct (unit, keys, value) triples with a non-NULL value."""
    keys = [exp.column(k) for k in plan.key_names]
    rows = exp.select(exp.alias_(exp.column(plan.privacy_unit), UNIT), *keys,
                      exp.alias_(present(spec, plan.column_types), VALUE))
    rows = rows.from_(source(plan), copy=False)
    if filters is not None:
        rows = rows.where(filters.copy(), copy=False)
    triples = exp.select(UNIT, *(exp.column(k.name) for k in plan.keys), VALUE).distinct()
    triples = triples.from_(rows.subquery("__dp_dr", copy=False), copy=False)
    return triples.where(exp.Not(this=exp.Is(this=exp.column(VALUE), expression=exp.Null())),
                         copy=False)


def distinct_counts(plan: PrivacyPlan, spec: StatSpec, kept: str,
            filters: exp.Expression | None) -> exp.Select:
    """Per group, the distinct values of the first c per kept (unit, group) pair."""
    keys = plan.key_names
    # Numbers of any type are hashed like floating-point values: the same text in every engine.
    value_type = "DOUBLE" if type_class(spec.expr, plan.column_types) == "numeric" else "VARCHAR"
    digest = keyed_hash([(UNIT, plan.column_types.get(plan.privacy_unit, "")),
                               (VALUE, value_type)])
    window = exp.Window(this=exp.RowNumber(),
                        partition_by=[exp.column(UNIT), *(exp.column(k) for k in keys)],
                        order=exp.Order(expressions=[exp.Ordered(this=digest),
                                                     exp.Ordered(this=exp.column(VALUE))]))
    ranked = exp.select("*", exp.alias_(window, RANK)).from_(
        _values(plan, spec, filters).subquery("__dp_dt", copy=False), copy=False)
    on = same_pair(keys, "__dp_q", "__dp_k")
    first = exp.LTE(this=exp.column(RANK, table="__dp_q"),
                    expression=number(plan.contribution.rows_per_group))
    distinct = exp.Count(this=exp.Distinct(expressions=[exp.column(VALUE, table="__dp_q")]))
    group = [exp.column(k, table="__dp_q") for k in keys]
    query = (exp.select(*(exp.alias_(g.copy(), g.name) for g in group),
                        exp.alias_(distinct, spec.name))
             .from_(ranked.subquery("__dp_q", copy=False), copy=False)
             .join(exp.to_table(kept).as_("__dp_k"), on=on, join_type="inner", copy=False)
             .where(first, copy=False))
    return query.group_by(*group, copy=False) if group else query
