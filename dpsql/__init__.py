"""dpsql: differentially private SQL on DuckDB.

>>> import dpsql
>>> con = dpsql.connect(budget=dpsql.Budget(epsilon=2.0, delta=1e-6))
>>> con.budget.remaining.epsilon
2.0
"""

from dpsql.accounting import Budget
from dpsql.connection import Connection, connect
from dpsql.errors import (
    BudgetExceededError,
    CatalogError,
    Error,
    ExecutionError,
    InternalError,
    ParseError,
    PrivacyError,
    PrivacyWarning,
    UnsupportedQueryError,
)
from dpsql.explain import Explanation
from dpsql.result import Result

__version__ = "0.1.0"

__all__ = [
    "Budget",
    "BudgetExceededError",
    "CatalogError",
    "Connection",
    "Error",
    "ExecutionError",
    "Explanation",
    "InternalError",
    "ParseError",
    "PrivacyError",
    "PrivacyWarning",
    "Result",
    "UnsupportedQueryError",
    "__version__",
    "connect",
]
