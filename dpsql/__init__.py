"""dpsql: differentially private SQL on DuckDB.

>>> import dpsql
>>> con = dpsql.connect(budget=dpsql.Budget(epsilon=2.0, delta=1e-6))
>>> con.budget.remaining.epsilon
2.0
"""

from dpsql.accounting import Budget
from dpsql.connection import Connection, connect, default_connection, execute, register, sql
from dpsql.dbapi import Cursor, apilevel, paramstyle, threadsafety
from dpsql.errors import (
    BudgetExceededError,
    CatalogError,
    DatabaseError,
    DataError,
    Error,
    ExecutionError,
    IntegrityError,
    InterfaceError,
    InternalError,
    NotSupportedError,
    OperationalError,
    ParseError,
    PrivacyError,
    PrivacyWarning,
    ProgrammingError,
    UnsupportedQueryError,
)
from dpsql.explain import Explanation
from dpsql.result import Result

__version__ = "0.1.0"


def load_ipython_extension(ipython) -> None:
    """``%load_ext dpsql``: the ``%dpsql`` / ``%%dpsql`` magics (IPython imported lazily)."""
    from dpsql.magic import load_ipython_extension as load

    load(ipython)

Warning = PrivacyWarning

__all__ = [
    "Budget",
    "BudgetExceededError",
    "CatalogError",
    "Connection",
    "Cursor",
    "DataError",
    "DatabaseError",
    "Error",
    "ExecutionError",
    "Explanation",
    "IntegrityError",
    "InterfaceError",
    "InternalError",
    "NotSupportedError",
    "OperationalError",
    "ParseError",
    "PrivacyError",
    "PrivacyWarning",
    "ProgrammingError",
    "Result",
    "UnsupportedQueryError",
    "Warning",
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
