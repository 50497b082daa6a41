"""A one-query process: dpsql against plain DuckDB, from a cold ``python`` to the answer.

Run on purpose (not part of the default test run)::

    .venv/bin/python -m tests.benchmarks.bench_startup --rows 1000000

Writes the visits table to a parquet file, then starts fresh Python processes in turn: one
that imports duckdb and runs the per-unit floor (``COUNT(DISTINCT patient_id)`` by
specialty) on the file, and one that imports dpsql, connects, registers the file and
answers ``COUNT(*)`` by specialty. Both run with bytecode caches, as an installed package
does (pip compiles its modules to ``.pyc``): the children write theirs under the temporary
folder (``PYTHONPYCACHEPREFIX``) even where ``PYTHONDONTWRITEBYTECODE`` is set, and the
warm-up run fills them. Prints the median wall time of each, their ratio (with the
load average before and after: the machines are shared, and a busy one moves the ratio), and
where dpsql's process spends its import time (``python -X importtime``, the largest
top-level packages).
"""

from __future__ import annotations

import argparse
import itertools
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
STEPS = (
    ("import and connect", "import dpsql\ncon = dpsql.connect(cache=False)"),
    ("register", 'con.register("visits", "{path}", privacy_unit="patient_id", '
                 'max_groups_per_unit=3, max_rows_per_group=4)'),
    ("query", 'con.sql("SELECT specialty, COUNT(*) FROM visits GROUP BY specialty", '
              'epsilon=1.0).fetchall()'),
)
"""dpsql's process, step by step (its phases: the interpreter's start, these, its exit)."""
DPSQL = "\n".join(code for _, code in STEPS)
TIMED = "import time\nmarks = [time.time()]\n" + "".join(
    f"{code}\nmarks.append(time.time())\n" for _, code in STEPS) + "print(*marks)"
PHASES = ("interpreter start", *(name for name, _ in STEPS), "exit")


def cached(folder: Path) -> dict[str, str]:
    """The environment of a child that reads and writes bytecode caches under ``folder``."""
    env = {name: value for name, value in os.environ.items()
           if name != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPYCACHEPREFIX": str(folder / "pycache")}


def wall(code: str, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    return time.perf_counter() - start


def phases(code: str, env: dict[str, str]) -> list[float]:
    """The seconds of each of PHASES in one run of TIMED's ``code`` (the wall clock)."""
    start = time.time()
    done = subprocess.run([sys.executable, "-c", code], check=True, env=env,
                          capture_output=True, text=True)
    marks = [start, *map(float, done.stdout.split()), time.time()]
    return [after - before for before, after in itertools.pairwise(marks)]


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
        timed = TIMED.format(path=path)
        env = cached(Path(folder))
        wall(plain, env), wall(private, env)  # warm-up: the file system and bytecode caches
        load = os.getloadavg()[0]  # the machine's other work: both processes share it
        times: dict[str, list[float]] = {"plain": [], "dpsql": []}
        steps: list[list[float]] = []
        for _ in range(args.repeats):
            times["plain"].append(wall(plain, env))
            times["dpsql"].append(wall(private, env))
            steps.append(phases(timed, env))
        medians = {name: statistics.median(values) for name, values in times.items()}
        print(f"{args.rows:,} rows, median of {args.repeats}: plain DuckDB process "
              f"{medians['plain']:.2f} s, dpsql process {medians['dpsql']:.2f} s, ratio "
              f"{medians['dpsql'] / medians['plain']:.2f} (load average {load:.1f} before, "
              f"{os.getloadavg()[0]:.1f} after)")
        print("dpsql's phases (medians): " + ", ".join(
            f"{name} {statistics.median(column):.3f} s"
            for name, column in zip(PHASES, zip(*steps, strict=True), strict=True)))
        print("dpsql's largest imports: " + ", ".join(
            f"{name} {seconds:.2f} s" for name, seconds in imports(private, 8, env)))


if __name__ == "__main__":
    main()
