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
    if len(statements) != 1:
        raise ParseError(f"expected one SQL statement, got {len(statements)}: "
                         "send each query separately")
    return statements[0]
