"""A one-query process: dpsql against plain DuckDB, from a cold ``python`` to the answer.

Run on purpose (not part of the default test run)::

    .venv/bin/python -m tests.benchmarks.bench_startup --rows 1000000

Writes the visits table to a parquet file, then starts fresh Python processes in turn: one
that imports duckdb and runs the per-unit floor (``COUNT(DISTINCT patient_id)`` by
specialty) on the file, and one that imports dpsql, connects, registers the file and
answers ``COUNT(*)`` by specialty. Both run with bytecode caches, as an installed package
does (pip compiles its modules to ``.pyc``): the children write theirs under the temporary
folder (``PYTHONPYCACHEPREFIX``) even where ``PYTHONDONTWRITEBYTECODE`` is set, and the
warm-up run fills them. Prints the median wall time of each, their ratio, and
where dpsql's process spends its import time (``python -X importtime``, the largest
top-level packages).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq

from dpsql.datasets import visits

PLAIN = """
import duckdb
duckdb.sql("SELECT specialty, COUNT(DISTINCT patient_id) FROM read_parquet('{path}') "
           "GROUP BY specialty").fetchall()
"""
DPSQL = """
import dpsql
con = dpsql.connect(cache=False)
con.register("visits", "{path}", privacy_unit="patient_id", max_groups_per_unit=3,
             max_rows_per_group=4)
con.sql("SELECT specialty, COUNT(*) FROM visits GROUP BY specialty", epsilon=1.0).fetchall()
"""


def cached(folder: Path) -> dict[str, str]:
    """The environment of a child that reads and writes bytecode caches under ``folder``."""
    env = {name: value for name, value in os.environ.items()
           if name != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPYCACHEPREFIX": str(folder / "pycache")}


def wall(code: str, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    return time.perf_counter() - start


def imports(code: str, top: int, env: dict[str, str]) -> list[tuple[str, float]]:
    """The ``top`` largest top-level imports of ``code``'s process, in seconds."""
    err = subprocess.run([sys.executable, "-X", "importtime", "-c", code], check=True,
                         capture_output=True, text=True, env=env).stderr
    found = []
    for line in err.splitlines():
        match = re.match(r"import time:\s+\d+ \|\s+(\d+) \| (\S+)$", line)  # top level only
        if match:
            found.append((match.group(2), int(match.group(1)) / 1e6))
    return sorted(found, key=lambda item: -item[1])[:top]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "visits.parquet"
        pq.write_table(visits(args.rows, seed=0), path)
        plain, private = PLAIN.format(path=path), DPSQL.format(path=path)
        env = cached(Path(folder))
        wall(plain, env), wall(private, env)  # warm-up: the file system and bytecode caches
        times: dict[str, list[float]] = {"plain": [], "dpsql": []}
        for _ in range(args.repeats):
            times["plain"].append(wall(plain, env))
            times["dpsql"].append(wall(private, env))
        medians = {name: statistics.median(values) for name, values in times.items()}
        print(f"{args.rows:,} rows, median of {args.repeats}: plain DuckDB process "
              f"{medians['plain']:.2f} s, dpsql process {medians['dpsql']:.2f} s, ratio "
              f"{medians['dpsql'] / medians['plain']:.2f}")
        print("dpsql's largest imports: " + ", ".join(
            f"{name} {seconds:.2f} s" for name, seconds in imports(private, 8, env)))


if __name__ == "__main__":
    main()
