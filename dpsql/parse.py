"""SQL text to one sqlglot statement, in one of the input dialects of ``dpsql.dialect``.

>>> parse("SELECT COUNT(*) FROM visits").sql()
'SELECT COUNT(*) FROM visits'
>>> parse('SELECT COUNT(*) FROM `visits` WHERE k = "a"', dialect="bigquery").sql()
'SELECT COUNT(*) FROM "visits" WHERE k = \\'a\\''
"""

from __future__ import annotations

import difflib

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError as SqlglotParseError
from sqlglot.errors import TokenError
from sqlglot.tokens import TokenType

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
        raise ParseError(_parse_failure(sql, read, err)) from None
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


def _parse_failure(sql: str, read: type, err: SqlglotParseError) -> str:
    """What the parser stopped at, led by the misspelt keyword that likely made it stop."""
    detail = err.errors[0] if err.errors else {}
    where = f" at line {detail.get('line')}, column {detail.get('col')}" if detail else ""
    stopped = f"{detail.get('description', err)}; near {detail.get('highlight', '')!r}"
    try:
        tokens = read().tokenize(sql)
    except (TokenError, ValueError):
        tokens = []
    hint = _misspelt_keyword(tokens, detail.get("line"), detail.get("col"))
    if hint is None:
        return f"cannot parse the query{where}: {stopped}"
    return f"cannot parse the query: {hint} (the parser stopped{where}: {stopped})"


STATEMENT_KEYWORDS = ("SELECT", "WITH", "FROM", "VALUES", "EXPLAIN", "SHOW", "SET", "DESCRIBE")
"""Words a statement dpsql reads may start with."""
CLAUSE_KEYWORDS = (
    "SELECT", "FROM", "WHERE", "GROUP", "BY", "HAVING", "ORDER", "LIMIT", "OFFSET", "QUALIFY",
    "JOIN", "INNER", "LEFT", "RIGHT", "FULL", "OUTER", "CROSS", "ON", "USING", "UNION", "ALL",
    "EXCEPT", "INTERSECT", "DISTINCT", "AS", "CASE", "WHEN", "THEN", "ELSE", "END", "AND", "OR",
    "NOT", "IN", "BETWEEN", "LIKE", "ILIKE", "IS", "NULL", "EXISTS", "WITHIN", "FILTER", "OVER",
    "PARTITION", "ASC", "DESC", "WITH", "CAST")
"""Keywords a misspelling of which stops the parser a token or two later."""
SIMILAR = 0.75
"""difflib ratio above which a word reads as a misspelt keyword (FORM, fron, WTIH: 0.75)."""


def _misspelt_keyword(tokens: list, line: int | None, col: int | None) -> str | None:
    """The word that is likely a misspelt keyword, and the keyword, or None.

    A statement's first word must be a statement keyword; otherwise the parser stops at,
    or one or two tokens after, a misspelt clause keyword it read as a name.

    >>> from dpsql.dialect import DIALECTS
    >>> tokens = DIALECTS["duckdb"]().tokenize("SELECT sex FROM pums GRUOP BY sex")
    >>> _misspelt_keyword(tokens, 1, 29)
    '`GRUOP` (line 1, column 22) is not a keyword here: did you mean GROUP?'
    >>> _misspelt_keyword(DIALECTS["duckdb"]().tokenize("SELEC COUNT(*) FROM t"), 1, 12)
    '`SELEC` (line 1, column 1) does not start a statement: did you mean SELECT?'
    """
    if not tokens:
        return None
    if _is_word(tokens, 0):
        return _suggest(tokens[0], STATEMENT_KEYWORDS, "does not start a statement",
                        "a query starts with SELECT or WITH")
    stop = next((i for i, t in enumerate(tokens) if (t.line, t.col) == (line, col)), None)
    for i in () if stop is None else range(stop, max(stop - 3, -1), -1):
        if _is_word(tokens, i):
            hint = _suggest(tokens[i], CLAUSE_KEYWORDS, "is not a keyword here", None)
            if hint is not None:
                return hint
    return None


def _is_word(tokens: list, i: int) -> bool:
    """An unquoted name that is neither a function (before ``(``) nor part of ``a.b``."""
    after = tokens[i + 1].token_type if i + 1 < len(tokens) else None
    before = tokens[i - 1].token_type if i > 0 else None
    return (tokens[i].token_type == TokenType.VAR
            and TokenType.DOT not in (after, before) and after != TokenType.L_PAREN)


def _suggest(token, keywords: tuple[str, ...], problem: str, otherwise: str | None
             ) -> str | None:
    """``token``'s closest keyword as advice; ``otherwise`` when none is close."""
    word = token.text.upper()
    close = difflib.get_close_matches(word, keywords, n=1, cutoff=SIMILAR)
    if word in keywords or (not close and otherwise is None):
        return None
    start = token.col - len(token.text) + 1
    fix = f"did you mean {close[0]}?" if close else otherwise
    return f"`{token.text}` (line {token.line}, column {start}) {problem}: {fix}"


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
