"""Quantiles: the exponential mechanism, the ε split, the bounded histograms, end to end.

The hostile-data test follows tests/test_rewrite_bounds.py: for every unit u, the bounded
query runs on D and on D − u with the same salt, and the histograms must move exactly as the
mechanism's proof assumes (u's weights removed, nobody else's changed, within the limits).
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from scipy.stats import chisquare

import dpsql
from dpsql.analysis import analyze
from dpsql.catalog import Catalog, TableInfo
from dpsql.compile import CompiledQuery
from dpsql.datasets import pums_path
from dpsql.engines import DUCKDB
from dpsql.errors import PrivacyError, UnsupportedQueryError
from dpsql.mechanisms import Sampler
from dpsql.mechanisms.exponential import ExponentialQuantile
from dpsql.plan import WEIGHT_SCALE, epsilon_share
from dpsql.release import bounded_quantiles, dense_histograms
from dpsql.rewrite.choose import ranks_rows
from tests.support import (
    BACKEND,
    hostile_table,
    make_plan,
    neighbours,
    run_bounded,
    with_null_keys,
)

# -- the mechanism ------------------------------------------------------------------------


@pytest.mark.parametrize("q", [Fraction(0), Fraction(1, 10), Fraction(1, 2), Fraction(1)])
def test_one_unit_moves_every_utility_by_at_most_its_weight(q):
    rng = np.random.default_rng(1)
    mech = ExponentialQuantile(epsilon=1.0, q=q, max_weight=5, max_groups_per_unit=1)
    for _ in range(300):
        with_unit, without = neighbours(rng, 12, 5)
        moved = with_unit.sum() - without.sum()
        d = mech.distances(np.stack([with_unit, without]))
        assert np.all(np.abs(d[0] - d[1]) <= moved * q.denominator)
        assert d.min(axis=1).tolist() == [0, 0]  # some bucket holds rank qN


def test_exponents_round_up_by_less_than_one_grid_step():
    mech = ExponentialQuantile(epsilon=0.7, q=Fraction(3, 10), max_weight=3, max_groups_per_unit=2)
    h = np.array([[4, 0, 9, 1, 0, 7]])
    exact = mech.scale * Fraction(1, 10) * np.array(mech.distances(h)[0], dtype=object)
    rounded = [Fraction(int(g), 2**mech.rounding_bits) for g in mech.exponents(h)[0]]
    step = Fraction(1, 2**mech.rounding_bits)
    assert all(0 <= r - e < step for r, e in zip(rounded, exact, strict=True))
    assert 2 * mech.max_groups_per_unit * step <= 2**-20 * Fraction(0.7)


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 3.0])
def test_neighbouring_histograms_give_probabilities_within_e_to_the_epsilon(epsilon):
    """One group, g = 1: the exact output distributions differ by at most a factor e^ε."""
    rng = np.random.default_rng(2)
    mech = ExponentialQuantile(epsilon=epsilon, q=Fraction(1, 2), max_weight=4,
                               max_groups_per_unit=1)
    worst = 0.0
    for _ in range(200):
        with_unit, without = neighbours(rng, 10, 4)
        p, p_ = mech.probabilities(with_unit), mech.probabilities(without)
        worst = max(worst, float(np.max(np.abs(np.log(p) - np.log(p_)))))
    assert worst <= epsilon * (1 + 1e-9)
    assert worst > epsilon / 4  # the bound is not vacuous


def test_samples_follow_the_exact_distribution():
    mech = ExponentialQuantile(epsilon=1.0, q=Fraction(1, 4), max_weight=1, max_groups_per_unit=1)
    h = np.array([1, 0, 3, 2, 0, 0, 5, 1])
    draws = mech.sample(np.tile(h, (60_000, 1)), Sampler(seed=11))
    observed = np.bincount(draws, minlength=h.size)
    expected = mech.probabilities(h) * draws.size
    assert chisquare(observed, expected).pvalue > 1e-4


def test_rank_error_bound_holds():
    mech = ExponentialQuantile(epsilon=0.5, q=Fraction(1, 2), max_weight=2, max_groups_per_unit=1)
    h = np.random.default_rng(3).integers(0, 3, size=64)
    dist = np.array(mech.distances(h[None, :])[0], dtype=np.float64) / 2  # q = 1/2
    draws = mech.sample(np.tile(h, (20_000, 1)), Sampler(seed=4))
    assert np.mean(dist[draws] > mech.rank_error(0.9, h.size)) <= 0.1


def test_huge_epsilon_picks_the_bucket_holding_the_rank():
    mech = ExponentialQuantile(epsilon=1e6, q=Fraction(17, 20), max_weight=1, max_groups_per_unit=1)
    draws = mech.sample(np.tile([5, 0, 3, 1, 1], (50, 1)), Sampler(seed=5))
    assert set(draws.tolist()) == {3}  # rank 0.85 × 10 = 8.5 lies in bucket 3's ranks [8, 9]


def test_tiny_epsilon_is_refused():
    with pytest.raises(PrivacyError, match="too small"):
        ExponentialQuantile(epsilon=1e-14, q=Fraction(1, 2), max_weight=1, max_groups_per_unit=10)


# -- analysis: the ε split ----------------------------------------------------------------


def catalog(**limits) -> Catalog:
    cat = Catalog()
    cat.add(TableInfo.private("t", columns={"pid": "BIGINT", "k": "VARCHAR", "x": "DOUBLE"},
                              privacy_unit="pid", bounds={"x": (-2, 10)}, **limits))
    return cat


def test_epsilon_is_split_equally_between_the_noise_and_each_quantile():
    plan = analyze("SELECT k, COUNT(*), MEDIAN(x), QUANTILE_CONT(x, 0.9) FROM t GROUP BY k",
                   catalog(max_groups_per_unit=2), epsilon=0.9, delta=1e-6)
    share = epsilon_share(0.9, 3)
    quantiles = [p.epsilon for p in plan.spend if p.mechanism.startswith("exponential")]
    assert quantiles == [share] * 2 and plan.cost.epsilon == 0.9
    # The noise takes the whole share: groups are kept by a threshold on the released
    # COUNT(*), which spends no ε of its own.
    assert plan.selection.statistic is not None and plan.selection.epsilon == 0
    assert plan.noise.epsilon == share
    assert plan.statistics_per_unit == (1 + 2) * 2  # rows, two quantiles; 2 groups
    plan.verify_cost()
    assert plan.mechanism == "laplace+exponential"


def test_quantiles_alone_are_pure_and_use_all_of_epsilon():
    plan = analyze("SELECT MEDIAN(x), PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY x DESC) "
                   "FROM t", catalog(), epsilon=1.0, delta=1e-6)
    assert plan.noise is None and plan.cost.delta == 0.0
    (agg,) = plan.quantiles  # the same release: computed (and paid for) once
    assert agg.quantile.mechanism.epsilon == 1.0
    plan.verify_cost()


def test_weight_limit_follows_the_contribution_limits():
    plan = analyze("SELECT k, MEDIAN(x) FROM t GROUP BY k",
                   catalog(max_groups_per_unit=4, max_rows_per_group=5, max_rows_per_unit=7),
                   epsilon=1.0, delta=1e-6)
    mech = plan.quantiles[0].quantile.mechanism
    assert (mech.max_weight, mech.max_groups_per_unit) == (7 * WEIGHT_SCALE, 4)


def test_verify_cost_catches_an_overspending_plan():
    plan = analyze("SELECT COUNT(*), MEDIAN(x) FROM t", catalog(), epsilon=1.0, delta=0.0)
    agg = plan.quantiles[0]
    mech = ExponentialQuantile(1.0, agg.quantile.q, agg.quantile.mechanism.max_weight, 1)
    bad = type(agg.quantile)(agg.quantile.q, agg.quantile.histogram, mech)
    bad_plan = type(plan)(**{**plan.__dict__, "aggregates": tuple(
        type(agg)(**{**a.__dict__, "quantile": bad}) if a is agg else a
        for a in plan.aggregates)})
    with pytest.raises(dpsql.InternalError):
        bad_plan.verify_cost()


@pytest.mark.parametrize("sql, message", [
    ("SELECT MEDIAN(pid * 1) FROM t", "needs bounds"),
    ("SELECT QUANTILE_CONT(x, 1.2) FROM t", "outside [0, 1]"),
    ("SELECT QUANTILE_CONT(x, -0.5) FROM t", "numeric literal"),
    ("SELECT APPROX_QUANTILE(x, [0.1, 0.5]) FROM t", "numeric literal"),
    ("SELECT MEDIAN(k) FROM t", "numeric argument"),
    ("SELECT PERCENTILE_DISC(0.5) WITHIN GROUP (ORDER BY x) FROM t", "PERCENTILE_CONT(q)"),
    ("SELECT MEDIAN(DISTINCT x) FROM t", "DISTINCT"),
])
def test_refused(sql, message):
    with pytest.raises(UnsupportedQueryError, match=re.escape(message)):
        analyze(sql, catalog(), epsilon=1.0, delta=1e-6)


# -- rewrite: histograms on hostile data ---------------------------------------------------

QUERIES = [
    "SELECT k, MEDIAN(x) FROM t GROUP BY k",
    "SELECT k, COUNT(*), QUANTILE_CONT(x, 0.9), AVG(x) FROM t WHERE x > 0 OR x IS NULL GROUP BY k",
    "SELECT MEDIAN(LEAST(GREATEST(x, 0), 4)), SUM(x) FROM t",
    "SELECT k, flag, MEDIAN(x * 2 - 1) FROM t GROUP BY k, flag",
    "SELECT k, COUNT(*), MEDIAN(x), COUNT(x) FROM t GROUP BY k",
]
LIMITS = [
    {},
    {"max_groups_per_unit": 3, "max_rows_per_group": 4},
    {"max_groups_per_unit": 4, "max_rows_per_group": 5, "max_rows_per_unit": 7},
]


def histograms(table: pa.Table, plan) -> dict[tuple, np.ndarray]:
    BACKEND.load("t", table)
    out = BACKEND.execute(CompiledQuery.of(plan), salt="fixed")
    keys = [k.name for k in plan.keys]
    spec = plan.histograms[0]
    dense = dense_histograms(out.column(spec.name), spec)
    return {tuple(row[k] for k in keys): dense[i] for i, row in enumerate(out.to_pylist())}


CASES = [(QUERIES[0], LIMITS[0]), (QUERIES[0], LIMITS[1]), (QUERIES[0], LIMITS[2]),
         (QUERIES[1], LIMITS[1]), (QUERIES[1], LIMITS[2]), (QUERIES[2], LIMITS[0]),
         (QUERIES[2], LIMITS[2]), (QUERIES[3], LIMITS[1]), (QUERIES[3], LIMITS[2]),
         (QUERIES[4], LIMITS[0]), (QUERIES[4], LIMITS[1])]


@pytest.mark.parametrize("sql, limits", CASES)
def test_removing_any_unit_only_removes_its_bounded_weights(sql, limits):
    plan = make_plan(sql, **limits)
    c = plan.contribution.rows_per_group * WEIGHT_SCALE
    total = plan.quantiles[0].quantile.mechanism.max_weight
    table = hostile_table()
    full = histograms(table, plan)
    empty = np.zeros(plan.histograms[0].buckets, dtype=np.int64)
    for unit in sorted({u for u in table.column("pid").to_pylist() if u is not None}):
        rest = histograms(table.filter(pc.fill_null(pc.not_equal(table["pid"], unit), True)),
                          plan)
        removed = {key: full.get(key, empty) - rest.get(key, empty) for key in {*full, *rest}}
        assert all(np.all(w >= 0) for w in removed.values()), unit  # nobody else's changed
        touched = [w.sum() for w in removed.values() if w.any()]
        assert all(t <= c for t in touched), (unit, touched)
        assert sum(touched) <= total and len(touched) <= plan.contribution.groups_per_unit


@pytest.mark.parametrize("sql", [*QUERIES[1:3], QUERIES[4]])
def test_statistics_beside_quantiles_keep_their_bounds(sql):
    """The histogram join leaves the noisy statistics as tests/test_rewrite_bounds checks them."""
    plan = make_plan(sql, max_groups_per_unit=3, max_rows_per_group=4)
    full = run_bounded(hostile_table(), plan, salt="s")
    table = hostile_table()
    rest = run_bounded(table.filter(pc.fill_null(pc.not_equal(table["pid"], 7), True)), plan,
                       salt="s")
    for key in {*full, *rest}:
        for s in plan.sensitivities:
            diff = abs(full.get(key, {}).get(s.name, 0.0) - rest.get(key, {}).get(s.name, 0.0))
            assert diff <= s.bound


@pytest.mark.parametrize("counts", ["", ", COUNT(*), COUNT(x)"])
@pytest.mark.parametrize("limits", [
    {},
    {"max_groups_per_unit": 3, "max_rows_per_group": 2},
    {"max_groups_per_unit": 2, "max_rows_per_group": 3,
     "public_keys": {"k": [f"k{i}" for i in range(8)]}},
])
def test_kept_rows_ranked_in_a_window_weigh_what_the_kept_pairs_weigh(limits, counts):
    """Quantiles by private groups beside nothing but counts rank the rows
    (strategy ``kept_rows_ranked``); beside a SUM, the rows join the kept pairs. Both
    plans keep the same pairs and give every value the same weight and every pair the same
    clamped counts: the same histograms and counts, whatever the keys (NULL among them),
    the filter, values without a bucket where another quantile's have one, and the salt."""
    where = "WHERE flag < 2 OR k IS NULL"
    quantiles = (f"MEDIAN(x), QUANTILE_CONT(x * 2 - 1, 0.9), "
                 f"MEDIAN(CASE WHEN pid % 2 = 0 THEN x END){counts}")
    ranked = make_plan(f"SELECT k, flag, {quantiles} FROM t {where} GROUP BY k, flag", **limits)
    paired = make_plan(f"SELECT k, flag, {quantiles}, SUM(x) FROM t {where} GROUP BY k, flag",
                       **limits)
    assert ranks_rows(ranked, DUCKDB) and not ranks_rows(paired, DUCKDB)
    table = with_null_keys(hostile_table(seed=2))

    def cells(plan, salt: str) -> dict[tuple, dict]:
        BACKEND.load("t", table)
        names = {(s.kind, s.expr.sql() if s.expr else None): s.name for s in plan.stats
                 if s.kind not in ("sum", "centered_sum")}  # the SUM's own
        names |= {(h.name, h.expr.sql()): h.name for h in plan.histograms}
        return {(row["k"], row["flag"]): {
            what: sorted((e["b"], e["w"]) for e in row[n]) if isinstance(row[n], list)
            else row[n] for what, n in names.items()}
            for row in BACKEND.execute(CompiledQuery.of(plan), salt=salt).to_pylist()}

    for salt in ("s", "t"):
        got = cells(ranked, salt)
        assert len(got) > 10 and len(next(iter(got.values()))) == 4 + 2 * bool(counts)
        assert any(None in key for key in got) is ("public_keys" not in limits)
        assert got == cells(paired, salt)


def test_bucket_choice_does_not_depend_on_values():
    """Same units and keys, other values: every unit keeps the same total weight per group."""
    plan = make_plan("SELECT k, MEDIAN(x) FROM t GROUP BY k", max_groups_per_unit=2,
                     max_rows_per_group=3)
    x = hostile_table()["x"]
    table = hostile_table().filter(pc.and_kleene(pc.is_valid(x), pc.invert(pc.is_nan(x))))
    other = table.set_column(2, "x", pa.array(np.linspace(-5, 50, table.num_rows)))
    a = {k: int(v.sum()) for k, v in histograms(table, plan).items()}
    b = {k: int(v.sum()) for k, v in histograms(other, plan).items()}
    assert a == b


@pytest.mark.parametrize("limits", [{}, {"max_rows_per_group": 3}])
def test_rows_without_a_value_weigh_nothing(limits):
    """A global quantile's rows reach the join to the per-person counts with or without a
    value (so that DuckDB builds the join on the counts), and those without one (NULL or
    NaN) are a NULL bucket the histogram drops: the same histogram as the valued rows'."""
    plan = make_plan("SELECT MEDIAN(x), QUANTILE_CONT(x, 0.9) FROM t", **limits)
    assert not ranks_rows(plan, DUCKDB)
    table = hostile_table(seed=3)
    x = table["x"]
    valued = table.filter(pc.and_kleene(pc.is_valid(x), pc.invert(pc.is_nan(x))))
    assert 0 < valued.num_rows < table.num_rows
    got, want = histograms(table, plan), histograms(valued, plan)
    assert got.keys() == want.keys() == {()}
    assert got[()].tolist() == want[()].tolist() and got[()].sum() > 0


def test_bounded_quantiles_give_the_noiseless_bucket():
    plan = make_plan("SELECT MEDIAN(x), QUANTILE(x, 0.9) FROM t")
    BACKEND.load("t", pa.table({"pid": [1, 2, 3, 4, 5], "k": ["a"] * 5, "x": [1.0, 2, 3, 4, 9],
                                "flag": [0] * 5}))
    values = bounded_quantiles(plan, BACKEND.execute(CompiledQuery.of(plan), salt="s"))
    width = plan.histograms[0].width
    assert [abs(v[0] - t) <= width / 2 for v, t in zip(values.values(), (3, 9), strict=True)] \
        == [True, True]


# -- end to end ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pums() -> dpsql.Connection:
    con = dpsql.connect(budget=dpsql.Budget(epsilon=1e9, delta=0.5), seed=0)
    con.register("pums", str(pums_path("PUMS_dup")), privacy_unit="pid",
                 bounds={"age": (0, 100)}, max_rows_per_group=2, public_keys={"sex": [0, 1]})
    return con


def weighted_medians(c: int = 2) -> dict[int, tuple[float, float]]:
    """Lower and upper weighted medians of age per sex, each unit's weight capped at c."""
    rows = duckdb.sql(f"SELECT pid, sex, age FROM '{pums_path('PUMS_dup')}'").fetchall()
    per_unit: dict[tuple, list[float]] = {}
    for pid, sex, age in rows:
        per_unit.setdefault((pid, sex), []).append(float(age))
    out = {}
    for sex in (0, 1):
        items = [(age, min(WEIGHT_SCALE, c * WEIGHT_SCALE // len(ages)))
                 for (_, s), ages in per_unit.items() if s == sex for age in ages]
        items.sort()
        ages = np.array([a for a, _ in items])
        cum = np.cumsum([w for _, w in items])
        half = cum[-1] / 2
        out[sex] = (ages[np.searchsorted(cum, half)], ages[np.searchsorted(cum, half, "right")])
    return out


def test_huge_epsilon_recovers_the_bounded_median_within_a_bucket(pums):
    res = pums.sql("SELECT sex, MEDIAN(age) AS m FROM pums GROUP BY sex", epsilon=1e6)
    width = res.plan.histograms[0].width
    for sex, m in res.fetchall():
        lo, hi = weighted_medians()[sex]
        assert lo - width <= m <= hi + width, (sex, m, lo, hi)


def test_quantiles_and_counts_together(pums):
    # The charge itself: with this budget's δ = 0.5 the zCDP filter may call ε = 0 spent.
    res = pums.sql("SELECT sex, COUNT(*) AS n, MEDIAN(age) AS m, QUANTILE_CONT(age, 0.9) AS p90 "
                   "FROM pums GROUP BY sex ORDER BY sex", epsilon=1.0)
    assert pums.budget.charges[-1].epsilon == pytest.approx(1.0)
    assert [r[0] for r in res.fetchall()] == [0, 1]
    for _, n, m, p90 in res.fetchall():
        assert 0 <= m <= p90 <= 100 and n > 0
    ci = res.ci(0.95)
    assert ci.column("m_lower").null_count == 2 and ci.column("n_lower").null_count == 0
    assert repr(res).splitlines()[1].count("[") == 1  # an interval for n only
    info = res.explain().to_dict()
    m = next(c for c in info["columns"] if c["name"] == "m")
    assert m["mechanism"] == "exponential" and m["epsilon"] == epsilon_share(1.0, 3)
    assert m["bucket_width"] == 100 / 1024 and m["rank_error95"] > 0
    assert [p["mechanism"] for p in info["spend"]] == [
        "laplace noise", "exponential MEDIAN(age)", "exponential QUANTILE_CONT(age, 0.9)"]


def test_empty_groups_and_private_keys(pums):
    res = pums.sql("SELECT sex, MEDIAN(age) AS m FROM pums WHERE age > 200 GROUP BY sex",
                   epsilon=1.0)
    assert len(res) == 2 and all(0 <= m <= 100 for _, m in res.fetchall())
    res = pums.sql("SELECT educ, MEDIAN(age) AS m FROM pums GROUP BY educ", epsilon=1.0,
                   delta=1e-6)
    assert all(0 <= m <= 100 for _, m in res.fetchall())
    assert res.plan.selection is not None


def test_row_level_quantile():
    con = dpsql.connect(budget=dpsql.Budget(epsilon=10.0), seed=1)
    ages = np.concatenate([np.full(300, 30.0), np.full(700, 70.0)])
    con.register("p", pa.table({"age": ages}), row_privacy=True, bounds={"age": (0, 100)})
    (value,), = con.sql("SELECT MEDIAN(age) FROM p", epsilon=5.0).fetchall()
    assert math.isclose(value, 70, abs_tol=100 / 1024)


def test_docs_rank_error_table_matches_the_code():
    text = (Path(__file__).resolve().parents[1] / "docs" / "mechanisms.md").read_text()
    for eps, g, c, r, want in [(0.5, 1, 1, None, "39.7"), (0.5, 1, 4, None, "158.8"),
                               (1.0, 1, 1, None, "19.9"), (1.0, 3, 4, None, "238.3"),
                               (1.0, 4, 3, 5, "99.3")]:
        rows = g * c if r is None else min(g * c, r)
        mech = ExponentialQuantile(eps, Fraction(1, 2), rows * WEIGHT_SCALE, g)
        assert f"{mech.rank_error(0.95, 1024) / WEIGHT_SCALE:.1f}" == want
        assert f"| {rows} | {want} |" in text
