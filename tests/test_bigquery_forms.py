"""BigQuery/ZetaSQL forms (issue 39, point 4): APPROX_QUANTILES and ANON_QUANTILES, and
APPROX_COUNT_DISTINCT."""

from __future__ import annotations

import dataclasses
from fractions import Fraction

import numpy as np
import pyarrow as pa
import pytest

import dpsql
from dpsql.analysis import analyze
from dpsql.catalog import Catalog, TableInfo
from tests.support import COLUMNS, make_plan, neighbours

QUARTILES = "SELECT APPROX_QUANTILES(x, 4) FROM t"


def quantile_mechanisms(plan):
    return [a.quantile.mechanism for a in plan.aggregates if a.quantile is not None]


def test_approx_quantiles_are_n_plus_one_quantiles_of_one_histogram():
    plan = make_plan(QUARTILES)
    aggregates = [a for a in plan.aggregates if a.quantile is not None]
    assert [a.quantile.q for a in aggregates] == [Fraction(i, 4) for i in range(5)]
    assert len({a.quantile.histogram for a in aggregates}) == 1
    assert [a.sql for a in aggregates] == [f"APPROX_QUANTILES(x, 4)[OFFSET({i})]"
                                           for i in range(5)]
    assert plan.output.expressions[0].sql(dialect="duckdb").startswith("LIST_SORT([")


@pytest.mark.parametrize("sql, shares", [(QUARTILES, 5),
                                         ("SELECT APPROX_QUANTILES(x, 4), COUNT(*) FROM t", 6),
                                         ("SELECT APPROX_QUANTILES(x, 2), MEDIAN(x) FROM t", 3)])
def test_approx_quantiles_split_epsilon_over_their_releases(sql, shares):
    """n + 1 exponential mechanisms (and the noise, if any): ε/(n + 1 [+ 1]) each; the
    median asked twice is released once."""
    plan = make_plan(sql)
    assert [m.epsilon for m in quantile_mechanisms(plan)] == \
        [pytest.approx(1 / shares)] * len(quantile_mechanisms(plan))
    assert sum(m.epsilon for m in quantile_mechanisms(plan)) <= 1.0
    assert plan.cost.epsilon == 1.0


def array_loss(mechanisms, with_unit: np.ndarray, without: np.ndarray) -> float:
    """The largest log-ratio of the joint output's probabilities: Σᵢ maxⱼ |ln pᵢ − ln p′ᵢ|."""
    return sum(float(np.max(np.abs(np.log(m.probabilities(with_unit))
                                   - np.log(m.probabilities(without))))) for m in mechanisms)


@pytest.mark.slow
def test_the_quantiles_together_keep_the_querys_epsilon_exactly():
    """The n + 1 draws are independent given the histogram, so the privacy loss of the whole
    array is the sum of each mechanism's: on neighbouring histograms (one unit's weight at
    most the plan's), Σᵢ maxⱼ |ln pᵢ(j) − ln p′ᵢ(j)| ≤ ε. The same mechanisms each at the
    whole ε (the budget not split) lose more than ε on these neighbours."""
    plan = make_plan(QUARTILES, max_rows_per_group=3)
    mechanisms = quantile_mechanisms(plan)
    weight = mechanisms[0].max_weight
    whole = [dataclasses.replace(m, epsilon=1.0) for m in mechanisms]
    rng = np.random.default_rng(3)
    worst, unsplit = 0.0, 0.0
    for _ in range(20):  # each exact distribution takes ~0.05 s
        pair = neighbours(rng, 16, weight)
        worst = max(worst, array_loss(mechanisms, *pair))
        unsplit = max(unsplit, array_loss(whole, *pair))
    assert worst <= 1.0 * (1 + 1e-9)
    assert unsplit > 1.0


def test_the_released_array_is_sorted_and_indexed_as_written():
    con = dpsql.connect(budget=dpsql.Budget(epsilon=1e9), seed=4)
    con.register("t", pa.table({"pid": range(400), "x": [float(i % 50) for i in range(400)]}),
                 privacy_unit="pid", bounds={"x": (0, 50)})
    sql = ("SELECT APPROX_QUANTILES(x, 8) AS q, APPROX_QUANTILES(x, 8)[OFFSET(2)] AS third, "
           "APPROX_QUANTILES(x, 8)[ORDINAL(3)] AS also_third, "
           "ARRAY_LENGTH(APPROX_QUANTILES(x, 8)) AS n FROM t")
    for seed in range(5):  # at ε = 0.05 neighbouring quantiles often come out of order
        ((q, third, also_third, n),) = con.sql(sql, epsilon=0.05, dialect="bigquery",
                                               seed=seed).fetchall()
        assert len(q) == n == 9 and q == sorted(q) and third == also_third == q[2]


@pytest.mark.parametrize("sql, message", [
    ("SELECT APPROX_QUANTILES(x, 1 + 1) FROM t", "n an integer literal from 1 to 100"),
    ("SELECT APPROX_QUANTILES(x, 2.5) FROM t", "n an integer literal from 1 to 100"),
    ("SELECT APPROX_QUANTILES(x, 4)[OFFSET(-1)] FROM t", "with i an integer literal"),
    ("SELECT k, ARRAY_LENGTH(k) FROM t GROUP BY k", "ARRAY_LENGTH(APPROX_QUANTILES(x, n))"),
    ("SELECT APPROX_QUANTILES(APPROX_QUANTILES(x, 2)[OFFSET(1)], 2) FROM t",
     "APPROX_QUANTILES argument"),
])
def test_approx_quantiles_refusals(sql, message):
    with pytest.raises(dpsql.UnsupportedQueryError, match=message.replace("(", r"\(")
                       .replace(")", r"\)")):
        make_plan(sql)


def test_approx_quantiles_need_bounds_like_any_quantile():
    cat = Catalog()
    cat.add(TableInfo.private("t", columns=COLUMNS, privacy_unit="pid"))
    with pytest.raises(dpsql.UnsupportedQueryError, match="needs bounds"):
        analyze("SELECT APPROX_QUANTILES(flag, 4) FROM t", cat, epsilon=1.0, delta=0.0)


def test_approx_count_distinct_is_count_distinct():
    """The same statistic, bound and noise as COUNT(DISTINCT x), whose per-unit bound the
    COUNT(DISTINCT) tests and audit check; the result says which it answered."""
    approx, exact = (make_plan(f"SELECT k, {agg} FROM t GROUP BY k")
                     for agg in ("APPROX_COUNT_DISTINCT(x)", "COUNT(DISTINCT x)"))
    assert approx.stats == exact.stats and approx.sensitivities == exact.sensitivities
    assert approx.noise == exact.noise and approx.aggregates[0].kind == "count_distinct"
    con = dpsql.connect(budget=dpsql.Budget(epsilon=1e9))
    con.register("t", pa.table({"pid": range(50), "x": [i % 7 for i in range(50)]}),
                 privacy_unit="pid", max_rows_per_group=1)
    result = con.sql("SELECT APPROX_COUNT_DISTINCT(x) FROM t", epsilon=1.0, dialect="bigquery")
    assert "APPROX_COUNT_DISTINCT(x) is answered as COUNT(DISTINCT x): counted exactly, then " \
           "noised" in result.notes()
    with pytest.raises(dpsql.UnsupportedQueryError, match="APPROX_COUNT_DISTINCT\\(expr\\)"):
        make_plan("SELECT APPROX_COUNT_DISTINCT(x, contribution_bounds_per_group => (0, 1)) "
                  "FROM t")
