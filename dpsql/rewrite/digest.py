"""The keyed hash that chooses a unit's groups, computed identically by every backend.

When a unit touches more groups than it may, the rewrite keeps the ones whose
``MD5(salt | unit | keys)`` is smallest — or, for an integer privacy unit, the ones first
under ``unit_order``, a keyed order of (unit, group) in BIGINT arithmetic that needs one
MD5 per distinct group instead of one per (unit, group) pair. The salt is secret and
fresh per query (a query parameter, never part of the SQL text), so the choice is a
uniformly random subset of the unit's own groups; it depends on nothing but
that unit's rows. DuckDB and Spark must make the *same* choice for the same salt (so their
bounded aggregates agree exactly), which rules out engine hash functions (DuckDB's ``HASH``
and Spark's murmur3 ``hash`` differ) and needs a text form of each value that both engines
print alike:

- integers, decimals, strings, booleans: ``CAST(x AS VARCHAR)``, which both engines print
  the same way;
- dates, wall-clock timestamps and times: the same, within years 1–9999 (a TIME before
  24:00:00), and NULL beyond (``in_years``, rule 8 of ``dpsql.expr.totality``): DuckDB
  prints ``infinity`` where Spark prints ``+5881580-07-11``, ``10000-01-01`` where Spark
  prints ``+10000-01-01``, and Spark cannot print the TIME 24:00:00 at all. Such values
  share a digest with a NULL key; ties are broken by the keys, as for floats;
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

import hashlib
from collections.abc import Container, Sequence

from sqlglot import exp

from dpsql.catalog import FLOAT_TYPES, type_name
from dpsql.expr.nodes import as_bigint, as_double, hex_number, number
from dpsql.expr.totality import TEMPORAL_TYPES, in_years, wide_number
from dpsql.expr.types import sql_type as value_type

SALT = "__dp_salt"
"""The name of the query parameter that carries the secret salt (in dpsql's namespace)."""
FLOAT_RANGE = 1e12
"""Floating-point keys are clamped to ±FLOAT_RANGE before scaling (so they fit a BIGINT)."""
FLOAT_RESOLUTION = 1e6
"""Floating-point keys are hashed as FLOOR(x × FLOAT_RESOLUTION)."""
PRIME = 2**31 - 1
"""The modulus of ``unit_order``: products of two residues stay below 2⁶², so no BIGINT
arithmetic of either engine can overflow."""
CODE_DIGITS = 7
"""Hex digits of an MD5 read as a number (28 bits) by ``key_code`` and ``unit_order``."""
INTEGER_UNITS = ("TINYINT", "SMALLINT", "INTEGER", "INT", "BIGINT", "INT8", "INT4", "INT2",
                 "LONG", "SHORT", "BYTE")
"""Privacy-unit types that ``unit_order`` computes with (signed, at most 64 bits)."""


def as_text(node: exp.Expression) -> exp.Expression:
    return exp.Cast(this=node, to=exp.DataType.build("VARCHAR"))


def canonical_text(node: exp.Expression, sql_type: str) -> exp.Expression:
    """Text of ``node`` that DuckDB and Spark compute identically (NULL stays NULL). Floats,
    and the wide numbers that row expressions read as DOUBLE (``wide_number``), are written
    as whole multiples of a resolution: the engines print doubles differently ('1e+20' in
    DuckDB, '1.0E20' in Spark). Dates, timestamps and times beyond years 1–9999 are NULL."""
    kind = value_type(sql_type)
    if kind in TEMPORAL_TYPES:
        return as_text(in_years(node, kind))
    if not (sql_type.upper().startswith(FLOAT_TYPES) or wide_number(sql_type)):
        return as_text(node)
    clamped = exp.Least(this=exp.Greatest(this=as_double(node.copy()),
                                          expressions=[number(-FLOAT_RANGE)], ignore_nulls=True),
                        expressions=[number(FLOAT_RANGE)], ignore_nulls=True)
    scaled = as_bigint(exp.Floor(this=exp.Mul(this=clamped,
                                              expression=number(FLOAT_RESOLUTION))))
    return exp.Case(ifs=[exp.If(this=exp.IsNan(this=node.copy()),
                                true=exp.Literal.string("nan"))], default=as_text(scaled))


def keyed_hash(columns: Sequence[tuple[str, str]], *, tag: str | None = None
               ) -> exp.Expression:
    """``MD5`` (lower-case hex text) of the salt, ``tag`` if given, and each (column, type)'s
    canonical text.

    The salt is the query parameter ``SALT``, bound by the backend when the query runs, never
    written into the SQL text. ``CONCAT_WS`` skips NULLs in both engines, so a NULL key adds
    nothing to the text.
    """
    parts = [exp.Placeholder(this=SALT), *([exp.Literal.string(tag)] if tag else []),
             *(canonical_text(exp.column(name), sql_type) for name, sql_type in columns)]
    return exp.MD5(this=exp.ConcatWs(expressions=[exp.Literal.string("|"), *parts],
                                     safe=True, coalesce=True))


def key_code(columns: Sequence[tuple[str, str]], *, tag: str = "key") -> exp.Expression:
    """A keyed 28-bit number of a group's keys (or of ``tag`` alone, without columns):
    the first hex digits of ``keyed_hash`` of the tag and the keys' canonical texts."""
    return hex_number(keyed_hash(columns, tag=tag), CODE_DIGITS)


def integer_unit(sql_type: str) -> bool:
    """Whether a privacy unit of this type is ordered by ``unit_order``.

    >>> integer_unit("BIGINT"), integer_unit("VARCHAR"), integer_unit("UBIGINT")
    (True, False, False)
    """
    return type_name(sql_type) in INTEGER_UNITS


SALT_CONSTANTS = tuple(f"__dp_k{i}" for i in range(6))
"""The query parameters of ``unit_order``'s keyed constants, bound beside the salt."""


def salt_constants(salt: str) -> dict[str, int]:
    """The six keyed constants of ``unit_order`` for ``salt``, by parameter name: each is
    ``key_code`` of the tag k0..k5 alone — the first ``CODE_DIGITS`` hex digits of the MD5
    of ``salt|k0`` and so on — computed here once per query, where the SQL computed them
    for every pair and carried them through its joins (docs/benchmarks.md). The SQL's
    own ``key_code`` gives the same numbers in both engines (tests/test_rewrite_portable.py,
    tests/test_spark.py).

    >>> salt_constants("s")["__dp_k0"] == int(hashlib.md5(b"s|k0").hexdigest()[:7], 16)
    True
    """
    return {name: int(hashlib.md5(f"{salt}|k{i}".encode()).hexdigest()[:CODE_DIGITS], 16)
            for i, name in enumerate(SALT_CONSTANTS)}


def salt_parameters(salt: str, read: Container[str]) -> dict[str, str | int]:
    """The parameters bound for a query that reads the parameters named in ``read``: the
    salt, and those of ``salt_constants``.

    >>> sorted(salt_parameters("s", {"__dp_salt", "__dp_k2"}))
    ['__dp_k2', '__dp_salt']
    """
    return {name: value for name, value in {SALT: salt, **salt_constants(salt)}.items()
            if name in read}


def unit_order(unit: str, code: str) -> list[tuple[str, exp.Expression]]:
    """The rank key of a (unit, group) pair with an integer unit, as steps (column name,
    expression over the columns before it); the last, ``__dp_h``, is the key.

    A keyed pseudo-random function of the unit and the group, in BIGINT arithmetic modulo
    ``PRIME`` (no product reaches 2⁶², so neither engine can overflow), computed identically
    by DuckDB and Spark and about twice as fast as an MD5 per pair. ``code`` is the group's
    ``key_code`` (one MD5 per distinct group, not per pair); the unit id is mixed by a keyed
    affine map and two rounds of squaring into the unit's own affine map of the codes,
    ``(a·code + b) mod PRIME``. The constants (the query parameters ``SALT_CONSTANTS``,
    bound as ``salt_constants`` gives them) come from the secret salt, so in each query
    every unit's choice is a fresh pseudo-random order of its own groups that depends on
    nothing but that unit's id and keys. A linear map of the id alone was not enough: with
    ids 1..N, some salts made most units choose the same few groups
    (``tests/test_rewrite_domain.py`` tests the choice for uniformity).

    >>> [name for name, _ in unit_order("u", "c")]
    ['__dp_x', '__dp_a', '__dp_b', '__dp_h']
    """
    k = [as_bigint(exp.Placeholder(this=name)) for name in SALT_CONSTANTS]
    p = number(PRIME)

    def mod(node: exp.Expression) -> exp.Expression:
        return exp.Mod(this=exp.paren(node), expression=p.copy())

    def mix(name: str, c: exp.Expression, d: exp.Expression) -> exp.Expression:
        square = mod(exp.Mul(this=exp.column(name), expression=exp.column(name)))
        return mod(exp.Add(this=exp.Mul(this=square, expression=c), expression=d))

    # BIGINT first: an INTEGER unit plus PRIME would overflow INTEGER (Spark raises).
    residue = mod(exp.Add(this=mod(as_bigint(exp.column(unit))), expression=p.copy()))
    return [("__dp_x", mod(exp.Add(this=exp.Mul(this=residue, expression=k[0]),
                                   expression=k[1]))),
            ("__dp_a", mix("__dp_x", k[2], k[3])),
            ("__dp_b", mix("__dp_a", k[4], k[5])),
            ("__dp_h", mod(exp.Add(this=exp.Mul(this=exp.column("__dp_a"),
                                                expression=exp.column(code)),
                                   expression=exp.column("__dp_b"))))]
