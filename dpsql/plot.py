"""``Result.plot()``: noisy answers as bars, each with its confidence interval as an error bar.

Which bars:

- a grouped query draws one bar per released group, labelled by its group keys (every
  output column not computed from an aggregate, joined with ", "; or the column ``x``),
  for one value column ``y`` (default: the first numeric column computed from an aggregate);
- a global query (no group keys) draws one bar per numeric aggregate column (or just ``y``).

Error bars span the cell's ``level`` interval from :meth:`Result.ci` exactly, so they
need not be symmetric (an AVG's interval is clipped to the column's bounds). Columns with
no interval (arithmetic over aggregates, quantiles) get bars without error bars. Plotting
is post-processing of released values: it reads no data and spends no budget.

matplotlib is imported only when a plot is drawn (``pip install 'dpsql[plot]'``).

>>> import dpsql, pyarrow as pa
>>> con = dpsql.connect(budget=dpsql.Budget(epsilon=1.0), seed=0)
>>> con.register("t", pa.table({"pid": [1, 2, 3], "k": ["a", "b", "a"]}), privacy_unit="pid",
...              public_keys={"k": ["a", "b"]})
>>> chart = bars(con.sql("SELECT k, COUNT(*) AS n FROM t GROUP BY k"))
>>> chart.labels, chart.title
(['a', 'b'], 'n by k, 95% CI (noise only) · SEEDED, NOT PRIVATE')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import pyarrow as pa
from sqlglot import exp

from dpsql.errors import MissingDependencyError, ProgrammingError

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from dpsql.plan import PrivacyPlan


class Released(Protocol):
    """What a chart reads of a released table (``dpsql.result.Result``, which draws itself
    with :func:`plot`): its cells, its plan, its intervals, and whether it is private."""

    table: pa.Table
    plan: PrivacyPlan
    private: bool

    def ci(self, level: float = 0.95) -> pa.Table: ...

    def __len__(self) -> int: ...


@dataclass(frozen=True)
class Bars:
    """What a bar chart of a Result shows: heights, interval ends (NaN: none) and labels."""

    labels: list[str]
    heights: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    xlabel: str
    ylabel: str
    title: str

    def draw(self, ax: Axes, **bar_options: Any) -> Axes:
        positions = np.arange(len(self.labels))
        below = self.heights - self.lower
        above = self.upper - self.heights
        bar_options.setdefault("capsize", 4)
        ax.bar(positions, self.heights, yerr=np.stack([below, above]), **bar_options)
        ax.set_xticks(positions, self.labels)
        ax.set_xlabel(self.xlabel)
        ax.set_ylabel(self.ylabel)
        ax.set_title(self.title)
        return ax


def bars(result: Released, y: str | None = None, *, x: str | None = None,
         level: float = 0.95) -> Bars:
    """The bars :func:`plot` draws for ``result`` (see the module docstring)."""
    columns = [c.name for c in result.plan.columns]
    values = _value_columns(result)
    _check(result, columns, values, y=y, x=x)
    bounds = _intervals(result, level)
    title = _title(result, level)
    keys = [x] if x is not None else [c for c in columns if not _uses_aggregates(result, c)]
    if not keys and len(result) == 1:  # a global query: one bar per value column
        shown = [y] if y is not None else values
        return Bars(labels=shown, heights=np.array([_column(result, c)[0] for c in shown]),
                    lower=np.array([bounds[c][0][0] for c in shown]),
                    upper=np.array([bounds[c][1][0] for c in shown]),
                    xlabel="", ylabel="value", title=title)
    y = y or values[0]
    if keys:
        labels = [", ".join(map(str, row)) for row in zip(
            *(result.table.column(k).to_pylist() for k in keys), strict=True)]
    else:  # grouped by keys that are not selected: the rows are all there is to go by
        keys, labels = ["row"], [str(i + 1) for i in range(len(result))]
    lower, upper = bounds[y]
    return Bars(labels=labels, heights=_column(result, y), lower=lower, upper=upper,
                xlabel=", ".join(keys), ylabel=y, title=f"{y} by {', '.join(keys)}, {title}")


def plot(result: Released, y: str | None = None, *, x: str | None = None,
         level: float = 0.95, ax: Axes | None = None, **bar_options: Any) -> Axes:
    """Draw ``result`` as bars with ``level`` confidence intervals; return the Axes."""
    chart = bars(result, y, x=x, level=level)
    if ax is None:
        try:
            import matplotlib.pyplot as plt
        except ImportError:
            raise MissingDependencyError("Result.plot() needs matplotlib: pip install "
                                         "'dpsql[plot]'") from None
        _, ax = plt.subplots()
    return chart.draw(ax, **bar_options)


def _check(result: Released, columns: list[str], values: list[str], *, y: str | None,
           x: str | None) -> None:
    """Refuse, saying why, when there is nothing to plot or ``y``/``x`` name no fit column."""
    if not values:
        raise ProgrammingError(f"nothing to plot: no numeric column is computed from an aggregate "
                         f"(columns: {', '.join(columns)}); add one, e.g. COUNT(*) AS n")
    if len(result) == 0:
        raise ProgrammingError("nothing to plot: the result has no rows (no group was released, "
                         "or HAVING/LIMIT removed them all)")
    for name, wanted in (("y", y), ("x", x)):
        if wanted is not None and wanted not in columns:
            raise ProgrammingError(f"{name}={wanted!r} is not a column of the result; columns: "
                             + ", ".join(columns))
    if y is not None and y not in values:
        raise ProgrammingError(f"y={y!r} is not a numeric column computed from an aggregate; "
                         "choose one of: " + ", ".join(values))


def _value_columns(result: Released) -> list[str]:
    """Numeric output columns computed from aggregates, in output order."""
    schema = result.table.schema
    return [c.name for c in result.plan.columns
            if _uses_aggregates(result, c.name) and _numeric(schema.field(c.name).type)]


def _numeric(kind: pa.DataType) -> bool:
    return pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_decimal(kind)


def _uses_aggregates(result: Released, name: str) -> bool:
    """Whether output column ``name`` is (arithmetic over) an aggregate, not a key or constant."""
    plan = result.plan
    index = [c.name for c in plan.columns].index(name)
    if plan.columns[index].aggregate is not None:
        return True
    released = {a.name for a in plan.aggregates}
    expression = plan.output.expressions[index]
    return any(c.name in released for c in expression.find_all(exp.Column))


def _intervals(result: Released, level: float) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each value column's interval ends; NaN where there is none (see Result.ci).

    ci() appends ``<col>_lower, <col>_upper`` per bare aggregate, in column order: they
    are read by position, so a column named e.g. ``n_lower`` cannot be mistaken for one.
    """
    table = result.ci(level)
    columns = result.plan.columns
    found: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    at = len(columns)
    for col in columns:
        if col.aggregate is None:
            missing = np.full(len(result), np.nan)
            found[col.name] = (missing, missing)
            continue
        found[col.name] = (_floats_of(table.column(at)), _floats_of(table.column(at + 1)))
        at += 2
    return found


def _column(result: Released, name: str) -> np.ndarray:
    return _floats_of(result.table.column(name))


def _floats_of(column: pa.ChunkedArray) -> np.ndarray:
    """Values as float64, NULL as NaN (matplotlib draws nothing for NaN)."""
    return np.array([np.nan if v is None else float(v) for v in column.to_pylist()])


def _title(result: Released, level: float) -> str:
    seeded = "" if result.private else " · SEEDED, NOT PRIVATE"
    return f"{level:.0%} CI (noise only){seeded}"
