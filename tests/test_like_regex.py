"""LIKE written as a regular expression that cannot backtrack (``dpsql.backends.like``).

Spark matches LIKE with a backtracking regular expression: ``%a%a%a%b`` on a long text of
a's tries every triple of positions. The Spark backend writes LIKE as ``like_regex``
instead; it must mean exactly what LIKE means (checked here against DuckDB's LIKE, the
default engine) and take time linear in the text (checked with Python's ``re``, which
backtracks as Java's does, on the red team's shape of pattern).
"""

from __future__ import annotations

import re
import time

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpsql.engines.like import like_regex

ALPHABET = "ab_%.*(é\n$"
TEXTS = "ab.*(é\n$"


@pytest.fixture(scope="module")
def engine() -> duckdb.DuckDBPyConnection:
    return duckdb.connect()


@settings(max_examples=500, deadline=None)
@given(pattern=st.text(ALPHABET, max_size=8), text=st.text(TEXTS, max_size=12))
def test_the_regex_means_what_like_means(engine, pattern, text):
    expected = engine.execute("SELECT ? LIKE ?", [text, pattern]).fetchall()[0][0]
    assert (re.search(like_regex(pattern), text) is not None) == expected, (pattern, text)


@pytest.mark.parametrize("pattern", ["%a%a%a%a%b", "%a_%a_%a_%b", "%_%_%_%_%b", "a%a%a%ab"])
def test_matching_takes_linear_time(pattern):
    start = time.perf_counter()
    assert re.search(like_regex(pattern), "a" * 20_000) is None
    assert time.perf_counter() - start < 0.5


def test_negative_control_the_plain_translation_backtracks():
    """What Spark's own LIKE does (``%`` as ``.*``): 160 characters already take longer than
    the translation takes on 20,000."""
    plain = "(?s).*a.*a.*a.*a.*b"
    start = time.perf_counter()
    re.fullmatch(plain, "a" * 160)
    assert time.perf_counter() - start > 0.5
