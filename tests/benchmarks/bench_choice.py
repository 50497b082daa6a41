"""The group-choice strategies compared on the limits data, through dpsql's own planner.

Run on purpose (not part of the default test run)::

    .venv/bin/python -m tests.benchmarks.bench_choice --rows 10000000 --groups 1 3 8 \
        --shares none half most --query count

For each data set (tests/benchmarks/limits_data.py, regenerated per limit g and share of
people over it) dpsql compiles ``--query`` and builds, beside the strategy its rule table
chooses (``dpsql.rewrite.choose``), every other strategy that keeps at most g groups per
unit and fits the plan (``FITS``), each with the options dpsql gives it on DuckDB
(``choose.bounding``, built by ``rewrite(plan, engine, bounding)``): the frame around the
choice is dpsql's own, only the choice differs. Each strategy's bounded query runs as dpsql
runs it (``backend.execute``, one fixed salt) and is checked first: the strategies that
order a unit's pairs alike (all but ``heavy_units_by_hash``, which ranks them by a salted
MD5) must give dpsql's bounded result row for row, and so must every strategy where nobody
is over the limit (the count of differing rows is printed, and a difference stops the
run). Then each strategy and the floor ``SELECT grp, COUNT(DISTINCT pid) FROM t GROUP BY
grp`` run interleaved ``--repeats`` times; the table gives each one's median wall time over
the floor's, and its CPU time (all DuckDB threads) over the floor's. ``*`` marks dpsql's
choice. (``heavy_units_by_hash`` orders only the pairs of the units over the limit, so its
time tells how many there are: dpsql takes it only for a unit that is not an integer.)

Before the bounded query was built by named strategies (issue 36), this file spliced
hand-written prototypes of the choice (a window over every pair, ``arg_min`` per unit,
top-g lists, a threshold) into the ``__dp_pairs`` CTE of dpsql's SQL; the ones that won are
the strategies compared here (docs/benchmarks.md), and a prototype to try is now a builder
(docs/architecture.md, "New bounding strategy").

``--source`` registers the data as one of bench_matrix's source forms (``parquet``, ``csv``,
``glob``; default ``table``), the files shared with it (``--data``). ``--sql`` prints each
strategy's bounded SQL for one data set instead of timing it.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import resource
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from dpsql.compile import CompiledQuery
from dpsql.engines import DUCKDB
from dpsql.plan import STRATEGIES, Bounding, PrivacyPlan
from dpsql.rewrite import rewrite
from dpsql.rewrite.choose import (
    bounding,
    choose,
    first_group_of_rows,
    nothing_to_choose,
    ranks_rows,
)
from dpsql.rewrite.digest import integer_unit
from tests.benchmarks import sources
from tests.benchmarks.bench_matrix import QUERIES, Dataset

SALT = "0123456789abcdef0123456789abcdef"
"""A fixed salt of the length dpsql draws (secrets.token_hex(16)), for every strategy."""


def _chooses(plan: PrivacyPlan) -> bool:
    """Units with their own rows, and more groups than a unit may keep."""
    return not plan.row_level and not nothing_to_choose(plan, DUCKDB)


def _integer_unit(plan: PrivacyPlan) -> bool:
    return integer_unit(plan.column_types.get(plan.privacy_unit, ""))


FITS: dict[str, Callable[[PrivacyPlan], bool]] = {
    "kept_rows_ranked": lambda plan: _chooses(plan) and ranks_rows(plan, DUCKDB),
    "first_group_of_rows": lambda plan: _chooses(plan) and first_group_of_rows(plan, DUCKDB),
    "first_pair": lambda plan: _chooses(plan) and _integer_unit(plan)
    and plan.contribution.groups_per_unit == 1,
    "first_pairs_by_window": lambda plan: _chooses(plan) and _integer_unit(plan),
    "heavy_units_by_hash": _chooses,
}
"""The strategies that choose groups, each with the plans it can bound: the rules before
``all_pairs`` are their strategies' own conditions; the pair strategies after it take any
plan with groups to choose, the first-pair ones an integer unit (they order by arithmetic
on it), ``first_pair`` g = 1 (docs/architecture.md, the rule table)."""

SAME_ORDER = frozenset(STRATEGIES) - {"heavy_units_by_hash"}
"""The strategies that keep the same pairs: every pair, or the first by the same order
(``pairs.pair_ordered``)."""


def strategies(plan: PrivacyPlan, names: list[str]) -> dict[str, Bounding]:
    """dpsql's choice for ``plan`` on DuckDB, then each other of ``names`` that fits it."""
    chosen = choose(plan, DUCKDB)
    others = {name: bounding(name, plan, DUCKDB) for name in names
              if name != chosen.strategy and FITS[name](plan)}
    return {chosen.strategy: chosen, **others}


def built(compiled: CompiledQuery, candidate: Bounding) -> CompiledQuery:
    """``compiled`` with its bounded query built by ``candidate``'s strategy."""
    return dataclasses.replace(compiled, bounded=rewrite(compiled.plan, DUCKDB, candidate))


def _canonical(value: Any) -> Any:
    """A hashable value that ignores the order of a list (a histogram's buckets)."""
    if isinstance(value, list):
        return tuple(sorted((_canonical(v) for v in value), key=repr))
    if isinstance(value, dict):
        return tuple(sorted((k, _canonical(v)) for k, v in value.items()))
    return value


def differences(a: pa.Table, b: pa.Table) -> int:
    """Rows in one result but not the other (as multisets), columns matched by name."""
    rows = [Counter(tuple(_canonical(v) for v in row.values())
                    for row in t.select(a.column_names).to_pylist()) for t in (a, b)]
    return sum(((rows[0] - rows[1]) + (rows[1] - rows[0])).values())


def checked(con: Any, compiled: CompiledQuery, candidates: dict[str, Bounding],
            nobody_over: bool) -> dict[str, CompiledQuery]:
    """Each candidate's compiled query, after checking it gives dpsql's bounded result where
    it must (``SAME_ORDER``, or anywhere when nobody is over the limit)."""
    reference = con.backend.execute(compiled, salt=SALT)
    out = {}
    for name, candidate in candidates.items():
        out[name] = built(compiled, candidate)
        differ = differences(reference, con.backend.execute(out[name], salt=SALT))
        must = name in SAME_ORDER or name == compiled.bounding.strategy or nobody_over
        print(f"  check {name:<22} bounded rows differing from dpsql's choice: {differ}"
              + ("" if must else " (another order: may differ)"), flush=True)
        if differ and must:
            raise AssertionError(f"{name} does not reproduce dpsql's bounded result")
    return out


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def timed(runs: dict[str, Callable[[], object]], repeats: int) -> dict[str, tuple[float, float]]:
    """(median wall s, median CPU s) of each run, the runs interleaved, after a warm-up."""
    for run in runs.values():
        run()
    wall: dict[str, list[float]] = {name: [] for name in runs}
    cpu: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeats):
        for name, run in runs.items():
            start, start_cpu = time.perf_counter(), cpu_seconds()
            run()
            wall[name].append(time.perf_counter() - start)
            cpu[name].append(cpu_seconds() - start_cpu)
    return {name: (statistics.median(wall[name]), statistics.median(cpu[name]))
            for name in runs}


def one_data_set(args: argparse.Namespace, g: int, share: str) -> list[str]:
    """Check, then time (or print) every strategy on one data set; the table's lines."""
    sql, grouped = QUERIES[args.query]
    data = Dataset(args.rows, share, g, args.source, args.data)
    shape = data.shape()
    print(f"# rows={args.rows:,} g={g} share={share}: "
          f"{ {k: round(v, 3) for k, v in shape.items()} }", flush=True)
    con, _ = data.connect(str(g))
    compiled = con.compile(sql, epsilon=1.0, delta=1e-6)
    candidates = strategies(compiled.plan, args.strategies)
    variants = checked(con, compiled, candidates, nobody_over=shape[f"over_{g}"] == 0)
    if args.sql:
        for variant in variants.values():
            print(f"-- {variant.bounding}\n{variant.bounded_sql(pretty=True)}")
        return []
    runs = {"floor": data.runner(data.unit_sql(grouped)),
            **{name: (lambda v=variant: con.backend.execute(v, salt=SALT))
               for name, variant in variants.items()}}
    load = os.getloadavg()[0]
    times = timed(runs, args.repeats)
    floor_wall, floor_cpu = times["floor"]
    lines = []
    for name, (wall, cpu) in times.items():
        label = "floor" if name == "floor" else (
            f"{name} ({', '.join(candidates[name].options)})"
            + (" *" if name == compiled.bounding.strategy else ""))
        lines.append(f"| {args.rows:,} | {g} | {share} | {label} | {wall:.3f} | "
                     f"{wall / floor_wall:.2f} | {cpu / floor_cpu:.2f} | {load:.1f} |")
        print(lines[-1], flush=True)
    con.close()
    data.close()
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--groups", type=int, nargs="+", choices=[1, 3, 8], default=[1, 3, 8])
    parser.add_argument("--shares", nargs="+", choices=["none", "half", "most"],
                        default=["none", "half", "most"])
    parser.add_argument("--query", choices=list(QUERIES), default="count")
    parser.add_argument("--strategies", nargs="+", choices=list(FITS), default=list(FITS),
                        help="the strategies to compare beside dpsql's choice (those that "
                             "fit the query)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--source", choices=sources.SOURCES, default="table",
                        help="the form the data is registered in (bench_matrix's sources)")
    parser.add_argument("--data", type=Path, default=Path(tempfile.gettempdir()) / "bench_matrix",
                        help="the folder of the data files, shared with bench_matrix "
                             "(default: %(default)s)")
    parser.add_argument("--sql", action="store_true", help="print the SQL, do not time it")
    args = parser.parse_args()
    print(f"DuckDB {duckdb.__version__}, load {os.getloadavg()}, query {args.query}: "
          f"{QUERIES[args.query][0]}", flush=True)
    lines = [line for g in args.groups for share in args.shares
             for line in one_data_set(args, g, share)]
    if lines:
        print("\n| rows | g | share over | strategy (options; * dpsql's choice) | wall s "
              "| ÷floor (wall) | ÷floor (CPU) | load |")
        print("|---:|---:|---|---|---:|---:|---:|---:|")
        print("\n".join(lines))


if __name__ == "__main__":
    main()
