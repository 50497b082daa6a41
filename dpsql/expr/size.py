"""Bounded work per row: the size of every text value and the work of every row, from the catalog.

One person's row must not be able to take much longer than any other row: an analyst who
can make a row they pick cost seconds (``replace`` nested in a ``CASE`` arm that only that
person's row reaches) reads the answer to a yes/no question off the clock, and one who can
make it need gigabytes turns it into an error that depends on the data. So, like totality
(``dpsql.expr.totality``), work is decided before any data is read:

1. **Every text value has a most characters.** A text column holds at most its width, the
   ``n`` of its catalog type ``VARCHAR(n)`` (``dpsql.catalog``: the data owner's
   ``max_text_length``, else ``WorkLimits.default_text_length``; a public table's is
   measured), and the rewrite cuts every value read to it (``dpsql.rewrite.widths``), so the
   width holds whatever the data holds. The privacy unit is never cut (two people would
   merge): it has no width, and may be used only whole (compared, grouped, counted).
   Every other value is sized from its arguments (``SIZES``): ``a || b`` adds, ``replace``
   multiplies, ``LEFT(s, n)`` caps, ``lower`` triples (Java's full case mapping, Spark's,
   turns one character into up to three), and a number, date or boolean prints in at most
   ``PRINTED`` characters. A value that may exceed ``WorkLimits.max_text_value`` is refused.
2. **Every row costs a bounded number of steps.** Each node costs one step plus the
   characters it reads and writes (``OWN_WORK``): a comparison of two texts reads the
   shorter, a search (``strpos``, ``LIKE``) reads text × pattern. No engine may match in
   more: Spark's own LIKE is a backtracking regular expression (``%a%b%c%`` tries every
   triple of positions), so the Spark backend writes LIKE as one that cannot backtrack.
   A query's row expressions together may cost at most ``WorkLimits.max_row_work`` steps
   per row (``dpsql.analysis.work``).

The bounds are upper bounds: every CASE arm is counted, as if each row took them all.

>>> import sqlglot
>>> types = {"name": "VARCHAR(100)", "age": "INTEGER", "pid": "VARCHAR"}
>>> m = measure(sqlglot.parse_one("replace(lower(name), 'a', 'aaa') || age"), types)
>>> m.size, m.text
(964, True)
>>> measure(sqlglot.parse_one("pid = 'p1'"), types).work
3
>>> measure(sqlglot.parse_one("length(pid)"), types)
Traceback (most recent call last):
...
dpsql.errors.UnsupportedQueryError: `LENGTH(pid)` reads the text of `pid`, which has no width...
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from sqlglot import exp

from dpsql.catalog import STRING_TYPES, WorkLimits, text_width
from dpsql.errors import UnsupportedQueryError

PRINTED = 64
"""The most characters a number, date, timestamp, time, interval or boolean prints as
(a DECIMAL(38, s) with its sign and point is 40; a timestamp 26)."""
STRFTIME_CODE = 16
"""The most characters one strftime code writes (``%B``: September; ``%Y``: a year of
six digits and a sign)."""
CASE_FACTOR = 3
"""Characters one character may become in ``lower``/``upper`` (Java's full case mapping:
ΐ upper-cases to three characters; DuckDB maps one to one)."""


@dataclass(frozen=True)
class Measure:
    """What one row costs for an expression: ``size``, the most characters of its value as
    text (None for the privacy unit, which is never cut); ``work``, steps; ``text``, whether
    the value is text."""

    size: int | None
    work: int
    text: bool


DEFAULT_LIMITS = WorkLimits()


def measure(node: exp.Expression, types: Mapping[str, str],
            limits: WorkLimits = DEFAULT_LIMITS) -> Measure:
    """The size and work of a type-checked row expression; UnsupportedQueryError if one of
    its text values may exceed ``limits.max_text_value`` or needs the unit's text."""
    if isinstance(node, exp.Column):
        return _column(node, types)
    if isinstance(node, exp.Literal):
        return Measure(len(node.this) if node.is_string else PRINTED, 0, node.is_string)
    if isinstance(node, exp.Null | exp.Boolean | exp.DataType | exp.Var | exp.Identifier):
        return Measure(PRINTED if not isinstance(node, exp.Null) else 0, 0, False)
    parts = {id(child): measure(child, types, limits) for child in node.iter_expressions()}
    size, text = _size(node, parts)
    if text and size is not None and size > limits.max_text_value:
        _too_large(node, size, limits)
    own = OWN_WORK.get(type(node), _reads_text)(node, parts)
    return Measure(size, 1 + own + sum(m.work for m in parts.values()), text)


def _column(node: exp.Column, types: Mapping[str, str]) -> Measure:
    declared = types.get(node.name.lower(), "")
    if not declared.upper().startswith(STRING_TYPES):
        return Measure(PRINTED, 0, False)
    return Measure(text_width(declared), 0, True)


def _size(node: exp.Expression, parts: Mapping[int, Measure]) -> tuple[int | None, bool]:
    """(most characters, is text) of ``node``'s value from its arguments' measures."""
    rule = SIZES.get(type(node))
    if rule is not None:
        return rule(node, parts), True
    if isinstance(node, exp.Cast):
        inner = parts[id(node.this)]
        is_text = node.to.is_type(*exp.DataType.TEXT_TYPES)
        return (inner.size if inner.text else PRINTED) if is_text else PRINTED, is_text
    if isinstance(node, CHOICES):
        values = [parts[id(v)] for v in _values(node)]
        text = any(m.text for m in values)
        sizes = [m.size for m in values]
        return (None if None in sizes else max(sizes, default=0)), text
    return PRINTED, False


def _values(node: exp.Expression) -> list[exp.Expression]:
    """The arguments whose value ``node`` may return (not CASE's conditions)."""
    if isinstance(node, exp.Case):  # each WHEN ... THEN is an If, sized by its THEN
        return [*(node.args.get("ifs") or []), *([node.args["default"]] if node.args.get(
            "default") else [])]
    if isinstance(node, exp.If):
        return [v for v in (node.args.get("true"), node.args.get("false")) if v is not None]
    if isinstance(node, exp.Nullif):
        return [node.this]
    return [v for v in (node.this, *node.expressions) if isinstance(v, exp.Expression)]


CHOICES = (exp.Paren, exp.Case, exp.If, exp.Coalesce, exp.Nullif, exp.Least, exp.Greatest)
"""Nodes whose value is one of their arguments'."""


def _need(node: exp.Expression, child: exp.Expression | None,
          parts: Mapping[int, Measure]) -> int:
    """The size of ``child`` (0 if absent), which ``node`` reads character by character."""
    if child is None:
        return 0
    size = parts[id(child)].size
    if size is None:
        column = child.find(exp.Column)
        raise UnsupportedQueryError(
            f"`{node.sql(dialect='duckdb')}` reads the text of "
            f"`{(column or child).sql(dialect='duckdb')}`, which has no width: the privacy "
            "unit is never cut to a width (two people would become one), so it may be used "
            "only whole: grouped, counted, or compared with =, <>, IN or IS NULL")
    return size


def _arg(node: exp.Expression, parts: Mapping[int, Measure], slot: str = "this") -> int:
    return _need(node, node.args.get(slot), parts)


def _literal_int(node: exp.Expression | None) -> int | None:
    """A non-negative integer literal's value (SUBSTR/LEFT lengths are checked literals)."""
    if isinstance(node, exp.Literal) and not node.is_string and node.this.isdigit():
        return int(node.this)
    return None


def _cut(node: exp.Expression, parts: Mapping[int, Measure]) -> int:
    """LEFT, RIGHT, SUBSTR: at most the text, and at most the literal length if given."""
    size = _arg(node, parts)
    slot = "length" if isinstance(node, exp.Substring) else "expression"
    length = _literal_int(node.args.get(slot))
    return size if length is None else min(size, length)


def _replace(node: exp.Expression, parts: Mapping[int, Measure]) -> int:
    """Each occurrence of the searched text (a literal of L characters, else at least 1; an
    empty one replaces nothing) becomes the replacement: size / L copies of it at most."""
    size, new = _arg(node, parts), _arg(node, parts, "replacement")
    old = node.args.get("expression")
    length = len(old.this) if isinstance(old, exp.Literal) and old.is_string else 1
    if length == 0:
        return size
    return max(size, size // length * new + size % length)


def _strftime(node: exp.Expression, parts: Mapping[int, Measure]) -> int:
    """A checked literal format: each code writes at most STRFTIME_CODE characters."""
    text = node.args["format"].this
    return len(text) + text.count("%") * STRFTIME_CODE


def _concat(node: exp.Expression, parts: Mapping[int, Measure]) -> int:
    return sum(_need(node, child, parts) for child in node.iter_expressions())


SIZES: dict[type[exp.Expression], Callable[[exp.Expression, Mapping[int, Measure]], int]] = {
    exp.Lower: lambda node, parts: CASE_FACTOR * _arg(node, parts),
    exp.Upper: lambda node, parts: CASE_FACTOR * _arg(node, parts),
    exp.Reverse: _arg,
    exp.Trim: _arg,
    exp.Substring: _cut,
    exp.Left: _cut,
    exp.Right: _cut,
    exp.Replace: _replace,
    exp.DPipe: _concat,
    exp.Concat: _concat,
    exp.TimeToStr: _strftime,
}
"""The most characters of each text function's value, from its arguments'."""


def _reads_text(node: exp.Expression, parts: Mapping[int, Measure]) -> int:
    """The default: a text function reads its text arguments and writes its value; any
    other node (arithmetic, AND, a date function) costs its one step."""
    if type(node) not in SIZES and not (isinstance(node, exp.Cast) and parts[id(node.this)].text):
        return 0
    written = _size(node, parts)[0] or 0
    return written + sum(_need(node, child, parts) for child in node.iter_expressions()
                         if parts[id(child)].text)


def _compare(node: exp.Expression, parts: Mapping[int, Measure]) -> int:
    """Comparing two texts reads the shorter (an equality of lengths is checked first)."""
    children = [c for c in node.iter_expressions() if parts[id(c)].text]
    if len(children) < 2:
        return 0
    first, rest = children[0], children[1:]
    return sum(_shorter(first, other, parts) for other in rest)


def _shorter(a: exp.Expression, b: exp.Expression, parts: Mapping[int, Measure]) -> int:
    """The shorter of two texts; two units compared whole cost one step (neither is cut)."""
    known = [s for s in (parts[id(a)].size, parts[id(b)].size) if s is not None]
    return min(known, default=0)


def _search(node: exp.Expression, parts: Mapping[int, Measure]) -> int:
    """STRPOS, STARTS_WITH, ENDS_WITH: text × searched text (a naive search's worst case)."""
    searched = node.args.get("substr") or node.args.get("expression")
    return _arg(node, parts) * max(1, _need(node, searched, parts))


def _like(node: exp.Expression, parts: Mapping[int, Measure]) -> int:
    """text × (pattern + 1): each fixed part of the pattern is searched for in turn, from
    where the one before matched (DuckDB; the Spark backend writes LIKE as a regular
    expression that cannot backtrack, ``dpsql.backends.spark``)."""
    pattern = node.expression
    if not (isinstance(pattern, exp.Literal) and pattern.is_string):
        return 0  # LIKE NULL: the type checker admits only literal patterns
    return _arg(node, parts) * (len(pattern.this) + 1)


OWN_WORK: dict[type[exp.Expression], Callable[[exp.Expression, Mapping[int, Measure]], int]] = {
    **{kind: _compare for kind in (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.In,
                                   exp.Between, exp.NullSafeEQ, exp.NullSafeNEQ)},
    exp.Like: _like,
    exp.ILike: lambda node, parts: _like(node, parts) + CASE_FACTOR * _arg(node, parts),
    exp.StrPosition: _search,
    exp.StartsWith: _search,
    exp.EndsWith: _search,
    exp.Length: _arg,
    exp.Is: lambda node, parts: 0,
    **{kind: lambda node, parts: 0 for kind in CHOICES},
}
"""Steps a node costs beyond its arguments' (``_reads_text`` for the others)."""


def _too_large(node: exp.Expression, size: int, limits: WorkLimits) -> None:
    raise UnsupportedQueryError(
        f"`{_short(node)}` may build a text of up to {size:,} characters on one row; dpsql "
        f"allows {limits.max_text_value:,} (max_text_value), so that no row can take much "
        "longer or need more memory than another and give away what it holds. Text columns "
        "are read as at most their width (max_text_length, shown by DESCRIBE): cut the text "
        "first with LEFT(..., n), grow it less, or ask the data owner to declare a smaller "
        "max_text_length for the column")


def _short(node: exp.Expression, limit: int = 120) -> str:
    sql = node.sql(dialect="duckdb")
    return sql if len(sql) <= limit else sql[: limit - 3] + "..."
