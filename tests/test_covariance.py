"""CORR, COVAR_* and REGR_*: the estimator's maths, the shared statistics, the exact bounded
answers against DuckDB's own functions, NULLs, refusals, the neighbour check of the sum of
products, and the intervals' coverage."""

from __future__ import annotations

import duckdb
import numpy as np
import pyarrow as pa
import pytest

import dpsql
from dpsql.covariance import Pair
from dpsql.evaluate import truth
from tests.support import LIMITS, assert_within_plan, hostile_table, make_plan, run_bounded

AGGREGATES = ("CORR", "COVAR_POP", "COVAR_SAMP", "REGR_SLOPE", "REGR_INTERCEPT", "REGR_R2",
              "REGR_COUNT", "REGR_AVGX", "REGR_AVGY", "REGR_SXX", "REGR_SYY", "REGR_SXY")
X_BOUNDS, Y_BOUNDS = (0.0, 10.0), (-10.0, 40.0)
BUDGET = dpsql.Budget(epsilon=1e12, delta=0.5)


def exact_stats(x: np.ndarray, y: np.ndarray) -> dict[str, np.ndarray]:
    """N and the centred sums of ``dpsql.covariance`` for pairs in the bounds (centres at
    the middles, squares centred at h²/2)."""
    u, v = x - 5.0, y - 15.0
    return {k: np.array([float(s)]) for k, s in {
        "n": len(x), "sx": u.sum(), "sy": v.sum(), "sxx": (u * u - 12.5).sum(),
        "syy": (v * v - 312.5).sum(), "sxy": (u * v).sum()}.items()}


PAIR = Pair(x=X_BOUNDS, y=Y_BOUNDS, centers={"sx": 5.0, "sy": 15.0, "sxx": 12.5,
                                              "syy": 312.5, "sxy": 0.0})


@pytest.mark.parametrize("seed", range(4))
def test_exact_sums_give_numpy_moments(seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 10, 23)
    y = np.clip(1.5 * x + rng.normal(0, 5, 23), -10, 40)
    stats = exact_stats(x, y)
    cov = np.cov(x, y, ddof=0)[0, 1]
    slope = cov / np.var(x)
    expected = {"corr": np.corrcoef(x, y)[0, 1], "covar_pop": cov,
                "covar_samp": np.cov(x, y, ddof=1)[0, 1], "regr_slope": slope,
                "regr_intercept": y.mean() - slope * x.mean(),
                "regr_r2": np.corrcoef(x, y)[0, 1] ** 2, "regr_sxx": 23 * np.var(x),
                "regr_syy": 23 * np.var(y), "regr_sxy": 23 * cov}
    for kind, value in expected.items():
        assert PAIR.value(kind, stats)[0] == pytest.approx(value, rel=1e-9, abs=1e-9), kind


def test_noisy_values_stay_in_their_ranges_and_are_null_without_spread():
    rng = np.random.default_rng(0)
    stats = {k: v + rng.normal(0, 1e4, 500) for k, v in exact_stats(
        rng.uniform(0, 10, 30), rng.uniform(-10, 40, 30)).items()}
    corr, r2 = PAIR.value("corr", stats), PAIR.value("regr_r2", stats)
    assert np.all(np.isnan(corr) | (np.abs(corr) <= 1))
    assert np.all(np.isnan(r2) | ((r2 >= 0) & (r2 <= 1)))
    assert np.all(np.abs(PAIR.value("covar_pop", stats)) <= 5 * 25)
    flat = exact_stats(np.full(5, 5.0), np.array([0.0, 1, 2, 3, 4]))  # x has no spread
    for kind in ("corr", "regr_slope", "regr_intercept", "regr_r2"):
        assert np.isnan(PAIR.value(kind, flat)[0]), kind
    level = exact_stats(np.array([0.0, 1, 2, 3, 4]), np.full(5, 15.0))  # y has no spread
    assert PAIR.value("regr_r2", level)[0] == 1.0 and PAIR.value("regr_slope", level)[0] == 0


def table(n: int = 600, seed: int = 0) -> pa.Table:
    """Units of 2 rows; x and y correlated, some out of bounds, NULL and NaN."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2, 12, n)
    y = 2 * x + rng.normal(0, 6, n)
    x[rng.random(n) < 0.05], y[rng.random(n) < 0.05] = np.nan, np.nan
    return pa.table({"pid": np.arange(n) // 2, "g": rng.choice(["a", "b"], n),
                     "x": pa.array(x, mask=rng.random(n) < 0.05),
                     "y": pa.array(y, mask=rng.random(n) < 0.05)})


def connection(data: pa.Table, **options) -> dpsql.Connection:
    con = dpsql.connect(budget=BUDGET, **options)
    con.register("t", data, privacy_unit="pid", bounds={"x": X_BOUNDS, "y": Y_BOUNDS},
                 max_rows_per_group=3, max_groups_per_unit=2, public_keys={"g": ["a", "b"]})
    return con


CLEAN = ("CASE WHEN {c} IS NULL OR isnan({c}) THEN NULL "
         "ELSE least(greatest({c}, {lo}), {hi}) END AS {c}")


def duckdb_answers(data: pa.Table, select: str) -> list[tuple]:
    """DuckDB's own aggregates over the data clamped and cleaned as dpsql bounds it (every
    unit has two rows here, within every limit)."""
    con = duckdb.connect()
    con.register("raw", data)
    columns = ", ".join(CLEAN.format(c=c, lo=lo, hi=hi) for c, (lo, hi) in
                        (("x", X_BOUNDS), ("y", Y_BOUNDS)))
    return con.sql(f"SELECT g, {select} FROM (SELECT g, {columns} FROM raw) GROUP BY g "
                   "ORDER BY g").fetchall()


def test_noise_free_answers_are_duckdbs_on_the_bounded_data():
    data = table()
    select = ", ".join(f"{a}(y, x)" for a in AGGREGATES)
    con = connection(data)
    ours = truth(con, con.compile(f"SELECT g, {select} FROM t GROUP BY g ORDER BY g",
                                  epsilon=1.0), seed=0).fetchall()
    for mine, theirs in zip(ours, duckdb_answers(data, select), strict=True):
        assert mine[0] == theirs[0] and mine[1:] == pytest.approx(theirs[1:], rel=1e-6)


def test_a_huge_epsilon_release_is_the_exact_answer():
    data = table()
    select = "CORR(y, x) AS r, REGR_SLOPE(y, x) AS b, REGR_COUNT(y, x) AS n"
    released = connection(data, seed=0).sql(f"SELECT g, {select} FROM t GROUP BY g ORDER BY g",
                                            epsilon=1e9).fetchall()
    for mine, theirs in zip(released, duckdb_answers(data, select), strict=True):
        assert mine[0] == theirs[0] and mine[1:] == pytest.approx(theirs[1:], rel=1e-6)


def test_pair_aggregates_share_their_statistics_whatever_the_argument_order():
    con = connection(table())
    plan = con.compile("SELECT CORR(y, x), CORR(x, y), COVAR_POP(x, y), REGR_SLOPE(y, x), "
                       "REGR_R2(x, y), REGR_COUNT(y, x), REGR_AVGX(y, x) FROM t",
                       epsilon=1.0).plan
    assert len(plan.stats) == 6 and plan.statistics_per_unit == 6
    assert {s.kind for s in plan.stats} == {"count", "centered_sum"}


def test_the_product_statistic_has_the_half_widths_product_per_row():
    con = connection(table())
    info = con.explain("SELECT COVAR_POP(y, x) FROM t", epsilon=1.0).to_dict()
    (column,) = info["columns"]
    product = column["statistics"][-1]
    assert product["linf_sensitivity"] == pytest.approx(3 * 5 * 25)  # c · hx · hy
    assert [s["kind"] for s in column["statistics"]] == ["count"] + ["centered_sum"] * 3


@pytest.mark.parametrize("sql, message", [
    ("SELECT CORR(y, z) FROM t", 'CORR(y, z) needs bounds: declare bounds={"z": (lo, hi)} '
     "when registering the table, or write CORR(y, LEAST(GREATEST(z, lo), hi))"),
    ("SELECT COVAR_POP(y, k) FROM t", "COVAR_POP: `COVAR_POP(y, k)` is not supported; "
     "allowed: numeric arguments"),
    ("SELECT REGR_SLOPE(y, 3) FROM t", "arguments with bounds lo < hi"),
    ("SELECT CORR(y, SUM(x)) FROM t", "Aggregates are allowed only in SELECT"),
])
def test_refusals_name_the_fix(sql, message):
    con = dpsql.connect(budget=BUDGET)
    con.register("t", pa.table({"pid": [1, 2], "x": [1.0, 2.0], "y": [1.0, 3.0],
                                "z": [1.0, 2.0], "k": ["a", "b"]}), privacy_unit="pid",
                 bounds={"x": X_BOUNDS, "y": Y_BOUNDS})
    with pytest.raises(dpsql.UnsupportedQueryError) as err:
        con.sql(sql, epsilon=1.0)
    assert message in str(err.value)


def test_regr_count_needs_no_bounds():
    con = dpsql.connect(budget=BUDGET)
    con.register("t", pa.table({"pid": [1, 2, 3], "x": [1.0, None, 2.0], "z": [1, 2, None]}),
                 privacy_unit="pid")
    compiled = con.compile("SELECT REGR_COUNT(z, x) FROM t", epsilon=1.0)
    assert truth(con, compiled, seed=0).fetchall() == [(1,)]


@pytest.mark.parametrize("limits", LIMITS, ids=lambda d: ",".join(f"{v}" for v in d.values()))
def test_removing_any_unit_moves_the_pair_statistics_within_the_plan(limits):
    """The neighbour check: hostile values (±1e12, ±inf, NaN, NULL) in x and in y = 2x."""
    plan = make_plan("SELECT k, CORR(x * 2, x), COVAR_SAMP(GREATEST(LEAST(flag, 2), 0), x), "
                     "REGR_SXY(x, LEAST(GREATEST(flag, 0), 2)) FROM t GROUP BY k", **limits)
    data = hostile_table()
    full = run_bounded(data, plan, salt="fixed")
    for unit in sorted({u for u in data.column("pid").to_pylist() if u is not None}):
        mask = pa.compute.fill_null(pa.compute.not_equal(data.column("pid"), unit), True)
        assert_within_plan(plan, full, run_bounded(data.filter(mask), plan, salt="fixed"), unit)


COVERAGE_RUNS = 600
"""Seeded releases per ε. The test takes the lowest of 22 rates (11 aggregates × 2 groups) at
3 standard errors, so at 300 runs a sound interval still failed about one time in a hundred:
under the split by column, seeds 0–299 covered COVAR_POP in group a 0.907 of the time and
seeds 300–699 0.960, with noise stds measured equal to explain's over 3,000 draws."""


@pytest.mark.slow
@pytest.mark.parametrize("epsilon", [0.5, 3.0])
def test_intervals_cover_the_bounded_value(epsilon):
    """Over seeded releases, each interval holds the noise-free value at least about as often
    as it claims (95 %: allowing 3 standard errors of 300 runs)."""
    data = table(2000, seed=1)
    select = ", ".join(f"{a}(y, x)" for a in AGGREGATES if a not in ("REGR_COUNT",))
    sql = f"SELECT g, {select} FROM t GROUP BY g"
    con = connection(data)
    compiled = con.compile(sql, epsilon=epsilon)
    exact = np.array(truth(con, compiled, seed=0).fetchall())[:, 1:].astype(float)
    names = [c.name for c in compiled.plan.columns][1:]
    covered = np.zeros_like(exact)
    for seed in range(COVERAGE_RUNS):
        bounds = connection(data, seed=seed).sql(sql, epsilon=epsilon).ci(0.95)
        lower = np.array([bounds[f"{n}_lower"].to_pylist() for n in names], float).T
        upper = np.array([bounds[f"{n}_upper"].to_pylist() for n in names], float).T
        covered += (lower <= exact * (1 + 1e-9) + 1e-9) & (exact <= upper * (1 + 1e-9) + 1e-9)
    rate = covered / COVERAGE_RUNS
    print(f"epsilon={epsilon}: coverage of 95 % intervals, the lowest group's per aggregate:",
          dict(zip(names, rate.min(axis=0).round(3).tolist(), strict=True)))
    assert rate.min() >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / COVERAGE_RUNS), dict(
        zip(names, rate.min(axis=0), strict=True))
