"""Privacy budgets and their spending (basic composition for now)."""

from dpsql.accounting.budget import Accountant, Budget, Charge, Cost, as_fraction, float_at_most

__all__ = ["Accountant", "Budget", "Charge", "Cost", "as_fraction", "float_at_most"]
