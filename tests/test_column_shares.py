"""ε split by released column (docs/mechanisms.md §12): each noisy column one share, split over
the statistics it reads (``analysis.sensitivity.column_parts``), and the noise of statistic i
measured in ⌈l1⌉ × parts_i per-cell bounds (``chooser.one_share``).

The calibration stays exact: what the noise spends, summed over the statistics in exact
rationals, is the budget (Laplace: Σ bound·l1 / scale = ε; Gaussian: the μ of the whole
vector is the one σ was calibrated for), each statistic spends its column's portion, and a
plan whose noise ignores the weights the norms counted is caught by the same check.
The statistical audit is tests/privacy/test_audit_column_shares.py.
"""

from __future__ import annotations

import math
from dataclasses import replace
from fractions import Fraction

import pyarrow as pa
import pytest

import dpsql
from dpsql.analysis.sensitivity import column_parts
from dpsql.mechanisms import Sensitivity, choose_noise, discrete_gaussian_sigma
from dpsql.mechanisms.chooser import NoisePlan
from dpsql.plan import Aggregate

UNLIMITED = dpsql.Budget(epsilon=1e9, delta=0.5)

# COUNT(*) (the rows, one column), AVG(x) (its count and centred sum, half a column each)
# and a count of people that partition selection reads (a column's share).
ROWS = Sensitivity("rows", bound=3.0, l1=1.0, l2=1.0, integer=True, parts=1)
COUNT_X = Sensitivity("count_x", bound=3.0, l1=1.0, l2=1.0, integer=True, parts=2)
SUM_X = Sensitivity("sum_x", bound=15.0, l1=2.0, l2=math.sqrt(2), integer=True, parts=2)
UNITS = Sensitivity("units", bound=1.0, l1=4.0, l2=2.0, integer=True, parts=1)
STATS = (ROWS, COUNT_X, SUM_X, UNITS)
WEIGHTS = {"rows": Fraction(1), "count_x": Fraction(1, 2), "sum_x": Fraction(1, 2),
           "units": Fraction(1)}


def laplace_losses(plan: NoisePlan, scale_of=None) -> dict[str, Fraction]:
    """Each statistic's privacy loss: a unit moves its cells by bound × l1 in L1 (integers:
    no grid), and discrete Laplace of scale t loses |Δ|/t."""
    scale_of = scale_of or (lambda s: plan.noise_for(s).scale)
    return {s.name: Fraction(s.bound) * Fraction(s.l1) / Fraction(scale_of(s))
            for s in plan.sensitivities}


def gaussian_mu_squared(plan: NoisePlan, scale_of=None) -> Fraction:
    """‖Δ/σ‖² of the whole vector when a unit moves every statistic by its bound × l2."""
    scale_of = scale_of or (lambda s: plan.noise_for(s).scale)
    return sum((Fraction(s.bound) * Fraction(s.l2) / Fraction(scale_of(s))) ** 2
               for s in plan.sensitivities)


def without_weights(plan: NoisePlan):
    """The control: each statistic's noise drawn as if its parts were 1, while the unit scale
    was calibrated for the weighted norms."""
    return lambda s: plan.noise_for(s).scale / s.parts


@pytest.mark.parametrize("epsilon", [1.0, 0.3, 1 / 3, 2.9])
def test_laplace_spends_exactly_the_budget_in_column_portions(epsilon):
    plan = choose_noise(STATS, epsilon, 0.0)
    losses = laplace_losses(plan)
    total = sum(losses.values())
    assert total <= Fraction(epsilon)
    assert total >= Fraction(epsilon) * (1 - Fraction(1, 10**12))
    for name, loss in losses.items():  # each statistic: its weight / Σ weights of ε
        assert loss / total == pytest.approx(float(WEIGHTS[name] / sum(WEIGHTS.values())),
                                             rel=1e-12)


def test_laplace_control_noise_without_its_weight_overspends():
    plan = choose_noise(STATS, 1.0, 0.0)
    overspent = sum(laplace_losses(plan, without_weights(plan)).values())
    assert overspent == pytest.approx(4 / 3, rel=1e-9)  # AVG's statistics lose twice theirs
    assert overspent > 1


def test_gaussian_mu_is_what_sigma_was_calibrated_for():
    """Σ (bound·l2/σ_i)² ≤ (L2/σ)², and σ is the proved discrete-Gaussian σ for that L2."""
    many = tuple(replace(ROWS, name=f"r{i}", parts=1 + i % 3) for i in range(40))
    plan = choose_noise(many, 1.0, 1e-5)
    assert plan.kind == "gaussian"
    mu2 = gaussian_mu_squared(plan)
    assert mu2 <= (Fraction(plan.l2) / Fraction(plan.unit_scale)) ** 2
    assert mu2 >= (Fraction(plan.l2) / Fraction(plan.unit_scale)) ** 2 * (1 - Fraction(1, 10**9))
    assert plan.unit_scale >= discrete_gaussian_sigma(plan.l2, 1.0, 1e-5, grid_bound=3.0)
    # The control: the weights left out of the noise, kept in L2.
    assert gaussian_mu_squared(plan, without_weights(plan)) > 2 * mu2


def test_parts_are_whole_numbers_of_bounds():
    """An integer statistic's noise stays a whole number of per-cell bounds (§4's discrete
    calibration); a fractional weight is refused."""
    plan = choose_noise(STATS, 1.0, 0.0)
    for stat in STATS:
        multiple = Fraction(plan.noise_for(stat).scale) / (Fraction(stat.bound)
                                                           * Fraction(plan.unit_scale))
        assert multiple == math.ceil(stat.l1) * stat.parts
    with pytest.raises(dpsql.InternalError, match="parts"):
        replace(ROWS, parts=0)


def test_column_parts_rules():
    def agg(name, *stats, quantile=None):
        return Aggregate(name=name, kind="x", sql=name, stats=stats, quantile=quantile)

    # COUNT(*) beside AVG(x): the count of rows one share, AVG's two half each; selection 1.
    assert column_parts((agg("n", "r"), agg("a", "c", "s")), ("r", "c", "s", "u")) == {
        "r": 1, "c": 2, "s": 2, "u": 1}
    # CORR: six statistics, one column.
    assert set(column_parts((agg("k", *"abcdef"),), tuple("abcdef")).values()) == {1}
    # A SUM(x) derived from AVG(x)'s statistics: each read by two columns, half each.
    assert column_parts((agg("s", "c", "s"), agg("a", "c", "s")), ("c", "s")) == {
        "c": 1, "s": 1}
    # COUNT(*) beside SUM(x) and AVG(y) over columns declared NOT NULL: the rows statistic is
    # COUNT(*)'s alone, SUM and AVG spend theirs on their centred sums.
    assert column_parts((agg("n", "r"), agg("s", "r", "sx"), agg("a", "r", "sy")),
                        ("r", "sx", "sy")) == {"r": 1, "sx": 1, "sy": 1}
    # AVG and VAR of one column: count and centred sum 1/2 + 1/3, squares 1/3 (5 : 5 : 2).
    assert column_parts((agg("a", "c", "s"), agg("v", "c", "s", "q")), ("c", "s", "q")) == {
        "c": 2, "s": 2, "q": 5}


def visits(not_null=()) -> dpsql.Connection:
    con = dpsql.connect(budget=UNLIMITED)
    con.register("v", pa.table({"pid": [1, 2, 3], "region": ["a", "b", "a"],
                                "age": [30, 40, 50], "cost": [10.0, 20.0, 30.0]}),
                 privacy_unit="pid", bounds={"age": (0, 100), "cost": (0, 2000)},
                 public_keys={"region": ["a", "b"]}, max_rows_per_unit=3,
                 not_null=list(not_null))
    return con


THREE = "SELECT region, COUNT(*) AS n, SUM(age) AS sa, AVG(cost) AS a FROM v GROUP BY region"


def stds(con: dpsql.Connection, sql: str = THREE) -> dict[str, list[float]]:
    info = con.explain(sql, epsilon=1.0).to_dict()
    return {c["name"]: [s["noise_std"] for s in c.get("statistics") or [c]]
            for c in info["columns"] if c.get("noise_std") or c.get("statistics")}


def discrete_laplace_std(t: float) -> float:
    p = math.exp(-1 / t)
    return math.sqrt(2 * p) / (1 - p)


def test_three_columns_each_take_a_third_as_in_tumult():
    """Nothing declared: COUNT and SUM(age) at ε/3 each, AVG(cost)'s count and centred sum at
    ε/6 each, as Tumult's three aggregates (its AVG halves its share the same way)."""
    got = stds(visits())
    assert got["n"] == pytest.approx([discrete_laplace_std(3 * 3)], rel=1e-4)
    assert got["sa"] == pytest.approx([discrete_laplace_std(300 * 3)], rel=1e-4)
    count, centred = got["a"]
    assert count == pytest.approx(discrete_laplace_std(3 * 6), rel=1e-4)
    assert centred == pytest.approx(math.sqrt(2) * 3000 * 6, rel=1e-4)


def test_declared_not_null_keeps_one_share_per_statistic():
    """Age and cost declared NOT NULL: three statistics, one per column, as before the
    split by column (the rows are COUNT(*)'s; SUM and AVG spend theirs on centred sums)."""
    got = stds(visits(not_null=("age", "cost")))
    assert got["n"] == pytest.approx([discrete_laplace_std(9)], rel=1e-4)
    assert got["sa"][1] == pytest.approx(math.sqrt(2) * 150 * 3, rel=1e-4)


def test_one_column_is_unchanged():
    con = visits()
    plan = con.compile("SELECT region, AVG(cost) AS a FROM v GROUP BY region", epsilon=1).plan
    assert [s.parts for s in plan.sensitivities] == [1, 1]
    plan = con.compile("SELECT region, COUNT(*) AS n FROM v GROUP BY region", epsilon=1).plan
    assert [s.parts for s in plan.sensitivities] == [1]


def test_the_plan_charges_what_its_mechanisms_use():
    con = visits()
    for epsilon in (1.0, 0.3, 1 / 3):
        result = con.sql(THREE, epsilon=epsilon)
        result.plan.verify_cost()
        assert sum(Fraction(p.epsilon) for p in result.plan.spend) <= Fraction(epsilon)


def test_intervals_follow_the_column_noise():
    """ci() reads each statistic's own noise: COUNT's 95 % half-width is its ε/3 scale's."""
    result = visits().sql(THREE, epsilon=1.0, seed=3)
    bounds = result.ci(0.95)
    n = result.arrow().column("n").to_pylist()
    upper = bounds.column("n_upper").to_pylist()
    t = result.plan.noise_for(result.plan.stats[0].name).scale
    assert t == pytest.approx(9, rel=1e-4)
    for value, high in zip(n, upper, strict=True):  # P(|Laplace(t)| > w) = e^(−w/t)
        assert high - value == pytest.approx(t * math.log(1 / 0.05), rel=0.1)
