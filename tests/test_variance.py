"""VAR/STDDEV: the estimator's maths, its interval, explain(), and the end-to-end values."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import dpsql
from dpsql.variance import Spread

SPREAD = Spread(lo=0.0, hi=10.0, mean_center=5.0, square_center=12.5)


def sums(values: np.ndarray) -> tuple[float, float, float]:
    """Exact N, S₁ = Σ(x − 5), S₂ = Σ((x − 5)² − 12.5) for values in [0, 10]."""
    return float(len(values)), float(np.sum(values - 5)), float(np.sum((values - 5) ** 2 - 12.5))


@pytest.mark.parametrize("seed", range(5))
def test_exact_sums_give_numpy_variances(seed):
    values = np.random.default_rng(seed).uniform(0, 10, size=17)
    n, s1, s2 = (np.array([v]) for v in sums(values))
    assert SPREAD.value("var_pop", n, s1, s2)[0] == pytest.approx(np.var(values))
    assert SPREAD.value("var_samp", n, s1, s2)[0] == pytest.approx(np.var(values, ddof=1))
    assert SPREAD.value("stddev_pop", n, s1, s2)[0] == pytest.approx(np.std(values))
    assert SPREAD.value("stddev_samp", n, s1, s2)[0] == pytest.approx(np.std(values, ddof=1))


def test_noisy_values_are_clipped_to_the_valid_range():
    n, s1 = np.array([0.0, 3.0, 3.0]), np.array([0.0, 0.0, 1e6])
    s2 = np.array([-50.0, 1e6, -1e6])
    var = SPREAD.value("var_pop", n, s1, s2)
    assert np.all((var >= 0) & (var <= 25))
    assert var[1] == 25 and var[2] == 0
    assert np.all(np.isfinite(SPREAD.value("stddev_samp", n, s1, s2)))


def test_interval_contains_every_value_in_its_box():
    """Dense check: for random boxes, the estimator at random points inside stays inside."""
    rng = np.random.default_rng(1)
    for kind in ("var_pop", "var_samp", "stddev_pop", "stddev_samp"):
        for _ in range(200):
            centre = np.array([rng.uniform(-2, 40), rng.normal(0, 30), rng.normal(0, 100)])
            half = rng.uniform(0, [5, 40, 200])
            box = [(np.array([c - h]), np.array([c + h])) for c, h in zip(centre, half,
                                                                          strict=True)]
            lower, upper = SPREAD.interval(kind, *box)
            points = rng.uniform(centre - half, centre + half, size=(50, 3))
            inside = SPREAD.value(kind, *(points[:, i] for i in range(3)))
            assert np.all(inside >= lower[0] - 1e-9) and np.all(inside <= upper[0] + 1e-9)


VALUES = np.random.default_rng(0).uniform(0, 10, 3000)


def connection(**options) -> dpsql.Connection:
    table = pa.table({"pid": np.arange(3000), "g": np.where(np.arange(3000) % 3, "a", "b"),
                      "x": VALUES})
    con = dpsql.connect(budget=dpsql.Budget(epsilon=1e9, delta=0.5), **options)
    con.register("t", table, privacy_unit="pid", bounds={"x": (0, 10)},
                 public_keys={"g": ["a", "b"]})
    return con


def test_release_matches_the_exact_variance_at_large_epsilon():
    con = connection(seed=3)
    row = con.sql("SELECT VAR_POP(x), VAR_SAMP(x), STDDEV_POP(x), STDDEV(x) FROM t",
                  epsilon=1e5).fetchall()[0]
    expected = (np.var(VALUES), np.var(VALUES, ddof=1), np.std(VALUES), np.std(VALUES, ddof=1))
    assert row == pytest.approx(expected, rel=1e-3)


def test_explain_lists_the_three_statistics_and_their_sensitivities():
    con = connection()
    info = con.explain("SELECT g, VAR_POP(x) FROM t GROUP BY g", epsilon=1.0).to_dict()
    column = info["columns"][1]
    kinds = [s["kind"] for s in column["statistics"]]
    assert kinds == ["count", "centered_sum", "centered_sum"]
    # One row per unit and group, one group per unit: N moves by 1, S₁ by h = 5, S₂ by h²/2.
    assert [s["linf_sensitivity"] for s in column["statistics"]] == pytest.approx([1, 5, 12.5])
    assert column["noise_std"] is None and "squared deviations" in column["note"]
    assert info["statistics_per_unit"] == 3


def test_intervals_cover_the_bounded_value():
    con = connection()
    report = con.evaluate("SELECT g, VAR_POP(x) AS v, STDDEV_SAMP(x) AS s FROM t GROUP BY g",
                          runs=25, epsilon=0.5, level=0.9)
    for column in report.columns:
        assert column.coverage >= 0.9, report
