"""Passes that check the query's shape: one SELECT over one private table.

>>> import sqlglot
>>> from dpsql.catalog import Catalog, TableInfo
>>> cat = Catalog()
>>> _ = cat.add(TableInfo.private("t", columns={"pid": "INT", "x": "INT"}, privacy_unit="pid"))
>>> d = Draft(sql="", ast=sqlglot.parse_one("SELECT x FROM t GROUP BY t.x"), epsilon=1, delta=0)
>>> d = resolve_table(check_statement(d, None), Context(cat, None))
>>> d.table.name, d.select.sql()
('t', 'SELECT x FROM t GROUP BY x')
"""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from dpsql.analysis.draft import Context, Draft
from dpsql.analysis.grammar import check_row_expression, check_select_shape, refuse
from dpsql.analysis.served import auto_columns, noisy_columns, public_groups
from dpsql.catalog import PublicColumn, TableInfo, key_values
from dpsql.errors import BoundsNeeded, CatalogError, UnsupportedQueryError
from dpsql.expr.types import type_class
from dpsql.names import check_query_names
from dpsql.plan import GroupKey

SHAPE = "one SELECT ... FROM <private table> [WHERE] [GROUP BY] [HAVING] [ORDER BY] [LIMIT]"
MAX_PUBLIC_GROUPS = 1_000_000


def check_names(draft: Draft, ctx: Context) -> Draft:
    """No identifier of the query may be in dpsql's reserved namespace (``dpsql.names``)."""
    check_query_names(draft.ast)
    return draft


def check_statement(draft: Draft, ctx: Context) -> Draft:
    """Only a plain SELECT is accepted; set operations and DML are refused."""
    ast = draft.ast
    if isinstance(ast, exp.SetOperation):
        refuse(ast, "set operation", SHAPE, "Run each SELECT as its own query")
    if not isinstance(ast, exp.Select):
        kind = ast.key.upper()
        raise UnsupportedQueryError(f"{kind} statements are not supported: dpsql answers "
                                    f"{SHAPE}; it never modifies data")
    check_select_shape(ast)
    if any(isinstance(e, exp.Star) for e in ast.expressions):
        refuse(ast.expressions[0], "SELECT *", "aggregates and group keys",
               "Private rows cannot be released; select aggregates such as COUNT(*)")
    return draft


def _table_name(select: exp.Select) -> exp.Table:
    source = select.args.get("from_")
    if source is None:
        refuse(None, "SELECT without FROM", SHAPE, "Name a registered private table in FROM")
    table = source.this
    if not isinstance(table, exp.Table):
        refuse(table, "FROM", "a registered table name",
               "Subqueries and derived tables are not supported yet")
    if table.args.get("sample") is not None:
        refuse(table, "TABLESAMPLE", "the whole table",
               "Sampling is not supported: it would change which rows are protected")
    if not isinstance(table.this, exp.Identifier) or table.args.get("db"):
        refuse(table, "FROM", "a table registered with dpsql",
               "File-reading and other table functions cannot be queried: register the file "
               "with con.register(name, path, privacy_unit=...) and query it by name")
    return table


def resolve_table(draft: Draft, ctx: Context) -> Draft:
    """Find the one private table in FROM and drop table qualifiers from columns.

    A source built by ``resolve_source`` (subqueries, CTEs, joins) is already resolved.
    """
    select = draft.select
    if draft.table is not None:
        return _check_columns(draft, select, draft.table)
    table = _table_name(select)
    if table.name not in ctx.catalog and any(c in table.name for c in "./\\"):
        refuse(table, "FROM", "a table registered with dpsql",
               f"To query the file {table.name!r}, register it first: "
               "con.register(name, path, privacy_unit=...)")
    info = ctx.catalog.get(table.name)
    if info.public:
        raise UnsupportedQueryError(
            f"FROM {table.name}: {table.name!r} is a public table; dpsql answers queries over "
            "private tables (public tables are for lookups and public group keys)")
    qualifiers = {table.name.lower(), (table.alias or table.name).lower()}

    def strip(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Column) and node.table:
            if node.table.lower() not in qualifiers:
                refuse(node, "column", f"columns of {table.name}",
                       f"{node.table!r} is not a table in FROM")
            return exp.column(node.name, quoted=node.this.quoted)
        return node

    select = select.transform(strip)
    return _check_columns(draft, select, info)


def check_auto_limits(draft: Draft, ctx: Context) -> Draft:
    """A private table whose ``max_rows_per_unit`` is ``"auto"`` needs it estimated (by the
    connection, a private release) before the query's sensitivity can be known."""
    names = draft.private_tables or (draft.table.name,)
    tables = [ctx.catalog.get(n) for n in names if n in ctx.catalog]
    pending = tuple((info.name, limit) for info in tables for limit in info.auto_limits)
    if pending:
        said = ", ".join(f"{table}.{limit}" for table, limit in pending)
        served = auto_columns(draft.ast, {c: i.name for i in tables if i.auto_limits
                                          for c in i.auto_bounds},
                              counted=tuple(i.name for i in tables if i.auto_limits))
        raise BoundsNeeded(
            f"the query needs {said}, declared \"auto\": a query spends a quarter of its "
            "epsilon (and half its delta) estimating it the first time "
            "(Connection.estimate_limits), or declare the limit",
            tuple(sorted({(t, c) for t, c, _ in served if c})), draft.epsilon, draft.delta,
            limits=pending, served=served, groups=public_groups(draft.ast, tables),
            shares=noisy_columns(draft.ast))
    return draft


def _check_columns(draft: Draft, select: exp.Select, info: TableInfo) -> Draft:
    aliases = {e.alias.lower() for e in select.expressions if e.alias}
    visible = sorted(c for c in info.columns if not c.startswith("__dp_"))
    for column in select.find_all(exp.Column):
        name = column.name.lower()
        if name not in info.columns and not (name in aliases and _outside_source(column)):
            raise CatalogError(
                f"column `{column.name}` is not in {_describe(info)}; "
                f"its columns are {', '.join(visible)}")
    return replace(draft, ast=select, table=info)


def _describe(info: TableInfo) -> str:
    return "the FROM clause" if info.name.startswith("__dp_") else f"table {info.name!r}"


def _outside_source(column: exp.Column) -> bool:
    """True for columns in ORDER BY, HAVING or QUALIFY, which may name SELECT aliases."""
    return column.find_ancestor(exp.Order, exp.Having, exp.Qualify) is not None


def check_where(draft: Draft, ctx: Context) -> Draft:
    """WHERE must be a row-level predicate over the private table."""
    where = draft.select.args.get("where")
    if where is None:
        return draft
    check_row_expression(where.this, "WHERE")
    if type_class(where.this, draft.table.columns) not in ("boolean", "null"):
        refuse(where.this, "WHERE", "a condition (a comparison, IN, LIKE, IS NULL, ...)")
    return replace(draft, where=where.this)


def resolve_keys(draft: Draft, ctx: Context) -> Draft:
    """GROUP BY columns, never the privacy unit; public domains from the catalog."""
    group = draft.select.args.get("group")
    if group is None:
        return draft
    info = draft.table
    keys = []
    for node in group.expressions:
        if not isinstance(node, exp.Column):
            refuse(node, "GROUP BY", "column names",
                   "Expressions and positions in GROUP BY are not supported yet")
        name = node.name.lower()
        if name == info.privacy_unit:
            refuse(node, "GROUP BY", "columns other than the privacy unit",
                   f"Grouping by {node.name} would release one row per person; "
                   f"use COUNT(DISTINCT {node.name}) to count people instead")
        domain = info.public_keys.get(name)
        if isinstance(domain, str):
            domain = PublicColumn(domain, name)
        if isinstance(domain, PublicColumn):
            # Checked like a list given at registration, before any private row is read.
            domain = key_values(name, info.columns.get(name, ""),
                                ctx.public_values(domain.table, domain.column), info.name)
        keys.append(GroupKey(name=name, column=name, domain=domain))
    if len({k.name for k in keys}) != len(keys):
        refuse(group, "GROUP BY", "each column once")
    _check_domain_size(keys)
    return replace(draft, keys=tuple(keys))


def _check_domain_size(keys: list[GroupKey]) -> None:
    if not keys or not all(k.public for k in keys):
        return
    size = 1
    for key in keys:
        size *= len(key.domain)
    if size > MAX_PUBLIC_GROUPS:
        raise UnsupportedQueryError(
            f"GROUP BY {', '.join(k.name for k in keys)}: the public key domains multiply to "
            f"{size:,} groups (> {MAX_PUBLIC_GROUPS:,}); declare fewer public values")

