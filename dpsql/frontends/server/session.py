"""One analyst's session: statements in, answers out, each one audited.

A statement is one of: a session command (``SET``, ``SHOW``, ``RESET``, ``BEGIN``/``COMMIT``/
``ROLLBACK``, ``DEALLOCATE``, ``DISCARD``), ``EXPLAIN <query>`` (the plan, no data, no
charge), a tool's catalog probe (:mod:`.metadata`), or a private query, answered by dpsql on
the session's analyst-role connection and charged to the analyst's budget. Parameters are
bound by dpsql as literal nodes of the parsed query (:func:`dpsql.dbapi.bind`).
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import Any

import duckdb

from dpsql.accounting.users import AuditEntry, Users
from dpsql.accounting.values import Cost
from dpsql.connection import Connection
from dpsql.dbapi import bind, placeholders
from dpsql.errors import Error, ExecutionError, InvalidLiteral
from dpsql.frontends.server import answers, metadata
from dpsql.frontends.server.answers import NOTHING, TEXT, Answer, Column
from dpsql.frontends.server.pacing import Pacer
from dpsql.frontends.server.settings import SET, SET_NAMES, SET_TRANSACTION, Settings
from dpsql.frontends.server.sqlstates import SessionError, literal_form, sqlstate
from dpsql.parse import parse
from dpsql.result import Result

DIALECT = "postgres"
CANCEL_WINDOW = 30.0
"""Seconds a cancel request keeps trying to interrupt its statement."""


LEADING_COMMENTS = re.compile(r"^(\s|--[^\n]*\n|/\*.*?\*/)+", re.S)


def _first_words(sql: str, n: int = 2) -> list[str]:
    """The first ``n`` words of ``sql`` in upper case, after any comments."""
    return LEADING_COMMENTS.sub("", sql).upper().split(None, n)[:n]


TRANSACTION = {"BEGIN": "BEGIN", "START": "BEGIN", "COMMIT": "COMMIT", "END": "COMMIT",
               "ROLLBACK": "ROLLBACK", "ABORT": "ROLLBACK"}
EXPLAIN = re.compile(r"^\s*EXPLAIN\s*(?:\((?P<options>[^)]*)\))?\s*(?P<query>.*)$",
                     re.IGNORECASE | re.DOTALL)


class Session:
    """The state of one connection: its dpsql connection, settings and transaction status."""

    def __init__(self, con: Connection, *, engine: duckdb.DuckDBPyConnection | None, user: str,
                 database: str, pid: int, client: str, users: Users,
                 probes: metadata.MetadataDatabase, startup: dict[str, str] | None = None,
                 pacer: Pacer | None = None) -> None:
        self.con, self.engine = con, engine
        self.user, self.client, self.users = user, client, users
        self.settings = Settings(startup)
        self.status = "I"
        self.identity = metadata.Identity(user, database, pid, version_text())
        self.probes = probes.cursor()
        self._catalog_tables = probes.tables
        self._running = 0
        """The number of the statement being answered (0: idle), for cancel requests."""
        self._count = 0
        self._binding: tuple[str, Sequence[Any] | None, str] = ("", None, "")
        self.pacer = pacer or Pacer(0.0)

    def execute(self, sql: str, params: Sequence[Any] | None = None) -> Answer:
        """Answer one statement (audited); a refusal raises with its SQLSTATE."""
        shown = sql if not params else self._bound_text(sql, params)
        self._count += 1
        self._running = self._count
        try:
            answer = self._dispatch(sql, params) if not params else \
                self._with_parameters(sql, params)
        except BaseException as error:
            self._running = 0
            if self.status == "T":
                self.status = "E"
            charged = getattr(error, "charged", None) if isinstance(error, ExecutionError) \
                else None
            self._audit(shown, f"error: {type(error).__name__}", sqlstate(error),
                        charged or NOTHING)
            raise
        self._running = 0
        self._audit(shown, "ok", "00000", answer.charged)
        return answer

    def _with_parameters(self, sql: str, params: Sequence[Any]) -> Answer:
        """Answer a statement with bound parameters; a parameter that is not a value of the
        type it meets is refused naming it ($n), with SQLSTATE class 22 as PostgreSQL's."""
        try:
            return self._dispatch(sql, params)
        except InvalidLiteral as error:
            numbers = [n for n, value in enumerate(params, start=1)
                       if not isinstance(value, bool) and isinstance(value, str | int | Decimal)
                       and str(value) == error.text]
            if not numbers:
                raise
            raise SessionError(sqlstate(error), f"parameter ${numbers[0]} ({error.text!r}) is "
                               f"not a valid {error.kind} value: {literal_form(error.kind)}") \
                from None

    def _bound_text(self, sql: str, params: Sequence[Any]) -> str:
        try:
            return self._bind(sql, params)
        except Error:
            return sql

    def _bind(self, sql: str, params: Sequence[Any]) -> str:
        """``sql`` with ``params`` bound as literals; the last binding is remembered for the
        same parameters object (the audit's text and the query's are one binding; equal
        values of other types, 1 and True, are not the same parameters)."""
        if self._binding[0] != sql or self._binding[1] is not params:
            self._binding = (sql, params, bind(sql, list(params), dialect=DIALECT))
        return self._binding[2]

    def _dispatch(self, sql: str, params: Sequence[Any] | None) -> Answer:
        words = _first_words(sql)
        head = words[0] if words else ""
        if head in TRANSACTION:
            return self._transaction(TRANSACTION[head])
        if self.status == "E":
            raise SessionError("25P02", "current transaction is aborted, commands ignored until "
                               "end of transaction block: send ROLLBACK")
        commands: dict[str, Callable[[str], Answer]] = {
            "SET": self._set, "SHOW": self._show, "RESET": self._reset,
            "DEALLOCATE": lambda _: Answer(None, tag="DEALLOCATE"),
            "DISCARD": self._discard, "SAVEPOINT": lambda _: Answer(None, tag="SAVEPOINT"),
            "RELEASE": lambda _: Answer(None, tag="RELEASE"),
        }
        if head in commands and not params:
            return commands[head](sql)
        if head == "EXPLAIN":
            return self._explain(sql, params)
        return self._select(sql, params)

    def _transaction(self, tag: str) -> Answer:
        if tag == "BEGIN":
            self.status = "T"
        else:
            tag = "ROLLBACK" if self.status == "E" else tag
            self.status = "I"
        return Answer(None, tag=tag)

    def _set(self, sql: str) -> Answer:
        text = sql.strip().rstrip(";")
        if SET_TRANSACTION.match(text):
            return Answer(None, tag="SET")
        names = SET_NAMES.match(text)
        match = SET.match(text)
        if names:
            self.settings.set("timezone" if names[1].upper().startswith("TIME") else
                              "client_encoding", names[2])
        elif match:
            self.settings.set(match[1], match[2])
        else:
            raise SessionError("42601", f"cannot read {text!r}: write SET name = value")
        return Answer(None, tag="SET")

    def _reset(self, sql: str) -> Answer:
        words = sql.strip().rstrip(";").split()
        if len(words) != 2:
            raise SessionError("42601", "write RESET name or RESET ALL")
        self.settings.reset(words[1])
        return Answer(None, tag="RESET")

    def _discard(self, sql: str) -> Answer:
        self.settings.reset("all")
        return Answer(None, tag="DISCARD ALL")

    def _show(self, sql: str) -> Answer:
        name = sql.strip().rstrip(";")[4:].strip().strip('"')
        if name.lower() == "dpsql.budget":
            return answers.budget(self.con.budget)
        if name.lower() == "dpsql.catalog":
            return answers.catalog(self.con.catalog)
        if name.lower() == "tables":
            return Answer.of_table(self.con.tables().arrow(), tag="SHOW")
        value = self.settings.show(name)
        column = name.lower().replace("transaction isolation level", "transaction_isolation")
        return Answer.of_text(column, [value], "SHOW")

    def _explain(self, sql: str, params: Sequence[Any] | None) -> Answer:
        match = EXPLAIN.match(sql.strip().rstrip(";"))
        options = (match["options"] or "").lower() if match else ""
        query = match["query"] if match else ""
        if "analyze" in options or query.upper().startswith("ANALYZE"):
            raise SessionError("0A000", "EXPLAIN ANALYZE would run the query and show exact "
                               "row counts: use EXPLAIN <query> for the plan, or run the query")
        query = self._bind(query, params) if params else query
        info = self.con.explain(query, epsilon=self.settings.epsilon,
                                delta=self.settings.delta, dialect=DIALECT)
        if "json" in options:
            return Answer.of_text("QUERY PLAN", [json.dumps(info.to_dict(), indent=2)],
                                  "EXPLAIN")
        return Answer.of_text("QUERY PLAN", str(info).splitlines(), "EXPLAIN")

    def _select(self, sql: str, params: Sequence[Any] | None) -> Answer:
        bound = sql if params is None else self._bind(sql, params)
        tree = _parsed(bound)
        if tree is not None and metadata.is_probe(tree, self._catalog_tables):
            return self._probe(tree)
        with self.pacer.paced():
            result = self.con.sql(bound, epsilon=self.settings.epsilon,
                                  delta=self.settings.delta, dialect=DIALECT)
        table = result.ci(self.settings.interval_level) if self.settings.intervals and \
            isinstance(result, Result) else result.arrow()
        charged = result.cost if isinstance(result, Result) else Cost(0.0, 0.0)
        return Answer.of_table(table, charged=charged,
                               notices=(*_notices(result), self._spending(charged)))

    def _spending(self, charged: Cost) -> str:
        """The NOTICE every private answer ends with: what the ledger charged for it (with
        the estimates of "auto" bounds it paid for first: ``Result.cost``) and what the
        analyst's budget has left, read after the charge; both come from the ledger, which
        the analyst knows, never from the data."""
        return f"cost {charged}; budget left {self.con.left()}"

    def _probe(self, tree) -> Answer:
        metadata.check(tree)
        try:
            table = metadata.run_probe(self.probes, metadata.rewrite(tree, self.identity))
        except SessionError:
            raise
        except Exception as error:
            raise SessionError("0A000", "dpsql serve answers catalog queries from public "
                               "metadata only, and this one failed there: "
                               f"{' '.join(str(error).split())[:300]}. SHOW dpsql.catalog "
                               "lists every table and column") from None
        return Answer.of_table(table)

    def describe(self, sql: str) -> tuple[tuple[Column, ...] | None, int]:
        """The columns a prepared statement returns (None: no result set) and how many
        parameters it takes, without side effects beyond a query's own (a private query
        without parameters is answered now and replayed free from the answer cache)."""
        count = parameter_count(sql)
        words = _first_words(sql, 1)
        head = words[0] if words else ""
        if head in ("SET", "RESET", "DEALLOCATE", "DISCARD", "SAVEPOINT", "RELEASE",
                    *TRANSACTION):
            return None, count
        if count == 0:
            return self.execute(sql).columns, 0
        return self._names_only(sql, count), count

    def _names_only(self, sql: str, count: int) -> tuple[Column, ...] | None:
        """A parameterised query's column names, typed text (its types may depend on the
        values): compiled with NULLs for the parameters, nothing run."""
        try:
            compiled = self.con.compile(bind(sql, [None] * count, dialect=DIALECT),
                                        dialect=DIALECT)
        except Error:
            return None
        return tuple(Column(c.name, TEXT) for c in compiled.plan.columns)

    def cancel(self) -> None:
        """Cancel the statement this session is answering, if any (from another thread): a
        private query is free if its engine had not started reading data, and charged in
        full if it had (``Connection.cancel``), and the cancel acts at the session's next
        grid point (``.pacing``); a catalog probe is interrupted at once.

        A probe can only be interrupted while it runs, so a cancel that arrives before it
        starts keeps interrupting until the statement ends.
        """
        target = self._running
        if target:
            self.pacer.defer(self.con.cancel)
            threading.Thread(target=self._interrupt_probe, args=(target,), daemon=True).start()

    def _interrupt_probe(self, target: int) -> None:
        deadline = time.monotonic() + CANCEL_WINDOW
        while self._running == target and time.monotonic() < deadline:
            self.probes.interrupt()
            time.sleep(0.01)

    def close(self) -> None:
        self.probes.close()
        self.con.close()
        if self.engine is not None:  # None on Spark: the server's shared session stays
            self.engine.close()  # dpsql leaves an engine it was given open

    def _audit(self, statement: str, outcome: str, state: str, charged: Cost) -> None:
        self.users.record(AuditEntry(self.user, self.client, statement, outcome, state,
                                     charged.epsilon, charged.delta, time.time()))


def _parsed(sql: str):
    try:
        return parse(sql, dialect=DIALECT)
    except Error:
        return None


def parameter_count(sql: str) -> int:
    """The highest ``$n`` of ``sql`` (0 when it has none, or does not parse)."""
    try:
        slots = placeholders(parse(sql, dialect=DIALECT), sql)
    except Error:
        return 0
    return max((s.key for s in slots if isinstance(s.key, int)), default=0)


def version_text() -> str:
    from dpsql import __version__

    return f"PostgreSQL {metadata.SERVER_VERSION} (dpsql serve {__version__}, differentially " \
           "private answers)"


def _notices(result: Result) -> tuple[str, ...]:
    """What a shown result says under its table that a client should hear too: what it may
    have cut (``Result.notes``: default limits that can bind, private keys' group sizes)."""
    if not isinstance(result, Result):
        return ()
    return result.notes("the data owner can declare them in the catalog")
