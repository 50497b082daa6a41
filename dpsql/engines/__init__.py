"""The engines the bounded query runs on, described by data: their traits and their dialects.

The rewrite builds one bounded query per engine from the same plan. What differs between
engines is not what the query computes but how it is best written for each, and that is
this module's ``EngineTraits``: facts about an engine that the strategy chooser
(``dpsql.rewrite.choose``) and the builders read, and the sqlglot dialect that writes the
tree in the engine's SQL (``dpsql.engines.duckdb``, ``dpsql.engines.spark``). No trait reads
data; adding an engine is a record here, a dialect, and the grammar corpus run on it
(docs/architecture.md, "Adding an engine").

>>> ENGINES["spark"].inlines_ctes, DUCKDB.pays_per_aggregate
(True, True)

Spark's traits hold its dialect, which imports sqlglot's Spark dialect: they are built when
first asked for (``ENGINES["spark"]``, ``SPARK``), so a DuckDB query never loads them
(docs/benchmarks.md, "Start-up").
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from sqlglot.dialects.dialect import Dialect

from dpsql.engines.duckdb import DuckDBEngine


@dataclass(frozen=True)
class EngineTraits:
    """What the rewrite must know of an engine to write its bounded query well.

    - ``inlines_ctes``: a CTE is computed again at each reference. A small CTE of groups
      (the group-choice codes, each group's rank) is then no cheaper than what each row can
      compute itself, and a join to it aggregates the pairs a second time: the rewrite
      computes the codes in each row and carries the keys with their pair instead.
    - ``reuses_nondeterministic_ctes``: the engine computes a CTE once for all its
      references only when the CTE is non-deterministic (Spark: SPARK-36447); the kept
      pairs, or the kept rows' cells, that a quantile reads twice are made so
      (``compute_once``).
    - ``time_in_reused_cte``: whether such a CTE may hold a TIME column (Spark refuses
      one in a non-deterministic CTE: UNSUPPORTED_TIME_TYPE).
    - ``pays_per_aggregate``: each aggregate function costs a pass of its own over the
      rows, so several bounded partials travel as the digits of one BIGINT
      (``dpsql.rewrite.packing``).
    """

    name: str
    dialect: type[Dialect]
    inlines_ctes: bool
    reuses_nondeterministic_ctes: bool
    time_in_reused_cte: bool
    pays_per_aggregate: bool


DUCKDB = EngineTraits(name="duckdb", dialect=DuckDBEngine, inlines_ctes=False,
                      reuses_nondeterministic_ctes=False, time_in_reused_cte=True,
                      pays_per_aggregate=True)
"""DuckDB computes a CTE read twice once by itself and joins small tables cheaply; each
aggregate function is a pass of its own (docs/benchmarks.md)."""


@functools.cache
def _spark() -> EngineTraits:
    """Spark's traits (``SPARK``). Its optimizer inlines every deterministic CTE at each
    reference; one shuffle serves several aggregates of the same grouping. (Not named
    ``spark``: that is the module of its dialect, an attribute of this package.)"""
    from dpsql.engines.spark import SparkEngine

    return EngineTraits(name="spark", dialect=SparkEngine, inlines_ctes=True,
                        reuses_nondeterministic_ctes=True, time_in_reused_cte=False,
                        pays_per_aggregate=False)


class _Engines(Mapping[str, EngineTraits]):
    """The engines by name, Spark's built on first use."""

    def __getitem__(self, name: str) -> EngineTraits:
        if name == "duckdb":
            return DUCKDB
        if name == "spark":
            return _spark()
        raise KeyError(name)

    def __iter__(self) -> Iterator[str]:
        return iter(("duckdb", "spark"))

    def __len__(self) -> int:
        return 2


ENGINES: Mapping[str, EngineTraits] = _Engines()


def __getattr__(name: str) -> Any:
    """``SPARK``, Spark's traits, built on first use (PEP 562)."""
    if name == "SPARK":
        return _spark()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), "SPARK"})


def engine(name: str) -> EngineTraits:
    """The traits of the engine called ``name`` (a backend's ``dialect``)."""
    return ENGINES[name]
