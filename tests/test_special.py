"""dpsql.mechanisms.special against the truth (mpmath) and against SciPy, and the start-up it buys.

The bound is 1e-15 relative (≈ 4.5 ulps) wherever the answer is a normal float. Below the
smallest normal (2.2e-308: erfcx(x) for x > 2.5e307) a float has fewer significant bits, and
the answer is held to 2 units of the smallest subnormal instead.

Against SciPy the same 1e-15 holds where SciPy itself is accurate (erfcx for x ≥ −1, log Φ for
x ≤ 1: within 2 ulps of mpmath). Beyond, SciPy's own error grows with x² (it rounds x² before
exponentiating): 250 ulps at erfcx(−23.6), 14 ulps at log Φ(1.5) and 1000 at log Φ(36.8),
against mpmath, always below (16 + x²) ulps. There the bound is 1e-15 + (16 + x²) ulps, the
two errors added, and the 1e-15 is held against mpmath (tests/golden/special_values.csv).
"""

from __future__ import annotations

import csv
import math
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
import scipy.special

from dpsql.datasets import visits
from dpsql.mechanisms.special import erfcx, log_ndtr, two_product

BOUND = 1e-15
ULP = 2.0**-53
TINY = 2.2250738585072014e-308  # the smallest normal float
SUBNORMAL = 5e-324
TABLE = Path(__file__).parent / "golden" / "special_values.csv"
FUNCTIONS = {"erfcx": (erfcx, scipy.special.erfcx),
             "log_ndtr": (log_ndtr, scipy.special.log_ndtr)}


def relative_errors(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """|got − want|/|want|, 0 where they are equal (both 0 or both ±inf)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(got == want, 0.0, np.abs(got - want) / np.abs(want))


def evaluate(name: str, xs: np.ndarray) -> np.ndarray:
    return np.array([FUNCTIONS[name][0](float(x)) for x in xs])


def truth(name: str) -> tuple[np.ndarray, np.ndarray]:
    with TABLE.open() as table:
        rows = [(float(row["x"]), float(row["value"])) for row in csv.DictReader(table)
                if row["function"] == name]
    xs, values = np.array(rows).T
    return xs, values


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_within_1e15_of_the_truth(name):
    xs, want = truth(name)
    got = evaluate(name, xs)
    normal = np.abs(want) >= TINY
    assert normal.sum() > 900
    worst = relative_errors(got[normal], want[normal])
    assert worst.max() <= BOUND, (xs[normal][worst.argmax()], worst.max() / ULP)
    assert np.all(np.abs(got[~normal] - want[~normal]) <= 2 * SUBNORMAL)


def dense(low: float, high: float) -> np.ndarray:
    """A dense grid on [low, high] that avoids round numbers, with its seeded shuffle."""
    grid = np.linspace(low, high, 40_001)
    return grid + np.random.default_rng(0).uniform(0, (high - low) / 40_000, grid.size)


@pytest.mark.parametrize(("name", "low", "high"), [
    ("erfcx", -1.0, 3.0), ("erfcx", 3.0, 26.0), ("log_ndtr", -40.0, -3.0),
    ("log_ndtr", -3.0, 1.0),
])
def test_within_1e15_of_scipy_where_scipy_is_accurate(name, low, high):
    xs = dense(low, high)
    worst = relative_errors(evaluate(name, xs), FUNCTIONS[name][1](xs))
    assert worst.max() <= BOUND, (xs[worst.argmax()], worst.max() / ULP)


@pytest.mark.parametrize(("name", "low", "high"), [
    ("erfcx", -26.6, -1.0), ("log_ndtr", 1.0, 37.5),
])
def test_close_to_scipy_where_scipy_rounds_the_square(name, low, high):
    xs = dense(low, high)
    worst = relative_errors(evaluate(name, xs), FUNCTIONS[name][1](xs))
    assert np.all(worst <= BOUND + (16 + xs * xs) * 2 * ULP)


@pytest.mark.parametrize("x", [2.0, 4.0, 6.0, 10.0])
def test_erfcx_where_the_continued_fraction_takes_over(x):
    for near in (math.nextafter(x, 0.0), x):
        assert abs(erfcx(near) - scipy.special.erfcx(near)) <= BOUND * erfcx(near)


def test_far_tails_as_scipy():
    far = np.concatenate([np.geomspace(26.0, 1e300, 2001), [np.finfo(float).max]])
    assert relative_errors(evaluate("erfcx", far), scipy.special.erfcx(far)).max() <= BOUND
    assert np.all(evaluate("erfcx", -far[far > 26.7]) == np.inf)
    assert relative_errors(evaluate("log_ndtr", -far), scipy.special.log_ndtr(-far)).max() <= BOUND
    assert np.all(evaluate("log_ndtr", far[far > 40]) == 0.0)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
@pytest.mark.parametrize("x", [0.0, -0.0, math.inf, -math.inf, math.nan, 5e-324, -5e-324,
                               1e-300, -1e-300, 1.0, -1.0, 40.0, -40.0])
def test_special_values_as_scipy(name, x):
    ours, theirs = FUNCTIONS[name][0](x), float(FUNCTIONS[name][1](x))
    assert ours == theirs or (math.isnan(ours) and math.isnan(theirs)) or (
        abs(ours - theirs) <= BOUND * abs(theirs)), (ours, theirs)


def test_two_product_is_exact():
    for x in np.random.default_rng(1).uniform(-40.0, 40.0, 1000):
        product, error = two_product(float(x), float(x))
        assert product == x * x
        assert Fraction(product) + Fraction(error) == Fraction(float(x)) ** 2


ONE_QUERY = """
import sys
import dpsql
from dpsql.mechanisms.discrete_calibration import discrete_gaussian_sigma
from dpsql.mechanisms.noise import Noise
con = dpsql.connect(cache=False)
con.register("visits", sys.argv[1], privacy_unit="patient_id", max_groups_per_unit=3,
             max_rows_per_group=4)
con.sql("SELECT specialty, COUNT(*) FROM visits GROUP BY specialty", epsilon=1.0).fetchall()
discrete_gaussian_sigma(1.0, 1.0, 1e-6)
Noise("gaussian", 1e6).tail(3e6)
print(sorted(name for name in sys.modules if name.split(".")[0] == "scipy"))
"""


def test_one_query_loads_no_scipy(tmp_path):
    """import dpsql, connect, register, answer (and calibrate Gaussian noise): no SciPy."""
    path = tmp_path / "visits.parquet"
    pq.write_table(visits(2_000, seed=0), path)
    done = subprocess.run([sys.executable, "-c", ONE_QUERY, str(path)], check=True,
                          capture_output=True, text=True)
    assert done.stdout.strip() == "[]"
