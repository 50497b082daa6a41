"""PEP 249 (DB-API 2.0) cursors over a dpsql connection, with injection-proof parameters.

Parameters use the ``qmark`` style. They are bound into the parsed query as
literal nodes of the syntax tree — never spliced into the SQL text — so a value
can never change the query's structure.

>>> import dpsql, pyarrow as pa
>>> con = dpsql.connect(budget=dpsql.Budget(epsilon=1.0), seed=0)
>>> con.register("t", pa.table({"pid": [1, 2, 3], "k": ["a", "b", "a"]}), privacy_unit="pid",
...              public_keys={"k": ["a", "b"]})
>>> cur = con.cursor().execute("SELECT k, COUNT(*) AS n FROM t WHERE k = ? GROUP BY k", ["a"],
...                            epsilon=0.5)
>>> [d[0] for d in cur.description], cur.rowcount
(['k', 'n'], 2)
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from sqlglot import exp

from dpsql.dialect import DIALECTS
from dpsql.errors import InterfaceError, ProgrammingError
from dpsql.parse import parse

if TYPE_CHECKING:
    from dpsql.connection import Connection
    from dpsql.result import Result

apilevel = "2.0"
threadsafety = 1
"""Threads may share the module, not connections (a connection serialises its own work)."""
paramstyle = "qmark"


def literal(value: Any) -> exp.Expression:
    """A Python value as a SQL literal node."""
    if value is None:
        return exp.Null()
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, int | float):
        return exp.Literal.number(repr(value) if isinstance(value, float) else value)
    if isinstance(value, str | dt.date | dt.datetime):
        return exp.Literal.string(value.isoformat() if not isinstance(value, str) else value)
    raise ProgrammingError(f"parameter {value!r} of type {type(value).__name__} is not "
                           "supported: use None, bool, int, float, str or a date")


def bind(sql: str, parameters: Sequence[Any] | None, *, dialect: str = "duckdb") -> str:
    """``sql`` with each ``?`` replaced by the matching parameter, as a literal node.

    >>> bind("SELECT COUNT(*) FROM t WHERE name = ?", ["x' OR 1=1 --"])
    "SELECT COUNT(*) FROM t WHERE name = 'x'' OR 1=1 --'"
    """
    parameters = list(parameters or [])
    tree = parse(sql, dialect=dialect)
    slots = list(tree.find_all(exp.Placeholder))
    if len(slots) != len(parameters):
        raise ProgrammingError(f"the query has {len(slots)} '?' placeholders but "
                               f"{len(parameters)} parameters were given")
    if not slots:
        return sql
    for slot, value in zip(slots, parameters, strict=True):
        slot.replace(literal(value))
    return tree.sql(dialect=DIALECTS[dialect.lower()])


def _type_code(field: pa.Field) -> str:
    return str(field.type)


class Cursor:
    """A PEP 249 cursor; ``execute`` also takes dpsql's ``epsilon``/``delta``/``seed``."""

    arraysize = 1

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self._result: Result | None = None
        self._rows: list[tuple] = []
        self._position = 0
        self._closed = False

    def _open(self) -> None:
        if self._closed:
            raise InterfaceError("the cursor is closed")

    def execute(self, operation: str, parameters: Sequence[Any] | None = None, *,
                epsilon: float | None = None, delta: float | None = None,
                seed: int | None = None, dialect: str | None = None) -> Cursor:
        self._open()
        dialect = self.connection.dialect if dialect is None else dialect
        self._result = self.connection.sql(bind(operation, parameters, dialect=dialect),
                                           epsilon=epsilon, delta=delta, seed=seed,
                                           dialect=dialect)
        self._rows = self._result.fetchall()
        self._position = 0
        return self

    def executemany(self, operation: str, seq_of_parameters: Sequence[Sequence[Any]],
                    **options: Any) -> Cursor:
        """Each parameter set is its own query, charged separately; the last is kept."""
        for parameters in seq_of_parameters:
            self.execute(operation, parameters, **options)
        return self

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
    def result(self) -> Result:
        """The dpsql Result of the last query (with ``.ci()``, ``.explain()``)."""
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
