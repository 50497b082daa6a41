"""Backends execute a BoundedQuery and return Arrow; they know nothing of privacy."""

from dpsql.backends.duckdb import DuckDBBackend

__all__ = ["DuckDBBackend"]
