"""SQL text to one sqlglot statement, in one of the input dialects of ``dpsql.dialect``.

>>> parse("SELECT COUNT(*) FROM visits").sql()
'SELECT COUNT(*) FROM visits'
>>> parse('SELECT COUNT(*) FROM `visits` WHERE k = "a"', dialect="bigquery").sql()
'SELECT COUNT(*) FROM "visits" WHERE k = \\'a\\''
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError as SqlglotParseError
from sqlglot.errors import TokenError

from dpsql.dialect import DIALECTS
from dpsql.errors import ParseError

MAX_DEPTH = 200
"""Deepest syntax tree accepted: every later stage (analysis, rewrite, the engine's own
expression depth limit) stays far from Python's recursion limit below it."""
TOO_DEEP = ("the query is nested too deeply (parentheses, NOT, CASE, subqueries or chains of "
            f"AND/OR/+ more than about {MAX_DEPTH} levels, or parentheses beyond about 40): "
            "simplify it, e.g. use IN (...) for long lists of alternatives")


def parse(sql: str, *, dialect: str = "duckdb") -> exp.Expression:
    """Parse exactly one SQL statement; raise ParseError with the position otherwise."""
    if not isinstance(sql, str) or not sql.strip():
        raise ParseError("empty query: pass one SELECT statement as a string")
    read = DIALECTS.get(dialect.lower()) if isinstance(dialect, str) else None
    if read is None:
        raise ParseError(f"unknown SQL dialect {dialect!r}: dpsql reads "
                         f"{', '.join(repr(d) for d in DIALECTS)}")
    try:
        statements = [s for s in sqlglot.parse(sql, read=read) if s is not None]
    except SqlglotParseError as err:
        detail = err.errors[0] if err.errors else {}
        where = f" at line {detail.get('line')}, column {detail.get('col')}" if detail else ""
        raise ParseError(f"cannot parse the query{where}: {detail.get('description', err)}; "
                         f"near {detail.get('highlight', '')!r}") from None
    except (TokenError, ValueError) as err:
        raise ParseError(f"cannot parse the query: {err}") from None
    except RecursionError:
        raise ParseError(TOO_DEEP) from None
    if len(statements) != 1:
        raise ParseError(f"expected one SQL statement, got {len(statements)}: "
                         "send each query separately")
    if depth(statements[0]) > MAX_DEPTH:
        raise ParseError(TOO_DEEP)
    return statements[0]


def depth(tree: exp.Expression) -> int:
    """The number of levels of ``tree`` (counted without recursion).

    >>> depth(parse("SELECT COUNT(*) FROM t WHERE a > 1 AND b > 2"))
    6
    """
    deepest, stack = 0, [(tree, 1)]
    while stack:
        node, level = stack.pop()
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in node.iter_expressions())
    return deepest
