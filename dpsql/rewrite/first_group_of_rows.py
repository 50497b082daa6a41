"""Strategy ``first_group_of_rows``: counts alone at one group per unit, from the rows.

Each unit's counts in its first group come from one aggregate per unit over its rows: no
(unit, group) aggregate. Each row joins its group's codes (``pairs.coded``) and carries its
pair's order, ``order · 2³² + rank`` (``pairs.pair_ordered``: the BIGINT the first-pair
strategy takes the smallest of), so the smallest over the unit's rows is its first
pair's, and that order modulo 2³² is the pair's group rank. At c = 1 the pair's clamped
count of rows is 1, and its clamped count of values is 1 exactly when one of its rows has a
value: when the smallest order over the rows with a value is the first pair's. A unit
counts once for its group. The keys come from the codes by the group's rank.

>>> from dpsql.analysis import analyze
>>> from dpsql.catalog import Catalog, TableInfo
>>> from dpsql.rewrite import rewrite
>>> cat = Catalog()
>>> _ = cat.add(TableInfo.private("t", columns={"pid": "INT", "k": "TEXT", "x": "INT"},
...                               privacy_unit="pid", bounds={"x": (0, 5)}))
>>> plan = analyze("SELECT k, COUNT(x) FROM t GROUP BY k", cat, epsilon=1, delta=1e-6)
>>> sql = rewrite(plan).sql()
>>> "MIN(CASE WHEN NOT __dp_v0 IS NULL THEN __dp_first END) = MIN(__dp_first)" in sql
True
"""

from __future__ import annotations

from sqlglot import exp

from dpsql.expr.nodes import number
from dpsql.plan import Bounding, PrivacyPlan
from dpsql.rewrite.frame import FIRST, GROUP_RANK, GROUP_RANKS, UNIT, keys, over, per_group
from dpsql.rewrite.pairs import rows_in_pair_order, with_keys
from dpsql.rewrite.values import RowValues, in_quanta


def build(plan: PrivacyPlan, bounding: Bounding) -> exp.Select:
    """The counts per group of each unit's first group."""
    counted = tuple(s for s in plan.stats if s.kind in ("rows", "count"))
    values = RowValues(counted, plan.column_types, plan.column_bounds)
    ordered, with_codes = rows_in_pair_order(plan, exp.column(plan.privacy_unit),
                                             values.select_items())
    first = exp.Min(this=exp.column(FIRST))
    partials = [exp.alias_(in_quanta(number(1) if spec.kind == "rows" else _first_has(
        values.of[spec.name], first), spec), spec.name) for spec in counted]
    rank = exp.Mod(this=first.copy(), expression=number(GROUP_RANKS))
    chosen = (over(ordered, "__dp_k", exp.column(UNIT), exp.alias_(rank, GROUP_RANK),
                   *partials)
              .group_by(exp.column(UNIT), copy=False))
    names = [*keys(plan), *(exp.column(spec.name) for spec in counted)]
    return with_codes(per_group(plan, with_keys(chosen, names, set(plan.key_names))))


def _first_has(value: str, first: exp.Expression) -> exp.Expression:
    """1 if a row of the unit's first pair has a ``value`` (the smallest ``first`` over
    the rows with one is the smallest over all), else 0: the pair's count of values
    clamped to c = 1."""
    with_value = exp.Min(this=exp.Case(ifs=[exp.If(
        this=exp.Not(this=exp.Is(this=exp.column(value), expression=exp.Null())),
        true=exp.column(FIRST))]))
    return exp.Case(ifs=[exp.If(this=exp.EQ(this=with_value, expression=first.copy()),
                                true=number(1))], default=number(0))
