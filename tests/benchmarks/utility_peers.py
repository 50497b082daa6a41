"""The peers' side of ``bench_utility``: run one system's answers in that system's own venv.

Run by ``bench_utility`` as ``<venv>/bin/python utility_peers.py SYSTEM SPEC.json`` with
SYSTEM one of ``smartnoise``, ``pipelinedp``, ``tumult``. It imports neither dpsql nor
anything of this repository (each peer has its own virtual environment), reads the data CSV
and the queries from the spec, answers each query ``trials`` times at the spec's total
(ε, δ), and prints one JSON object: for each query, a list (one per trial) of
``{key: {column: value}}``.

Each system is charged what it really spends for the query as a whole:

- SmartNoise SQL spends its ``Privacy(epsilon, delta)`` once per statistic it draws
  (``get_privacy_cost``), so it is given ε/k and δ/k for k statistics;
- PipelineDP splits one ``NaiveBudgetAccountant`` over the metrics of a query (one
  ``aggregate`` call per value column it reads), and its private partitions are chosen with
  the same budget; it runs with Laplace and with
  Gaussian noise and keeps the kind with the smaller spread (dpsql chooses by itself);
- Tumult Analytics answers one aggregate per query: a query of two aggregates is two
  queries, each with half of ε (``PureDPBudget``; ``ApproxDPBudget`` with private keys).

The contribution bound is the same everywhere: at most ``rows_per_unit`` rows per person
(a query's own ``rows_per_unit`` when it has one)
(SmartNoise's ``max_ids``, PipelineDP's ``max_contributions`` — with private keys, which it
selects only under a partitions limit, r partitions of one row each — Tumult's
``MaxRowsPerID``), and each value clamped to the spec's bounds.
"""

from __future__ import annotations

import csv
import json
import os
import sys


def read_rows(path: str) -> list[dict]:
    with open(path, newline="") as f:
        return [{"patient_id": int(r["patient_id"]), "region": r["region"],
                 "specialty": r["specialty"], "cost": float(r["cost"]), "age": int(r["age"])}
                for r in csv.DictReader(f)]


def smartnoise(spec: dict) -> dict:
    import pandas as pd
    import snsql

    df = pd.read_csv(spec["data"])
    lo, hi = spec["bounds"]["cost"]
    metadata = {"bench": {"public": {"visits": {
        "max_ids": spec["rows_per_unit"], "row_privacy": False,
        "patient_id": {"type": "int", "private_id": True},
        "region": {"type": "string"}, "specialty": {"type": "string"},
        "cost": {"type": "float", "lower": lo, "upper": hi},
        "age": {"type": "int", "lower": 0, "upper": 100}}}}}
    out = {}
    for query in spec["queries"]:
        metadata["bench"]["public"]["visits"]["max_ids"] = rows_per_unit(spec, query)
        sql = query["sql"].replace("FROM visits", "FROM public.visits")
        probe = snsql.from_df(df, privacy=snsql.Privacy(epsilon=1.0, delta=1e-6),
                              metadata=metadata)
        cost_eps, _ = probe.get_privacy_cost(sql)
        k = round(cost_eps)
        reader = snsql.from_df(df, metadata=metadata, privacy=snsql.Privacy(
            epsilon=spec["epsilon"] / k, delta=spec["delta"] / k))
        trials = []
        for _ in range(spec["trials"]):
            header, *rows = reader.execute(sql)
            trials.append(_by_key(header, rows, query["key"]))
        out[query["name"]] = trials
    return out


PIPELINEDP_COLUMNS = {"n": ("COUNT", "count", "cost"), "s": ("SUM", "sum", "cost"),
                      "a": ("MEAN", "mean", "cost"), "sa": ("SUM", "sum", "age")}
"""Each released column: PipelineDP's metric, the field of its result, the value it reads."""


def pipelinedp(spec: dict) -> dict:
    """One ``aggregate`` call per value column a query reads (COUNT and MEAN of cost in one,
    SUM of age in another), all on one engine and accountant, so the budget is split over
    every metric of the query."""
    import pipeline_dp

    rows = read_rows(spec["data"])
    bounds = {"cost": tuple(spec["bounds"]["cost"]), "age": (0, 100)}
    out = {}
    for query in spec["queries"]:
        values: dict[str, list[str]] = {}
        for column in query["columns"]:
            values.setdefault(PIPELINEDP_COLUMNS[column][2], []).append(column)
        best = None
        for kind in (pipeline_dp.NoiseKind.LAPLACE, pipeline_dp.NoiseKind.GAUSSIAN):
            trials = []
            for _ in range(spec["trials"]):
                accountant = pipeline_dp.NaiveBudgetAccountant(
                    total_epsilon=spec["epsilon"], total_delta=spec["delta"])
                engine = pipeline_dp.DPEngine(accountant, pipeline_dp.LocalBackend())
                results = []
                for field, columns in values.items():
                    params = pipeline_dp.AggregateParams(
                        metrics=[getattr(pipeline_dp.Metrics, PIPELINEDP_COLUMNS[c][0])
                                 for c in columns], noise_kind=kind,
                        min_value=bounds[field][0], max_value=bounds[field][1],
                        **_pipelinedp_bounds(spec, query))
                    extract = pipeline_dp.DataExtractors(
                        partition_extractor=lambda r, key=query["key"]: r[key],
                        privacy_id_extractor=lambda r: r["patient_id"],
                        value_extractor=lambda r, field=field: r[field])
                    results.append((columns, engine.aggregate(
                        rows, params, extract, public_partitions=query.get("public"))))
                accountant.compute_budgets()
                answers: dict = {}
                for columns, result in results:
                    for key, value in result:
                        answers.setdefault(key, {}).update(
                            {c: getattr(value, PIPELINEDP_COLUMNS[c][1]) for c in columns})
                trials.append(answers)
            if best is None or _spread(trials) < _spread(best):
                best = trials
        out[query["name"]] = best
    return out


def _pipelinedp_bounds(spec: dict, query: dict) -> dict:
    """``max_contributions`` (rows per person); its partition selection needs a number of
    partitions instead: then r partitions of one row each (the same L1 for counts)."""
    r = rows_per_unit(spec, query)
    if query.get("public"):
        return {"max_contributions": r}
    return {"max_partitions_contributed": r, "max_contributions_per_partition": 1}


def _spread(trials: list[dict]) -> float:
    """Variance of the answers across trials, summed over cells (the better noise kind)."""
    cells = {}
    for trial in trials:
        for key, columns in trial.items():
            for column, value in columns.items():
                cells.setdefault((key, column), []).append(value)
    total = 0.0
    for values in cells.values():
        mean = sum(values) / len(values)
        total += sum((v - mean) ** 2 for v in values) / len(values) / (abs(mean) + 1) ** 2
    return total


def tumult(spec: dict) -> dict:
    from pyspark.sql import SparkSession
    from tmlt.analytics import (
        AddRowsWithID,
        ApproxDPBudget,
        KeySet,
        MaxRowsPerID,
        PureDPBudget,
        QueryBuilder,
        Session,
    )

    os.environ["PYSPARK_PYTHON"] = sys.executable  # workers need this venv's tmlt
    spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "4").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    frame = spark.createDataFrame(read_rows(spec["data"])).cache()
    lo, hi = spec["bounds"]["cost"]
    out = {}
    for query in spec["queries"]:
        public = query.get("public")
        # One share per aggregate, and with private keys one more for choosing the keys.
        share = spec["epsilon"] / (len(query["columns"]) + (public is None))
        trials = []
        for _ in range(spec["trials"]):
            session = Session.from_dataframe(
                privacy_budget=PureDPBudget(spec["epsilon"]) if public else ApproxDPBudget(
                    spec["epsilon"], spec["delta"]),
                source_id="visits", dataframe=frame,
                protected_change=AddRowsWithID(id_column="patient_id"))
            base = QueryBuilder("visits").enforce(MaxRowsPerID(rows_per_unit(spec, query)))
            if public:
                keys, budget = KeySet.from_dict({query["key"]: public}), PureDPBudget(share)
            else:
                found = session.evaluate(base.get_groups([query["key"]]),
                                         ApproxDPBudget(share, spec["delta"]))
                keys, budget = KeySet.from_dataframe(found), PureDPBudget(share)
            grouped = base.groupby(keys)
            answers = {}
            for column in query["columns"]:
                aggregate = {"n": lambda g: g.count(name="n"),
                             "s": lambda g: g.sum("cost", lo, hi, name="s"),
                             "sa": lambda g: g.sum("age", 0, 100, name="sa"),
                             "a": lambda g: g.average("cost", lo, hi, name="a")}[column]
                for row in session.evaluate(aggregate(grouped), budget).collect():
                    answers.setdefault(row[query["key"]], {})[column] = float(row[column])
            trials.append(answers)
        out[query["name"]] = trials
    spark.stop()
    return out


def rows_per_unit(spec: dict, query: dict) -> int:
    return query.get("rows_per_unit", spec["rows_per_unit"])


def _by_key(header: list, rows: list, key: str) -> dict:
    names = [str(h).lower() for h in header]
    k = names.index(key)
    return {row[k]: {c: float(row[i]) for i, c in enumerate(names) if i != k}
            for row in rows}


SYSTEMS = {"smartnoise": smartnoise, "pipelinedp": pipelinedp, "tumult": tumult}


if __name__ == "__main__":
    system, spec_path = sys.argv[1:3]
    with open(spec_path) as f:
        answers = SYSTEMS[system](json.load(f))
    json.dump(answers, sys.stdout)
