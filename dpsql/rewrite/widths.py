"""Text read within its width: the rewrite pass that makes the plan's text widths true.

The analysis bounds every text value and every row's work from the widths of the text
columns (``dpsql.expr.size``), and a width is the data owner's declaration, never trusted:
each registered table the bounded query reads is read through a projection that cuts its
text columns to their widths, once per row, before any expression sees them. The privacy
unit is never cut (two people sharing a prefix would become one person).

Only a value longer than its width is cut (LEFT runs on those alone).

>>> from sqlglot import exp, parse_one
>>> from dpsql.plan import TableRead
>>> read = TableRead("t", ("pid", "name", "age"), (("name", 80),))
>>> print(read_within_widths(parse_one("SELECT COUNT(*) FROM t AS x"), (read,)).sql("duckdb"))
SELECT COUNT(*) FROM (SELECT "pid", CASE WHEN LENGTH("name") > 80 THEN LEFT("name", 80) \
ELSE "name" END AS "name", "age" FROM t) AS "x"
"""

from __future__ import annotations

from sqlglot import exp

from dpsql.plan import TableRead


def read_within_widths(tree: exp.Expression, reads: tuple[TableRead, ...]) -> exp.Expression:
    """``tree`` with each table of ``reads`` replaced by its cutting projection."""
    by_name = {read.table.lower(): read for read in reads}
    if not by_name:
        return tree

    def cut(node: exp.Expression) -> exp.Expression:
        read = by_name.get(node.name.lower()) if isinstance(node, exp.Table) and \
            not node.args.get("db") else None
        if read is None:
            return node
        alias = node.alias or node.name
        return _projection(read).subquery(exp.to_identifier(alias, quoted=True), copy=False)

    return tree.transform(cut)


def _projection(read: TableRead) -> exp.Select:
    widths = dict(read.widths)
    items = [_cut(c, widths[c]) if c in widths else exp.column(c, quoted=True)
             for c in read.columns]
    return exp.select(*items).from_(exp.to_table(read.table), copy=False)


def _cut(column: str, width: int) -> exp.Expression:
    value = exp.column(column, quoted=True)
    cut = exp.Left(this=value.copy(), expression=exp.Literal.number(width))
    long = exp.GT(this=exp.Length(this=value.copy()), expression=exp.Literal.number(width))
    return exp.alias_(exp.Case(ifs=[exp.If(this=long, true=cut)], default=value), column,
                      quoted=True)
