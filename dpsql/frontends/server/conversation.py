"""After login: the simple and extended query protocols over one :class:`Session`.

Simple query: ``Query`` → per statement RowDescription, DataRows, CommandComplete (or an
ErrorResponse that ends the batch) → ReadyForQuery. Extended query: ``Parse`` stores a
statement, ``Bind`` makes a portal with decoded parameter values, ``Describe`` tells the
columns, ``Execute`` sends rows (``max_rows`` at a time, then PortalSuspended), ``Sync`` ends
the batch; after an error every message up to ``Sync`` is skipped, as PostgreSQL does.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from dpsql.errors import Error
from dpsql.frontends.common import split_statements
from dpsql.frontends.server import protocol as pg
from dpsql.frontends.server.answers import Answer, Column
from dpsql.frontends.server.channel import Channel
from dpsql.frontends.server.session import Session
from dpsql.frontends.server.sqlstates import SessionError, message, sqlstate
from dpsql.frontends.server.types import TEXT, ParameterError, decode_parameter

LOG = logging.getLogger("dpsql.server")
MAX_PREPARED = 1000
"""Statements plus portals one session may hold (a client cannot exhaust memory)."""


@dataclass
class Statement:
    sql: str
    param_types: tuple[int, ...]
    promised: tuple[Column, ...] | None = None


@dataclass
class Portal:
    statement: Statement
    params: list[Any]
    result_formats: tuple[int, ...]
    answer: Answer | None = None
    described: bool = False
    sent: int = 0
    columns: tuple[Column, ...] | None = field(default=None)


def _formats(codes: Sequence[int], n: int) -> list[int]:
    """Format codes for n values: none → text, one → all, else one each."""
    if len(codes) == 0:
        return [0] * n
    if len(codes) == 1:
        return [codes[0]] * n
    if len(codes) != n:
        raise pg.ProtocolError(f"{len(codes)} format codes for {n} values")
    return list(codes)


class Conversation:
    """The query protocols of one logged-in client."""

    def __init__(self, channel: Channel, session: Session) -> None:
        self.channel = channel
        self.session = session
        self.statements: dict[str, Statement] = {}
        self.portals: dict[str, Portal] = {}
        self.skipping = False

    def handle(self, msg: pg.Message) -> bool:
        """Answer one message; False when the client said goodbye."""
        if isinstance(msg, pg.Terminate):
            return False
        if isinstance(msg, pg.Sync):
            self.skipping = False
            self._ready()
        elif isinstance(msg, pg.Flush):
            self.channel.flush()
        elif isinstance(msg, pg.Query):
            self._simple(msg.sql)
        elif not self.skipping:
            self._extended(msg)
        return True

    def _ready(self) -> None:
        if self.session.status == "I":
            self.portals.clear()
        self.channel.send(pg.encode_ready(self.session.status))
        self.channel.flush()

    def error(self, error: BaseException) -> None:
        """Send one statement's error: its SQLSTATE and dpsql's message."""
        if not isinstance(error, Error | SessionError | ParameterError):
            LOG.exception("internal error while answering a statement")
        code = error.sqlstate if isinstance(error, ParameterError) else sqlstate(error)
        text = str(error) if isinstance(error, ParameterError) else message(error)
        self.channel.send(pg.encode_error(code, text))

    def _simple(self, sql: str) -> None:
        statements, rest = split_statements(sql)
        statements += [rest] if rest.strip() else []
        if not statements:
            self.channel.send(pg.EMPTY_QUERY)
        for statement in statements:
            try:
                answer = self.session.execute(statement)
            except Exception as error:
                self.error(error)
                break
            if answer.columns is not None:
                self.channel.send(pg.encode_row_description(_fields(answer.columns, ())))
            self._rows(answer, answer.columns, (), 0, len(answer.rows))
            self._complete(answer)
        self._ready()

    def _complete(self, answer: Answer) -> None:
        for notice in answer.notices:
            self.channel.send(pg.encode_error("00000", notice, severity="NOTICE", notice=True))
        self.channel.send(pg.encode_command_complete(answer.tag))

    def _extended(self, msg: pg.Message) -> None:
        try:
            self._step(msg)
        except pg.ProtocolError:
            raise
        except Exception as error:
            self.error(error)
            self.skipping = True

    def _step(self, msg: pg.Message) -> None:
        if isinstance(msg, pg.Parse):
            self._parse(msg)
        elif isinstance(msg, pg.Bind):
            self._bind(msg)
        elif isinstance(msg, pg.Describe):
            self._describe(msg)
        elif isinstance(msg, pg.Execute):
            self._execute(msg)
        elif isinstance(msg, pg.Close):
            (self.statements if msg.kind == "S" else self.portals).pop(msg.name, None)
            self.channel.send(pg.CLOSE_COMPLETE)
        elif isinstance(msg, pg.Unsupported):
            raise SessionError("0A000", f"{msg.kind} is not served: dpsql answers queries "
                               "only (no COPY, no function calls)")
        else:
            raise pg.ProtocolError(f"unexpected {type(msg).__name__} message after login")

    def _room(self) -> None:
        if len(self.statements) + len(self.portals) >= MAX_PREPARED:
            raise SessionError("54000", f"more than {MAX_PREPARED} prepared statements and "
                               "portals: close some (DEALLOCATE) first")

    def _parse(self, msg: pg.Parse) -> None:
        if msg.name and msg.name in self.statements:
            raise SessionError("42P05", f'prepared statement "{msg.name}" already exists')
        self._room()
        self.statements[msg.name] = Statement(msg.sql, msg.param_types)
        self.channel.send(pg.PARSE_COMPLETE)

    def _statement(self, name: str) -> Statement:
        if name not in self.statements:
            raise SessionError("26000", f'prepared statement "{name}" does not exist')
        return self.statements[name]

    def _bind(self, msg: pg.Bind) -> None:
        statement = self._statement(msg.statement)
        formats = _formats(msg.param_formats, len(msg.values))
        types = [statement.param_types[i] if i < len(statement.param_types) else 0
                 for i in range(len(msg.values))]
        params = [decode_parameter(v, t, f, n) for n, (v, t, f) in
                  enumerate(zip(msg.values, types, formats, strict=True), start=1)]
        if msg.portal not in self.portals:
            self._room()
        self.portals[msg.portal] = Portal(statement, params, tuple(msg.result_formats))
        self.channel.send(pg.BIND_COMPLETE)

    def _portal(self, name: str) -> Portal:
        if name not in self.portals:
            raise SessionError("34000", f'portal "{name}" does not exist')
        portal = self.portals[name]
        if portal.answer is None:
            portal.answer = self.session.execute(portal.statement.sql, portal.params or None)
            portal.columns = portal.answer.columns
        return portal

    def _describe(self, msg: pg.Describe) -> None:
        if msg.kind == "S":
            statement = self._statement(msg.name)
            columns, count = self.session.describe(statement.sql)
            count = max(count, len(statement.param_types))
            oids = [statement.param_types[i] if i < len(statement.param_types) and
                    statement.param_types[i] else TEXT for i in range(count)]
            statement.promised = columns
            self.channel.send(pg.encode_parameter_description(oids))
            self._describe_columns(columns, ())
            return
        portal = self._portal(msg.name)
        portal.described = True
        self._describe_columns(portal.columns, portal.result_formats)

    def _describe_columns(self, columns: tuple[Column, ...] | None,
                          formats: Sequence[int]) -> None:
        if columns is None:
            self.channel.send(pg.NO_DATA)
        else:
            self.channel.send(pg.encode_row_description(_fields(columns, formats)))

    def _execute(self, msg: pg.Execute) -> None:
        portal = self._portal(msg.portal)
        answer = portal.answer
        assert answer is not None
        columns = portal.columns
        promised = portal.statement.promised
        if not portal.described and promised is not None and columns is not None and \
                len(promised) == len(columns):
            columns = promised  # the client knows the statement's description only
        end = len(answer.rows) if msg.max_rows <= 0 else min(len(answer.rows),
                                                              portal.sent + msg.max_rows)
        self._rows(answer, columns, portal.result_formats, portal.sent, end)
        portal.sent = end
        if end < len(answer.rows):
            self.channel.send(pg.PORTAL_SUSPENDED)
        else:
            self._complete(answer)

    def _rows(self, answer: Answer, columns: tuple[Column, ...] | None,
              formats: Sequence[int], start: int, end: int) -> None:
        if columns is None:
            return
        codes = _formats(formats, len(columns))
        for row in answer.rows[start:end]:
            self.channel.send(pg.encode_data_row(
                c.type.encode(v, f == 1) for c, v, f in zip(columns, row, codes, strict=True)))


def _fields(columns: tuple[Column, ...], formats: Sequence[int]) -> list[pg.Field]:
    codes = _formats(formats, len(columns))
    return [pg.Field(c.name, c.type.oid, c.type.size, f)
            for c, f in zip(columns, codes, strict=True)]
