"""Frozen objects passed between the pipeline stages.

``analyze`` turns SQL into a :class:`PrivacyPlan`; ``rewrite`` turns the plan
into a :class:`BoundedQuery`; ``release`` reads both. Every object is frozen and
prints as readable text, usable as golden output in tests.

>>> print(Contribution(max_groups_per_unit=4, max_rows_per_group=3, max_rows_per_unit=None))
groups/unit=4 rows/group=3 rows/unit=unlimited
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from sqlglot import exp

from dpsql.accounting import Cost
from dpsql.mechanisms import Noise, NoisePlan, Statistic

NOISY_TABLE = "__dp_noisy"
"""The table of noisy group values that post-processing (SELECT/HAVING/ORDER BY) reads."""
ROW_ID = "__dp_row"
"""Column carrying each noisy group's index through post-processing (for CIs)."""

StatKind = Literal["units", "rows", "count", "sum", "centered_sum"]
AggKind = Literal["count_star", "count", "count_units", "sum", "avg"]


@dataclass(frozen=True)
class Contribution:
    """Per-unit contribution limits that the rewrite enforces.

    ``sources`` says, per limit, whether it was ``declared`` or a ``default``.
    """

    max_groups_per_unit: int
    max_rows_per_group: int
    max_rows_per_unit: int | None
    sources: tuple[tuple[str, str], ...] = ()

    @property
    def rows_per_group(self) -> int:
        """Rows one unit can add to one group once the total cap is applied."""
        cap = self.max_rows_per_unit
        return self.max_rows_per_group if cap is None else min(self.max_rows_per_group, cap)

    @property
    def groups_per_unit(self) -> int:
        """Groups one unit can touch once the total cap is applied."""
        cap = self.max_rows_per_unit
        return self.max_groups_per_unit if cap is None else min(self.max_groups_per_unit, cap)

    @property
    def caps_total(self) -> bool:
        """True when the total-rows cap binds below groups × rows per group."""
        cap = self.max_rows_per_unit
        return cap is not None and cap < self.groups_per_unit * self.rows_per_group

    def __str__(self) -> str:
        total = "unlimited" if self.max_rows_per_unit is None else self.max_rows_per_unit
        return (
            f"groups/unit={self.max_groups_per_unit} rows/group={self.max_rows_per_group} "
            f"rows/unit={total}"
        )


@dataclass(frozen=True)
class GroupKey:
    """One GROUP BY column. ``domain`` holds the public values, or None if private."""

    name: str
    column: str
    domain: tuple[Any, ...] | None

    @property
    def public(self) -> bool:
        return self.domain is not None


@dataclass(frozen=True)
class StatSpec:
    """One bounded statistic computed per group by the rewritten SQL.

    ``expr`` is the row-level value for sums, the counted expression for
    ``count``, and None for ``rows``/``units``. Sums are computed exactly, in
    integers: each value is clamped to [lo, hi] and rounded to a multiple of
    ``quantum`` (a power of two), so the SQL result does not depend on the order
    in which the engine adds numbers. A ``centered_sum`` adds 2k − (lo_k + hi_k)
    per value k (in quanta of twice ``quantum``): AVG's centred trick in integers.
    """

    name: str
    kind: StatKind
    expr: exp.Expression | None
    lo: float = 0.0
    hi: float = 0.0
    quantum: float = 1.0

    @property
    def key(self) -> tuple[Any, ...]:
        sql = self.expr.sql() if self.expr is not None else ""
        return (self.kind, sql, self.lo, self.hi)

    @property
    def value_quantum(self) -> float:
        """The grid each value is rounded to (``quantum`` for sums, twice it when centred)."""
        return 2 * self.quantum if self.kind == "centered_sum" else self.quantum

    @property
    def lo_units(self) -> int:
        return round(self.lo / self.value_quantum)

    @property
    def hi_units(self) -> int:
        return round(self.hi / self.value_quantum)

    @property
    def row_bound(self) -> int:
        """Largest |value| one row adds, in quanta."""
        if self.kind == "sum":
            return max(abs(self.lo_units), abs(self.hi_units))
        if self.kind == "centered_sum":
            return self.hi_units - self.lo_units
        return 1

    @property
    def center(self) -> float:
        """The centre that a centred sum is taken around (on the value grid)."""
        return (self.lo_units + self.hi_units) * self.quantum

    def __str__(self) -> str:
        inner = self.expr.sql() if self.expr is not None else "*"
        if self.kind in ("sum", "centered_sum"):
            return f"{self.name}={self.kind}({inner} in [{self.lo:g}, {self.hi:g}])"
        return f"{self.name}={self.kind}({inner})"


def value_quantum(lo: float, hi: float) -> float:
    """A power of two about 2^-30 of the largest |bound|: values keep ~9 significant digits.

    >>> value_quantum(0, 1000) == 2.0 ** (9 - 30)
    True
    """
    largest = max(abs(lo), abs(hi))
    return 2.0 ** (math.floor(math.log2(largest)) - 30) if largest > 0 else 1.0


@dataclass(frozen=True)
class Aggregate:
    """One aggregate call of the query and the statistics it is computed from."""

    name: str
    kind: AggKind
    sql: str
    stats: tuple[str, ...]
    lo: float | None = None
    hi: float | None = None

    def __str__(self) -> str:
        bounds = "" if self.lo is None else f" in [{self.lo:g}, {self.hi:g}]"
        return f"{self.name}={self.sql}{bounds} <- {', '.join(self.stats)}"


@dataclass(frozen=True)
class Selection:
    """DP partition selection: keep a group iff its noisy unit count ≥ threshold."""

    method: str
    threshold: float
    delta: float
    max_groups: int

    def __str__(self) -> str:
        return f"{self.method} threshold={self.threshold:g} δ={self.delta:g}"


@dataclass(frozen=True)
class OutputColumn:
    """A column of the released table; ``aggregate`` names it when it is a bare aggregate."""

    name: str
    aggregate: str | None


@dataclass(frozen=True)
class PrivacyPlan:
    """Everything needed to rewrite, run and release one query, and what it costs."""

    sql: str
    table: str
    relation: str
    privacy_unit: str | None
    where: exp.Expression | None
    keys: tuple[GroupKey, ...]
    stats: tuple[StatSpec, ...]
    statistics: tuple[Statistic, ...]
    aggregates: tuple[Aggregate, ...]
    contribution: Contribution
    noise: NoisePlan
    selection: Selection | None
    output: exp.Select
    columns: tuple[OutputColumn, ...]
    cost: Cost
    column_types: Mapping[str, str] = field(default_factory=dict)
    column_bounds: Mapping[str, tuple[float, float]] = field(default_factory=dict)

    @property
    def row_level(self) -> bool:
        return self.privacy_unit is None

    @property
    def global_aggregate(self) -> bool:
        return not self.keys

    @property
    def statistics_per_unit(self) -> int:
        """How many released cells one privacy unit can change (statistics × groups)."""
        return len(self.statistics) * self.contribution.groups_per_unit

    def stat(self, name: str) -> StatSpec:
        return next(s for s in self.stats if s.name == name)

    def statistic(self, name: str) -> Statistic:
        return next(s for s in self.statistics if s.name == name)

    def noise_for(self, name: str) -> Noise:
        """The noise of statistic ``name`` in output units (sums are computed in quanta)."""
        noise = self.noise.noise_for(self.statistic(name))
        quantum = self.stat(name).quantum
        return replace(noise, scale=noise.scale * quantum,
                       granularity=noise.granularity * quantum)

    def __str__(self) -> str:
        lines = [
            f"table {self.table} unit={self.privacy_unit or 'row'} {self.contribution}",
            "keys " + (", ".join(f"{k.name}{'(public)' if k.public else ''}" for k in self.keys)
                       or "none"),
            *(f"stat {s}" for s in self.stats),
            *(f"agg {a}" for a in self.aggregates),
            f"noise {self.noise.kind} statistics/unit={self.statistics_per_unit}",
            f"selection {self.selection or 'public'}",
            f"cost {self.cost}",
        ]
        return "\n".join(lines)


@dataclass(frozen=True)
class BoundedQuery:
    """SQL that enforces the plan's bounds and returns one row per group.

    Columns: the group keys (by their key names) and one column per statistic
    name (the ``units`` statistic is the distinct-unit count after bounding).
    """

    ast: exp.Expression

    def sql(self, dialect: str = "duckdb", *, pretty: bool = False) -> str:
        return self.ast.sql(dialect=dialect, pretty=pretty)

    def __str__(self) -> str:
        return self.sql(pretty=True)
