"""dpsql: differentially private SQL on DuckDB.

>>> import dpsql
>>> con = dpsql.connect(budget=dpsql.Budget(epsilon=2.0, delta=1e-6))
>>> con.budget.remaining.epsilon
2.0

Public names are imported on first use (PEP 562), so ``import dpsql`` and
``dpsql --help`` do not load DuckDB, sqlglot, SciPy or Arrow until a name needs them.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from typing import Any

    from dpsql.accounting import Budget
    from dpsql.catalog import WorkLimits
    from dpsql.connection import (
        Connection,
        connect,
        default_connection,
        execute,
        register,
        sql,
    )
    from dpsql.dbapi import Cursor, apilevel, paramstyle, threadsafety
    from dpsql.errors import (
        BoundsNeeded,
        BudgetExceededError,
        CatalogError,
        DatabaseError,
        DataError,
        DeltaNeeded,
        Error,
        ExecutionError,
        IntegrityError,
        InterfaceError,
        InternalError,
        InvalidLiteral,
        NotSupportedError,
        OperationalError,
        ParseError,
        PrivacyError,
        PrivacyWarning,
        ProgrammingError,
        QueryCancelled,
        RoleError,
        UnsupportedQueryError,
    )
    from dpsql.errors import PrivacyWarning as Warning
    from dpsql.explain import Explanation
    from dpsql.result import Result

__version__ = "0.1.0"

_ERRORS = ("BoundsNeeded", "BudgetExceededError", "CatalogError", "DataError",
           "DatabaseError", "DeltaNeeded", "Error", "ExecutionError", "IntegrityError",
           "InterfaceError", "InternalError", "InvalidLiteral", "NotSupportedError",
           "OperationalError", "ParseError", "PrivacyError", "PrivacyWarning",
           "ProgrammingError", "QueryCancelled", "RoleError", "UnsupportedQueryError")
_HOMES: dict[str, tuple[str, str]] = {
    "Budget": ("dpsql.accounting", "Budget"),
    **{name: ("dpsql.connection", name) for name in (
        "Connection", "connect", "default_connection", "execute", "register", "sql")},
    **{name: ("dpsql.dbapi", name) for name in (
        "Cursor", "apilevel", "paramstyle", "threadsafety")},
    **{name: ("dpsql.errors", name) for name in _ERRORS},
    "Warning": ("dpsql.errors", "PrivacyWarning"),
    "Explanation": ("dpsql.explain", "Explanation"),
    "Result": ("dpsql.result", "Result"),
    "WorkLimits": ("dpsql.catalog", "WorkLimits"),
}
"""Where each public name lives: (module, attribute)."""


def __getattr__(name: str) -> Any:
    """Import a public name's module on first access, then keep the name here."""
    try:
        module, attribute = _HOMES[name]
    except KeyError:
        raise AttributeError(f"module 'dpsql' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES})


def load_ipython_extension(ipython) -> None:
    """``%load_ext dpsql``: the ``%dpsql`` / ``%%dpsql`` magics (IPython imported lazily)."""
    from dpsql.frontends.magic import load_ipython_extension as load

    load(ipython)


__all__ = [
    "BoundsNeeded",
    "Budget",
    "BudgetExceededError",
    "CatalogError",
    "Connection",
    "Cursor",
    "DataError",
    "DatabaseError",
    "DeltaNeeded",
    "Error",
    "ExecutionError",
    "Explanation",
    "IntegrityError",
    "InterfaceError",
    "InternalError",
    "InvalidLiteral",
    "NotSupportedError",
    "OperationalError",
    "ParseError",
    "PrivacyError",
    "PrivacyWarning",
    "ProgrammingError",
    "QueryCancelled",
    "Result",
    "RoleError",
    "UnsupportedQueryError",
    "Warning",
    "WorkLimits",
    "__version__",
    "apilevel",
    "connect",
    "default_connection",
    "execute",
    "paramstyle",
    "register",
    "sql",
    "threadsafety",
]
