"""What the command line and its shell share: exit codes, error lines, running a query.

Kept light: the CLI's start-up time counts (no dataclasses, no typing at run time).
"""

from __future__ import annotations

import sys

from dpsql.errors import (
    BudgetExceededError,
    Error,
    InterfaceError,
    InternalError,
    NotSupportedError,
    OperationalError,
    PrivacyError,
    ProgrammingError,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from dpsql.connection import Connection
    from dpsql.result import Result


FORMATS = ("table", "markdown", "csv", "json")


class ExitCode:
    """What a ``dpsql`` exit status means to a script (no dataclass: start-up time)."""

    __slots__ = ("code", "meaning")

    def __init__(self, code: int, meaning: str) -> None:
        self.code = code
        self.meaning = meaning


EXIT_CODES = {
    "ok": ExitCode(0, "success"),
    "execution": ExitCode(1, "the engine failed: the DATABASE file cannot be opened, or the "
                             "query failed while reading the data (ExecutionError; its cost "
                             "was charged)"),
    "usage": ExitCode(2, "wrong command line or dot-command, or the DATABASE file does not "
                         "exist or is not a DuckDB database"),
    "invalid": ExitCode(3, "the SQL does not parse or names an unknown table or column, or the "
                           "catalog is wrong (ParseError, CatalogError)"),
    "refused": ExitCode(4, "valid SQL that dpsql cannot prove private (UnsupportedQueryError); "
                           "nothing was spent"),
    "budget": ExitCode(5, "the query would overdraw the privacy budget (BudgetExceededError); "
                          "nothing was spent"),
    "privacy": ExitCode(6, "invalid privacy parameters, e.g. ε <= 0 or δ >= 1 (PrivacyError)"),
    "internal": ExitCode(7, "a bug in dpsql (InternalError or an unexpected exception): "
                            "please report it"),
    "interrupted": ExitCode(130, "Ctrl-C: the query was cancelled; free if its engine had "
                                 "not started reading data, else charged in full (the "
                                 "message says which)"),
    "broken_pipe": ExitCode(141, "the reader closed stdout early (e.g. `| head`); later "
                                 "statements did not run"),
}
"""Exit statuses, in the order docs/cli.md lists them (tests check that it does)."""


_BY_ERROR = (
    (BudgetExceededError, "budget"), (PrivacyError, "privacy"), (NotSupportedError, "refused"),
    (ProgrammingError, "invalid"), (InterfaceError, "invalid"), (InternalError, "internal"),
    (OperationalError, "execution"), (Error, "execution"),
)
"""dpsql errors to exit codes, most specific class first."""


class UsageError(InterfaceError):
    """The command line (or a shell dot-command) is wrong."""


def describe(error: BaseException) -> tuple[int, str]:
    """The exit code for ``error`` and its one-line message (without ``error: ``)."""
    text = " ".join(str(error).split())
    if isinstance(error, UsageError):
        return EXIT_CODES["usage"].code, f"usage: {text}"
    for cls, name in _BY_ERROR:
        if isinstance(error, cls):
            return EXIT_CODES[name].code, f"{type(error).__name__}: {text}"
    return (EXIT_CODES["internal"].code,
            f"internal error, please report it: {type(error).__name__}: {text}")


def interrupted(error: KeyboardInterrupt) -> str:
    """The message for Ctrl-C: what the cancelled query cost (``run_with_progress`` notes it).

    >>> interrupted(KeyboardInterrupt())
    'interrupted: the query was cancelled before it read any data; nothing was spent'
    """
    from dpsql.statements import NOTHING_SPENT  # not on the --help path: start-up time

    notes = getattr(error, "__notes__", None)
    return "interrupted: " + (" ".join(notes) if notes else NOTHING_SPENT)


def answer(con: Connection, sql: str, *, epsilon: float | None, delta: float | None) -> Result:
    """``con.sql(sql)``, cancelled by Ctrl-C (the backend's ``interrupt``), with a progress
    line when stderr is a terminal (DuckDB reports its progress; other engines do not)."""
    import duckdb

    from dpsql.frontends.progress import run_with_progress

    engine = getattr(con.backend, "con", None)
    probe = (lambda: _query_progress(engine)) if isinstance(
        engine, duckdb.DuckDBPyConnection) else None
    return run_with_progress(lambda: con.sql(sql, epsilon=epsilon, delta=delta),
                             stream=sys.stderr, probe=probe, cancel=con.cancel)


def _query_progress(engine) -> float:
    import duckdb

    try:
        return engine.query_progress()
    except duckdb.Error:  # between statements: progress unknown
        return -1.0
