"""Whole-query differential fuzzing across engines: DuckDB and Spark agree exactly.

(iii) For a generated query and database, each engine registers the tables itself (so each
catalog has that engine's own column types), dpsql plans the query on each, and both plans
must be the same (or both refused); the bounded query, run with the same salt, must then
return identical aggregates on both engines: the same groups, the same exact integer
statistics (sums are in integer quanta, so the order of addition does not matter) and the
same histogram weights. Every guarantee checked on DuckDB (``test_fuzz_queries``) then holds
on Spark too, and a query that fails on one engine only is caught here.

The data (``Database(spark=True)``, see ``tests.fuzz.tables``) stores the HUGEINT column
as DECIMAL(38, 0) on both engines, as Spark has no 128-bit integer. Everything else stays:
DuckDB's ±infinity dates and timestamps, dates beyond TIMESTAMP's range and the ends of
DuckDB's, TIME '24:00:00' (Arrow hands Spark each as the number it is: DuckDB's 'infinity'
date is 5881580-07-11 there), NaN, ±inf, ±1e308, 2⁶³ − 1, DECIMAL(38, 6) extremes and odd
strings.

Spark runs each query in about a second, so this runs only with the ``slow`` tests.
"""

from __future__ import annotations

import pytest
from hypothesis import event, given, seed, settings

from dpsql.backends import DuckDBBackend
from tests.fuzz.harness import FUZZ_SEED, SPARK, Engine, check_engines
from tests.fuzz.statements import statements
from tests.fuzz.tables import databases, limits

pytestmark = [pytest.mark.spark, pytest.mark.slow]


@pytest.fixture(scope="module")
def engines(spark) -> tuple[Engine, Engine]:
    from dpsql.backends.spark import SparkBackend

    return Engine(DuckDBBackend(), spark=True), Engine(SparkBackend(spark), spark=True)


@seed(FUZZ_SEED)
@settings(SPARK)
@given(db=databases(spark=True), declared=limits(), sql=statements())
def test_duckdb_and_spark_give_the_same_bounded_aggregates(engines, db, declared, sql):
    event(check_engines(*engines, db, declared, sql))
