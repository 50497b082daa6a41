"""BigQuery's named contribution bounds of an aggregate, read and checked.

``contribution_bounds_per_row => (lo, hi)`` clamps each row's value to [lo, hi] (NULL
stays NULL), after the catalog's bounds: the tighter wins, as for a clamp written in
the query. ``contribution_bounds_per_group => (lo, hi)`` clamps each unit's partial
aggregate in each group (its count, its sum, or for AVG its mean) to [lo, hi], "after
the values are aggregated per privacy unit" (BigQuery, "Differentially private aggregate
functions", explicit clamping; ZetaSQL docs/aggregate-dp-functions.md).

>>> from dpsql.dialect import parse_one
>>> named_bounds(parse_one("SELECT SUM(x, contribution_bounds_per_row => (-1, 5))").expressions[0])
NamedBounds(per_row=(-1.0, 5.0), per_group=None)
>>> clamp_interval(Interval(0, 100), (200, 300))
Interval(lo=200, hi=200)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sqlglot import exp

from dpsql.analysis.bounds import Interval
from dpsql.analysis.grammar import refuse
from dpsql.dialect import PER_GROUP, PER_ROW, is_anonymization, named_arguments


@dataclass(frozen=True)
class NamedBounds:
    """The (lo, hi) of each named bound given, or None."""

    per_row: tuple[float, float] | None = None
    per_group: tuple[float, float] | None = None


def named_bounds(node: exp.Expression) -> NamedBounds:
    """The named bounds of an aggregate call: each at most once, (lo, hi) literals, lo ≤ hi."""
    found: dict[str, tuple[float, float]] = {}
    for argument in named_arguments(node):
        name = argument.name.lower()
        if name in found:
            refuse(node, name, "each named argument once")
        found[name] = _pair(node, name, argument.expression)
    return NamedBounds(per_row=found.get(PER_ROW), per_group=found.get(PER_GROUP))


def bound_syntax(node: exp.Expression, name: str) -> str:
    """How the aggregate ``node`` writes the bound ``name``: ZetaSQL's ``CLAMPED BETWEEN lo
    AND hi`` on its ANON_* aggregates, BigQuery's ``name => (lo, hi)`` otherwise."""
    return "CLAMPED BETWEEN lo AND hi" if is_anonymization(node) else f"{name} => (lo, hi)"


def _pair(node: exp.Expression, name: str, value: exp.Expression) -> tuple[float, float]:
    allowed = f"{bound_syntax(node, name)} with number literals lo <= hi"
    context = "CLAMPED BETWEEN" if is_anonymization(node) else name
    items = value.expressions if isinstance(value, exp.Tuple) else []
    numbers = [number_literal(item) for item in items]
    if len(numbers) != 2 or None in numbers:
        refuse(node, context, allowed)
    lo, hi = numbers
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo > hi:
        refuse(node, context, allowed, f"({lo:g}, {hi:g}) is not a finite range")
    return lo, hi


def number_literal(node: exp.Expression) -> float | None:
    """The value of a number literal, possibly negated; None for anything else."""
    sign = 1.0
    if isinstance(node, exp.Neg):
        sign, node = -1.0, node.this
    if not isinstance(node, exp.Literal) or node.is_string:
        return None
    try:
        return sign * float(node.this)
    except ValueError:
        return None


def clamp_interval(interval: Interval, bounds: tuple[float, float]) -> Interval:
    """Where LEAST(GREATEST(v, lo), hi) lies for v in ``interval``: per-row bounds meet the
    catalog's, the tighter wins, and disjoint ranges collapse to the nearer end."""
    lo, hi = bounds
    return Interval(min(max(interval.lo, lo), hi), min(max(interval.hi, lo), hi))
