"""Privacy budgets and their spending (basic composition for now)."""

from dpsql.accounting.budget import Accountant, Budget, Charge, Cost

__all__ = ["Accountant", "Budget", "Charge", "Cost"]
