"""dpsql over the per-unit floor, on data where the contribution limits bind or do not.

Run on purpose (not part of the default test run). The full matrix at 1M and 10M rows, then
a subset at 100M rows read from Parquet on disk::

    .venv/bin/python -m tests.benchmarks.bench_matrix --rows 1000000 10000000
    .venv/bin/python -m tests.benchmarks.bench_matrix --rows 100000000 --parquet /tmp/bench14 \
        --shares half most --limits 1 3 --queries count median pub_sum_avg

A quick run (a few minutes): ``--rows 1000000 --shares none most --limits 1 3``.

On Spark (``--spark MASTER``; needs the ``spark`` extra and ``--parquet``): dpsql's Spark
backend over the same Parquet files, each figure over Spark's own floor (the same
``COUNT(DISTINCT pid)`` in Spark SQL over the connection's view of the file)::

    .venv/bin/python -m tests.benchmarks.bench_matrix --rows 10000000 --parquet /tmp/bench14 \
        --spark 'local[2]' --shares none most --limits 1 3 --queries count sum_avg median

``--pairs`` (DuckDB) also times each query's statistic in plain SQL from the row limit's
clamped per-(unit, group) partials alone, without the choice of groups or noise (``PAIRS``)::

    .venv/bin/python -m tests.benchmarks.bench_matrix --rows 10000000 --shares none most \
        --limits 1 3 8 --pairs

``--tumult VENV`` (with ``--spark``) also times Tumult Analytics, from a virtual environment
that holds it and its Spark 3.5, answering each query from the same Parquet file with the
same limits in its own process (tests/benchmarks/tumult_speed.py), its runs interleaved
with dpsql's and the floor's.

Cells: the share of people over the group limit (``none`` 0, ``half`` 0.5, ``most`` 0.95;
tests/benchmarks/limits_data.py, which is regenerated for each limit so that the share is
the share over *that* limit), the limit (``1``: dpsql's defaults, 1 group and 1 row per
group; ``3`` and ``8``: that many groups, 3 rows per group; ``all``: 50 groups, as many as
there are, 3 rows, run on the ``8`` data), and the query (QUERIES; ``pub_*`` declare the 50
group names public). Each figure is the median of ``--repeats`` wall times of the whole
``con.sql`` call (answer cache off, plan cached after a warm-up) over the median of the
same-run floor ``SELECT grp, COUNT(DISTINCT pid) FROM t GROUP BY grp`` (ungrouped for global
aggregates), the two runs alternating. Every cell also records the load average at its start
and the peak resident memory of the process while it ran (sampled every 20 ms; on Spark
that leaves out the JVM, so it says little there).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import duckdb
import psutil

import dpsql
from tests.benchmarks import limits_data
from tests.benchmarks.bench_spark import Tumult, session

SHARES = {"none": 0.0, "half": 0.5, "most": 0.95}
LIMITS = {"1": None, "3": (3, 3), "8": (8, 3), "all": (len(limits_data.GROUPS), 3)}
"""Limit name → (max_groups_per_unit, max_rows_per_group); None: dpsql's defaults (1, 1)."""
QUERIES = {
    "count": ("SELECT grp, COUNT(*) FROM t GROUP BY grp", True),
    "distinct": ("SELECT grp, COUNT(DISTINCT pid) FROM t GROUP BY grp", True),
    "sum_avg": ("SELECT grp, SUM(v), AVG(v) FROM t GROUP BY grp", True),
    "median_by": ("SELECT grp, MEDIAN(v) FROM t GROUP BY grp", True),
    "median": ("SELECT MEDIAN(v) FROM t", False),
    "pub_count": ("SELECT grp, COUNT(*) FROM tp GROUP BY grp", True),
    "pub_sum_avg": ("SELECT grp, SUM(v), AVG(v) FROM tp GROUP BY grp", True),
}
"""Name → (SQL, grouped). ``t`` has private keys, ``tp`` the 50 group names as public keys."""
BOUNDS = {"v": (0, 2000)}
TUMULT_QUERIES = {
    "count": {"agg": "count", "key": "grp", "public": None},
    "distinct": {"agg": "count_distinct", "key": "grp", "public": None},
    "sum_avg": {"agg": "sum_avg", "key": "grp", "public": None},
    "median_by": {"agg": "median", "key": "grp", "public": None},
    "median": {"agg": "median", "key": None, "public": None},
    "pub_count": {"agg": "count", "key": "grp", "public": list(limits_data.GROUPS)},
    "pub_sum_avg": {"agg": "sum_avg", "key": "grp", "public": list(limits_data.GROUPS)},
}
"""QUERIES as tumult_speed.py answers them, values clamped to BOUNDS."""
_QUANTA = ("CASE WHEN v IS NULL OR isnan(v) THEN NULL "
           "ELSE CAST(ROUND(LEAST(GREATEST(v, 0), 2000) * 1048576) AS BIGINT) END")
_BUCKET = ("CASE WHEN v IS NULL OR isnan(v) THEN NULL "
           "ELSE CAST(FLOOR(LEAST(GREATEST(v * 0.512, 0), 1023)) AS BIGINT) END")
_PAIR_SUMS = ("SELECT grp, SUM(s), SUM(n) FROM (SELECT pid, grp, LEAST(COUNT(x), {c}) AS n, "
              "LEAST(SUM(x), {c} * CAST(2097152000 AS BIGINT)) AS s "
              "FROM (SELECT pid, grp, " + _QUANTA + " AS x FROM {t}) GROUP BY pid, grp) "
              "GROUP BY grp")
_PAIR_COUNTS = ("SELECT grp, SUM(LEAST(n, {c})) FROM (SELECT pid, grp, COUNT(*) AS n FROM {t} "
                "GROUP BY pid, grp) GROUP BY grp")
PAIRS = {
    "count": _PAIR_COUNTS,
    "distinct": "SELECT grp, COUNT(*) FROM (SELECT DISTINCT pid, grp FROM {t}) GROUP BY grp",
    "sum_avg": _PAIR_SUMS,
    "median_by": "SELECT grp, b, SUM(LEAST(1048576, {c} * 1048576 // n)) FROM (SELECT grp, b, "
                 "COUNT(b) OVER (PARTITION BY pid, grp) AS n FROM (SELECT pid, grp, " + _BUCKET +
                 " AS b FROM {t})) WHERE b IS NOT NULL GROUP BY grp, b",
    "median": "WITH n AS (SELECT pid, COUNT(b) AS n FROM (SELECT pid, " + _BUCKET + " AS b "
              "FROM {t}) GROUP BY pid) SELECT b, SUM(LEAST(1048576, {c} * 1048576 // n.n)) "
              "FROM (SELECT pid, " + _BUCKET + " AS b FROM {t}) AS r JOIN n USING (pid) "
              "WHERE b IS NOT NULL GROUP BY b",
    "pub_count": _PAIR_COUNTS,
    "pub_sum_avg": _PAIR_SUMS,
}
"""``--pairs``: each query's statistic in plain DuckDB SQL from per-(unit, group) partials
clamped to the row limit (counts to c rows per group; exact sums of the quantised values to
c rows' bound, where dpsql also scales a pair of more than c values down to c; histogram
weights min(S, c·S/n) per value), but *without* choosing each unit's groups, keyed hashes
or noise: what enforcing the row limit alone costs, so that a cell's ratio minus this one
is the price of the group limit and the rest of dpsql's plan. The quantum and the buckets
are those dpsql uses for BOUNDS; tests/test_bench_pairs.py checks the counts and the
histogram weights against dpsql's bounded query where no choice binds."""


def data_limit(limit: str) -> int:
    """The group limit the data is generated for: ``all`` runs on the ``8`` data."""
    return 8 if limit == "all" else 1 if LIMITS[limit] is None else LIMITS[limit][0]


class PeakMemory:
    """Peak resident set size of this process, sampled in a thread while ``run`` runs."""

    def __init__(self, interval: float = 0.02):
        self.interval = interval
        self.process = psutil.Process()

    def run(self, fn: Callable[[], object]) -> int:
        peak = [self.process.memory_info().rss]
        done = threading.Event()

        def sample() -> None:
            while not done.wait(self.interval):
                peak[0] = max(peak[0], self.process.memory_info().rss)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        try:
            fn()
        finally:
            done.set()
            sampler.join()
        return max(peak[0], self.process.memory_info().rss)


def interleaved(runs: dict[str, Callable[[], object]], repeats: int) -> dict[str, list[float]]:
    """Wall times of each run, alternating so that they share the machine's moods; every
    other round in reverse order, so that no run always follows the same one."""
    for run in runs.values():
        run()  # warm-up: plan cache, file system, allocator
    times: dict[str, list[float]] = {name: [] for name in runs}
    for round_ in range(repeats):
        order = list(runs.items())
        for name, run in order if round_ % 2 == 0 else reversed(order):
            start = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - start)
    return times


@dataclass
class Cell:
    rows: int
    share: str
    limit: str
    query: str
    dp_s: float
    floor_s: float
    ratio: float
    load: float
    peak_rss_gib: float
    dp_times: list[float]
    floor_times: list[float]
    engine: str = "duckdb"
    tumult_s: float | None = None
    tumult_times: list[float] | None = None
    pairs_s: float | None = None
    pairs_times: list[float] | None = None


class Dataset:
    """One generated table, in DuckDB memory or as a Parquet file, with dpsql on top (on
    DuckDB, or on ``spark``'s session when given)."""

    def __init__(self, rows: int, share: str, g: int, parquet: Path | None,
                 memory_limit: str | None, spark: Any = None):
        self.spark = spark
        self.raw = duckdb.connect()
        if memory_limit:
            self.raw.execute(f"SET memory_limit = '{memory_limit}'")
        over = SHARES[share]
        if parquet is None:
            self.raw.register("gen", limits_data.table(rows, groups=g, over=over))
            self.raw.execute("CREATE TABLE t AS SELECT * FROM gen")
            self.raw.unregister("gen")
            self.source: str = "t"
        else:
            path = parquet / f"limits_{rows}_{g}_{share}.parquet"
            if not path.exists():
                limits_data.write_parquet(path, rows, groups=g, over=over)
            self.source = f"read_parquet('{path}')"
            self.path = path
        self.shape = limits_data.describe(self.source, con=self.raw)

    def connect(self, limit: str) -> dpsql.Connection:
        budget = dpsql.Budget(epsilon=1e9, delta=0.5)
        con = (dpsql.connect(backend="spark", spark=self.spark, budget=budget, cache=False)
               if self.spark else dpsql.connect(self.raw, budget=budget, cache=False))
        declared = {} if LIMITS[limit] is None else dict(
            zip(("max_groups_per_unit", "max_rows_per_group"), LIMITS[limit], strict=True))
        source = self.source if self.source == "t" else str(self.path)
        con.register("t", source, privacy_unit="pid", bounds=BOUNDS, **declared)
        con.register("tp", source, privacy_unit="pid", bounds=BOUNDS,
                     public_keys={"grp": list(limits_data.GROUPS)}, **declared)
        return con

    def tumult(self, venv: Path, limit: str) -> Tumult:
        """Tumult Analytics in its own process, over this data's Parquet file with the
        limits of ``limit``."""
        groups, rows = LIMITS[limit] or (1, 1)
        low, high = BOUNDS["v"]
        return Tumult(venv, {
            "path": str(self.path), "master": self.spark.sparkContext.master, "unit": "pid",
            "groups": groups, "rows": rows,
            "queries": {name: {**q, "value": "v", "low": low, "high": high}
                        for name, q in TUMULT_QUERIES.items()}})

    def pairs(self, query: str, limit: str) -> Callable[[], object]:
        """``PAIRS[query]`` in plain DuckDB over this data, with ``limit``'s rows per group."""
        sql = PAIRS[query].format(c=(LIMITS[limit] or (1, 1))[1], t=self.source)
        return lambda: self.raw.sql(sql).fetchall()

    def floor(self, con: dpsql.Connection, grouped: bool) -> Callable[[], object]:
        """The per-unit floor in the engine ``con`` runs on, over the same data."""
        source = con.backend.identifier("t") if self.spark else self.source
        sql = (f"SELECT grp, COUNT(DISTINCT pid) FROM {source} GROUP BY grp" if grouped else
               f"SELECT COUNT(DISTINCT pid) FROM {source}")
        if self.spark:
            return lambda: self.spark.sql(sql).collect()
        return lambda: self.raw.sql(sql).fetchall()


def measure(data: Dataset, con: dpsql.Connection, query: str, repeats: int,
            meter: PeakMemory, tumult: Tumult | None = None,
            pairs: Callable[[], object] | None = None) -> dict:
    sql, grouped = QUERIES[query]
    load = os.getloadavg()[0]
    runs = {"dp": lambda: con.sql(sql, epsilon=1.0, delta=1e-6),
            "floor": data.floor(con, grouped)}
    if tumult:
        runs["tumult"] = lambda: tumult.run(query)
    if pairs:
        runs["pairs"] = pairs
    holder: dict[str, dict[str, list[float]]] = {}
    peak = meter.run(lambda: holder.update(times=interleaved(runs, repeats)))
    times = holder["times"]
    dp, fl = statistics.median(times["dp"]), statistics.median(times["floor"])
    extra = {f"{name}_s": statistics.median(times[name]) for name in ("tumult", "pairs")
             if name in times}
    extra |= {f"{name}_times": times[name] for name in ("tumult", "pairs") if name in times}
    return {"dp_s": dp, "floor_s": fl, "ratio": dp / fl, "load": load,
            "peak_rss_gib": peak / 2**30, "dp_times": times["dp"], "floor_times": times["floor"],
            **extra}


def run(args: argparse.Namespace) -> list[Cell]:
    meter = PeakMemory()
    spark = args.spark and session(args.spark)
    cells = []
    print(f"DuckDB {duckdb.__version__}, dpsql {getattr(dpsql, '__version__', '?')}, "
          f"{os.cpu_count()} cores", flush=True)
    for rows in args.rows:
        for share in args.shares:
            data_key, data = None, None
            for limit in sorted(args.limits, key=data_limit):
                if data_key != data_limit(limit):
                    data = None  # free the previous table first
                    data_key = data_limit(limit)
                    data = Dataset(rows, share, data_key, args.parquet, args.memory_limit,
                                   spark)
                    shape = {k: round(v, 3) for k, v in data.shape.items()}
                    print(f"# data rows={rows:,} share={share} g={data_key}: {shape}",
                          flush=True)
                con = data.connect(limit)
                tumult = data.tumult(args.tumult, limit) if args.tumult else None
                for query in args.queries:
                    pairs = data.pairs(query, limit) if args.pairs else None
                    cell = Cell(rows, share, limit, query,
                                **measure(data, con, query, args.repeats, meter, tumult, pairs),
                                engine="spark" if spark else "duckdb")
                    cells.append(cell)
                    versus = "" if tumult is None else (
                        f" tumult {cell.tumult_s:8.3f} dp÷tumult {cell.dp_s / cell.tumult_s:5.2f}")
                    if cell.pairs_s is not None:
                        versus += f" pairs {cell.pairs_s / cell.floor_s:6.2f}"
                    print(f"{cell.engine} {rows:>11,} {share:>5} {limit:>4} {query:<12} "
                          f"dp {cell.dp_s:8.3f} floor {cell.floor_s:7.3f} ratio {cell.ratio:6.2f} "
                          f"load {cell.load:5.2f} peak {cell.peak_rss_gib:5.2f} GiB{versus}",
                          flush=True)
                    if args.out:
                        with open(args.out, "a") as out:
                            out.write(json.dumps(asdict(cell)) + "\n")
                if tumult:
                    tumult.close()
                con.close()
    return cells


def markdown(cells: list[Cell]) -> str:
    """One table per engine and row count: a line per (share, limit), a column per query
    (÷floor)."""
    lines = []
    for engine, rows in sorted({(c.engine, c.rows) for c in cells}):
        mine = [c for c in cells if c.rows == rows and c.engine == engine]
        queries = [q for q in QUERIES if any(c.query == q for c in mine)]
        lines += [f"\n{engine}, {rows:,} rows (÷ same-run floor; floor s = median grouped "
                  "floor)\n",
                  "| share over | limit | " + " | ".join(queries) + " | floor s | load |",
                  "|---|---|" + "---:|" * (len(queries) + 2)]
        for share, limit, row in _lines(mine):
            floors = [c.floor_s for c in row.values() if QUERIES[c.query][1]]
            loads = [c.load for c in row.values()]
            ratios = " | ".join(f"{row[q].ratio:.2f}" if q in row else "" for q in queries)
            lines.append(f"| {share} | {limit} | {ratios} | "
                         f"{statistics.median(floors) if floors else 0:.3f} | "
                         f"{min(loads):.1f}–{max(loads):.1f} |")
        lines += _side_table(mine, queries, "dpsql ÷ Tumult Analytics (same run; Tumult s in "
                             "brackets)", _versus_tumult)
        lines += _side_table(mine, queries, "dpsql ÷ floor / pairs without a choice ÷ floor "
                             "(same run, `PAIRS`)", _beside_pairs)
    return "\n".join(lines)


def _side_table(cells: list[Cell], queries: list[str], title: str,
                text: Callable[[Cell], str | None]) -> list[str]:
    """A table of ``text(cell)`` per (share, limit) and query, over the cells it has a text
    for (a run beside dpsql's that only some runs make)."""
    timed = [c for c in cells if text(c) is not None]
    if not timed:
        return []
    lines = [f"\n{title}\n", "| share over | limit | " + " | ".join(queries) + " |",
             "|---|---|" + "---:|" * len(queries)]
    for share, limit, row in _lines(timed):
        lines.append(f"| {share} | {limit} | " + " | ".join(
            text(row[q]) or "" if q in row else "" for q in queries) + " |")
    return lines


def _versus_tumult(cell: Cell) -> str | None:
    """dpsql's time over Tumult's (Tumult s in brackets), where Tumult ran."""
    if cell.tumult_s is None:
        return None
    return f"{cell.dp_s / cell.tumult_s:.3f} ({cell.tumult_s:.0f})"


def _beside_pairs(cell: Cell) -> str | None:
    """dpsql's ratio beside the row limit's alone (``PAIRS``), where ``--pairs`` ran."""
    if cell.pairs_s is None:
        return None
    return f"{cell.ratio:.2f} / {cell.pairs_s / cell.floor_s:.2f}"


def _lines(cells: list[Cell]) -> Iterator[tuple[str, str, dict[str, Cell]]]:
    """(share, limit, query → cell) for each (share, limit) that has cells, in table order."""
    for share in SHARES:
        for limit in LIMITS:
            row = {c.query: c for c in cells if c.share == share and c.limit == limit}
            if row:
                yield share, limit, row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--shares", nargs="+", choices=list(SHARES), default=list(SHARES))
    parser.add_argument("--limits", nargs="+", choices=list(LIMITS), default=list(LIMITS))
    parser.add_argument("--queries", nargs="+", choices=list(QUERIES), default=list(QUERIES))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--parquet", type=Path,
                        help="read the data from Parquet files in this folder (written if "
                             "missing) instead of DuckDB tables in memory")
    parser.add_argument("--memory-limit", help="DuckDB memory_limit, e.g. 20GB")
    parser.add_argument("--spark", metavar="MASTER",
                        help="run dpsql and the floor on Spark with this master, e.g. local[2]")
    parser.add_argument("--tumult", type=Path, metavar="VENV",
                        help="with --spark: also time Tumult Analytics (tumult_speed.py) from "
                             "this virtual environment on the same files and limits")
    parser.add_argument("--pairs", action="store_true",
                        help="also time each query's PAIRS form in plain DuckDB (the row "
                             "limit's partials without the choice of groups or noise)")
    parser.add_argument("--out", type=Path, help="append each cell as a JSON line to this file")
    parser.add_argument("--markdown", type=Path, nargs="*",
                        help="print the tables of these JSON-line files and exit")
    args = parser.parse_args()
    if args.spark and not args.parquet:
        parser.error("--spark reads the data from Parquet: give --parquet FOLDER")
    if args.pairs and args.spark:
        parser.error("--pairs times plain DuckDB: leave out --spark")
    if args.tumult and not args.spark:
        parser.error("--tumult runs beside dpsql on Spark: give --spark MASTER")
    if args.markdown:
        cells = [Cell(**json.loads(line)) for path in args.markdown
                 for line in path.read_text().splitlines() if line.strip()]
    else:
        cells = run(args)
    print(markdown(cells))
    peak = psutil.Process().memory_info().rss / 2**30
    print(f"\nload average now {os.getloadavg()}, resident now {peak:.2f} GiB")


if __name__ == "__main__":
    main()
