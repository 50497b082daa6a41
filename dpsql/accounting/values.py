"""Privacy amounts as values: a total Budget, a Cost, a recorded Charge.

Plain frozen values that every part of dpsql passes around; the accountant (in memory)
and the ledger (on disk) keep them, behind one protocol (``dpsql.accounting.BudgetKeeper``).

>>> Budget(epsilon=1, delta=1e-6), Cost(0.5, 0.0)
(Budget(epsilon=1.0, delta=1e-06, rho=None), Cost(epsilon=0.5, delta=0.0))
"""

from __future__ import annotations

import math
import reprlib
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal, localcontext
from fractions import Fraction

from dpsql.errors import PrivacyError
from dpsql.exact import as_fraction, nearest_float, real_number


def _check(name: str, value: object, *, upper: float = math.inf, zero_ok: bool = False) -> float:
    """``value`` as a float if it is a number in range (see :func:`real_number`)."""
    bound = f"0 <= {name} < {upper:g}" if zero_ok else f"0 < {name} < {upper:g}"
    number = real_number(name, value, f"Fix: need a finite number with {bound}")
    low_ok = number >= 0 if zero_ok else number > 0
    if not low_ok or number >= upper or math.isinf(number):
        raise PrivacyError(f"{name}={reprlib.repr(value)} is out of range: need {bound}")
    return number


@dataclass(frozen=True)
class Budget:
    """A total privacy budget: pure ε (δ = 0), (ε, δ), or ρ-zCDP.

    A ρ-zCDP budget (``Budget(rho=0.5)``) limits the sum of the queries' ρ (a
    Gaussian with noise multiplier m costs 1/(2m²), a pure ε-DP query ε²/2) and,
    separately, the δ that partition selection spends.

    >>> Budget(epsilon=0.0)
    Traceback (most recent call last):
    ...
    dpsql.errors.PrivacyError: epsilon=0.0 is out of range: need 0 < epsilon < inf
    >>> str(Budget(rho=0.5, delta=1e-6))
    'ρ=0.5, δ=1e-06'
    """

    epsilon: float | None = None
    delta: float = 0.0
    rho: float | None = None

    def __post_init__(self) -> None:
        if (self.epsilon is None) == (self.rho is None):
            raise PrivacyError("give a budget as epsilon=... (with optional delta=...) or as "
                               "rho=... for zCDP, not both and not neither")
        # Stored as floats: ints, numpy numbers, Fractions and Decimals are accepted.
        if self.epsilon is not None:
            object.__setattr__(self, "epsilon", _check("epsilon", self.epsilon))
        if self.rho is not None:
            object.__setattr__(self, "rho", _check("rho", self.rho))
        object.__setattr__(self, "delta", _check("delta", self.delta, upper=1.0, zero_ok=True))

    def __str__(self) -> str:
        head = f"ε={self.epsilon:g}" if self.rho is None else f"ρ={self.rho:g}"
        return f"{head}, δ={self.delta:g}"


def decimal_text(value: float) -> str:
    """``value`` as the decimal the accountant charges for it (``dpsql.exact.as_fraction``):
    the shortest text that reads back as the float, so a shown cost is the charged one.

    >>> decimal_text(0.1), decimal_text(2.0), decimal_text(1e-06), decimal_text(0.1234567)
    ('0.1', '2', '1e-06', '0.1234567')
    """
    text = repr(float(value))
    return text.removesuffix(".0")


def without_delta(total: Budget) -> str:
    """What a refusal for want of δ adds when the budget itself holds none ("" otherwise):
    ``Budget(epsilon=...)`` alone is pure ε-DP, and no query on it can spend δ.

    >>> without_delta(Budget(epsilon=2)).split(": ")[-1], without_delta(Budget(1, 1e-6))
    ('give it one, e.g. dpsql.Budget(epsilon=2, delta=1e-6)', '')
    """
    if total.delta > 0:
        return ""
    head = f"epsilon={decimal_text(total.epsilon)}" if total.rho is None else \
        f"rho={decimal_text(total.rho)}"
    return (f"; the budget {total} holds no δ (a budget of ε alone is pure ε-DP), so "
            f"no query can spend δ: give it one, e.g. dpsql.Budget({head}, delta=1e-6)")


@dataclass(frozen=True)
class Cost:
    """An amount of (ε, δ): what a query spends, or what is spent or left. Shown as the
    exact decimals charged (``decimal_text``); a sum of charges (``total``) keeps its exact
    value too, shown when the nearest floats would round it."""

    epsilon: float
    delta: float
    exact: tuple[Fraction, Fraction] | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        epsilon, delta = self.exact or (as_fraction(self.epsilon), as_fraction(self.delta))
        return f"ε={_exact_text(epsilon)}, δ={_exact_text(delta)}"


def total(costs: Iterable[Cost]) -> Cost:
    """What several charges spent together, added as the decimals charged (as the ledger
    adds them), so that the total shown is the total charged: 0.1 + 0.2 is 0.3 here.

    >>> str(total([Cost(0.1, 0.0), Cost(0.2, 1e-07)])), str(total([]))
    ('ε=0.3, δ=1e-07', 'ε=0, δ=0')
    """
    costs = list(costs)
    epsilon = sum((as_fraction(cost.epsilon) for cost in costs), Fraction(0))
    delta = sum((as_fraction(cost.delta) for cost in costs), Fraction(0))
    return Cost(nearest_float(epsilon), nearest_float(delta), exact=(epsilon, delta))


def _exact_text(value: Fraction) -> str:
    """A sum of charged decimals, exactly: as ``decimal_text`` gives it where that is the
    same number, else every digit (sums of decimals are decimals).

    >>> _exact_text(Fraction(3, 10)), _exact_text(Fraction(29999999999999998, 10**17))
    ('0.3', '0.29999999999999998')
    """
    nearest = nearest_float(value)
    if as_fraction(nearest) == value:
        return decimal_text(nearest)
    with localcontext() as context:  # room for every digit: a decimal's digits end
        context.prec = len(str(value.numerator)) + 4 * len(str(value.denominator))
        digits = Decimal(value.numerator) / Decimal(value.denominator)
    return format(digits.normalize(), "f")


@dataclass(frozen=True)
class Left:
    """What a budget has left: ε and δ, or ρ and δ under a ρ-zCDP budget (ε is then None).

    >>> str(Left(0.9, 1e-06)), str(Left(None, 1e-06, rho=0.25))
    ('ε=0.9, δ=1e-06', 'ρ=0.25, δ=1e-06')
    """

    epsilon: float | None
    delta: float
    rho: float | None = None

    def __str__(self) -> str:
        head = f"ε={decimal_text(self.epsilon)}" if self.rho is None else \
            f"ρ={decimal_text(self.rho)}"
        return f"{head}, δ={decimal_text(self.delta)}"


DATASETS_SEPARATOR = "+"
"""A query that reads several private tables (a join on the privacy unit) is charged once,
with ``dataset = "a+b"``, and counts against the budget of each of a and b (the ledger's
dataset budgets)."""


@dataclass(frozen=True)
class Charge:
    """One recorded spend, with what was released (for reports and the audit log)."""

    epsilon: float
    delta: float
    query: str
    dataset: str = ""
    plan: str = ""
    mechanism: str = ""
    rho: float | None = None
    events: tuple = ()
    at: float = field(default_factory=time.time)
