"""Passes for ``SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (...)`` (BigQuery/ZetaSQL syntax).

The options, with what they mean in dpsql (docs/sql.md, "BigQuery-style DP syntax"):

- ``epsilon``, ``delta``: number literals; the query's ε and δ, so the budget charged is
  exactly what the text says. A caller who also passes ``epsilon=``/``delta=`` must pass
  the same value: a query text never silently overrules its caller (PrivacyError).
- ``max_groups_contributed = g``: a positive integer literal; this query's groups per
  unit, replacing the catalog's ``max_groups_per_unit``. Any g is private: the rewrite
  keeps at most g groups per unit and the noise is calibrated to g.
- ``max_rows_contributed = r`` (ZetaSQL): at most r rows per unit in total, in any groups
  (so also r groups and r rows per group); exclusive with ``max_groups_contributed``.
- ``privacy_unit_column = col``: must name the table's declared privacy unit. A query
  cannot pick another unit: that would protect something other than a person.

>>> import sqlglot
>>> from dpsql.parse import parse
>>> sql = "SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 0.5, max_groups_contributed = 2) " \\
...       "COUNT(*) FROM t"
>>> d = read_options(Draft(sql=sql, ast=parse(sql), epsilon=1.0, delta=0.0), Context(None, None))
>>> d.epsilon, d.options.max_groups, d.ast.sql()
(0.5, 2, 'SELECT COUNT(*) FROM t')
"""

from __future__ import annotations

import math
from dataclasses import replace

from sqlglot import exp

from dpsql.analysis.draft import Context, Draft, QueryOptions
from dpsql.analysis.grammar import fragment, refuse
from dpsql.analysis.named_bounds import number_literal
from dpsql.dialect import DifferentialPrivacy
from dpsql.errors import PrivacyError, UnsupportedQueryError

CLAUSE = "WITH DIFFERENTIAL_PRIVACY OPTIONS"
NAMES = ("epsilon", "delta", "max_groups_contributed", "max_rows_contributed",
         "privacy_unit_column")
ALLOWED = "epsilon = <number>, delta = <number>, max_groups_contributed = <integer>, " \
          "max_rows_contributed = <integer>, privacy_unit_column = <column>"


def read_options(draft: Draft, ctx: Context) -> Draft:
    """Read the clause into the draft (ε, δ and QueryOptions) and drop it from the AST."""
    clauses = list(draft.ast.find_all(DifferentialPrivacy))
    if not clauses:
        return draft
    ast = draft.ast
    if len(clauses) > 1 or not isinstance(ast, exp.Select) or ast.args.get("hint") is not \
            clauses[0]:
        raise UnsupportedQueryError(
            f"{CLAUSE}: allowed only once, right after the outermost SELECT; "
            "move it there (it applies to the whole query)")
    values = _values(clauses[0])
    options = QueryOptions(max_groups=_positive(values, "max_groups_contributed"),
                           max_rows=_positive(values, "max_rows_contributed"),
                           unit=_unit(values.get("privacy_unit_column")))
    if options.max_groups is not None and options.max_rows is not None:
        refuse(values["max_rows_contributed"], CLAUSE, "one of max_groups_contributed and "
               "max_rows_contributed", "They bound contributions in two different ways "
               "(as in ZetaSQL); keep the one you mean")
    ast = ast.copy()
    ast.set("hint", None)
    return replace(draft, ast=ast, options=options,
                   epsilon=_parameter(values, "epsilon", ctx.call_epsilon, draft.epsilon),
                   delta=_parameter(values, "delta", ctx.call_delta, draft.delta))


def _values(clause: DifferentialPrivacy) -> dict[str, exp.Expression]:
    """``name = value`` options by lower-case name: known names, each at most once."""
    values: dict[str, exp.Expression] = {}
    for option in clause.expressions:
        name = option.this if isinstance(option, exp.EQ) else None
        if not isinstance(name, exp.Column) or name.table:
            refuse(option, CLAUSE, ALLOWED, "Write each option as name = value")
        key = name.name.lower()
        if key not in NAMES:
            refuse(option, CLAUSE, ALLOWED, f"{name.name} is not an option dpsql knows")
        if key in values:
            refuse(option, CLAUSE, "each option once", f"{key} is given twice")
        values[key] = option.expression
    return values


def _parameter(values: dict[str, exp.Expression], name: str, call: float | None,
               default: float) -> float:
    """ε or δ from OPTIONS; equal to the caller's explicit value if there is one."""
    node = values.get(name)
    if node is None:
        return default
    value = number_literal(node)
    if value is None or not math.isfinite(value):
        refuse(node, f"{CLAUSE} {name}", "a number literal, e.g. epsilon = 0.5")
    if call is not None and call != value:
        raise PrivacyError(
            f"{CLAUSE}: {name} = {fragment(node)} conflicts with {name}={call!r} passed to "
            f"the call; give {name} in one place (the budget is charged for exactly one)")
    return value


def _positive(values: dict[str, exp.Expression], name: str) -> int | None:
    node = values.get(name)
    if node is None:
        return None
    if isinstance(node, exp.Null):
        refuse(node, f"{CLAUSE} {name}", "a positive integer literal",
               f"dpsql always bounds contributions: {name} = NULL would lift the bound")
    if not (isinstance(node, exp.Literal) and not node.is_string and node.this.isdigit()
            and int(node.this) > 0):
        refuse(node, f"{CLAUSE} {name}", "a positive integer literal, e.g. "
               f"{name} = 2")
    return int(node.this)


def _unit(node: exp.Expression | None) -> exp.Column | None:
    if node is not None and not isinstance(node, exp.Column):
        refuse(node, f"{CLAUSE} privacy_unit_column", "a column name, e.g. "
               "privacy_unit_column = patient_id")
    return node


def check_options(draft: Draft, ctx: Context) -> Draft:
    """The options must fit the table: its own privacy unit, and a unit to limit."""
    unit, info = draft.options.unit, draft.table
    limited = draft.options.max_groups is not None or draft.options.max_rows is not None
    if info.row_level and (unit is not None or limited):
        raise UnsupportedQueryError(
            f"{CLAUSE}: table {info.name!r} has row-level privacy (every row is its own "
            "unit and touches one group); drop privacy_unit_column, max_groups_contributed "
            "and max_rows_contributed, or register the table with privacy_unit=...")
    if unit is None:
        return draft
    table = draft.select.args["from_"].this
    if unit.table and unit.table.lower() not in {table.name.lower(),
                                                 (table.alias or table.name).lower()}:
        refuse(unit, f"{CLAUSE} privacy_unit_column", f"a column of {info.name}",
               f"{unit.table!r} is not a table in FROM")
    if unit.name.lower() != info.privacy_unit:
        raise UnsupportedQueryError(
            f"{CLAUSE}: privacy_unit_column = {fragment(unit)} is not the privacy unit of "
            f"{info.name!r}, which protects each {info.privacy_unit}; a query cannot choose "
            f"another unit. Write privacy_unit_column = {info.privacy_unit} or omit it")
    return draft
