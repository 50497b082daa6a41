"""Results, plans, utility reports and catalog listings render as text and as notebook HTML."""

from __future__ import annotations

import pytest

from grammar_tests.catalog import connect

QUERY = "SELECT region, COUNT(*) AS n, AVG(age) AS \"<a>\" FROM visits GROUP BY region"


@pytest.fixture(scope="module")
def con():
    return connect()


def test_a_result_shows_intervals_as_lo_hi_in_text_and_html(con):
    result = con.sql(QUERY, seed=1)
    lower, upper = result.ci(0.95).column("n_lower")[0].as_py(), \
        result.ci(0.95).column("n_upper")[0].as_py()
    first = f"{result.fetchall()[0][1]} [{lower:.0f}, {upper:.0f}]"
    assert first in repr(result) and "±" not in repr(result)
    html = result._repr_html_()
    assert html.startswith("<table>") and f"<td>{first}</td>" in html
    assert "<th>&lt;a&gt;</th>" in html and "(8 rows; 95% CIs" in html


def test_plans_reports_and_listings_render_as_html(con):
    plan = con.explain(QUERY)
    assert f"<td>COUNT(*)</td><td>{plan.to_dict()['mechanism']['kind']}</td>" in plan._repr_html_()
    report = con.evaluate(QUERY, runs=2)._repr_html_()
    assert "<th>MAE</th>" in report and "<td>n</td>" in report
    assert "<td>visits</td><td>private</td><td>patient_id</td>" in con.tables()._repr_html_()
