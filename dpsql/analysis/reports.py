"""ZetaSQL's reports: ``SUM(x, report_format => "JSON")`` and ``ANON_SUM(x WITH REPORT(FORMAT =
PROTO))`` release the aggregate as a report of its value, its confidence interval and the
bounds its values were clamped to, instead of the bare value.

ZetaSQL (docs/aggregate-dp-functions.md, "report_format"; the compliance tests in
zetasql/compliance/testdata/differential_privacy.test) returns a JSON value or a
``DifferentialPrivacyOutputWithReport`` protocol buffer. dpsql builds the same fields from
what it releases anyway, after the noise, so a report costs nothing more:

- ``JSON``: ``{"result": {"value": v, "noise_confidence_interval": {"lower_bound": lo,
  "upper_bound": hi, "confidence_level": 0.95}}, "bounding_report": {"lower_bound": L,
  "upper_bound": U}}``, a JSON text;
- ``PROTO``: a STRUCT with the protocol buffer's field names, ``{value: {int_value |
  float_value, noise_confidence_interval: {...}}, bounding_report: {lower_bound:
  {float_value}, upper_bound: {float_value}}}`` (``int_value`` for counts).

``[lo, hi]`` is dpsql's 95 % interval of the released value (``Result.ci``: it covers the
bounded value, docs/mechanisms.md §7); a quantile has one only when the query asked for it
(``quantile_ci=``), else both ends are NULL. ``[L, U]`` are the bounds the aggregate's values
were clamped to (declared, written or estimated; public either way); counts have none.
ZetaSQL's ``num_inputs`` and ``num_outside`` of its bound estimation are not reported: they
would be more statistics of the data, to be noised and paid for. ``APPROX_QUANTILES(x, n,
report_format => ...)`` reports each quantile (sorted by value): ``{"result": [{"value": q,
"noise_confidence_interval": {...}}, ...]}`` or ``{values: {values: [{float_value,
noise_confidence_interval}, ...]}}``. A field path after the call
(``SUM(...).result.noise_confidence_interval``) reads part of the report; the path is checked
against the report's fields before any data is read.

>>> from dpsql.plan import Aggregate
>>> agg = Aggregate("__dp_a0", "sum", "SUM(x)", ("__dp_s0",), 0.0, 10.0)
>>> value_report(agg, "JSON").sql(dialect="duckdb")[:81]
"TO_JSON({'result': {'value': __dp_a0, 'noise_confidence_interval': {'lower_bound'"
>>> access(value_report(agg, "PROTO"), "PROTO", ["value", "float_value"], VALUE_FIELDS["PROTO"]
...        ).sql(dialect="duckdb")[:40]
"STRUCT_EXTRACT(STRUCT_EXTRACT({'value': "
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from dpsql.analysis.grammar import fragment, refuse
from dpsql.dialect import REPORT, report_argument
from dpsql.plan import Aggregate

FORMATS = ("JSON", "PROTO")
"""The values of ``report_format`` (any letter case, a string or, in ``WITH REPORT(FORMAT =
...)``, a name)."""
CONFIDENCE_LEVEL = 0.95
"""The level of a report's ``noise_confidence_interval`` (ZetaSQL's)."""
COUNT_KINDS = ("count_star", "count", "count_units", "count_distinct", "regr_count")

INTERVAL = {"lower_bound": None, "upper_bound": None, "confidence_level": None}
Fields = dict[str, Any]
VALUE_FIELDS: dict[str, Fields] = {
    "JSON": {"result": {"value": None, "noise_confidence_interval": INTERVAL},
             "bounding_report": {"lower_bound": None, "upper_bound": None}},
    "PROTO": {"value": {"int_value": None, "float_value": None,
                        "noise_confidence_interval": INTERVAL},
              "bounding_report": {"lower_bound": {"float_value": None},
                                  "upper_bound": {"float_value": None}}},
}
"""The fields of a value's report, for checking a path (a leaf is None). A PROTO value has
one of int_value and float_value; reading the other gives NULL, as an unset proto field."""
QUANTILES_FIELDS: dict[str, Fields] = {
    "JSON": {"result": None, "bounding_report": VALUE_FIELDS["JSON"]["bounding_report"]},
    "PROTO": {"values": {"values": None},
              "bounding_report": VALUE_FIELDS["PROTO"]["bounding_report"]},
}


def report_format(node: exp.Expression) -> str | None:
    """The checked report format of an aggregate call (None without ``report_format``)."""
    argument = report_argument(node)
    if argument is None:
        return None
    value = argument.expression
    if not isinstance(value, exp.Literal) or not value.is_string or \
            value.name.upper() not in FORMATS:
        refuse(argument, REPORT, " or ".join(f"'{f}'" for f in FORMATS), "A report is the "
               "value, its confidence interval and its bounds, as JSON or as a STRUCT with "
               "the fields of ZetaSQL's protocol buffer")
    return value.name.upper()


def interval_columns(name: str) -> tuple[str, str]:
    """The noisy table's columns holding aggregate ``name``'s interval, for its report."""
    return f"{name}__ci_lower", f"{name}__ci_upper"


def value_report(agg: Aggregate, fmt: str) -> exp.Expression:
    """The report of one aggregate, over its column of the noisy table."""
    value = exp.column(agg.name)
    counted = agg.kind in COUNT_KINDS
    if fmt == "JSON":
        fields = {"result": {"value": value, "noise_confidence_interval": _interval(agg)}}
    else:
        typed = exp.cast(value, "BIGINT" if counted else "DOUBLE")
        fields = {"value": {"int_value" if counted else "float_value": typed,
                            "noise_confidence_interval": _interval(agg)}}
    return _wrap(_with_bounds(fields, agg, fmt), fmt)


def quantiles_report(quantiles: list[Aggregate], fmt: str) -> exp.Expression:
    """The report of ``APPROX_QUANTILES``: each quantile with its interval, sorted by value
    (as its array is: post-processing)."""
    value = "value" if fmt == "JSON" else "float_value"
    items = exp.Array(expressions=[_struct({value: exp.cast(exp.column(q.name), "DOUBLE"),
                                            "noise_confidence_interval": _interval(q)})
                                   for q in quantiles])
    listed = exp.ArraySort(this=items)
    fields = {"result": listed} if fmt == "JSON" else {"values": {"values": listed}}
    return _wrap(_with_bounds(fields, quantiles[0], fmt), fmt)


def access(report: exp.Expression, fmt: str, path: list[str], fields: Fields
           ) -> exp.Expression:
    """``report.a.b``: a JSON path into the JSON text, or the STRUCT's fields."""
    if fmt == "JSON":
        return exp.Anonymous(this="json_extract", expressions=[
            report, exp.Literal.string("$." + ".".join(path))])
    for name in path:
        report = exp.Anonymous(this="struct_extract", expressions=[
            report, exp.Literal.string(name)])
    return report


def report_path(node: exp.Dot) -> list[str]:
    """The field path ``["a", "b"]`` of ``call.a.b``."""
    path = []
    while isinstance(node, exp.Dot):
        path.append(node.expression.name.lower())
        node = node.this
    return path[::-1]


def check_path(dot: exp.Expression, path: list[str], fields: Fields) -> None:
    """Refuse a path that names no field of the report (before any data is read)."""
    level: Fields | None = fields
    for name in path:
        if not isinstance(level, dict) or name not in level:
            known = ", ".join(level) if isinstance(level, dict) else "none: it is a value"
            refuse(dot, "report field", f"the report's fields ({known})",
                   f"{fragment(dot)}: no field {name!r} there")
        level = level[name]


def _interval(agg: Aggregate) -> exp.Expression:
    lower, upper = interval_columns(agg.name)
    return _struct({"lower_bound": exp.column(lower), "upper_bound": exp.column(upper),
                    "confidence_level": exp.cast(exp.Literal.number(CONFIDENCE_LEVEL),
                                                 "DOUBLE")})


def _with_bounds(fields: Fields, agg: Aggregate, fmt: str) -> Fields:
    """The bounding report of an aggregate of values (counts have none)."""
    if agg.kind in COUNT_KINDS or agg.lo is None:
        return fields
    ends = [exp.cast(exp.Literal.number(b), "DOUBLE") for b in (agg.lo, agg.hi)]
    if fmt == "PROTO":
        ends = [_struct({"float_value": e}) for e in ends]
    return {**fields, "bounding_report": _struct(dict(zip(("lower_bound", "upper_bound"), ends,
                                                          strict=True)))}


def _struct(fields: dict[str, Any]) -> exp.Struct:
    return exp.Struct(expressions=[
        exp.PropertyEQ(this=exp.to_identifier(name),
                       expression=_struct(value) if isinstance(value, dict) else value)
        for name, value in fields.items()])


def _wrap(fields: Fields, fmt: str) -> exp.Expression:
    struct = _struct(fields)
    return exp.Anonymous(this="to_json", expressions=[struct]) if fmt == "JSON" else struct
