"""The bounded query: the rewrite's tree, the strategy that built it, and its engine."""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from dpsql.engines import ENGINES, EngineTraits
from dpsql.plan import Bounding


@dataclass(frozen=True)
class BoundedQuery:
    """SQL that enforces the plan's bounds and returns one row per group, built for
    ``engine`` by the strategy ``bounding``.

    Columns: the group keys (by their key names), one column per statistic
    name (the ``units`` statistic is the distinct-unit count after bounding), and one
    list of (bucket, weight) structs per histogram name.
    """

    ast: exp.Expression
    bounding: Bounding
    engine: EngineTraits

    def sql(self, dialect: str | None = None, *, pretty: bool = False) -> str:
        """The query in ``dialect`` (an engine's name: its dialect writes dpsql's nodes), by
        default its own engine's."""
        name = self.engine.name if dialect is None else dialect
        return self.ast.sql(dialect=ENGINES[name].dialect if name in ENGINES else name,
                            pretty=pretty)

    def __str__(self) -> str:
        return self.sql(pretty=True)
