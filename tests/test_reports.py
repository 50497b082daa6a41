"""ZetaSQL's reports (``dpsql.analysis.reports``): the value, the interval Result.ci gives and
the clamp bounds, as JSON or a STRUCT; field paths; nothing more is spent; the refusals."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

import dpsql

DP = "SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1, delta = 1e-6) "


def connection(**options) -> dpsql.Connection:
    con = dpsql.connect(budget=dpsql.Budget(epsilon=1e12, delta=0.5), dialect="bigquery",
                        cache=False, **options)
    con.register("t", pa.table({"uid": [1, 1, 2, 3, 3, 3], "k": ["a", "b", "a", "a", "b", "b"],
                                "x": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], "i": [1, 2, 3, 4, 5, 6]}),
                 privacy_unit="uid", bounds={"x": (0, 10), "i": (0, 10)},
                 max_groups_per_unit=2, max_rows_per_group=3)
    return con


def test_json_report_is_the_value_its_interval_and_its_bounds_at_huge_epsilon():
    con = connection()
    (text,), = con.sql("SELECT SUM(x, report_format => 'JSON') FROM t", epsilon=1e9,
                       delta=0).fetchall()
    report = json.loads(text)
    assert report["result"]["value"] == pytest.approx(21.0, abs=1e-3)
    interval = report["result"]["noise_confidence_interval"]
    assert interval["confidence_level"] == 0.95
    assert interval["lower_bound"] <= report["result"]["value"] <= interval["upper_bound"]
    assert report["bounding_report"] == {"lower_bound": 0.0, "upper_bound": 10.0}


def test_the_report_holds_the_released_value_and_result_ci():
    """A reported SUM shares the plain SUM's noisy statistic: the same value, and the
    interval ``Result.ci`` gives it; a count is an int_value without a bounding report."""
    con = connection(seed=3)
    res = con.sql("SELECT SUM(x) AS s, SUM(x, report_format => 'PROTO') AS r, COUNT(*) AS n, "
                  "COUNT(*, report_format => 'PROTO') AS c FROM t", epsilon=1.0, delta=0)
    (s, r, n, c), = res.fetchall()
    ci = res.ci(0.95).to_pylist()[0]
    assert r["value"]["float_value"] == s
    assert r["value"]["noise_confidence_interval"] == {
        "lower_bound": ci["s_lower"], "upper_bound": ci["s_upper"], "confidence_level": 0.95}
    assert r["bounding_report"] == {"lower_bound": {"float_value": 0.0},
                                    "upper_bound": {"float_value": 10.0}}
    assert c == {"value": {"int_value": n, "noise_confidence_interval": {
        "lower_bound": ci["n_lower"], "upper_bound": ci["n_upper"], "confidence_level": 0.95}}}


def test_a_report_costs_nothing_more():
    con = connection()
    plain = con.explain(DP + "k, AVG(x) FROM t GROUP BY k").to_dict()
    reported = con.explain(DP + "k, AVG(x, report_format => 'JSON') FROM t GROUP BY k").to_dict()
    for key in ("epsilon", "delta", "statistics_per_unit", "partition_selection"):
        assert plain[key] == reported[key]


def test_field_paths_and_the_older_syntax():
    con = connection()
    (ci,), = con.sql(DP + "AVG(x, report_format => 'JSON').result.noise_confidence_interval "
                     "FROM t").fetchall()
    assert set(json.loads(ci)) == {"lower_bound", "upper_bound", "confidence_level"}
    (value,), = con.sql("SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1e9, delta = 0) "
                        "ANON_COUNT(* CLAMPED BETWEEN 0 AND 3 WITH REPORT(FORMAT = PROTO))"
                        ".value.int_value FROM t").fetchall()
    assert value == 6


def test_quantile_reports_list_each_quantile_sorted():
    con = connection()
    (items,), = con.sql(DP + "APPROX_QUANTILES(x, 4, report_format => 'PROTO').values.values "
                        "AS q FROM t").fetchall()
    values = [item["float_value"] for item in items]
    assert len(values) == 5 and values == sorted(values)
    assert all(item["noise_confidence_interval"]["lower_bound"] is None for item in items)
    (listed,), = con.sql(DP + "JSON_QUERY_ARRAY(APPROX_QUANTILES(x, 2, report_format => "
                         "'JSON').result) AS q FROM t").fetchall()
    assert [set(json.loads(item)) for item in listed] == [
        {"value", "noise_confidence_interval"}] * 3


@pytest.mark.parametrize(("sql", "message"), [
    ("COUNT(*, report_format => 'XML') FROM t", "report_format: `report_format => 'XML'` is "
     "not supported; allowed: 'JSON' or 'PROTO'"),
    ("COUNT(*, report_format => 1) FROM t", "'JSON' or 'PROTO'"),
    ("SUM(x, report_format => 'JSON').result.nope FROM t", "no field 'nope'"),
    ("SUM(x, report_format => 'PROTO').value.float_value.deeper FROM t", "it is a value"),
    ("COUNT(*, report_format => 'JSON') + 1 FROM t", "a report as a SELECT item"),
    ("k, COUNT(*) FROM t GROUP BY k HAVING COUNT(*, report_format => 'JSON') IS NOT NULL",
     "a report as a SELECT item"),
    ("JSON_QUERY_ARRAY(APPROX_QUANTILES(x, 2, report_format => 'PROTO')) FROM t",
     "a report as a SELECT item"),
    ("COUNT(*).value FROM t", "fields of an aggregate's report"),
])
def test_refused_before_reading_data(sql, message):
    con = connection()
    with pytest.raises(dpsql.UnsupportedQueryError, match=None) as error:
        con.sql(DP + sql)
    assert message in str(error.value)
    assert con.budget.spent.epsilon == 0


def test_report_format_twice_is_a_parse_error():
    with pytest.raises(dpsql.ParseError, match="report_format is given twice"):
        connection().sql(DP + "COUNT(*, report_format => 'JSON', report_format => 'PROTO') "
                         "FROM t")
