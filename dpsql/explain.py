"""What a query will do and cost, computed from the plan alone (no data, no budget).

>>> from dpsql.analysis import analyze
>>> from dpsql.catalog import Catalog, TableInfo
>>> cat = Catalog()
>>> _ = cat.add(TableInfo.private("t", columns={"pid": "INT", "k": "VARCHAR"}, privacy_unit="pid"))
>>> info = Explanation.of(analyze("SELECT k, COUNT(*) FROM t GROUP BY k", cat, epsilon=1,
...                               delta=1e-6)).to_dict()
>>> info["columns"][1]["mechanism"], info["partition_selection"]["method"]
('laplace', 'truncated_geometric')
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpsql.analysis.sensitivity import normalised_norms
from dpsql.mechanisms.selection import release_probability, truncated_geometric_probability
from dpsql.plan import WEIGHT_SCALE, Aggregate, PrivacyPlan
from dpsql.rewrite import rewrite
from dpsql.variance import SPREAD_KINDS

EXPLAIN_SALT = "<secret salt drawn per query>"


def column_noise(plan: PrivacyPlan, agg: Aggregate):
    """The Noise of the statistic that carries ``agg``'s value (AVG: its centred sum)."""
    return plan.noise_for(agg.stats[-1])


def _quantile_entry(plan: PrivacyPlan, agg: Aggregate) -> dict[str, Any]:
    """A quantile: its ε share, buckets and rank sensitivity (in rows, like a COUNT's)."""
    mechanism, histogram = agg.quantile.mechanism, agg.quantile.histogram
    limits = plan.contribution
    c = limits.rows_per_group
    l1, l2 = normalised_norms(limits.groups_per_unit, c, limits.max_rows_per_unit)
    rows = mechanism.max_weight / WEIGHT_SCALE
    return {
        "aggregate": agg.sql,
        "mechanism": "exponential",
        "quantile": float(agg.quantile.q),
        "epsilon": mechanism.epsilon,
        "epsilon_per_group": mechanism.epsilon * c / rows,
        "buckets": histogram.buckets,
        "bucket_width": histogram.width,
        "l1_sensitivity": c * l1,
        "l2_sensitivity": c * l2,
        "linf_sensitivity": c,
        "noise_std": None,
        "ci95_halfwidth": None,
        "rank_error95": mechanism.rank_error(0.95, histogram.buckets) / WEIGHT_SCALE,
        "interval_level": agg.quantile.level,
        "bounds": [agg.lo, agg.hi],
        "note": "exponential mechanism over equal buckets of the bounds; releases a bucket's "
        "midpoint. Sensitivities are in ranks (rows); with 95% probability the released "
        "bucket is within rank_error95 rows of the true quantile's rank; a value interval "
        "needs quantile_ci= (two more releases, see Result.ci)",
    }


def _statistic_entry(plan: PrivacyPlan, name: str) -> dict[str, Any]:
    """One noisy statistic: its kind and sensitivities in output units, its noise std."""
    spec, statistic = plan.stat(name), plan.statistic(name)
    quantum = spec.quantum
    return {"name": name, "kind": spec.kind, "expression": None if spec.expr is None
            else spec.expr.sql(dialect="duckdb"),
            "l1_sensitivity": statistic.bound * statistic.l1 * quantum,
            "l2_sensitivity": statistic.bound * statistic.l2 * quantum,
            "linf_sensitivity": statistic.bound * quantum,
            "noise_std": plan.noise_for(name).std}


RATIO_NOTES = {
    "avg": "AVG = centre + noisy centred sum / noisy count: its error depends on the count",
    "spread": "VAR/STDDEV from a noisy count, a noisy centred sum and a noisy centred sum of "
              "squared deviations (see statistics): the error depends on the count",
}


def _aggregate_entry(plan: PrivacyPlan, agg: Aggregate) -> dict[str, Any]:
    if agg.quantile is not None:
        return _quantile_entry(plan, agg)
    statistic = plan.statistic(agg.stats[-1])
    quantum = plan.stat(agg.stats[-1]).quantum
    noise = column_noise(plan, agg)
    ratio = "avg" if agg.kind == "avg" else "spread" if agg.kind in SPREAD_KINDS else None
    return {
        "aggregate": agg.sql,
        "mechanism": plan.noise.kind,
        "l1_sensitivity": statistic.bound * statistic.l1 * quantum,
        "l2_sensitivity": statistic.bound * statistic.l2 * quantum,
        "linf_sensitivity": statistic.bound * quantum,
        "noise_std": None if ratio else noise.std,
        "ci95_halfwidth": None if ratio else noise.ci_halfwidth(0.95),
        "bounds": None if agg.lo is None else [agg.lo, agg.hi],
        "statistics": [_statistic_entry(plan, name) for name in agg.stats],
        "note": None if ratio is None else
        RATIO_NOTES[ratio] + "; noise on the last sum has std " + f"{noise.std:.6g}",
    }


RELEASE_SIZES = (1, 2, 5, 10, 20, 50, 100, 200, 500)


def _selection(plan: PrivacyPlan) -> str | dict[str, Any]:
    """Partition selection, with the chance that a group of n people is released."""
    selection = plan.selection
    if selection is None:
        return "public"
    if selection.truncated_geometric:
        chances = truncated_geometric_probability(np.array(RELEASE_SIZES), selection.epsilon,
                                                  selection.delta, selection.max_groups)
    else:
        noise = plan.noise_for(next(s.name for s in plan.stats if s.kind == "units"))
        chances = [release_probability(noise, selection.threshold, n) for n in RELEASE_SIZES]
    return {"method": selection.method, "threshold": selection.threshold,
            "epsilon": selection.epsilon, "delta": selection.delta,
            "max_groups": selection.max_groups,
            "release_probability": {str(n): float(p)
                                    for n, p in zip(RELEASE_SIZES, chances, strict=True)}}


@dataclass(frozen=True)
class Explanation:
    """A JSON-ready description of a plan: columns, noise, selection, cost and SQL."""

    data: dict[str, Any]

    @classmethod
    def of(cls, plan: PrivacyPlan) -> Explanation:
        by_name = {a.name: a for a in plan.aggregates}
        columns = []
        for col in plan.columns:
            entry: dict[str, Any] = {"name": col.name, "aggregate": None, "mechanism": None,
                                     "l1_sensitivity": None, "l2_sensitivity": None,
                                     "noise_std": None}
            if col.aggregate is not None:
                entry.update(_aggregate_entry(plan, by_name[col.aggregate]))
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
            "rewritten_sql": rewrite(plan, salt=EXPLAIN_SALT).sql(pretty=True),
        }
        return cls(data)

    def to_dict(self) -> dict[str, Any]:
        return json.loads(json.dumps(self.data))

    def __str__(self) -> str:
        d = self.data
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
        sel = d["partition_selection"]
        groups = "public keys" if sel == "public" else \
            f"{sel['method']}, keep if noisy units >= {sel['threshold']:g}"
        lines.append(f"  groups: {groups}")
        return "\n".join(lines)
