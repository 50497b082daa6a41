"""sqlglot dialects that also read BigQuery/ZetaSQL differential-privacy syntax.

Each input dialect dpsql accepts (DuckDB, PostgreSQL, BigQuery, Spark) gets a subclass
whose parser also understands

- the clause ``SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1, delta = 1e-5,
  max_groups_contributed = 2, privacy_unit_column = patient_id) ...``, and ZetaSQL's older
  ``SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-5, kappa = 2) ...``, kept as
  a :class:`DifferentialPrivacy` node (its ``kind`` says which) in the SELECT's ``hint``
  slot (the position where sqlglot reads ``/*+ hints */``);
- the named arguments ``contribution_bounds_per_group => (lo, hi)`` and
  ``contribution_bounds_per_row => (lo, hi)`` of aggregate calls, kept in a ``bounds``
  argument of the aggregate. The aggregate becomes an instance of a subclass of its own
  sqlglot class (``isinstance(node, exp.Sum)`` still holds), which prints back as written;
- ZetaSQL's older aggregates ``ANON_COUNT``, ``ANON_SUM``, ``ANON_AVG``, ``ANON_VAR_POP``,
  ``ANON_STDDEV_POP``, ``ANON_PERCENTILE_CONT(x, q)`` and ``ANON_QUANTILES(x, n)``, each with
  an optional ``CLAMPED BETWEEN lo AND hi``: subclasses of COUNT, SUM, ... whose clamp is the named
  bound with ZetaSQL's meaning (``ANONYMIZATION_FUNCTIONS``), printed back as written;
- SmartNoise's ``VAR(x)`` and ``STD(x)`` (population variance and standard deviation, as
  in SmartNoise and MySQL; Spark's own ``STD`` is the sample one and keeps that meaning),
  and T-SQL's ``SELECT TOP n ...``, read as ``LIMIT n``;
- the pyformat placeholder ``%(name)s`` (PostgreSQL's parser already reads it), and every
  placeholder node records where it is written (``meta["start"]``/``meta["end"]``), so that
  ``dpsql.dbapi`` binds parameters in the order of the text and quotes them in errors;
- PostgreSQL's arrays of object identifier types, ``proargtypes::regtype[]`` (pgcli's
  function list casts so): sqlglot reads ``regtype`` but not the ``[]`` after it.

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
>>> old = parse_one("SELECT WITH ANONYMIZATION OPTIONS (kappa = 1) "
...                 "ANON_AVG(x CLAMPED BETWEEN 0 AND 10) FROM t")
>>> old.args["hint"].args["kind"], isinstance(old.expressions[0], exp.Avg)
('ANONYMIZATION', True)
>>> [b.sql() for b in named_arguments(old.expressions[0])]
['contribution_bounds_per_group => (0, 10)']
>>> old.sql(dialect=dialect("duckdb"))
'SELECT WITH ANONYMIZATION OPTIONS (kappa = 1) ANON_AVG(x CLAMPED BETWEEN 0 AND 10) FROM t'
>>> parse_one("SELECT TOP 3 k, STD(x) FROM t GROUP BY k").sql(dialect=dialect("duckdb"))
'SELECT k, STDDEV_POP(x) FROM t GROUP BY k LIMIT 3'
>>> parse_one("SELECT proargtypes::regtype[] FROM pg_proc", "postgres").sql(dialect("postgres"))
'SELECT CAST(proargtypes AS REGTYPE[]) FROM pg_proc'
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.parser import Parser
from sqlglot.tokens import TokenType

PER_GROUP, PER_ROW = "contribution_bounds_per_group", "contribution_bounds_per_row"
BOUND_NAMES = (PER_GROUP, PER_ROW)
"""The named arguments of BigQuery's differentially private aggregates."""
REPORT = "report_format"
"""ZetaSQL's named argument asking an aggregate for a report (``report_format => "JSON"``),
written ``WITH REPORT(FORMAT = JSON)`` in its older ``ANON_*`` aggregates: kept in the
aggregate's ``report`` argument; what it means is ``dpsql.analysis.reports``'s."""
NAMED = (*BOUND_NAMES, REPORT)
CLAUSES = ("DIFFERENTIAL_PRIVACY", "ANONYMIZATION")
"""The words after ``SELECT WITH``: BigQuery's and ZetaSQL's clause, and ZetaSQL's older one."""

ANONYMIZATION_FUNCTIONS: dict[str, tuple[type[exp.AggFunc], str]] = {
    "ANON_COUNT": (exp.Count, PER_GROUP),
    "ANON_SUM": (exp.Sum, PER_GROUP),
    "ANON_AVG": (exp.Avg, PER_GROUP),
    "ANON_VAR_POP": (exp.VariancePop, PER_ROW),
    "ANON_STDDEV_POP": (exp.StddevPop, PER_ROW),
    "ANON_PERCENTILE_CONT": (exp.PercentileCont, PER_ROW),
    "ANON_QUANTILES": (exp.ApproxQuantiles, PER_ROW),
}
"""ZetaSQL's older DP aggregates: the aggregate each one is, and what ``CLAMPED BETWEEN lo
AND hi`` bounds (ZetaSQL, docs/aggregate_anonymization_functions.md): COUNT, SUM and AVG
clamp each privacy unit's partial (its count, sum or mean in the group), like BigQuery's
``contribution_bounds_per_group``; VAR_POP, STDDEV_POP, PERCENTILE_CONT and QUANTILES (the
n + 1 quantiles of ``ANON_QUANTILES(x, n)``, BigQuery's ``APPROX_QUANTILES``) clamp
"individual user values", each row, like ``contribution_bounds_per_row``."""

SMARTNOISE_FUNCTIONS: dict[str, type[exp.AggFunc]] = {"VAR": exp.VariancePop,
                                                      "STD": exp.StddevPop}
"""SmartNoise's unsuffixed names: population variance and standard deviation (SmartNoise
computes both from Σx²/n − (Σx/n)²). A dialect's own meaning of the name wins."""


class DifferentialPrivacy(exp.Expression):
    """``WITH DIFFERENTIAL_PRIVACY OPTIONS (name = value, ...)``; each option an ``exp.EQ``.

    ``kind`` is the clause's word: ``DIFFERENTIAL_PRIVACY`` or ZetaSQL's older
    ``ANONYMIZATION``.
    """

    arg_types: ClassVar[dict[str, bool]] = {"expressions": False, "kind": False}


@functools.cache
def bounded_class(cls: type[exp.AggFunc]) -> type[exp.AggFunc]:
    """``cls`` with one more argument, ``bounds``: the named contribution bounds.

    The subclass keeps the class name (so ``key`` and the printed function name stay the
    same) and is unknown to every generator, which therefore prints it as a plain call:
    ``SUM(x, contribution_bounds_per_group => (0, 10))``.
    """
    return type(cls.__name__, (cls,), {
        "arg_types": {**cls.arg_types, "bounds": False, "report": False},
        "__module__": __name__,
        "__doc__": f"{cls.__name__} with named contribution bounds.",
    })


@functools.cache
def anonymization_class(name: str) -> type[exp.AggFunc]:
    """The class of ZetaSQL's ``name`` (a key of ``ANONYMIZATION_FUNCTIONS``): its aggregate's
    class with named bounds, keeping that class's ``key``, printed as ``name(...)``."""
    base, clamp = ANONYMIZATION_FUNCTIONS[name]
    cls = type(name.title().replace("_", ""), (bounded_class(base),), {
        "_sql_names": [name], "clamp": clamp, "__module__": __name__,
        "__doc__": f"ZetaSQL's {name}: {base.__name__} whose CLAMPED BETWEEN is {clamp}."})
    cls.key = base.key
    return cls


def is_anonymization(node: exp.Expression) -> bool:
    """True for ZetaSQL's ``ANON_*`` aggregates."""
    return getattr(type(node), "clamp", None) in BOUND_NAMES


def named_arguments(node: exp.Expression) -> list[exp.Kwarg]:
    """The contribution-bound named arguments of an aggregate call (empty if none)."""
    return list(node.args.get("bounds") or [])


def report_argument(node: exp.Expression) -> exp.Kwarg | None:
    """The ``report_format => ...`` argument of an aggregate call (None if none)."""
    return node.args.get("report")


def _is_named(node: exp.Expression) -> bool:
    return isinstance(node, exp.Kwarg) and node.name.lower() in NAMED


class DPParser(Parser):
    """Mixin for a dialect's parser: the DP clause and named contribution bounds."""

    def reset(self) -> None:
        super().reset()
        self._bound_frames: list[list[exp.Kwarg]] = []

    def _parse_hint(self) -> Any:
        if (self._curr and self._curr.token_type == TokenType.WITH and self._next
                and self._next.text.upper() in CLAUSES):
            kind = self._next.text.upper()
            self._advance(2)
            if not self._match_text_seq("OPTIONS"):
                self.raise_error(f"expected OPTIONS (...) after WITH {kind}")
            options = self._parse_wrapped_csv(self._parse_assignment)
            return self.expression(DifferentialPrivacy(expressions=options, kind=kind))
        return super()._parse_hint()

    def _parse_limit(self, this: exp.Expression | None = None, top: bool = False,
                     skip_limit_token: bool = False) -> exp.Expression | None:
        # T-SQL's SELECT TOP n in every dialect: TOP followed by a number or a parenthesis.
        if (top and self._curr and self._curr.token_type != TokenType.TOP
                and self._curr.text.upper() == "TOP" and self._next
                and self._next.token_type in (TokenType.NUMBER, TokenType.L_PAREN)):
            self._advance()
            return super()._parse_limit(this, top=True, skip_limit_token=True)
        return super()._parse_limit(this, top=top, skip_limit_token=skip_limit_token)

    def _parse_anonymization(self, name: str) -> exp.Expression:
        """``ANON_X(expr [, q] [CLAMPED BETWEEN lo AND hi])`` after its opening parenthesis."""
        cls = anonymization_class(name)
        star = name == "ANON_COUNT" and self._match(TokenType.STAR)
        args: dict[str, Any] = {"this": exp.Star() if star else self._parse_disjunction()}
        if issubclass(cls, exp.PercentileCont | exp.ApproxQuantiles):
            second = "percentile" if issubclass(cls, exp.PercentileCont) else "number"
            if not self._match(TokenType.COMMA):
                self.raise_error(f"{name} takes (expression, {second} [CLAMPED BETWEEN lo "
                                 "AND hi])")
            args["expression"] = self._parse_bitwise()
        if self._match_text_seq("CLAMPED", "BETWEEN"):
            lo = self._parse_bitwise()
            if not self._match(TokenType.AND):
                self.raise_error("expected CLAMPED BETWEEN <lower> AND <upper>")
            bounds = exp.Tuple(expressions=[lo, self._parse_bitwise()])
            args["bounds"] = [exp.Kwarg(this=exp.var(cls.clamp), expression=bounds)]
        if self._match(TokenType.WITH):
            args["report"] = self._parse_report_clause()
        if not self._curr or self._curr.token_type != TokenType.R_PAREN:
            self.raise_error(f"{name} takes one expression (and a percentile for "
                             "ANON_PERCENTILE_CONT, a number for ANON_QUANTILES), then "
                             "optionally CLAMPED BETWEEN <lower> AND <upper>, then optionally "
                             "WITH REPORT(FORMAT = JSON | PROTO)")
        return self.expression(cls(**args))

    def _parse_report_clause(self) -> exp.Kwarg:
        """``REPORT(FORMAT = <name or string>)`` after WITH, as ``report_format => '<name>'``."""
        if not (self._match_text_seq("REPORT") and self._match(TokenType.L_PAREN)
                and self._match_text_seq("FORMAT") and self._match(TokenType.EQ)):
            self.raise_error("expected WITH REPORT(FORMAT = JSON | PROTO)")
        value = self._parse_primary() or self._parse_id_var()
        if not self._match(TokenType.R_PAREN):
            self.raise_error("expected ) after WITH REPORT(FORMAT = ...")
        text = value.name if value is not None else ""
        return exp.Kwarg(this=exp.var(REPORT), expression=exp.Literal.string(text))

    def _parse_types(self, *args: Any, **kwargs: Any) -> exp.Expression | None:
        this = super()._parse_types(*args, **kwargs)
        # sqlglot returns an object identifier type (regtype, oid, ...) before looking for
        # the brackets that make other types arrays: read them here, one per dimension.
        if not isinstance(this, exp.ObjectIdentifier | exp.PseudoType):
            return this
        while self._match_pair(TokenType.L_BRACKET, TokenType.R_BRACKET):
            this = exp.DataType(this=exp.DataType.Type.ARRAY, expressions=[this], nested=True)
        return this

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
        # Named arguments leave the argument list, so that SUM(x, ...) still has one argument.
        self._bound_frames[-1].extend(a for a in args if _is_named(a))
        return [a for a in args if not _is_named(a)]

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
        reports = [b for b in bounds if b.name.lower() == REPORT]
        if len(reports) > 1:
            self.raise_error(f"{REPORT} is given twice")
        bounds = [b for b in bounds if b.name.lower() != REPORT]
        bounded = bounded_class(type(call))(**call.args, bounds=bounds or None,
                                            report=reports[0] if reports else None)
        if call is result:
            return bounded
        call.replace(bounded)
        return result


def _clause_sql(generator: Any, node: DifferentialPrivacy) -> str:
    kind = node.args.get("kind") or "DIFFERENTIAL_PRIVACY"
    return f" WITH {kind} OPTIONS ({generator.expressions(node, flat=True)})"


def _anonymization_sql(generator: Any, node: exp.AggFunc) -> str:
    """``ANON_X(expr [, q] [CLAMPED BETWEEN lo AND hi])``, as written."""
    args = [generator.sql(node, "this")]
    if node.args.get("expression") is not None:
        args.append(generator.sql(node, "expression"))
    clamp = "".join(f" CLAMPED BETWEEN {generator.sql(b.expression.expressions[0])} AND "
                    f"{generator.sql(b.expression.expressions[1])}"
                    for b in named_arguments(node))
    report = report_argument(node)
    clause = "" if report is None else f" WITH REPORT(FORMAT = {report.expression.name})"
    return f"{type(node).sql_names()[0]}({', '.join(args)}{clamp}{clause})"


def _approx_quantiles_sql(generator: Any, node: exp.ApproxQuantiles) -> str:
    """``APPROX_QUANTILES(x, n)`` as written (DuckDB's printer would make it a list of
    levels): dpsql releases it from a histogram, so it is only ever printed to be read."""
    return generator.func("APPROX_QUANTILES", node.this, node.expression)


def _parsers(name: str, base: type[Parser]) -> dict[str, Any]:
    """What the parser of dialect ``name`` adds to ``base``: ZetaSQL's ANON_* aggregates, and
    SmartNoise's VAR and STD where the dialect gives the name no meaning of its own."""
    own = {"STD": exp.StddevSamp} if name == "spark" else {}  # Spark's std is the sample one
    functions = {**{n: cls.from_arg_list for n, cls in {**SMARTNOISE_FUNCTIONS, **own}.items()},
                 **base.FUNCTIONS}
    anonymization = {n: (lambda self, n=n: self._parse_anonymization(n))
                     for n in ANONYMIZATION_FUNCTIONS}
    return {"FUNCTIONS": functions,
            "FUNCTION_PARSERS": {**base.FUNCTION_PARSERS, **anonymization}}


def _extend(name: str, base: type[Dialect]) -> type[Dialect]:
    """``base`` with DPParser mixed into its parser and the DP syntax in its generator."""
    # The dialect's own reading of % in a value's place (PostgreSQL's) wins over %(name)s.
    placeholders = {TokenType.MOD: DPParser._parse_pyformat,
                    **base.parser_class.PLACEHOLDER_PARSERS}
    parser = type("Parser", (DPParser, base.parser_class),
                  {"PLACEHOLDER_PARSERS": placeholders, **_parsers(name, base.parser_class)})
    anonymization = {anonymization_class(n): _anonymization_sql for n in ANONYMIZATION_FUNCTIONS}
    generator = type("Generator", (base.generator_class,), {
        "TRANSFORMS": {**base.generator_class.TRANSFORMS, DifferentialPrivacy: _clause_sql,
                       exp.ApproxQuantiles: _approx_quantiles_sql, **anonymization}})
    # The class name registers the dialect with sqlglot; "dpsql_" keeps sqlglot's own intact.
    return type(f"dpsql_{base.__name__.lower()}", (base,),
                {"Parser": parser, "Generator": generator, "__module__": __name__})


class _Dialects(Mapping[str, type[Dialect]]):
    """The input dialects by name, each extended on first use: a DuckDB query never
    imports sqlglot's Spark, BigQuery or PostgreSQL dialect (docs/benchmarks.md,
    "Start-up")."""

    BASES: ClassVar[dict[str, tuple[str, str]]] = {
        "duckdb": ("sqlglot.dialects.duckdb", "DuckDB"),
        "postgres": ("sqlglot.dialects.postgres", "Postgres"),
        "bigquery": ("sqlglot.dialects.bigquery", "BigQuery"),
        "spark": ("sqlglot.dialects.spark", "Spark"),
    }
    """Each name's sqlglot dialect: (module, class)."""

    def __getitem__(self, name: str) -> type[Dialect]:
        module, attribute = self.BASES[name]  # KeyError for a name not listed
        return _extended(name, getattr(importlib.import_module(module), attribute))

    def __iter__(self) -> Iterator[str]:
        return iter(self.BASES)

    def __len__(self) -> int:
        return len(self.BASES)


@functools.cache
def _extended(name: str, base: type[Dialect]) -> type[Dialect]:
    return _extend(name, base)


DIALECTS: Mapping[str, type[Dialect]] = _Dialects()
"""Input dialects: sqlglot's, extended with the DP syntax."""


def dialect(name: str) -> type[Dialect]:
    """The extended dialect for ``name`` (one of ``DIALECTS``); KeyError for others."""
    return DIALECTS[name.lower()]


def parse_one(sql: str, name: str = "duckdb") -> exp.Expression:
    """One statement in dialect ``name`` with the DP extensions (for doctests and tools)."""
    return sqlglot.parse_one(sql, read=dialect(name))
