"""Bounded integer columns packed into one BIGINT, and read back out of it.

At one group per unit the rewrite keeps every partial of each unit's first pair, and
DuckDB pays for each ``ARG_MIN_NULL(partial, order)`` that takes one (docs/benchmarks.md).
Partials with a known bound ``|p| ≤ B`` (every pair partial has one: ``partial_bound``)
travel as the digits of one number instead, in mixed radix ``2B + 1`` and BIGINT
arithmetic: the pack is ``Σ (pᵢ + Bᵢ)·Wᵢ`` with ``W₀ = 1`` and ``Wᵢ₊₁ = Wᵢ·(2Bᵢ + 1)``,
and ``pᵢ = (pack // Wᵢ) % (2Bᵢ + 1) − Bᵢ``. A pack holds fields while the product of
their radices stays within ``CAPACITY``, so it is a non-negative BIGINT, never near
overflow, and integer division and remainder mean the same in every engine. One
``ARG_MIN_NULL`` per pack then takes all its fields from the same pair.

>>> packs = packed([("__dp_s0", 3), ("__dp_s1", 6291456000)])
>>> [p.fields for p in packs]
[(('__dp_s0', 3), ('__dp_s1', 6291456000))]
>>> print(packs[0].code().sql("duckdb"))
(CAST(__dp_s0 AS BIGINT) + 3) + (CAST(__dp_s1 AS BIGINT) + 6291456000) * 7
>>> pack = exp.column(packs[0].name)
>>> print(packs[0].field("__dp_s0", pack).sql("duckdb"))
__dp_pack0 % 7 - 3
>>> print(packs[0].field("__dp_s1", pack).sql("duckdb"))
(__dp_pack0 // 7) % 12582912001 - 6291456000
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlglot import exp

from dpsql.expr.nodes import as_bigint

CAPACITY = 2**62
"""The largest product of radices one pack holds: a pack stays below it, a BIGINT."""


@dataclass(frozen=True)
class Pack:
    """Named ``fields`` — (column, bound) — written as the digits of one BIGINT."""

    name: str
    fields: tuple[tuple[str, int], ...]

    def weights(self) -> dict[str, int]:
        """Each field's place value: the product of the radices before it."""
        weights, weight = {}, 1
        for column, bound in self.fields:
            weights[column] = weight
            weight *= 2 * bound + 1
        return weights

    def code(self) -> exp.Expression:
        """The pack over the field columns: ``Σ (p + B)·W``."""
        weights = self.weights()
        terms = [_times(exp.Paren(this=exp.Add(this=as_bigint(exp.column(column)),
                                               expression=exp.Literal.number(bound))),
                        weights[column])
                 for column, bound in self.fields]
        total = terms[0]
        for term in terms[1:]:
            total = exp.Add(this=total, expression=term)
        return total

    def field(self, column: str, pack: exp.Expression) -> exp.Expression:
        """Field ``column`` read back out of ``pack``: ``(pack // W) % (2B + 1) − B``."""
        bound, weight = dict(self.fields)[column], self.weights()[column]
        shifted = pack.copy() if weight == 1 else exp.Paren(
            this=exp.IntDiv(this=pack.copy(), expression=exp.Literal.number(weight)))
        digit = exp.Mod(this=shifted, expression=exp.Literal.number(2 * bound + 1))
        return exp.Sub(this=digit, expression=exp.Literal.number(bound))


def _times(node: exp.Expression, weight: int) -> exp.Expression:
    # Integer literals stay exact (``number`` writes those past 2⁵³ as floats).
    return node if weight == 1 else exp.Mul(this=node, expression=exp.Literal.number(weight))


def packed(fields: Sequence[tuple[str, int]], prefix: str = "__dp_pack") -> list[Pack]:
    """``fields`` (column, bound), in order, in as few packs as fill each up to
    ``CAPACITY``; a field too wide for any pack, or whose bound is not an integer, is left
    out.

    >>> [p.fields for p in packed([("a", 2**30), ("b", 2**30), ("c", 5), ("d", 2**62),
    ...                            ("e", 0.5)])]
    [(('a', 1073741824),), (('b', 1073741824), ('c', 5))]
    >>> packed([])
    []
    """
    groups: list[list[tuple[str, int]]] = []
    room = 0
    for column, bound in fields:
        radix = 2 * bound + 1
        if not isinstance(bound, int) or radix > CAPACITY:
            continue
        if not groups or radix > room:
            groups.append([])
            room = CAPACITY
        groups[-1].append((column, bound))
        room //= radix
    return [Pack(f"{prefix}{i}", tuple(group)) for i, group in enumerate(groups)]
