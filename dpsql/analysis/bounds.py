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
excludes 0 (a zero divisor gives NULL, see ``dpsql.expr.totality``).

Conditions narrow ranges: a row that passes ``WHERE x BETWEEN 0 AND 100`` has x in
[0, 100] (``refine``), and so does x in the arm of ``CASE WHEN x > 0 AND x < 100 THEN x
...``. Only what a TRUE condition proves is used: comparisons of a column with a number,
BETWEEN and IN lists, joined by AND. An inferred bound is never trusted blindly: the
rewrite clamps every aggregated value to it, so a wrong inference could only bias.

>>> infer_interval(sqlglot.parse_one("CASE WHEN x BETWEEN 0 AND 10 THEN x ELSE -1 END"), {})
Interval(lo=-1.0, hi=10.0)
>>> refine({}, sqlglot.parse_one("x >= 1 AND x < 5 AND y IN (2, 3) AND z > 0"))
{'x': (1.0, 5.0), 'y': (2.0, 3.0), 'z': (0.0, inf)}
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
        if isinstance(n, exp.Case | exp.If):
            return _hull_or_unbounded([infer_interval(value, refine(bounds, condition))
                                       for condition, value in _arms(n)])
        rule = _RULES.get(type(n))
        if rule is None:
            part = part_interval(n)
            return Interval(*part) if part is not None else UNBOUNDED
        return rule(n, visit)

    result = visit(node)
    if math.isnan(result.lo) or math.isnan(result.hi):
        return UNBOUNDED
    return result


def _arms(node: exp.Case | exp.If) -> list[tuple[exp.Expression | None, exp.Expression]]:
    """(condition that holds in the arm, value) of each arm that can give a value.

    The ELSE arm (and a simple ``CASE x WHEN ...``) proves nothing. A NULL arm gives no
    value: NULL rows are not aggregated.
    """
    if isinstance(node, exp.If):
        pairs = [(node.this, node.args.get("true")), (None, node.args.get("false"))]
    else:
        searched = node.this is None
        pairs = [(b.this if searched else None, b.args.get("true"))
                 for b in node.args.get("ifs") or []] + [(None, node.args.get("default"))]
    return [(c, v) for c, v in pairs if v is not None and not isinstance(v, exp.Null)]


def _hull_or_unbounded(items: list[Interval]) -> Interval:
    return _hull(items) if items else UNBOUNDED


COMPARISON_SIDES = {exp.GT: (1, 0), exp.GTE: (1, 0), exp.LT: (0, 1), exp.LTE: (0, 1),
                    exp.EQ: (1, 1)}
"""For ``column OP number``: whether the number is a (lower, upper) bound of the column."""


def refine(bounds: Mapping[str, tuple[float, float]], condition: exp.Expression | None
           ) -> dict[str, tuple[float, float]]:
    """``bounds`` narrowed by what ``condition`` being TRUE proves (None proves nothing).

    A condition that no value can meet (``x > 5 AND x < 1``) leaves the column's bounds as
    they were: such rows never exist, and any bounds hold for them.
    """
    out = dict(bounds)
    for name, (lo, hi) in _implied(condition).items():
        old_lo, old_hi = out.get(name, (-INF, INF))
        new = (max(lo, old_lo), min(hi, old_hi))
        if new[0] <= new[1]:
            out[name] = new
    return out


def _implied(condition: exp.Expression | None) -> dict[str, tuple[float, float]]:
    """Per column, the range a TRUE ``condition`` proves (conjunctions of simple tests)."""
    if condition is None:
        return {}
    if isinstance(condition, exp.Paren):
        return _implied(condition.this)
    if isinstance(condition, exp.And):
        found = _implied(condition.this)
        for name, (lo, hi) in _implied(condition.expression).items():
            old_lo, old_hi = found.get(name, (-INF, INF))
            found[name] = (max(lo, old_lo), min(hi, old_hi))
        return found
    test = _column_test(condition)
    return {test[0]: test[1]} if test is not None else {}


def _column_test(node: exp.Expression) -> tuple[str, tuple[float, float]] | None:
    """(column, range) for ``column OP number``, ``number OP column``, BETWEEN and IN."""
    if isinstance(node, exp.Between) and isinstance(node.this, exp.Column):
        lo, hi = _constant(node.args.get("low")), _constant(node.args.get("high"))
        if lo is not None and hi is not None:
            return node.this.name.lower(), (lo, hi)
        return None
    if isinstance(node, exp.In) and isinstance(node.this, exp.Column) and node.expressions \
            and not node.args.get("query"):
        values = [_constant(v) for v in node.expressions]
        if all(v is not None for v in values):
            return node.this.name.lower(), (min(values), max(values))
        return None
    sides = COMPARISON_SIDES.get(type(node))
    if sides is None:
        return None
    left, right = node.this, node.expression
    if isinstance(right, exp.Column) and not isinstance(left, exp.Column):
        left, right = right, left
        sides = sides[::-1]
    value = _constant(right)
    if not isinstance(left, exp.Column) or value is None:
        return None
    return left.name.lower(), (value if sides[0] else -INF, value if sides[1] else INF)


def _constant(node: exp.Expression | None) -> float | None:
    """A finite numeric literal (possibly negated, in parentheses), else None."""
    while isinstance(node, exp.Paren):
        node = node.this
    sign = 1.0
    if isinstance(node, exp.Neg):
        sign, node = -1.0, node.this
    if not isinstance(node, exp.Literal) or node.is_string:
        return None
    value = _number(node).lo * sign
    return value if math.isfinite(value) else None
