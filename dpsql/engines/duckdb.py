"""DuckDB SQL: sqlglot's DuckDB dialect, writing dpsql's own nodes as DuckDB runs them.

The bounded query is built in DuckDB's meaning, so this dialect only spells the nodes that
no sqlglot dialect knows (``dpsql.expr.nodes``): ``HexNumber`` is a cast of ``'0x' ||
digits``, which DuckDB reads as hexadecimal, and ``RoundInRange`` is DuckDB's ROUND.

>>> from dpsql.expr.nodes import hex_number
>>> hex_number(exp.MD5(this=exp.column("x")), 7).sql(DuckDBEngine)
"CAST('0x' || SUBSTRING(MD5(x), 1, 7) AS BIGINT)"
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp
from sqlglot.dialects.duckdb import DuckDB

from dpsql.expr.nodes import HexNumber, RoundInRange


def _hex_number(self: Any, node: HexNumber) -> str:
    digits = exp.Substring(this=node.this.copy(), start=exp.Literal.number(1),
                           length=node.args["digits"].copy())
    return self.sql(exp.Cast(this=exp.DPipe(this=exp.Literal.string("0x"), expression=digits),
                             to=exp.DataType.build("BIGINT")))


class DuckDBEngine(DuckDB):
    """DuckDB SQL with dpsql's nodes (the module's cases)."""

    class Generator(DuckDB.Generator):
        TRANSFORMS = {  # noqa: RUF012 — sqlglot's own convention for dialect tables
            **DuckDB.Generator.TRANSFORMS,
            HexNumber: _hex_number,
            RoundInRange: lambda self, node: self.round_sql(node),
        }
