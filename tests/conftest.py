"""Shared fixtures: one real local-mode SparkSession per test process, for the Spark tests;
one throwaway PostgreSQL cluster per test process, and ``ledger_url``, for the ledger tests."""

from __future__ import annotations

import secrets

import pytest

SPARK_CONF = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "2",  # tiny test tables: 200 shuffle tasks would be waste
    "spark.driver.memory": "2g",  # the fuzzer's widest plans, after the other Spark tests
}


@pytest.fixture(scope="session")
def spark():
    """A local[2] SparkSession with quiet logs; the Spark tests skip only without pyspark."""
    pytest.importorskip("pyspark", reason="the Spark tests need pyspark: pip install "
                        "'dpsql[spark]'")
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master("local[2]").appName("dpsql-tests")
    for key, value in SPARK_CONF.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def postgres_cluster():
    """One throwaway PostgreSQL cluster for the whole run (tests/postgres.py); the tests
    that need it skip, naming what to install, without the server or the driver."""
    pytest.importorskip("psycopg_pool", reason="the PostgreSQL ledger tests need its driver: "
                        "pip install 'dpsql[postgres]'")
    from tests.postgres import running_cluster

    try:
        cluster = running_cluster()
        started = cluster.__enter__()
    except FileNotFoundError as missing:
        pytest.skip(str(missing))
    yield started
    cluster.__exit__(None, None, None)


@pytest.fixture(params=["sqlite", "postgresql"])
def ledger_url(request, tmp_path) -> str:
    """Where a test's ledger lives: a new SQLite file, or a new database of the cluster
    (every ledger test runs against both stores)."""
    if request.param == "sqlite":
        return str(tmp_path / "ledger.db")
    from tests.postgres import create_database

    cluster = request.getfixturevalue("postgres_cluster")
    return create_database(cluster, f"ledger_{secrets.token_hex(6)}")
