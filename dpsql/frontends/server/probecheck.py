"""What a tool's catalog probe may call, checked before it runs.

A probe reads public metadata, so what it may compute is what catalog queries need: the
catalog functions of PostgreSQL (most replaced by constants), scalar functions whose value
is no larger than their arguments, the common aggregates and window functions, and
``generate_series`` up to :data:`MAX_SERIES` numbers. Functions that build a large value or
long work from a short text — ``repeat``, ``lpad``/``rpad`` to a large or computed width,
``replace`` with a longer replacement or nested, ``regexp_replace``, ``format``, ``range``,
a regular expression not written as a literal, several series multiplied by a join — are
refused before anything runs (0A000 for a function not on the list, 54000 for a size past
its limit). The probe process's memory ceiling and time limit (:mod:`.probeworker`) stop
what slips through.

>>> from dpsql.parse import parse
>>> check(parse("SELECT c.relname FROM pg_catalog.pg_class c", dialect="postgres"))
>>> check(parse("SELECT repeat('x', 600000000)", dialect="postgres"))
Traceback (most recent call last):
...
dpsql.frontends.server.sqlstates.SessionError: a catalog query may not call repeat (in \
REPEAT('x', 600000000)). Catalog queries may call PostgreSQL's catalog functions, scalar \
functions whose value is no larger than their arguments, the common aggregates and window \
functions, and generate_series (the list is in docs/server.md, Limits)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from sqlglot import exp

from dpsql.frontends.server.sqlstates import SessionError

MAX_SERIES = 2_000
"""Numbers a generate_series may count (PostgreSQL tables have at most 1,600 columns)."""
MAX_PAD = 1_000
"""The widest lpad/rpad."""
MAX_GROWTH = 16
"""Bytes a replace's replacement may be longer than what it replaces."""

CATALOG = frozenset({
    "format_type", "pg_get_viewdef", "pg_get_serial_sequence", "pg_get_keywords",
    "pg_get_function_result", "pg_get_function_arguments", "pg_get_ruledef",
    "pg_get_function_identity_arguments", "pg_collation_is_visible", "pg_has_role",
    "has_column_privilege", "has_any_column_privilege", "has_function_privilege",
    "has_sequence_privilege", "quote_ident", "current_schemas", "current_database",
    "current_schema", "current_user", "session_user", "current_catalog", "current_version",
    "pg_size_pretty", "_pg_expandarray", "pg_my_temp_schema", "pg_is_other_temp_schema",
    "pg_tablespace_location", "pg_client_encoding", "pg_char_to_encoding", "txid_current",
    "pg_postmaster_start_time", "pg_conf_load_time", "inet_server_addr", "inet_server_port",
    "array_upper", "array_lower", "array_size", "cardinality", "array_to_string",
    "array_position", "array_contains", "array_contained_by", "array_overlaps",
    "generate_subscripts", "explode", "unnest", "array", "current_timestamp", "current_date",
    "json_build_object",
})
"""PostgreSQL's catalog and array functions that tools' catalog queries call."""
SCALAR = frozenset({
    "and", "or", "xor", "collate", "exists", "cast", "try_cast", "case", "if", "coalesce",
    "nullif", "greatest", "least", "lower", "upper", "length", "octet_length", "substring",
    "left", "right", "trim", "str_position", "starts_with", "concat", "concat_ws",
    "split_part", "translate", "initcap", "md5", "abs", "round", "floor", "ceil", "sign",
    "trunc", "power", "extract", "regexp_like", "regexp_i_like", "regexp_matches", "replace",
    "pad",
})
"""Scalar functions whose value is no larger than their arguments (``replace`` and ``pad``
with the limits of :data:`RULES`)."""
AGGREGATE = frozenset({
    "count", "min", "max", "sum", "avg", "logical_and", "logical_or", "every",
    "group_concat", "array_agg", "any_value", "row_number", "rank", "dense_rank", "lag",
    "lead", "first_value",
})
"""Aggregates and window functions (DuckDB's memory limit holds their states)."""
SERIES = frozenset({"generate_series", "exploding_generate_series"})


def function_name(node: exp.Func) -> str:
    """A call's name in lower case, as sqlglot knows it (``string_agg`` is group_concat)."""
    return (node.name if isinstance(node, exp.Anonymous) else node.sql_name()).lower()


def _literal(node: exp.Expression | None) -> bool:
    return isinstance(node, exp.Literal) or (isinstance(node, exp.Neg) and
                                             isinstance(node.this, exp.Literal))


def _number(node: exp.Expression) -> float:
    value = float(node.this.this if isinstance(node, exp.Neg) else node.this)
    return -value if isinstance(node, exp.Neg) else value


def _literal_string(node: exp.Expression | None) -> bool:
    """A string literal, with or without a COLLATE (psql writes ``'^(t)$' COLLATE ...``)."""
    node = node.this if isinstance(node, exp.Collate) else node
    return isinstance(node, exp.Literal) and node.is_string


def _pattern(call: exp.Expression) -> str | None:
    pattern = call.args.get("expression") if not isinstance(call, exp.Anonymous) else \
        (call.expressions[1:2] or [None])[0]
    if _literal_string(pattern):
        return None
    return "its pattern must be a literal string (a pattern computed per row compiles per row)"


def _pad(call: exp.Expression) -> str | None:
    width = call.expression
    if _literal(width) and not width.is_string and 0 <= _number(width) <= MAX_PAD:
        return None
    return f"its width must be a literal number up to {MAX_PAD:,}"


def _replace(call: exp.Expression) -> str | None:
    old, new = call.expression, call.args.get("replacement")
    if not (isinstance(old, exp.Literal) and old.is_string and old.this and
            isinstance(new, exp.Literal) and new.is_string):
        return "what it replaces and its replacement must be literal strings"
    if len(new.this.encode()) > len(old.this.encode()) + MAX_GROWTH:
        return f"its replacement may be at most {MAX_GROWTH} bytes longer than what it replaces"
    if call.this.find(exp.Replace) is not None:
        return "a replace may not be nested in another (each would multiply the length)"
    return None


def _series(call: exp.Expression) -> str | None:
    start, end, step = call.args.get("start"), call.args.get("end"), call.args.get("step")
    if step is not None and not (_literal(step) and not step.is_string and _number(step)):
        return "its step must be a literal number other than 0"
    if _literal(start) and _literal(end) and \
            abs(_number(end) - _number(start)) / abs(_number(step) if step else 1) > MAX_SERIES:
        return f"it may count at most {MAX_SERIES:,} numbers"
    return None


RULES: dict[str, Callable[[exp.Expression], str | None]] = {
    "regexp_like": _pattern, "regexp_i_like": _pattern, "regexp_matches": _pattern,
    "pad": _pad, "replace": _replace, "generate_series": _series,
    "exploding_generate_series": _series,
}
"""The arguments some allowed functions must have, and why (the problem, or None)."""


def check(tree: exp.Expression, replaced: Iterable[str] = ()) -> None:
    """Raise a :class:`SessionError` for the first call ``tree`` may not make; the names
    in ``replaced`` (functions the probe's rewrite turns into constants) are allowed."""
    allowed = CATALOG | SCALAR | AGGREGATE | SERIES | set(replaced)
    series = 0
    for node in tree.walk():
        if isinstance(node, exp.Operator):
            _operator(node)
        if not isinstance(node, exp.Func):
            continue
        name, fragment = function_name(node), " ".join(node.sql("postgres").split())[:120]
        if name not in allowed:
            raise SessionError("0A000", f"a catalog query may not call {_spelling(node)} "
                               f"(in {fragment}). Catalog queries may call PostgreSQL's "
                               "catalog functions, scalar functions whose value is no larger "
                               "than their arguments, the common aggregates and window "
                               "functions, and generate_series (the list is in "
                               "docs/server.md, Limits)")
        problem = RULES[name](node) if name in RULES else None
        if problem is not None:
            raise SessionError("54000", f"in a catalog query, {fragment}: {problem}")
        series += name in SERIES
        if series > 1:
            raise SessionError("54000", "a catalog query may use one generate_series at "
                               f"most (a join of several counts their product), not {fragment}")


def _operator(node: exp.Operator) -> None:
    """``OPERATOR(pg_catalog.~)`` is a regular expression match: its pattern is checked."""
    operator = node.text("operator").lower().removeprefix("pg_catalog.")
    if operator in ("~", "!~", "~*", "!~*") and not _literal_string(node.expression):
        raise SessionError("54000", f"in a catalog query, {node.sql('postgres')[:120]}: the "
                           "pattern must be a literal string")


def _spelling(node: exp.Func) -> str:
    """The function's name as the query wrote it."""
    if isinstance(node, exp.Anonymous):
        return node.name
    head = node.sql("postgres").split("(")[0].strip()
    return head.lower() if head else function_name(node)
