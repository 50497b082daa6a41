"""Error of grouping sets per level: dpsql's default, each set alone, or the finest set only.

Run on purpose (not part of the default test run)::

    PYTHONPATH=. .venv/bin/python -m tests.benchmarks.bench_consistency --trials 200

Synthetic people, one row each (so every set bounds the same rows and the levels measure
quantities that add up), with public keys a, b (and c) and a value v in [0, 10]. Each
statement asks COUNT(v) and SUM(v) at ε = 1 (δ = 0). Three answers, with the same seeds:

- ``alone``: ``consistent_totals = FALSE``, each set its own noisy answer at ε/k;
- ``dpsql``: the default, the design dpsql chooses by expected error: the same noisy answers
  fitted by least squares, or the finest set alone summed (``dpsql.consistency``;
  docs/mechanisms.md §14);
- ``finest``: the finest set alone at the whole ε, every coarser cell the sum of its cells,
  computed here whatever dpsql chooses.

Printed as a Markdown table: per statement and level, the RMSE of each against the exact
answer over trials × cells (docs/mechanisms.md §14 has the table).
"""

from __future__ import annotations

import argparse
import itertools

import numpy as np
import pandas as pd
import pyarrow as pa

import dpsql

OFF = "WITH DIFFERENTIAL_PRIVACY OPTIONS (consistent_totals = FALSE)"
STATEMENTS = {
    "ROLLUP (a, b), 3 × 2": ("ROLLUP (a, b)", ("a", "b"), {"a": 3, "b": 2}),
    "ROLLUP (a, b), 20 × 10": ("ROLLUP (a, b)", ("a", "b"), {"a": 20, "b": 10}),
    "CUBE (a, b), 3 × 2": ("CUBE (a, b)", ("a", "b"), {"a": 3, "b": 2}),
    "CUBE (a, b, c), 4 × 3 × 2": ("CUBE (a, b, c)", ("a", "b", "c"), {"a": 4, "b": 3, "c": 2}),
}


def people(sizes: dict[str, int], n: int, rng: np.random.Generator) -> pa.Table:
    columns = {"pid": np.arange(n), "v": rng.integers(0, 11, n)}
    for key, size in sizes.items():
        weights = rng.dirichlet(np.ones(size))
        columns[key] = rng.choice([f"{key}{i}" for i in range(size)], n, p=weights)
    return pa.table(columns)


def level_of(row: dict, keys: tuple[str, ...]) -> str:
    return "(" + ", ".join(k for k in keys if row[k] is not None) + ")"


def exact(frame: pd.DataFrame, keys: tuple[str, ...]) -> dict[tuple, tuple[float, float]]:
    """Every non-empty cell of every subset of the keys: (COUNT, SUM)."""
    out = {}
    for n in range(len(keys) + 1):
        for grouped in itertools.combinations(keys, n):
            parts = frame.groupby(list(grouped)) if grouped else [((), frame)]
            for values, g in parts:
                values = values if isinstance(values, tuple) else (values,)
                cell = dict(zip(grouped, values, strict=True))
                out[tuple(cell.get(k) for k in keys)] = (len(g), float(g.v.sum()))
    return out


def finest(con: dpsql.Connection, keys: tuple[str, ...], seed: int) -> list[dict]:
    """The finest set at the whole ε, every subset's cells summed from it."""
    frame = con.sql(f"SELECT {', '.join(keys)}, COUNT(v) AS n, SUM(v) AS s FROM t "
                    f"GROUP BY {', '.join(keys)}", epsilon=1, delta=0, seed=seed).df()
    rows = []
    for n in range(len(keys) + 1):
        for grouped in itertools.combinations(keys, n):
            sums = frame.groupby(list(grouped))[["n", "s"]].sum().reset_index() if grouped \
                else frame[["n", "s"]].sum().to_frame().T
            rows += [{**{k: row.get(k) for k in keys}, "n": row["n"], "s": row["s"]}
                     for row in sums.to_dict("records")]
    return rows


def run(name: str, trials: int, people_per_cell: int) -> list[dict]:
    group_by, keys, sizes = STATEMENTS[name]
    rng = np.random.default_rng(1)
    data = people(sizes, people_per_cell * int(np.prod(list(sizes.values()))), rng)
    con = dpsql.connect(budget=dpsql.Budget(epsilon=1e12, delta=0.5))
    con.register("t", data, privacy_unit="pid", bounds={"v": (0, 10)},
                 public_keys={k: [f"{k}{i}" for i in range(d)] for k, d in sizes.items()})
    truth = exact(data.to_pandas(), keys)
    sql = f"SELECT {{}} {', '.join(keys)}, COUNT(v) AS n, SUM(v) AS s FROM t GROUP BY {group_by}"
    levels = {level_of(dict(zip(keys, cell, strict=True)), keys) for cell in truth}
    squared: dict[tuple[str, str], list[list[float]]] = {}
    for seed in range(trials):
        released = {how: con.sql(sql.format(clause), epsilon=1, delta=0, seed=seed).arrow()
                    .to_pylist() for how, clause in (("alone", OFF), ("dpsql", ""))}
        released["finest"] = finest(con, keys, seed)
        for how, rows in released.items():
            for row in rows:
                n, s = truth.get(tuple(row[k] for k in keys), (0, 0.0))  # an empty cell
                squared.setdefault((how, level_of(row, keys)), []).append(
                    [(row["n"] - n) ** 2, (row["s"] - s) ** 2])
    table = []
    for level in sorted(levels, key=lambda lv: (-lv.count(","), -len(lv), lv)):
        if ("alone", level) not in squared:
            continue
        entry = {"statement": name, "level": level}
        for how in ("alone", "dpsql", "finest"):
            count, total = np.sqrt(np.mean(squared[how, level], axis=0))
            entry[f"{how} COUNT"], entry[f"{how} SUM"] = count, total
        table.append(entry)
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--people-per-cell", type=int, default=50)
    args = parser.parse_args()
    columns = ["statement", "level", "alone COUNT", "dpsql COUNT", "finest COUNT",
               "alone SUM", "dpsql SUM", "finest SUM"]
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    for name in STATEMENTS:
        for entry in run(name, args.trials, args.people_per_cell):
            cells = [entry[c] if isinstance(entry[c], str) else f"{entry[c]:.1f}"
                     for c in columns]
            print("| " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
