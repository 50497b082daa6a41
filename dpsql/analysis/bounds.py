"""Value bounds of row-level expressions by interval arithmetic.

Bounds come from the catalog (declared per column) and from clamps in the
query; where both apply, the intersection (the tighter) wins. The rewrite
clamps to the inferred interval, so the bound holds whatever the data holds.

>>> import sqlglot
>>> infer_interval(sqlglot.parse_one("LEAST(GREATEST(cost, 0), 100) * 2"), {"cost": (0.0, 1e3)})
Interval(lo=0.0, hi=200.0)
>>> infer_interval(sqlglot.parse_one("cost - 10"), {})
Interval(lo=-inf, hi=inf)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from sqlglot import exp

INF = math.inf


@dataclass(frozen=True)
class Interval:
    """A closed interval [lo, hi], possibly unbounded."""

    lo: float
    hi: float

    @property
    def finite(self) -> bool:
        return math.isfinite(self.lo) and math.isfinite(self.hi)

    def __add__(self, other: Interval) -> Interval:
        return Interval(self.lo + other.lo, self.hi + other.hi)

    def __neg__(self) -> Interval:
        return Interval(-self.hi, -self.lo)

    def __mul__(self, other: Interval) -> Interval:
        products = [_times(a, b) for a in (self.lo, self.hi) for b in (other.lo, other.hi)]
        return Interval(min(products), max(products))

    def hull(self, other: Interval) -> Interval:
        return Interval(min(self.lo, other.lo), max(self.hi, other.hi))


UNBOUNDED = Interval(-INF, INF)


def _times(a: float, b: float) -> float:
    """Product where 0 × ∞ = 0 (a zero factor pins the product)."""
    return 0.0 if a == 0 or b == 0 else a * b


def _number(node: exp.Literal) -> Interval:
    try:
        value = float(node.this)
    except ValueError:
        return UNBOUNDED
    return Interval(value, value)


def _least(items: list[Interval]) -> Interval:
    return Interval(min(i.lo for i in items), min(i.hi for i in items))


def _greatest(items: list[Interval]) -> Interval:
    return Interval(max(i.lo for i in items), max(i.hi for i in items))


def _abs(i: Interval) -> Interval:
    if i.lo >= 0:
        return i
    if i.hi <= 0:
        return -i
    return Interval(0.0, max(-i.lo, i.hi))


def _hull(items: list[Interval]) -> Interval:
    out = items[0]
    for item in items[1:]:
        out = out.hull(item)
    return out


def _args(node: exp.Expression) -> list[exp.Expression]:
    return [node.this, *node.expressions]


_RULES: dict[type[exp.Expression], Callable[[exp.Expression, Callable], Interval]] = {
    exp.Paren: lambda n, f: f(n.this),
    exp.Neg: lambda n, f: -f(n.this),
    exp.Add: lambda n, f: f(n.this) + f(n.expression),
    exp.Sub: lambda n, f: f(n.this) + -f(n.expression),
    exp.Mul: lambda n, f: f(n.this) * f(n.expression),
    exp.Least: lambda n, f: _least([f(a) for a in _args(n)]),
    exp.Greatest: lambda n, f: _greatest([f(a) for a in _args(n)]),
    exp.Abs: lambda n, f: _abs(f(n.this)),
    exp.Coalesce: lambda n, f: _hull([f(a) for a in _args(n)]),
}


def infer_interval(node: exp.Expression, bounds: Mapping[str, tuple[float, float]]) -> Interval:
    """The interval that ``node``'s value always lies in (ignoring NULL)."""

    def visit(n: exp.Expression) -> Interval:
        if isinstance(n, exp.Column):
            lo, hi = bounds.get(n.name.lower(), (-INF, INF))
            return Interval(lo, hi)
        if isinstance(n, exp.Literal):
            return _number(n) if not n.is_string else UNBOUNDED
        rule = _RULES.get(type(n))
        return rule(n, visit) if rule else UNBOUNDED

    result = visit(node)
    if math.isnan(result.lo) or math.isnan(result.hi):
        return UNBOUNDED
    return result
