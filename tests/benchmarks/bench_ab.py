"""Two versions of dpsql's bounded SQL for one query, timed against each other in one DuckDB.

Run on purpose (not part of the default test run). For a rewrite change: check out the old
commit somewhere (``git worktree add /tmp/old HEAD~1``) and compare::

    .venv/bin/python -m tests.benchmarks.bench_ab --old /tmp/old --new . \\
        --sql "SELECT grp, MEDIAN(v) FROM t GROUP BY grp" --limit 3 --share most

Each version's ``rewritten_sql`` comes from its own Python process (``PYTHONPATH`` at that
checkout). Both run on the same generated table (tests/benchmarks/limits_data.py, in DuckDB
memory) with the same fixed salt; their answers must be equal (lists compared as multisets,
as ``ARRAY_AGG`` has no order) before anything is timed. Then old, new and the floor
(``COUNT(DISTINCT pid)`` grouped by ``grp``) alternate after one warm-up each
(``bench_matrix.interleaved``), and the medians are printed with their ratio to the floor.
Only the bounded query is timed: no planning, noise or Python. ``--public`` declares
``grp``'s public domain (the matrix's ``pub_`` queries).

On Spark (``--spark MASTER --parquet FOLDER``; needs the ``spark`` extra): each checkout
renders its Spark SQL (``SparkBackend.render``, in a process with a Spark session of its
own), and both run in one session over the Parquet file that bench_matrix.py writes for the
same rows, limit and share, against Spark's floor::

    .venv/bin/python -m tests.benchmarks.bench_ab --old /tmp/old --new . \\
        --sql "SELECT grp, MEDIAN(v) FROM t GROUP BY grp" --limit 3 --share most \\
        --spark 'local[2]' --parquet /tmp/bench14s --repeats 3
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import sqlglot
from sqlglot import exp

from dpsql.rewrite.digest import salt_parameters
from tests.benchmarks import limits_data
from tests.benchmarks.bench_matrix import BOUNDS, LIMITS, SHARES, data_limit, interleaved
from tests.benchmarks.bench_spark import session

SALT = "bench-ab-fixed-salt"
SQL_OF = """
import ast, sys, dpsql, pyarrow as pa
sql, groups, rows, bounds = sys.argv[1], sys.argv[2], sys.argv[3], ast.literal_eval(sys.argv[4])
public = ast.literal_eval(sys.argv[5])
print(dpsql.__file__)
con = dpsql.connect(budget=dpsql.Budget(epsilon=1e9, delta=0.5), cache=False)
limits = {} if groups == "0" else {"max_groups_per_unit": int(groups),
                                   "max_rows_per_group": int(rows)}
schema = pa.schema([("pid", pa.int64()), ("grp", pa.string()), ("v", pa.float64())])
con.register("t", schema.empty_table(), privacy_unit="pid", bounds=bounds, **limits,
             public_keys={"grp": public} if public else None)
print(con.explain(sql, epsilon=1.0, delta=1e-6).data["rewritten_sql"])
"""


SPARK_SQL_OF = """
import ast, sys, dpsql, pyarrow as pa
sql, groups, rows, bounds = sys.argv[1], sys.argv[2], sys.argv[3], ast.literal_eval(sys.argv[4])
public = ast.literal_eval(sys.argv[5])
print(dpsql.__file__)
con = dpsql.connect(backend="spark", spark="local[1]", cache=False,
                    budget=dpsql.Budget(epsilon=1e9, delta=0.5))
limits = {} if groups == "0" else {"max_groups_per_unit": int(groups),
                                   "max_rows_per_group": int(rows)}
schema = pa.schema([("pid", pa.int64()), ("grp", pa.string()), ("v", pa.float64())])
con.register("t", schema.empty_table(), privacy_unit="pid", bounds=bounds, **limits,
             public_keys={"grp": public} if public else None)
text = con.backend.render(con.compile(sql, epsilon=1.0, delta=1e-6).bounded)
print(text.replace(con.backend.identifier("t"), "{t}"))
"""
SPARK_VIEW = "bench_ab_t"


def bounded_sql(checkout: Path, sql: str, limit: str, spark: bool = False,
                public: bool = False) -> str:
    """The bounded SQL that the dpsql at ``checkout`` writes for ``sql`` under ``limit``
    (its Spark SQL over the view ``SPARK_VIEW`` when ``spark``; with ``grp``'s public
    domain, the generator's groups, when ``public``)."""
    groups, rows = LIMITS[limit] or (0, 0)
    # ``python -c`` puts its working directory first on sys.path: run it in the checkout,
    # or every version imports the dpsql of the directory bench_ab was started from.
    done = subprocess.run([sys.executable, "-c", SPARK_SQL_OF if spark else SQL_OF, sql,
                           str(groups), str(rows), repr(BOUNDS),
                           repr(list(limits_data.GROUPS) if public else None)],
                          cwd=checkout.resolve(),
                          env={**os.environ, "PYTHONPATH": str(checkout.resolve())},
                          capture_output=True, text=True, check=True)
    imported, text = done.stdout.split("\n", 1)
    if Path(imported).resolve().parent.parent != checkout.resolve():
        sys.exit(f"{checkout} wrote its SQL with the dpsql at {imported}")
    return text.replace("{t}", SPARK_VIEW) if spark else text


def bound(sql: str, dialect: str) -> dict[str, str | int]:
    """The salt ``SALT`` and its constants, as far as ``sql`` reads them."""
    read = {p.name for p in sqlglot.parse_one(sql, read=dialect).find_all(exp.Placeholder)}
    return salt_parameters(SALT, read)


def answers(con: duckdb.DuckDBPyConnection, sql: str) -> list[tuple]:
    """Every row, lists sorted (``ARRAY_AGG`` is unordered), rows sorted."""
    rows = con.execute(sql, bound(sql, "duckdb")).fetchall()  # global ones choose nothing
    tidy = [tuple(sorted(v, key=str) if isinstance(v, list) else v for v in r) for r in rows]
    return sorted(tidy, key=str)


def spark_answers(spark: Any, sql: str) -> list[tuple]:
    """``answers`` on Spark: every row, lists (``COLLECT_LIST``, unordered) sorted."""
    rows = spark.sql(sql, args=bound(sql, "spark") or None).collect()
    tidy = [tuple(sorted(map(str, v)) if isinstance(v, list) else v for v in r) for r in rows]
    return sorted(tidy, key=str)


def spark_runs(args: argparse.Namespace, versions: dict[str, str]) -> dict[str, Callable]:
    """Old, new and Spark's floor over the Parquet file of ``args``' rows, limit and share."""
    path = args.parquet / f"limits_{args.rows}_{data_limit(args.limit)}_{args.share}.parquet"
    if not path.exists():
        limits_data.write_parquet(path, args.rows, groups=data_limit(args.limit),
                                  over=SHARES[args.share])
    spark = session(args.spark)
    spark.read.parquet(str(path)).createOrReplaceTempView(SPARK_VIEW)
    floor = f"SELECT grp, COUNT(DISTINCT pid) FROM {SPARK_VIEW} GROUP BY grp"
    return {**{name: lambda s=text: spark_answers(spark, s) for name, text in versions.items()},
            "floor": lambda: spark.sql(floor).collect()}


def duckdb_runs(args: argparse.Namespace, versions: dict[str, str]) -> dict[str, Callable]:
    """Old, new and the floor over the generated table in DuckDB memory."""
    con = duckdb.connect()
    con.register("gen", limits_data.table(args.rows, groups=data_limit(args.limit),
                                          over=SHARES[args.share]))
    con.execute("CREATE TABLE t AS SELECT * FROM gen")
    con.unregister("gen")
    floor = "SELECT grp, COUNT(DISTINCT pid) FROM t GROUP BY grp"
    return {**{name: lambda s=text: answers(con, s) for name, text in versions.items()},
            "floor": lambda: con.sql(floor).fetchall()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--old", type=Path, required=True, help="checkout of the old dpsql")
    parser.add_argument("--new", type=Path, required=True, help="checkout of the new dpsql")
    parser.add_argument("--sql", required=True, help="a query over t(pid, grp, v)")
    parser.add_argument("--limit", choices=list(LIMITS), default="1")
    parser.add_argument("--share", choices=list(SHARES), default="most")
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--spark", metavar="MASTER", help="time the Spark SQL on this master")
    parser.add_argument("--parquet", type=Path, help="with --spark: the Parquet folder")
    parser.add_argument("--public", action="store_true",
                        help="declare grp's public domain (the generator's groups)")
    args = parser.parse_args()
    if args.spark and not args.parquet:
        parser.error("--spark reads the data from Parquet: give --parquet FOLDER")
    versions = {name: bounded_sql(path, args.sql, args.limit, spark=bool(args.spark),
                                  public=args.public)
                for name, path in (("old", args.old), ("new", args.new))}
    if versions["old"] == versions["new"]:
        print("note: both versions write the same SQL")
    runs = (spark_runs if args.spark else duckdb_runs)(args, versions)
    if runs["old"]() != runs["new"]():
        sys.exit("the two versions answer differently on this table")
    times = interleaved(runs, args.repeats)
    medians = {name: statistics.median(t) for name, t in times.items()}
    for name, seconds in medians.items():
        print(f"{name:<6} {seconds:8.3f} s  {seconds / medians['floor']:6.2f} floors")


if __name__ == "__main__":
    main()
