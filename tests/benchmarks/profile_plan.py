"""Where a bounded query's time goes: DuckDB's operator timings for one dpsql query.

Run on purpose (not part of the default test run), over bench_matrix's generated data in
any of its source forms (tests/benchmarks/sources.py; files written once into ``--data``)::

    .venv/bin/python -m tests.benchmarks.profile_plan --rows 10000000 --share most \\
        --groups 3 --source parquet "SELECT grp, SUM(v), AVG(v) FROM t GROUP BY grp"

Prints the strategy dpsql chose, the total time, and each operator that took more than
``--least`` seconds, indented by its depth in DuckDB's plan (JSON profiling output).
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

import duckdb

import dpsql
from tests.benchmarks import sources
from tests.benchmarks.bench_matrix import BOUNDS, SHARES


def operators(node: dict[str, Any], least: float, depth: int = 0) -> list[str]:
    """One line per operator slower than ``least`` seconds, children indented under it."""
    lines = []
    if node.get("timing", 0) > least:
        info = json.dumps(node.get("extra_info", {}))[:120]
        lines.append(f"{'  ' * depth}{node['name']} {node['timing']:.3f}s "
                     f"rows={node.get('intermediate_rows', '?')} {info}")
    for child in node.get("children", []):
        lines += operators(child, least, depth + 1)
    return lines


def profile(args: argparse.Namespace) -> list[str]:
    files = sources.Files(args.data, args.rows, args.groups, args.share, SHARES[args.share])
    raw = duckdb.connect()
    con = dpsql.connect(raw, budget=dpsql.Budget(epsilon=1e9, delta=0.5), cache=False)
    source = "t_table" if args.source == "table" else files.written(args.source)
    if args.source == "table":
        raw.execute(f"CREATE TABLE t_table AS SELECT * FROM read_parquet("
                    f"'{files.written('parquet')}')")
    con.register("t", source, privacy_unit="pid", bounds=BOUNDS,
                 max_groups_per_unit=args.groups, max_rows_per_group=args.rows_per_group)
    compiled = con.compile(args.sql, epsilon=1.0, delta=1e-6)
    output = Path(tempfile.mkdtemp()) / "profile.json"
    raw.execute("PRAGMA enable_profiling = 'json'")
    raw.execute(f"SET profiling_output = '{output}'")
    raw.sql(compiled.bounded_sql("duckdb"), params=compiled.parameters("profile")).fetchall()
    raw.execute("PRAGMA disable_profiling")
    tree = json.loads(output.read_text())
    total = tree["query"]["total_time"] if isinstance(tree.get("query"), dict) else "?"
    lines = [f"bounding: {compiled.bounding}", f"total {total} s"]
    for root in tree["operator"]:
        lines += operators(root, args.least)
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("sql")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--share", choices=list(SHARES), default="most")
    parser.add_argument("--groups", type=int, default=3, help="max_groups_per_unit")
    parser.add_argument("--rows-per-group", type=int, default=3)
    parser.add_argument("--source", choices=sources.SOURCES, default="parquet")
    parser.add_argument("--data", type=Path, default=Path("/tmp/bench_matrix"))
    parser.add_argument("--least", type=float, default=0.01)
    print("\n".join(profile(parser.parse_args())))


if __name__ == "__main__":
    main()
