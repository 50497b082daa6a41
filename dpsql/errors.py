"""The error hierarchy: one root, one subclass per pipeline stage.

Every message names the offending SQL fragment (when there is one), says what
is allowed, and how to fix it.

>>> import dpsql
>>> issubclass(dpsql.BudgetExceededError, dpsql.PrivacyError)
True
"""

from __future__ import annotations


class Error(Exception):
    """Root of every error dpsql raises on purpose."""


class ParseError(Error):
    """The SQL text could not be parsed, or holds more than one statement."""


class UnsupportedQueryError(Error):
    """The query is valid SQL but dpsql cannot prove it private."""


class CatalogError(Error):
    """A table, column or registration option is unknown or inconsistent."""


class PrivacyError(Error):
    """Privacy parameters are invalid or cannot be met."""


class BudgetExceededError(PrivacyError):
    """Running the query would spend more than the remaining budget."""


class ExecutionError(Error):
    """The backend failed while running a rewritten query."""


class InternalError(Error):
    """A bug in dpsql: an invariant that should always hold did not."""


class PrivacyWarning(UserWarning):
    """A query is allowed but its parameters are unwise (e.g. δ not well below 1/n)."""
