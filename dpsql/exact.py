"""Exact arithmetic for privacy parameters: decimals as written, floats never above them.

Two readings of a float, kept apart on purpose. A value the *user* wrote (ε = 0.1) stands for
the decimal they typed: :func:`as_fraction` reads it back exactly (1/10). A value dpsql
*computed* (a share of ε, a noise scale) is its binary value, ``Fraction(x)``: that is what
the mechanism uses. Budgets are charged in the first reading; calibration must never exceed
them in the second, which :func:`float_at_most` guarantees. A share of a budget that becomes
a part's own budget (a grouping set's, a composed statement's part) is read both ways: as the
binary value its mechanisms are calibrated below, and as the decimal the part's own cost check
and the statement's sum read (:func:`share_at_most`, :func:`total_at_least`).
"""

from __future__ import annotations

import math
import numbers
import reprlib
import sys
from decimal import Decimal
from fractions import Fraction

from dpsql.errors import PrivacyError


def as_fraction(value: float) -> Fraction:
    """The decimal a float was written as, exactly: as_fraction(0.1) == Fraction(1, 10).

    >>> as_fraction(0.1)
    Fraction(1, 10)
    """
    return Fraction(repr(float(value)))


def float_at_most(value: float | Fraction) -> float:
    """The largest float not above the exact (decimal) value: safe to calibrate noise with.

    >>> float_at_most(0.1) < 0.1 <= float_at_most(0.5) == 0.5
    True
    """
    exact = as_fraction(value) if isinstance(value, float) else Fraction(value)
    nearest = float(exact)
    return nearest if Fraction(nearest) <= exact else math.nextafter(nearest, -math.inf)


def float_at_least(value: Fraction) -> float:
    """The smallest float not below the exact value (+inf beyond the largest float).

    >>> float_at_least(Fraction(1, 3)) > 1 / 3, float_at_least(Fraction(10**400))
    (True, inf)
    """
    nearest = nearest_float(value)
    if nearest == -math.inf:
        return -sys.float_info.max
    if nearest == math.inf or Fraction(nearest) >= value:
        return nearest
    return math.nextafter(nearest, math.inf)


def share_at_most(value: Fraction) -> float:
    """The largest float not above the exact value in either reading, binary or decimal.

    >>> share_at_most(Fraction(1, 3)), share_at_most(Fraction(1, 10))
    (0.3333333333333333, 0.09999999999999999)
    """
    share = float_at_most(value)
    while as_fraction(share) > value:
        share = math.nextafter(share, -math.inf)
    return share


def total_at_least(value: Fraction) -> float:
    """The smallest float not below the exact value in either reading, binary or decimal:
    ``float_at_least`` can give a float whose shortest decimal lies below the value.

    >>> total_at_least(Fraction("0.250000001")), float_at_least(Fraction("0.10000000000000000001"))
    (0.250000001, 0.1)
    >>> total_at_least(Fraction("0.10000000000000000001"))
    0.10000000000000002
    """
    total = float_at_least(value)
    while as_fraction(total) < value:
        total = math.nextafter(total, math.inf)
    return total


def sqrt_at_least(value: Fraction) -> float:
    """The smallest float whose square is not below the exact value: √ rounded up.

    >>> sqrt_at_least(Fraction(2)), sqrt_at_least(Fraction(4)), sqrt_at_least(Fraction(10**999))
    (1.4142135623730951, 2.0, inf)
    """
    root = math.sqrt(float_at_least(value))
    if math.isinf(root) or Fraction(root) ** 2 >= value:
        return root
    return math.nextafter(root, math.inf)


def nearest_float(value: Fraction) -> float:
    """float(value), but ±inf instead of an OverflowError beyond the largest float.

    >>> nearest_float(Fraction(3, 10)), nearest_float(Fraction(-10**400))
    (0.3, -inf)
    """
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def real_number(name: str, value: object, fix: str) -> float:
    """``value`` as a float if it is a real number: int, float, a numpy number, Fraction or
    Decimal; never a bool, a string, None or NaN. ±inf pass (callers check the range).

    Numbers too large for a float become inf. ``fix`` ends the error message.

    >>> real_number("epsilon", Fraction(1, 4), ""), real_number("epsilon", Decimal("0.5"), "")
    (0.25, 0.5)
    >>> real_number("epsilon", True, "Fix: pass epsilon=1.0")
    Traceback (most recent call last):
    ...
    dpsql.errors.PrivacyError: epsilon=True is not a number (a bool, string or None is not \
accepted). Fix: pass epsilon=1.0
    """
    is_bool = isinstance(value, bool) or type(value).__name__ == "bool_"  # numpy's bool
    if is_bool or not isinstance(value, numbers.Real | Decimal):
        raise PrivacyError(f"{name}={reprlib.repr(value)} is not a number (a bool, string or "
                           f"None is not accepted). {fix}")
    try:
        number = float(value)
    except OverflowError:
        number = math.inf if value > 0 else -math.inf
    except ValueError:  # Decimal("sNaN")
        number = math.nan
    if math.isnan(number):
        raise PrivacyError(f"{name}={reprlib.repr(value)} is not a number (NaN). {fix}")
    return number
