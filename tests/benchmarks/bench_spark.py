"""dpsql on Spark (local mode) against dpsql on DuckDB, on the same parquet file.

Run on purpose (not part of the default test run; needs the ``spark`` extra)::

    .venv/bin/python -m tests.benchmarks.bench_spark --rows 10000000

Both connections register the same ``visits`` parquet file with the same limits as
bench_visits.py. For each query it prints the median wall time of the whole ``con.sql``
call on each backend (plan cached after the warm-up, answer cache off) and their ratio,
plus plain Spark SQL of the same non-private aggregate and Spark's own per-unit floor
(``SELECT key, COUNT(DISTINCT patient_id) ... GROUP BY key`` in Spark SQL, ungrouped for
global aggregates), so the Spark figures can be read as dpsql's overhead on Spark. The
runs of each query alternate. ``--queries`` picks queries by their position in
bench_visits.QUERIES (0 = COUNT(*), 1 = COUNT BY specialty, ...); ``--groups`` sets
``max_groups_per_unit`` (1 binds for most patients of this data, 3 for few).

With ``--tumult VENV`` (a virtual environment holding Tumult Analytics and its Spark 3.5,
e.g. the one ``bench_utility --setup`` makes) Tumult answers COUNT BY specialty and SUM, AVG
BY region with the same limits from the same file, in its own process
(``tumult_speed.py``), its runs interleaved with dpsql's::

    .venv/bin/python -m tests.benchmarks.bench_spark --rows 10000000 --queries 1 3 \
        --groups 1 --tumult /work/peers/tumult
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
from pathlib import Path

import pyarrow.parquet as pq

import dpsql
from dpsql.datasets import REGIONS, visits
from tests.benchmarks.bench_visits import QUERIES, floor_sql, median_times, plain_sql

OPTIONS = {"privacy_unit": "patient_id", "bounds": {"cost": (0, 2000), "age": (0, 100)},
           "max_groups_per_unit": 3, "max_rows_per_group": 4,
           "public_keys": {"region": list(REGIONS)}}


def session(master: str):
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master(master).appName("dpsql-bench")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.memory", "4g").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark


TUMULT_QUERIES = {
    "COUNT(*) BY specialty": {"agg": "count", "key": "specialty", "public": None},
    "SUM, AVG(cost) BY region": {"agg": "sum_avg", "key": "region", "public": list(REGIONS),
                                 "value": "cost", "low": 0, "high": 2000},
}
"""The queries Tumult answers beside dpsql here (tumult_speed.py's query specs)."""


class Tumult:
    """Tumult Analytics in its own process (``tumult_speed.py``), answering on request."""

    def __init__(self, venv: Path, spec: dict) -> None:
        script = Path(__file__).with_name("tumult_speed.py")
        self.process = subprocess.Popen(
            [str(venv / "bin" / "python"), str(script), json.dumps(spec)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            text=True)
        self._reply()

    def run(self, query: str) -> None:
        self.process.stdin.write(query + "\n")
        self.process.stdin.flush()
        self._reply()

    def _reply(self) -> None:
        line = self.process.stdout.readline().strip()
        if line not in ("ready", "done"):
            raise RuntimeError(f"Tumult: {line or 'exited'}")

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait()


def bench(rows: int, repeats: int, master: str, folder: Path, picked: list[int],
          groups: int, tumult_venv: Path | None) -> list[dict]:
    path = folder / f"visits_{rows}.parquet"
    pq.write_table(visits(rows, seed=0), path)
    options = {**OPTIONS, "max_groups_per_unit": groups}
    spark = session(master)
    budget = dpsql.Budget(epsilon=1e9, delta=0.5)
    on_duckdb = dpsql.connect(budget=budget, cache=False)
    on_spark = dpsql.connect(backend="spark", spark=spark, budget=budget, cache=False)
    for con in (on_duckdb, on_spark):
        con.register("visits", str(path), **options)
    tumult = tumult_venv and Tumult(tumult_venv, {
        "path": str(path), "master": master, "unit": "patient_id", "groups": groups,
        "rows": options["max_rows_per_group"], "queries": TUMULT_QUERIES})
    out = []
    view = on_spark.backend.identifier("visits")  # the connection's own temporary view
    for label, sql, key in (QUERIES[i] for i in picked):
        runs = {
            "duck": lambda q=sql: on_duckdb.sql(q, epsilon=1.0, delta=1e-6),
            "spark": lambda q=sql: on_spark.sql(q, epsilon=1.0, delta=1e-6),
            "plain": lambda q=sql: spark.sql(plain_sql(q).replace(" FROM visits",
                                                                  f" FROM {view}")).collect(),
            "floor": lambda k=key: spark.sql(floor_sql(k).replace(" FROM visits",
                                                                  f" FROM {view}")).collect(),
        }
        if tumult and label in TUMULT_QUERIES:
            runs["tumult"] = lambda q=label: tumult.run(q)
        timed = median_times(runs, repeats)
        out.append({"rows": rows, "groups": groups, "query": label, "duckdb_s": timed["duck"],
                    "spark_s": timed["spark"], "plain_spark_s": timed["plain"],
                    "floor_spark_s": timed["floor"], "tumult_s": timed.get("tumult")})
    if tumult:
        tumult.close()
    on_duckdb.close()
    on_spark.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[10_000_000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--queries", type=int, nargs="+", default=list(range(len(QUERIES))),
                        help="positions in bench_visits.QUERIES")
    parser.add_argument("--groups", type=int, default=OPTIONS["max_groups_per_unit"],
                        help="max_groups_per_unit")
    parser.add_argument("--tumult", type=Path, metavar="VENV",
                        help="also time Tumult Analytics from this virtual environment")
    args = parser.parse_args()
    print(f"{'rows':>11} {'g':>2}  {'query':<40} {'DuckDB s':>8} {'Spark s':>8} "
          f"{'plain Spark s':>13} {'floor s':>8} {'Tumult s':>8} {'Spark÷DuckDB':>12} "
          f"{'÷plain Spark':>12} {'÷Spark floor':>12} {'÷Tumult':>8}")
    with tempfile.TemporaryDirectory() as folder:
        for rows in args.rows:
            for r in bench(rows, args.repeats, args.master, Path(folder), args.queries,
                           args.groups, args.tumult):
                tumult = r["tumult_s"]
                seconds, ratio = ("", "") if tumult is None else (
                    f"{tumult:.3f}", f"{r['spark_s'] / tumult:.2f}")
                print(f"{r['rows']:>11,} {r['groups']:>2}  {r['query']:<40} "
                      f"{r['duckdb_s']:>8.3f} {r['spark_s']:>8.3f} {r['plain_spark_s']:>13.3f} "
                      f"{r['floor_spark_s']:>8.3f} {seconds:>8} "
                      f"{r['spark_s'] / r['duckdb_s']:>12.1f} "
                      f"{r['spark_s'] / r['plain_spark_s']:>12.2f} "
                      f"{r['spark_s'] / r['floor_spark_s']:>12.2f} {ratio:>8}", flush=True)


if __name__ == "__main__":
    main()
