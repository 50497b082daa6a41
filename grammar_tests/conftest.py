"""The fixed catalog every grammar case runs against (built once per module)."""

from __future__ import annotations

import pytest

import dpsql
from grammar_tests.catalog import connect


@pytest.fixture(scope="module")
def con() -> dpsql.Connection:
    """The test catalog of ``grammar_tests/catalog.py`` on DuckDB."""
    return connect()
