"""docs/mechanisms.md: its snippets run, and the numbers it quotes still come out of the code."""

from __future__ import annotations

import contextlib
import io
import math
import re
import textwrap
from pathlib import Path

import numpy as np
import pytest

from dpsql.analysis import analyze, sensitivity
from dpsql.analysis.sensitivity import normalised_norms
from dpsql.catalog import Catalog, TableInfo
from dpsql.estimators import estimator
from dpsql.mechanisms import (
    Noise,
    Sensitivity,
    analytic_gaussian_sigma,
    choose_noise,
    discrete_gaussian_sigma,
    release_probability,
    selection_threshold,
    split_delta,
)
from dpsql.mechanisms.selection import truncated_geometric_probability, units_for_release
from grammar_tests.catalog import connect

DOC = Path(__file__).resolve().parents[1] / "docs" / "mechanisms.md"


def snippets() -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    blocks = re.findall(r"<details><summary>snippet</summary>\n\n(.*?)</details>", text, re.S)
    return [textwrap.dedent(b) for b in blocks]


def test_doc_has_its_snippets():
    assert len(snippets()) == 8


@pytest.mark.parametrize("index", range(8))
def test_doc_snippet_runs(index):
    with contextlib.redirect_stdout(io.StringIO()) as out:
        exec(compile(snippets()[index], f"docs/mechanisms.md snippet {index}", "exec"), {})
    assert out.getvalue()


@pytest.mark.parametrize("not_null, kinds, selection, laplace, gaussian, stds", [
    ((), ["rows", "count", "centered_sum", "sum", "units"], 0.25, 5.64, 8.30, [22.62, 2263]),
    (("age", "income"), ["rows", "centered_sum", "centered_sum", "units"], 0.25, 5.64, 8.86,
     [22.62, 1600]),
])
def test_section_12_three_statistic_query(not_null, kinds, selection, laplace, gaussian, stds):
    """§12, "The three-statistic query": the plans with nothing declared (ε split by column:
    a share each for COUNT, SUM, AVG and the count of people) and with the shared count."""
    cat = Catalog()
    cat.add(TableInfo.private(
        "pums", columns={"pid": "INT", "age": "INT", "income": "INT", "married": "INT"},
        privacy_unit="pid", bounds={"age": (0, 100), "income": (0, 500000)},
        max_rows_per_unit=4, not_null=not_null))
    plan = analyze("SELECT married, COUNT(*), SUM(age), AVG(income) FROM pums GROUP BY married",
                   cat, epsilon=1.0, delta=1e-6)
    assert [s.kind for s in plan.stats] == kinds
    assert plan.selection.epsilon == pytest.approx(selection)
    assert (plan.noise.kind, round(plan.noise.laplace_std, 2),
            round(plan.noise.gaussian_std, 2)) == ("laplace", laplace, gaussian)
    got = [estimator(a).describe(plan, a)["noise_std"] for a in plan.aggregates[:2]]
    assert got == pytest.approx(stds, rel=1e-3)


@pytest.mark.parametrize("table, statistics, stds", [
    ("visits", 11, [101.82, 101823.92, 5091.2, 50911958.4, 127279.9, 5091195.84]),
    ("checkups", 6, [16.966, 33941.19, 1272.79, 16970594.54, 127279.46, 5091178.36]),
])
def test_section_13_shared_statistics(table, statistics, stds):
    """§13, "Shared with COUNT, SUM, AVG and VAR": CORR's statistics and their noise, with
    cost and age undeclared (visits) and declared NOT NULL (checkups)."""
    sql = f"SELECT AVG(age) AS a, CORR(age, cost) AS r, VAR_POP(cost) AS v FROM {table}"
    info = connect().explain(sql, epsilon=1.0).to_dict()
    assert info["statistics_per_unit"] == statistics
    assert [s["noise_std"] for s in info["columns"][1]["statistics"]] == pytest.approx(
        stds, rel=1e-4)


def _worked_example_plan():
    cat = Catalog()
    cat.add(TableInfo.private(
        "visits", columns={"pid": "INT", "shop": "VARCHAR", "cost": "DOUBLE"},
        privacy_unit="pid", bounds={"cost": (0, 1000)}, max_groups_per_unit=4,
        max_rows_per_group=3, max_rows_per_unit=6))
    return analyze("SELECT shop, COUNT(*), SUM(cost), AVG(cost) FROM visits GROUP BY shop", cat,
                   epsilon=1.0, delta=1e-6)


def test_section_1_and_3_worked_example(monkeypatch):
    assert normalised_norms(4, 3, 6) == pytest.approx((2.0, math.sqrt(2)))
    plan = _worked_example_plan()
    assert plan.noise.kind == "laplace"
    assert plan.noise.l1 == pytest.approx(3.00003, abs=1e-6)
    assert plan.noise.l2 == pytest.approx(1.224754, abs=1e-6)
    assert plan.noise.unit_scale == pytest.approx(3.000031, abs=1e-6)
    assert plan.noise.epsilon == 1.0
    assert (plan.selection.method, plan.selection.statistic) == ("laplace_threshold", "__dp_s0")
    assert plan.selection.epsilon == 0 and round(plan.selection.threshold, 3) == 264.159
    assert plan.noise.granularities == (16.0, 16.0, 32768.0)
    stds = {a.sql: estimator(a).describe(plan, a)["noise_std"] for a in plan.aggregates}
    assert (round(plan.noise_for("__dp_s1").std, 3), round(plan.noise_for("__dp_s2").std, 1),
            round(stds["SUM(cost)"])) == (25.456, 12728.1, 18000)
    selection, noise = plan.selection, plan.selection_noise()
    assert units_for_release(lambda n: float(selection.chance(np.array([n]), noise)[0])) == 265
    # The selections it was compared with: the unit count's share of ε (ε/4) on the exact
    # count, Gaussian thresholding (chosen before the count's threshold) or the truncated
    # geometric, and the threshold on the noisy unit count.
    with monkeypatch.context() as patch:
        patch.setattr(sensitivity, "_count_threshold", lambda chosen, *_: chosen)
        before = _worked_example_plan()
    assert before.selection.method == "gaussian_selection"
    assert before.selection.epsilon == pytest.approx(0.25, abs=1e-5)
    assert (round(before.selection.sigma, 2), before.selection.threshold) == (32.06, 167.0)
    assert before.noise.unit_scale == pytest.approx(4.000031, abs=1e-6)
    assert round(before.noise_for("__dp_s1").std, 3) == 33.941
    geometric = units_for_release(lambda n: float(truncated_geometric_probability(
        n, before.selection.epsilon, 1e-6, 4)))
    units = Noise("laplace", 16.0001)
    threshold = selection_threshold(units, 4, 1e-6)
    assert (geometric, threshold) == (189, 234.0)
    # Before one share per statistic, the same plan drew σ = 41.660 for COUNT(*) (Gaussian)
    # with a threshold of 74 people: with per-cell bounds, L2² = 3 × 2 + 4 = 10.
    assert discrete_gaussian_sigma(math.sqrt(10), 1.0, 5e-7) == pytest.approx(13.886640, abs=1e-6)


def _exact_delta(sigma: float, eps: float) -> float:
    y = np.arange(-int(40 * sigma) - 2, int(40 * sigma) + 3)
    p = np.exp(-(y**2) / (2 * sigma**2))
    p /= p.sum()
    return float(np.sum(p * np.clip(-np.expm1(eps - (1 + 2 * y) / (2 * sigma**2)), 0, None)))


@pytest.mark.parametrize(("eps", "delta", "bw", "used", "exact_bw"), [
    (1.0, 1e-5, 3.7306, 4.0106, 1.0346e-5),
    (2.0, 1e-7, 2.4491, 2.5962, 1.1289e-7),
    (0.5, 1e-6, 8.0576, 8.1954, 9.82e-7),
])
def test_section_4_counterexample_table(eps, delta, bw, used, exact_bw):
    a = analytic_gaussian_sigma(1.0, eps, delta)
    d = discrete_gaussian_sigma(1.0, eps, delta)
    assert round(a, 4) == bw and round(d, 4) == used
    assert _exact_delta(a, eps) == pytest.approx(exact_bw, rel=1e-3)
    assert _exact_delta(d, eps) <= delta


CHOOSER = {  # (eps, delta): (laplace std, gaussian std) for k = 1..10, and the first Gaussian k
    (1.0, 1e-5): ([1.3570, 2.7992, 4.2231, 5.6421, 7.0593, 8.4755, 9.8911, 11.3063, 12.7214,
                   14.1362],
                  [4.0106, 5.4803, 6.6311, 7.6094, 8.4753, 9.2605, 9.9841, 10.6587, 11.2929,
                   11.8934], 8),
    (0.5, 1e-6): ([2.7992, 5.6421, 8.4755, 11.3063, 14.1362, 16.9657, 19.7948, 22.6237, 25.4526,
                   28.2813],
                  [8.1954, 11.4945, 14.0382, 16.1867, 18.0816, 19.7960, 21.3732, 22.8417,
                   24.2214, 25.5266], 9),
    (2.0, 1e-8): ([0.6017, 1.3570, 2.0825, 2.7992, 3.5121, 4.2231, 4.9330, 5.6421, 6.3509,
                   7.0593],
                  [2.7964, 3.9547, 4.8270, 5.5092, 6.1156, 6.6668, 7.1758, 7.6509, 8.0982,
                   8.5220], 15),
}


@pytest.mark.parametrize(("eps", "delta"), list(CHOOSER))
def test_section_5_chooser_table(eps, delta):
    lap, gau, first = CHOOSER[(eps, delta)]
    unit = Sensitivity("s", 1.0, 1.0, 1.0, True)
    for k in range(1, 11):
        plan = choose_noise([unit] * k, eps, delta)
        assert round(plan.laplace_std, 4) == lap[k - 1]
        assert round(plan.gaussian_std, 4) == gau[k - 1]
        assert plan.kind == ("gaussian" if k >= first else "laplace")
    assert choose_noise([unit] * first, eps, delta).kind == "gaussian"


@pytest.mark.parametrize(("noise", "groups", "sel_delta", "tau", "probs"), [
    (Noise("laplace", 1.0), 1, 1e-6, 15.0,
     ["6.08e-07", "3.32e-05", "0.00493", "0.998", "1", "1"]),
    (Noise("laplace", 4.0), 4, 1e-6, 60.0,
     ["2.21e-07", "6e-07", "2.1e-06", "2.55e-05", "0.0461", "1"]),
    (Noise("gaussian", 15.197345439849862), 4, 5e-7, 80.0,
     ["1.19e-07", "4.72e-07", "2.39e-06", "4.5e-05", "0.0261", "0.911"]),
])
def test_section_6_selection_table(noise, groups, sel_delta, tau, probs):
    assert selection_threshold(noise, groups, sel_delta) == tau
    got = [f"{release_probability(noise, tau, n):.3g}" for n in (1, 5, 10, 20, 50, 100)]
    assert got == probs
    assert release_probability(noise, tau, 1) <= split_delta(sel_delta, groups)


@pytest.mark.parametrize("groups", [1, 4])
def test_section_6_engine_picks_laplace_for_unit_counts(groups):
    cat = Catalog()
    cat.add(TableInfo.private("t", columns={"pid": "INT", "k": "VARCHAR"}, privacy_unit="pid",
                              max_groups_per_unit=groups))
    plan = analyze("SELECT k, COUNT(DISTINCT pid) FROM t GROUP BY k", cat, epsilon=1.0,
                   delta=1e-6)
    units = plan.sensitivities[0]
    assert plan.noise.kind == "laplace" and plan.noise.noise_for(units).scale == groups
    assert plan.selection.threshold == {1: 15.0, 4: 60.0}[groups]
    assert plan.selection.delta == 1e-6


@pytest.mark.parametrize(("noise", "h95", "h99"), [
    (Noise("laplace", 1.0), 3.0, 4.0),
    (Noise("laplace", 4.0), 12.0, 18.0),
    (Noise("gaussian", 4.0106), 8.0, 10.0),
    (Noise("gaussian", 15.1973), 30.0, 39.0),
])
def test_section_7_halfwidths(noise, h95, h99):
    assert noise.ci_halfwidth(0.95) == h95
    assert noise.ci_halfwidth(0.99) == h99
