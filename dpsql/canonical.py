"""Canonical data: frozen objects as JSON that determines them, the same in every process.

The answer cache keys a compiled query by what it releases (``CompiledQuery.release_plan``).
A hand-picked list of fields forgets the next field someone adds, and a ``repr`` may omit
fields or hold an object's address; :func:`canonical` walks every field of every dataclass
(``dataclasses.fields``), every node of a sqlglot tree, and refuses any other type it
cannot write completely.

>>> from dataclasses import dataclass
>>> @dataclass(frozen=True)
... class Shift:
...     by: Fraction
...     note: str
>>> canonical({"b": (1, 0.1), "a": Shift(Fraction(1, 3), "x")}, leave_out={("Shift", "note")})
['map', [['"a"', ['Shift', {'by': ['Fraction', 'Fraction(1, 3)']}]], ['"b"', [1, 0.1]]]]
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import json
import uuid
from collections.abc import Mapping
from decimal import Decimal
from fractions import Fraction
from typing import Any

import numpy as np
from sqlglot import exp, serde

from dpsql.errors import InternalError

POSITIONS = frozenset({"line", "col", "start", "end"})
"""sqlglot's meta keys saying where a token stood in the text it was parsed from. A tree is
run, transpiled and post-processed the same whatever they hold; only the DB-API reads them,
to bind parameters before compiling (the bound values are nodes of the tree)."""
VALUE_TYPES = (Fraction, Decimal, datetime.date, datetime.time, datetime.timedelta,
               uuid.UUID, bytes)
"""Leaf values whose repr is complete and deterministic (public key values among them)."""


def canonical(value: Any, *, leave_out: frozenset[tuple[str, str]] = frozenset()) -> Any:
    """``value`` as JSON-ready data that determines it, the same in every process.

    Dataclasses by every field but the (class name, field) pairs in ``leave_out``, sqlglot
    trees node by node (:func:`_tree`), floats exactly (JSON writes their shortest exact
    repr), mappings and sets sorted. A type it cannot write completely is an InternalError.
    """
    if value is None or type(value) in (bool, int, float, str):
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        name = type(value).__qualname__
        return [name, {f.name: canonical(getattr(value, f.name), leave_out=leave_out)
                       for f in dataclasses.fields(value) if (name, f.name) not in leave_out}]
    if isinstance(value, exp.Expr):
        return ["tree", _tree(serde.dump(value))]
    if isinstance(value, Mapping):
        entries = {text(canonical(k, leave_out=leave_out)): canonical(v, leave_out=leave_out)
                   for k, v in value.items()}
        return ["map", [[k, entries[k]] for k in sorted(entries)]]
    if isinstance(value, tuple | list):
        return [canonical(v, leave_out=leave_out) for v in value]
    if isinstance(value, set | frozenset):
        return ["set", sorted(text(canonical(v, leave_out=leave_out)) for v in value)]
    return _leaf(value)


def text(data: Any) -> str:
    """Canonical data as one JSON string."""
    return json.dumps(data, allow_nan=True)


def _leaf(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        return [type(value).__qualname__, value.name]
    if isinstance(value, np.ndarray):
        return ["ndarray", str(value.dtype), list(value.shape), canonical(value.tolist())]
    if isinstance(value, np.generic):
        return canonical(value.item())
    if isinstance(value, VALUE_TYPES):
        return [type(value).__qualname__, repr(value)]
    raise InternalError(f"dpsql.canonical cannot write a {type(value).__qualname__} "
                        "completely: give it a complete, deterministic form there")


def _tree(payloads: list[dict[str, Any]]) -> list[Any]:
    """A sqlglot tree as sqlglot's own serialisation (``serde.dump``: every node's class,
    arguments, type, comments and meta), less the meta that only says where a token was
    typed (POSITIONS). A payload's keys come in a fixed order and hold JSON values but a
    node's type (a tree of its own), its leaf value and its meta."""
    out = []
    for payload in payloads:
        meta = {k: v for k, v in payload.get(serde.META, {}).items() if k not in POSITIONS}
        node = {k: _tree(v) if k == serde.TYPE else canonical(v) if k == serde.VALUE else v
                for k, v in payload.items() if k != serde.META}
        out.append([node, canonical(meta)] if meta else node)
    return out
