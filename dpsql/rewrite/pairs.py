"""The (unit, group) pairs and the groups' codes that the strategies choosing groups share.

A *pair* is one unit's rows in one group, aggregated to its bounded partials. The groups
are *coded* before a unit's pairs are ordered: ``CODES`` holds one row per group — its rank
among the keys and its ``key_code`` (``digest.unit_order``'s keyed constants are query
parameters, bound beside the salt) — so that a pair, or a row of the strategies that order
rows, carries two integers (unit, rank) instead of the keys. The pairs are aggregated per
(unit, keys) and only they join the codes (``pairs_by_rank``); the strategies without pairs
join each row to them (``coded``; docs/benchmarks.md). A unit's pairs are ordered by one
BIGINT, ``order · 2³² + rank`` (``pair_ordered``); its first g by that order are kept.
Nothing here reads the data's values to decide: the order is a keyed hash of (unit, group)
with the query's fresh salt.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from sqlglot import exp

from dpsql.catalog import type_name
from dpsql.expr.nodes import gathered
from dpsql.plan import PrivacyPlan
from dpsql.rewrite.digest import key_code, unit_order
from dpsql.rewrite.expressions import same_keys, source
from dpsql.rewrite.frame import (
    CODE,
    CODES,
    FIRST,
    GROUP_RANK,
    GROUP_RANKS,
    PAIRS,
    RANK,
    RECORDS,
    UNIT,
    domain_values,
    keys,
    over,
    pairs_in_domain,
    row_filter,
    table_as,
)

DOMAIN_CODES = 2**16
"""The most groups a public domain may have for the codes to be computed from its values
(``domain_groups``) rather than from the distinct groups of the pairs."""

TEXT_TYPES = ("VARCHAR", "TEXT", "STRING")
"""Key column types whose public values ``domain_groups`` writes as literals."""


def pairs_of(rows: exp.Select, group: list[exp.Column], partials: list[exp.Expression]
             ) -> exp.Select:
    """The ``partials`` of each unit in each group of ``rows`` (by the ``group`` columns)."""
    by = [exp.column(UNIT), *group]
    return (over(rows.copy(), "__dp_r", *by, *(p.copy() for p in partials))
            .group_by(*(c.copy() for c in by), copy=False))


def within(groups: exp.Select, names: list[exp.Column], domain: exp.Expression | None
           ) -> exp.Select:
    """The ``names`` of ``groups`` (the pairs, or the distinct groups) in the public
    ``domain`` (all of them without one). Filtering whole pairs or groups is the same as
    filtering their rows, and far cheaper."""
    if domain is None:
        return groups
    return over(groups, "__dp_a", *names).where(domain.copy(), copy=False)


def groups_of(plan: PrivacyPlan, rows: exp.Select, domain: exp.Expression | None
              ) -> tuple[exp.Expression, exp.Select]:
    """What the coded rows are read from (``records``) and the groups to code: the
    domain's own groups (``domain_groups``), or the distinct groups of the rows in the
    public ``domain`` (all of them without one)."""
    read_from = records(plan, rows)
    groups = domain_groups(plan)
    if groups is None:
        groups = within(distinct_groups(plan, rows, read_from), keys(plan), domain)
    return read_from, groups


def with_codes(query: exp.Select, plan: PrivacyPlan, rows: exp.Select,
               read_from: exp.Expression, groups: exp.Select) -> exp.Select:
    """``query`` with the CTEs it reads for the coded rows: ``CODES`` of the ``groups``,
    and ``RECORDS`` (the ``rows``) where ``read_from`` reads them from it."""
    if not isinstance(read_from, exp.Subquery):
        query = query.with_(RECORDS, as_=rows, copy=False)
    return query.with_(CODES, as_=codes(plan, groups), copy=False)


def records(plan: PrivacyPlan, rows: exp.Select) -> exp.Expression:
    """What the codes and the pairs read ``rows`` from: the rows themselves (a subquery,
    copied for each reader) when they come from a table or a query of one table's rows,
    which DuckDB scans twice more cheaply than it stores them (docs/benchmarks.md); the
    CTE ``RECORDS``, computed once, when they come from a join, an aggregate, a window, a
    set operation or DISTINCT."""
    costly = (exp.Join, exp.AggFunc, exp.Window, exp.SetOperation, exp.Distinct)
    if isinstance(plan.relation, str) or not plan.relation.find(*costly):
        return rows.subquery("__dp_r")
    return table_as(RECORDS, "__dp_r")


def coded(plan: PrivacyPlan, read_from: exp.Expression, taken: tuple[str, ...]) -> exp.Select:
    """The rows of ``read_from`` with the columns ``taken`` from their group's codes (its
    rank ``GROUP_RANK``; its ``CODE`` to order its pairs)."""
    return (exp.select(exp.Column(this=exp.Star(), table=exp.to_identifier("__dp_r")),
                       *(exp.column(c, table="__dp_c") for c in taken))
            .from_(read_from.copy(), copy=False)
            .join(table_as(CODES, "__dp_c"), on=same_keys(plan.key_names, "__dp_r", "__dp_c"),
                  copy=False))


def pairs_by_rank(plan: PrivacyPlan, read_from: exp.Expression,
                  partials: list[exp.Expression]) -> exp.Select:
    """The ``partials`` of each unit in each group of the rows ``read_from`` reads, per
    (unit, group's rank), with the group's code to order them:
    aggregated per (unit, keys) first, then the pairs — fewer than the rows — joined to
    their group's codes on the keys, once. A pair's partials are computed from all its
    rows, so aggregating before the join gives the pairs of the rows joined first
    (``coded``); the inner join drops the pairs whose group has no code (outside a public
    domain), as it drops their rows (docs/benchmarks.md)."""
    by = [exp.column(UNIT), *keys(plan)]
    by_keys = (exp.select(*(c.copy() for c in by), *(p.copy() for p in partials))
               .from_(read_from.copy(), copy=False)
               .group_by(*by, copy=False))
    names = [p.alias_or_name for p in partials]
    return (exp.select(exp.column(UNIT, table="__dp_p"),
                       *(exp.column(c, table="__dp_c") for c in (GROUP_RANK, CODE)),
                       *(exp.column(name, table="__dp_p") for name in names))
            .from_(by_keys.subquery("__dp_p", copy=False), copy=False)
            .join(table_as(CODES, "__dp_c"), on=same_keys(plan.key_names, "__dp_p", "__dp_c"),
                  copy=False))


def ordered_pairs(plan: PrivacyPlan, by_rank: bool) -> tuple[exp.Select, exp.Expression]:
    """The pairs with their group's rank and code — as
    ``pairs_by_rank`` gives them (``by_rank``), or joined to the codes by the keys — with
    ``unit_order``'s steps, and the BIGINT that orders a unit's pairs: ``order · 2³² +
    rank``."""
    if by_rank:
        return pair_ordered(exp.select("*").from_(table_as(PAIRS, "__dp_p"), copy=False))
    rows = (exp.select(exp.Column(this=exp.Star(), table=exp.to_identifier("__dp_p")),
                       *(exp.column(c, table="__dp_c")
                         for c in (CODE, GROUP_RANK)))
            .from_(table_as(PAIRS, "__dp_p"), copy=False)
            .join(table_as(CODES, "__dp_c"), on=same_keys(plan.key_names, "__dp_p", "__dp_c"),
                  copy=False))
    return pair_ordered(rows)


def pair_ordered(rows: exp.Select) -> tuple[exp.Select, exp.Expression]:
    """``rows`` (with their group's rank and code) with
    ``unit_order``'s steps, and the BIGINT that orders a unit's pairs: ``order · 2³² +
    rank`` (``GROUP_RANKS``)."""
    rows, order = unit_ordered(rows)
    return rows, exp.Add(this=exp.Mul(this=order, expression=exp.Literal.number(GROUP_RANKS)),
                         expression=exp.Mod(this=exp.column(GROUP_RANK),
                                            expression=exp.Literal.number(GROUP_RANKS)))


def unit_ordered(rows: exp.Select) -> tuple[exp.Select, exp.Column]:
    """``rows`` (pairs with their code) with ``unit_order``'s
    steps as columns, and the last of them: the pair's order within its unit."""
    steps = unit_order(UNIT, CODE)
    for step, (name, value) in enumerate(steps):
        rows = over(rows, f"__dp_s{step}", "*", exp.alias_(value, name))
    return rows, exp.column(steps[-1][0])


def rows_in_pair_order(plan: PrivacyPlan, unit: exp.Column, items: list[exp.Expression]
                       ) -> tuple[exp.Select, Callable[[exp.Select], exp.Select]]:
    """The query's rows (unit, keys and ``items``), each joined to its group's codes
    (``coded``) and carrying its pair's order as ``FIRST`` (``pair_ordered``); and what
    adds the CTEs they read (the codes, and the rows where stored) to a query over them."""
    rows = exp.select(exp.alias_(unit.copy(), UNIT), *keys(plan), *items)
    rows = rows.from_(source(plan), copy=False).where(row_filter(plan, unit), copy=False)
    read_from, groups = groups_of(plan, rows, pairs_in_domain(plan))
    ordered, key = pair_ordered(coded(plan, read_from, (GROUP_RANK, CODE)))
    return (over(ordered, "__dp_o", "*", exp.alias_(key, FIRST)),
            lambda query: with_codes(query, plan, rows, read_from, groups))


def first_by_window(rows: exp.Select, order: list[exp.Expression], names: list[exp.Column],
                    kept: exp.Expression) -> exp.Select:
    """The pairs of ``rows`` whose rank within their unit by ``order`` satisfies ``kept``.
    The order must break every tie, so that the choice is the same each time."""
    window = exp.Window(this=exp.RowNumber(), partition_by=[exp.column(UNIT)],
                        order=exp.Order(expressions=[exp.Ordered(this=o) for o in order]))
    ranked = over(rows, "__dp_o", "*", exp.alias_(window, RANK))
    return over(ranked, "__dp_k", *names).where(kept, copy=False)


def with_keys(chosen: exp.Select, names: list[exp.Column], key_names: set[str]) -> exp.Select:
    """``names`` over the ``chosen`` pairs, which carry their group's rank instead of the
    keys (``key_names``): the keys come from the codes of that rank (one row per rank)."""
    return (exp.select(*(exp.column(c.name, table="__dp_c" if c.name in key_names
                                    else "__dp_z") for c in names))
            .from_(chosen.subquery("__dp_z", copy=False), copy=False)
            .join(table_as(CODES, "__dp_c"),
                  on=exp.EQ(this=exp.column(GROUP_RANK, table="__dp_z"),
                            expression=exp.column(GROUP_RANK, table="__dp_c")), copy=False))


def domain_groups(plan: PrivacyPlan) -> exp.Select | None:
    """The groups of the public domain, as a SELECT of the key columns (the product of each
    key's values), when every key is a text column (``TEXT_TYPES``, of any width: a
    registered table's text columns are ``VARCHAR(n)``) with a public domain of at most
    ``DOMAIN_CODES`` groups; else None.

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
    ...                              column_types={"k": "VARCHAR(1024)", "m": "VARCHAR"})
    >>> print(domain_groups(plan).sql())
    SELECT k, m FROM (VALUES ('a'), ('b')) AS __dp_v0(k) CROSS JOIN (VALUES ('x')) AS __dp_v1(m)
    >>> plan.keys = (GroupKey("k", "k", ("a", 1)),)  # a public table's other values
    >>> print(domain_groups(plan))
    None
    """
    columns = []
    for key in plan.keys:
        # A text column's domain read from a public table may hold other values: those
        # keep the semi-join's own comparison.
        text = key.public and type_name(plan.column_types.get(key.column, "")) in TEXT_TYPES \
            and all(isinstance(v, str) for v in key.domain if v is not None)
        values = domain_values(key) if text else []
        if not values:
            return None
        columns.append(values)
    if math.prod(len(values) for values in columns) > DOMAIN_CODES:
        return None
    tables = [exp.values([(v,) for v in values], alias=f"__dp_v{i}", columns=[key.name])
              for i, (key, values) in enumerate(zip(plan.keys, columns, strict=True))]
    query = exp.select(*keys(plan)).from_(tables[0], copy=False)
    for table in tables[1:]:
        query = query.join(table, join_type="cross", copy=False)
    return query


def distinct_groups(plan: PrivacyPlan, rows: exp.Select, read_from: exp.Expression
                    ) -> exp.Select:
    """The distinct groups of ``rows``, as a SELECT of the key columns: from their table,
    or from the CTE that ``read_from`` reads."""
    if isinstance(read_from, exp.Subquery):
        groups = rows.copy()
        groups.set("expressions", keys(plan))
    else:
        groups = exp.select(*keys(plan)).from_(RECORDS, copy=False)
    return groups.distinct(copy=False)


def codes(plan: PrivacyPlan, groups: exp.Select) -> exp.Select:
    """Per group of ``groups``: its ``key_code`` and its rank in the order of the keys
    (from 1, one per group: it also names the group where the keys are not carried).
    ``gathered``: the joins of the rows or the pairs to them build on the codes' side."""
    by_keys = exp.Order(expressions=[exp.Ordered(this=k, nulls_first=False)
                                     for k in keys(plan)])
    return gathered(over(groups, "__dp_d", *keys(plan), code_column(plan),
                         exp.alias_(exp.Window(this=exp.RowNumber(), order=by_keys),
                                    GROUP_RANK)))


def code_column(plan: PrivacyPlan) -> exp.Expression:
    """The group's ``key_code`` as ``CODE``, over the key columns."""
    key_types = [(k.name, plan.column_types.get(k.column, "")) for k in plan.keys]
    return exp.alias_(key_code(key_types), CODE)
