"""The reserved namespace: names dpsql invents, and why nobody else may write them.

The rewrite adds columns and relations of its own (the privacy unit carried through a
subquery, join columns, per-unit partials, ranks, the noisy table). If an analyst could
write one of those names, their column would be bound in its place — the privacy unit
replaced by a column of their choosing, a contribution bound computed per visit instead
of per person. So every name dpsql generates starts with ``__dp_``, and no identifier in
a query or in the catalog (tables, columns, privacy units) may start with ``__dp``, in any
letter case. Generated names are then unique against every name the analyst or the data
owner can write; among themselves each generator numbers its names or uses a fixed name
once per scope (``tests/test_names.py`` checks every rewritten query of the grammar corpus).

>>> is_reserved("__DP_unit_of"), is_reserved("dp_unit"), is_reserved("__dpx")
(True, False, True)
>>> check_identifier("visit_id", "column")
>>> check_identifier("__dp_unit_of", "alias")
Traceback (most recent call last):
...
dpsql.errors.UnsupportedQueryError: alias `__dp_unit_of`: names starting with __dp are ...
"""

from __future__ import annotations

import re

from sqlglot import exp

from dpsql.errors import UnsupportedQueryError

RESERVED_PREFIX = "__dp"
"""Identifiers starting with this (case-insensitive) belong to dpsql."""


def is_reserved(name: str) -> bool:
    """True for names in dpsql's namespace (``__dp...``, any letter case)."""
    return name.lower().startswith(RESERVED_PREFIX)


def reserved_message(name: str, what: str) -> str:
    return (f"{what} `{name}`: names starting with {RESERVED_PREFIX} are reserved for the "
            "columns and tables dpsql generates; rename it (e.g. "
            f"{name.lstrip('_') or 'x'})")


def written_name(name: str) -> str:
    """The name the analyst wrote for a column the join analysis renamed because several
    tables have it (``__dp_j<side>_<column>``); any other name as it is. For messages.

    >>> written_name("__dp_j0_patient_id"), written_name("age")
    ('patient_id', 'age')
    """
    match = re.fullmatch(r"__dp_j\d+_(.+)", name)
    return match.group(1) if match else name


def check_identifier(name: str, what: str) -> None:
    """Refuse ``name`` if it is in the reserved namespace."""
    if is_reserved(name):
        raise UnsupportedQueryError(reserved_message(name, what))


def check_query_names(tree: exp.Expression) -> None:
    """Refuse a query that writes any identifier in the reserved namespace.

    Every name an analyst can write is an ``Identifier`` in sqlglot's tree: columns and
    their qualifiers, tables, aliases, CTE names, column alias lists, ``EXCLUDE`` lists and
    the values of ``OPTIONS(privacy_unit_column = ...)``.

    >>> import sqlglot
    >>> check_query_names(sqlglot.parse_one("SELECT COUNT(*) FROM t AS x(a, __Dp_b)"))
    Traceback (most recent call last):
    ...
    dpsql.errors.UnsupportedQueryError: identifier `__Dp_b`: names starting with __dp ...
    """
    for node in tree.find_all(exp.Identifier):
        check_identifier(node.name, "identifier")
