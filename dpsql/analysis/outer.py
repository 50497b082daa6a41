"""Passes for a query over a DP release: the released rows post-processed by an outer query.

``WITH s AS (SELECT store, SUM(x) AS t FROM sales GROUP BY store) SELECT AVG(t) FROM s``
asks for a private release (the per-store sums, with the keys public or selected privately)
and then for arithmetic on it. ``split_release`` recognises it — the outermost FROM is one
subquery or CTE that aggregates without grouping by a privacy unit (grouping by the unit
is a per-person summary, ``dpsql.analysis.relations``) — and analyses the inner query as
the release, keeping the outer one aside. ``nest_release`` then reads the release's output
(the SELECT over the noisy table) where the outer query named it. The outer query sees the
*released* rows only: noisy values and released keys, never an exact value, so anything it
computes is post-processing. It may filter, group, aggregate (SUM, AVG, MIN, MAX, COUNT,
MEDIAN, STDDEV, VARIANCE), use window functions, sort and limit; it names the release's
output columns only, and reads no table.

>>> import sqlglot
>>> d = Draft(sql="", ast=sqlglot.parse_one(
...     "WITH s AS (SELECT k, SUM(x) AS t FROM v GROUP BY k) SELECT AVG(t) AS m FROM s"),
...     epsilon=1, delta=0)
>>> d = split_release(d, Context([], None))
>>> d.ast.sql(), d.outer.sql()
('SELECT k, SUM(x) AS t FROM v GROUP BY k', 'SELECT AVG(t) AS m FROM __dp_release')
"""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from dpsql.analysis.draft import Context, Draft
from dpsql.analysis.grammar import (
    POST_NODES,
    WINDOW_FUNCTIONS,
    check_window,
    fragment,
    is_aggregate,
    refuse,
    sums_as_double,
)
from dpsql.catalog import Catalog
from dpsql.errors import CatalogError
from dpsql.plan import ROW_ID, OutputColumn

RELEASE = "__dp_release"
"""The released rows, as the outer query reads them."""
OUTER_AGGREGATES: tuple[type[exp.Expression], ...] = (
    exp.Sum, exp.Avg, exp.Min, exp.Max, exp.Count, exp.Median, exp.Stddev, exp.StddevPop,
    exp.StddevSamp, exp.Variance, exp.VariancePop,
)
"""Aggregates over released rows (post-processing: plain SQL on noisy values)."""
SHAPE = ("SELECT <expressions over the release's columns> FROM <the release> [WHERE] "
         "[GROUP BY] [HAVING] [QUALIFY] [ORDER BY] [LIMIT]")
CLAUSES = ("expressions", "where", "group", "having", "qualify", "order")


def split_release(draft: Draft, ctx: Context) -> Draft:
    """Analyse the inner query of ``SELECT ... FROM (<release>)`` as the query; keep the outer
    one in ``draft.outer``, reading ``RELEASE``. Other queries pass unchanged."""
    select = draft.ast
    if not isinstance(select, exp.Select) or select.args.get("joins") or \
            select.args.get("from_") is None:
        return draft
    item = select.args["from_"].this
    ctes = {c.alias.lower(): c for c in (select.args["with_"].expressions
                                         if select.args.get("with_") else [])}
    if isinstance(item, exp.Subquery):
        inner, cte = item.this, None
    elif isinstance(item, exp.Table) and not item.args.get("db") and item.name.lower() in ctes:
        cte = ctes[item.name.lower()]
        inner = cte.this
    else:
        return draft
    if not isinstance(inner, exp.Select) or not _releases(inner, ctx.catalog):
        return draft
    if (cte is not None and cte.args["alias"].columns) or _alias_columns(item):
        refuse(item, "FROM", SHAPE, "Name the release's columns inside it (AS name), not in "
               "an alias list")
    inner = inner.copy()
    others = [c.copy() for name, c in ctes.items() if c is not cte]
    if others:
        own = inner.args["with_"].expressions if inner.args.get("with_") else []
        inner.set("with_", exp.With(expressions=[*others, *own]))
    hint = select.args.get("hint")
    if hint is not None:
        if inner.args.get("hint") is not None:
            refuse(hint, "DP clause", "one clause, on the outer or the inner SELECT")
        inner.set("hint", hint.copy())
    outer = select.copy()
    for arg in ("with_", "hint"):
        outer.set(arg, None)
    outer.set("from_", exp.From(this=exp.to_table(RELEASE)))
    qualifiers = {item.alias_or_name.lower(), getattr(item, "name", "").lower()} - {""}
    return replace(draft, ast=inner, outer=_unqualified(outer, qualifiers))


def _releases(select: exp.Select, catalog: Catalog) -> bool:
    """True when ``select`` aggregates and groups by no column named as a privacy unit."""
    if not any(is_aggregate(n) for e in select.expressions for n in e.walk()):
        return False
    units = {info.privacy_unit for info in catalog if info.privacy_unit}
    keys = select.args["group"].expressions if select.args.get("group") else []
    for key in keys:
        if isinstance(key, exp.Literal) and key.is_int and 0 < int(key.this) <= len(
                select.expressions):
            key = select.expressions[int(key.this) - 1].unalias()
        if isinstance(key, exp.Column) and key.name.lower() in units:
            return False
    return True


def _alias_columns(node: exp.Expression) -> list[exp.Expression]:
    alias = node.args.get("alias")
    return list(alias.columns) if isinstance(alias, exp.TableAlias) else []


def _unqualified(outer: exp.Select, qualifiers: set[str]) -> exp.Select:
    def strip(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Column) and node.table:
            if node.table.lower() not in qualifiers:
                refuse(node, "column", "columns of the release in FROM",
                       f"{node.table!r} is not the subquery or CTE in FROM")
            return exp.column(node.name, quoted=node.this.quoted)
        return node

    return outer.transform(strip)


def nest_release(draft: Draft, ctx: Context) -> Draft:
    """The outer query over the release's output: every name one of its columns, every
    expression post-processing, and ``ROW_ID`` NULL (an outer row is no single group)."""
    if draft.outer is None:
        return draft
    outer, names = draft.outer.copy(), {c.name.lower(): c.name for c in draft.columns}
    stars = [e for e in outer.expressions if isinstance(e, exp.Star)]
    if stars:
        if len(outer.expressions) != 1 or stars[0].args.get("except_") or \
                stars[0].args.get("replace"):
            refuse(stars[0], "SELECT *", "* alone, for every column of the release")
        outer.set("expressions", [exp.column(c.name, quoted=True) for c in draft.columns])
    aliases = {e.alias.lower() for e in outer.expressions if e.alias}
    for arg in CLAUSES:
        for node in _parts(outer.args.get(arg)):
            _check_outer(node, names, aliases if arg in ("having", "qualify", "order") else set())
    if outer.args.get("distinct") and outer.args["distinct"].args.get("on"):
        refuse(outer, "SELECT DISTINCT ON", SHAPE)
    for arg in ("limit", "offset"):
        value = outer.args.get(arg)
        if value is not None and not (isinstance(value.expression, exp.Literal)
                                      and value.expression.this.isdigit()):
            refuse(value, arg.upper(), "a non-negative integer literal")
    columns = tuple(OutputColumn(name=_name(e), aggregate=None) for e in outer.expressions)
    outer = sums_as_double(outer.transform(
        lambda n: exp.column(names[n.name.lower()], quoted=True)
        if isinstance(n, exp.Column) and n.name.lower() in names
        and n.name.lower() not in aliases else n))
    outer.set("expressions", [
        *(e if e.alias_or_name == c.name else exp.alias_(e, c.name, quoted=True)
          for e, c in zip(outer.expressions, columns, strict=True)),
        exp.alias_(exp.cast(exp.null(), exp.DataType.Type.BIGINT), ROW_ID)])
    release = draft.output.copy()
    release.set("expressions", [e for e in release.expressions if e.alias_or_name != ROW_ID])
    outer.set("from_", exp.From(this=release.subquery(RELEASE, copy=False)))
    return replace(draft, output=outer, columns=columns)


def _parts(value: exp.Expression | list | None) -> list[exp.Expression]:
    return value if isinstance(value, list) else [value] if value is not None else []


def _name(item: exp.Expression) -> str:
    if item.alias:
        return item.alias
    return item.name if isinstance(item, exp.Column) else fragment(item, limit=None)


def _check_outer(node: exp.Expression, names: dict[str, str], aliases: set[str]) -> None:
    """Post-processing SQL over the release's columns: listed nodes and aggregates only."""
    for sub in node.walk(prune=lambda n: isinstance(n, exp.Window)):
        if isinstance(sub, exp.Window):
            if not isinstance(sub.this, WINDOW_FUNCTIONS):
                refuse(sub, "window function", "window functions over the release's columns")
            check_window(sub, "outer query")
            for part in sub.find_all(exp.Column):
                _check_name(part, names, aliases)
        elif isinstance(sub, exp.Column):
            _check_name(sub, names, aliases)
        elif isinstance(sub, exp.Star) and isinstance(sub.parent, exp.Count):
            continue
        elif not isinstance(sub, (*POST_NODES, *OUTER_AGGREGATES, exp.Group, exp.Where,
                                  exp.Having, exp.Qualify, exp.Distinct)):
            refuse(sub, "query over a release", SHAPE, "An outer query reads the released "
                   "rows only: no subqueries or tables of its own")


def _check_name(column: exp.Column, names: dict[str, str], aliases: set[str]) -> None:
    name = column.name.lower()
    if name not in names and name not in aliases:
        raise CatalogError(
            f"column `{column.name}` is not a column of the release in FROM; its columns are "
            f"{', '.join(names.values())}")
