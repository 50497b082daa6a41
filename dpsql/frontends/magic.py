"""Notebook magics: ``%%dpsql`` and ``%dpsql`` run private SQL from IPython/Jupyter.

``%load_ext dpsql.frontends.magic`` registers them. The cell magic takes options and an
optional variable name on its first line, the SQL in its body; the line magic
takes options, then the SQL to the end of the line::

    %%dpsql --epsilon 0.5 res
    SELECT sex, COUNT(*) AS n FROM pums GROUP BY sex

    %dpsql --epsilon 0.2 SELECT AVG(age) AS mean_age FROM pums

The connection is ``--connection NAME`` from the user namespace, or else the
newest :class:`dpsql.Connection` there (see :meth:`DpsqlMagic.connection`).
dpsql errors come back as a short red message; anything else raises. IPython is
imported only when the extension loads, so this module imports without it.

>>> parse_options("--epsilon 0.5 --connection=con res")
(Options(epsilon=0.5, delta=None, connection='con'), 'res')
"""

from __future__ import annotations

import html
import itertools
import keyword
import math
import re
import weakref
from dataclasses import dataclass
from typing import Any

from dpsql.accounting.values import Left
from dpsql.connection import Connection
from dpsql.errors import Error, InternalError
from dpsql.result import Result, format_value

MAX_ROWS = 50
LEVEL = 0.95
OPTIONS = ("epsilon", "delta", "connection")
_OPTION = re.compile(r"--(?P<name>[\w-]+)(?:=|\s+)(?P<value>\S+)\s*")


@dataclass(frozen=True)
class Options:
    """What the magic line asked for; None means the connection's default."""

    epsilon: float | None = None
    delta: float | None = None
    connection: str | None = None


def parse_options(line: str) -> tuple[Options, str]:
    """Split leading ``--epsilon/--delta/--connection`` options from the rest of ``line``.

    The rest is returned verbatim (no shell-style unquoting: it may be SQL).

    >>> parse_options("--delta 1e-7 SELECT COUNT(*) FROM t WHERE x > -1")
    (Options(epsilon=None, delta=1e-07, connection=None), 'SELECT COUNT(*) FROM t WHERE x > -1')
    """
    values: dict[str, Any] = {}
    rest = line.strip()
    while rest.startswith("--") and not rest[2:3].isspace():
        match = _OPTION.match(rest)
        name = match["name"] if match else rest.split()[0].lstrip("-").split("=")[0]
        if name not in OPTIONS:
            raise _usage_error(f"unknown option --{name}: use --epsilon E, --delta D or "
                               "--connection NAME, e.g. %%dpsql --epsilon 0.5 res")
        if match is None:
            raise _usage_error(f"--{name} needs a value, e.g. --{name} "
                               + ("con" if name == "connection" else "0.5"))
        values[name] = match["value"] if name == "connection" else _number(name, match["value"])
        rest = rest[match.end():]
    return Options(**values), rest


def _number(name: str, text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise _usage_error(f"--{name} {text}: not a number, e.g. --{name} 0.5") from None


def _usage_error(message: str) -> Exception:
    """IPython shows a UsageError as one line, without a traceback."""
    from IPython.core.error import UsageError

    return UsageError(message)


class DpsqlMagic:
    """The ``dpsql`` line/cell magic of one IPython shell."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self._first_seen: weakref.WeakKeyDictionary[Connection, int] = \
            weakref.WeakKeyDictionary()
        self._clock = itertools.count()
        self.notice_connections()

    def __call__(self, line: str, cell: str | None = None) -> ResultView | ErrorView:
        options, rest = parse_options(line)
        query, target = (rest, None) if cell is None else (cell, _target(rest))
        if not query.strip():
            raise _usage_error("no SQL: %dpsql SELECT ... or a %%dpsql cell with the query")
        con = self.connection(options.connection)
        try:
            result = con.sql(query, epsilon=options.epsilon, delta=options.delta)
        except InternalError:
            raise
        except Error as error:
            return ErrorView(error)
        if target is not None:
            self.shell.user_ns[target] = result
        return ResultView(result, con.left())

    def notice_connections(self, *_: Any) -> None:
        """Date every Connection in the namespace the first time it is seen (post_run_cell)."""
        for value in self.shell.user_ns.values():
            if isinstance(value, Connection) and value not in self._first_seen:
                self._first_seen[value] = next(self._clock)

    def connection(self, name: str | None) -> Connection:
        """``name`` from the user namespace, or the newest Connection bound to a public name.

        Newest = first seen last: connections are noticed after every cell and when the
        magic runs; those noticed together are ordered by when their names were first bound.
        """
        namespace = self.shell.user_ns
        if name is not None:
            if not isinstance(namespace.get(name), Connection):
                raise _usage_error(f"--connection {name}: no dpsql.Connection named {name!r} "
                                   "in the namespace; create one with con = dpsql.connect(...)")
            return namespace[name]
        self.notice_connections()
        found = [v for k, v in namespace.items()
                 if isinstance(v, Connection) and not k.startswith("_")]
        if not found:
            raise _usage_error("no dpsql.Connection in the namespace: create one with "
                               "con = dpsql.connect(...) or pass --connection NAME")
        return max(found, key=self._first_seen.__getitem__)


def _target(rest: str) -> str | None:
    if not rest:
        return None
    if not rest.isidentifier() or keyword.iskeyword(rest):
        raise _usage_error(f"{rest!r}: after the options, %%dpsql takes one variable name "
                           "to store the Result in, e.g. %%dpsql --epsilon 0.5 res")
    return rest


@dataclass(frozen=True)
class Cell:
    """One shown value; for an aggregate, ``value ± h`` with its exact CI as a tooltip.

    ``h`` is the CI's half-width when the CI is centred on the value; when it is not (an
    AVG's interval clipped to the column's bounds) a ``±`` would mislead, and the cell reads
    ``value [lower, upper]``.

    >>> Cell.of(10.0, 8.0, 12.0).text, Cell.of(0.0, 0.0, 2.5).text, Cell.of("a").text
    ('10 ± 2', '0 [0, 2.5]', 'a')
    """

    text: str
    interval: str | None = None

    @classmethod
    def of(cls, value: Any, lower: float | None = None, upper: float | None = None) -> Cell:
        if value is None or lower is None or upper is None:
            return cls(format_value(value))
        below, above = float(value) - lower, upper - float(value)
        interval = f"[{format_value(lower)}, {format_value(upper)}]"
        if not math.isclose(below, above, rel_tol=1e-9, abs_tol=1e-12):
            return cls(f"{format_value(value)} {interval}", f"{LEVEL:.0%} CI {interval}")
        return cls(f"{format_value(value)} ± {format_value(above)}", f"{LEVEL:.0%} CI {interval}")

    def html(self) -> str:
        title = "" if self.interval is None else f' title="{html.escape(self.interval)}"'
        return f"<td{title}>{html.escape(self.text)}</td>"


@dataclass(frozen=True)
class ResultView:
    """A Result as a notebook shows it: ``value ± 95% half-width``, cost and budget left."""

    result: Result
    remaining: Left

    def rows(self) -> list[list[Cell]]:
        """The first MAX_ROWS rows; an aggregate's cell reads ``value ± h`` (see Cell)."""
        columns = self.result.plan.columns
        table = self.result.ci(LEVEL).slice(0, MAX_ROWS)
        values = [c.to_pylist() for c in table.columns]
        # ci() appends <col>_lower, <col>_upper per aggregate column, in column order;
        # read them by position so a column named e.g. "n_lower" cannot clash.
        aggregates = [i for i, c in enumerate(columns) if c.aggregate is not None]
        at = {i: len(columns) + 2 * k for k, i in enumerate(aggregates)}
        rows = []
        for r in range(table.num_rows):
            rows.append([Cell.of(values[i][r], values[at[i]][r], values[at[i] + 1][r])
                         if i in at else Cell.of(values[i][r]) for i in range(len(columns))])
        return rows

    def footer(self) -> str:
        result = self.result
        rows = f"{len(result)} row" + ("" if len(result) == 1 else "s")
        seeded = "" if result.private else " · SEEDED, NOT PRIVATE"
        return (f"{rows} · ± and [lower, upper] are the {LEVEL:.0%} CI · cost {result.cost}"
                f" · budget left {self.remaining}{seeded}")

    def _repr_html_(self) -> str:
        header = "".join(f"<th>{html.escape(c.name)}</th>"
                         for c in self.result.plan.columns)
        body = "".join("<tr>" + "".join(cell.html() for cell in row) + "</tr>"
                       for row in self.rows())
        more = len(self.result) - MAX_ROWS
        tail = f"<p>… {more} more rows</p>" if more > 0 else ""
        return (f'<table class="dpsql-result"><thead><tr>{header}</tr></thead>'
                f"<tbody>{body}</tbody></table>{tail}"
                f"<p><small>{html.escape(self.footer())}</small></p>"
                + "".join(f"<p><small>{html.escape(note)}</small></p>"
                          for note in self.result.notes()))

    def __repr__(self) -> str:
        return repr(self.result)  # its note ends with the cost and the budget left


@dataclass(frozen=True)
class ErrorView:
    """A dpsql error as one red message (dpsql messages say what to fix; no traceback)."""

    error: Error

    def __str__(self) -> str:
        return f"{type(self.error).__name__}: {self.error}"

    def _repr_html_(self) -> str:
        return (f'<pre class="dpsql-error" style="color: #b00020; white-space: pre-wrap">'
                f"{html.escape(str(self))}</pre>")

    def __repr__(self) -> str:
        return str(self)


def load_ipython_extension(ipython: Any) -> None:
    """Register ``%dpsql``/``%%dpsql`` on ``ipython`` (``%load_ext dpsql.frontends.magic``)."""
    magic = DpsqlMagic(ipython)
    ipython.register_magic_function(magic, magic_kind="line_cell", magic_name="dpsql")
    ipython.events.register("post_run_cell", magic.notice_connections)
