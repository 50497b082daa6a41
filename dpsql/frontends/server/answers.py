"""What a statement returns (:class:`Answer`), and the answers about the analyst's own
budget (``SHOW dpsql.budget``) and the public catalog (``SHOW dpsql.catalog``).

>>> import pyarrow as pa
>>> answer = Answer.of_table(pa.table({"n": [3]}))
>>> [(c.name, c.type.name) for c in answer.columns], answer.rows, answer.tag
([('n', 'int8')], [(3,)], 'SELECT 1')
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import pyarrow as pa

from dpsql.accounting.ledger import Ledger
from dpsql.accounting.values import Cost
from dpsql.catalog import TableInfo
from dpsql.frontends.server.types import TYPES, PgType, pg_type

NOTHING = Cost(0.0, 0.0)
TEXT = TYPES["text"]
FLOAT8 = TYPES["float8"]


@dataclass(frozen=True)
class Column:
    name: str
    type: PgType


@dataclass(frozen=True)
class Answer:
    """What one statement returns: columns (None: no result set), rows, the command tag."""

    columns: tuple[Column, ...] | None
    rows: list[tuple] = field(default_factory=list)
    tag: str = ""
    charged: Cost = NOTHING
    notices: tuple[str, ...] = ()
    """Sent as NOTICEs before the command completes (psql prints them on stderr)."""

    @classmethod
    def of_table(cls, table: pa.Table, tag: str = "SELECT", charged: Cost = NOTHING,
                 notices: tuple[str, ...] = ()) -> Answer:
        columns = tuple(Column(f.name, pg_type(f.type)) for f in table.schema)
        names = table.column_names
        rows = [tuple(row[n] for n in names) for row in table.to_pylist()] if len(
            set(names)) == len(names) else list(zip(*(c.to_pylist() for c in table.columns),
                                                     strict=True))
        return cls(columns, rows, f"{tag} {len(rows)}" if tag == "SELECT" else tag, charged,
                   notices)

    @classmethod
    def of_text(cls, name: str, lines: Sequence[str], tag: str) -> Answer:
        return cls((Column(name, TEXT),), [(line,) for line in lines], tag)


BUDGET_COLUMNS = ("epsilon_total", "epsilon_spent", "epsilon_remaining", "delta_total",
                  "delta_spent", "delta_remaining", "rho_total", "rho_spent", "rho_remaining")


def budget(ledger: Ledger) -> Answer:
    """The analyst's budget, spend and what is left, one row.

    An (ε, δ) budget fills the ε and δ columns (ρ: NULL); a ρ-zCDP budget fills ρ and δ,
    with ε spent as the sum of the ε's charged (its total and remainder: NULL).
    """
    total, spent, left = ledger.total, ledger.spent, ledger.remaining
    rho = (None, None, None)
    if total.rho is not None:
        used = ledger.rho_spent
        rho = (total.rho, used, max(total.rho - used, 0.0))
    row = (total.epsilon, spent.epsilon, _number(left.epsilon), total.delta, spent.delta,
           left.delta, *rho)
    return Answer(tuple(Column(n, FLOAT8) for n in BUDGET_COLUMNS), [row], "SHOW")


def _number(value: float) -> float | None:
    return None if math.isnan(value) else value


CATALOG_COLUMNS = (("table_name", TEXT), ("column_name", TEXT), ("data_type", TEXT),
                   ("kind", TEXT), ("lower_bound", FLOAT8), ("upper_bound", FLOAT8),
                   ("public_keys", TEXT))


def catalog(tables: Iterable[TableInfo]) -> Answer:
    """Every table and column with its type, role, declared bounds and public keys."""
    rows = [_catalog_row(info, column, kind)
            for info in tables for column, kind in info.columns.items()]
    return Answer(tuple(Column(n, t) for n, t in CATALOG_COLUMNS), rows, "SHOW")


def _catalog_row(info: TableInfo, column: str, kind: str) -> tuple:
    bounds = info.bounds.get(column)
    keys = info.public_keys.get(column)
    role = "public table" if info.public else (
        "privacy unit" if column == info.privacy_unit else "private")
    return (info.name, column, kind, role, None if bounds is None else float(bounds[0]),
            None if bounds is None else float(bounds[1]),
            None if keys is None else (keys if isinstance(keys, str) else
                                       ", ".join(map(str, keys))))
