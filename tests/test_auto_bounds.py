"""``bounds="auto"``: bounds estimated privately by the first query that needs them
(``dpsql.autobounds``; audited on neighbouring databases in
tests/privacy/test_audit_auto_bounds.py)."""

from __future__ import annotations

import warnings
from fractions import Fraction

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import dpsql
from dpsql.accounting.values import Cost, total
from dpsql.autobounds import (
    FALLBACK,
    _tail,
    bounds_for_error,
    bounds_for_quantile,
    bounds_from_bins,
    histogram_sql,
    noise_per_unit,
    split,
)
from dpsql.catalog import TableInfo

RNG = np.random.default_rng(7)
INCOMES = RNG.lognormal(10, 1, 3000)


def _connection(**options) -> dpsql.Connection:
    con = dpsql.connect(budget=dpsql.Budget(epsilon=100, delta=1e-3), **options)
    con.register("t", pa.table({"pid": np.arange(3000), "income": INCOMES,
                                "age": RNG.integers(0, 90, 3000),
                                "income_bin": np.zeros(3000)}),
                 privacy_unit="pid", bounds={"income": "auto", "age": "AUTO"})
    return con


def _quiet(con: dpsql.Connection, sql: str, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpsql.PrivacyWarning)
        return con.sql(sql, **options)


def test_auto_is_declared_per_column_and_checked():
    info = TableInfo.private("t", columns={"pid": "INT", "x": "DOUBLE", "s": "VARCHAR"},
                             privacy_unit="pid", bounds={"x": "auto"})
    assert (info.auto_bounds, dict(info.bounds)) == (("x",), {})
    with pytest.raises(dpsql.CatalogError, match="not numeric"):
        TableInfo.private("t", columns={"pid": "INT", "s": "VARCHAR"}, privacy_unit="pid",
                          bounds={"s": "auto"})
    with pytest.raises(dpsql.CatalogError, match='or "auto"'):
        TableInfo.private("t", columns={"pid": "INT", "x": "DOUBLE"}, privacy_unit="pid",
                          bounds={"x": "automatic"})


def test_the_catalog_file_declares_auto(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("pid,x\n1,2.5\n2,3.5\n")
    catalog = tmp_path / "catalog.toml"
    catalog.write_text(f'[tables.t]\nsource = "{path}"\nprivacy_unit = "pid"\n'
                       'bounds = { x = "auto" }\n')
    con = dpsql.connect(catalog=catalog)
    assert con.catalog.get("t").auto_bounds == ("x",)


@pytest.mark.parametrize(("rows", "expected"), [
    ([(4.0, 120), (64.0, 31), (-2.0, 15)], (-2.0, 64.0)),
    ([(2.0**-20, 50)], (0.0, 2.0**-20)),
    ([(-1e100, 9)], (-1e100, 0.0)),
    ([(None, 4)], FALLBACK),
    ([], FALLBACK),
])
def test_bounds_are_the_outer_edges_of_the_released_bins(rows, expected):
    assert bounds_from_bins(rows) == expected


FALLING = [(2.0**10, 400.0), (2.0**11, 200.0), (2.0**12, 100.0), (-4.0, 30.0)]


def test_more_noise_chooses_a_tighter_clamp():
    """The bound minimising bias² + noise² moves in as the noise per unit of bound grows,
    from beyond the released bins (the hidden tail) down to the lowest released edge."""
    highs = [bounds_for_error(FALLING, noise_per_unit=n)[1] for n in (0.1, 1, 10, 100, 1e4)]
    assert highs == sorted(highs, reverse=True)
    assert highs[0] > 2.0**12 and highs[-1] == 2.0**10


def test_the_clamp_minimises_the_error_it_estimates():
    """Exact: with no tail to extrapolate (bins rising to the last one) and noise 1 per unit
    of bound, 2^12 has bias 0.75·2^13 − 2^12 per row of the 2^13 bin, 2^13 none."""
    rows = [(2.0**12, 10.0), (2.0**13, 10.0 + 1e-9)]
    per_unit = 0.001
    top = bounds_for_error(rows, noise_per_unit=per_unit)[1]
    error = {h: (10.0 * max(0.75 * 2.0**13 - h, 0)) ** 2 + (per_unit * h) ** 2
             for h in (2.0**12, 2.0**13)}
    assert top >= 2.0**13 and error[2.0**13] < error[2.0**12]


def test_a_heavy_tail_is_continued_at_its_last_fall_never_slower_than_a_quarter():
    """The hidden bins beyond the last released one: a heavy tail (bench_utility's costs,
    whose hidden bins hold 46, 14, 1, 1 people) keeps its last fall, 856 → 206, where the
    half-normal from the mode put 18 and 2; a last fall slower than ¼ (a Pareto index under
    2, whose mass would not shrink) is continued at ¼ per doubling."""
    heavy = {2.0**k: n for k, n in zip(range(8, 13), (4872, 4217, 2468, 856, 206), strict=True)}
    assert [round(n) for n in _tail(heavy).values()] == [50, 12, 3, 1]
    slow = _tail({2.0**8: 1000, 2.0**10: 100, 2.0**11: 90})
    assert slow[2.0**12] == pytest.approx(90 / 4) and slow[2.0**13] == pytest.approx(90 / 16)
    costs = [(2.0**k, n) for k, n in zip(range(4, 13), (233, 889, 2275, 3889, 4578, 4016,
                                                          2585, 1073, 245), strict=True)]
    assert bounds_for_error(costs, noise_per_unit=3.0, groups=8)[1] == 2.0**13


def test_bounds_for_error_needs_released_bins_only():
    assert bounds_for_error([], noise_per_unit=1.0) == FALLBACK
    assert bounds_for_error([(None, 5), (4.0, -3)], noise_per_unit=1.0) == (0.0, 4.0)
    lo, hi = bounds_for_error(FALLING, noise_per_unit=1e4)
    assert (lo, hi) == (-4.0, 2.0**10)  # sides chosen apart; negative noisy counts are 0


def test_noise_per_unit_is_a_sum_s_laplace_std():
    assert noise_per_unit(0.5, 3) == pytest.approx(2**0.5 * 3 / 0.25)


@pytest.mark.parametrize(("epsilon", "delta", "columns"), [
    (1.0, 1e-6, 1), (0.3, 1e-9, 3), (1e-9, 1e-300, 2), (1.7976931348623157e308, 0.5, 7),
    (0.1, 0.1, 1)])
def test_the_split_never_exceeds_the_query_s_budget(epsilon, delta, columns):
    each_e, each_d, rest_e, rest_d = split(epsilon, delta, columns)
    assert columns * Fraction(each_e) + Fraction(rest_e) <= Fraction(epsilon)
    assert columns * Fraction(each_d) + Fraction(rest_d) <= Fraction(delta)
    assert rest_e >= epsilon * 0.74 and each_e > 0 and each_d > 0


def test_a_budget_too_small_to_share_is_refused():
    with pytest.raises(dpsql.PrivacyError, match="too small to share"):
        split(1.0, 5e-324, 2)


def test_the_histogram_is_an_ordinary_private_query():
    con = _connection()
    sql = histogram_sql(con.catalog.get("t"), "income")
    plan = con.compile(sql, epsilon=1.0, delta=1e-6).plan
    assert plan.selection is not None  # the bins are private keys: released by selection
    assert "income_bin_" in sql  # the table's own income_bin column is not shadowed


def test_the_first_query_pays_for_the_bounds_from_its_own_budget():
    # Seeded: unseeded, about 1 run in 60 continues the tail one doubling past the largest
    # income (2**20), as the estimate may (docs/benchmarks.md, "a heavy tail continued").
    con = _connection(seed=11)
    with pytest.warns(dpsql.PrivacyWarning, match=r"t.income: bounds estimated as \[0, "):
        first = con.sql("SELECT AVG(income) FROM t", epsilon=1.0, delta=1e-6)
    lo, hi = con.catalog.get("t").bounds["income"]
    # The highest bin with enough people to be released: above most values, not beyond all.
    assert lo == 0 and hi == 2.0 ** round(np.log2(hi))
    assert np.quantile(INCOMES, 0.9) < hi <= 2 * INCOMES.max()
    assert con.budget.spent.epsilon == 1.0  # a quarter for the bounds, the rest for AVG
    assert first.fetchall()[0][0] == pytest.approx(INCOMES.mean(), rel=0.1)
    con.sql("SELECT AVG(income) FROM t", epsilon=1.0, delta=1e-6)
    assert con.budget.spent.epsilon == 2.0  # estimated once, then reused for free


def test_one_query_estimates_every_column_it_needs():
    con = _connection()
    _quiet(con, "SELECT SUM(income), AVG(age) FROM t", epsilon=2.0, delta=1e-6)
    info = con.catalog.get("t")
    assert info.auto_bounds == () and set(info.bounds) == {"income", "age"}
    # Every age is covered; with noise this cheap the extrapolated tail may add doublings.
    assert 128.0 <= info.bounds["age"][1] <= 1024.0
    assert con.budget.spent.epsilon == 2.0


def test_the_answer_costs_the_whole_charge_with_its_estimates():
    """``Result.cost`` is what the statement charged: the estimates of the bounds it paid
    for first and its own part, added as the ledger adds them (0.7 in three charges)."""
    con = _connection()
    result = _quiet(con, "SELECT SUM(income), AVG(age) FROM t", epsilon=0.7, delta=1e-6)
    charged = con.budget.charges
    assert len(charged) == 3
    assert result.cost == total(Cost(c.epsilon, c.delta) for c in charged) == con.budget.spent
    assert result.cost.epsilon == 0.7 and result.cost.delta > 0  # the estimates' δ


def test_a_subquery_reads_the_estimated_bounds():
    con = _connection()
    sql = "SELECT AVG(income) FROM (SELECT pid, income FROM t WHERE age > 20) s"
    result = _quiet(con, sql, epsilon=1.0, delta=1e-6)
    assert result.fetchall()[0][0] == pytest.approx(INCOMES.mean(), rel=0.15)


def test_a_renamed_auto_column_needs_declared_bounds():
    """Auto bounds are found for the column by its name; renamed in a subquery, it is
    refused as any unbounded column is (before data is read, nothing spent)."""
    con = _connection()
    with pytest.raises(dpsql.UnsupportedQueryError, match=r"AVG\(x\) needs bounds"):
        con.sql("SELECT AVG(x) FROM (SELECT pid, income AS x FROM t) s", epsilon=1.0,
                delta=1e-6)
    assert con.budget.spent.epsilon == 0


def test_refusals_come_before_any_data_is_read_and_spend_nothing():
    con = _connection()
    with pytest.raises(dpsql.BoundsNeeded,
                       match=r"t\.income, which dpsql estimates \(declared \"auto\""):
        con.explain("SELECT SUM(income) FROM t", epsilon=1.0, delta=1e-6)
    with pytest.raises(dpsql.PrivacyError, match="needs delta > 0"):
        con.sql("SELECT SUM(income) FROM t", epsilon=1.0, delta=0)
    with pytest.raises(dpsql.BudgetExceededError):
        con.sql("SELECT SUM(income) FROM t", epsilon=1000.0, delta=1e-6)
    assert con.budget.spent.epsilon == 0 and con.catalog.get("t").auto_bounds == ("income",
                                                                                 "age")


def test_a_clamp_in_the_query_needs_no_estimate():
    con = _connection()
    con.sql("SELECT SUM(LEAST(GREATEST(income, 0), 1000)) FROM t", epsilon=1.0)
    assert con.catalog.get("t").auto_bounds == ("income", "age")


def test_estimate_bounds_only_for_auto_columns():
    con = _connection()
    assert _quiet_estimate(con) == con.catalog.get("t").bounds["income"]
    with pytest.raises(dpsql.CatalogError, match="not declared"):
        con.estimate_bounds("t", "income", epsilon=1.0, delta=1e-6)


def _quiet_estimate(con: dpsql.Connection) -> tuple[float, float]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpsql.PrivacyWarning)
        return con.estimate_bounds("t", "income", epsilon=1.0, delta=1e-6)


def test_an_analyst_query_estimates_them_too(tmp_path):
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"pid": np.arange(3000), "income": INCOMES}), path)
    catalog = tmp_path / "catalog.toml"
    catalog.write_text(f'[tables.t]\nsource = "{path}"\nprivacy_unit = "pid"\n'
                       'bounds = { income = "auto" }\n')
    analyst = dpsql.connect(catalog=catalog, role="analyst",
                            budget=dpsql.Budget(epsilon=10, delta=1e-4))
    _quiet(analyst, "SELECT SUM(income) FROM t", epsilon=1.0, delta=1e-6)
    assert analyst.catalog.get("t").auto_bounds == ()
    assert analyst.budget.spent.epsilon == 1.0


def test_too_few_people_give_the_fallback_and_still_an_answer():
    con = dpsql.connect(budget=dpsql.Budget(epsilon=100, delta=1e-3))
    con.register("t", pa.table({"pid": [1, 2, 3], "x": [5.0, 6.0, 7.0]}), privacy_unit="pid",
                 bounds={"x": "auto"})
    _quiet(con, "SELECT SUM(x) FROM t", epsilon=0.5, delta=1e-6).fetchall()
    assert con.catalog.get("t").bounds["x"] == FALLBACK


@pytest.mark.parametrize(("rows", "levels", "expected"), [
    # 500 values, 300 in [2^14, 2^15): ranks 125 and 375 both fall in it
    ([(2.0**14, 100), (2.0**15, 300), (2.0**16, 100)], (0.5, 0.5), (2.0**14, 2.0**15)),
    ([(2.0**14, 100), (2.0**15, 300), (2.0**16, 100)], (0.0, 1.0), (2.0**13, 2.0**16)),
    ([(2.0**14, 100), (2.0**15, 300), (2.0**16, 100)], (0.9, 0.9), (2.0**14, 2.0**16)),
    ([(-4.0, 60), (2.0**-20, 10), (8.0, 30)], (0.5, 0.5), (-4.0, 8.0)),
    ([(-4.0, 60), (8.0, 30), (1e100, -5)], (0.1, 0.1), (-4.0, -2.0)),  # (-4, -2]: ranks to 60
    ([(None, 7)], (0.5, 0.5), FALLBACK),
])
def test_quantile_bounds_hold_the_levels_with_a_margin(rows, levels, expected):
    """Exact: lo is the lower edge of the bin where the noisy count passes low/2 of the total,
    hi the upper edge of the bin where it reaches 1 − (1 − high)/2 (negative counts as 0)."""
    assert bounds_for_quantile(rows, *levels) == expected


def test_a_median_gets_bounds_around_it_not_the_tail_a_sum_needs():
    """MEDIAN(income) alone: the range holds the median and is narrower than the one SUM's
    bias² + noise² picks (its buckets, (hi − lo)/1024, are finer); the cost is the same."""
    chosen = {}
    for query in ("SELECT MEDIAN(income) FROM t", "SELECT SUM(income) FROM t"):
        con = _connection(seed=5)
        _quiet(con, query, epsilon=1.0, delta=1e-6)
        chosen[query.split("(")[0][7:]] = con.catalog.get("t").bounds["income"]
        assert con.budget.spent.epsilon == 1.0
    lo, hi = chosen["MEDIAN"]
    assert lo <= np.median(INCOMES) <= hi
    assert lo > 0 and hi - lo < chosen["SUM"][1] - chosen["SUM"][0]
