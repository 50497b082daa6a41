"""Passes for ``SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (...)`` (BigQuery/ZetaSQL syntax)
and ZetaSQL's older ``SELECT WITH ANONYMIZATION OPTIONS (...)``.

The options, with what they mean in dpsql (docs/sql.md, "BigQuery-style DP syntax"):

- ``epsilon``, ``delta``: number literals; the query's ε and δ, so the budget charged is
  exactly what the text says. A caller who also passes ``epsilon=``/``delta=`` must pass
  the same value: a query text never silently overrules its caller (PrivacyError).
- ``max_groups_contributed = g`` (``kappa`` in ``WITH ANONYMIZATION``): a positive integer
  literal; this query's groups per unit, replacing the catalog's ``max_groups_per_unit``.
  Any g is private: the rewrite keeps at most g groups per unit and the noise is
  calibrated to g.
- ``max_rows_contributed = r`` (ZetaSQL): at most r rows per unit in total, in any groups
  (so also r groups and r rows per group); exclusive with ``max_groups_contributed``.
- ``privacy_unit_column = col``: must name the table's declared privacy unit. A query
  cannot pick another unit: that would protect something other than a person.
- ``group_selection_strategy = PUBLIC_GROUPS | LAPLACE_THRESHOLD`` (BigQuery): with
  ``PUBLIC_GROUPS`` every group key must be public (``check_public_groups``), so no group
  is selected privately; ``LAPLACE_THRESHOLD`` is dpsql's default private selection.
- ``consistent_totals = TRUE | FALSE`` (dpsql's own): with ROLLUP, CUBE or GROUPING SETS,
  whether the counts and sums of the sets over public keys are fitted so that they add up
  (default TRUE, docs/mechanisms.md §14); refused in a query without grouping sets.

>>> import sqlglot
>>> from dpsql.parse import parse
>>> sql = "SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 0.5, max_groups_contributed = 2) " \\
...       "COUNT(*) FROM t"
>>> d = read_options(Draft(sql=sql, ast=parse(sql), epsilon=1.0, delta=0.0), Context(None, None))
>>> d.epsilon, d.options.max_groups_per_unit, d.ast.sql()
(0.5, 2, 'SELECT COUNT(*) FROM t')
>>> sql = "SELECT WITH ANONYMIZATION OPTIONS (kappa = 3) COUNT(*) FROM t"
>>> read_options(Draft(sql=sql, ast=parse(sql), epsilon=1.0, delta=0.0),
...              Context(None, None)).options.max_groups_per_unit
3
"""

from __future__ import annotations

import math
from dataclasses import replace

from sqlglot import exp

from dpsql.analysis.draft import Context, Draft, QueryOptions
from dpsql.analysis.grammar import fragment, refuse
from dpsql.analysis.named_bounds import number_literal
from dpsql.dialect import DifferentialPrivacy
from dpsql.errors import InternalError, PrivacyError, UnsupportedQueryError
from dpsql.names import written_name

CLAUSE = "WITH DIFFERENTIAL_PRIVACY OPTIONS"
NAMES = ("epsilon", "delta", "max_groups_contributed", "max_rows_contributed",
         "privacy_unit_column", "group_selection_strategy", "min_privacy_units_per_group",
         "consistent_totals")
ALLOWED = "epsilon = <number>, delta = <number>, max_groups_contributed = <integer>, " \
          "max_rows_contributed = <integer>, privacy_unit_column = <column>, " \
          "group_selection_strategy = PUBLIC_GROUPS | LAPLACE_THRESHOLD, " \
          "min_privacy_units_per_group = <integer>, consistent_totals = TRUE | FALSE"
OLD_NAMES = {"kappa": "max_groups_contributed", "k_threshold": "min_privacy_units_per_group"}
"""ZetaSQL's older names, read in ``WITH ANONYMIZATION OPTIONS`` only."""
STRATEGIES = ("LAPLACE_THRESHOLD", "PUBLIC_GROUPS")


def read_options(draft: Draft, ctx: Context) -> Draft:
    """Read the clause into the draft (ε, δ and QueryOptions) and drop it from the AST; ε
    and δ are then what is left after estimates the query paid for, if any."""
    draft = _read_options(draft, ctx)
    if ctx.remaining is None:
        return draft
    epsilon, delta = ctx.remaining
    if epsilon > draft.epsilon or delta > draft.delta:
        raise InternalError("an estimate left more (ε, δ) than the query had")
    return replace(draft, epsilon=epsilon, delta=delta)


def _read_options(draft: Draft, ctx: Context) -> Draft:
    clauses = list(draft.ast.find_all(DifferentialPrivacy))
    if not clauses:
        return draft
    ast, clause = draft.ast, _clause_name(clauses[0])
    if len(clauses) > 1 or not isinstance(ast, exp.Select) or ast.args.get("hint") is not \
            clauses[0]:
        raise UnsupportedQueryError(
            f"{clause}: allowed only once, right after the outermost SELECT; "
            "move it there (it applies to the whole query)")
    values = _values(clauses[0], clause)
    if "consistent_totals" in values and _written_boolean(values["consistent_totals"]) is None:
        refuse(values["consistent_totals"], f"{clause} consistent_totals", "TRUE or FALSE")
    options = QueryOptions(
        max_groups_per_unit=_positive(values, "max_groups_contributed", clause),
        max_rows=_positive(values, "max_rows_contributed", clause),
        unit=_unit(values.get("privacy_unit_column"), clause),
        public_groups=_strategy(values.get("group_selection_strategy"), clause),
        min_units=_positive(values, "min_privacy_units_per_group", clause),
        clause=clause, written=True)
    if options.max_groups_per_unit is not None and options.max_rows is not None:
        refuse(values["max_rows_contributed"], clause, "one of max_groups_contributed and "
               "max_rows_contributed", "They bound contributions in two different ways "
               "(as in ZetaSQL); keep the one you mean")
    ast = ast.copy()
    ast.set("hint", None)
    return replace(draft, ast=ast, options=options,
                   epsilon=_parameter(values, "epsilon", ctx.call_epsilon, draft.epsilon,
                                      clause),
                   delta=_parameter(values, "delta", ctx.call_delta, draft.delta, clause))


def consistent_totals(ast: exp.Expression) -> bool | None:
    """The ``consistent_totals`` option of the outermost SELECT's clause, None if it is not
    written as TRUE or FALSE (``read_options`` refuses any other value).

    >>> from dpsql.parse import parse
    >>> consistent_totals(parse("SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (consistent_totals "
    ...                         "= FALSE) COUNT(*) FROM t GROUP BY ROLLUP (a)"))
    False
    """
    clause = ast.args.get("hint") if isinstance(ast, exp.Select) else None
    if not isinstance(clause, DifferentialPrivacy):
        return None
    return next((_written_boolean(option.expression) for option in clause.expressions
                 if isinstance(option, exp.EQ) and isinstance(option.this, exp.Column)
                 and option.this.name.lower() == "consistent_totals"), None)


def _written_boolean(node: exp.Expression) -> bool | None:
    return node.this if isinstance(node, exp.Boolean) else None


def _clause_name(clause: DifferentialPrivacy) -> str:
    return f"WITH {clause.args.get('kind') or 'DIFFERENTIAL_PRIVACY'} OPTIONS"


def _values(clause: DifferentialPrivacy, label: str) -> dict[str, exp.Expression]:
    """``name = value`` options by lower-case name (older names under their new ones):
    known names, each at most once."""
    old = OLD_NAMES if clause.args.get("kind") == "ANONYMIZATION" else {}
    values: dict[str, exp.Expression] = {}
    for option in clause.expressions:
        name = option.this if isinstance(option, exp.EQ) else None
        if not isinstance(name, exp.Column) or name.table:
            refuse(option, label, ALLOWED, "Write each option as name = value")
        key = name.name.lower()
        if key in OLD_NAMES and not old:
            refuse(option, label, ALLOWED, f"{name.name} is not an option dpsql knows here: "
                   f"it is the older name of {OLD_NAMES[key]} in WITH ANONYMIZATION OPTIONS")
        key = old.get(key, key)
        if key not in NAMES:
            refuse(option, label, ALLOWED, f"{name.name} is not an option dpsql knows")
        if key in values:
            refuse(option, label, "each option once", f"{key} is given twice"
                   + (" (kappa is its older name)" if key in old.values() else ""))
        values[key] = option.expression
    return values


def _parameter(values: dict[str, exp.Expression], name: str, call: float | None,
               default: float, clause: str) -> float:
    """ε or δ from OPTIONS; equal to the caller's explicit value if there is one."""
    node = values.get(name)
    if node is None:
        return default
    value = number_literal(node)
    if value is None or not math.isfinite(value):
        refuse(node, f"{clause} {name}", "a number literal, e.g. epsilon = 0.5")
    if call is not None and call != value:
        raise PrivacyError(
            f"{clause}: {name} = {fragment(node)} conflicts with {name}={call!r} passed to "
            f"the call; give {name} in one place (the budget is charged for exactly one)")
    return value


def _positive(values: dict[str, exp.Expression], name: str, clause: str) -> int | None:
    node = values.get(name)
    if node is None:
        return None
    if isinstance(node, exp.Null):
        refuse(node, f"{clause} {name}", "a positive integer literal",
               f"dpsql always bounds contributions: {name} = NULL would lift the bound")
    if not (isinstance(node, exp.Literal) and not node.is_string and node.this.isdigit()
            and int(node.this) > 0):
        refuse(node, f"{clause} {name}", "a positive integer literal, e.g. "
               f"{name} = 2")
    return int(node.this)


def _unit(node: exp.Expression | None, clause: str) -> exp.Column | None:
    if node is not None and not isinstance(node, exp.Column):
        refuse(node, f"{clause} privacy_unit_column", "a column name, e.g. "
               "privacy_unit_column = patient_id")
    return node


def _strategy(node: exp.Expression | None, clause: str) -> bool:
    """True for ``group_selection_strategy = PUBLIC_GROUPS`` (a name or a string)."""
    if node is None:
        return False
    value = node.name.upper() if isinstance(node, exp.Column) and not node.table else \
        node.this.upper() if isinstance(node, exp.Literal) and node.is_string else None
    if value not in STRATEGIES:
        refuse(node, f"{clause} group_selection_strategy", " or ".join(STRATEGIES))
    return value == "PUBLIC_GROUPS"


def check_options(draft: Draft, ctx: Context) -> Draft:
    """The options must fit the table: its own privacy unit, and a unit to limit."""
    unit, info, clause = draft.options.unit, draft.table, draft.options.clause
    limited = draft.options.max_groups_per_unit is not None or draft.options.max_rows is not None
    if info.row_level and (unit is not None or limited):
        raise UnsupportedQueryError(
            f"{clause}: table {info.name!r} has row-level privacy (every row is its own "
            "unit and touches one group); drop privacy_unit_column, max_groups_contributed "
            "and max_rows_contributed, or register the table with privacy_unit=...")
    if unit is None:
        return draft
    table = draft.select.args["from_"].this
    qualifiers = {table.name.lower(), (table.alias or table.name).lower()}
    if draft.relation is None and unit.table and unit.table.lower() not in qualifiers:
        refuse(unit, f"{clause} privacy_unit_column", f"a column of {info.name}",
               f"{unit.table!r} is not a table in FROM")
    if unit.name.lower() != info.privacy_unit:
        where = "the FROM clause" if draft.relation is not None else repr(info.name)
        raise UnsupportedQueryError(
            f"{clause}: privacy_unit_column = {fragment(unit)} is not the privacy unit of "
            f"{where}, which protects each {_written(info.privacy_unit)}; a query cannot "
            f"choose another unit. Write privacy_unit_column = "
            f"{_written(info.privacy_unit)} or omit it")
    return draft


def _written(unit: str) -> str:
    """The unit as the analyst can name it (a joined unit is named by its table's column)."""
    return written_name(unit)


def check_public_groups(draft: Draft, ctx: Context) -> Draft:
    """``group_selection_strategy = PUBLIC_GROUPS``: every group key must be public; and
    ``min_privacy_units_per_group`` selects groups privately, whatever the keys.

    With the floor and public keys only (declared ``public_keys``, a public table's column,
    the elements of ``UNNEST([...])``), the keys are selected as private ones are, as ZetaSQL
    does for every key without ``PUBLIC_GROUPS``: a group is released only if its noisy count
    of people passes the threshold for the floor. Sound because partition selection assumes
    nothing of its keys (docs/mechanisms.md §6): a key that could be public is one it may
    drop, never one it must keep; the cost is selection's, charged as for private keys. The
    floor with ``PUBLIC_GROUPS`` is refused, as ZetaSQL refuses it."""
    private = [k for k in draft.keys if not k.public]
    if draft.options.min_units is not None and draft.options.public_groups:
        raise UnsupportedQueryError(
            f"{draft.options.clause}: min_privacy_units_per_group selects groups privately, "
            "and group_selection_strategy = PUBLIC_GROUPS releases every group whatever its "
            "size (ZetaSQL refuses the pair too); keep the one you mean")
    if draft.options.min_units is not None and draft.keys and not private:
        draft = replace(draft, keys=tuple(replace(k, domain=None) for k in draft.keys))
    if draft.options.public_groups and private:
        raise UnsupportedQueryError(
            f"{draft.options.clause} group_selection_strategy = PUBLIC_GROUPS: GROUP BY "
            f"{_written(private[0].name)} is not a public key, so its groups would have to be "
            "selected privately. Declare its values when registering the table "
            f"(public_keys={{\"{_written(private[0].name)}\": [...]}}), group by a column of "
            "a public table joined to the private one, or drop the option (an expression "
            "of a public column is a private key: group by the column itself)")
    return draft


def written_parameters(select: exp.Expression) -> tuple[float | None, float | None]:
    """The ε and δ a SELECT's own WITH DIFFERENTIAL_PRIVACY OPTIONS name (None: not named).

    >>> from dpsql.parse import parse
    >>> written_parameters(parse("SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 0.5) "
    ...                          "COUNT(*) FROM t"))
    (0.5, None)
    """
    clause = select.args.get("hint")
    if not isinstance(clause, DifferentialPrivacy):
        return None, None
    label = _clause_name(clause)
    values = _values(clause, label)
    eps, delta = (_parameter(values, name, None, math.nan, label) for name in ("epsilon", "delta"))
    return (None if math.isnan(eps) else eps), (None if math.isnan(delta) else delta)
