"""Error at equal privacy: dpsql beside SmartNoise SQL, PipelineDP and Tumult Analytics.

Run on purpose (not part of the default test run); the peers live in their own virtual
environments, which ``--setup`` creates from PyPI::

    .venv/bin/python -m tests.benchmarks.bench_utility --setup --peers /work/peers
    .venv/bin/python -m tests.benchmarks.bench_utility --peers /work/peers \\
        --rows 100000 --trials 40 --plot docs/utility.svg

Every system answers the same queries over the same synthetic visits (``dpsql.datasets.
visits``: patients with a handful of visits each, a few with 50+, lognormal costs with rare
outliers) at the same total (ε, δ) per query, each charged what it really spends
(``utility_peers``: SmartNoise per statistic, Tumult per aggregate). The contribution bound
is the same for all: at most ``--rows-per-unit`` rows per person, cost clamped to
[0, ``--cost-max``]. dpsql also runs with its automatic bounds (``bounds="auto"`` for cost,
``max_rows_per_unit="auto"``), each trial on a fresh connection so that the estimate is paid
from that trial's budget.

For each query and system: the RMSE of each released column against the exact *unbounded*
answer (so the bias of bounding counts), over trials × released groups; its bias (mean
error); the spread of each group's answers across trials (noise, and the rows a random
bounding kept); and with private keys the mean number of groups released. Printed as a
Markdown table, with dpsql's ratios to the best peer per column. ``--selection-rows`` adds the
private-key COUNT at other contribution bounds (1, 3 and 10 rows per person by default,
in as many groups): how many groups each system's partition selection releases.
``--not-null`` (age and cost by default) declares columns NOT NULL to dpsql: the three-
statistic query then draws one count for COUNT(*), SUM(age) and AVG(cost).
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Sequence
from pathlib import Path

import duckdb
import numpy as np

import dpsql
from dpsql.datasets import REGIONS, visits

PEERS = {"smartnoise": "smartnoise-sql==1.0.10", "pipelinedp": "pipeline-dp==0.3.1",
         "tumult": "tmlt.analytics==0.21.0"}
UNLIMITED = dpsql.Budget(epsilon=1e9, delta=0.5)
QUERIES = [
    {"name": "COUNT BY region (public)", "key": "region", "columns": ["n"],
     "sql": "SELECT region, COUNT(*) AS n FROM visits GROUP BY region"},
    {"name": "SUM, AVG(cost) BY region (public)", "key": "region", "columns": ["s", "a"],
     "sql": "SELECT region, SUM(cost) AS s, AVG(cost) AS a FROM visits GROUP BY region"},
    {"name": "COUNT BY specialty (private)", "key": "specialty", "columns": ["n"],
     "sql": "SELECT specialty, COUNT(*) AS n FROM visits GROUP BY specialty"},
    {"name": "COUNT, SUM(age), AVG(cost) BY region (public)", "key": "region",
     "columns": ["n", "sa", "a"],
     "sql": "SELECT region, COUNT(*) AS n, SUM(age) AS sa, AVG(cost) AS a FROM visits "
            "GROUP BY region"},
]


PRIVATE_COUNT = QUERIES[2]


def selection_queries(rows: Sequence[int]) -> list[dict]:
    """The private-key COUNT again at each of ``rows`` rows per person (issue 40: partition
    selection when a person may touch up to r groups, r per group, r in all)."""
    return [dict(PRIVATE_COUNT, name=f"COUNT BY specialty (private, r = {r})",
                 rows_per_unit=r) for r in rows]


def specs(args: argparse.Namespace, data: Path) -> dict:
    queries = [dict(q, public=list(REGIONS) if q["key"] == "region" else None)
               for q in QUERIES + selection_queries(args.selection_rows)]
    return {"data": str(data), "epsilon": args.epsilon, "delta": args.delta,
            "trials": args.trials, "rows_per_unit": args.rows_per_unit,
            "bounds": {"cost": [0.0, args.cost_max]}, "not_null": args.not_null,
            "queries": queries}


def truth(data: Path, queries: Sequence[dict]) -> dict[str, dict]:
    """The exact unbounded answers: {query: {key: {column: value}}}."""
    con = duckdb.connect()
    con.execute(f"CREATE VIEW visits AS SELECT * FROM read_csv('{data}')")
    out = {}
    for q in queries:
        names = [d[0] for d in con.execute(q["sql"]).description]
        out[q["name"]] = {row[0]: dict(zip(names[1:], map(float, row[1:]), strict=True))
                          for row in con.execute(q["sql"]).fetchall()}
    return out


def dpsql_answers(spec: dict, *, auto: bool) -> dict[str, list[dict]]:
    """dpsql's answers, trial by trial; with ``auto`` a fresh connection per trial."""
    def connection(rows: int) -> dpsql.Connection:
        con = dpsql.connect(budget=UNLIMITED, cache=False)
        con.register("visits", spec["data"], privacy_unit="patient_id",
                     bounds={"cost": "auto" if auto else tuple(spec["bounds"]["cost"]),
                             "age": (0, 100)},
                     max_rows_per_unit="auto" if auto else rows,
                     max_groups_per_unit=None if auto else rows,
                     max_rows_per_group=None if auto else rows,
                     public_keys={"region": list(REGIONS)}, not_null=spec["not_null"])
        return con

    warnings.simplefilter("ignore", dpsql.PrivacyWarning)  # "estimated as …", every trial
    out = {}
    for q in spec["queries"]:
        rows = q.get("rows_per_unit", spec["rows_per_unit"])
        if auto and "rows_per_unit" in q:
            continue  # the automatic limits estimate r: the r = 1, 3, 10 cases are not theirs
        shared = connection(rows)
        trials = []
        for _ in range(spec["trials"]):
            con = connection(rows) if auto else shared
            result = con.sql(q["sql"], epsilon=spec["epsilon"], delta=spec["delta"])
            trials.append({row[0]: dict(zip(q["columns"], map(float, row[1:]), strict=True))
                           for row in result.fetchall()})
        out[q["name"]] = trials
    return out


def peer_answers(system: str, spec_path: Path, peers: Path) -> dict[str, list[dict]]:
    python = peers / system / "bin" / "python"
    script = Path(__file__).with_name("utility_peers.py")
    done = subprocess.run([str(python), str(script), system, str(spec_path)], check=True,
                          stdout=subprocess.PIPE, text=True)
    return json.loads(done.stdout)


def scores(answers: list[dict], exact: dict, column: str) -> tuple[float, ...]:
    """(RMSE, bias, s.d. across runs, mean groups released) of one column: RMSE and bias
    against the unbounded truth over every released cell; the s.d. is the spread of each
    group's answers across trials — the noise, and which rows a random bounding kept —
    root-mean-squared over groups (bounding's bias left out)."""
    cells: dict = {}
    for trial in answers:
        for key, columns in trial.items():
            if key in exact and column in columns:
                cells.setdefault(key, []).append(columns[column])
    released = sum(len(trial) for trial in answers) / max(len(answers), 1)
    if not cells:
        return math.nan, math.nan, math.nan, released
    errors = np.concatenate([np.array(v) - exact[k][column] for k, v in cells.items()])
    spread = [np.var(v, ddof=1) for v in cells.values() if len(v) > 1]
    noise = float(np.sqrt(np.mean(spread))) if spread else math.nan
    return float(np.sqrt(np.mean(errors**2))), float(np.mean(errors)), noise, released


def table(results: dict[str, dict], exact: dict, queries: Sequence[dict]
          ) -> tuple[str, dict]:
    """The Markdown table, and {query/column: {system: s.d. across runs}} for the plot."""
    lines = ["| query | column | system | RMSE | bias | s.d. across runs | groups "
             "| RMSE ÷ best peer's | s.d. ÷ best peer's |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|"]
    figures: dict[str, dict[str, float]] = {}
    for q in queries:
        for column in q["columns"]:
            rows = {system: scores(answers[q["name"]], exact[q["name"]], column)
                    for system, answers in results.items() if q["name"] in answers}
            peers = [r for s, r in rows.items() if not s.startswith("dpsql")]
            best = [min((r[i] for r in peers), default=math.nan) for i in (0, 2)]
            figures[f"{q['name']}: {column}"] = {s: r[2] for s, r in rows.items()}
            for system, (rmse, bias, noise, groups) in rows.items():
                ratios = (f"{rmse / best[0]:.2f} | {noise / best[1]:.2f}"
                          if system.startswith("dpsql") else " | ")
                lines.append(f"| {q['name']} | {column} | {system} | {rmse:.4g} | {bias:+.3g} "
                             f"| {noise:.4g} | {groups:.1f} | {ratios} |")
    return "\n".join(lines), figures


def plot(figures: dict[str, dict[str, float]], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    # The automatic bounds' spread is mostly the estimated limit moving between trials.
    systems = sorted({s for f in figures.values() for s in f if "auto" not in s})
    fig, ax = plt.subplots(figsize=(9, 4))
    width = 0.8 / len(systems)
    best = [min(v for s, v in f.items() if not s.startswith("dpsql")) for f in figures.values()]
    for i, system in enumerate(systems):
        ratios = [f.get(system, math.nan) / b for f, b in zip(figures.values(), best, strict=True)]
        ax.bar(np.arange(len(figures)) + i * width, ratios, width, label=system)
    ax.set_xticks(np.arange(len(figures)) + width * (len(systems) - 1) / 2)
    ax.set_xticklabels([name.replace(" (", "\n(") for name in figures], fontsize=7)
    ax.axhline(1.0, color="black", linewidth=0.5)
    ax.set_ylabel("s.d. across runs ÷ best peer's")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)


def setup(peers: Path) -> None:
    for system, requirement in PEERS.items():
        venv = peers / system
        if not (venv / "bin" / "python").exists():
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", requirement], check=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peers", type=Path, default=Path("/work/peers"),
                        help="folder of the peers' virtual environments")
    parser.add_argument("--setup", action="store_true", help="create the peers' venvs first")
    parser.add_argument("--systems", nargs="*", default=list(PEERS))
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--trials", type=int, default=40)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--delta", type=float, default=1e-6)
    parser.add_argument("--rows-per-unit", type=int, default=3)
    parser.add_argument("--selection-rows", type=int, nargs="*", default=[1, 3, 10],
                        help="also run the private-key COUNT at each of these rows per person")
    parser.add_argument("--cost-max", type=float, default=2000.0)
    parser.add_argument("--plot", help="write the s.d. ratios as an image (.svg, .png)")
    parser.add_argument("--not-null", nargs="*", default=["age", "cost"],
                        help="columns dpsql is told hold no NULL (the peers are not)")
    args = parser.parse_args(argv)
    if args.setup:
        setup(args.peers)
    with tempfile.TemporaryDirectory() as folder:
        data = Path(folder) / "visits.csv"
        visits(args.rows, seed=7).select(["patient_id", "region", "specialty", "cost",
                                          "age"]).to_pandas().to_csv(data, index=False)
        spec = specs(args, data)
        spec_path = Path(folder) / "spec.json"
        spec_path.write_text(json.dumps(spec))
        results = {"dpsql": dpsql_answers(spec, auto=False),
                   "dpsql (auto bounds)": dpsql_answers(spec, auto=True)}
        for system in args.systems:
            results[system] = peer_answers(system, spec_path, args.peers)
        text, figures = table(results, truth(data, spec["queries"]), spec["queries"])
    print(f"{args.rows:,} rows, ε={args.epsilon:g}, δ={args.delta:g} per query, "
          f"≤ {args.rows_per_unit} rows per person, cost in [0, {args.cost_max:g}], "
          f"{args.trials} trials\n")
    print(text)
    if args.plot:
        plot(figures, args.plot)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
