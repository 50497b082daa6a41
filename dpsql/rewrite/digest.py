"""The keyed hash that chooses a unit's groups, computed identically by every backend.

When a unit touches more groups than it may, the rewrite keeps the ones whose
``MD5(salt | unit | keys)`` is smallest. The salt is secret and fresh per query (a query
parameter, never part of the SQL text), so the
choice is a uniformly random subset of the unit's own groups; it depends on nothing but
that unit's rows. DuckDB and Spark must make the *same* choice for the same salt (so their
bounded aggregates agree exactly), which rules out engine hash functions (DuckDB's ``HASH``
and Spark's murmur3 ``hash`` differ) and needs a text form of each value that both engines
print alike:

- integers, decimals, strings, booleans, dates and wall-clock timestamps: ``CAST(x AS
  VARCHAR)``, which both engines print the same way;
- floating-point values: not their text (DuckDB prints ``1e+20``, Java ``1.0E20``), but the
  integer ``FLOOR(x × 10⁶)`` of the value clamped to ±10¹², NaN as ``nan``. Values closer
  than 10⁻⁶ (or beyond ±10¹²) share a digest; ties are broken by the keys themselves, which
  both engines order alike, so the choice stays identical, only less random among them.

MD5 is used as a keyed pseudo-random function, not for secrecy of the keys: the selection
must only be independent of the statistics' values.

>>> print(keyed_hash([("pid", "BIGINT"), ("cost", "DOUBLE")]).sql("spark"))
MD5(CONCAT_WS('|', :__dp_salt, CAST(pid AS STRING), CASE WHEN ISNAN(cost) THEN 'nan' ELSE \
CAST(CAST(FLOOR(LEAST(GREATEST(CAST(cost AS DOUBLE), -1000000000000), 1000000000000) * \
1000000) AS BIGINT) AS STRING) END))
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp

from dpsql.catalog import FLOAT_TYPES
from dpsql.expr.nodes import as_bigint, as_double, number

SALT = "__dp_salt"
"""The name of the query parameter that carries the secret salt (in dpsql's namespace)."""
FLOAT_RANGE = 1e12
"""Floating-point keys are clamped to ±FLOAT_RANGE before scaling (so they fit a BIGINT)."""
FLOAT_RESOLUTION = 1e6
"""Floating-point keys are hashed as FLOOR(x × FLOAT_RESOLUTION)."""


def as_text(node: exp.Expression) -> exp.Expression:
    return exp.Cast(this=node, to=exp.DataType.build("VARCHAR"))


def canonical_text(node: exp.Expression, sql_type: str) -> exp.Expression:
    """Text of ``node`` that DuckDB and Spark compute identically (NULL stays NULL)."""
    if not sql_type.upper().startswith(FLOAT_TYPES):
        return as_text(node)
    clamped = exp.Least(this=exp.Greatest(this=as_double(node.copy()),
                                          expressions=[number(-FLOAT_RANGE)], ignore_nulls=True),
                        expressions=[number(FLOAT_RANGE)], ignore_nulls=True)
    scaled = as_bigint(exp.Floor(this=exp.Mul(this=clamped,
                                              expression=number(FLOAT_RESOLUTION))))
    return exp.Case(ifs=[exp.If(this=exp.IsNan(this=node.copy()),
                                true=exp.Literal.string("nan"))], default=as_text(scaled))


def keyed_hash(columns: Sequence[tuple[str, str]]) -> exp.Expression:
    """``MD5`` (lower-case hex text) of the salt and each (column, type)'s canonical text.

    The salt is the query parameter ``SALT``, bound by the backend when the query runs, never
    written into the SQL text. ``CONCAT_WS`` skips NULLs in both engines, so a NULL key adds
    nothing to the text.
    """
    parts = [exp.Placeholder(this=SALT),
             *(canonical_text(exp.column(name), sql_type) for name, sql_type in columns)]
    return exp.MD5(this=exp.ConcatWs(expressions=[exp.Literal.string("|"), *parts],
                                     safe=True, coalesce=True))
