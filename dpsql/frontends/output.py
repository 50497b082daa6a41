"""A released Result as text for the command line: table, markdown, csv or json.

Every format shows the noisy values and their 95% confidence intervals (which
cost no budget). ``table`` and ``markdown`` are for people and end with a note
giving the row count, the cost and the budget left, and what the answer may have cut
(``Result.notes``); ``csv`` and ``json`` are for programs and hold exactly the columns of
``Result.ci(0.95)``: each aggregate ``col`` followed later by ``col_lower`` and
``col_upper`` (their notes are ``side_notes``, which the command line writes to stderr; the
cost and what is left go there too when it is a terminal: ``side_note``).

>>> import dpsql, pyarrow as pa
>>> con = dpsql.connect(budget=dpsql.Budget(epsilon=1.0), seed=3)
>>> con.register("t", pa.table({"pid": [1, 2, 3], "k": ["a", "b", "a"]}), privacy_unit="pid",
...              public_keys={"k": ["a", "b"]})
>>> res = con.sql("SELECT k, COUNT(*) AS n FROM t GROUP BY k ORDER BY k", epsilon=0.5)
>>> print(render(res, "markdown"))
| k | n | n 95% CI |
| --- | --: | --- |
| a | ... | [..., ...] |
| b | ... | [..., ...] |
<BLANKLINE>
_2 rows; cost ε=0.5, δ=0; budget left ε=0.5, δ=0; SEEDED, NOT PRIVATE_
bounded by default limits (max_rows_per_group=1, max_groups_per_unit=1): declare them in the \
table's [tables.NAME] entry of the catalog (docs/catalog.md)
>>> render(res, "csv").splitlines()[0]
'"k","n","n_lower","n_upper"'
"""

from __future__ import annotations

import io
import json
from typing import TYPE_CHECKING

from dpsql.result import format_value, shown_text, spending

if TYPE_CHECKING:
    from dpsql.result import Result

FORMATS = ("table", "markdown", "csv", "json")
"""The output formats, in the order ``--help`` lists them."""
LEVEL = 0.95
DECLARE_IN_CATALOG = "declare them in the table's [tables.NAME] entry of the catalog " \
    "(docs/catalog.md)"
"""The remedy for default limits, in the command line's words (``Result.notes``)."""


def render(result: Result, fmt: str) -> str:
    """``result`` in format ``fmt`` (one of FORMATS), without a trailing newline."""
    if fmt == "table":
        return shown_text(result, DECLARE_IN_CATALOG)
    if fmt == "markdown":
        return markdown(result)
    if fmt == "csv":
        import pyarrow.csv as pacsv

        buffer = io.BytesIO()
        pacsv.write_csv(result.ci(LEVEL), buffer)
        return buffer.getvalue().decode().rstrip("\n")
    if fmt == "json":
        return json.dumps(result.ci(LEVEL).to_pylist(), default=str)
    raise ValueError(f"unknown format {fmt!r}: choose one of {', '.join(FORMATS)}")


def side_note(result: Result, fmt: str) -> str | None:
    """The line a format that is pure data (csv, json) leaves out, for standard error on a
    terminal (a pipeline's stderr stays quiet): what the answer cost and what is left (None:
    ``fmt`` shows it under the table).

    >>> import dpsql, pyarrow as pa
    >>> con = dpsql.connect(budget=dpsql.Budget(epsilon=1.0))
    >>> con.register("t", pa.table({"pid": [1, 2]}), privacy_unit="pid")
    >>> res = con.sql("SELECT COUNT(*) AS n FROM t", epsilon=0.5)
    >>> side_note(res, "csv"), side_note(res, "table")
    ('-- cost ε=0.5, δ=0; budget left ε=0.5, δ=0', None)
    """
    if fmt not in ("csv", "json"):
        return None
    private = "" if result.private else "; SEEDED, NOT PRIVATE"
    return f"-- {spending(result)}{private}"


def markdown(result: Result) -> str:
    """A GitHub-flavoured Markdown table: every aggregate gets a ``95% CI`` column after it."""
    bounds = result.ci(LEVEL)
    header: list[str] = []
    align: list[str] = []
    for col in result.plan.columns:
        header.append(col.name)
        if col.aggregate is None:
            align.append("---")
        else:
            header.append(f"{col.name} {LEVEL:.0%} CI")
            align += ["--:", "---"]
    lines = [_row(header), _row(align)]
    for i in range(bounds.num_rows):
        cells = []
        for col in result.plan.columns:
            cells.append(format_value(bounds.column(col.name)[i].as_py()))
            if col.aggregate is not None:
                lo = bounds.column(f"{col.name}_lower")[i].as_py()
                hi = bounds.column(f"{col.name}_upper")[i].as_py()
                cells.append("" if lo is None else f"[{format_value(lo)}, {format_value(hi)}]")
        lines.append(_row(cells))
    private = "" if result.private else "; SEEDED, NOT PRIVATE"
    lines += ["", f"_{bounds.num_rows} rows; {spending(result)}{private}_"]
    lines += list(result.notes(DECLARE_IN_CATALOG))
    return "\n".join(lines)


def side_notes(result: Result, fmt: str) -> tuple[str, ...]:
    """What the answer may have cut (``Result.notes``), for formats whose output holds only
    data (csv, json): the command line writes them to stderr, as ``note: ...`` lines."""
    return result.notes(DECLARE_IN_CATALOG) if fmt in ("csv", "json") else ()


def _row(cells: list[str]) -> str:
    """One Markdown table row; a ``|`` or a line break inside a value cannot end the cell."""
    escaped = (c.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ") for c in cells)
    return "| " + " | ".join(escaped) + " |"
