"""Tables as text for a terminal and as HTML for a notebook (``_repr_html_``), one layout.

>>> print(text_table(["name", "n"], [["a", "1 [0, 2]"]], "(1 row)"))
name  n
a     1 [0, 2]
(1 row)
>>> html_table(["n"], [["<1>"]], "note")
'<table><thead><tr><th>n</th></tr></thead><tbody><tr><td>&lt;1&gt;</td></tr></tbody></table><p>note</p>'
"""

from __future__ import annotations

import html


def text_table(header: list[str], rows: list[list[str]], note: str = "") -> str:
    """Columns padded to their widest cell, then ``note`` on its own line."""
    widths = [max([len(h), *(len(r[j]) for r in rows)]) for j, h in enumerate(header)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
             for r in [header, *rows]]
    return "\n".join([*lines, *([note] if note else [])])


def html_table(header: list[str], rows: list[list[str]], note: str = "") -> str:
    """An HTML table of escaped cells, then ``note`` as a paragraph."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>"
                   for row in rows)
    tail = f"<p>{html.escape(note)}</p>" if note else ""
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{tail}"
