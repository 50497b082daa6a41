"""What the server's time grid (``--time-quantum``) costs and what it hides, measured.

Two servers per grid, one over D (with one person, named ``TARGET``) and one over D'
(without), each answering over the wire (psycopg). Two private queries are timed from the
client, D and D' interleaved:

- ``presence``: ``COUNT(*) WHERE name = TARGET`` — whether any row passes the WHERE, the
  residual channel no expression amplifies (DuckDB answers an empty aggregate sooner);
- ``typical``: a GROUP BY with an average over the whole table, for the grid's latency cost.

For each it prints the median latency (the grid's cost: compare the rows) and the timing ε
lower bound of the best threshold (``tests/privacy/test_audit_timing.timing_epsilon``)::

    .venv/bin/python -m tests.benchmarks.bench_time_grid --runs 150 --grids 0 0.05 0.1
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from tests.privacy.test_audit_timing import timing_epsilon
from tests.server.conftest import start

PEOPLE = 200_000
TARGET = "alice"
QUERIES = {
    "presence": f"SELECT COUNT(*) AS n FROM t WHERE name = '{TARGET}' AND pid > -{{run}}",
    "typical": "SELECT grp, COUNT(*) AS n, AVG(x) AS m FROM t WHERE x > -{run} GROUP BY grp",
}
"""Each run asks a new question (``{run}``): a repeated one is answered from the cache."""


def _catalog(folder: Path, with_person: bool) -> Path:
    names = [f"person {i}" for i in range(PEOPLE)] + ([TARGET] if with_person else [])
    rows = len(names)
    pq.write_table(pa.table({"pid": list(range(rows)), "name": names,
                             "grp": [i % 5 for i in range(rows)],
                             "x": [float(i % 100) for i in range(rows)]}), folder / "t.parquet")
    catalog = folder / "catalog.toml"
    catalog.write_text('[tables.t]\nsource = "t.parquet"\nprivacy_unit = "pid"\n'
                       'bounds = { x = [0, 100] }\npublic_keys = { grp = [0, 1, 2, 3, 4] }\n')
    return catalog


def measure(grid: float, runs: int) -> dict[str, tuple[float, float]]:
    """Per query: (median latency on D', ms; timing ε lower bound)."""
    with tempfile.TemporaryDirectory() as tmp:
        served = {}
        for side in (True, False):
            folder = Path(tmp, str(side))
            folder.mkdir()
            served[side] = start(folder, catalog=_catalog(folder, side), time_quantum=grid)
        try:
            return {name: _timed(served, sql, runs) for name, sql in QUERIES.items()}
        finally:
            for server in served.values():
                server.server.close()


def _timed(served, sql: str, runs: int) -> tuple[float, float]:
    cons = {side: s.connect(s.new_user(epsilon=1e6, delta=0.5)) for side, s in served.items()}
    times: dict[bool, list[float]] = {True: [], False: []}
    try:
        for con in cons.values():
            con.execute("SET dpsql.epsilon = 0.001")
        for run in range(runs):
            for side in ((True, False) if run % 2 else (False, True)):
                started = time.perf_counter()
                cons[side].execute(sql.format(run=run), prepare=False).fetchall()
                times[side].append(time.perf_counter() - started)
    finally:
        for con in cons.values():
            con.close()
    return statistics.median(times[False]) * 1e3, timing_epsilon(times[True], times[False])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=150)
    parser.add_argument("--grids", type=float, nargs="+", default=[0.0, 0.05, 0.1])
    args = parser.parse_args()
    print(f"{PEOPLE:,} people; {args.runs} runs a side, D and D' interleaved")
    print(f"{'grid s':>7} {'query':>9} {'median ms':>10} {'timing ε':>9}")
    for grid in args.grids:
        for name, (median, epsilon) in measure(grid, args.runs).items():
            print(f"{grid:7.3f} {name:>9} {median:10.2f} {epsilon:9.3f}")


if __name__ == "__main__":
    main()
