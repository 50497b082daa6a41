"""Tumult Analytics answering bench_spark's queries, timed beside dpsql in the same run.

Started by ``bench_spark --tumult VENV`` as ``<VENV>/bin/python tumult_speed.py SPEC`` in
Tumult's own virtual environment (Spark 3.5; it imports nothing of this repository), SPEC a
JSON object: the parquet ``path``, the Spark ``master``, the limits ``groups`` and ``rows``,
the public ``regions``. It reads one query name per line on stdin, answers that query once from
the parquet file with its own local Spark session, and writes one line back (``done`` or
the error) when the answer is collected, so that bench_spark can time it interleaved with
its own runs.

Each query is answered as Tumult users write it, with bench_spark's limits: each person's
rows truncated to ``MaxGroupsPerID(key, GROUPS)`` and ``MaxRowsPerGroupPerID(key, ROWS)``,
costs clamped to [0, 2000]; private keys are chosen first with ``get_groups`` (which Tumult
bounds by ``MaxRowsPerID``: GROUPS · ROWS rows per person); Tumult answers one aggregate
per query, so ``SUM, AVG`` is two.
"""

from __future__ import annotations

import json
import os
import sys

COST = (0.0, 2000.0)


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
    groups, rows = spec["groups"], spec["rows"]
    os.environ["PYSPARK_PYTHON"] = sys.executable  # workers need this venv's tmlt
    spark = (SparkSession.builder.master(spec["master"]).appName("tumult-bench")
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.memory", "4g").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    frame = spark.read.parquet(spec["path"])

    def session() -> Session:
        return Session.from_dataframe(privacy_budget=ApproxDPBudget(100.0, 0.5),
                                      source_id="visits", dataframe=frame,
                                      protected_change=AddRowsWithID(id_column="patient_id"))

    def limited(key: str) -> QueryBuilder:
        return (QueryBuilder("visits").enforce(MaxGroupsPerID(key, groups))
                .enforce(MaxRowsPerGroupPerID(key, rows)))

    def count_by_specialty() -> None:
        s = session()
        found = s.evaluate(QueryBuilder("visits").enforce(MaxRowsPerID(groups * rows))
                           .get_groups(["specialty"]), ApproxDPBudget(0.5, 1e-6))
        keys = KeySet.from_dataframe(found)
        s.evaluate(limited("specialty").groupby(keys).count(), PureDPBudget(0.5)).collect()

    def sum_avg_by_region() -> None:
        s = session()
        grouped = limited("region").groupby(KeySet.from_dict({"region": spec["regions"]}))
        s.evaluate(grouped.sum("cost", *COST), PureDPBudget(0.5)).collect()
        s.evaluate(grouped.average("cost", *COST), PureDPBudget(0.5)).collect()

    queries = {"COUNT(*) BY specialty": count_by_specialty,
               "SUM, AVG(cost) BY region": sum_avg_by_region}
    print("ready", flush=True)
    for line in sys.stdin:
        try:
            queries[line.strip()]()
            print("done", flush=True)
        except Exception as err:  # reported to bench_spark, which stops
            print(f"error {type(err).__name__}: {err}".replace("\n", " "), flush=True)


if __name__ == "__main__":
    main()
