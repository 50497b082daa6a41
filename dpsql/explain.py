"""What a query will do and cost, computed from the plan alone (no data, no budget).

>>> from dpsql.compile import compile_query
>>> from dpsql.catalog import Catalog, TableInfo
>>> cat = Catalog()
>>> _ = cat.add(TableInfo.private("t", columns={"pid": "INT", "k": "VARCHAR"}, privacy_unit="pid"))
>>> info = Explanation.of(compile_query("SELECT k, COUNT(*) FROM t GROUP BY k", cat, epsilon=1,
...                                     delta=1e-6)).to_dict()
>>> selection = info["partition_selection"]
>>> info["columns"][1]["mechanism"], selection["method"], selection["statistic"]
('laplace', 'laplace_threshold', 'COUNT(*)')
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from dpsql.composed import Composed, ComposedQuery
from dpsql.consistency import public_sets
from dpsql.estimators import estimator
from dpsql.plan import PrivacyPlan
from dpsql.render import html_table

if TYPE_CHECKING:
    from dpsql.compile import CompiledQuery



def _composed_column(name: str, where: tuple[int, int] | None, parts: list[dict[str, Any]]
                     ) -> dict[str, Any]:
    """A column of a statement of several releases: the part's column it repeats (with its
    noise), else post-processing (no aggregate, mechanism or noise of its own)."""
    if where is None:
        return {"name": name, "aggregate": None, "mechanism": None, "l1_sensitivity": None,
                "l2_sensitivity": None, "noise_std": None}
    part, column = where
    return {**parts[max(part, 0)]["columns"][column], "name": name}


RELEASE_SIZES = (1, 2, 5, 10, 20, 50, 100, 200, 500)


def _selection(plan: PrivacyPlan) -> str | dict[str, Any]:
    """Partition selection, with the chance that a group of n people is released (with one
    row each, for a threshold on a count of rows)."""
    selection = plan.selection
    if selection is None:
        return "public"
    chances = selection.chance(np.array(RELEASE_SIZES), plan.selection_noise())
    least = {"min_units": selection.min_units} if selection.min_units > 1 else {}
    own = {"sigma": selection.sigma, "noise_delta": selection.noise_delta} \
        if selection.own_noise is not None else {}
    counted = {} if selection.statistic is None else {
        "statistic": next((a.sql for a in plan.aggregates if selection.statistic in a.stats),
                          str(plan.stat(selection.statistic)))}
    return {"method": selection.method, "threshold": selection.threshold,
            "epsilon": selection.epsilon, "delta": selection.delta,
            "max_groups_per_unit": selection.max_groups_per_unit, **least, **own, **counted,
            "release_probability": {str(n): float(p)
                                    for n, p in zip(RELEASE_SIZES, chances, strict=True)}}


@dataclass(frozen=True)
class Explanation:
    """A JSON-ready description of a plan: columns, noise, selection, cost and SQL."""

    data: dict[str, Any]

    @classmethod
    def of(cls, compiled: CompiledQuery | Composed) -> Explanation:
        """The explanation of a compiled query (its plan, cost and bounded query)."""
        if isinstance(compiled, Composed):
            return cls.of_composed(compiled)
        plan = compiled.plan
        by_name = {a.name: a for a in plan.aggregates}
        columns = []
        for col in plan.columns:
            entry: dict[str, Any] = {"name": col.name, "aggregate": None, "mechanism": None,
                                     "l1_sensitivity": None, "l2_sensitivity": None,
                                     "noise_std": None}
            if col.aggregate is not None:
                agg = by_name[col.aggregate]
                entry.update(estimator(agg).describe(plan, agg))
            columns.append(entry)
        limits = plan.contribution
        noise = plan.noise
        mechanism = {"kind": plan.mechanism, "l1": None, "l2": None, "laplace_std": None,
                     "gaussian_std": None} if noise is None else {
            "kind": noise.kind, "l1": noise.l1, "l2": noise.l2,
            "laplace_std": noise.laplace_std, "gaussian_std": noise.gaussian_std}
        data = {
            "sql": plan.sql,
            "epsilon": plan.cost.epsilon,
            "delta": plan.cost.delta,
            "columns": columns,
            "aggregates": [{"name": a.name, "sql": a.sql, "kind": a.kind} for a in plan.aggregates],
            "statistics_per_unit": plan.statistics_per_unit,
            "mechanism": mechanism,
            "spend": [{"mechanism": p.mechanism, "epsilon": p.epsilon, "delta": p.delta}
                      for p in plan.spend],
            "partition_selection": _selection(plan),
            "contribution_bounds": {
                "privacy_unit": plan.privacy_unit or "row",
                "max_groups_per_unit": limits.max_groups_per_unit,
                "max_rows_per_group": limits.max_rows_per_group,
                "max_rows_per_unit": limits.max_rows_per_unit,
                "sources": dict(limits.sources),
            },
            "row_work": {"steps": plan.row_work, "text_widths": {
                read.table: dict(read.widths) for read in plan.reads}},
            "bounding": {"strategy": compiled.bounding.strategy,
                         "options": list(compiled.bounding.options),
                         "why": compiled.bounding.why, "engine": compiled.bounded.engine.name},
            "rewritten_sql": compiled.bounded_sql(pretty=True),
        }
        return cls(data)

    @classmethod
    def of_composed(cls, composed: Composed) -> Explanation:
        """A statement of several parts: its cost, the released cells one person can change
        over all parts, the parts' mechanisms and bounded queries, and under
        ``grouping_sets`` (each with its ``set``) or ``parts`` (each with its ``part``, and
        ``post_processing``, the statement over their released tables) each part's own
        explanation (ε and δ shares, columns, noise and selection). The columns, limits and
        selection shown at the top are the first part's."""
        key, label = ("parts", "part") if isinstance(composed, ComposedQuery) else \
            ("grouping_sets", "set")
        parts = [{label: s, **cls.of(p).data} for s, p in composed.labelled]
        data = {**parts[0], "sql": composed.sql, "epsilon": composed.cost.epsilon,
                "delta": composed.cost.delta,
                "statistics_per_unit": composed.statistics_per_unit,
                "mechanism": {**parts[0]["mechanism"], "kind": composed.mechanism},
                "spend": [{**spend, "mechanism": f"{part[label]} {spend['mechanism']}"}
                          for part in parts for spend in part["spend"]],
                "rewritten_sql": composed.bounded_sql(pretty=True), key: parts}
        del data[label]
        if not isinstance(composed, ComposedQuery) and composed.finest is not None:
            data["consistent_totals"] = [str(s) for s in composed.sets]
            data["summed_from"] = parts[0][label]
        elif not isinstance(composed, ComposedQuery):
            fitted = public_sets([p.plan for p in composed.parts]) \
                if composed.consistent_totals else ()
            data["consistent_totals"] = [parts[i][label] for i in fitted]
        if isinstance(composed, ComposedQuery):
            data["post_processing"] = composed.outer
            data["columns"] = [_composed_column(name, where, parts) for name, where in zip(
                composed.columns, composed.projected or (None,) * len(composed.columns),
                strict=True)]
        return cls(data)

    def to_dict(self) -> dict[str, Any]:
        return json.loads(json.dumps(self.data))

    def _repr_html_(self) -> str:
        """The plan for notebooks: one row per output column, the query's terms below."""
        rows = [[c["name"], c["aggregate"] or "", c["mechanism"] or "",
                 _number(c["l1_sensitivity"]), _number(c["l2_sensitivity"]),
                 _number(c["noise_std"])] for c in self.data["columns"]]
        return html_table(["column", "aggregate", "mechanism", "L1", "L2", "noise std"], rows,
                          str(self).splitlines()[0] + "; " + str(self).splitlines()[-1].strip())

    def __str__(self) -> str:
        d = self.data
        if "grouping_sets" in d or "parts" in d:
            key, label = ("parts", "part") if "parts" in d else ("grouping_sets", "set")
            head = "parts" if "parts" in d else "grouping sets"
            return "\n".join([f"ε={d['epsilon']:g} δ={d['delta']:g}  noise={d['mechanism']['kind']}"
                              f"  statistics/unit={d['statistics_per_unit']}  {head} "
                              + ", ".join(p[label] for p in d[key])
                              + _totals(d),
                              *(f"{label} {p[label]}: " + str(Explanation(p)) for p in d[key]),
                              *([f"post-processing: {d['post_processing']}"]
                                if "parts" in d else [])])
        lines = [f"ε={d['epsilon']:g} δ={d['delta']:g}  noise={d['mechanism']['kind']}  "
                 f"statistics/unit={d['statistics_per_unit']}"]
        for col in d["columns"]:
            if col["aggregate"] and col["mechanism"] == "exponential":
                lines.append(f"  {col['name']}: {col['aggregate']} exponential "
                             f"ε={col['epsilon']:.4g} bucket={col['bucket_width']:.4g} "
                             f"rank error95={col['rank_error95']:.4g} rows")
            elif col["aggregate"]:
                std = "n/a" if col["noise_std"] is None else f"{col['noise_std']:.4g}"
                lines.append(f"  {col['name']}: {col['aggregate']} L1={col['l1_sensitivity']:g} "
                             f"L2={col['l2_sensitivity']:.4g} std={std}")
        widths = [f"{t}.{c} ≤ {w}" for t, cols in d["row_work"]["text_widths"].items()
                  for c, w in cols.items()]
        lines.append(f"  work per row ≤ {d['row_work']['steps']:,} steps" + (
            f"; text read as at most its width in characters: {', '.join(widths)}"
            if widths else ""))
        lines.append(_bounding_line(d["bounding"]))
        lines.extend(_selection_lines(d["partition_selection"]))
        return "\n".join(lines)


def _bounding_line(bounding: dict[str, Any]) -> str:
    """The bounded query's strategy on its engine, its options, and why it was chosen.

    >>> print(_bounding_line({"strategy": "first_pair", "options": ["g=1", "packed"],
    ...                       "why": "one group per unit", "engine": "duckdb"}))
      bounding on duckdb: first_pair (g=1, packed): one group per unit
    """
    options = f" ({', '.join(bounding['options'])})" if bounding["options"] else ""
    return (f"  bounding on {bounding['engine']}: {bounding['strategy']}{options}: "
            f"{bounding['why']}")


def _selection_lines(sel: str | dict[str, Any]) -> list[str]:
    """How groups are chosen, and the chance that a group of n people is released.

    >>> print("\\n".join(_selection_lines({"method": "laplace_threshold", "threshold": 15.0,
    ...     "epsilon": 0, "delta": 1e-6, "release_probability": {"1": 0.0, "10": 0.04,
    ...     "20": 0.9, "50": 1.0}})))
      groups: private keys, laplace_threshold: kept if the noisy count of people >= 15 (δ=1e-06)
      P(group released | n people): n=1 0%  n=10 4%  n=20 90%  n=50 100%
    """
    if sel == "public":
        return ["  groups: public keys"]
    assert isinstance(sel, dict)
    least = sel.get("min_units", 1)
    floor = f", never with fewer than {least} people" if least > 1 else ""
    if sel["method"] == "truncated_geometric":
        count = "exact count of people" + (f" less {least - 1}" if least > 1 else "")
        how = (f"truncated_geometric: kept at random by its {count}{floor} "
               f"(ε={sel['epsilon']:.4g}, δ={sel['delta']:g})")
    elif sel["method"] == "gaussian_selection":
        how = (f"gaussian_selection: kept if the count of people plus its own Gaussian noise "
               f"(σ={sel['sigma']:.4g}, not released) >= {sel['threshold'] + least - 1:g}"
               f"{floor} (ε={sel['epsilon']:.4g}, δ={sel['delta']:g})")
    elif "statistic" in sel:
        how = (f"{sel['method']}: kept if its released {sel['statistic']} >= "
               f"{sel['threshold']:g} (δ={sel['delta']:g}; no ε of its own)")
    else:
        how = (f"{sel['method']}: kept if the noisy count of people >= "
               f"{sel['threshold'] + least - 1:g}{floor} (δ={sel['delta']:g})")
    chances = "  ".join(f"n={n} {_percent(p)}" for n, p in sel["release_probability"].items())
    people = "n people, one row each" if "statistic" in sel else "n people"
    return [f"  groups: private keys, {how}", f"  P(group released | {people}): {chances}"]


def _percent(p: float) -> str:
    """A probability as a percentage that never rounds a possible release to 0% or a
    possible loss to 100%."""
    if 0 < p < 0.005:
        return "<1%"
    if 0.995 <= p < 1:
        return ">99%"
    return f"{p:.0%}"


def _number(value: float | None) -> str:
    return "" if value is None else f"{value:.4g}"


def _totals(data: dict[str, Any]) -> str:
    """How a statement's grouping sets were made to add up, for its first line."""
    if "summed_from" in data:
        return (f"  summed from {data['summed_from']} to add up: "
                + ", ".join(data["consistent_totals"]))
    if data.get("consistent_totals"):
        return f"  fitted to add up: {', '.join(data['consistent_totals'])}"
    return ""
