"""Automatic bounds against the answer: AVG(income) on PUMS_dup with ``bounds="auto"`` at
ε = 1, δ = 1e-6, a fresh connection (and estimate) per seeded trial; prints the median and
root-mean-square relative error against the exact AVG over every row, the clamps chosen and
(with ``auto``) the rows limits. ``--statistic median`` asks MEDIAN(income) instead (against
the exact median over every row) and prints the lower bounds too.

    PYTHONPATH=$PWD .venv/bin/python -m tests.benchmarks.bench_auto_bounds --trials 40 \\
        --rows-per-unit auto

``--rows-per-unit``: the table's ``max_rows_per_unit`` (a number, ``auto``, or ``none``
for the default of one row per person).
"""

from __future__ import annotations

import argparse
import warnings

import duckdb
import numpy as np

import dpsql
from dpsql.datasets import pums_path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=40)
    parser.add_argument("--rows-per-unit", default="auto")
    parser.add_argument("--statistic", choices=["avg", "median"], default="avg")
    args = parser.parse_args()
    limit = {"none": None, "auto": "auto"}.get(args.rows_per_unit)
    limit = int(args.rows_per_unit) if limit is None and args.rows_per_unit != "none" else limit
    path = pums_path("PUMS_dup")
    name = args.statistic.upper()
    truth = duckdb.sql(f"SELECT {name}(income) FROM '{path}'").fetchall()[0][0]
    warnings.simplefilter("ignore", dpsql.PrivacyWarning)  # "estimated as …", every trial
    errors, highs, lows, limits = [], [], [], []
    for seed in range(args.trials):
        con = dpsql.connect(budget=dpsql.Budget(epsilon=10, delta=1e-3), seed=seed,
                            cache=False)
        con.register("pums", str(path), privacy_unit="pid", bounds={"income": "auto"},
                     max_rows_per_unit=limit)
        ((value,),) = con.sql(f"SELECT {name}(income) FROM pums", epsilon=1.0,
                              delta=1e-6).fetchall()
        errors.append(abs(value - truth) / truth)
        info = con.catalog.get("pums")
        lo, hi = info.bounds["income"]
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
