"""Backends run a compiled query's bounded query and return Arrow; they know nothing of privacy.

Every backend has the same shape (``Backend``): DuckDB, embedded and the default
(``DuckDBBackend``), and Spark for data that outgrows one machine (``dpsql.backends.spark``,
imported only when asked for). The secret salt is a query parameter, never SQL text.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

import pyarrow as pa

from dpsql.backends.duckdb import DuckDBBackend

if TYPE_CHECKING:
    from dpsql.compile import CompiledQuery
    from dpsql.engines import EngineTraits
    from dpsql.rewrite import BoundedQuery


class Backend(Protocol):
    """What the connection needs of an engine."""

    closed: bool
    dialect: str
    traits: EngineTraits

    def load(self, name: str, source: Any,
             options: Mapping[str, Any] | None = None) -> dict[str, str]:
        """Make ``source`` queryable as ``name`` (a file read with the reader ``options``);
        return its column types."""

    def public_values(self, table: str, column: str) -> tuple[Any, ...]:
        """The distinct values of a public table's column."""

    def text_widths(self, table: str, columns: list[str]) -> dict[str, int]:
        """The most characters of each text column of a public table."""

    def render(self, query: BoundedQuery) -> str:
        """The SQL this engine runs for a bounded query (its salt still a parameter)."""

    def execute(self, compiled: CompiledQuery, *, salt: str) -> pa.Table:
        """Run the bounded query with ``salt`` bound as its parameter; every row, as Arrow."""

    def interrupt(self) -> None:
        """Cancel the running query (from another thread); it then raises QueryCancelled."""

    def close(self) -> None:
        """Release the engine (or, for one the caller owns, what dpsql registered on it)."""


__all__ = ["Backend", "DuckDBBackend"]
