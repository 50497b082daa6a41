"""What a bounded answer means, computed independently of dpsql's SQL.

The noise-free answer of every aggregate is its statistic over one *bounded dataset*: each
person's values of x in a group, clamped to x's bounds and weighted by min(1, c/n) when
the person has n values there (c = max_rows_per_group). SUM, COUNT, AVG and VAR of x all
read that dataset, so they agree with one another, and the intervals of noisy answers
cover these values (docs/privacy.md, "What a bounded answer means").

The data has people far over the limit: before, AVG mixed a SUM that kept all of a heavy
person's rows with a COUNT that kept c of them, and answered 46 where every cost is 230.
"""

from __future__ import annotations

import math

import duckdb
import numpy as np
import pyarrow as pa
import pytest

import dpsql

C = 4
LO, HI = 0.0, 200.0
KEYS = ["a", "b", "c"]


def dataset(seed: int = 3) -> pa.Table:
    """60 people with 1 to 25 rows per group, values beyond the bounds, and NULLs."""
    rng = np.random.default_rng(seed)
    rows = []
    for person in range(60):
        for key in KEYS:
            for _ in range(int(rng.choice([0, 1, 3, 10, 25]))):
                value = None if rng.random() < 0.1 else float(rng.uniform(-50, 300))
                rows.append((person, key, value))
    pid, key, x = zip(*rows, strict=True)
    return pa.table({"pid": pid, "k": key, "x": pa.array(x, pa.float64())})


def expected(table: pa.Table) -> dict[str, dict[str, float]]:
    """COUNT(*), COUNT(x), SUM(x), AVG(x), VAR_POP(x) per key, from the definition."""
    frame = table.to_pandas()
    out = {}
    for key, group in frame.groupby("k"):
        rows = values = total = 0.0
        people = []
        for _, mine in group.groupby("pid"):
            xs = np.clip(mine["x"].dropna().to_numpy(), LO, HI)
            weight = min(1.0, C / len(xs)) if len(xs) else 0.0
            rows += min(len(mine), C)
            values += weight * len(xs)
            total += weight * xs.sum()
            people.append((weight, xs))
        mean = total / values
        spread = sum(w * ((xs - mean) ** 2).sum() for w, xs in people) / values
        out[key] = {"rows": rows, "count": values, "sum": total, "avg": mean, "var": spread}
    return out


SQL = ("SELECT k, COUNT(*) AS rows, COUNT(x) AS count, SUM(x) AS sum, AVG(x) AS avg, "
       "VAR_POP(x) AS var FROM t GROUP BY k")


def connect(**options) -> dpsql.Connection:
    con = dpsql.connect(budget=dpsql.Budget(epsilon=1e15, delta=0.5), **options)
    con.register("t", dataset(), privacy_unit="pid", bounds={"x": (LO, HI)},
                 max_rows_per_group=C, max_groups_per_unit=len(KEYS),
                 public_keys={"k": KEYS})
    return con


def test_noise_free_answers_are_the_statistics_of_the_weighted_dataset():
    want = expected(dataset())
    rows = connect().sql(SQL, epsilon=1e12).arrow().to_pylist()
    for row in rows:
        for name, value in want[row["k"]].items():
            assert row[name] == pytest.approx(value, rel=1e-6, abs=1e-6), (row["k"], name)


def test_every_cost_230_averages_230_whatever_the_row_counts():
    people = [p for p in range(100) for _ in range(10)] + list(range(100, 200))
    con = dpsql.connect(budget=dpsql.Budget(epsilon=1e15))
    con.register("v", pa.table({"pid": people, "cost": [230.0] * len(people)}),
                 privacy_unit="pid", bounds={"cost": (0, 2000)}, max_rows_per_group=C)
    ((avg, total, count, var),) = con.sql(
        "SELECT AVG(cost), SUM(cost), COUNT(cost), VAR_POP(cost) FROM v",
        epsilon=1e12).fetchall()
    assert (avg, count) == (pytest.approx(230, abs=1e-3), 500)
    assert total == pytest.approx(230 * 500, rel=1e-6) and var == pytest.approx(0, abs=1e-3)


@pytest.mark.slow
def test_intervals_cover_the_weighted_dataset_statistics():
    """95% intervals of noisy answers cover the definition's values in ≥ 95% of runs
    (minus a binomial margin of 3 standard errors over 300 runs)."""
    want = expected(dataset())
    runs, hits, cells = 300, {}, 0
    for seed in range(runs):
        result = connect(seed=seed).sql(SQL, epsilon=1.0)
        bounds = result.ci(0.95).to_pylist()
        for row, interval in zip(result.arrow().to_pylist(), bounds, strict=True):
            cells += 1
            for name in ("sum", "avg", "var"):
                truth = want[row["k"]][name]
                inside = interval[f"{name}_lower"] <= truth <= interval[f"{name}_upper"]
                hits[name] = hits.get(name, 0) + inside
    margin = 3 * np.sqrt(0.95 * 0.05 / cells)
    assert all(h / cells >= 0.95 - margin for h in hits.values()), hits


def test_a_binding_total_row_cap_scales_counts_without_losing_rows():
    """With max_rows_per_unit = r binding, each person's weights are scaled by
    min(1, r / Σ min(n, c)); counts kept in whole rows lost up to a row per group to
    truncation (8 rows in one group and 1 in each of 7 others counted 4 rows, not 8)."""
    keys = [f"k{i}" for i in range(8)]
    people = [(0, "k0")] * 8 + [(0, key) for key in keys[1:]] + [(1, "k3")] * 2
    con = dpsql.connect(budget=dpsql.Budget(epsilon=1e15))
    con.register("t", pa.table({"pid": [p for p, _ in people], "k": [k for _, k in people]}),
                 privacy_unit="pid", max_groups_per_unit=8, max_rows_per_group=8,
                 max_rows_per_unit=8, public_keys={"k": keys})
    counts = dict(con.sql("SELECT k, COUNT(*) FROM t GROUP BY k", epsilon=1e12).fetchall())
    person = {"k0": 8 * 8 / 15, **{key: 8 / 15 for key in keys[1:]}}
    want = {key: person[key] + (2 if key == "k3" else 0) for key in keys}
    assert counts == {key: round(value) for key, value in want.items()}  # released: rounded


def test_nan_values_are_missing_from_every_statistic_as_null_is():
    """A NaN value counts in no statistic: VAR's squared deviations once counted it at the
    upper bound while its count skipped it. At ε = 1e9 the answers are DuckDB's aggregates
    over the non-NaN values clamped to [0, 10] (±inf clamped too; NULL skipped)."""
    values = [math.nan if i % 5 == 0 else None if i % 7 == 0 else -1 + 0.05 * i
              for i in range(400)]
    values[11], values[13] = math.inf, -math.inf
    table = pa.table({"pid": range(400), "x": pa.array(values, pa.float64())})
    con = dpsql.connect(budget=dpsql.Budget(epsilon=1e10, delta=1e-6), seed=0)
    con.register("t", table, privacy_unit="pid", bounds={"x": (0, 10)})
    aggregates = "VAR_POP(x), VAR_SAMP(x), STDDEV_POP(x), AVG(x), SUM(x), COUNT(x)"
    got = con.sql(f"SELECT {aggregates} FROM t", epsilon=1e9).fetchall()[0]
    clean = duckdb.connect()
    clean.register("t", table)
    want = clean.sql(f"SELECT {aggregates} FROM (SELECT LEAST(GREATEST(x, 0), 10) AS x FROM t "
                     "WHERE NOT isnan(x))").fetchall()[0]
    assert got == pytest.approx(want, rel=1e-6)
