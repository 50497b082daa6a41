"""Extreme privacy parameters and bounds: an answer with finite values, or a dpsql.Error.

The analyst controls ε, δ, the query and its clamps; the data owner the declared bounds. At
any of them dpsql must either answer with finite numbers or refuse with a dpsql.Error that
says what to change, before any data is read. The regression tests pin the cases that
failed before (each named after what it checks); the property test sweeps the space.
"""

from __future__ import annotations

import math
import sys
import warnings
from dataclasses import replace
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dpsql
from dpsql.accounting.composition import gaussian, laplace, zcdp, zcdp_to_dp
from dpsql.analysis import analyze
from dpsql.mechanisms import (
    Sampler,
    analytic_gaussian_sigma,
    choose_noise,
    discrete_gaussian_sigma,
    gaussian_log_delta,
    validate_privacy,
)
from dpsql.mechanisms.exponential import ExponentialQuantile
from dpsql.mechanisms.selection import truncated_geometric_probability
from dpsql.mechanisms.selection_choice import best_selection

LARGEST = sys.float_info.max
PUMS = "datasets/PUMS_dup.csv"
PUMS_BOUNDS = {"age": (0, 100), "income": (0, 500000)}
HUGE_EPSILONS = [1e18, 1e20, 1e300, LARGEST]


def pums(budget=None, **options) -> dpsql.Connection:
    con = dpsql.connect(budget=budget or dpsql.Budget(epsilon=LARGEST, delta=0.5), seed=1,
                        **options)
    con.register("pums", PUMS, privacy_unit="pid", bounds=PUMS_BOUNDS)
    return con


def finite(result) -> bool:
    return all(math.isfinite(v) for row in result.fetchall() for v in row
               if isinstance(v, int | float))


# 1. A huge ε (ZetaSQL's "no noise" idiom) answers, with essentially no noise.


@pytest.mark.parametrize("epsilon", [1e18, 1e20])
def test_huge_epsilon_answers_without_noise(epsilon):
    con = pums()
    assert con.sql("SELECT COUNT(*) FROM pums", epsilon=epsilon).fetchall() == [(1000,)]
    avg = con.sql("SELECT AVG(age) FROM pums", epsilon=epsilon).fetchall()
    assert avg == con.sql("SELECT AVG(age) FROM pums", epsilon=1e30).fetchall()
    by_sex = con.sql("SELECT sex, AVG(age) FROM pums GROUP BY sex", epsilon=epsilon,
                     delta=1e-5).fetchall()
    assert [k for k, _ in by_sex] == [0, 1]


@pytest.mark.parametrize("epsilon", HUGE_EPSILONS)
def test_huge_epsilon_every_mechanism_and_report(epsilon, tmp_path):
    for ledger in (None, tmp_path / "ledger.db"):
        con = pums(**({} if ledger is None else {"ledger": ledger}))
        for sql in ("SELECT MEDIAN(age) FROM pums",
                    "SELECT sex, COUNT(*), VAR_POP(income) FROM pums GROUP BY sex",
                    "SELECT married FROM pums GROUP BY married"):
            assert finite(con.sql(sql, epsilon=epsilon / 4, delta=1e-5))
        report = con.report()
        assert report.basic[0] == pytest.approx(3 * (epsilon / 4))
        assert "budget" in str(report) and con.budget.remaining.epsilon >= 0


@pytest.mark.parametrize("epsilon", HUGE_EPSILONS)
def test_huge_epsilon_mechanisms(epsilon):
    for delta in (5e-324, 1e-5, 0.5):
        sigma = analytic_gaussian_sigma(1.0, epsilon, delta)
        assert gaussian_log_delta(1 / sigma, epsilon) <= math.log(delta)
        assert 0 < discrete_gaussian_sigma(1.0, epsilon, delta) < 1e-9
    plan = choose_noise([dpsql.mechanisms.Sensitivity("n", 1.0, 1.0, 1.0, True)], epsilon, 1e-5)
    assert plan.kind == "laplace" and plan.noise_for(plan.sensitivities[0]).scale > 0
    quantile = ExponentialQuantile(epsilon, Fraction(1, 2), 1, 1)
    assert quantile.sample(np.array([[0, 9, 0]]), Sampler(seed=1)).tolist() == [1]
    assert best_selection(dpsql.mechanisms.Noise("laplace", 1.0), epsilon, 1e-6, 1)
    assert truncated_geometric_probability(2, epsilon, 1e-6, 1) == 1.0
    assert zcdp([laplace(epsilon)]) > 0 and zcdp_to_dp(zcdp([gaussian(1 / epsilon)]), 1e-5) > 0


# 2. Any δ in (0, 1): an answer, or a PrivacyError that says which δ works.


def test_a_subnormal_delta_is_refused_with_the_delta_that_works():
    con = pums()
    with pytest.raises(dpsql.PrivacyError, match=r"delta=5e-324 is too small.*delta >= 1e-300"):
        con.sql("SELECT sex, COUNT(*) FROM pums GROUP BY sex", epsilon=1, delta=5e-324)
    assert con.budget.spent.epsilon == 0
    assert finite(con.sql("SELECT sex, COUNT(*) FROM pums GROUP BY sex", epsilon=1,
                          delta=1e-300))


# 3. and 4. Bounds: one rule for the catalog and the query; noise that would overflow at ε
# is refused when the query is planned.


@pytest.mark.parametrize("bounds, message", [
    ((0, 1e-320), "too small"), ((-1e308, 1e308), "too wide"), ((0, 1e101), "too wide"),
    ((-1e-101, 1.0), "too small"), ((1.0, math.inf), "finite lo <= hi"),
])
def test_the_catalog_refuses_bounds_it_cannot_compute_with(bounds, message):
    con = dpsql.connect()
    with pytest.raises(dpsql.CatalogError, match=f"{message}.*1e-100 and 1e\\+100|{message}"):
        con.register("pums", PUMS, privacy_unit="pid", bounds={"age": bounds})


@pytest.mark.parametrize("bounds", [(0, 1e-100), (-1e100, 1e100), (1e-100, 1e100)])
def test_the_limits_themselves_answer(bounds):
    con = pums()
    con.register("t", PUMS, privacy_unit="pid", bounds={"age": bounds})
    assert finite(con.sql("SELECT SUM(age), AVG(age), VAR_POP(age), MEDIAN(age) FROM t",
                          epsilon=1.0))


@pytest.mark.parametrize("clamp", ["LEAST(GREATEST(educ, -1e308), 1e308)",
                                   "educ, contribution_bounds_per_row => (0, 1e-320)",
                                   "educ, contribution_bounds_per_group => (-1e300, 1e300)",
                                   "educ, contribution_bounds_per_group => (0, 1e-300)"])
def test_a_query_clamp_follows_the_same_rule(clamp):
    con = pums()
    with pytest.raises(dpsql.PrivacyError, match="between 1e-100 and 1e\\+100"):
        con.sql(f"SELECT SUM({clamp}) FROM pums", epsilon=1.0)
    assert not con.budget.charges


@pytest.mark.parametrize("sql, epsilon, message", [
    ("SELECT COUNT(*) FROM pums", 1e-12, "64-bit integer"),
    ("SELECT SUM(LEAST(GREATEST(educ, 0), 1e100)) FROM pums", 1e-200, "overflows"),
    ("SELECT SUM(age) FROM pums", 1e-13, "exact sampling"),
    ("SELECT SUM(age) FROM pums", 5e-324, "overflows"),
])
def test_noise_that_cannot_be_released_is_refused_before_reading_data(sql, epsilon, message):
    con = pums()
    with pytest.raises(dpsql.PrivacyError, match=f"{message}.*(larger epsilon|absolute)"):
        con.explain(sql, epsilon=epsilon, delta=0)
    with pytest.raises(dpsql.PrivacyError, match=message):
        con.sql(sql, epsilon=epsilon, delta=0)
    assert con.budget.spent.epsilon == 0


def test_check_value_bounds_is_the_one_rule():
    from dpsql.plan import MAX_BOUND, MIN_BOUND, check_value_bounds

    assert check_value_bounds(-MAX_BOUND, MIN_BOUND, "x") == (-1e100, 1e-100)
    assert check_value_bounds(0, 0, "x") == (0.0, 0.0)
    with pytest.raises(dpsql.CatalogError):
        check_value_bounds(0, 2e100, "x", error=dpsql.CatalogError)


# 5. ε, δ and ρ are numbers: bools, strings, None, NaN and ±inf are refused.

BAD = [True, False, np.bool_(True), "1", None, math.nan, math.inf, -math.inf, Decimal("NaN")]
GOOD = [1, 0.5, np.float32(0.5), np.int64(2), Fraction(1, 4), Decimal("0.25"), LARGEST]


@pytest.mark.parametrize("value", BAD)
def test_bad_privacy_parameters_are_refused(value):
    with pytest.raises(dpsql.PrivacyError):
        validate_privacy(value, 1e-6)
    with pytest.raises(dpsql.PrivacyError):
        validate_privacy(1.0, value)
    for name in ("epsilon", "rho"):
        with pytest.raises(dpsql.PrivacyError):
            dpsql.Budget(**{name: value})
    with pytest.raises(dpsql.PrivacyError):
        dpsql.Budget(epsilon=1.0, delta=value)
    if value is not None:  # epsilon=None asks for the connection's default
        with pytest.raises(dpsql.PrivacyError, match=r"not a number|not allowed"):
            pums().sql("SELECT COUNT(*) FROM pums", epsilon=value)


@pytest.mark.parametrize("value", GOOD)
def test_numbers_of_any_real_type_are_accepted(value):
    epsilon, _ = validate_privacy(value, Fraction(1, 10**6))
    assert isinstance(epsilon, float) and epsilon == float(value)
    assert dpsql.Budget(epsilon=value, delta=Decimal("1e-6")).epsilon == float(value)
    assert dpsql.Budget(rho=value).rho == float(value)
    result = pums().sql("SELECT COUNT(*) FROM pums", epsilon=value)
    assert type(result.cost.epsilon) is float and finite(result)


# 6. Budget splits are exact: the parts never exceed the written cost, and the check is strict.

SPLIT = "SELECT married, COUNT(*), SUM(age), AVG(income) FROM pums GROUP BY married"


@pytest.mark.parametrize("epsilon", [1, 0.3, 0.7, 1 / 3, 2.9, 1e-3, 1e18])
def test_budget_splits_are_exact(epsilon):
    con = pums()
    result = con.sql(SPLIT, epsilon=epsilon, delta=1e-5)
    plan = result.plan
    plan.verify_cost()
    parts = plan.spend
    assert sum(Fraction(p.epsilon) for p in parts) <= Fraction(repr(float(epsilon)))
    assert sum(Fraction(p.delta) for p in parts) <= Fraction(1, 10**5)
    assert con.budget.charges[-1].epsilon == float(epsilon)


def test_verify_cost_catches_one_ulp_of_overspend():
    plan = analyze(SPLIT, pums().catalog, epsilon=1, delta=1e-5)
    plan.verify_cost()
    noise = plan.noise
    greedy = replace(plan, noise=replace(noise, epsilon=math.nextafter(noise.epsilon, 2.0)))
    with pytest.raises(dpsql.InternalError, match="differs"):
        greedy.verify_cost()
    delta = replace(plan, cost=replace(plan.cost, delta=math.nextafter(1e-5, 0.0)))
    with pytest.raises(dpsql.InternalError, match="differs"):
        delta.verify_cost()


# 7. The property: any ε, δ and bounds give finite answers or a dpsql.Error.

MAGNITUDES = st.one_of(st.just(0.0), st.sampled_from([1e-320, 1e-100, 1e100, 1e308]),
                       st.floats(-320, 308).map(lambda e: 10.0**e))
SIGNED = st.tuples(MAGNITUDES, st.booleans()).map(lambda p: -p[0] if p[1] else p[0])
EPSILONS = st.one_of(st.sampled_from([1e-6, 1.0, 1e18, 1e300]),
                     st.floats(-6, 300).map(lambda e: 10.0**e))
DELTAS = st.sampled_from([0, 5e-324, 1e-300, 1e-12, 1e-5, 0.5])
QUERIES = [
    "SELECT COUNT(*) FROM t",
    "SELECT SUM(x), AVG(x) FROM t",
    "SELECT VAR_SAMP(x), STDDEV_POP(x) FROM t",
    "SELECT QUANTILE_CONT(x, 0.9) FROM t",
    "SELECT k, COUNT(*), AVG(x) FROM t GROUP BY k",
    "SELECT p, SUM(x), MEDIAN(x) FROM t GROUP BY p",
    "SELECT SUM(LEAST(GREATEST(x, -1e300), 1e300)) FROM t",
]
VALUES = [0.0, 1e-310, -1e-300, 1.5, -3.0, 1e6, -1e100, 1e200, LARGEST, -LARGEST]
TABLE = pa.table({"pid": np.arange(60) % 40, "k": ["a", "b", "c"] * 20,
                  "p": ["u", "v", "w", "u"] * 15, "x": VALUES * 6})


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(epsilon=EPSILONS, delta=DELTAS, bounds=st.tuples(SIGNED, SIGNED).map(sorted),
       sql=st.sampled_from(QUERIES))
def test_any_parameters_give_finite_answers_or_a_dpsql_error(epsilon, delta, bounds, sql):
    con = dpsql.connect(budget=dpsql.Budget(epsilon=LARGEST, delta=0.9), seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # an overflow is a bug even if caught
        try:
            con.register("t", TABLE, privacy_unit="pid", bounds={"x": tuple(bounds)},
                         public_keys={"k": ["a", "b", "c"]})
            result = con.sql(sql, epsilon=epsilon, delta=delta)
        except dpsql.Error:
            return
    assert finite(result), (sql, epsilon, delta, bounds, result.fetchall())


def test_a_bool_epsilon_is_refused_even_after_the_same_query_with_one():
    """The plan cache must not answer ``epsilon=True`` with the plan made for ``epsilon=1``."""
    con = dpsql.connect(budget=dpsql.Budget(epsilon=10))
    con.register("t", pa.table({"pid": [1, 2]}), privacy_unit="pid")
    con.sql("SELECT COUNT(*) FROM t", epsilon=1)
    for value in (True, [1], "1"):
        with pytest.raises(dpsql.PrivacyError, match="not a number"):
            con.sql("SELECT COUNT(*) FROM t", epsilon=value)

