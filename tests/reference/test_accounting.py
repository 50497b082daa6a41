"""ε(δ) of composed histories against dp-accounting: PLD and RDP/zCDP, and con.report().

Histories are lists of dpsql's accounting events (dpsql/accounting/composition.py): pure
``laplace(ε)`` (any ε-DP release; ``steps`` for discrete or continuous Laplace), ``gaussian(m)``
(``discrete=True`` for dpsql's multivariate discrete Gaussian) and ``approx(ε, δ)`` (partition
selection's δ).  Tolerances are the discretisation's: dpsql's PLD rounds every loss up by less
than one grid step (1e-4) per event; dp-accounting's RDP minimises over a grid of orders.

A discrete Gaussian event covers every way dpsql can spread the sensitivity over cells, while
dp-accounting's discrete Gaussian is one cell: dpsql's PLD bound must be at least that one-cell
value, and is allowed a few percent above it (docs/accounting.md, "Discrete Gaussians").
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import dpsql
from dpsql.accounting.composition import advanced, approx, gaussian, laplace
from dpsql.accounting.pld import pld
from dpsql.accounting.report import zcdp_epsilon
from tests.reference.references import dp_accounting, reference_pld, reference_zcdp_epsilon

accounting = dp_accounting()

DELTA = 1e-6
HISTORIES = {
    "laplace": [laplace(0.1)] * 50,
    "continuous laplace": [laplace(0.2, steps=None)] * 20,
    "discrete laplace": [laplace(0.3, steps=3)] * 20 + [laplace(0.05, steps=7)] * 10,
    "gaussian": [gaussian(4.0)] * 16,
    "mixed": [laplace(0.1)] * 20 + [gaussian(3.0)] * 5 + [approx(0.1, 1e-8)],
    "selection": [laplace(0.5)] * 4 + [approx(0.0, 1e-7)] * 4 + [gaussian(6.0)] * 3,
}
DISCRETE = {
    "one": [gaussian(4.0, discrete=True)],
    "many": [gaussian(4.4, discrete=True)] * 30,
    "fine": [gaussian(25.0, discrete=True)] * 100,
    "coarse": [gaussian(1.2, discrete=True)] * 3,
    "mixed": [gaussian(8.0, discrete=True)] * 10 + [laplace(0.2)] * 5 + [approx(0.0, 5e-8)] * 10,
}


@pytest.mark.parametrize("name", list(HISTORIES))
def test_pld_matches_dp_accounting(name):
    history = HISTORIES[name]
    ours = pld(history, DELTA)
    reference = reference_pld(history).get_epsilon_for_delta(DELTA)
    assert ours == pytest.approx(reference, abs=1e-4 * len(history) + 1e-9)


@pytest.mark.parametrize("name", list(HISTORIES) + [f"discrete {n}" for n in DISCRETE])
def test_zcdp_matches_dp_accountings_rdp(name):
    history = HISTORIES.get(name) or DISCRETE[name.removeprefix("discrete ")]
    ours = zcdp_epsilon(history, DELTA)
    reference = reference_zcdp_epsilon(history, DELTA)
    assert ours <= reference + 1e-9  # dpsql minimises over every order α > 1
    assert ours == pytest.approx(reference, rel=1e-4)


@pytest.mark.parametrize("name", list(DISCRETE))
def test_discrete_gaussian_pld_bound_covers_the_one_cell_pld(name):
    history = DISCRETE[name]
    ours = pld(history, DELTA, bound_discrete=True)
    one_cell = reference_pld(history).get_epsilon_for_delta(DELTA)
    assert one_cell - 1e-4 * len(history) <= ours <= 1.17 * one_cell


@pytest.mark.parametrize(("eps", "count"), [(0.1, 100), (0.01, 1000), (0.3, 20)])
def test_advanced_composition_against_the_optimal_one(eps, count):
    """dp-accounting's advanced_composition is the optimal homogeneous theorem (Kairouz, Oh &
    Viswanath 2015, Thm 3.3, on its grid of ε = (k − 2i)ε₀); dpsql's "advanced" line is their
    closed-form Thm 3.5, valid but looser, and dpsql's PLD of the same history is the exact
    optimum, so it is never above the library's."""
    params = accounting.pld.common.DifferentialPrivacyParameters(eps, 0.0)
    optimal = accounting.pld.accountant.advanced_composition(params, count, DELTA)
    history = [laplace(eps)] * count
    assert advanced(history, DELTA)[0] >= optimal - 1e-9
    assert pld(history, DELTA) <= optimal + 1e-9


QUERIES = [  # (SQL, ε, δ): Laplace, discrete Gaussian, selection, a quantile, keys only
    ("SELECT COUNT(*) FROM visits", 1.0, 0.0),
    ("SELECT shop, COUNT(*), SUM(cost), AVG(cost), AVG(age), SUM(age) FROM visits GROUP BY shop",
     1.0, 1e-6),
    ("SELECT shop, COUNT(*) FROM visits GROUP BY shop", 0.5, 1e-6),
    ("SELECT MEDIAN(age) FROM visits", 0.5, 0.0),
    ("SELECT COUNT(*), SUM(cost), AVG(cost), SUM(age), AVG(age) FROM visits", 0.3, 1e-7),
    ("SELECT shop FROM visits GROUP BY shop", 0.2, 1e-7),
]


@pytest.fixture(scope="module")
def report():
    rng = np.random.default_rng(0)
    n = 3000
    table = pa.table({"pid": np.arange(n), "shop": rng.integers(0, 40, n).astype(str),
                      "cost": rng.uniform(0, 100, n), "age": rng.integers(0, 90, n)})
    con = dpsql.connect(budget=dpsql.Budget(epsilon=100.0, delta=1e-4), seed=3)
    con.register("visits", table, privacy_unit="pid", bounds={"cost": (0, 100), "age": (0, 90)},
                 max_groups_per_unit=8)
    for sql, eps, delta in QUERIES:
        con.sql(sql, epsilon=eps, delta=delta)
    return con.report()


def test_report_history_has_every_kind_of_event(report):
    kinds = {(e.kind, e.discrete) for e in report.events}
    assert kinds == {("laplace", False), ("gaussian", True), ("approx", False)}
    assert "n/a" not in str(report).split("GDP")[0]


def test_report_zcdp_and_pld_against_dp_accounting(report):
    events = list(report.events)
    assert report.zcdp == pytest.approx(reference_zcdp_epsilon(events, 1e-4), rel=1e-4)
    one_cell = reference_pld(events).get_epsilon_for_delta(1e-4)
    assert one_cell - 1e-4 * len(events) <= report.pld <= 1.05 * one_cell
    assert report.basic[0] == pytest.approx(sum(eps for _, eps, _ in QUERIES))


def test_report_profile_is_an_upper_bound_on_the_one_cell_profile(report):
    epsilons = [0.5, 1.0, 2.0, 3.0]
    reference = reference_pld(list(report.events))
    ours = report.privacy_profile(epsilons)
    for eps, delta in zip(epsilons, ours, strict=True):
        assert delta >= reference.get_delta_for_epsilon(eps) * (1 - 1e-3) - 1e-12
