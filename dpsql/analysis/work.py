"""The analysis pass that bounds what one row costs (``dpsql.expr.size`` holds the rule).

Every row expression of the query — WHERE, the aggregates' arguments and the quantiles'
values here, the subqueries', joins' and GROUP BY expressions' inside the source
(``Draft.relation_work``) — is measured, and each text column that dpsql reads is cut to
its width (``PrivacyPlan.reads``, applied by ``dpsql.rewrite.widths``). The query is
refused, before any data is read, if one row could cost more than the data owner's
``WorkLimits.max_row_work`` steps.

>>> from dpsql.catalog import Catalog, TableInfo
>>> from dpsql.analysis import analyze
>>> cat = Catalog()
>>> _ = cat.add(TableInfo.private("t", columns={"pid": "INT", "name": "VARCHAR"},
...                               privacy_unit="pid", max_text_length={"name": 100}))
>>> plan = analyze("SELECT COUNT(*) FROM t WHERE lower(name) LIKE '%ann%'", cat, epsilon=1.0)
>>> plan.row_work, [str(read) for read in plan.reads]
(2202, ['t: name ≤ 100 characters'])
>>> deep = "name"
>>> for _ in range(3):
...     deep = f"replace({deep}, 'a', 'aaaaaaaaaa')"
>>> analyze(f"SELECT COUNT(*) FROM t WHERE length({deep}) > 0", cat, epsilon=1.0)
Traceback (most recent call last):
...
dpsql.errors.UnsupportedQueryError: `REPLACE(REPLACE(REPLACE(name, 'a', 'aaaaaaaaaa'), ...
"""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from dpsql.analysis.draft import Context, Draft
from dpsql.analysis.grammar import fragment
from dpsql.catalog import Catalog, text_width
from dpsql.errors import UnsupportedQueryError
from dpsql.expr.size import PRINTED, Measure, measure
from dpsql.plan import TableRead

KEY_READS = 2
"""Times the bounded query reads each group key's text per row (its keyed hash and its
grouping), besides the expressions that compute it."""


def check_row_work(draft: Draft, ctx: Context) -> Draft:
    """Measure the query's row expressions; refuse it if one row may cost too much."""
    limits = ctx.catalog.limits
    types = draft.table.columns
    parts = [("WHERE", draft.where)] + [(spec.name, spec.expr) for spec in draft.stats] + [
        (a.name, a.quantile.histogram.expr) for a in draft.aggregates if a.quantile]
    costs = [(label, node, _work(measure(node, types, limits))) for label, node in parts
             if node is not None]
    keys = sum(KEY_READS * _key_size(types.get(key.column, "")) for key in draft.keys)
    total = draft.relation_work + keys + sum(work for _, _, work in costs)
    if total > limits.max_row_work:
        _too_costly(total, max(costs, key=lambda c: c[2], default=None), limits.max_row_work)
    read = {c.name.lower() for _, node, _ in costs for c in node.find_all(exp.Column)}
    return replace(draft, row_work=total, reads=_reads(draft, ctx.catalog, read))


def _work(measured: Measure) -> int:
    """An expression's steps, and the aggregate's (or WHERE's) read of its value: a text
    value is hashed or compared whole (COUNT(DISTINCT lower(s)))."""
    return measured.work + ((measured.size or 0) if measured.text else 0)


def _key_size(sql_type: str) -> int:
    return text_width(sql_type) or PRINTED


def _reads(draft: Draft, catalog: Catalog, read: set[str]) -> tuple[TableRead, ...]:
    """How each table the query reads is read: its text columns cut to their widths.

    A query over one table cuts the columns its row expressions read (``read``: those
    WHERE and the aggregates name); a group key no expression reads is left whole: the
    bounded query reads its text a fixed number of times (``KEY_READS``: its keyed hash
    and its grouping), as any scan of the row reads it, and no analyst can make that more,
    while cutting it costs a pass over every row (13% of a COUNT(DISTINCT) by a text key at
    10M rows). A query over subqueries or joins cuts every text column it may read.
    """
    found = []
    for name in draft.tables or (draft.table.name,):
        info = catalog.get(name)
        cut = tuple((c, w) for c, t in info.columns.items()
                    if (w := text_width(t)) is not None and c != info.privacy_unit
                    and (draft.relation is not None or c in read))
        if cut:
            found.append(TableRead(info.name, tuple(info.columns), cut))
    return tuple(found)


def _too_costly(total: int, worst: tuple[str, exp.Expression, int] | None, cap: int) -> None:
    costliest = "" if worst is None else (
        f"; the costliest is `{fragment(worst[1], limit=120)}` ({worst[2]:,} steps)")
    raise UnsupportedQueryError(
        f"the query's row expressions may take up to {total:,} steps on one row{costliest}. "
        f"dpsql allows {cap:,} (max_row_work), so that no row can take much longer than "
        "another and give away what it holds. Each text function reads and writes its text "
        "(a LIKE pattern with k wildcards % before its end costs text^k), so: cut texts with "
        "LEFT(..., n) before searching them, use fewer wildcards or text functions, or ask "
        "the data owner to declare a smaller max_text_length for the columns")
