"""FROM clauses beyond one table: derived tables, CTEs, joins and GROUP BY expressions.

Every such FROM clause is turned into one *source*: a SELECT that dpsql builds so that
each row it yields belongs to exactly one privacy unit, with the unit's column traced
through (added when a subquery drops it). The rest of the analysis sees the source as a
private table; the rewrite reads from it and bounds each unit's contribution *after* the
joins and subqueries, so no data can weaken the bounds. What keeps one row to one unit:

- a **row-level derived table** (projection, filters, CASE, casts): one output row per
  input row;
- a **per-unit aggregation** (``GROUP BY`` including the privacy unit): one row per unit
  and group, computed from that unit's rows only;
- a **join with a public table**: the public side is the same in neighbouring databases,
  so a joined row belongs to its private row's unit, whatever the multiplicity;
- a **join of two private tables on their privacy units**: both rows are the same unit's.

Anything else (a join of private tables on another column, a private table on the right of
a LEFT JOIN, aggregation not by the unit, LIMIT or DISTINCT inside) is refused.

>>> from dpsql.catalog import Catalog, TableInfo
>>> import sqlglot
>>> cat = Catalog()
>>> _ = cat.add(TableInfo.private("v", columns={"pid": "INT", "x": "INT"}, privacy_unit="pid"))
>>> d = Draft(sql="", ast=sqlglot.parse_one(
...     "SELECT AVG(n) FROM (SELECT pid, COUNT(*) AS n FROM v GROUP BY pid) AS s"),
...     epsilon=1, delta=0)
>>> d = resolve_source(d, Context(cat, None))
>>> d.table.privacy_unit, dict(d.table.columns)
('pid', {'pid': 'INT', 'n': 'BIGINT'})
>>> d.select.sql()
'SELECT AVG(n) FROM __dp_source'
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from sqlglot import exp

from dpsql.analysis.bounds import Interval, infer_interval, refine
from dpsql.analysis.draft import Context, Draft
from dpsql.analysis.grammar import check_row_expression, fragment, is_aggregate, refuse
from dpsql.analysis.lookups import VALUE, Lookup, check_lookup, split_lookups
from dpsql.analysis.unnest import elements
from dpsql.catalog import PublicColumn, TableInfo, WorkLimits, column_class, text_width, with_width
from dpsql.errors import CatalogError, UnsupportedQueryError
from dpsql.expr.size import measure
from dpsql.expr.totality import error_free
from dpsql.expr.types import type_class
from dpsql.names import is_reserved

SOURCE = "__dp_source"
UNIT_COLUMN = "__dp_unit_of"
JOINED = "__dp_j"
"""Prefix of a joined column whose name several sides share (``__dp_j<side>_<column>``)."""
DERIVED_SHAPE = ("SELECT <row expressions or per-unit aggregates> FROM <table, subquery or "
                 "join> [WHERE] [GROUP BY <privacy unit>, ...]")
INNER_AGGREGATES = (exp.Count, exp.Sum, exp.Avg, exp.Min, exp.Max)
CLASS_TYPES = {"numeric": "DOUBLE", "string": "VARCHAR", "boolean": "BOOLEAN", "date": "DATE",
               "timestamp": "TIMESTAMP"}


@dataclass(frozen=True)
class Source:
    """Rows to aggregate: their columns (name → SQL type), the unit and what is public.

    ``relation`` is a table or an aliased subquery; ``bounds`` and ``public_keys`` hold
    what carries over from the catalog (copies of bounded columns, expressions with
    finite intervals, public-key columns, columns of public tables). ``tables`` lists
    every catalog table read; ``private`` those holding people's data. A text column's
    type gives its width (``VARCHAR(n)``, ``dpsql.expr.size``); ``work`` is the steps the
    relation's own row expressions take per row, bounded by the owner's ``limits``.
    """

    columns: Mapping[str, str]
    unit: str | None
    relation: exp.Expression
    tables: tuple[str, ...]
    private: tuple[TableInfo, ...]
    bounds: Mapping[str, tuple[float, float]]
    public_keys: Mapping[str, tuple[Any, ...] | str]
    limits: WorkLimits
    work: int = 0
    public: bool = False

    def info(self, name: str) -> TableInfo:
        """The source as a private TableInfo; limits are the tightest declared ones."""

        def tightest(field: str) -> int | None:
            values = [getattr(t, field) for t in self.private if getattr(t, field) is not None]
            return min(values) if values else None

        return TableInfo(name=name, columns=dict(self.columns), privacy_unit=self.unit,
                         bounds=dict(self.bounds), public_keys=dict(self.public_keys),
                         max_groups_per_unit=tightest("max_groups_per_unit"),
                         max_rows_per_group=tightest("max_rows_per_group"),
                         max_rows_per_unit=tightest("max_rows_per_unit"))


def needs_source(select: exp.Select) -> bool:
    """True when FROM is more than one registered table, or GROUP BY has expressions or
    names a SELECT alias."""
    source = select.args.get("from_")
    if select.args.get("joins") or select.args.get("with_"):
        return True
    if source is not None and (isinstance(source.this, exp.Subquery) or
                               _alias_columns(source.this)):
        return True
    group = select.args.get("group")
    if group is None:
        return False
    aliased = {e.alias.lower() for e in select.expressions if isinstance(e, exp.Alias) and
               not (isinstance(e.this, exp.Column) and e.this.name.lower() == e.alias.lower())}
    return any(not isinstance(k, exp.Column) or k.name.lower() in aliased
               for k in group.expressions)


def resolve_source(draft: Draft, ctx: Context) -> Draft:
    """Build the source of a FROM clause that is not one plain table (see module doc)."""
    select, lookups = split_lookups(draft.select)
    if not needs_source(select) and not lookups:
        return draft
    _names.count = -1
    scope = _ctes(select, {}, ctx)
    source, names = _from_clause(select, scope, ctx, lookups)
    if source.public:
        refuse(select.args["from_"].this, "FROM", "a private table, subquery or join with one",
               "dpsql answers queries over private data; public tables are for lookups")
    options = draft.options
    if options.unit is not None:  # OPTIONS(privacy_unit_column = alias.column)
        options = replace(options, unit=_unqualify(options.unit, names))
    outer = _written_names(select, _unqualify(select, names))
    outer.set("with_", None)
    outer.set("joins", None)
    outer.set("from_", exp.From(this=exp.to_table(SOURCE)))
    source, outer = _group_expressions(source, outer)
    info = source.info(SOURCE)
    return replace(draft, ast=outer, table=info, relation=source.relation, options=options,
                   tables=source.tables, private_tables=tuple(t.name for t in source.private),
                   relation_work=source.work)


def _written_names(select: exp.Select, outer: exp.Select) -> exp.Select:
    """Unaliased SELECT items keep the names written (``v.k`` is ``k``), not the names of
    joined columns in dpsql's namespace."""
    items = []
    for written, item in zip(select.expressions, outer.expressions, strict=True):
        plain = written.copy()
        for column in plain.find_all(exp.Column):
            column.set("table", None)
        if not isinstance(item, exp.Alias) and plain != item:
            name = plain.name if isinstance(plain, exp.Column) else fragment(plain, limit=None)
            item = exp.alias_(item, name, quoted=True)
        items.append(item)
    outer.set("expressions", items)
    return outer


def _ctes(select: exp.Select, scope: dict[str, exp.CTE], ctx: Context
          ) -> dict[str, exp.CTE]:
    """WITH name [(columns)] AS (query): each CTE may use the ones before it."""
    with_ = select.args.get("with_")
    if with_ is None:
        return scope
    if with_.args.get("recursive"):
        refuse(with_, "WITH RECURSIVE", "non-recursive common table expressions")
    scope = dict(scope)
    for cte in with_.expressions:
        name = cte.alias.lower()
        if name in ctx.catalog:
            refuse(cte, "WITH", "names that are not registered tables",
                   f"Rename the common table expression {cte.alias!r}")
        scope[name] = cte
    return scope


def _from_clause(select: exp.Select, scope: Mapping[str, exp.CTE], ctx: Context,
                 lookups: list[Lookup]) -> tuple[Source, dict[tuple[str | None, str], str]]:
    """The source of FROM, its joins and the lookups taken out of its WHERE
    (``dpsql.analysis.lookups``), and how each (qualifier, column) is renamed."""
    from_ = select.args.get("from_")
    if from_ is None:
        refuse(None, "SELECT without FROM", DERIVED_SHAPE, "Name a registered table in FROM")
    joins = [*(select.args.get("joins") or []),
             *(exp.Join(this=exp.to_table(alias), on=on) for alias, _, on, _ in lookups)]
    sides = [from_.this, *(j.this for j in select.args.get("joins") or [])]
    sources = [(_alias(node), _item(node, scope, ctx)) for node in sides]
    sources += [(alias, _lookup(query, scope, ctx)) for alias, query, _, _ in lookups]
    if len(sources) == 1:
        alias, source = sources[0]
        names = {(q, c): c for c in source.columns for q in (None, alias)}
        return source, names
    written = {alias: condition for alias, _, _, condition in lookups}
    return _join(select, sources, joins, written)


def _lookup(query: exp.Expression, scope: Mapping[str, exp.CTE], ctx: Context) -> Source:
    """The derived public table of an IN-subquery: its distinct values, one column."""
    info, value, where = check_lookup(query, ctx.catalog, scope)
    limits = ctx.catalog.limits
    kind = info.columns[value.name.lower()] if isinstance(value, exp.Column) else \
        _expression_type(value, info.columns, limits)
    select = exp.select(exp.alias_(error_free(value, info.columns), VALUE, quoted=True))
    select = select.from_(exp.to_table(info.name), copy=False).distinct(copy=False)
    if where is not None:
        select = select.where(error_free(where, info.columns), copy=False)
    work = sum(measure(e, info.columns, limits).work for e in (value, where) if e is not None)
    return Source(columns={VALUE: kind}, unit=None, relation=select.subquery(_fresh(), copy=False),
                  tables=(info.name,), private=(), bounds={}, public_keys={}, limits=limits,
                  work=work, public=True)


def _alias(node: exp.Expression) -> str:
    if isinstance(node, exp.Table):
        return (node.alias or node.name).lower()
    return node.alias.lower() if node.alias else _fresh()


def _alias_columns(node: exp.Expression) -> list[str]:
    """The column names of ``alias(a, b, ...)`` after a table, subquery or CTE name."""
    alias = node.args.get("alias")
    if not isinstance(alias, exp.TableAlias):
        return []
    return [c.name.lower() for c in alias.columns]


def _renamed(source: Source, names: list[str], node: exp.Expression) -> Source:
    """``source`` with its first columns renamed as an alias list says (SQL's positional rule).

    The columns dpsql added (the privacy unit a subquery left out) are not the analyst's
    to rename: they are not counted and keep their reserved names.
    """
    if not names:
        return source
    visible = [c for c in source.columns if not is_reserved(c)]
    if len(names) > len(visible) or len(set(names)) != len(names):
        refuse(node, "column alias list", f"at most {len(visible)} distinct names, one per "
               f"column ({', '.join(visible)})")
    mapping = {**{c: c for c in source.columns}, **dict(zip(visible, names, strict=False))}
    if len(set(mapping.values())) != len(mapping):
        refuse(node, "column alias list", "names that differ from the columns not renamed")
    select = exp.select(*(exp.alias_(exp.column(old, quoted=True), new, quoted=True)
                          for old, new in mapping.items()))
    select = select.from_(_aliased(source.relation, _fresh()), copy=False)
    return replace(
        source, columns={mapping[c]: t for c, t in source.columns.items()},
        unit=None if source.unit is None else mapping[source.unit],
        relation=select.subquery(_fresh(), copy=False),
        bounds={mapping[c]: b for c, b in source.bounds.items()},
        public_keys={mapping[c]: k for c, k in source.public_keys.items()})


def _item(node: exp.Expression, scope: Mapping[str, exp.CTE], ctx: Context) -> Source:
    """One FROM item: a registered table, a CTE or a subquery, with its alias's column list."""
    return _renamed(_unaliased_item(node, scope, ctx), _alias_columns(node), node)


def _unaliased_item(node: exp.Expression, scope: Mapping[str, exp.CTE], ctx: Context
                    ) -> Source:
    if isinstance(node, exp.Subquery):
        return _derived(node.this, scope, ctx)
    if isinstance(node, exp.Unnest):
        return _unnest(node, ctx)
    if not isinstance(node, exp.Table) or not isinstance(node.this, exp.Identifier) or \
            node.args.get("db"):
        refuse(node, "FROM", "registered tables, CTEs and subqueries",
               "File-reading and other table functions cannot be queried: register the file "
               "with con.register(name, path, privacy_unit=...)")
    if node.args.get("sample") is not None:
        refuse(node, "TABLESAMPLE", "the whole table",
               "Sampling is not supported: it would change which rows are protected")
    name = node.name.lower()
    if name in scope:
        cte = scope[name]
        source = _derived(cte.this, {k: v for k, v in scope.items() if k != name}, ctx)
        return _renamed(source, _alias_columns(cte), cte)
    info = ctx.catalog.get(node.name)
    keys = {c: PublicColumn(v, c) if isinstance(v, str) else v
            for c, v in info.public_keys.items()}
    if info.public:
        keys = {c: PublicColumn(info.name, c) for c in info.columns}
    return Source(columns=dict(info.columns), unit=info.privacy_unit,
                  relation=exp.to_table(info.name), tables=(info.name,),
                  private=() if info.public else (info,), bounds=dict(info.bounds),
                  public_keys=keys, limits=ctx.catalog.limits, public=info.public)


def _unnest(node: exp.Unnest, ctx: Context) -> Source:
    """``UNNEST([constants]) AS x``: a public table of the elements, whose column is a public
    key with the elements as its domain (``dpsql.analysis.unnest``)."""
    array = elements(node)
    return Source(columns={array.name: array.sql_type}, unit=None,
                  relation=array.relation(_fresh(), _fresh()), tables=(), private=(),
                  bounds={array.name: (min(array.values), max(array.values))}
                  if array.sql_type in ("BIGINT", "DOUBLE") else {},
                  public_keys={array.name: array.domain}, limits=ctx.catalog.limits,
                  public=True)


def _derived(query: exp.Expression, scope: Mapping[str, exp.CTE], ctx: Context
             ) -> Source:
    """A subquery or CTE: row-level, or aggregated per unit; the unit is traced through."""
    if isinstance(query, exp.Union) and not query.args.get("distinct"):
        return _union_all(query, scope, ctx)
    if not isinstance(query, exp.Select):
        refuse(query, "set operation in FROM", "UNION ALL of subqueries over private tables",
               "UNION (distinct), INTERSECT and EXCEPT let one person's rows remove or merge "
               "other people's rows; use UNION ALL")
    for arg, label in (("distinct", "DISTINCT"), ("limit", "LIMIT"), ("offset", "OFFSET"),
                       ("order", "ORDER BY"), ("qualify", "QUALIFY"), ("having", "HAVING"),
                       ("laterals", "LATERAL"), ("pivots", "PIVOT"), ("windows", "WINDOW")):
        if query.args.get(arg):
            refuse(query, f"{label} inside a subquery", DERIVED_SHAPE,
                   "It would let one person's rows decide which rows of others are kept"
                   if arg in ("distinct", "limit", "offset", "qualify") else
                   "Move it to the outer query")
    for node in query.find_all(exp.Window):
        refuse(node, "window function", DERIVED_SHAPE, "Window functions over private rows "
               "mix people's rows; aggregate per privacy unit instead")
    inner_scope = _ctes(query, scope, ctx)
    query, lookups = split_lookups(query)
    inner, names = _from_clause(query, inner_scope, ctx, lookups)
    if inner.public:
        refuse(query, "subquery", "a subquery over private data",
               "Join public tables to private ones instead of aggregating them alone")
    query = _unqualify(query, names)
    for clause in ("expressions", "where", "group"):
        _check_known(query.args.get(clause), inner.columns)
    where = query.args.get("where")
    if where is not None:
        check_row_expression(where.this, "WHERE")
        if type_class(where.this, inner.columns) not in ("boolean", "null"):
            refuse(where.this, "WHERE", "a condition")
    group = query.args.get("group")
    if group is not None:
        return _per_unit(query, inner, group)
    return _row_level(query, inner, names)


def _row_level(query: exp.Select, inner: Source,
               names: Mapping[tuple[str | None, str], str]) -> Source:
    items: list[tuple[str, exp.Expression]] = []
    for item in query.expressions:
        if isinstance(item, exp.Star) or (isinstance(item, exp.Column)
                                          and isinstance(item.this, exp.Star)):
            items += _star_items(item, names)
            continue
        node = item.this if isinstance(item, exp.Alias) else item
        if any(is_aggregate(n) for n in node.walk()):
            refuse(item, "aggregate in a subquery", DERIVED_SHAPE,
                   f"Add GROUP BY {inner.unit or '<privacy unit>'} to aggregate per person")
        check_row_expression(node, "subquery SELECT")
        items.append((item.alias_or_name.lower(), node))
    return _build(query, inner, items, grouped=False)


def _check_known(node: exp.Expression | list | None, columns: Mapping[str, str]) -> None:
    """Every column ``node`` names is one of ``columns`` (an unknown name would only fail in
    the engine, after the query was accepted)."""
    for part in node if isinstance(node, list) else [node] if node is not None else []:
        for column in part.find_all(exp.Column):
            if not isinstance(column.this, exp.Star) and column.name.lower() not in columns:
                visible = ", ".join(sorted(c for c in columns if not is_reserved(c)))
                raise CatalogError(f"column `{column.name}` is not in the FROM clause; its columns "
                                   f"are {visible}")


def _star_items(item: exp.Expression, names: Mapping[tuple[str | None, str], str]
                ) -> list[tuple[str, exp.Expression]]:
    """``*`` or ``alias.*`` as (name, column) items, with DuckDB's EXCLUDE, REPLACE and RENAME.

    Each column keeps the name it has in its table or subquery (a joined column renamed
    to dpsql's namespace is named as written); names that end up twice are refused by
    ``_build``.
    """
    star = item.this if isinstance(item, exp.Column) else item
    qualifier = item.table.lower() if isinstance(item, exp.Column) else None
    columns = [(c, target) for (q, c), target in names.items()
               if q is not None and (qualifier is None or q == qualifier)]
    if not columns:
        refuse(item, "subquery SELECT", "* or <alias>.* of a table in FROM",
               f"{item.table!r} is not a table or alias in FROM")
    written = {c for c, _ in columns}
    excluded = {c.name.lower() for c in star.args.get("except_") or []}
    replaced = {r.alias.lower(): r.this for r in star.args.get("replace") or []}
    renamed = {r.this.name.lower(): r.alias.lower() for r in star.args.get("rename") or []}
    unknown = (excluded | set(replaced) | set(renamed)) - written
    if unknown:
        refuse(item, "SELECT * EXCLUDE/REPLACE/RENAME", "columns of the *",
               f"{sorted(unknown)[0]!r} is not one of {', '.join(sorted(written))}")
    items = []
    for column, target in columns:
        if column in excluded:
            continue
        node = replaced.get(column)
        if node is not None:
            check_row_expression(node, "SELECT * REPLACE")
        items.append((renamed.get(column, column),
                      node if node is not None else exp.column(target, quoted=True)))
    return items


def _per_unit(query: exp.Select, inner: Source, group: exp.Group) -> Source:
    keys = group.expressions
    if inner.unit is None:
        refuse(group, "GROUP BY in a subquery", "per-unit aggregation",
               "Row-level tables have no privacy unit to aggregate by")
    if not all(isinstance(k, exp.Column) for k in keys) or \
            inner.unit not in {k.name.lower() for k in keys}:
        refuse(group, "GROUP BY in a subquery", f"GROUP BY {inner.unit}[, other columns]",
               f"A subquery may aggregate only per privacy unit ({inner.unit}): grouping "
               "several people together would let one person change many rows. To "
               "post-process a release, make it the only item of the outer FROM: SELECT "
               "AVG(t) FROM (SELECT k, SUM(x) AS t FROM ... GROUP BY k) AS s")
    key_names = {k.name.lower() for k in keys}
    items = []
    for item in query.expressions:
        node = item.this if isinstance(item, exp.Alias) else item
        if isinstance(node, exp.Column) and node.name.lower() in key_names:
            items.append((item.alias_or_name.lower(), node))
            continue
        if not isinstance(node, INNER_AGGREGATES):
            refuse(item, "subquery SELECT", "its GROUP BY columns and COUNT, SUM, AVG, MIN, "
                   "MAX of row expressions", "Aggregate every other column")
        for part in _arguments(node):
            check_row_expression(part, f"{node.key.upper()} in a subquery")
        if not item.alias:
            refuse(item, "subquery SELECT", "aliased aggregates",
                   f"Name it: {item.sql(dialect='duckdb')} AS n")
        items.append((item.alias.lower(), node))
    return _build(query, inner, items, grouped=True)


def _union_all(query: exp.Union, scope: Mapping[str, exp.CTE], ctx: Context
               ) -> Source:
    """UNION ALL: each row still comes from one branch's row, so it keeps that row's unit.

    Columns take the first branch's names (positionally, as in SQL) and must have the
    same type class in every branch; bounds are the union of the branches' intervals.
    """
    branches = [_derived(part, scope, ctx) for part in (query.left, query.right)]
    if any(b.unit is None for b in branches) and any(b.unit is not None for b in branches):
        refuse(query, "UNION ALL", "branches over tables of the same kind",
               "Do not mix row-level tables with tables that have a privacy unit")
    visible = [[c for c in b.columns if c != UNIT_COLUMN] for b in branches]
    if len({len(v) for v in visible}) != 1:
        refuse(query, "UNION ALL", "branches with the same number of columns")
    names = visible[0]
    for branch, columns in zip(branches, visible, strict=True):
        for name, column in zip(names, columns, strict=True):
            if column_class(branch.columns[column]) != column_class(
                    branches[0].columns[name]):
                refuse(query, "UNION ALL", "columns of the same type in each branch",
                       f"Column {name!r} differs in type between the branches")
    positions = {None if b.unit is None or b.unit == UNIT_COLUMN else cols.index(b.unit)
                 for b, cols in zip(branches, visible, strict=True)}
    unit = None
    if branches[0].unit is not None:
        unit = names[positions.pop()] if len(positions) == 1 and None not in positions \
            else UNIT_COLUMN
    common = {n: union_type([b.columns[cols[i]] for b, cols in zip(branches, visible,
                                                                    strict=True)])
              for i, n in enumerate(names)}
    parts = []
    for branch, columns in zip(branches, visible, strict=True):
        items = [exp.alias_(_as_type(exp.column(c, quoted=True), branch.columns[c], common[n]),
                            n, quoted=True) for c, n in zip(columns, names, strict=True)]
        if unit == UNIT_COLUMN:
            items.append(exp.alias_(exp.column(branch.unit, quoted=True), UNIT_COLUMN,
                                    quoted=True))
        parts.append(exp.select(*items).from_(branch.relation.copy(), copy=False))
    union = exp.union(*parts, distinct=False, copy=False)
    columns = dict(common)
    if unit == UNIT_COLUMN:
        columns[UNIT_COLUMN] = branches[0].columns[branches[0].unit]
    for i, name in enumerate(names):  # a text column holds the widest branch's values
        widths = [text_width(b.columns[cols[i]]) for b, cols in zip(branches, visible,
                                                                     strict=True)]
        if column_class(columns[name]) == "string" and None not in widths:
            columns[name] = with_width(columns[name], max(widths))
    bounds = {}
    for i, name in enumerate(names):
        found = [b.bounds.get(cols[i]) for b, cols in zip(branches, visible, strict=True)]
        if all(found):
            bounds[name] = (min(lo for lo, _ in found), max(hi for _, hi in found))
    return Source(columns=columns, unit=unit, relation=union.subquery(_fresh(), copy=False),
                  tables=tuple(dict.fromkeys(t for b in branches for t in b.tables)),
                  private=tuple({t.name: t for b in branches for t in b.private}.values()),
                  bounds=bounds, public_keys={}, limits=ctx.catalog.limits,
                  work=sum(b.work for b in branches))


INTEGER_DIGITS = {"TINYINT": 3, "SMALLINT": 5, "INTEGER": 10, "INT": 10, "BIGINT": 19,
                  "HUGEINT": 39}
"""Decimal digits of the integer types a UNION ALL may combine with DECIMALs."""


def union_type(types: list[str]) -> str:
    """The one type a UNION ALL column gets, written out so that every engine agrees:
    engines choose their own common type for differing branches (DuckDB makes DECIMAL and
    DOUBLE a DOUBLE, Spark its own DECIMAL), and the group choice hashes a key's text, so the
    same value must be the same text on each. DOUBLE when a branch is a float or the digits
    do not fit a DECIMAL(38, s); TIMESTAMP for dates with timestamps.

    >>> union_type(["DECIMAL(38,6)", "BIGINT"]), union_type(["INTEGER", "DOUBLE"])
    ('DECIMAL(38,6)', 'DOUBLE')
    >>> union_type(["DECIMAL(38,0)", "DECIMAL(10,2)"]), union_type(["DATE", "TIMESTAMP"])
    ('DOUBLE', 'TIMESTAMP')
    """
    written = [t.upper().replace(" ", "") for t in types]
    if len(set(written)) == 1:
        return types[0]
    if column_class(written[0]) == "string":
        return "VARCHAR"
    if set(written) <= {"DATE", "TIMESTAMP"}:
        return "TIMESTAMP"
    if column_class(written[0]) != "numeric":
        refuse(None, "UNION ALL", "columns of one type in each branch",
               f"Cast the branches' columns to one type ({', '.join(types)} differ)")
    shapes = [_digits(t) for t in written]
    if any(shape is None for shape in shapes):
        return "DOUBLE"
    whole = max(w for w, _ in shapes)
    scale = max(s for _, s in shapes)
    if scale == 0 and whole <= 19:
        return "BIGINT"
    return f"DECIMAL({whole + scale},{scale})" if whole + scale <= 38 else "DOUBLE"


def _digits(sql_type: str) -> tuple[int, int] | None:
    """(integer digits, scale) of an integer or DECIMAL type; None for floats."""
    if sql_type in INTEGER_DIGITS:
        return INTEGER_DIGITS[sql_type], 0
    if sql_type.startswith(("DECIMAL", "NUMERIC")):
        sizes = [int(p) for p in sql_type.partition("(")[2].rstrip(")").split(",") if p]
        precision, scale = (sizes + [18, 3][len(sizes):])[:2] if sizes else (18, 3)
        return precision - scale, scale
    return None


def _as_type(column: exp.Expression, sql_type: str, target: str) -> exp.Expression:
    """``column`` cast to the UNION ALL's type where its own differs (a widening: it cannot
    fail on any row)."""
    if sql_type.upper().replace(" ", "") == target.upper().replace(" ", ""):
        return column
    return exp.Cast(this=column, to=exp.DataType.build(target, dialect="duckdb"))


def _arguments(node: exp.Expression) -> list[exp.Expression]:
    """An aggregate's argument expressions, looking inside DISTINCT (no ``*``)."""
    parts = []
    for arg in node.args.values():
        for value in arg if isinstance(arg, list) else [arg]:
            if isinstance(value, exp.Distinct):
                parts += value.expressions
            elif isinstance(value, exp.Expression) and not isinstance(value, exp.Star):
                parts.append(value)
    return parts


def _type_of(node: exp.Expression, inner: Source) -> str:
    if isinstance(node, exp.Column):
        return inner.columns.get(node.name.lower(), "")
    if isinstance(node, exp.Count):
        return "BIGINT"
    if isinstance(node, exp.Sum | exp.Avg):
        if any(type_class(a, inner.columns) != "numeric" for a in _arguments(node)):
            refuse(node, f"{node.key.upper()} in a subquery", "numeric arguments")
        return "DOUBLE"
    if isinstance(node, exp.Min | exp.Max):
        return _type_of(node.this, inner) if isinstance(node.this, exp.Column) else \
            _expression_type(node.this, inner.columns, inner.limits)
    if type_class(node, inner.columns) not in CLASS_TYPES:
        refuse(node, "subquery SELECT", "numeric, text or boolean expressions",
               "Select the column itself")
    return _expression_type(node, inner.columns, inner.limits)


def _expression_type(node: exp.Expression, columns: Mapping[str, str],
                     limits: WorkLimits) -> str:
    """The type of a derived column (a text one with its width: ``dpsql.expr.size``)."""
    kind = CLASS_TYPES.get(type_class(node, columns), "")
    size = measure(node, columns, limits).size if kind == "VARCHAR" else None
    return kind if size is None else with_width(kind, size)


def _bounds_of(node: exp.Expression, inner: Source, where: exp.Expression | None, *,
               per_unit: bool) -> tuple[float, float] | None:
    """Bounds of a subquery column: by interval arithmetic over the rows that pass its WHERE;
    for a per-unit COUNT or SUM, from the unit's row limit (``unit_rows``)."""
    bounds = refine(inner.bounds, where)
    if isinstance(node, exp.Count | exp.Sum):
        rows = unit_rows(inner) if per_unit else None
        if rows is None or (isinstance(node, exp.Count) and node.args.get("distinct")):
            return None
        value = Interval(1.0, 1.0) if isinstance(node, exp.Count) else \
            infer_interval(node.this, bounds)
        total = value.hull(Interval(0.0, 0.0)) * Interval(0.0, float(rows))
        return (total.lo, total.hi) if total.finite else None
    if column_class(_type_of(node, inner)) != "numeric":
        return None
    target = node.this if isinstance(node, exp.Min | exp.Max | exp.Avg) else node
    interval = infer_interval(target, bounds)
    return (interval.lo, interval.hi) if interval.finite else None


def unit_rows(inner: Source) -> int | None:
    """The most rows of one unit that the bounded query keeps: ``max_rows_per_unit``, else
    ``max_groups_per_unit × max_rows_per_group`` when both are declared, else None.

    A per-unit ``COUNT(*)`` in a subquery is bounded by it: the outer aggregate clamps the
    count to [0, rows], so a unit with more rows counts as that many — the same bounded
    dataset the limits define for a plain query.
    """
    info = inner.info("")
    if info.max_rows_per_unit is not None:
        return info.max_rows_per_unit
    if info.max_groups_per_unit is not None and info.max_rows_per_group is not None:
        return info.max_groups_per_unit * info.max_rows_per_group
    return None


def _build(query: exp.Select, inner: Source, items: list[tuple[str, exp.Expression]], *,
           grouped: bool) -> Source:
    """The subquery's source: typed, bounded columns and the traced privacy unit."""
    names = [n for n, _ in items]
    if len(set(names)) != len(names):
        refuse(query, "subquery SELECT", "distinct column names",
               "Alias the columns so that each name appears once")
    unit = next((n for n, node in items if isinstance(node, exp.Column)
                 and node.name.lower() == inner.unit), None)
    if inner.unit is not None and unit is None:
        unit = UNIT_COLUMN
        items = [*items, (unit, exp.column(inner.unit))]
    columns = {n: _type_of(node, inner) for n, node in items}
    where = query.args["where"].this if query.args.get("where") is not None else None
    bounds = {n: b for n, node in items
              if (b := _bounds_of(node, inner, where, per_unit=grouped)) is not None}
    keys = {n: inner.public_keys[node.name.lower()] for n, node in items
            if isinstance(node, exp.Column) and node.name.lower() in inner.public_keys}
    select = exp.select(*(exp.alias_(error_free(node, inner.columns), n, quoted=True)
                          for n, node in items))
    select = select.from_(inner.relation.copy(), copy=False)
    if query.args.get("where") is not None:
        select = select.where(error_free(query.args["where"].this, inner.columns), copy=False)
    if grouped:
        select = select.group_by(*(k.copy() for k in query.args["group"].expressions),
                                 copy=False)
    work = inner.work + sum(measure(e, inner.columns, inner.limits).work
                            for e in [*(node for _, node in items), where] if e is not None)
    return Source(columns=columns, unit=unit, relation=select.subquery(_fresh(), copy=False),
                  tables=inner.tables, private=inner.private, bounds=bounds, public_keys=keys,
                  limits=inner.limits, work=work)


_names = threading.local()


def _fresh() -> str:
    """A subquery alias, numbered per query (so the same query gives the same SQL)."""
    _names.count = getattr(_names, "count", -1) + 1
    return f"__dp_q{_names.count}"


def _join(select: exp.Select, sources: list[tuple[str, Source]], joins: list[exp.Join],
          written: Mapping[str, exp.Expression]
          ) -> tuple[Source, dict[tuple[str | None, str], str]]:
    """Joins: private ⋈ public (INNER or LEFT), private ⋈ private on the privacy units
    (INNER); ``ON``, ``USING`` or ``NATURAL``. Columns keep their names unless two sides share
    one (then ``JOINED``). Public tables may come first when every join is INNER: the first
    private table then leads the joined relation. ``written`` maps a lookup's alias to its
    IN condition, for messages."""
    aliases = [a for a, _ in sources]
    if len(set(aliases)) != len(aliases):
        refuse(select, "JOIN", "distinct table aliases", "Alias each table: visits v JOIN ...")
    names = _joined_names(sources)
    for join in joins:
        _check_join_shape(join)
    conditions = [_condition(join, sources[:k], sources[k], names)
                  for k, join in enumerate(joins, 1)]
    order = _private_first(select, sources, joins)
    first_alias, first = sources[order[0]]
    if first.unit is None:
        refuse(joins[0], "JOIN", "joins of tables with a privacy unit",
               "Row-level tables cannot be joined: a join could repeat a person's row; "
               "declare a privacy_unit column instead")
    columns = {names[(a, c)]: t for a, s in sources for c, t in s.columns.items()}
    private = _joined_private(sources, joins, conditions, order)
    renamed, qualified = _checked_conditions(sources, joins, conditions, names, columns,
                                             written)
    relation = _joined_relation(sources, joins, qualified, names, order)
    bounds, keys = _joined_bounds_and_keys(sources, names)
    tables = tuple(dict.fromkeys(t for _, s in sources for t in s.tables))
    work = sum(s.work for _, s in sources) + sum(
        measure(on, columns, first.limits).work for on in renamed)
    return Source(columns=columns, unit=names[(first_alias, first.unit)],
                  relation=relation.subquery(_fresh(), copy=False), tables=tables,
                  private=private, bounds=bounds, public_keys=keys, limits=first.limits,
                  work=work), names


def _joined_private(sources: list[tuple[str, Source]], joins: list[exp.Join],
                    conditions: list[exp.Expression], order: list[int]
                    ) -> tuple[TableInfo, ...]:
    """The private tables of the join, the leading one's first, each other side checked
    (``_check_private``) against the INNER joins' conditions."""
    first_alias, first = sources[order[0]]
    filters = [c for join, on in zip(joins, conditions, strict=True)
               if not join.args.get("side") for c in _conjuncts(on)]
    private = list(first.private)
    for k in order[1:]:
        alias, source = sources[k]
        join = joins[k - 1] if k else None
        private += _check_private(join, alias, source, first_alias, first, filters)
    return tuple(private)


def _checked_conditions(sources: list[tuple[str, Source]], joins: list[exp.Join],
                        conditions: list[exp.Expression],
                        names: dict[tuple[str | None, str], str], columns: Mapping[str, str],
                        written: Mapping[str, exp.Expression]
                        ) -> tuple[list[exp.Expression], list[exp.Expression]]:
    """Each join's condition over the joined names (checked: known columns, a boolean, an
    IN lookup comparing like with like), and its error-free form over qualified names."""
    renamed, qualified = [], []
    for join, on, (alias, _) in zip(joins, conditions, sources[1:], strict=True):
        on = _unqualify(on, names)
        _check_known(on, columns)
        if alias in written and not _comparable(on, columns):
            refuse(written[alias], "IN (SELECT ...)", "a subquery column of the same type as "
                   "the value it is compared with", "Compare text with text and numbers with "
                   "numbers")
        if type_class(on, columns) not in ("boolean", "null"):
            refuse(join.args.get("on") or join, "JOIN ... ON", "a condition")
        renamed.append(on)
        qualified.append(_unqualify(error_free(on, columns), _qualified(names)))
    return renamed, qualified


def _joined_relation(sources: list[tuple[str, Source]], joins: list[exp.Join],
                     qualified: list[exp.Expression], names: dict[tuple[str | None, str], str],
                     order: list[int]) -> exp.Select:
    """Every side's columns under their joined names, from the leading private table: the
    joins as written when it comes first, else INNER joins on all conditions together."""
    first_alias, first = sources[order[0]]
    relation = exp.select(*(exp.alias_(exp.column(c, table=a, quoted=True), names[(a, c)],
                                       quoted=True)
                            for a, s in sources for c in s.columns))
    relation = relation.from_(_aliased(first.relation, first_alias), copy=False)
    if order[0] == 0:
        for join, on, (alias, source) in zip(joins, qualified, sources[1:], strict=True):
            relation = relation.join(_aliased(source.relation, alias), on=on,
                                     join_type=join.args.get("side") or "inner", copy=False)
        return relation
    return _inner_joins(relation, [sources[k] for k in order[1:]],
                        [c for on in qualified for c in _conjuncts(on)], first_alias)


def _joined_bounds_and_keys(
        sources: list[tuple[str, Source]], names: dict[tuple[str | None, str], str]
) -> tuple[dict[str, tuple[float, float]], dict[str, tuple[Any, ...] | str]]:
    """Each side's column bounds and public key domains, under the joined names."""
    bounds, keys = {}, {}
    for alias, source in sources:
        for column in source.columns:
            name = names[(alias, column)]
            if column in source.bounds:
                bounds[name] = source.bounds[column]
            if column in source.public_keys:
                keys[name] = source.public_keys[column]
    return bounds, keys


def _joined_names(sources: list[tuple[str, Source]]) -> dict[tuple[str | None, str], str]:
    """(alias, column) and, for a column only one side has, (None, column) → joined name."""
    counts: dict[str, int] = {}
    for _, source in sources:
        for column in source.columns:
            counts[column] = counts.get(column, 0) + 1
    names: dict[tuple[str | None, str], str] = {}
    for side, (alias, source) in enumerate(sources):
        for column in source.columns:
            # A name two sides share gets one in dpsql's namespace, numbered by its side:
            # unique whatever the analyst's aliases and columns are called.
            name = column if counts[column] == 1 else f"{JOINED}{side}_{column}"
            names[(alias, column)] = name
            if counts[column] == 1:
                names[(None, column)] = name
    return names


def _condition(join: exp.Join, left: list[tuple[str, Source]], right: tuple[str, Source],
               names: dict[tuple[str | None, str], str]) -> exp.Expression:
    """A join's condition, written with qualified columns: ``ON``'s, or the equalities of
    ``USING (c, ...)`` / ``NATURAL`` (the columns both sides have). A column a USING or
    NATURAL join merges is named, unqualified, after its left side (``names`` is updated),
    which is its value in INNER and LEFT joins."""
    if join.args.get("on") is not None:
        return join.args["on"]
    if _crossed_array(join):
        return exp.true()
    alias, source = right
    if join.args.get("method") == "NATURAL":
        merged = [c for c in source.columns if not is_reserved(c)
                  and any(c in s.columns for _, s in left)]
        if not merged:
            refuse(join, "NATURAL JOIN", "tables with a column in common",
                   "Without one it is a cross join; join with ON <condition>")
    else:
        merged = [i.name.lower() for i in join.args["using"]]
    parts = []
    for column in merged:
        owners = [a for a, s in left if column in s.columns]
        owner = next((a for a in owners if names.get((None, column)) == names[(a, column)]),
                     owners[0] if len(owners) == 1 else None)
        if column not in source.columns or owner is None:
            refuse(join, "JOIN ... USING", "columns that the joined table and exactly one "
                   "table before it have", f"Write the condition with ON for {column!r}")
        names[(None, column)] = names[(owner, column)]
        parts.append(exp.EQ(this=exp.column(column, table=owner, quoted=True),
                            expression=exp.column(column, table=alias, quoted=True)))
    return exp.and_(*parts)


def _comparable(on: exp.Expression, columns: Mapping[str, str]) -> bool:
    """The two sides of a lookup's ``key = value`` have one type class (or one is NULL)."""
    classes = {type_class(side, columns) for side in (on.this, on.expression)} - {"null"}
    return len(classes) <= 1 or classes == {"date", "timestamp"}


def _private_first(select: exp.Select, sources: list[tuple[str, Source]],
                   joins: list[exp.Join]) -> list[int]:
    """The sources' order in the joined relation: as written, or, when public tables come
    first (allowed if every join is INNER), the first private one, then the rest."""
    if not sources[0][1].public:
        return list(range(len(sources)))
    first = next((k for k, (_, s) in enumerate(sources) if not s.public), None)
    if first is None:
        refuse(select.args["from_"].this, "FROM", "a private table, subquery or join with one",
               "dpsql answers queries over private data; public tables are for lookups")
    outer = next((j for j in joins if j.args.get("side")), None)
    if outer is not None:
        refuse(outer, "JOIN", "a private table first, or only INNER joins",
               "Put the private table in FROM and LEFT JOIN the public tables to it")
    return [first, *(k for k in range(len(sources)) if k != first)]


def _inner_joins(relation: exp.Select, sources: list[tuple[str, Source]],
                 conjuncts: list[exp.Expression], first: str) -> exp.Select:
    """INNER joins in a new order: each conjunct of the conditions is attached to the first
    join after which every table it names is present (a join with none is ON TRUE)."""
    present, pending = {first}, list(conjuncts)
    for alias, source in sources:
        present.add(alias)
        ready = [c for c in pending if {col.table for col in c.find_all(exp.Column)} <= present]
        pending = [c for c in pending if c not in ready]
        relation = relation.join(_aliased(source.relation, alias),
                                 on=exp.and_(*ready) if ready else exp.true(),
                                 join_type="inner", copy=False)
    return relation


def _aliased(relation: exp.Expression, alias: str) -> exp.Expression:
    """A copy of a table or subquery under ``alias``."""
    copy = relation.copy()
    copy.set("alias", exp.TableAlias(this=exp.to_identifier(alias, quoted=True)))
    return copy


def _qualified(names: Mapping[tuple[str | None, str], str]) -> dict[tuple[str | None, str], str]:
    """Inside ON, the joined columns do not exist yet: map each back to ``alias.column``."""
    return {(None, name): f"{alias}.{column}" for (alias, column), name in names.items()
            if alias is not None}


def _check_join_shape(join: exp.Join) -> None:
    """[INNER | LEFT] JOIN ... ON / USING, NATURAL [INNER | LEFT] JOIN, or a cross join with
    an array of constants (``CROSS JOIN UNNEST([...]) AS x``)."""
    if _crossed_array(join):
        return
    side, kind = join.args.get("side"), join.args.get("kind")
    natural = join.args.get("method") == "NATURAL"
    given = [join.args.get("on") is not None, bool(join.args.get("using")), natural]
    if sum(given) != 1 or kind in ("CROSS", "SEMI", "ANTI") or (side and side != "LEFT") \
            or join.args.get("method") not in (None, "NATURAL"):
        refuse(join, "JOIN", "[INNER | LEFT] JOIN <table> ON <condition> | USING (<columns>), "
               "NATURAL [LEFT] JOIN, CROSS JOIN UNNEST([<constants>]) AS <name>", "Cross "
               "joins with tables, right, full, semi, anti and lateral joins are not "
               "supported")
    if join.args.get("on") is not None:
        check_row_expression(join.args["on"], "JOIN ... ON")


def _crossed_array(join: exp.Join) -> bool:
    """``CROSS JOIN UNNEST([...])`` or ``, UNNEST([...])``: every row with every element, a
    join ON TRUE with a public table (``dpsql.analysis.unnest``)."""
    return isinstance(join.this, exp.Unnest) and join.args.get("kind") in (None, "CROSS") \
        and not join.args.get("side") and not join.args.get("method") and \
        join.args.get("on") is None and not join.args.get("using")


def _check_private(join: exp.Join | None, alias: str, source: Source, first_alias: str,
                   first: Source, filters: list[exp.Expression]) -> list[TableInfo]:
    """Refuse private joins that could tie one row to two people; return the new private
    tables. ``filters``: the conjuncts of every INNER join condition (all must hold)."""
    if source.public:
        return []
    if join is not None and join.args.get("side") == "LEFT":
        refuse(join, "LEFT JOIN of a private table", "INNER JOIN on the privacy units",
               "Use an inner join")
    if source.unit is None:
        refuse(join, "JOIN", "private tables with a privacy unit",
               "Row-level tables cannot be joined")
    units = {(first_alias, first.unit), (alias, source.unit)}
    on_units = any(isinstance(c, exp.EQ) and {(_qualifier(c.this), _name(c.this)),
                                              (_qualifier(c.expression), _name(c.expression))}
                   == units for c in filters)
    if not on_units:
        refuse(join, "JOIN of two private tables", f"ON {first_alias}.{first.unit} = "
               f"{alias}.{source.unit} [AND ...]",
               "Private tables can be joined only on their privacy units: any other join "
               "could tie one person's rows to another's")
    return list(source.private)


def _conjuncts(node: exp.Expression) -> list[exp.Expression]:
    node = node.unnest()
    if isinstance(node, exp.And):
        return [*_conjuncts(node.this), *_conjuncts(node.expression)]
    return [node]


def _qualifier(node: exp.Expression) -> str | None:
    return node.table.lower() if isinstance(node, exp.Column) and node.table else None


def _name(node: exp.Expression) -> str | None:
    return node.name.lower() if isinstance(node, exp.Column) else None


def _unqualify(node: exp.Expression, names: Mapping[tuple[str | None, str], str]
               ) -> Any:
    """Columns renamed to the source's names; unknown qualifiers and ambiguity refused."""
    qualifiers = {q for q, _ in names if q is not None}
    ambiguous = {c for q, c in names if q is not None} - {c for q, c in names if q is None}

    def swap(column: exp.Expression) -> exp.Expression:
        if not isinstance(column, exp.Column) or isinstance(column.this, exp.Star):
            return column
        qualifier, name = _qualifier(column), column.name.lower()
        if qualifier is not None and qualifier not in qualifiers:
            refuse(column, "column", "columns of the tables in FROM",
                   f"{column.table!r} is not a table or alias in FROM")
        if qualifier is None and name in ambiguous:
            raise UnsupportedQueryError(f"column `{column.name}` is ambiguous: qualify it with "
                                        "its table alias")
        target = names.get((qualifier, name))
        if target is None:
            return exp.column(column.name, quoted=column.this.quoted) if qualifier else column
        table, _, plain = target.rpartition(".")
        return exp.column(plain, table=table or None, quoted=column.this.quoted)

    if not isinstance(node, exp.Select):
        return node.transform(swap, copy=True)
    # Only this SELECT's own clauses: FROM, JOIN and WITH hold other scopes.
    select = node.copy()
    for arg in OWN_CLAUSES:
        value = select.args.get(arg)
        if isinstance(value, list):
            select.set(arg, [v.transform(swap, copy=False) for v in value])
        elif value is not None:
            select.set(arg, value.transform(swap, copy=False))
    return select


OWN_CLAUSES = ("expressions", "where", "group", "having", "qualify", "order")


def _group_expressions(source: Source, outer: exp.Select) -> tuple[Source, exp.Select]:
    """GROUP BY expressions (and positions/aliases of SELECT items) become source columns."""
    group = outer.args.get("group")
    if group is None:
        return source, outer
    aliases = {e.alias.lower(): e.this for e in outer.expressions if isinstance(e, exp.Alias)}
    extra: dict[str, exp.Expression] = {}
    keys = []
    for index, key in enumerate(group.expressions):
        if isinstance(key, exp.Literal) and key.is_int:
            position = int(key.this)
            if not 1 <= position <= len(outer.expressions):
                refuse(key, "GROUP BY", "a position of a SELECT item")
            item = outer.expressions[position - 1]
            key = item.this if isinstance(item, exp.Alias) else item
        elif isinstance(key, exp.Column) and key.name.lower() in aliases and \
                key.name.lower() not in source.columns:
            key = aliases[key.name.lower()]
        if isinstance(key, exp.Column):
            keys.append(key)
            continue
        check_row_expression(key, "GROUP BY")
        if any(isinstance(n, exp.Column) and n.name.lower() == source.unit
               for n in key.walk()):
            refuse(key, "GROUP BY", "expressions of columns other than the privacy unit",
                   "Grouping by a function of the privacy unit could release one row per "
                   "person")
        name = next((a for a, e in aliases.items() if e == key), f"__dp_key{index}")
        extra[name] = key
        keys.append(exp.column(name, quoted=True))

    def swap(node: exp.Expression) -> exp.Expression:
        name = next((n for n, e in extra.items() if node == e), None)
        return node if name is None else exp.column(name, quoted=True)

    # An unaliased SELECT item keeps the name it had: `age > 65`, not the source column's.
    outer = outer.copy()
    outer.set("expressions", [
        exp.alias_(e, e.sql(dialect="duckdb"), quoted=True) if not isinstance(e, exp.Alias)
        and any(e == x for x in extra.values()) else e for e in outer.expressions])
    outer = outer.transform(swap, copy=False)
    outer.set("group", exp.Group(expressions=keys))
    columns = dict(source.columns)
    for name, expression in extra.items():
        if name in columns:
            refuse(expression, "GROUP BY", "expressions named unlike the source's columns",
                   f"Alias it differently from the column {name!r}")
        columns[name] = _type_of(expression, source)
    inner = exp.select(exp.Star(), *(exp.alias_(error_free(e, source.columns), n, quoted=True)
                                     for n, e in extra.items()))
    relation = inner.from_(source.relation.copy(), copy=False).subquery(_fresh(), copy=False)
    work = source.work + sum(measure(e, source.columns, source.limits).work
                             for e in extra.values())
    return replace(source, columns=columns, relation=relation, work=work), outer
