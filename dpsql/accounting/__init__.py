"""Privacy budgets and their spending.

Values (``values``: Budget, Cost, Charge) apart from what keeps them: the in-memory
``Accountant`` and the durable ``Ledger`` (``ledger``), which share one protocol,
``BudgetKeeper``; composition methods (``composition``, ``pld``, ``gdp``) and the report
that compares them (``report``) sit between.
"""

from __future__ import annotations

from typing import Any, Protocol

from dpsql.accounting.accountant import Accountant
from dpsql.accounting.values import Budget, Charge, Cost


class BudgetKeeper(Protocol):
    """What the connection needs of a budget's keeper (Accountant, Ledger)."""

    @property
    def total(self) -> Budget: ...

    @property
    def spent(self) -> Cost: ...

    @property
    def remaining(self) -> Cost: ...

    @property
    def rho_spent(self) -> float: ...

    @property
    def basic_remaining(self) -> Cost:
        """What is left under basic composition, exactly, without a zCDP conversion."""

    @property
    def charges(self) -> tuple[Any, ...]: ...

    def check(self, epsilon: float, delta: float, events: tuple = (), *,
              dataset: str = "") -> None:
        """Raise BudgetExceededError unless the spend fits (nothing is recorded)."""

    def charge(self, epsilon: float, delta: float, *, query: str, dataset: str = "",
               plan: str = "", mechanism: str = "", rho: float | None = None,
               events: tuple = ()) -> Any:
        """Check and record a spend atomically (durably, for the ledger)."""

    def report(self) -> Any:
        """Spending under every composition method."""

    def close(self) -> None:
        """Let go of what keeps the spends (the ledger's file); the spends stay spent."""


__all__ = ["Accountant", "Budget", "BudgetKeeper", "Charge", "Cost"]
