"""Issue 40's three-statistic query on PUMS_dup: dpsql beside SmartNoise SQL's calibration.

``SELECT married, COUNT(*), SUM(age), AVG(income) FROM pums GROUP BY married`` at ε = 1,
δ = 1e-6, at most r rows per person, age in [0, 100], income in [0, 500000], married a
private key. Prints, per column, the RMSE against the exact unbounded answer over trials × the
two groups, with the noise std explain() states (dpsql) or the calibration gives (SmartNoise).

SmartNoise SQL is not run (it is not installed here): its release is reproduced from its
documented calibration (docs/mechanisms.md §12, "The three-statistic query"), on the same
bounded data. It draws one noisy value per column of its rewritten subquery — the count of
people that τ-thresholding reads, COUNT(*), SUM(age), SUM(income), COUNT(income) — each at
the reader's ε, so at a total ε it runs at ε/5 each, with Laplace scale max_ids · s / (ε/5),
s = max(|lower|, |upper|) for a sum and 1 for a count; AVG(income) = SUM/COUNT. Its
reservoir keeps at most max_ids random rows per person; PUMS_dup's extra rows of a person are
copies of the first, so that is every person's first r rows, as dpsql keeps.

    PYTHONPATH=$PWD .venv/bin/python -m tests.benchmarks.bench_three_stats --trials 400

``--not-null age income`` (the default) declares those columns NOT NULL; ``--not-null`` with
no names declares none (the plan dpsql had before the declaration existed).
"""

from __future__ import annotations

import argparse
import warnings

import duckdb
import numpy as np

import dpsql
from dpsql.datasets import pums_path

SQL = ("SELECT married, COUNT(*) AS n, SUM(age) AS s, AVG(income) AS a FROM pums "
       "GROUP BY married")
COLUMNS = ("n", "s", "a")
BOUNDS = {"age": (0, 100), "income": (0, 500000)}


def exact(rows: int | None) -> dict[int, tuple[float, float, float]]:
    """{married: (COUNT(*), SUM(age), AVG(income))} over every row, or each person's first
    ``rows`` rows."""
    kept = "" if rows is None else f"WHERE rn <= {rows}"
    sql = (f"SELECT married, COUNT(*), SUM(age), AVG(income), SUM(income) FROM (SELECT *, "
           f"row_number() OVER (PARTITION BY pid) AS rn FROM '{pums_path('PUMS_dup')}') {kept} "
           "GROUP BY married")
    return {m: (n, s, a) for m, n, s, a, _ in duckdb.sql(sql).fetchall()}


def dpsql_answers(args: argparse.Namespace) -> tuple[list[dict], dict[str, float]]:
    con = dpsql.connect(budget=dpsql.Budget(epsilon=1e9, delta=0.5), cache=False)
    extra = {"not_null": args.not_null} if args.not_null else {}
    con.register("pums", str(pums_path("PUMS_dup")), privacy_unit="pid", bounds=BOUNDS,
                 max_rows_per_unit=args.rows, **extra)
    stds = {c["name"]: c["noise_std"] for c in con.explain(
        SQL, epsilon=args.epsilon, delta=args.delta).to_dict()["columns"] if c["noise_std"]}
    trials = [{row[0]: row[1:] for row in con.sql(
        SQL, epsilon=args.epsilon, delta=args.delta).fetchall()} for _ in range(args.trials)]
    return trials, stds


def smartnoise_answers(args: argparse.Namespace) -> tuple[list[dict], dict[str, float]]:
    """SmartNoise's release, from its calibration: five statistics at ε/5 each."""
    rng = np.random.default_rng(0)
    k, r = 5, args.rows
    scale = {"rows": r * k / args.epsilon, "age": r * 100 * k / args.epsilon,
             "income": r * 500000 * k / args.epsilon, "count": r * k / args.epsilon}
    bounded = duckdb.sql(
        "SELECT married, COUNT(*), SUM(age), SUM(income), COUNT(income) FROM (SELECT *, "
        f"row_number() OVER (PARTITION BY pid) AS rn FROM '{pums_path('PUMS_dup')}') "
        f"WHERE rn <= {r} GROUP BY married").fetchall()
    trials = []
    for _ in range(args.trials):
        answer = {}
        for m, n, s, total, count in bounded:
            noisy = {name: value + rng.laplace(0, scale[name]) for name, value in
                     (("rows", n), ("age", s), ("income", total), ("count", count))}
            answer[m] = (max(noisy["rows"], 0), noisy["age"], noisy["income"] / noisy["count"])
        trials.append(answer)
    return trials, {"n": np.sqrt(2) * scale["rows"], "s": np.sqrt(2) * scale["age"]}


def rmse(trials: list[dict], truth: dict) -> list[float]:
    return [float(np.sqrt(np.mean([(t[m][i] - truth[m][i]) ** 2 for t in trials
                                   for m in truth]))) for i in range(3)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=400)
    parser.add_argument("--rows", type=int, default=4, help="max_rows_per_unit (max_ids)")
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--delta", type=float, default=1e-6)
    parser.add_argument("--not-null", nargs="*", default=["age", "income"])
    args = parser.parse_args()
    warnings.simplefilter("ignore", dpsql.PrivacyWarning)
    truth = exact(None)
    print(f"PUMS_dup, r = {args.rows}, ε = {args.epsilon:g}, δ = {args.delta:g}, "
          f"{args.trials} trials, NOT NULL: {', '.join(args.not_null) or 'none'}")
    print("| system | COUNT(*) RMSE | SUM(age) RMSE | AVG(income) RMSE | COUNT std | SUM std |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, answers in (("dpsql", dpsql_answers), ("SmartNoise (calibration)",
                                                      smartnoise_answers)):
        trials, stds = answers(args)
        n, s, a = rmse(trials, truth)
        print(f"| {name} | {n:.1f} | {s:.0f} | {a:.0f} | {stds['n']:.2f} | {stds['s']:.0f} |")
    bias = rmse([exact(args.rows)], truth)
    print(f"| bias of the row limit alone | {bias[0]:.1f} | {bias[1]:.0f} | {bias[2]:.0f} | | |")


if __name__ == "__main__":
    main()
