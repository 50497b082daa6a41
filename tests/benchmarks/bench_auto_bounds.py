"""Automatic bounds against the answer: AVG(income) on PUMS_dup with ``bounds="auto"`` at
ε = 1, δ = 1e-6, a fresh connection (and estimate) per seeded trial; prints the median and
root-mean-square relative error against the exact AVG over every row, the clamps chosen and
(with ``auto``) the rows limits. ``--statistic median`` asks MEDIAN(income) instead (against
the exact median over every row) and prints the lower bounds too; ``--table visits`` runs
on bench_utility's visits (100,000 rows, seed 7) and their cost instead.

    PYTHONPATH=$PWD .venv/bin/python -m tests.benchmarks.bench_auto_bounds --trials 40 \\
        --rows-per-unit auto

``--rows-per-unit``: the table's ``max_rows_per_unit`` (a number, ``auto``, or ``none``
for the default of one row per person).
"""

from __future__ import annotations

import argparse
import tempfile
import warnings
from pathlib import Path

import duckdb
import numpy as np

import dpsql
from dpsql.datasets import pums_path, visits


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=40)
    parser.add_argument("--rows-per-unit", default="auto")
    parser.add_argument("--statistic", choices=["avg", "median"], default="avg")
    parser.add_argument("--table", choices=["pums", "visits"], default="pums")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        if args.table == "pums":
            run(args, pums_path("PUMS_dup"), "pid", "income")
        else:
            path = Path(folder) / "visits.parquet"
            visits(100_000, seed=7).to_pandas().to_parquet(path)
            run(args, path, "patient_id", "cost")


def run(args: argparse.Namespace, path: Path, unit: str, column: str) -> None:
    limit = {"none": None, "auto": "auto"}.get(args.rows_per_unit)
    limit = int(args.rows_per_unit) if limit is None and args.rows_per_unit != "none" else limit
    name = args.statistic.upper()
    truth = duckdb.sql(f"SELECT {name}({column}) FROM '{path}'").fetchall()[0][0]
    warnings.simplefilter("ignore", dpsql.PrivacyWarning)  # "estimated as …", every trial
    errors, highs, lows, limits = [], [], [], []
    for seed in range(args.trials):
        con = dpsql.connect(budget=dpsql.Budget(epsilon=10, delta=1e-3), seed=seed,
                            cache=False)
        con.register("t", str(path), privacy_unit=unit, bounds={column: "auto"},
                     max_rows_per_unit=limit)
        ((value,),) = con.sql(f"SELECT {name}({column}) FROM t", epsilon=1.0,
                              delta=1e-6).fetchall()
        errors.append(abs(value - truth) / truth)
        info = con.catalog.get("t")
        lo, hi = info.bounds[column]
        highs.append(int(np.log2(hi)))
        lows.append(f"2^{int(np.log2(lo))}" if lo > 0 else "0")
        limits.append(info.max_rows_per_unit)
        con.close()
    clamps = {f"2^{k}": n for k, n in tally(highs).items()}
    if args.statistic == "median":
        print(f"lower bounds {tally(lows)}")
    print(f"{name}, max_rows_per_unit={args.rows_per_unit}: median relative error "
          f"{np.median(errors):.3f}, RMS {np.sqrt(np.mean(np.square(errors))):.3f}, "
          f"clamps {clamps}" + (f", limits {tally(limits)}" if limit == "auto" else ""))


def tally(values: list) -> dict:
    return {v: values.count(v) for v in sorted(set(values))}


if __name__ == "__main__":
    main()
