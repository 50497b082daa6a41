"""dpsql over the floor, on data where the contribution limits bind or do not, in each form
users register data in.

Run on purpose (not part of the default test run). A quick run (a few minutes), then the
matrix at 1M and 10M rows over every source form, then a subset at 100M rows from Parquet::

    .venv/bin/python -m tests.benchmarks.bench_matrix --rows 1000000 --shares none most \
        --limits 1 3 --queries count sum_avg median_by
    .venv/bin/python -m tests.benchmarks.bench_matrix --rows 1000000 10000000 --out m.jsonl
    .venv/bin/python -m tests.benchmarks.bench_matrix --rows 100000000 --sources parquet glob \
        --shares half most --limits 1 3 --queries count median pub_sum_avg

Sources (``--sources``, tests/benchmarks/sources.py): ``table``, the data generated into a
DuckDB table in memory and registered by its name; ``parquet``, one Parquet file; ``csv``,
one CSV file; ``glob``, the same rows in 8 Parquet files registered by the glob
``.../part-*.parquet``. Each file form is registered by its path, as users register files
(``con.register("t", path, ...)``; dpsql's DuckDB backend reads Parquet through a view and
loads a CSV into a table at registration, so ``register s`` in the tables is that load).
The files are written once into ``--data`` (default ``/tmp/bench_matrix``) and reused.

On Spark (``--spark MASTER``; needs the ``spark`` extra; the file forms only): dpsql's Spark
backend over the same files, each figure over Spark's own floors, in Spark SQL over the
connection's view of the files::

    .venv/bin/python -m tests.benchmarks.bench_matrix --rows 10000000 --spark 'local[2]' \
        --sources parquet glob --shares none most --limits 1 3 --queries count sum_avg median

``--pairs`` also times each query's statistic in plain SQL (DuckDB's, or on Spark the same
written in Spark SQL) from the row limit's clamped per-(unit, group) partials alone, without
the choice of groups or noise (``PAIRS``), and, where the query's strategy keeps pairs, the
same with each unit's first g pairs ranked in a window (``CHOSEN``)::

    .venv/bin/python -m tests.benchmarks.bench_matrix --rows 10000000 --shares none most \
        --limits 1 3 8 --sources table --pairs

``--tumult VENV`` (with ``--spark`` and Parquet sources) also times Tumult Analytics, from a
virtual environment that holds it and its Spark 3.5, answering each query from the same
Parquet file(s) with the same limits in its own process (tests/benchmarks/tumult_speed.py),
its runs interleaved with dpsql's and the floors'.

Cells: the share of people over the group limit (``none`` 0, ``half`` 0.5, ``most`` 0.95;
tests/benchmarks/limits_data.py, which is regenerated for each limit so that the share is
the share over *that* limit; its rows arrive shuffled and carry five columns no query reads),
the limit (``1``: dpsql's defaults, 1 group and 1 row per group; ``3`` and ``8``: that many
groups, 3 rows per group; ``all``: 50 groups, as many as there are, 3 rows, run on the ``8``
data), the query (QUERIES; ``pub_*`` declare the 50 group names public) and the source.
Each figure is the median of ``--repeats`` wall times of the whole ``con.sql`` call (answer
cache off, plan cached after a warm-up) over the floor: the slower of the medians of two
plain runs over the same source form (the file read by ``read_parquet``/``read_csv_auto``,
the table, or on Spark the connection's view), all three runs alternating:

- the per-unit floor ``SELECT grp, COUNT(DISTINCT pid) FROM <source> GROUP BY grp``
  (ungrouped for global aggregates): what any per-person bounding has to read and group;
- the plain query: the query's own SQL without privacy, written by sqlglot in the engine's
  dialect (``MEDIAN`` as DuckDB's exact median, or Spark's): what the answer costs without
  dpsql.

Every cell records both floors (``floor_unit_s``, ``floor_plain_s``), the time of
registering ``t``, the load average at its start and the peak resident memory of the
process while it ran (sampled every 20 ms; on Spark that leaves out the JVM, so it says
little there). ``--markdown FILE...`` prints the tables of ``--out`` files, older ones too.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from itertools import groupby
from pathlib import Path
from typing import Any

import duckdb
import psutil
import sqlglot
from sqlglot import exp

import dpsql
from tests.benchmarks import limits_data, sources
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


_PAIR_ROWS = {
    "count": ("SELECT pid, grp, LEAST(COUNT(*), {c}) AS n FROM {t} GROUP BY pid, grp",
              "SUM(n)"),
    "distinct": ("SELECT pid, grp FROM {t} GROUP BY pid, grp", "COUNT(*)"),
    "sum_avg": ("SELECT pid, grp, LEAST(COUNT(x), {c}) AS n, LEAST(SUM(x), {c} * "
                "CAST(2097152000 AS BIGINT)) AS s FROM (SELECT pid, grp, " + _QUANTA +
                " AS x FROM {t}) GROUP BY pid, grp", "SUM(s), SUM(n)"),
}
CHOSEN = {query: ("SELECT grp, " + total + " FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY "
                  "pid ORDER BY HASH(pid, grp)) AS r FROM (" + pairs + ")) "
                  "WHERE r BETWEEN 1 AND {g} GROUP BY grp")
          for query, (pairs, total) in {**_PAIR_ROWS, "pub_count": _PAIR_ROWS["count"],
                                        "pub_sum_avg": _PAIR_ROWS["sum_avg"]}.items()}
"""``--pairs`` also times, for the queries whose strategy keeps pairs, ``PAIRS`` with each
unit's first g pairs chosen as ``first_pairs_by_window`` chooses them, in plain SQL: ranked
by a window over the unit's pairs in the engine's own hash order and cut at ``BETWEEN 1 AND
g`` (dpsql's cut: ``<= g`` is DuckDB's slower top-N), without the keyed order, the groups'
codes or noise. What any plan that ranks each unit's pairs in a window costs: a cell above
it by little is as fast as its strategy allows (tests/test_bench_pairs.py checks it keeps
every pair where nobody is over g, and one per unit at g = 1)."""


def pairs_sql(query: str, c: int, table: str, dialect: str = "duckdb") -> str:
    """``PAIRS[query]`` at ``c`` rows per group over ``table``, written by sqlglot in
    ``dialect`` (tests/test_bench_pairs.py checks that Spark's form gives DuckDB's answers).

    >>> pairs_sql("distinct", 3, "t", "spark")
    'SELECT grp, COUNT(*) FROM (SELECT DISTINCT pid, grp FROM t) GROUP BY grp'
    """
    return sqlglot.transpile(PAIRS[query].format(c=c, t=table), read="duckdb",
                             write=dialect)[0]


def chosen_sql(query: str, limits: tuple[int, int], table: str, dialect: str = "duckdb"
               ) -> str | None:
    """``CHOSEN[query]`` at (g, c) over ``table`` in ``dialect``; None where the query's
    strategy keeps no pairs (the quantiles rank rows).

    >>> chosen_sql("distinct", (3, 3), "t")
    'SELECT grp, COUNT(*) FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY pid ORDER BY \
HASH(pid, grp)) AS r FROM (SELECT pid, grp FROM t GROUP BY pid, grp)) WHERE r BETWEEN 1 AND 3 \
GROUP BY grp'
    """
    if query not in CHOSEN:
        return None
    g, c = limits
    return sqlglot.transpile(CHOSEN[query].format(g=g, c=c, t=table), read="duckdb",
                             write=dialect)[0]


def in_duckdb(spark_table: str) -> str:
    """A table name as Spark SQL writes it, as DuckDB SQL writes it: PAIRS and CHOSEN are
    DuckDB SQL that sqlglot then writes in Spark SQL (``pairs_sql``), so a view's backquoted
    name must reach them in DuckDB's quotes.

    >>> in_duckdb("`dpsql_0a1b2c3d_t`")
    '"dpsql_0a1b2c3d_t"'
    """
    return sqlglot.exp.to_table(spark_table, dialect="spark").sql("duckdb")


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


@dataclass(frozen=True)
class Cell:
    """One (rows, share, limit, query, source) figure. ``floor_s`` is the slower of the two
    floors (``floor_unit_s``, ``floor_plain_s``) and ``ratio`` is ``dp_s`` over it."""

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
    floor_unit_s: float
    floor_unit_times: list[float]
    engine: str = "duckdb"
    source: str = "unrecorded"
    floor_plain_s: float | None = None
    floor_plain_times: list[float] | None = None
    register_s: float | None = None
    tumult_s: float | None = None
    tumult_times: list[float] | None = None
    pairs_s: float | None = None
    pairs_times: list[float] | None = None
    chosen_s: float | None = None
    chosen_times: list[float] | None = None


def cell_from_json(fields: dict[str, Any]) -> Cell:
    """A Cell from one ``--out`` line, older lines too: before the plain floor,
    ``floor_s``/``floor_times`` were the per-unit floor's, and the source was not recorded.

    >>> old = {"rows": 10, "share": "none", "limit": "1", "query": "count", "dp_s": 2.0,
    ...        "floor_s": 1.0, "ratio": 2.0, "load": 0.5, "peak_rss_gib": 1.0,
    ...        "dp_times": [2.0], "floor_times": [1.0]}
    >>> cell = cell_from_json(old)
    >>> cell.floor_unit_s, cell.floor_plain_s, cell.source
    (1.0, None, 'unrecorded')
    """
    if "floor_times" in fields:
        fields = {name: value for name, value in fields.items() if name != "floor_times"} | {
            "floor_unit_s": fields["floor_s"], "floor_unit_times": fields["floor_times"]}
    return Cell(**fields)


class Dataset:
    """One generated table in one SOURCES form (tests/benchmarks/sources.py), with dpsql on
    top (on DuckDB, or on ``spark``'s session when given). The ``table`` form is generated
    in memory and needs no ``folder``; the file forms are written there once."""

    def __init__(self, rows: int, share: str, g: int, source: str = "table",
                 folder: Path | None = None, memory_limit: str | None = None,
                 spark: Any = None):
        self.rows, self.share, self.spark, self.source = rows, share, spark, source
        self.raw = duckdb.connect()
        if memory_limit:
            self.raw.execute(f"SET memory_limit = '{memory_limit}'")
        if source == "table":
            self.raw.register("gen", limits_data.table(rows, groups=g, over=SHARES[share]))
            self.raw.execute("CREATE TABLE t AS SELECT * FROM gen")
            self.raw.unregister("gen")
            self.registered, self.scan = "t", "t"
        else:
            if folder is None:
                raise ValueError(f"the {source} form is read from files: give a folder")
            files = sources.Files(folder, rows, g, share, SHARES[share])
            self.registered = files.written(source)
            self.scan = sources.scan(source, self.registered)

    def shape(self) -> dict[str, float]:
        """limits_data.describe of this data (one pass over it)."""
        return limits_data.describe(self.scan, con=self.raw)

    def connect(self, limit: str) -> tuple[dpsql.Connection, float]:
        """dpsql over this data with ``limit``'s limits; and the wall time of registering
        ``t`` (the catalog's read of the file's columns; for CSV on DuckDB, its load)."""
        budget = dpsql.Budget(epsilon=1e9, delta=0.5)
        con = (dpsql.connect(backend="spark", spark=self.spark, budget=budget, cache=False)
               if self.spark else dpsql.connect(self.raw, budget=budget, cache=False))
        declared = {} if LIMITS[limit] is None else dict(
            zip(("max_groups_per_unit", "max_rows_per_group"), LIMITS[limit], strict=True))
        start = time.perf_counter()
        con.register("t", self.registered, privacy_unit="pid", bounds=BOUNDS, **declared)
        register_s = time.perf_counter() - start
        con.register("tp", self.registered, privacy_unit="pid", bounds=BOUNDS,
                     public_keys={"grp": list(limits_data.GROUPS)}, **declared)
        return con, register_s

    def tumult(self, venv: Path, limit: str) -> Tumult:
        """Tumult Analytics in its own process, over this data's Parquet file(s) with the
        limits of ``limit``."""
        groups, rows = LIMITS[limit] or (1, 1)
        low, high = BOUNDS["v"]
        return Tumult(venv, {
            "path": self.registered, "master": self.spark.sparkContext.master, "unit": "pid",
            "groups": groups, "rows": rows,
            "queries": {name: {**q, "value": "v", "low": low, "high": high}
                        for name, q in TUMULT_QUERIES.items()}})

    def pairs(self, query: str, limit: str,
              con: dpsql.Connection | None = None) -> Callable[[], object]:
        """``PAIRS[query]`` in plain SQL over this data, with ``limit``'s rows per group: in
        DuckDB, or on Spark in Spark SQL (``pairs_sql``) over ``con``'s view of the files."""
        sql = pairs_sql(query, (LIMITS[limit] or (1, 1))[1], self._template_scan(con),
                        "spark" if self.spark else "duckdb")
        return self.runner(sql)

    def chosen(self, query: str, limit: str,
               con: dpsql.Connection | None = None) -> Callable[[], object] | None:
        """``CHOSEN[query]`` in plain SQL over this data at ``limit`` (``chosen_sql``), or
        None where the query keeps no pairs."""
        sql = chosen_sql(query, LIMITS[limit] or (1, 1), self._template_scan(con),
                         "spark" if self.spark else "duckdb")
        return None if sql is None else self.runner(sql)

    def unit_sql(self, grouped: bool, con: dpsql.Connection | None = None) -> str:
        """The per-unit floor over this data (over ``con``'s view of it on Spark)."""
        scan = self._scan(con)
        return (f"SELECT grp, COUNT(DISTINCT pid) FROM {scan} GROUP BY grp" if grouped else
                f"SELECT COUNT(DISTINCT pid) FROM {scan}")

    def plain_sql(self, sql: str, con: dpsql.Connection | None = None) -> str:
        """``sql`` without privacy: each table it names read as this data, in the engine's
        dialect (sqlglot writes dpsql's aggregates, e.g. MEDIAN, as the engine's own)."""
        dialect = "spark" if self.spark else "duckdb"
        tree = sqlglot.parse_one(sql, read="duckdb")
        scan = sqlglot.parse_one(f"SELECT * FROM {self._scan(con)}", read=dialect)
        for table in list(tree.find_all(exp.Table)):
            table.replace(scan.args["from_"].this.copy())
        return tree.sql(dialect)

    def runner(self, sql: str) -> Callable[[], object]:
        """A run of ``sql`` in plain SQL on this data's engine, every row fetched."""
        if self.spark:
            return lambda: self.spark.sql(sql).collect()
        return lambda: self.raw.sql(sql).fetchall()

    def close(self) -> None:
        self.raw.close()

    def _scan(self, con: dpsql.Connection | None) -> str:
        return con.backend.identifier("t") if self.spark else self.scan

    def _template_scan(self, con: dpsql.Connection | None) -> str:
        """``_scan`` as the DuckDB SQL of PAIRS and CHOSEN names it (``in_duckdb``)."""
        return in_duckdb(self._scan(con)) if self.spark else self.scan


def measure(data: Dataset, con: dpsql.Connection, query: str, repeats: int,
            meter: PeakMemory, tumult: Tumult | None = None,
            pairs: Callable[[], object] | None = None,
            chosen: Callable[[], object] | None = None) -> dict:
    """dpsql's run of ``query``, both floors and the runs beside them, interleaved."""
    sql, grouped = QUERIES[query]
    load = os.getloadavg()[0]
    runs = {"dp": lambda: con.sql(sql, epsilon=1.0, delta=1e-6),
            "floor_unit": data.runner(data.unit_sql(grouped, con)),
            "floor_plain": data.runner(data.plain_sql(sql, con))}
    if tumult:
        runs["tumult"] = lambda: tumult.run(query)
    if pairs:
        runs["pairs"] = pairs
    if chosen:
        runs["chosen"] = chosen
    holder: dict[str, dict[str, list[float]]] = {}
    peak = meter.run(lambda: holder.update(times=interleaved(runs, repeats)))
    times = holder["times"]
    medians = {name: statistics.median(values) for name, values in times.items()}
    floor = max(medians["floor_unit"], medians["floor_plain"])
    return {"dp_s": medians["dp"], "floor_s": floor, "ratio": medians["dp"] / floor,
            "load": load, "peak_rss_gib": peak / 2**30, "dp_times": times["dp"],
            **{f"{name}_s": medians[name] for name in runs if name != "dp"},
            **{f"{name}_times": times[name] for name in runs if name != "dp"}}


def run(args: argparse.Namespace) -> list[Cell]:
    """Every cell of the matrix: per row count and share, the data of each group limit in
    each source form, then the limits run on that data."""
    meter = PeakMemory()
    spark = args.spark and session(args.spark)
    cells = []
    print(f"DuckDB {duckdb.__version__}, dpsql {getattr(dpsql, '__version__', '?')}, "
          f"{os.cpu_count()} cores", flush=True)
    for rows in args.rows:
        for share in args.shares:
            for g, limits in groupby(sorted(args.limits, key=data_limit), key=data_limit):
                limits = list(limits)
                for number, source in enumerate(args.sources):
                    data = Dataset(rows, share, g, source, args.data, args.memory_limit, spark)
                    if number == 0:
                        shape = {k: round(v, 3) for k, v in data.shape().items()}
                        print(f"# data rows={rows:,} share={share} g={g}: {shape}", flush=True)
                    for limit in limits:
                        cells += run_limit(args, data, limit, meter)
                    data.close()
    return cells


def run_limit(args: argparse.Namespace, data: Dataset, limit: str,
              meter: PeakMemory) -> list[Cell]:
    """The cells of each query at ``limit`` on ``data``, printed and appended to --out."""
    con, register_s = data.connect(limit)
    tumult = data.tumult(args.tumult, limit) if args.tumult else None
    cells = []
    for query in args.queries:
        pairs = data.pairs(query, limit, con) if args.pairs else None
        chosen = data.chosen(query, limit, con) if args.pairs else None
        cell = Cell(data.rows, data.share, limit, query,
                    **measure(data, con, query, args.repeats, meter, tumult, pairs, chosen),
                    engine="spark" if data.spark else "duckdb", source=data.source,
                    register_s=register_s)
        cells.append(cell)
        print(_line(cell), flush=True)
        if args.out:
            with open(args.out, "a") as out:
                out.write(json.dumps(asdict(cell)) + "\n")
    if tumult:
        tumult.close()
    con.close()
    return cells


def _line(cell: Cell) -> str:
    """A cell as one line of progress."""
    versus = "" if cell.tumult_s is None else (
        f" tumult {cell.tumult_s:8.3f} dp÷tumult {cell.dp_s / cell.tumult_s:5.2f}")
    if cell.pairs_s is not None:
        versus += f" pairs {cell.pairs_s / cell.floor_s:6.2f}"
    if cell.chosen_s is not None:
        versus += f" chosen {cell.chosen_s / cell.floor_s:6.2f}"
    return (f"{cell.engine} {cell.source:<7} {cell.rows:>11,} {cell.share:>5} {cell.limit:>4} "
            f"{cell.query:<12} dp {cell.dp_s:8.3f} unit {cell.floor_unit_s:7.3f} "
            f"plain {cell.floor_plain_s:7.3f} ratio {cell.ratio:6.2f} load {cell.load:5.2f} "
            f"peak {cell.peak_rss_gib:5.2f} GiB{versus}")


def markdown(cells: list[Cell]) -> str:
    """One table per engine, row count and source: a line per (share, limit), a column per
    query (÷ the slower floor), then the tables beside it that the run has figures for."""
    lines = []
    order = {source: n for n, source in enumerate(sources.SOURCES)}
    for engine, rows, source in sorted({(c.engine, c.rows, c.source) for c in cells},
                                       key=lambda k: (k[0], k[1], order.get(k[2], -1))):
        mine = [c for c in cells if (c.engine, c.rows, c.source) == (engine, rows, source)]
        queries = [q for q in QUERIES if any(c.query == q for c in mine)]
        floor = ("the slower same-run floor" if any(c.floor_plain_s is not None for c in mine)
                 else "the same-run per-unit floor")
        lines += [f"\n{engine}, {rows:,} rows, {source} (÷ {floor}; unit s = median per-unit "
                  "floor of the grouped queries; register s = registering `t`)\n",
                  "| share over | limit | " + " | ".join(queries) +
                  " | unit s | register s | load |",
                  "|---|---|" + "---:|" * (len(queries) + 3)]
        lines += [_row(share, limit, row, queries) for share, limit, row in _lines(mine)]
        lines += _side_table(mine, queries, "plain query ÷ per-unit floor (same run; above 1 "
                             "the plain query is the floor)", _plain_over_unit)
        lines += _side_table(mine, queries, "dpsql ÷ Tumult Analytics (same run; Tumult s in "
                             "brackets)", _versus_tumult)
        lines += _side_table(mine, queries, "dpsql ÷ floor / its strategy's window in plain "
                             "SQL ÷ floor (`CHOSEN`; – where it keeps no pairs) / pairs "
                             "without a choice ÷ floor (`PAIRS`; same run)", _beside_pairs)
    return "\n".join(lines)


def _row(share: str, limit: str, row: dict[str, Cell], queries: list[str]) -> str:
    """One line of a markdown table: the ratios, the median grouped per-unit floor, the
    median registration time (``–`` in runs that did not time it) and the loads."""
    floors = [c.floor_unit_s for c in row.values() if QUERIES[c.query][1]]
    registers = [c.register_s for c in row.values() if c.register_s is not None]
    loads = [c.load for c in row.values()]
    ratios = " | ".join(f"{row[q].ratio:.2f}" if q in row else "" for q in queries)
    register = f"{statistics.median(registers):.3f}" if registers else "–"
    return (f"| {share} | {limit} | {ratios} | "
            f"{statistics.median(floors) if floors else 0:.3f} | {register} | "
            f"{min(loads):.1f}–{max(loads):.1f} |")


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


def _plain_over_unit(cell: Cell) -> str | None:
    """The plain query's time over the per-unit floor's, where the run timed both."""
    if cell.floor_plain_s is None:
        return None
    return f"{cell.floor_plain_s / cell.floor_unit_s:.2f}"


def _versus_tumult(cell: Cell) -> str | None:
    """dpsql's time over Tumult's (Tumult s in brackets), where Tumult ran."""
    if cell.tumult_s is None:
        return None
    return f"{cell.dp_s / cell.tumult_s:.3f} ({cell.tumult_s:.0f})"


def _beside_pairs(cell: Cell) -> str | None:
    """dpsql's ratio beside its strategy's window in plain SQL (``CHOSEN``) and the row
    limit's alone (``PAIRS``), where ``--pairs`` ran."""
    if cell.pairs_s is None:
        return None
    chosen = "–" if cell.chosen_s is None else f"{cell.chosen_s / cell.floor_s:.2f}"
    return f"{cell.ratio:.2f} / {chosen} / {cell.pairs_s / cell.floor_s:.2f}"


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
    parser.add_argument("--sources", nargs="+", choices=sources.SOURCES,
                        help="the forms the data is registered in (default: all four; with "
                             "--spark, the file forms)")
    parser.add_argument("--data", type=Path, default=Path(tempfile.gettempdir()) / "bench_matrix",
                        help="the folder of the data files, written there once and reused "
                             "(default: %(default)s)")
    parser.add_argument("--memory-limit", help="DuckDB memory_limit, e.g. 20GB")
    parser.add_argument("--spark", metavar="MASTER",
                        help="run dpsql and the floor on Spark with this master, e.g. local[2]")
    parser.add_argument("--tumult", type=Path, metavar="VENV",
                        help="with --spark: also time Tumult Analytics (tumult_speed.py) from "
                             "this virtual environment on the same files and limits")
    parser.add_argument("--pairs", action="store_true",
                        help="also time each query's PAIRS form in plain SQL on the same "
                             "engine (the row limit's partials without the choice of groups "
                             "or noise) and its CHOSEN form (the same with each unit's first "
                             "g pairs ranked by a window)")
    parser.add_argument("--out", type=Path, help="append each cell as a JSON line to this file")
    parser.add_argument("--markdown", type=Path, nargs="*",
                        help="print the tables of these JSON-line files and exit")
    args = parser.parse_args()
    if args.sources is None:
        args.sources = [s for s in sources.SOURCES if not (args.spark and s == "table")]
    if args.spark and "table" in args.sources:
        parser.error("--spark reads the data from files: leave out --sources table")
    if args.tumult and not args.spark:
        parser.error("--tumult runs beside dpsql on Spark: give --spark MASTER")
    if args.tumult and set(args.sources) - {"parquet", "glob"}:
        parser.error("--tumult reads Parquet: give --sources parquet, glob or both")
    if args.markdown:
        cells = [cell_from_json(json.loads(line)) for path in args.markdown
                 for line in path.read_text().splitlines() if line.strip()]
    else:
        cells = run(args)
    print(markdown(cells))
    peak = psutil.Process().memory_info().rss / 2**30
    print(f"\nload average now {os.getloadavg()}, resident now {peak:.2f} GiB")


if __name__ == "__main__":
    main()
