"""The accountant: spends a Budget in memory, with exact arithmetic.

Spending is compared exactly: every ε and δ is taken as the decimal the user
wrote (``0.1`` is exactly 1/10, via its shortest repr), summed as Fractions and
compared with the total, so rounding can never let a query overdraw and three
queries at ε = 0.1 fit a budget of 0.3. Noise is calibrated with
:func:`float_at_most` of the charged value, never more than what is charged.
Basic composition: ε's and δ's add up.

>>> acct = Accountant(Budget(epsilon=1.0, delta=1e-6))
>>> _ = acct.charge(0.25, 0.0, query="q1")
>>> acct.spent, acct.remaining
(Cost(epsilon=0.25, delta=0.0), Cost(epsilon=0.75, delta=1e-06))
"""

from __future__ import annotations

import math
import threading
from fractions import Fraction

from dpsql.accounting.composition import MechanismEvent, laplace, zcdp
from dpsql.accounting.report import build_report, zcdp_epsilon
from dpsql.accounting.values import Budget, Charge, Cost, without_delta
from dpsql.errors import BudgetExceededError
from dpsql.exact import as_fraction, nearest_float


class Accountant:
    """Tracks spends against a Budget; ``charge`` is atomic check-and-record."""

    def __init__(self, total: Budget) -> None:
        self.total = total
        self._charges: list[Charge] = []
        self._epsilon = Fraction(0)
        self._delta = Fraction(0)
        self._lock = threading.Lock()

    @property
    def charges(self) -> tuple[Charge, ...]:
        return tuple(self._charges)

    def _sums(self) -> tuple[Fraction, Fraction]:
        return self._epsilon, self._delta

    @property
    def rho_spent(self) -> float:
        """Total ρ of the noise so far (zCDP composition: ρ's add up)."""
        value = zcdp(approximate_zcdp([e for c in self._charges for e in c.events]))
        return 0.0 if value is None else value

    def _check_rho(self, delta: float, events: tuple) -> None:
        new = zcdp(approximate_zcdp(events)) or 0.0
        _, dlt = self._sums()
        if not events:
            raise BudgetExceededError("query refused, nothing was spent: a zCDP budget needs "
                                      "the query's mechanisms")
        if self.rho_spent + new > self.total.rho or \
                dlt + as_fraction(delta) > as_fraction(self.total.delta):
            raise BudgetExceededError(
                f"query refused, nothing was spent: ρ {new:.4g} + spent {self.rho_spent:.4g} "
                f"exceeds the budget {self.total}. Ask for less epsilon, or a new budget")

    @property
    def spent(self) -> Cost:
        """Spent so far under the tightest valid privacy filter (basic or zCDP)."""
        eps, delta = self._sums()
        if self.total.rho is not None:
            return Cost(nearest_float(eps), nearest_float(delta))
        if delta <= as_fraction(self.total.delta) and not self._zcdp_wins(nearest_float(eps)):
            return Cost(nearest_float(eps), nearest_float(delta))
        return Cost(self._zcdp_spent(), self.total.delta)

    @property
    def basic_remaining(self) -> Cost:
        """What is left under basic composition, exactly (the durable ledger's measure, and
        cheap: no zCDP conversion); never more than ``remaining``."""
        if self.total.rho is not None:
            return self.remaining
        eps, delta = self._sums()
        return Cost(nearest_float(max(as_fraction(self.total.epsilon) - eps, Fraction(0))),
                    nearest_float(max(as_fraction(self.total.delta) - delta, Fraction(0))))

    @property
    def remaining(self) -> Cost:
        if self.total.rho is not None:
            return Cost(math.nan, float(as_fraction(self.total.delta) - self._sums()[1]))
        spent = self.spent
        return Cost(max(float(as_fraction(self.total.epsilon) - as_fraction(spent.epsilon)), 0.0),
                    max(float(as_fraction(self.total.delta) - as_fraction(spent.delta)), 0.0))

    def _zcdp_spent(self, extra: tuple = ()) -> float:
        events = [e for c in self._charges for e in c.events] + list(extra)
        if self.total.delta == 0 or not events or any(not c.events for c in self._charges):
            return math.inf
        spent = zcdp_epsilon(events, self.total.delta)
        return math.inf if spent is None else spent

    def _zcdp_wins(self, basic_epsilon: float) -> bool:
        return self.total.delta > 0 and bool(self._charges) and \
            self._zcdp_spent() < basic_epsilon

    def check(self, epsilon: float, delta: float, events: tuple = (), *,
              dataset: str = "") -> None:
        """Raise BudgetExceededError unless a valid filter (basic, or zCDP) still fits.

        ``dataset`` is accepted for interface parity with the durable Ledger, which
        also keeps per-dataset budgets.
        """
        if self.total.rho is not None:
            return self._check_rho(delta, events)
        eps, dlt = self._sums()
        left_eps = as_fraction(self.total.epsilon) - eps
        left_delta = as_fraction(self.total.delta) - dlt
        if as_fraction(epsilon) <= left_eps and as_fraction(delta) <= left_delta:
            return
        if events and self._zcdp_spent(events) <= self.total.epsilon:
            return
        over = []
        if as_fraction(epsilon) > left_eps:
            over.append(f"epsilon {epsilon:g} > remaining {float(left_eps):g}")
        if as_fraction(delta) > left_delta:
            over.append(f"delta {delta:g} > remaining {float(left_delta):g}")
        raise BudgetExceededError(
            "query refused, nothing was spent: " + "; ".join(over) +
            f" (total budget {self.total}, basic composition; zCDP does not fit either)"
            f"{without_delta(self.total) if delta > 0 else ''}. "
            "Ask for less epsilon/delta, or for a new budget")

    def charge(self, epsilon: float, delta: float, *, query: str, dataset: str = "",
               plan: str = "", mechanism: str = "", rho: float | None = None,
               events: tuple = ()) -> Charge:
        """Record a spend if it fits, atomically; raise BudgetExceededError otherwise."""
        with self._lock:
            self.check(epsilon, delta, events)
            charge = Charge(epsilon=epsilon, delta=delta, query=query, dataset=dataset,
                            plan=plan, mechanism=mechanism, rho=rho, events=events)
            self._charges.append(charge)
            self._epsilon += as_fraction(epsilon)
            self._delta += as_fraction(delta)
            return charge

    def report(self):
        """Spending under every composition method (see :mod:`dpsql.accounting.report`)."""
        events = [e for c in self._charges for e in c.events]
        costs = [(c.epsilon, c.delta) for c in self._charges]
        total = math.inf if self.total.epsilon is None else self.total.epsilon
        return build_report(events, costs, total, self.total.delta)

    def close(self) -> None:
        """Nothing to let go of: the spends live in memory (``BudgetKeeper.close``)."""

    def __repr__(self) -> str:
        return f"Accountant(total={self.total}, spent={self.spent}, remaining={self.remaining})"


def approximate_zcdp(events) -> list[MechanismEvent]:
    """The history as zCDP steps: an (ε, δ) step (a partition selection) is δ-approximately
    ε²/2-zCDP (Bun & Steinke 2016, Prop. 1.4 with its δ), so under a ρ budget it counts
    as a pure ε step, its δ charged beside (as the ledger counts it). A step of δ alone (a
    threshold on the query's own noisy count) adds no ρ.

    >>> from dpsql.accounting.composition import approx
    >>> [str(e) for e in approximate_zcdp([approx(0.5, 1e-6), approx(0.0, 1e-6)])]
    ['laplace(ε=0.5)']
    """
    return [laplace(e.epsilon) if e.kind == "approx" else e for e in events
            if e.kind != "approx" or e.epsilon > 0]
