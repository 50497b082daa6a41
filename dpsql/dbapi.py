"""PEP 249 (DB-API 2.0) cursors over a dpsql connection, with injection-proof parameters.

``paramstyle`` is ``qmark``, but ``execute`` reads every style below (one style per query):

=========  ============  =========================================================
style      placeholder   parameters
=========  ============  =========================================================
qmark      ``?``         a list or tuple, in placeholder order (PostgreSQL's ``%s``
                         reads as ``?``)
numeric    ``$1``        a list or tuple; ``$1`` is its first item (not in BigQuery)
named      ``:name``     a dict (also DuckDB's ``$name`` and BigQuery's ``@name``)
pyformat   ``%(name)s``  a dict
=========  ============  =========================================================

Parameters are bound into the parsed query as literal nodes of the syntax tree — never
spliced into the SQL text — so a value can never change the query's structure. A placeholder
stands for a value only (not a table, column or alias name). Every parameter must be used
and every placeholder bound, else ProgrammingError is raised before anything is spent.

>>> import dpsql, pyarrow as pa
>>> con = dpsql.connect(budget=dpsql.Budget(epsilon=1.0), seed=0)
>>> con.register("t", pa.table({"pid": [1, 2, 3], "k": ["a", "b", "a"]}), privacy_unit="pid",
...              public_keys={"k": ["a", "b"]})
>>> cur = con.cursor().execute("SELECT k, COUNT(*) AS n FROM t WHERE k = ? GROUP BY k", ["a"],
...                            epsilon=0.5)
>>> [d[0] for d in cur.description], cur.rowcount
(['k', 'n'], 2)

Beyond PEP 249, a cursor says what its last ``execute`` cost and what is left:
``cursor.cost`` (a ``Cost``, the exact decimals charged; zero when the answer came from the
answer cache or the catalog; for ``executemany`` every set's charge, added exactly) and
``cursor.budget`` (a ``Left``: the budget's ε and δ, or ρ and δ, after it). Both are None
before the first query. They read the ledger, never the data.

>>> str(cur.cost), str(cur.budget)
('ε=0.5, δ=0', 'ε=0.5, δ=0')
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
from collections.abc import Iterator, Mapping, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Protocol

import pyarrow as pa
from sqlglot import exp

from dpsql.accounting.values import Cost, Left, total
from dpsql.dialect import DIALECTS
from dpsql.errors import InterfaceError, ProgrammingError
from dpsql.parse import parse
from dpsql.result import Result

if TYPE_CHECKING:
    from dpsql.listing import Listing

apilevel = "2.0"
threadsafety = 1
"""Threads may share the module, not connections (a connection serialises its own work)."""
paramstyle = "qmark"

Parameters = Sequence[Any] | Mapping[str, Any]
"""A query's parameters: a sequence for ``?`` and ``$1``, a mapping for ``:name``."""

NAMED = ("named", "pyformat")
"""The styles whose parameters come in a mapping; the others take a sequence."""

_NAME_PLACES = (exp.Table, exp.TableAlias, exp.Column, exp.Identifier)
"""Parents that make a placeholder a name, not a value."""


@dataclasses.dataclass(frozen=True)
class Slot:
    """A placeholder: its style, its key (a name, a position from 1, or None for ``?``),
    its text as written and its node in the tree."""

    style: str
    key: str | int | None
    text: str
    node: exp.Expression

    def __str__(self) -> str:
        return self.text


def placeholders(tree: exp.Expression, sql: str) -> list[Slot]:
    """The placeholders of ``tree`` (parsed from ``sql``), in the order they are written.

    >>> sql = "SELECT COUNT(*) FROM t WHERE (k = :k AND x > $2) OR x < %(lo)s"
    >>> [(s.style, s.key, s.text) for s in placeholders(parse(sql, dialect="postgres"), sql)]
    [('named', 'k', ':k'), ('numeric', 2, '$2'), ('pyformat', 'lo', '%(lo)s')]
    """
    nodes = sorted(tree.find_all(exp.Placeholder, exp.Parameter), key=lambda n: n.meta["start"])
    return [_slot(node, sql[node.meta["start"]:node.meta["end"] + 1]) for node in nodes]


def _slot(node: exp.Expression, text: str) -> Slot:
    this = node.args.get("this")
    if isinstance(node.parent, _NAME_PLACES) or node.arg_key == "alias":
        raise ProgrammingError(f"placeholder {text} stands for a table, column or alias name: "
                               "parameters are values only; write the name in the query")
    if node.args.get("expression"):
        raise ProgrammingError(f"placeholder {text} is not supported: write ?, $1, :name or "
                               "%(name)s")
    if this is None:
        return Slot("qmark", None, text, node)
    if isinstance(this, exp.Identifier) and not node.args.get("widget"):
        return Slot("pyformat", this.name, text, node)
    name = this.name if isinstance(this, exp.Expression) else str(this)
    if name.isascii() and name.isdigit():
        return Slot("numeric", int(name), text, node)
    return Slot("named", name, text, node)


def literal(value: Any) -> exp.Expression:
    """A Python value as a SQL literal node.

    >>> [literal(v).sql() for v in (None, True, -2, 0.5, Decimal("1.10"), "it's")]
    ['NULL', 'TRUE', '-2', '0.5', '1.10', "'it''s'"]
    >>> literal(dt.date(2020, 1, 2)).sql()
    "CAST('2020-01-02' AS DATE)"
    """
    if value is None:
        return exp.Null()
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, int):
        return exp.Literal.number(int(value))
    if isinstance(value, float | Decimal):
        return _number(value)
    if isinstance(value, str):
        return exp.Literal.string(value)
    if isinstance(value, dt.date | dt.time):
        return _temporal(value)
    raise ProgrammingError(f"parameter {value!r} of type {type(value).__name__} is not "
                           "supported: use None, bool, int, float, Decimal, str, date, datetime "
                           "or time (convert NumPy values with .item())")


def _number(value: float | Decimal) -> exp.Expression:
    finite = value.is_finite() if isinstance(value, Decimal) else math.isfinite(value)
    if not finite:
        raise ProgrammingError(f"parameter {value!r} is not a finite number: SQL has no "
                               "literal for it; pass a finite value or None")
    return exp.Literal.number(format(value, "f") if isinstance(value, Decimal)
                              else repr(float(value)))


def _temporal(value: dt.date | dt.time) -> exp.Cast:
    """A date, time or timestamp as ``CAST('ISO text' AS type)``.

    dpsql's columns carry no time zone: an aware datetime binds as the UTC timestamp it
    names; an aware time (which names no instant) is refused.
    """
    types = exp.DataType.Type
    if isinstance(value, dt.datetime):
        if value.utcoffset() is not None:
            value = value.astimezone(dt.UTC).replace(tzinfo=None)
        return exp.cast(exp.Literal.string(value.isoformat(" ")), types.TIMESTAMP)
    if isinstance(value, dt.time):
        if value.utcoffset() is not None:
            raise ProgrammingError(f"parameter {value!r} is a time with a time zone, which "
                                   "names no instant: pass a naive time or a datetime")
        return exp.cast(exp.Literal.string(value.isoformat()), types.TIME)
    return exp.cast(exp.Literal.string(value.isoformat()), types.DATE)


def bind(sql: str, parameters: Parameters | None, *, dialect: str = "duckdb") -> str:
    """``sql`` with each placeholder replaced by its parameter, as a literal node.

    A query without placeholders and without parameters comes back unchanged.

    >>> bind("SELECT COUNT(*) FROM t WHERE name = ?", ["x' OR 1=1 --"])
    "SELECT COUNT(*) FROM t WHERE name = 'x'' OR 1=1 --'"
    >>> bind("SELECT COUNT(*) FROM t WHERE name = :name", {"name": "Bob"})
    "SELECT COUNT(*) FROM t WHERE name = 'Bob'"
    """
    tree = parse(sql, dialect=dialect)
    slots = placeholders(tree, sql)
    if parameters is not None:
        _check_shape(parameters)
    if not slots and not parameters:
        return sql
    for slot, value in zip(slots, _values(slots, parameters), strict=True):
        slot.node.replace(literal(value))
    return tree.sql(dialect=DIALECTS[dialect.lower()])


def _check_shape(parameters: object) -> None:
    if isinstance(parameters, Mapping) or (isinstance(parameters, Sequence) and not
                                           isinstance(parameters, str | bytes | bytearray)):
        return
    raise ProgrammingError(f"parameters must be a list or tuple (for ? and $1) or a dict (for "
                           f":name and %(name)s), not {type(parameters).__name__}")


def _values(slots: list[Slot], parameters: Parameters | None) -> list[Any]:
    """The value of each slot, or ProgrammingError naming what does not match."""
    if not slots:
        raise ProgrammingError(f"the query has no placeholders but got "
                               f"{_count(len(parameters), 'parameter')}: remove them, or add "
                               "placeholders")
    style = _one_style(slots)
    if parameters is None:
        raise ProgrammingError(f"the query has placeholders ({_texts(slots)}) but no "
                               f"parameters were given: pass {_wanted(style)}")
    if (style in NAMED) != isinstance(parameters, Mapping):
        raise ProgrammingError(f"the query's placeholders ({_texts(slots)}) are {style} but "
                               f"the parameters are a {type(parameters).__name__}: pass "
                               f"{_wanted(style)}")
    if style in NAMED:
        return _by_name(slots, parameters)
    if style == "numeric":
        return _by_number(slots, parameters)
    if len(slots) != len(parameters):
        raise ProgrammingError(f"the query has {_count(len(slots), '? placeholder')} but got "
                               f"{_count(len(parameters), 'parameter')}: pass one value per ?")
    return list(parameters)


def _one_style(slots: list[Slot]) -> str:
    first: dict[str, Slot] = {}
    for slot in slots:
        first.setdefault(slot.style, slot)
    if len(first) > 1:
        mixed = ", ".join(f"{slot} ({style})" for style, slot in first.items())
        raise ProgrammingError(f"the query mixes placeholder styles: {mixed}; write every "
                               "placeholder in one style")
    return slots[0].style


def _by_name(slots: list[Slot], parameters: Mapping[str, Any]) -> list[Any]:
    missing = [slot for slot in slots if slot.key not in parameters]
    if missing:
        names = ", ".join(dict.fromkeys(repr(slot.key) for slot in missing))
        raise ProgrammingError(f"no parameter for {_texts(missing)}: add {names} to the dict")
    unused = [name for name in parameters if name not in {slot.key for slot in slots}]
    if unused:
        raise ProgrammingError(f"unused parameters {', '.join(map(repr, unused))} (the query "
                               f"has {_texts(slots)}): remove them or fix their names")
    return [parameters[slot.key] for slot in slots]


def _by_number(slots: list[Slot], parameters: Sequence[Any]) -> list[Any]:
    beyond = [slot for slot in slots if not 1 <= slot.key <= len(parameters)]
    if beyond:
        raise ProgrammingError(f"no parameter for {_texts(beyond)}: got "
                               f"{_count(len(parameters), 'parameter')}, and $1 is the first")
    unused = sorted(set(range(1, len(parameters) + 1)) - {slot.key for slot in slots})
    if unused:
        raise ProgrammingError(f"unused parameters {', '.join(f'${n}' for n in unused)} (the "
                               f"query has {_texts(slots)}): remove them or renumber")
    return [parameters[slot.key - 1] for slot in slots]


def _texts(slots: list[Slot]) -> str:
    return ", ".join(dict.fromkeys(slot.text for slot in slots))


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _wanted(style: str) -> str:
    return "a dict of values by name" if style in NAMED else "a list of values"


def _type_code(field: pa.Field) -> str:
    return str(field.type)


class Answerer(Protocol):
    """What a cursor needs of its connection (``dpsql.connection.Connection``): the
    dialect queries are written in, and answers."""

    dialect: str

    def sql(self, query: str, *, epsilon: float | None = None, delta: float | None = None,
            seed: int | None = None, dialect: str | None = None) -> Result | Listing:
        """The noisy answer to ``query`` (or the catalog's listing), charged."""

    def left(self) -> Left:
        """What the budget has left now."""


class Cursor:
    """A PEP 249 cursor; ``execute`` also takes dpsql's ``epsilon``/``delta``/``seed``."""

    arraysize = 1

    def __init__(self, connection: Answerer) -> None:
        self.connection = connection
        self._result: Result | Listing | None = None
        self._rows: list[tuple] = []
        self._position = 0
        self._closed = False
        self._costs: list[Cost] = []
        self._left: Left | None = None

    def _open(self) -> None:
        if self._closed:
            raise InterfaceError("the cursor is closed")

    def execute(self, operation: str, parameters: Parameters | None = None, *,
                epsilon: float | None = None, delta: float | None = None,
                seed: int | None = None, dialect: str | None = None) -> Cursor:
        """Answer ``operation`` with its ``parameters`` bound (see the module for styles)."""
        self._open()
        dialect = self.connection.dialect if dialect is None else dialect
        query = bind(operation, parameters, dialect=dialect)
        self._costs = []
        return self._run(query, epsilon=epsilon, delta=delta, seed=seed, dialect=dialect)

    def executemany(self, operation: str, seq_of_parameters: Sequence[Parameters], *,
                    epsilon: float | None = None, delta: float | None = None,
                    seed: int | None = None, dialect: str | None = None) -> Cursor:
        """Each parameter set is its own query, charged separately; the last is kept.

        Every set is bound before the first query runs, so a bad set spends nothing.
        """
        self._open()
        dialect = self.connection.dialect if dialect is None else dialect
        queries = [bind(operation, p, dialect=dialect) for p in seq_of_parameters]
        self._costs = []
        for query in queries:
            self._run(query, epsilon=epsilon, delta=delta, seed=seed, dialect=dialect)
        return self

    def _run(self, query: str, *, epsilon: float | None, delta: float | None,
             seed: int | None, dialect: str) -> Cursor:
        self._result = self.connection.sql(query, epsilon=epsilon, delta=delta, seed=seed,
                                           dialect=dialect)
        self._rows = self._result.fetchall()
        self._position = 0
        answer = self._result if isinstance(self._result, Result) else None
        self._costs.append(Cost(0.0, 0.0) if answer is None else answer.cost)
        self._left = answer.left if answer is not None and answer.left is not None else \
            self.connection.left()
        return self

    @property
    def cost(self) -> Cost | None:
        """What the last ``execute`` charged, as the exact decimals the ledger adds (for
        ``executemany``, every parameter set's charge); zero for an answer from the cache or
        the catalog; None before any query."""
        return total(self._costs) if self._costs else None

    @property
    def budget(self) -> Left | None:
        """What the connection's budget had left after the last query (ε and δ; ρ and δ for
        a ρ-zCDP budget); None before any query."""
        return self._left

    @property
    def description(self) -> list[tuple] | None:
        if self._result is None:
            return None
        return [(f.name, _type_code(f), None, None, None, None, None)
                for f in self._result.arrow().schema]

    @property
    def rowcount(self) -> int:
        return -1 if self._result is None else len(self._rows)

    def _need_result(self) -> None:
        self._open()
        if self._result is None:
            raise InterfaceError("no query has been executed on this cursor")

    def fetchone(self) -> tuple | None:
        self._need_result()
        if self._position >= len(self._rows):
            return None
        self._position += 1
        return self._rows[self._position - 1]

    def fetchmany(self, size: int | None = None) -> list[tuple]:
        self._need_result()
        size = self.arraysize if size is None else size
        rows = self._rows[self._position:self._position + size]
        self._position += len(rows)
        return rows

    def fetchall(self) -> list[tuple]:
        self._need_result()
        rows = self._rows[self._position:]
        self._position = len(self._rows)
        return rows

    def __iter__(self) -> Iterator[tuple]:
        while (row := self.fetchone()) is not None:
            yield row

    @property
    def result(self) -> Result | Listing:
        """The dpsql Result of the last query (with ``.ci()``, ``.explain()``; a Listing
        for ``SHOW TABLES`` and ``DESCRIBE``)."""
        self._need_result()
        return self._result

    def df(self):
        return self.result.df()

    def arrow(self) -> pa.Table:
        return self.result.arrow()

    def pl(self):
        return self.result.pl()

    def setinputsizes(self, sizes: Any) -> None:
        """PEP 249 no-op."""

    def setoutputsize(self, size: Any, column: int | None = None) -> None:
        """PEP 249 no-op."""

    def close(self) -> None:
        self._closed = True

    def __enter__(self) -> Cursor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
