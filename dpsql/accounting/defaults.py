"""What a budget has left, and the ε of a query that names none: a share of it.

A query given no ε spends ``DEFAULT_SHARE`` (one tenth) of the ε its budget has left,
rounded down to two significant digits, so the charged decimal is short and is the one
shown (docs/accounting.md, "The default ε"). Under a ρ-zCDP budget it is the ε at which a
pure ε-DP query costs that share of the ρ left (ρ = ε²/2; Bun & Steinke 2016, Prop. 1.4).
The share reads the ledger only — what the analyst has spent, which they know — never the
data, so choosing it reveals nothing.

>>> from dpsql.accounting import Accountant, Budget
>>> keeper = Accountant(Budget(epsilon=2, delta=1e-6))
>>> str(left(keeper)), default_epsilon(left(keeper))
('ε=2, δ=1e-06', 0.2)
>>> _ = keeper.charge(0.2, 0.0, query="q")
>>> default_epsilon(left(keeper))
0.18
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING

from dpsql.accounting.values import Left
from dpsql.exact import as_fraction

if TYPE_CHECKING:
    from dpsql.accounting import BudgetKeeper

DEFAULT_SHARE = Fraction(1, 10)
"""The share of what is left that a query without ε spends: a fresh budget lasts ten
such queries at a tenth each, then ever smaller ones."""
DIGITS = 2
"""Significant digits the default ε keeps, rounding down."""


def left(keeper: BudgetKeeper) -> Left:
    """What ``keeper``'s budget has left now: ε and δ by basic composition (exact, as the
    ledger adds them; zCDP may certify more, ``report()`` says), or ρ and δ for a ρ-zCDP
    budget."""
    total, remaining = keeper.total, keeper.basic_remaining
    if total.rho is None:
        return Left(remaining.epsilon, remaining.delta)
    return Left(None, remaining.delta, rho=max(total.rho - keeper.rho_spent, 0.0))


def default_epsilon(what: Left) -> float:
    """The ε of a query that names none: ``DEFAULT_SHARE`` of what is left (0.0: nothing).

    >>> default_epsilon(Left(0.6, 0.0)), default_epsilon(Left(None, 0.0, rho=0.05))
    (0.06, 0.1)
    """
    if what.rho is None:
        return round_down(as_fraction(what.epsilon) * DEFAULT_SHARE)
    return sqrt_down(2 * as_fraction(what.rho) * DEFAULT_SHARE)


def round_down(value: Fraction) -> float:
    """``value`` rounded down to ``DIGITS`` significant digits, as a float whose shortest
    decimal is that rounding (0.0 for zero or less).

    >>> round_down(Fraction(729, 10000)), round_down(Fraction(1, 3)), round_down(Fraction(0))
    (0.072, 0.33, 0.0)
    """
    if value <= 0:
        return 0.0
    step = _step(value)
    return float((value // step) * step)


def sqrt_down(value: Fraction) -> float:
    """The largest decimal of ``DIGITS`` significant digits whose square is not above
    ``value``, exactly (the float square root only finds the magnitude).

    >>> sqrt_down(Fraction(1, 100)), sqrt_down(Fraction(2)), sqrt_down(Fraction(0))
    (0.1, 1.4, 0.0)
    """
    magnitude = round_down(Fraction(math.sqrt(value)))
    if magnitude == 0:
        return 0.0
    step = _step(Fraction(magnitude))
    return round_down(math.isqrt(math.floor(value / step**2)) * step)


def _step(value: Fraction) -> Fraction:
    """The unit of the last of ``DIGITS`` significant digits of ``value`` (> 0)."""
    scale = Fraction(1)
    while value >= scale * 10:
        scale *= 10
    while value < scale:
        scale /= 10
    return scale / 10 ** (DIGITS - 1)
