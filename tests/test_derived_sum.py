"""SUM(x) asked beside AVG(x) or COUNT(x) is released from a noisy count of x and a noisy
centred sum (``_Collector.finish``, ``estimators.SumOfMean``): SUM = centre × COUNT(x) +
centred sum.

Post-processing of statistics that are calibrated anyway, so the guarantee is the AVG's
(audited in tests/privacy/test_audit_aggregates.py); what these tests hold is that the query
draws one statistic fewer, that the derived value is the bounded SUM exactly, that its noise
is what explain() says and smaller than a SUM of its own, and that its interval covers.
"""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest

import dpsql
import dpsql.analysis.aggregates as aggregates_module

UNLIMITED = dpsql.Budget(epsilon=1e9, delta=0.5)


def connection(**limits) -> dpsql.Connection:
    """Ten people; person 0 has values outside the bounds, NULLs and more rows than allowed."""
    pid = [0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
    x = [900.0, -40.0, None, 3.5, 7.0, 2.0, 4.0, None, 6.0, 8.0, 1.0, 0.5, 9.0, 10.0]
    k = ["a", "a", "a", "b", "b", "a", "a", "b", "b", "b", "a", "b", "a", "b"]
    con = dpsql.connect(budget=UNLIMITED)
    con.register("t", pa.table({"pid": pid, "x": x, "k": k}), privacy_unit="pid",
                 bounds={"x": (2, 12)}, public_keys={"k": ["a", "b"]},
                 **({"max_rows_per_group": 2, "max_groups_per_unit": 2} | limits))
    return con


def column(explanation, name: str) -> dict:
    return next(c for c in explanation.to_dict()["columns"] if c["name"] == name)


def test_sum_beside_avg_reads_the_avg_statistics():
    plan = connection().compile("SELECT k, SUM(x) AS s, AVG(x) AS a FROM t GROUP BY k",
                                epsilon=1.0).plan
    by_name = {a.sql: a for a in plan.aggregates}
    assert by_name["SUM(x)"].stats == by_name["AVG(x)"].stats
    assert [s.kind for s in plan.stats] == ["count", "centered_sum"]
    assert plan.statistics_per_unit == 2 * 2


def test_sum_beside_count_takes_a_centred_sum_in_its_place():
    """COUNT(x) is drawn anyway: the SUM's own statistic becomes a centred sum, whose bound
    is half the range, and SUM = centre × COUNT(x) + centred sum."""
    plan = connection().compile("SELECT k, SUM(x) AS s, COUNT(x) AS n FROM t GROUP BY k",
                                epsilon=1.0).plan
    by_name = {a.sql: a for a in plan.aggregates}
    assert [plan.stat(s).kind for s in by_name["SUM(x)"].stats] == ["count", "centered_sum"]
    assert by_name["SUM(x)"].stats[0] == by_name["COUNT(x)"].stats[0]
    assert plan.statistics_per_unit == 2 * 2
    centred = plan.sensitivity(by_name["SUM(x)"].stats[1])
    assert centred.bound * plan.stat(centred.name).quantum == 2 * (12 - 2) / 2  # c·(hi − lo)/2


@pytest.mark.parametrize("lo, hi", [(2, 12), (0, 100), (-5, 10), (-7, 7), (-30, -10)])
def test_the_centred_sum_is_never_noisier_than_the_direct_one(monkeypatch, lo, hi):
    """At the same unit scale (the same number of statistics), the derived SUM's std over
    the direct SUM's is √(centre² + half-range²) / max(|lo|, |hi|) = √((lo² + hi²)/2) /
    max(|lo|, |hi|) ≤ 1, up to the grid's sensitivity inflation (§3, ~1e-5); at a small ε,
    where a discrete Laplace std is √2·t to within 1e-6 (at the count's t = 4 it is 0.3 %
    below)."""
    def explained() -> dict:
        con = dpsql.connect(budget=UNLIMITED)
        con.register("t", pa.table({"pid": [1, 2], "x": [1.0, 2.0], "k": ["a", "b"]}),
                     privacy_unit="pid", bounds={"x": (lo, hi)}, max_rows_per_group=2)
        return column(con.explain("SELECT k, SUM(x) AS s, COUNT(x) AS n FROM t GROUP BY k",
                                  epsilon=0.01), "s")

    derived = explained()
    monkeypatch.setattr(aggregates_module._Collector, "_count_of", lambda *a: None)
    direct = explained()
    ratio = math.sqrt((lo * lo + hi * hi) / 2) / max(abs(lo), abs(hi))
    assert derived["noise_std"] / direct["noise_std"] == pytest.approx(ratio, rel=1e-4)
    assert ratio <= 1


@pytest.mark.parametrize("sql", [
    "SELECT SUM(x) AS s FROM t",
    "SELECT SUM(x) AS s, COUNT(LEAST(x, 5)) AS n FROM t",
    "SELECT SUM(x) AS s, AVG(LEAST(x, 5)) AS a FROM t",
    "SELECT SUM(x, contribution_bounds_per_group => (0, 20)) AS s, AVG(x) AS a FROM t",
])
def test_a_sum_without_a_matching_avg_keeps_its_own_statistic(sql):
    plan = connection().compile(sql, epsilon=1.0).plan
    total = next(a for a in plan.aggregates if a.sql.startswith("SUM"))
    assert [plan.stat(s).kind for s in total.stats] == ["sum"]


def test_the_derived_sum_is_the_bounded_sum():
    """At a huge ε the noise vanishes: SUM is the sum of clamped values over kept rows."""
    con = connection(max_rows_per_group=5)
    rows = con.sql("SELECT k, SUM(x) AS s, AVG(x) AS a, SUM(x) / AVG(x) AS n FROM t "
                   "GROUP BY k ORDER BY k", epsilon=1e8).fetchall()
    clamped = {"a": [12, 2, 2, 4, 2, 9], "b": [3.5, 7, 6, 8, 0.5, 10]}  # NULLs dropped
    for key, s, a, n in rows:
        values = [min(max(v, 2), 12) for v in clamped[key]]
        assert s == pytest.approx(sum(values), abs=1e-3)  # sums are kept on a 2⁻¹³ grid
        assert a == pytest.approx(np.mean(values), abs=1e-3)
        assert n == pytest.approx(len(values), abs=1e-3)


def test_explain_states_the_derived_noise_and_it_is_smaller(monkeypatch):
    sql = "SELECT k, SUM(x) AS s, AVG(x) AS a FROM t GROUP BY k"
    con = connection()
    derived = column(con.explain(sql, epsilon=1.0), "s")
    count, centered = derived["statistics"]
    assert derived["noise_std"] == pytest.approx(
        math.hypot(centered["noise_std"], 7 * count["noise_std"]), rel=1e-12)
    # Its own statistic (the old plan): three statistics, and a noisier SUM. Either way the
    # SUM column has one share of ε (split by column), so the stds differ by the bounds:
    # max(|lo|, |hi|) = 12 for the direct sum, √(centre² + half-range²) = √74 derived.
    monkeypatch.setattr(aggregates_module._Collector, "_count_of", lambda *a: None)
    direct = column(connection().explain(sql, epsilon=1.0), "s")
    assert len(direct["statistics"]) == 1
    assert direct["noise_std"] / derived["noise_std"] == pytest.approx(12 / math.sqrt(74),
                                                                         rel=1e-3)
    assert derived["l1_sensitivity"] == direct["l1_sensitivity"] == 2 * 12 * 2


def test_the_derived_interval_covers_the_bounded_sum():
    """Bonferroni over the two noises: at least 95% of intervals cover the bounded SUM."""
    con = connection()
    truth = {"a": 2 * (2 + 2) + 2 + 4 + 2 + 9, "b": 2 * (3.5 + 7) + 6 + 8 + 2 + 10}
    covered = total = 0
    for seed in range(300):
        result = con.sql("SELECT k, SUM(x) AS s, AVG(x) AS a FROM t GROUP BY k",
                         epsilon=0.5, seed=seed)
        bounds = result.ci(0.95)
        for key, lo, hi in zip(*(bounds.column(c).to_pylist() for c in ("k", "s_lower",
                                                                       "s_upper")), strict=True):
            covered += lo <= truth[key] <= hi
            total += 1
    assert covered / total >= 0.95
