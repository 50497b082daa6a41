"""``dpsql shell``: SQL statements ending with ``;`` and dot-commands, typed or piped.

A statement may span several lines; it runs when a ``;`` outside quotes and
comments ends it (a last statement without ``;`` runs at the end of the input).
A line starting with ``.`` between statements is a dot-command (``.help`` lists
them). On a terminal the shell keeps a history in ``~/.dpsql_history`` (stdlib
readline), reports errors and goes on; reading a piped script, it stops at the
first error and exits with that error's code (see ``dpsql.frontends.cli.EXIT_CODES``), so
no later statement spends budget. Statements are split as the server splits a simple
query (``dpsql.frontends.common.split_statements``).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, TextIO

from sqlglot import exp

from dpsql.errors import Error
from dpsql.frontends.common import (
    EXIT_CODES,
    UsageError,
    answer,
    describe,
    interrupted,
    split_statements,
)
from dpsql.listing import column_notes

if TYPE_CHECKING:
    from dpsql.connection import Connection
    from dpsql.result import Result

PROMPT = "dpsql> "
CONTINUE = "   ...> "
HISTORY = Path("~/.dpsql_history")
HISTORY_LENGTH = 2000
COMMANDS = {
    ".help": "list these commands",
    ".tables": "registered tables: privacy unit, columns, bounds, limits, public keys",
    ".schema [TABLE]": "each table (or TABLE) as CREATE TABLE, roles and bounds as comments",
    ".budget": "budget spent and left, under every composition method",
    ".explain SQL": "what SQL would release and cost (reads no data, spends nothing)",
    ".epsilon [E]": "show or set ε for each following query",
    ".delta [D]": "show or set δ for each following query",
    ".format [FMT]": "show or set the output format: table, markdown, csv, json",
    ".quit": "leave the shell (also .exit or Ctrl-D)",
}
QUIT = (".quit", ".exit")


class Session:
    """A connection with the shell's settings: ε and δ per query, and the output format."""

    def __init__(self, con: Connection, *, epsilon: float | None, delta: float | None,
                 fmt: str, out: TextIO) -> None:
        self.con = con
        self.epsilon = epsilon
        self.delta = delta
        self.fmt = fmt
        self.out = out

    def query(self, sql: str) -> None:
        """Answer ``sql`` privately and print it (Ctrl-C cancels; progress on a terminal)."""
        from dpsql.frontends.output import render, side_note, side_notes

        result: Result = answer(self.con, sql, epsilon=self.epsilon, delta=self.delta)
        self.print(render(result, self.fmt))
        for note in side_notes(result, self.fmt):
            print(f"note: {note}", file=sys.stderr)
        if (note := side_note(result, self.fmt)) is not None and sys.stderr.isatty():
            sys.stderr.write(note + "\n")

    def explain(self, sql: str) -> None:
        import json

        info = self.con.explain(sql, epsilon=self.epsilon, delta=self.delta)
        self.print(json.dumps(info.to_dict(), indent=2) if self.fmt == "json" else str(info))

    def command(self, line: str) -> None:
        """Run one dot-command line (``.quit`` is handled by the caller)."""
        name, _, rest = line.strip().removesuffix(";").strip().partition(" ")
        rest = rest.strip()
        handlers: dict[str, Callable[[str], None]] = {
            ".help": self._help, ".tables": self._tables, ".schema": self._schema,
            ".budget": self._budget,
            ".explain": self._explain, ".epsilon": self._epsilon, ".delta": self._delta,
            ".format": self._format}
        if name not in handlers:
            raise UsageError(f"unknown command {name}; .help lists the commands")
        handlers[name](rest)

    def print(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def _help(self, _: str) -> None:
        width = max(map(len, COMMANDS))
        lines = [f"{name.ljust(width)}  {text}" for name, text in COMMANDS.items()]
        self.print("\n".join([*lines, "SQL statements end with ';' and may span lines."]))

    def _tables(self, _: str) -> None:
        self.print("\n".join(describe_table(info) for info in self.con.catalog)
                   or "no tables: pass a catalog (dpsql catalog.toml shell)")

    def _schema(self, table: str) -> None:
        tables = [self.con.catalog.get(table)] if table else list(self.con.catalog)
        self.print("\n".join(schema(info) for info in tables)
                   or "no tables: pass a catalog (dpsql catalog.toml shell)")

    def _budget(self, _: str) -> None:
        self.print(str(self.con.report()))

    def _explain(self, sql: str) -> None:
        if not sql:
            raise UsageError(".explain needs a query: .explain SELECT COUNT(*) FROM t")
        self.explain(sql)

    def _epsilon(self, value: str) -> None:
        if value:
            self.epsilon = _positive(".epsilon", value)
        self.print(f"epsilon per query: {_setting(self.epsilon, self.con.default_epsilon)}")

    def _delta(self, value: str) -> None:
        if value:
            self.delta = _probability(".delta", value)
        self.print(f"delta per query: {_setting(self.delta, self.con.default_delta)}")

    def _format(self, value: str) -> None:
        from dpsql.frontends.common import FORMATS

        if value:
            if value not in FORMATS:
                raise UsageError(f".format {value}: choose one of {', '.join(FORMATS)}")
            self.fmt = value
        self.print(f"format: {self.fmt}")


def describe_table(info) -> str:
    """One registered table for ``.tables``: who is protected and what is declared.

    >>> from dpsql.catalog import TableInfo
    >>> print(describe_table(TableInfo.private("t", columns={"pid": "INT", "x": "DOUBLE"},
    ...                                        privacy_unit="pid", bounds={"x": (0, 1)},
    ...                                        max_rows_per_group=2)))
    t (private, privacy unit pid): pid INT, x DOUBLE
      bounds x [0, 1]; max_rows_per_group 2
    """
    if info.public:
        kind = "public"
    elif info.privacy_unit is None:
        kind = "private, one person per row"
    else:
        kind = f"private, privacy unit {info.privacy_unit}"
    columns = ", ".join(f"{name} {sql_type}" for name, sql_type in info.columns.items())
    details = []
    if info.bounds:
        details.append("bounds " + ", ".join(f"{c} [{lo:g}, {hi:g}]"
                                             for c, (lo, hi) in info.bounds.items()))
    for limit in ("max_groups_per_unit", "max_rows_per_group", "max_rows_per_unit"):
        if getattr(info, limit) is not None:
            details.append(f"{limit} {getattr(info, limit)}")
    if info.public_keys:
        details.append("public keys " + ", ".join(info.public_keys))
    extra = f"\n  {'; '.join(details)}" if details else ""
    return f"{info.name} ({kind}): {columns}{extra}"


def schema(info) -> str:
    """One registered table for ``.schema``: CREATE TABLE, what dpsql knows as comments.

    >>> from dpsql.catalog import TableInfo
    >>> print(schema(TableInfo.private("t", columns={"pid": "INT", "x": "DOUBLE", "k": "TEXT"},
    ...                                privacy_unit="pid", bounds={"x": (0, 1)},
    ...                                public_keys={"k": ["a", "b"]}, max_rows_per_group=2)))
    -- private; max_rows_per_group 2
    CREATE TABLE t (
      pid INT,  -- privacy unit
      x DOUBLE,  -- bounds [0, 1]
      k VARCHAR(1024)  -- public key: 2 values
    );
    """
    kind = "public" if info.public else "private" if info.privacy_unit is not None else \
        "private, one person per row"
    limits = [f"{limit} {getattr(info, limit)}" for limit in
              ("max_groups_per_unit", "max_rows_per_group", "max_rows_per_unit")
              if getattr(info, limit) is not None]
    lines = []
    for number, (name, sql_type) in enumerate(info.columns.items(), start=1):
        column = exp.to_identifier(name).sql(dialect="duckdb")
        notes = column_notes(info, name, key_values=True)
        comma = "," if number < len(info.columns) else ""
        lines.append(f"  {column} {sql_type}{comma}" + (f"  -- {'; '.join(notes)}" if notes
                                                         else ""))
    table = exp.to_identifier(info.name).sql(dialect="duckdb")
    return "\n".join([f"-- {'; '.join([kind, *limits])}", f"CREATE TABLE {table} (", *lines,
                      ");"])


KEYWORDS = ("SELECT", "FROM", "WHERE", "GROUP BY", "HAVING", "ORDER BY", "LIMIT", "AS", "AND",
            "OR", "NOT", "IN", "IS", "NULL", "BETWEEN", "LIKE", "CASE", "WHEN", "THEN", "ELSE",
            "END", "DISTINCT", "JOIN", "LEFT JOIN", "ON", "USING", "WITH", "UNION ALL",
            "COUNT", "SUM", "AVG", "MEDIAN", "QUANTILE_CONT", "VARIANCE", "STDDEV", "LEAST",
            "GREATEST", "COALESCE", "CAST", "TRY_CAST", "EXPLAIN", "DESCRIBE", "SHOW TABLES",
            "DIFFERENTIAL_PRIVACY", "OPTIONS")
"""The SQL words offered by tab completion, beside table and column names."""


class Completer:
    """Tab completion for the terminal shell: dot-commands at the start of a line; else
    table names, column names and SQL keywords (in the case the word was begun in).

    >>> c = Completer(lambda: {"pums": ["age", "income", "pid"]})
    >>> c.candidates(".sc", ".sc"), c.candidates("SELECT inc", "inc"), c.candidates("se", "se")
    (['.schema'], ['income'], ['select'])
    >>> c.candidates("SELECT age FROM p", "p"), c.candidates(".schema p", "p")
    (['pid', 'pums'], ['pums'])
    """

    def __init__(self, names: Callable[[], dict[str, list[str]]]) -> None:
        self.names = names
        self._matches: list[str] = []

    def candidates(self, line: str, word: str) -> list[str]:
        head = line.lstrip()
        if head.startswith(".") and head == word:
            pool = [name.split()[0] for name in COMMANDS] + list(QUIT)
        elif head.startswith((".schema", ".describe")):
            pool = list(self.names())
        else:
            tables = self.names()
            upper = word[:1].isupper()
            pool = [*tables, *(c for columns in tables.values() for c in columns),
                    *(k if upper else k.lower() for k in KEYWORDS)]
        return sorted({name for name in pool if name.startswith(word)})

    def complete(self, word: str, state: int) -> str | None:
        """readline's completer protocol: the ``state``-th candidate for ``word``."""
        if state == 0:
            import readline

            self._matches = self.candidates(readline.get_line_buffer(), word)
        return self._matches[state] if state < len(self._matches) else None


def _setting(value: float | None, default: float) -> str:
    return f"{default:g} (default)" if value is None else f"{value:g}"


def _positive(name: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise UsageError(f"{name} {text}: give a positive number, e.g. {name} 0.5")
    return value


def _probability(name: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value < 1:
        raise UsageError(f"{name} {text}: give a number in [0, 1), e.g. {name} 1e-7")
    return value


def run(session: Session, read: Callable[[str], str | None], *, interactive: bool,
        err: TextIO = sys.stderr) -> int:
    """Read lines with ``read(prompt)`` (None at the end) and run them; return the exit code.

    Interactive: errors are reported and the shell goes on; Ctrl-C discards the
    statement being typed or cancels the running query. Piped: the first error,
    reported with its line number, ends the shell with that error's exit code.
    """
    pending, line_no = "", 0
    while True:
        try:
            line = read(CONTINUE if pending else PROMPT)
        except KeyboardInterrupt:
            err.write("\n")
            pending = ""
            continue
        if line is None:  # the end: run a last statement that has no ';'
            statements, _ = split_statements(pending + "\n;")
            return _attempt(session.query, statements, line_no, interactive, err)
        line_no += 1
        if pending or not line.lstrip().startswith("."):
            statements, pending = split_statements(pending + line)
            code = _attempt(session.query, statements, line_no, interactive, err)
        elif line.split()[0].removesuffix(";") in QUIT:
            return 0
        else:
            code = _attempt(session.command, [line], line_no, interactive, err)
        if code:
            return code


def _attempt(act: Callable[[str], None], texts: list[str], line_no: int, interactive: bool,
             err: TextIO) -> int:
    """``act`` on each text; 0, or (piped only) the exit code of the first failure."""
    for text in texts:
        try:
            act(text)
        except (Error, UsageError) as error:
            code, message = describe(error)
            where = "" if interactive else f"line {line_no}: "
            err.write(f"error: {where}{message}\n")
            if not interactive:
                return code
        except KeyboardInterrupt as error:
            err.write(f"error: {interrupted(error)}\n")
            if not interactive:
                return EXIT_CODES["interrupted"].code
    return 0


def terminal_reader(history: Path | None, completer: Completer | None = None
                    ) -> tuple[Callable[[str], str | None], Callable[[], None]]:
    """``input()`` with line editing, tab completion and a history file; and the function
    that saves the history."""
    readline = _readline()
    path = None if history is None else history.expanduser()
    if readline is not None and completer is not None:
        readline.set_completer(completer.complete)
        readline.set_completer_delims(" \t\n(),;=<>+-*/'\"")
        readline.parse_and_bind("bind ^I rl_complete" if "libedit" in (readline.__doc__ or "")
                                else "tab: complete")
    if readline is not None and path is not None:
        with contextlib.suppress(OSError):  # first run, or unreadable: an empty history
            readline.read_history_file(path)
        readline.set_history_length(HISTORY_LENGTH)

    def read(prompt: str) -> str | None:
        try:
            line = input(prompt)
        except EOFError:
            sys.stdout.write("\n")
            return None
        if readline is not None and prompt == CONTINUE:
            _merge_last_entries(readline)
        return line + "\n"

    def save() -> None:
        if readline is not None and path is not None:
            try:
                readline.write_history_file(path)
            except OSError as error:
                sys.stderr.write(f"warning: cannot save the history to {path}: {error}\n")

    return read, save


def _readline() -> ModuleType | None:
    """The standard library's readline (line editing, history), if this platform has it."""
    try:
        import readline
    except ImportError:  # e.g. Windows: plain input(), no history
        return None
    return readline


def _merge_last_entries(readline) -> None:
    """Make a statement typed over several lines one history entry (recalled whole).

    Lines are joined with a space, which would comment out the rest after a ``--``
    comment: such statements keep one entry per line.
    """
    count = readline.get_current_history_length()
    if count < 2:
        return
    previous, line = readline.get_history_item(count - 1), readline.get_history_item(count)
    if previous is None or line is None or "--" in previous:
        return
    readline.remove_history_item(count - 1)  # 0-based, unlike get_history_item
    readline.remove_history_item(count - 2)
    readline.add_history(f"{previous} {line}")


def piped_reader(stream: TextIO) -> Callable[[str], str | None]:
    """Lines of a script (no prompts); None at its end."""

    def read(_: str) -> str | None:
        return stream.readline() or None

    return read
