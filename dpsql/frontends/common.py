"""What the command line, its shell and the server share: exit codes, error lines, running a
query, splitting a script into statements.

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
    """The exit code for ``error`` and its one-line message (without ``error: ``), its
    Python advice said as flags and catalog keys (:mod:`dpsql.frontends.advice`)."""
    text = " ".join(str(error).split())
    if isinstance(error, UsageError):
        return EXIT_CODES["usage"].code, f"usage: {text}"
    for cls, name in _BY_ERROR:
        if isinstance(error, cls):
            from dpsql.frontends.advice import for_cli  # only when failing: start-up time

            return EXIT_CODES[name].code, f"{type(error).__name__}: {for_cli(text)}"
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


def split_statements(text: str) -> tuple[list[str], str]:
    """The complete statements of ``text`` (without their ``;``) and the unfinished rest.

    Quotes (``'...'``, ``"..."``, doubled to escape) and comments (``-- ...``,
    ``/* ... */``) may contain ``;``. Statements holding only comments or spaces
    are dropped, so ``;;`` is harmless; the rest is ``""`` unless it holds code or
    an unfinished quote or comment.

    >>> split_statements("SELECT ';' AS x; SELECT 2 -- a comment; not an end\\n")
    (["SELECT ';' AS x"], ' SELECT 2 -- a comment; not an end\\n')
    >>> split_statements("/* ; */ ;; SELECT 1;")
    (['SELECT 1'], '')
    >>> split_statements("SELECT 1; -- done\\n")
    (['SELECT 1'], '')
    >>> split_statements("SELECT 'a;")
    ([], "SELECT 'a;")
    """
    statements: list[str] = []
    start, i, code = 0, 0, False
    while i < len(text):
        closer = _closer(text, i)
        if closer is not None:
            end = text.find(closer, i + 1 if closer in "'\"" else i + 2)
            if end < 0:
                break
            code = code or closer in "'\""
            i = end + len(closer)
            continue
        if text[i] == ";":
            if code:
                statements.append(text[start:i].strip())
            start, code = i + 1, False
        elif not text[i].isspace():
            code = True
        i += 1
    else:
        if not code:  # only spaces and finished comments since the last ';'
            return statements, ""
    return statements, text[start:]


def _closer(text: str, i: int) -> str | None:
    """What ends the quote or comment opening at ``text[i]``, if one opens there."""
    if text[i] in "'\"":
        return text[i]
    if text.startswith("--", i):
        return "\n"
    if text.startswith("/*", i):
        return "*/"
    return None
