"""dpsql against plain DuckDB on the synthetic visits table.

Run on purpose (not part of the default test run)::

    .venv/bin/python tests/benchmarks/bench_visits.py --rows 1000000 10000000

For each query it prints the median wall time of dpsql (parse → rewrite →
DuckDB → noise → post-processing) and two ratios measured in the same run:
(a) over plain DuckDB running the same non-private aggregate, and (b) over the
per-unit floor ``SELECT key, COUNT(DISTINCT patient_id) ... GROUP BY key`` that
any user-level DP engine must at least pay. Target: dpsql ≤ 2× (b) at 10M rows.
"""

from __future__ import annotations

import argparse
import statistics
import time

import duckdb

import dpsql
from dpsql.datasets import REGIONS, visits

QUERIES = [
    ("COUNT(*)", "SELECT COUNT(*) FROM visits", None),
    ("COUNT(*) BY specialty", "SELECT specialty, COUNT(*) FROM visits GROUP BY specialty",
     "specialty"),
    ("COUNT(DISTINCT patient_id) BY specialty",
     "SELECT specialty, COUNT(DISTINCT patient_id) FROM visits GROUP BY specialty", "specialty"),
    ("SUM, AVG(cost) BY region",
     "SELECT region, SUM(cost), AVG(cost) FROM visits GROUP BY region", "region"),
    ("AVG(age)", "SELECT AVG(age) FROM visits", None),
]


def plain_sql(sql: str) -> str:
    """The non-private twin: same aggregate with the clamps dpsql would apply."""
    return sql.replace("SUM(cost)", "SUM(LEAST(GREATEST(cost, 0), 2000))").replace(
        "AVG(cost)", "AVG(LEAST(GREATEST(cost, 0), 2000))")


def floor_sql(key: str | None) -> str:
    if key is None:
        return "SELECT COUNT(DISTINCT patient_id) FROM visits"
    return f"SELECT {key}, COUNT(DISTINCT patient_id) FROM visits GROUP BY {key}"


def median_times(runs: dict, repeats: int) -> dict[str, float]:
    """Median wall time of each run, the runs interleaved so that they share the machine's
    moods (a shared machine drifts by tens of percent between consecutive runs)."""
    for run in runs.values():
        run()  # warm-up: caches, plan cache, file system
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeats):
        for name, run in runs.items():
            start = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in times.items()}


def bench(rows: int, repeats: int) -> list[dict]:
    raw = duckdb.connect()
    raw.register("visits_arrow", visits(rows, seed=0))
    raw.execute("CREATE TABLE visits AS SELECT * FROM visits_arrow")
    raw.unregister("visits_arrow")
    # No answer cache: a repeated query would be answered from it in about a millisecond.
    con = dpsql.connect(raw, budget=dpsql.Budget(epsilon=1e9, delta=0.5), cache=False)
    con.register("visits", "visits", privacy_unit="patient_id",
                 bounds={"cost": (0, 2000), "age": (0, 100)}, max_groups_per_unit=3,
                 max_rows_per_group=4, public_keys={"region": list(REGIONS)})
    out = []
    for label, sql, key in QUERIES:
        timed = median_times({
            "dp": lambda q=sql: con.sql(q, epsilon=1.0, delta=1e-6),
            "plain": lambda q=sql: raw.sql(plain_sql(q)).fetchall(),
            "floor": lambda k=key: raw.sql(floor_sql(k)).fetchall()}, repeats)
        dp, plain, floor = timed["dp"], timed["plain"], timed["floor"]
        out.append({"rows": rows, "query": label, "dpsql_s": dp, "plain_s": plain,
                    "floor_s": floor, "vs_plain": dp / plain, "vs_floor": dp / floor})
    con.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"{'rows':>11}  {'query':<40} {'dpsql s':>8} {'plain s':>8} {'floor s':>8} "
          f"{'÷plain':>7} {'÷floor':>7}")
    for rows in args.rows:
        for r in bench(rows, args.repeats):
            print(f"{r['rows']:>11,}  {r['query']:<40} {r['dpsql_s']:>8.3f} {r['plain_s']:>8.3f} "
                  f"{r['floor_s']:>8.3f} {r['vs_plain']:>7.2f} {r['vs_floor']:>7.2f}")


if __name__ == "__main__":
    main()
