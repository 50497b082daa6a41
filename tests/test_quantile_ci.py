"""Confidence intervals for quantiles: two more exponential mechanisms, exact coverage.

The interval's ends are drawn from the bucket edges plus a virtual bucket of public
weight τ outside the domain (dpsql/mechanisms/exponential.py). Coverage is checked
*exactly* from the output distributions on adversarial histograms (tiny, empty, point
masses, gaps), then end to end by simulation; privacy by the exact likelihood ratio on
neighbouring histograms, as for the point release.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import dpsql
from dpsql import datasets
from dpsql.mechanisms import Sampler
from dpsql.mechanisms.exponential import ExponentialQuantile
from tests.support import neighbours

B = 32


def histograms() -> list[np.ndarray]:
    rng = np.random.default_rng(5)
    fixed = [np.zeros(B, dtype=np.int64), np.eye(1, B, 0, dtype=np.int64)[0],
             np.eye(1, B, B - 1, dtype=np.int64)[0] * 3, np.eye(1, B, 7, dtype=np.int64)[0] * 500]
    gap = np.zeros(B, dtype=np.int64)
    gap[[2, 29]] = 40  # all mass at two ends, the median rank in the gap
    return [*fixed, gap, *(rng.integers(0, 5, size=B) for _ in range(6)),
            *(rng.integers(0, 400, size=B) * (rng.random(B) < 0.2) for _ in range(4))]


def truth_bucket(point: ExponentialQuantile, h: np.ndarray) -> int:
    """The bucket the noiseless release takes (release.bounded_quantiles: first argmin)."""
    return int(np.argmin(np.asarray(point.distances(h[None, :])[0], dtype=np.float64)))


@pytest.mark.parametrize("q", [Fraction(1, 2), Fraction(1, 10), Fraction(9, 10), Fraction(0)])
@pytest.mark.parametrize("level", [0.8, 0.95])
@pytest.mark.parametrize("epsilon", [0.1, 1.0])
def test_each_end_misses_with_probability_at_most_half_the_error(q, level, epsilon):
    point = ExponentialQuantile(epsilon=epsilon, q=q, max_weight=3, max_groups_per_unit=1)
    lower, upper = (point.interval_end(side, level, B) for side in ("lower", "upper"))
    for h in histograms():
        j = truth_bucket(point, h)
        p_lower, p_upper = lower.probabilities(h), upper.probabilities(h)
        assert len(p_lower) == len(p_upper) == B + 1
        # lower: index 0 is the domain's lo, index k ≥ 1 the lower edge of bucket k − 1
        miss_lower = p_lower[j + 2:].sum()
        # upper: index B is the domain's hi, index k < B the upper edge of bucket k
        miss_upper = p_upper[:j].sum()
        assert miss_lower <= (1 - level) / 2 * (1 + 1e-9), (h.tolist(), j)
        assert miss_upper <= (1 - level) / 2 * (1 + 1e-9), (h.tolist(), j)


def test_an_empty_group_gets_the_whole_domain():
    point = ExponentialQuantile(epsilon=1.0, q=Fraction(1, 2), max_weight=1, max_groups_per_unit=1)
    lower, upper = (point.interval_end(side, 0.95, B) for side in ("lower", "upper"))
    empty = np.zeros((1, B), dtype=np.int64)
    assert lower.probabilities(empty[0])[0] > 0.9 and upper.probabilities(empty[0])[-1] > 0.9
    assert lower.edges(np.array([0, 1, 5]), 0.0, 32.0, B).tolist() == [0.0, 0.0, 4.0]
    assert upper.edges(np.array([B, 0, 5]), 0.0, 32.0, B).tolist() == [32.0, 1.0, 6.0]


@pytest.mark.parametrize("side", ["lower", "upper"])
def test_interval_ends_are_epsilon_dp_on_neighbouring_histograms(side):
    rng = np.random.default_rng(8)
    point = ExponentialQuantile(epsilon=1.0, q=Fraction(1, 3), max_weight=4, max_groups_per_unit=1)
    end = point.interval_end(side, 0.9, 10)
    worst = 0.0
    for _ in range(200):
        with_unit, without = neighbours(rng, 10, 4)
        p, p_ = end.probabilities(with_unit), end.probabilities(without)
        worst = max(worst, float(np.max(np.abs(np.log(p) - np.log(p_)))))
    assert worst <= 1.0 * (1 + 1e-9)


def test_sampled_ends_follow_their_exact_distribution():
    point = ExponentialQuantile(epsilon=2.0, q=Fraction(1, 2), max_weight=1, max_groups_per_unit=1)
    end = point.interval_end("lower", 0.9, 8)
    h = np.array([1, 0, 3, 2, 0, 0, 5, 1])
    draws = end.sample(np.tile(h, (40_000, 1)), Sampler(seed=3))
    observed = np.bincount(draws, minlength=h.size + 1) / draws.size
    assert np.abs(observed - end.probabilities(h)).max() < 0.01


@pytest.fixture(scope="module")
def con() -> dpsql.Connection:
    con = dpsql.connect(budget=dpsql.Budget(1e9, 0.5))
    con.register("visits", datasets.visits(5000, seed=1), privacy_unit="patient_id",
                 bounds={"cost": (0, 2000), "age": (0, 100)}, max_groups_per_unit=2,
                 public_keys={"region": list(datasets.REGIONS)})
    return con


SQL = "SELECT region, MEDIAN(cost) AS m, QUANTILE_CONT(age, 0.9) AS a, COUNT(*) AS n " \
      "FROM visits GROUP BY region"


def test_the_plan_spends_three_equal_shares_per_quantile(con):
    plan = con.compile(SQL, epsilon=1.4, quantile_ci=0.9).plan
    exponential = [p for p in plan.spend if p.mechanism.startswith("exponential")]
    assert len(exponential) == 6 and len({p.epsilon for p in exponential}) == 1
    assert plan.noise.epsilon == exponential[0].epsilon == pytest.approx(1.4 / 7)
    plan.verify_cost()
    without = con.compile(SQL, epsilon=1.4).plan
    assert [p.mechanism for p in without.spend].count("exponential MEDIAN(cost)") == 1


def test_end_to_end_coverage_is_at_least_the_level(con):
    report = con.evaluate(SQL, runs=60, epsilon=1.0, level=0.9, quantile_ci=0.9)
    for column in report.columns:
        assert column.coverage >= 0.9, report


def test_intervals_only_at_or_below_the_released_level(con):
    result = con.sql(SQL, epsilon=1.0, quantile_ci=0.9, seed=1)
    at = result.ci(0.9).to_pydict()
    assert all(lo <= v <= hi for lo, v, hi in zip(at["m_lower"], at["m"], at["m_upper"],
                                                  strict=True))
    assert all(v is None for v in result.ci(0.95).column("m_lower").to_pylist())
    assert None not in result.ci(0.5).column("a_upper").to_pylist()


def test_a_level_outside_zero_one_is_refused(con):
    with pytest.raises(dpsql.ProgrammingError, match=r"quantile_ci=1\.5"):
        con.sql(SQL, quantile_ci=1.5)


@pytest.mark.parametrize(("level", "note"), [
    (None, "no CI for m, a: ask with quantile_ci=0.95"),
    (0.9, "no CI for m, a: ask with quantile_ci=0.95"),
    (0.95, None)])
def test_a_shown_result_says_which_quantiles_have_no_interval_and_how_to_ask(con, level, note):
    """A quantile's interval is a paid release, on request: the table a person reads says
    so, instead of showing a bare value among columns with intervals."""
    shown = repr(con.sql(SQL, epsilon=1.0, quantile_ci=level, seed=1))
    assert (note in shown) if note else "no CI" not in shown
    assert "95% CIs" in shown
