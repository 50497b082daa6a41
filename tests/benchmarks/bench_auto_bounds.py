"""Automatic bounds against the answer: AVG(income) on PUMS_dup with ``bounds="auto"`` at
ε = 1, δ = 1e-6, a fresh connection (and estimate) per seeded trial; prints the median and
root-mean-square relative error against the exact AVG over every row, and the clamps chosen.

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
    args = parser.parse_args()
    limit = {"none": None, "auto": "auto"}.get(args.rows_per_unit)
    limit = int(args.rows_per_unit) if limit is None and args.rows_per_unit != "none" else limit
    path = pums_path("PUMS_dup")
    truth = duckdb.sql(f"SELECT AVG(income) FROM '{path}'").fetchall()[0][0]
    warnings.simplefilter("ignore", dpsql.PrivacyWarning)  # "estimated as …", every trial
    errors, highs = [], []
    for seed in range(args.trials):
        con = dpsql.connect(budget=dpsql.Budget(epsilon=10, delta=1e-3), seed=seed,
                            cache=False)
        con.register("pums", str(path), privacy_unit="pid", bounds={"income": "auto"},
                     max_rows_per_unit=limit)
        ((value,),) = con.sql("SELECT AVG(income) FROM pums", epsilon=1.0,
                              delta=1e-6).fetchall()
        errors.append(abs(value - truth) / truth)
        highs.append(int(np.log2(con.catalog.get("pums").bounds["income"][1])))
        con.close()
    clamps = {f"2^{k}": highs.count(k) for k in sorted(set(highs))}
    print(f"max_rows_per_unit={args.rows_per_unit}: median relative error "
          f"{np.median(errors):.3f}, RMS {np.sqrt(np.mean(np.square(errors))):.3f}, "
          f"clamps {clamps}")


if __name__ == "__main__":
    main()
