"""The analysis stage's working state: a frozen draft that each pass extends.

A pass is ``def name(draft: Draft, ctx: Context) -> Draft``; passes are listed
once, in order, in ``dpsql.analysis.PASSES``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from dpsql.catalog import Catalog, TableInfo
from dpsql.mechanisms import NoisePlan, Sensitivity
from dpsql.plan import (
    Aggregate,
    Contribution,
    GroupKey,
    OutputColumn,
    Selection,
    StatSpec,
    TableRead,
)


@dataclass(frozen=True)
class Context:
    """What passes may consult: the catalog, a reader of public key values, and the ε and δ
    the caller passed explicitly (None when left to the defaults, which the draft holds)."""

    catalog: Catalog
    public_values: Callable[[str, str], tuple[Any, ...]]
    call_epsilon: float | None = None
    call_delta: float | None = None
    remaining: tuple[float, float] | None = None
    """What is left of the query's (ε, δ) after estimating bounds it needed."""


@dataclass(frozen=True)
class QueryOptions:
    """Contribution limits and privacy unit named by ``WITH DIFFERENTIAL_PRIVACY OPTIONS``
    (or ZetaSQL's ``WITH ANONYMIZATION OPTIONS``, named by ``clause``).

    ``None`` leaves the catalog's declaration in force. ``public_groups`` is BigQuery's
    ``group_selection_strategy = PUBLIC_GROUPS``: every group key must be public.
    """

    max_groups_per_unit: int | None = None
    max_rows: int | None = None
    unit: exp.Column | None = None
    public_groups: bool = False
    clause: str = "WITH DIFFERENTIAL_PRIVACY OPTIONS"
    written: bool = False
    """Whether the query has the clause (the BigQuery DP syntax), not just the defaults."""
    min_units: int | None = None
    """``min_privacy_units_per_group`` (ZetaSQL's ``k_threshold``): partition selection
    treats a group of n people as one of n − (min_units − 1)."""


@dataclass(frozen=True)
class Draft:
    """A query under analysis. Fields fill in as the passes run."""

    sql: str
    ast: exp.Expression
    epsilon: float
    delta: float
    table: TableInfo | None = None
    relation: exp.Expression | None = None
    relation_work: int = 0
    """Steps per row of the row expressions inside ``relation`` (``dpsql.expr.size``)."""
    tables: tuple[str, ...] = ()
    private_tables: tuple[str, ...] = ()
    where: exp.Expression | None = None
    keys: tuple[GroupKey, ...] = ()
    stats: tuple[StatSpec, ...] = ()
    aggregates: tuple[Aggregate, ...] = ()
    output: exp.Select | None = None
    columns: tuple[OutputColumn, ...] = ()
    contribution: Contribution | None = None
    sensitivities: tuple[Sensitivity, ...] = ()
    noise: NoisePlan | None = None
    selection: Selection | None = None
    cost_delta: float = 0.0
    quantile_ci: float | None = None
    options: QueryOptions = QueryOptions()
    outer: exp.Select | None = None
    row_work: int = 0
    """Steps one row may take over every row expression (``dpsql.analysis.work``)."""
    reads: tuple[TableRead, ...] = ()
    """The tables whose text columns the bounded query cuts to their widths."""
    """A query over the release (``dpsql.analysis.outer``), reading it as ``__dp_release``."""

    @property
    def select(self) -> exp.Select:
        assert isinstance(self.ast, exp.Select)
        return self.ast
