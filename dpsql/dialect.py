"""sqlglot dialects that also read BigQuery/ZetaSQL differential-privacy syntax.

Each input dialect dpsql accepts (DuckDB, PostgreSQL, BigQuery, Spark) gets a subclass
whose parser also understands

- the clause ``SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1, delta = 1e-5,
  max_groups_contributed = 2, privacy_unit_column = patient_id) ...``, kept as a
  :class:`DifferentialPrivacy` node in the SELECT's ``hint`` slot (the position where
  sqlglot reads ``/*+ hints */``);
- the named arguments ``contribution_bounds_per_group => (lo, hi)`` and
  ``contribution_bounds_per_row => (lo, hi)`` of aggregate calls, kept in a ``bounds``
  argument of the aggregate. The aggregate becomes an instance of a subclass of its own
  sqlglot class (``isinstance(node, exp.Sum)`` still holds), which prints back as written;
- the pyformat placeholder ``%(name)s`` (PostgreSQL's parser already reads it), and every
  placeholder node records where it is written (``meta["start"]``/``meta["end"]``), so that
  ``dpsql.dbapi`` binds parameters in the order of the text and quotes them in errors.

The syntax follows GoogleSQL for BigQuery ("Differentially private aggregate functions"
and the differential privacy clause of "Query syntax",
https://cloud.google.com/bigquery/docs/reference/standard-sql/aggregate-dp-functions) and
ZetaSQL (docs/aggregate-dp-functions.md, docs/anonymization_syntax.md). What the options
mean for dpsql is decided by the analysis (``dpsql.analysis.options`` and
``dpsql.analysis.named_bounds``), not here.

>>> ast = parse_one("SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 0.5) "
...                 "SUM(x, contribution_bounds_per_group => (0, 10)) FROM t", "bigquery")
>>> type(ast.args["hint"]).__name__, [b.sql() for b in named_arguments(ast.expressions[0])]
('DifferentialPrivacy', ['contribution_bounds_per_group => (0, 10)'])
>>> ast.sql(dialect=dialect("bigquery"))[:58]
'SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 0.5) S'
>>> ast.expressions[0].sql()
'SUM(x, contribution_bounds_per_group => (0, 10))'
"""

from __future__ import annotations

import functools
from typing import Any, ClassVar

import sqlglot
from sqlglot import exp
from sqlglot.dialects.bigquery import BigQuery
from sqlglot.dialects.dialect import Dialect
from sqlglot.dialects.duckdb import DuckDB
from sqlglot.dialects.postgres import Postgres
from sqlglot.dialects.spark import Spark
from sqlglot.parser import Parser
from sqlglot.tokens import TokenType

BOUND_NAMES = ("contribution_bounds_per_group", "contribution_bounds_per_row")
"""The named arguments of BigQuery's differentially private aggregates."""


class DifferentialPrivacy(exp.Expression):
    """``WITH DIFFERENTIAL_PRIVACY OPTIONS (name = value, ...)``; each option an ``exp.EQ``."""

    arg_types: ClassVar[dict[str, bool]] = {"expressions": False}


@functools.cache
def bounded_class(cls: type[exp.AggFunc]) -> type[exp.AggFunc]:
    """``cls`` with one more argument, ``bounds``: the named contribution bounds.

    The subclass keeps the class name (so ``key`` and the printed function name stay the
    same) and is unknown to every generator, which therefore prints it as a plain call:
    ``SUM(x, contribution_bounds_per_group => (0, 10))``.
    """
    return type(cls.__name__, (cls,), {
        "arg_types": {**cls.arg_types, "bounds": False},
        "__module__": __name__,
        "__doc__": f"{cls.__name__} with named contribution bounds.",
    })


def named_arguments(node: exp.Expression) -> list[exp.Kwarg]:
    """The contribution-bound named arguments of an aggregate call (empty if none)."""
    return list(node.args.get("bounds") or [])


def _is_bound(node: exp.Expression) -> bool:
    return isinstance(node, exp.Kwarg) and node.name.lower() in BOUND_NAMES


class DPParser(Parser):
    """Mixin for a dialect's parser: the DP clause and named contribution bounds."""

    def reset(self) -> None:
        super().reset()
        self._bound_frames: list[list[exp.Kwarg]] = []

    def _parse_hint(self) -> Any:
        if (self._curr and self._curr.token_type == TokenType.WITH and self._next
                and self._next.text.upper() == "DIFFERENTIAL_PRIVACY"):
            self._advance(2)
            if not self._match_text_seq("OPTIONS"):
                self.raise_error("expected OPTIONS (...) after WITH DIFFERENTIAL_PRIVACY")
            options = self._parse_wrapped_csv(self._parse_assignment)
            return self.expression(DifferentialPrivacy(expressions=options))
        return super()._parse_hint()

    def _parse_placeholder(self) -> exp.Expression | None:
        first = self._curr
        placeholder = super()._parse_placeholder()
        if placeholder is not None:
            placeholder.update_positions(line=first.line, col=first.col, start=first.start,
                                         end=self._prev.end)
        return placeholder

    def _parse_pyformat(self) -> exp.Placeholder | None:
        """``%(name)s`` after its ``%``; None (nothing consumed) for any other ``%``."""
        index = self._index
        if (self._match(TokenType.L_PAREN) and (name := self._parse_id_var())
                and self._match(TokenType.R_PAREN) and self._match_text_seq("S")):
            return self.expression(exp.Placeholder(this=name))
        self._retreat(index)
        return None

    def _parse_function_args(self, alias: bool = False) -> list[exp.Expression]:
        args = super()._parse_function_args(alias)
        if not self._bound_frames:
            return args
        # Named bounds leave the argument list, so that SUM(x, ...) still has one argument.
        self._bound_frames[-1].extend(a for a in args if _is_bound(a))
        return [a for a in args if not _is_bound(a)]

    def _parse_function_call(self, *args: Any, **kwargs: Any) -> exp.Expression | None:
        self._bound_frames.append([])  # one frame per call: nested calls keep their own
        try:
            result = super()._parse_function_call(*args, **kwargs)
        finally:
            bounds = self._bound_frames.pop()
        if not bounds:
            return result
        call = result
        while isinstance(call, exp.Window | exp.WithinGroup | exp.Filter):  # f(...) OVER ...
            call = call.this
        if not isinstance(call, exp.AggFunc):
            self.raise_error(f"{bounds[0].name} is a named argument of aggregate functions "
                             "(COUNT, SUM, AVG, PERCENTILE_CONT, ...)")
            return result
        bounded = bounded_class(type(call))(**call.args, bounds=bounds)
        if call is result:
            return bounded
        call.replace(bounded)
        return result


def _clause_sql(generator: Any, node: DifferentialPrivacy) -> str:
    return f" WITH DIFFERENTIAL_PRIVACY OPTIONS ({generator.expressions(node, flat=True)})"


def _extend(base: type[Dialect]) -> type[Dialect]:
    """``base`` with DPParser mixed into its parser and the clause in its generator."""
    # The dialect's own reading of % in a value's place (PostgreSQL's) wins over %(name)s.
    placeholders = {TokenType.MOD: DPParser._parse_pyformat,
                    **base.parser_class.PLACEHOLDER_PARSERS}
    parser = type("Parser", (DPParser, base.parser_class),
                  {"PLACEHOLDER_PARSERS": placeholders})
    generator = type("Generator", (base.generator_class,), {
        "TRANSFORMS": {**base.generator_class.TRANSFORMS, DifferentialPrivacy: _clause_sql}})
    # The class name registers the dialect with sqlglot; "dpsql_" keeps sqlglot's own intact.
    return type(f"dpsql_{base.__name__.lower()}", (base,),
                {"Parser": parser, "Generator": generator, "__module__": __name__})


DIALECTS: dict[str, type[Dialect]] = {
    name: _extend(base) for name, base in
    (("duckdb", DuckDB), ("postgres", Postgres), ("bigquery", BigQuery), ("spark", Spark))
}
"""Input dialects: sqlglot's, extended with the DP syntax."""


def dialect(name: str) -> type[Dialect]:
    """The extended dialect for ``name`` (one of ``DIALECTS``); KeyError for others."""
    return DIALECTS[name.lower()]


def parse_one(sql: str, name: str = "duckdb") -> exp.Expression:
    """One statement in dialect ``name`` with the DP extensions (for doctests and tools)."""
    return sqlglot.parse_one(sql, read=dialect(name))
