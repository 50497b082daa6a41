"""con.evaluate: utility of a query measured against the bounded truth, spending nothing."""

from __future__ import annotations

import dpsql
from dpsql.datasets import pums_path


def test_evaluate_reports_error_and_coverage_without_spending():
    con = dpsql.connect(budget=dpsql.Budget(epsilon=1.0, delta=1e-6))
    con.register("pums", str(pums_path("PUMS_dup")), privacy_unit="pid",
                 bounds={"age": (0, 100)}, max_rows_per_group=2, public_keys={"sex": [0, 1]})
    report = con.evaluate("SELECT sex, COUNT(*) AS n, AVG(age) AS a FROM pums GROUP BY sex",
                          runs=60, epsilon=0.5)
    by_name = {c.name: c for c in report.columns}
    assert report.released_share == 1.0 and by_name["n"].cells == 120
    # Laplace with scale L1/ε = 2·3/0.5 on the count: MAE about that scale
    assert 3 < by_name["n"].mae < 25 and by_name["n"].relative_error < 0.05
    assert by_name["n"].coverage >= 0.85 and by_name["a"].coverage >= 0.85
    assert con.budget.spent.epsilon == 0 and "CI coverage" in str(report)


def test_evaluate_counts_hidden_groups():
    con = dpsql.connect(budget=dpsql.Budget(epsilon=1.0, delta=1e-6))
    con.register("pums", str(pums_path("PUMS_dup")), privacy_unit="pid")
    report = con.evaluate("SELECT educ, COUNT(*) FROM pums GROUP BY educ", runs=5, epsilon=1.0)
    assert 0 < report.released_share < 1


def test_evaluate_handles_quantiles():
    con = dpsql.connect(budget=dpsql.Budget(epsilon=1.0, delta=1e-6))
    con.register("pums", str(pums_path("PUMS_dup")), privacy_unit="pid",
                 bounds={"age": (0, 100)}, public_keys={"sex": [0, 1]})
    report = con.evaluate("SELECT sex, MEDIAN(age) AS m FROM pums GROUP BY sex", runs=10,
                          epsilon=1.0)
    assert report.columns[0].name == "m" and report.columns[0].mae < 10
