r"""DuckDB SQL: sqlglot's DuckDB dialect, writing dpsql's own nodes as DuckDB runs them.

The bounded query is built in DuckDB's meaning, so this dialect only spells the nodes that
no sqlglot dialect knows (``dpsql.expr.nodes``): ``HexNumber`` is a cast of ``'0x' ||
digits``, which DuckDB reads as hexadecimal, ``RoundInRange`` is DuckDB's ROUND, and a
``gathered`` SELECT's rows are unnested from one row's list of them.

>>> from dpsql.expr.nodes import gathered, hex_number
>>> hex_number(exp.MD5(this=exp.column("x")), 7).sql(DuckDBEngine)
"CAST('0x' || SUBSTRING(MD5(x), 1, 7) AS BIGINT)"
>>> sql = gathered(exp.select("k").from_("t").distinct()).sql(DuckDBEngine)
>>> print(sql.replace(" FROM (", "\nFROM ("))
SELECT UNNEST(__dp_g, max_depth := 2)
FROM (SELECT ARRAY_AGG(__dp_q) AS __dp_g
FROM (SELECT DISTINCT k FROM t) AS __dp_q) AS __dp_l
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp
from sqlglot.dialects.duckdb import DuckDB

from dpsql.expr.nodes import GATHERED, HexNumber, RoundInRange


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

        def select_sql(self, expression: exp.Select) -> str:
            """A ``gathered`` SELECT's rows as DuckDB's optimizer counts them right: one row
            holding their list (``ARRAY_AGG`` of the whole row, a STRUCT), unnested a list and
            a STRUCT deep, so that a key that is itself a STRUCT or a list stays whole."""
            if not expression.meta.get(GATHERED):
                return super().select_sql(expression)
            rows = expression.copy()
            del rows.meta[GATHERED]
            listed = exp.select(exp.alias_(exp.ArrayAgg(this=exp.column("__dp_q")), "__dp_g"))
            depth = exp.PropertyEQ(this=exp.to_identifier("max_depth"),
                                   expression=exp.Literal.number(2))
            return self.sql(exp.select(exp.Explode(this=exp.column("__dp_g"), expressions=[depth]))
                            .from_(listed.from_(rows.subquery("__dp_q")).subquery("__dp_l")))
