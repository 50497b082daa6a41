"""The error hierarchy: one root, one subclass per pipeline stage, fitted into PEP 249's.

Every message names the offending SQL fragment (when there is one), says what
is allowed, and how to fix it. The PEP 249 classes (``DatabaseError``,
``ProgrammingError``, ...) are the ones DB-API code catches; dpsql's stage
errors are subclasses of them.

>>> import dpsql
>>> issubclass(dpsql.BudgetExceededError, dpsql.PrivacyError)
True
>>> issubclass(dpsql.UnsupportedQueryError, dpsql.NotSupportedError)
True
"""

from __future__ import annotations


class Error(Exception):
    """Root of every error dpsql raises on purpose (PEP 249 ``Error``).

    In IPython and Jupyter (a cell, ``%sql``, ``%%dpsql``) it shows as its one line, class
    and message, without a traceback through dpsql: the message says what to change.
    ``InternalError``, a bug, keeps its traceback.

    >>> UnsupportedQueryError("SELECT: `pid` is not supported")._render_traceback_()
    ['UnsupportedQueryError: SELECT: `pid` is not supported']
    """

    def _render_traceback_(self) -> list[str]:
        """IPython's hook for how an exception is shown (instead of its traceback)."""
        return [f"{type(self).__name__}: {self}"]


class InterfaceError(Error):
    """The DB-API interface was misused (e.g. a closed cursor, wrong parameter count)."""


class MissingDependencyError(InterfaceError, ImportError):
    """An optional package a feature needs is not installed (the message says which)."""


class DatabaseError(Error):
    """PEP 249: an error about the database or the query."""


class ProgrammingError(DatabaseError):
    """PEP 249: the query or its names are wrong."""


class NotSupportedError(DatabaseError):
    """PEP 249: valid SQL that is not supported."""


class OperationalError(DatabaseError):
    """PEP 249: the engine failed while running a query."""


class DataError(DatabaseError):
    """PEP 249: a value could not be processed (dpsql refuses such queries up front)."""


class IntegrityError(DatabaseError):
    """PEP 249: relational integrity (dpsql never writes, so never raised)."""


class ParseError(ProgrammingError):
    """The SQL text could not be parsed, or holds more than one statement."""


class UnsupportedQueryError(NotSupportedError):
    """The query is valid SQL but dpsql cannot prove it private."""


class InvalidLiteral(UnsupportedQueryError):
    """A literal that is not a value of the type it meets (``d = '2020-02-30'``), refused
    before any data is read. ``text``: the literal as written; ``kind``: the type it is not
    a value of (``date``, ``timestamp``, ``time``, ``numeric``, ``boolean``). A server maps
    it to SQLSTATE class 22 and names the parameter it came from, if any."""

    def __init__(self, message: str, text: str, kind: str):
        super().__init__(message)
        self.text, self.kind = text, kind


class BoundsNeeded(UnsupportedQueryError):
    """The query needs bounds of columns declared ``bounds="auto"`` that are not estimated
    yet. ``Connection.sql`` estimates them (a private release) and compiles again;
    ``explain()`` and ``compile()`` raise it.

    ``columns``: (table, column) pairs; ``limits``: (table, limit) pairs of contribution
    limits declared ``"auto"``; ``epsilon`` and ``delta``: the query's own. What the
    estimates serve, for choosing them for the answer (``dpsql.owner.estimate_first``):
    ``served``, (table, column, "sum" or "avg") for each way the query's aggregates use a
    column whose bounds are estimated with a limit; ``groups``, how many groups its public
    keys make (1 without); ``shares``, how many noisy columns its ε is split over.
    """

    def __init__(self, message: str, columns: tuple[tuple[str, str], ...], epsilon: float,
                 delta: float, limits: tuple[tuple[str, str], ...] = (), *,
                 served: tuple[tuple[str, str, str], ...] = (), groups: int = 1,
                 shares: int = 1):
        super().__init__(message)
        self.columns, self.epsilon, self.delta = columns, epsilon, delta
        self.limits, self.served, self.groups, self.shares = limits, served, groups, shares


class CatalogError(ProgrammingError):
    """A table, column or registration option is unknown or inconsistent."""


class PrivacyError(DatabaseError):
    """Privacy parameters are invalid or cannot be met."""


class RoleError(PrivacyError):
    """The connection's role does not allow this (an analyst asked for an owner tool)."""


class BudgetExceededError(PrivacyError):
    """Running the query would spend more than the remaining budget."""


class DeltaNeeded(PrivacyError):
    """The query needs δ > 0 (it releases private group keys) and was given none. A
    connection whose budget holds no δ adds how to give it one (``Connection.compile``)."""


class ExecutionError(OperationalError):
    """The backend failed while running a rewritten query.

    ``charged`` is what the query was charged (a ``Cost``), or None if it stopped before
    the engine read any data: a query is charged before its engine starts, and nothing
    that happens later gives its cost back (``dpsql.statements``).
    """

    def __init__(self, *args: object, charged: object = None) -> None:
        super().__init__(*args)
        self.charged = charged


class QueryCancelled(ExecutionError):
    """The query was cancelled (Ctrl-C, a client's cancel request, a statement timeout)
    before it finished.

    Free only if the cancel landed before the engine started reading data; after, when it
    stops tells how long it ran, which may depend on the data, so its full cost stays
    charged (``charged``).
    """


class InternalError(DatabaseError):
    """A bug in dpsql: an invariant that should always hold did not (PEP 249 InternalError)."""

    def _render_traceback_(self) -> list[str]:
        """A bug is shown with its whole traceback, to report."""
        import traceback

        return "".join(traceback.format_exception(type(self), self,
                                                  self.__traceback__)).splitlines()


class PrivacyWarning(UserWarning):
    """A query is allowed but its parameters are unwise (e.g. δ not well below 1/n)."""
