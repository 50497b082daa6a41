"""dpsql's errors as PostgreSQL SQLSTATEs (docs/server.md lists them).

The message sent is always dpsql's own (it names the fragment and how to fix it, and never
holds data); anything that is not a dpsql error is a bug, answered generically.

>>> import dpsql
>>> sqlstate(dpsql.BudgetExceededError("over")), sqlstate(dpsql.ParseError("bad"))
('53DP1', '42601')
>>> sqlstate(KeyError("x"))
'XX000'
"""

from __future__ import annotations

from dpsql.errors import (
    BudgetExceededError,
    CatalogError,
    Error,
    InterfaceError,
    InternalError,
    InvalidLiteral,
    NotSupportedError,
    ParseError,
    PrivacyError,
    ProgrammingError,
    QueryCancelled,
    RoleError,
)


class SessionError(Exception):
    """A statement the server itself refuses (a setting, a transaction state), with its
    SQLSTATE."""

    def __init__(self, sqlstate: str, message: str) -> None:
        super().__init__(message)
        self.sqlstate = sqlstate


BUDGET_EXCEEDED = "53DP1"
"""Class 53 (insufficient resources), dpsql's own subclass: the privacy budget is spent."""

BY_ERROR: tuple[tuple[type[Exception], str], ...] = (
    (QueryCancelled, "57014"),          # query_canceled
    (BudgetExceededError, BUDGET_EXCEEDED),
    (RoleError, "42501"),               # insufficient_privilege
    (PrivacyError, "22023"),            # invalid_parameter_value
    (ParseError, "42601"),              # syntax_error
    (CatalogError, "42P01"),            # undefined_table (or column)
    (NotSupportedError, "0A000"),       # feature_not_supported (UnsupportedQueryError)
    (ProgrammingError, "42000"),        # syntax_error_or_access_rule_violation
    (InterfaceError, "42000"),
    (InternalError, "XX000"),           # internal_error
    (Error, "XX000"),                   # ExecutionError and the rest
)
"""dpsql's error classes to SQLSTATEs, most specific first."""

INTERNAL = ("internal error in dpsql serve (it is logged on the server; please report it). "
            "Nothing was released")


FORMS = {"date": "write YYYY-MM-DD", "timestamp": "write YYYY-MM-DD HH:MM:SS",
         "time": "write HH:MM:SS", "numeric": "write a finite number the type can hold",
         "boolean": "write true or false"}
"""How a value of each type is written, for the message of a parameter that is not one."""


def literal_form(kind: str) -> str:
    """How to write a value of ``kind`` (a type's class, as :class:`InvalidLiteral` names)."""
    return FORMS.get(kind, f"pass a {kind} value")


def sqlstate(error: BaseException) -> str:
    """The SQLSTATE a client receives for ``error``: an invalid literal is PostgreSQL's
    22007 (invalid_datetime_format) for dates and times, 22P02 (invalid_text_representation)
    for the rest."""
    if isinstance(error, SessionError):
        return error.sqlstate
    if isinstance(error, InvalidLiteral):
        return "22007" if error.kind in ("date", "timestamp", "time") else "22P02"
    for cls, code in BY_ERROR:
        if isinstance(error, cls):
            return code
    return "XX000"


def message(error: BaseException) -> str:
    """What the client reads: dpsql's message on one line; a bug's text is never sent."""
    if isinstance(error, Error | SessionError):
        return " ".join(str(error).split())
    return INTERNAL
