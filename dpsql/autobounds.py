"""Bounds dpsql chooses itself: ``bounds={"income": "auto"}`` in the catalog.

A SUM, AVG, variance or quantile needs the range its values are clamped to, and a guess that
is too narrow biases the answer while one too wide drowns it in noise. For a column declared
``"auto"``, the first query that needs its bounds spends a share of its own budget
(``AUTO_SHARE``: a quarter of ε and half of δ, split evenly over the columns it estimates)
on a private histogram of the values' magnitudes, the approach of ZetaSQL's approximate bounds
and Tumult's ``get_bounds`` (values binned by powers of two, bins released only when
enough people are in them):

1. each value falls in a bin by sign and power of two, ``[2^(k-1), 2^k)`` for
   k = -19 … 63, ``[0, 2^-20)``, ``[2^63, ∞)`` (NaN, too) and their mirror images;
2. the histogram is an ordinary dpsql query over a subquery (contribution limits, noise
   and partition selection as for any query with private keys, so its guarantee is the
   one every query has), charged to the ledger like any query;
3. the bounds are the outer edges of the released bins (``bounds_from_bins``): the
   smallest power of two above every released positive bin and the largest below every
   released negative bin, 0 when a side has none; ``FALLBACK`` when no bin is released.

The bounds are then a released statistic: they replace ``"auto"`` in the connection's
catalog and later queries use them for free (post-processing). Whatever the data, step 3
gives valid bounds, so whether the query runs never depends on the data.

>>> bounds_from_bins([(4.0, 120), (64.0, 31), (-2.0, 15)])
(-2.0, 64.0)
>>> bounds_from_bins([])
(0.0, 1.0)
"""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction

from sqlglot import exp

from dpsql.catalog import TableInfo
from dpsql.errors import PrivacyError
from dpsql.exact import float_at_most

AUTO_SHARE = (Fraction(1, 4), Fraction(1, 2))
"""The share of a query's (ε, δ) spent estimating the bounds it needs."""
POWERS = range(-19, 64)
"""Bin edges 2^k: values from about 1e-6 to 9.2e18 get a bin of their own size."""
TOP = 1e100
"""The edge of the outermost bins (values beyond 2^63, ±inf and NaN): the largest bound
dpsql computes with (``plan.check_value_bounds``)."""
FALLBACK = (0.0, 1.0)
"""Bounds when no bin is released (too few people for the budget): valid, and as narrow as
a count's."""


def histogram_sql(info: TableInfo, column: str, where: exp.Expression | None = None) -> str:
    """The private query that counts values of ``info.column`` per bin (see the module).

    >>> info = TableInfo.private("t", columns={"pid": "INT", "x": "DOUBLE"}, privacy_unit="pid")
    >>> print(histogram_sql(info, "x")[:96])
    SELECT x_bin, COUNT(*) AS n FROM (SELECT pid, CASE WHEN x IS NULL THEN NULL WHEN x >= 0 THEN...
    """
    value = exp.column(column)
    name = free_name(info, f"{column}_bin")
    positive = _ladder(value, [(exp.LT, 2.0**k, 2.0**k) for k in [-20, *POWERS]], TOP)
    negative = _ladder(value, [(exp.GT, -(2.0**k), -(2.0**k)) for k in [-20, *POWERS]], -TOP)
    binned = exp.Case(ifs=[
        exp.If(this=exp.Is(this=value.copy(), expression=exp.Null()), true=exp.Null()),
        exp.If(this=exp.GTE(this=value.copy(), expression=exp.Literal.number(0)),
               true=positive)], default=negative)
    unit = [exp.column(info.privacy_unit)] if info.privacy_unit else []
    inner = exp.select(*unit, exp.alias_(binned, name)).from_(exp.to_identifier(info.name))
    if where is not None:  # the rows a query keeps (``bounding_report``)
        inner = inner.where(where.copy())
    query = (exp.select(exp.column(name), exp.alias_(exp.Count(this=exp.Star()), "n"))
             .from_(inner.subquery("binned")).group_by(exp.column(name)))
    return query.sql("duckdb")


def _ladder(value: exp.Expression, steps: list[tuple[type, float, float]],
            beyond: float) -> exp.Case:
    """CASE WHEN value OP edge THEN label ... ELSE beyond END."""
    return exp.Case(ifs=[exp.If(this=op(this=value.copy(), expression=_number(edge)),
                                true=_number(label)) for op, edge, label in steps],
                    default=_number(beyond))


def _number(value: float) -> exp.Expression:
    literal = exp.Literal.number(repr(abs(value)))
    return exp.Neg(this=literal) if value < 0 else literal


def free_name(info: TableInfo, name: str) -> str:
    """``name``, with underscores added until it is not a column of ``info``: an output name
    of a generated subquery that none of the table's columns can shadow.

    >>> info = TableInfo.private("t", columns={"pid": "INT", "m": "INT", "m_": "INT"},
    ...                          privacy_unit="pid")
    >>> free_name(info, "m"), free_name(info, "n")
    ('m__', 'n')
    """
    while name in info.columns:
        name += "_"
    return name


def bounds_from_bins(rows: Iterable[tuple[float, float]]) -> tuple[float, float]:
    """(lo, hi) from the released bins' labels: each label is the bin's outer edge."""
    labels = [float(label) for label, _ in rows if label is not None]
    lo = min((v for v in labels if v < 0), default=0.0)
    hi = max((v for v in labels if v > 0), default=0.0)
    return FALLBACK if lo == hi == 0.0 else (lo, hi)


def split(epsilon: float, delta: float, columns: int) -> tuple[float, float, float, float]:
    """(ε, δ) per estimated column and (ε, δ) left for the query, in exact arithmetic: the
    parts never add up to more than the query's own (ε, δ).

    >>> split(1.0, 1e-6, 2)
    (0.125, 2.5e-07, 0.75, 5e-07)
    """
    if delta <= 0:
        raise PrivacyError(
            'bounds="auto" are estimated with partition selection over the bins, which needs '
            "delta > 0: give the query a delta (e.g. 1e-6), or declare the bounds")
    share_e, share_d = AUTO_SHARE
    each_e = float_at_most(Fraction(epsilon) * share_e / columns)
    each_d = float_at_most(Fraction(delta) * share_d / columns)
    rest_e = float_at_most(Fraction(epsilon) - columns * Fraction(each_e))
    rest_d = float_at_most(Fraction(delta) - columns * Fraction(each_d))
    if each_e == 0 or each_d == 0:
        raise PrivacyError(f"epsilon={epsilon:g}, delta={delta:g}: too small to share with "
                           'the estimate of bounds="auto"; declare the bounds instead')
    return each_e, each_d, rest_e, rest_d
