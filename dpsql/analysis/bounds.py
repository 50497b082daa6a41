"""Value bounds of row-level expressions by interval arithmetic.

Bounds come from the catalog (declared per column) and from clamps in the
query; where both apply, the intersection (the tighter) wins. The rewrite
clamps to the inferred interval, so the bound holds whatever the data holds.

>>> import sqlglot
>>> infer_interval(sqlglot.parse_one("LEAST(GREATEST(cost, 0), 100) * 2"), {"cost": (0.0, 1e3)})
Interval(lo=0.0, hi=200.0)
>>> infer_interval(sqlglot.parse_one("cost - 10"), {})
Interval(lo=-inf, hi=inf)
>>> infer_interval(sqlglot.parse_one("CASE WHEN age > 65 THEN cost / 2 ELSE 0 END"),
...                {"cost": (0.0, 1e3)})
Interval(lo=0.0, hi=500.0)

CASE, IF, COALESCE and NULLIF take the hull of the values they may return (a NULL
branch adds nothing: NULL rows are not summed); division needs a divisor interval that
excludes 0 (a zero divisor gives NULL, see ``dpsql.rewrite.expressions.total``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from sqlglot import exp

from dpsql.expr.functions import part_interval

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


def _branches(items: list[exp.Expression | None], visit: Callable) -> Interval:
    """Hull of the values a CASE/IF may return; NULL branches return no value."""
    values = [visit(i) for i in items if i is not None and not isinstance(i, exp.Null)]
    return _hull(values) if values else UNBOUNDED


def _case(node: exp.Case, visit: Callable) -> Interval:
    return _branches([b.args.get("true") for b in node.args.get("ifs") or []]
                     + [node.args.get("default")], visit)


def _divide(x: Interval, y: Interval) -> Interval:
    """x / y for y bounded away from 0 (both signs of y excluded zero)."""
    if y.lo <= 0 <= y.hi:
        return UNBOUNDED
    return x * Interval(1 / y.hi, 1 / y.lo)


def _modulo(x: Interval, y: Interval) -> Interval:
    """x % y takes the sign of x and is smaller than |y| and than |x|."""
    m = max(abs(y.lo), abs(y.hi))
    return Interval(max(min(0.0, x.lo), -m), min(max(0.0, x.hi), m))


def _floor(i: Interval) -> Interval:
    return Interval(float(math.floor(i.lo)) if math.isfinite(i.lo) else i.lo,
                    float(math.floor(i.hi)) if math.isfinite(i.hi) else i.hi)


def _ceil(i: Interval) -> Interval:
    return Interval(float(math.ceil(i.lo)) if math.isfinite(i.lo) else i.lo,
                    float(math.ceil(i.hi)) if math.isfinite(i.hi) else i.hi)


def _round(node: exp.Round, visit: Callable) -> Interval:
    """Rounding to a step s = 10^-n lands on the grid points around [lo, hi]."""
    decimals = node.args.get("decimals")
    digits = -float(decimals.this.this) if isinstance(decimals, exp.Neg) else (
        float(decimals.this) if decimals is not None else 0.0)
    step = 10.0 ** -digits
    i = visit(node.this)
    grid = Interval(i.lo / step, i.hi / step)
    return Interval(_floor(grid).lo * step, _ceil(grid).hi * step)


def _cast(node: exp.Cast, visit: Callable) -> Interval:
    """A numeric cast keeps the range; to a type other than DOUBLE it may round."""
    if not node.to.is_type(*exp.DataType.NUMERIC_TYPES):
        return UNBOUNDED
    if isinstance(node.this, exp.Literal) and node.this.is_string:
        return _number(node.this)
    inner = visit(node.this)
    return inner if node.to.is_type(exp.DataType.Type.DOUBLE) else Interval(
        _floor(inner).lo, _ceil(inner).hi)


_RULES: dict[type[exp.Expression], Callable[[exp.Expression, Callable], Interval]] = {
    exp.Paren: lambda n, f: f(n.this),
    exp.Neg: lambda n, f: -f(n.this),
    exp.Add: lambda n, f: f(n.this) + f(n.expression),
    exp.Sub: lambda n, f: f(n.this) + -f(n.expression),
    exp.Mul: lambda n, f: f(n.this) * f(n.expression),
    exp.Least: lambda n, f: _least([f(a) for a in _args(n)]),
    exp.Greatest: lambda n, f: _greatest([f(a) for a in _args(n)]),
    exp.Abs: lambda n, f: _abs(f(n.this)),
    exp.Coalesce: lambda n, f: _branches(_args(n), f),
    exp.Nullif: lambda n, f: f(n.this),
    exp.Case: _case,
    exp.If: lambda n, f: _branches([n.args.get("true"), n.args.get("false")], f),
    exp.Div: lambda n, f: _divide(f(n.this), f(n.expression)),
    exp.IntDiv: lambda n, f: _floor(_divide(f(n.this), f(n.expression))),
    exp.Mod: lambda n, f: _modulo(f(n.this), f(n.expression)),
    exp.Round: _round,
    exp.Floor: lambda n, f: _floor(f(n.this)),
    exp.Ceil: lambda n, f: _ceil(f(n.this)),
    exp.Sign: lambda n, f: Interval(-1.0, 1.0),
    exp.Cast: _cast,
    exp.TryCast: _cast,
    exp.Length: lambda n, f: Interval(0.0, INF),
    exp.StrPosition: lambda n, f: Interval(0.0, INF),
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
        if rule is None:
            part = part_interval(n)
            return Interval(*part) if part is not None else UNBOUNDED
        return rule(n, visit)

    result = visit(node)
    if math.isnan(result.lo) or math.isnan(result.hi):
        return UNBOUNDED
    return result
