"""The SQL dpsql accepts, as whitelists of sqlglot node types.

A whitelist, not a blacklist: a node type nobody has proven safe is refused.
Row-level expressions (WHERE, GROUP BY, aggregate arguments) must be total
functions of one row, so that no error can depend on private data.

>>> import sqlglot
>>> check_row_expression(sqlglot.parse_one("age BETWEEN 18 AND 65 AND sex = 1"), "WHERE")
>>> check_row_expression(sqlglot.parse_one("RANDOM() < 0.5"), "WHERE")
Traceback (most recent call last):
...
dpsql.errors.UnsupportedQueryError: WHERE: `RANDOM()` is not supported...
"""

from __future__ import annotations

from sqlglot import exp

from dpsql.dialect import DIALECTS
from dpsql.errors import UnsupportedQueryError
from dpsql.expr.functions import FUNCTION_NAMES, SIGNATURES

ROW_NODES: tuple[type[exp.Expression], ...] = (
    exp.Column, exp.Identifier, exp.Literal, exp.Boolean, exp.Null, exp.Paren, exp.Neg, exp.Not,
    exp.And, exp.Or, exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.Is, exp.In,
    exp.Between, exp.Like, exp.ILike, exp.Add, exp.Sub, exp.Mul, exp.Div, exp.IntDiv, exp.Mod,
    exp.Least, exp.Greatest, exp.Abs, exp.Coalesce, exp.Nullif, exp.Case, exp.If, exp.Cast,
    exp.DataType, exp.DataTypeParam, exp.Var, exp.Tuple, *SIGNATURES,
)
"""Node types allowed in row-level expressions: total, no errors on any data.

Division, ``//`` and ``%`` return NULL for a zero divisor (the rewrite guards them); CAST is
accepted only where the type checker proves it cannot fail (TRY_CAST is a Cast), and
functions whose arguments could make an engine raise take checked literals there."""

AGGREGATES = ("COUNT(*), COUNT(expr), COUNT(DISTINCT expr), SUM(expr), AVG(expr), "
              "VAR_POP/VAR_SAMP/VARIANCE/STDDEV_POP/STDDEV_SAMP/STDDEV(expr), "
              "CORR/COVAR_POP/COVAR_SAMP/REGR_SLOPE/REGR_INTERCEPT/REGR_R2/REGR_COUNT/"
              "REGR_AVGX/REGR_AVGY/REGR_SXX/REGR_SYY/REGR_SXY(y, x), "
              "MEDIAN(expr), QUANTILE_CONT(expr, q), PERCENTILE_CONT(q) WITHIN GROUP "
              "(ORDER BY expr), each optionally with FILTER (WHERE ...)")
QUANTILES = (exp.Median, exp.PercentileCont, exp.Quantile)
"""Quantile aggregates (exp.ApproxQuantile is a Quantile); PERCENTILE_CONT may be WITHIN GROUP."""


def is_quantile_array(node: exp.Expression) -> bool:
    """BigQuery's ``APPROX_QUANTILES(x, n)`` (or ZetaSQL's ``ANON_QUANTILES``), whose value is
    an array of n + 1 quantiles (possibly with ``FILTER (WHERE ...)``)."""
    return isinstance(node.this if isinstance(node, exp.Filter) else node, exp.ApproxQuantiles)


def dotted_base(node: exp.Expression) -> exp.Expression:
    """The expression under a field path ``e.a.b`` (``node`` itself without one)."""
    while isinstance(node, exp.Dot):
        node = node.this
    return node


def is_aggregate(node: exp.Expression) -> bool:
    """An aggregate call, including ``PERCENTILE_CONT(q) WITHIN GROUP (ORDER BY x)`` and
    ``agg FILTER (WHERE ...)``."""
    if isinstance(node, exp.Filter):
        return is_aggregate(node.this)
    return isinstance(node, exp.AggFunc | exp.WithinGroup)


ROW_ALLOWED = ("columns, numbers, strings, comparisons, AND/OR/NOT, IN (list), BETWEEN, "
               "IS [NOT] NULL, LIKE/ILIKE, + - * / // %, LEAST, GREATEST, ABS, COALESCE, "
               "NULLIF, CASE, IF, TRY_CAST, CAST that cannot fail, " + FUNCTION_NAMES)

POST_NODES: tuple[type[exp.Expression], ...] = (
    *ROW_NODES, exp.Div, exp.IntDiv, exp.Mod, exp.Round, exp.Case, exp.If, exp.Cast, exp.TryCast,
    exp.DataType, exp.Sqrt, exp.Pow, exp.Ln, exp.Log, exp.Exp, exp.Floor, exp.Ceil, exp.DPipe,
    exp.Concat, exp.Alias, exp.Order, exp.Ordered, exp.Sign, exp.Nullif, exp.Pi, exp.Rand,
    exp.Cos, exp.Sin, exp.Tan, exp.Acos, exp.Asin, exp.Atan, exp.Atan2, exp.Cbrt, exp.Degrees,
    exp.Radians,
)
"""Node types allowed over noisy outputs (post-processing is free and safe; RAND() there
draws fresh randomness independent of the data, as post-processing may)."""


def fragment(node: exp.Expression, limit: int | None = 80) -> str:
    """The SQL of ``node`` (DuckDB dialect), shortened for error messages unless limit=None.

    ``PERCENTILE_CONT(q) WITHIN GROUP (ORDER BY x)`` prints as written (DuckDB's printer would
    turn it into ``QUANTILE_CONT(x, q ORDER BY x)``), and so does the DP syntax of
    ``dpsql.dialect`` (``ANON_SUM(x CLAMPED BETWEEN 0 AND 10)``).
    """
    sql = node.sql(dialect=DIALECTS["postgres" if node.find(exp.WithinGroup) else "duckdb"])
    return sql if limit is None or len(sql) <= limit else sql[: limit - 3] + "..."


def refuse(node: exp.Expression | None, context: str, allowed: str, fix: str = "") -> None:
    """Raise UnsupportedQueryError naming the fragment, what is allowed, and the fix."""
    what = f"`{fragment(node)}` is not supported" if node is not None else "not supported"
    hint = f". {fix}" if fix else ""
    raise UnsupportedQueryError(f"{context}: {what}; allowed: {allowed}{hint}")


def check_row_expression(node: exp.Expression, context: str) -> None:
    """Refuse any node outside ROW_NODES (aggregates, subqueries, casts, division, ...)."""
    for sub in node.walk():
        if is_aggregate(sub):
            refuse(sub, context, ROW_ALLOWED, "Aggregates are allowed only in SELECT, HAVING "
                   "and ORDER BY, not nested in other aggregates or in WHERE/GROUP BY")
        if isinstance(sub, exp.In) and (sub.args.get("query") or sub.args.get("field")):
            refuse(sub, context, ROW_ALLOWED, "IN takes a list of literals here; a subquery "
                   "over a public table, k IN (SELECT c FROM public_table [WHERE ...]), is "
                   "allowed as a WHERE condition joined to the others by AND (not under OR or "
                   "NOT)")
        if not isinstance(sub, ROW_NODES):
            refuse(sub, context, ROW_ALLOWED)


WINDOW_FUNCTIONS: tuple[type[exp.Expression], ...] = (
    exp.Sum, exp.Avg, exp.Min, exp.Max, exp.Count, exp.RowNumber, exp.Rank, exp.DenseRank,
    exp.PercentRank, exp.CumeDist, exp.Ntile, exp.Lag, exp.Lead, exp.FirstValue, exp.LastValue,
)
"""Window functions over noisy outputs: each is total on any numbers (sums of released
integers cannot overflow DuckDB's HUGEINT; their literal arguments are checked)."""
WINDOWS = ("SUM, AVG, MIN, MAX, COUNT, ROW_NUMBER, RANK, DENSE_RANK, PERCENT_RANK, CUME_DIST, "
           "NTILE(n), LAG/LEAD(x[, n[, default]]), FIRST_VALUE, LAST_VALUE OVER ([PARTITION BY "
           "...] [ORDER BY ...] [ROWS frame with literal offsets]) over aggregates and keys")


def check_post_expression(node: exp.Expression, context: str, *, windows: bool = True) -> None:
    """Refuse anything but arithmetic, scalar functions and (where ``windows``) window
    functions over noisy outputs."""
    for sub in node.walk(prune=lambda n: is_aggregate(n) or isinstance(n, exp.Window)):
        if isinstance(sub, exp.Window):
            if not windows:
                refuse(sub, context, "arithmetic, ROUND, CASE and scalar functions over "
                       "aggregates and group keys", "Window functions are allowed in SELECT, "
                       "QUALIFY and ORDER BY, and not inside one another")
            check_window(sub, context)
        elif isinstance(sub, exp.Bracket | exp.ArraySize):
            check_quantile_access(sub, context)
        elif isinstance(sub, exp.Dot) and is_aggregate(dotted_base(sub)):
            continue  # a field of an aggregate's report (``dpsql.analysis.reports``)
        elif isinstance(sub, exp.JSONExtractArray) and is_aggregate(dotted_base(sub.this)):
            continue  # JSON_QUERY_ARRAY of a JSON report's field: checked there
        elif isinstance(sub, exp.JSONPath | exp.JSONPathRoot) and \
                isinstance(sub.parent, exp.JSONExtractArray | exp.JSONPath):
            continue
        elif not is_aggregate(sub) and not isinstance(sub, POST_NODES):
            refuse(sub, context, "arithmetic, ROUND, CASE and scalar functions over aggregates "
                   "and group keys")


QUANTILE_ACCESS = ("APPROX_QUANTILES(x, n)[OFFSET(i)] (or [ORDINAL(i)], [SAFE_OFFSET(i)], "
                   "[i]) with i an integer literal, and ARRAY_LENGTH(APPROX_QUANTILES(x, n))")


def check_quantile_access(node: exp.Bracket | exp.ArraySize, context: str) -> None:
    """An element or the length of APPROX_QUANTILES's array: its only arrays after the noise.
    The length is n + 1 and the index a literal, so neither depends on the data.

    >>> import sqlglot
    >>> check_quantile_access(sqlglot.parse_one("k[1]", read="duckdb"), "SELECT")
    Traceback (most recent call last):
    ...
    dpsql.errors.UnsupportedQueryError: SELECT: `k[1]` is not supported...
    """
    index = node.expressions if isinstance(node, exp.Bracket) else []
    literal = all(isinstance(i, exp.Literal) and not i.is_string and i.this.isdigit()
                  for i in index)
    if not (is_quantile_array(node.this) and len(index) <= 1 and literal):
        refuse(node, context, QUANTILE_ACCESS)


def check_window(node: exp.Window, context: str) -> None:
    """A window function over noisy outputs: a listed function whose literal arguments and
    frame an engine accepts whatever the values (no negative offsets, no RANGE offsets,
    which need a numeric ORDER BY), its parts post-processing themselves.

    >>> import sqlglot
    >>> check_window(sqlglot.parse_one("SUM(a) OVER (ORDER BY k ROWS 2 PRECEDING)"), "SELECT")
    >>> check_window(sqlglot.parse_one("LAG(a, -1) OVER (ORDER BY k)"), "SELECT")
    Traceback (most recent call last):
    ...
    dpsql.errors.UnsupportedQueryError: window function: ...LAG/LEAD take a non-negative ...
    """
    function = node.this
    if not isinstance(function, WINDOW_FUNCTIONS) or isinstance(function.this, exp.Distinct):
        refuse(node, "window function", WINDOWS)
    offset, default = function.args.get("offset"), function.args.get("default")
    if offset is not None and not _whole(offset):
        refuse(node, "window function", WINDOWS, "LAG/LEAD take a non-negative integer "
               "literal offset")
    if default is not None and not (isinstance(default, exp.Null) or (
            isinstance(default, exp.Literal) and not default.is_string)):
        refuse(node, "window function", WINDOWS, "The default of LAG/LEAD is a number or NULL")
    if isinstance(function, exp.Ntile) and not (_whole(function.this)
                                                and int(function.this.this) > 0):
        refuse(node, "window function", WINDOWS, "NTILE takes a positive integer literal")
    spec = node.args.get("spec")
    if spec is not None:
        offsets = [b for b in (spec.args.get("start"), spec.args.get("end"))
                   if isinstance(b, exp.Expression)]
        if spec.args.get("exclude") or (offsets and (spec.args.get("kind") != "ROWS"
                                                     or not all(map(_whole, offsets)))):
            refuse(node, "window frame", "UNBOUNDED, CURRENT ROW, or ROWS with non-negative "
                   "integer literal offsets (n PRECEDING/FOLLOWING)")
    parts = [a for a in (function.this, *function.expressions)
             if isinstance(a, exp.Expression) and not isinstance(a, exp.Star)]
    parts += [*(node.args.get("partition_by") or []),
              *([node.args["order"]] if node.args.get("order") else [])]
    for part in parts:
        check_post_expression(part, context, windows=False)


def sums_as_double(tree: exp.Expression) -> exp.Expression:
    """Post-processing sums (window SUMs, a query over a release) cast to DOUBLE: a sum of
    released integers is then a number, not the engine's 128-bit DECIMAL.

    >>> import sqlglot
    >>> sums_as_double(sqlglot.parse_one("SUM(a) OVER () + 1")).sql()
    'CAST(SUM(a) OVER () AS DOUBLE) + 1'
    """
    def cast(node: exp.Expression) -> exp.Expression:
        inner = node.this if isinstance(node, exp.Window) else node
        if isinstance(inner, exp.Sum) and not (isinstance(node, exp.Sum)
                                               and isinstance(node.parent, exp.Window)):
            return exp.cast(node, exp.DataType.Type.DOUBLE)
        return node

    return tree.transform(cast, copy=False)


def _whole(node: exp.Expression | None) -> bool:
    """A non-negative integer literal."""
    return isinstance(node, exp.Literal) and not node.is_string and node.this.isdigit()


SHAPE_FIXES = {
    "distinct": "Drop DISTINCT: grouped outputs are already one row per group",
}


def check_select_shape(select: exp.Select) -> None:
    """Refuse clauses of SELECT outside the grammar (FROM, WITH and JOIN are checked by
    ``dpsql.analysis.relations``)."""
    unsupported = {
        "distinct": "SELECT DISTINCT",
        "windows": "WINDOW", "laterals": "LATERAL", "pivots": "PIVOT",
        "sample": "TABLESAMPLE", "into": "SELECT INTO", "locks": "FOR UPDATE",
    }
    for arg, label in unsupported.items():
        value = select.args.get(arg)
        if value:
            node = value[0] if isinstance(value, list) else value
            refuse(node if isinstance(node, exp.Expression) else None, label,
                   "one SELECT ... FROM <private table> [WHERE] [GROUP BY] [HAVING] "
                   "[ORDER BY] [LIMIT]", SHAPE_FIXES.get(arg, ""))

