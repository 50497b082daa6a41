"""Exact arithmetic for privacy parameters: decimals as written, floats never above them."""

from __future__ import annotations

import math
from fractions import Fraction


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
