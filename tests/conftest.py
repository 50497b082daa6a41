"""Shared fixtures: one real local-mode SparkSession per test process, for the Spark tests."""

from __future__ import annotations

import pytest

SPARK_CONF = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "2",  # tiny test tables: 200 shuffle tasks would be waste
    "spark.driver.memory": "1g",
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
