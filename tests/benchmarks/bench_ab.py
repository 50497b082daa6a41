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
Only the bounded query is timed: no planning, noise or Python.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path

import duckdb

from tests.benchmarks import limits_data
from tests.benchmarks.bench_matrix import BOUNDS, LIMITS, SHARES, data_limit, interleaved

SALT = "bench-ab-fixed-salt"
SQL_OF = """
import ast, sys, dpsql, pyarrow as pa
sql, groups, rows, bounds = sys.argv[1], sys.argv[2], sys.argv[3], ast.literal_eval(sys.argv[4])
con = dpsql.connect(budget=dpsql.Budget(epsilon=1e9, delta=0.5), cache=False)
limits = {} if groups == "0" else {"max_groups_per_unit": int(groups),
                                   "max_rows_per_group": int(rows)}
schema = pa.schema([("pid", pa.int64()), ("grp", pa.string()), ("v", pa.float64())])
con.register("t", schema.empty_table(), privacy_unit="pid", bounds=bounds, **limits)
print(con.explain(sql, epsilon=1.0, delta=1e-6).data["rewritten_sql"])
"""


def bounded_sql(checkout: Path, sql: str, limit: str) -> str:
    """The bounded SQL that the dpsql at ``checkout`` writes for ``sql`` under ``limit``."""
    groups, rows = LIMITS[limit] or (0, 0)
    done = subprocess.run([sys.executable, "-c", SQL_OF, sql, str(groups), str(rows),
                           repr(BOUNDS)],
                          env={"PYTHONPATH": str(checkout.resolve())}, capture_output=True,
                          text=True, check=True)
    return done.stdout


def answers(con: duckdb.DuckDBPyConnection, sql: str) -> list[tuple]:
    """Every row, lists sorted (``ARRAY_AGG`` is unordered), rows sorted."""
    salt = {"__dp_salt": SALT} if "$__dp_salt" in sql else {}  # global ones choose nothing
    rows = con.execute(sql, salt).fetchall()
    tidy = [tuple(sorted(v, key=str) if isinstance(v, list) else v for v in r) for r in rows]
    return sorted(tidy, key=str)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--old", type=Path, required=True, help="checkout of the old dpsql")
    parser.add_argument("--new", type=Path, required=True, help="checkout of the new dpsql")
    parser.add_argument("--sql", required=True, help="a query over t(pid, grp, v)")
    parser.add_argument("--limit", choices=list(LIMITS), default="1")
    parser.add_argument("--share", choices=list(SHARES), default="most")
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    versions = {name: bounded_sql(path, args.sql, args.limit)
                for name, path in (("old", args.old), ("new", args.new))}
    con = duckdb.connect()
    con.register("gen", limits_data.table(args.rows, groups=data_limit(args.limit),
                                          over=SHARES[args.share]))
    con.execute("CREATE TABLE t AS SELECT * FROM gen")
    con.unregister("gen")
    if answers(con, versions["old"]) != answers(con, versions["new"]):
        sys.exit("the two versions answer differently on this table")
    floor = "SELECT grp, COUNT(DISTINCT pid) FROM t GROUP BY grp"
    runs = {**{name: lambda s=text: answers(con, s) for name, text in versions.items()},
            "floor": lambda: con.sql(floor).fetchall()}
    times = interleaved(runs, args.repeats)
    medians = {name: statistics.median(t) for name, t in times.items()}
    for name, seconds in medians.items():
        print(f"{name:<6} {seconds:8.3f} s  {seconds / medians['floor']:6.2f} floors")


if __name__ == "__main__":
    main()
