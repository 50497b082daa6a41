"""Tumult Analytics answering a benchmark's queries, timed beside dpsql in the same run.

Started by ``bench_spark --tumult VENV`` and ``bench_matrix --tumult VENV`` as
``<VENV>/bin/python tumult_speed.py SPEC`` in Tumult's own virtual environment (Spark 3.5;
it imports nothing of this repository), SPEC a JSON object: the parquet ``path``, the Spark
``master``, the privacy ``unit`` column, the limits ``groups`` and ``rows``, and
``queries``, name → ``{"agg", "key", "value", "low", "high", "public"}`` with ``agg`` one
of ``count``, ``count_distinct`` (of the unit), ``sum_avg`` and ``median``, ``key`` the
grouping column or null, ``public`` the key's public values or null. It reads one query
name per line on stdin, answers that query once from the parquet file with its own local
Spark session, and writes one line back (``done`` or the error) when the answer is
collected, so that the benchmark can time it interleaved with its own runs.

Each query is answered as Tumult users write it, with the benchmark's limits: grouped
queries truncate each person's rows with ``MaxGroupsPerID(key, groups)`` and
``MaxRowsPerGroupPerID(key, rows)``, ungrouped ones with ``MaxRowsPerID(groups · rows)``;
values are clamped to [low, high]; private keys are chosen first with ``get_groups``
(which Tumult bounds by ``MaxRowsPerID``: groups · rows rows per person); Tumult answers
one aggregate per query, so ``SUM, AVG`` is two.
"""

from __future__ import annotations

import json
import os
import sys


def main() -> None:
    from pyspark.sql import SparkSession
    from tmlt.analytics import (
        AddRowsWithID,
        ApproxDPBudget,
        KeySet,
        MaxGroupsPerID,
        MaxRowsPerGroupPerID,
        MaxRowsPerID,
        PureDPBudget,
        QueryBuilder,
        Session,
    )

    spec = json.loads(sys.argv[1])
    groups, rows, unit = spec["groups"], spec["rows"], spec["unit"]
    os.environ["PYSPARK_PYTHON"] = sys.executable  # workers need this venv's tmlt
    spark = (SparkSession.builder.master(spec["master"]).appName("tumult-bench")
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.memory", "4g").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    frame = spark.read.parquet(spec["path"])

    def answer(query: dict) -> None:
        session = Session.from_dataframe(privacy_budget=ApproxDPBudget(100.0, 0.5),
                                         source_id="t", dataframe=frame,
                                         protected_change=AddRowsWithID(id_column=unit))
        key = query["key"]
        if key is None:
            built = QueryBuilder("t").enforce(MaxRowsPerID(groups * rows))
        else:
            if query["public"] is not None:
                keys = KeySet.from_dict({key: query["public"]})
            else:
                found = session.evaluate(QueryBuilder("t").enforce(MaxRowsPerID(groups * rows))
                                         .get_groups([key]), ApproxDPBudget(0.5, 1e-6))
                keys = KeySet.from_dataframe(found)
            built = (QueryBuilder("t").enforce(MaxGroupsPerID(key, groups))
                     .enforce(MaxRowsPerGroupPerID(key, rows)).groupby(keys))
        bounds = (query.get("value"), query.get("low"), query.get("high"))
        aggregates = {
            "count": lambda: [built.count()],
            "count_distinct": lambda: [built.count_distinct([unit])],
            "sum_avg": lambda: [built.sum(*bounds), built.average(*bounds)],
            "median": lambda: [built.median(*bounds)],
        }[query["agg"]]()
        for aggregate in aggregates:
            session.evaluate(aggregate, PureDPBudget(0.5)).collect()

    print("ready", flush=True)
    for line in sys.stdin:
        try:
            answer(spec["queries"][line.strip()])
            print("done", flush=True)
        except Exception as err:  # reported to the benchmark, which stops
            print(f"error {type(err).__name__}: {err}".replace("\n", " "), flush=True)


if __name__ == "__main__":
    main()
