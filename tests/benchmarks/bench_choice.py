"""Prototypes of the group choice (at most g groups per unit), as plain DuckDB SQL.

Run on purpose (not part of the default test run)::

    .venv/bin/python -m tests.benchmarks.bench_choice --rows 10000000 --groups 1 3 8 \
        --shares none half most --query count

For each data set (tests/benchmarks/limits_data.py, regenerated per limit g and share of
people over it) it asks dpsql for its own bounded query with a fixed salt, cuts out the
part that keeps at most g (unit, group) pairs per unit (the select that defines
``__dp_pairs``), and puts each prototype of VARIANTS in its place: the per-pair partials
and the final aggregate stay dpsql's, only the choice differs. Every prototype is checked
first: the kept (unit, group) pairs must equal dpsql's own, and so must the whole bounded
result (both counts of differences are printed, and any difference stops the run). Then
dpsql's bounded query, each prototype and the floor ``SELECT grp, COUNT(DISTINCT pid) FROM
t GROUP BY grp`` run interleaved ``--repeats`` times; the table gives each one's median
wall time over the floor's, and its CPU time (all DuckDB threads) over the floor's.

``--sql`` prints each prototype's SQL for one data set instead of timing it.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import time
from collections.abc import Callable

import duckdb
import sqlglot
from sqlglot import exp

from dpsql.engines import DUCKDB
from dpsql.rewrite import digest as digest_module
from tests.benchmarks.bench_matrix import QUERIES, Dataset

SALT = "0123456789abcdef0123456789abcdef"
"""A fixed salt of the length dpsql draws (secrets.token_hex(16)), for both sides."""
UNIT, KEY = "__dp_unit", "grp"


def digest(salt: str) -> str:
    """dpsql's keyed hash of (unit, key) (dpsql/rewrite/digest.py), as DuckDB SQL."""
    return f"md5(concat_ws('|', '{salt}', CAST({UNIT} AS VARCHAR), CAST({KEY} AS VARCHAR)))"


def digest_blob(salt: str) -> str:
    """The same digest as 16 bytes (``unhex``): ordered exactly like the hex text, half as
    long. Spark: ``unhex(md5(...))`` is BINARY, which Spark also orders byte by byte."""
    return f"unhex({digest(salt)})"


def by_hash(hash_sql: str) -> str:
    """The order of today's ranking: the hash, ties broken by the key."""
    return f"({hash_sql}, {KEY})"


# Each variant: (pairs SQL, g, salt) -> SQL of the kept pairs, same columns as the pairs.
# "g1" variants only exist for g = 1.


def window_all(pairs: str, g: int, salt: str) -> str:
    """Today's ranking, but over every unit's pairs (no heavy/light split)."""
    return (f"SELECT * EXCLUDE (__r) FROM (SELECT *, row_number() OVER (PARTITION BY {UNIT} "
            f"ORDER BY {digest(salt)}, {KEY}) AS __r FROM ({pairs})) WHERE __r <= {g}")


def argmin_join(pairs: str, g: int, salt: str, hash_sql: Callable[[str], str] = digest) -> str:
    """g = 1: per unit, the key with the smallest (hash, key); joined back to the pairs."""
    return (f"WITH p AS ({pairs}), c AS (SELECT {UNIT}, arg_min({KEY}, "
            f"{by_hash(hash_sql(salt))}) AS __k FROM p GROUP BY {UNIT}) "
            f"SELECT p.* FROM p JOIN c ON p.{UNIT} = c.{UNIT} "
            f"AND p.{KEY} IS NOT DISTINCT FROM c.__k")


def argmin_row(pairs: str, g: int, salt: str, hash_sql: Callable[[str], str] = digest) -> str:
    """g = 1: per unit, the whole pair row with the smallest (hash, key); no join back."""
    return (f"WITH p AS ({pairs}) SELECT unnest(arg_min(p, {by_hash(hash_sql(salt))})) "
            f"FROM p GROUP BY {UNIT}")


def argmin_row_blob(pairs: str, g: int, salt: str) -> str:
    """argmin_row with the 16-byte digest."""
    return argmin_row(pairs, g, salt, digest_blob)


def argmin_heavy(pairs: str, g: int, salt: str) -> str:
    """g = 1: today's heavy/light split; heavy units take arg_min instead of the window."""
    return (f"WITH p AS ({pairs}), h AS (SELECT {UNIT} FROM p GROUP BY {UNIT} "
            f"HAVING count(*) > {g}) "
            f"SELECT * FROM p WHERE {UNIT} NOT IN (SELECT {UNIT} FROM h) UNION ALL "
            f"SELECT unnest(arg_min(p, {by_hash(digest(salt))})) FROM p "
            f"WHERE {UNIT} IN (SELECT {UNIT} FROM h) GROUP BY {UNIT}")


def topg_keys(pairs: str, g: int, salt: str) -> str:
    """Per unit, the g keys with the smallest (hash, key) as a list; unnested, joined back."""
    return (f"WITH p AS ({pairs}), c AS (SELECT {UNIT}, unnest(arg_min({KEY}, "
            f"{by_hash(digest(salt))}, {g})) AS __k FROM p GROUP BY {UNIT}) "
            f"SELECT p.* FROM p JOIN c ON p.{UNIT} = c.{UNIT} "
            f"AND p.{KEY} IS NOT DISTINCT FROM c.__k")


def topg_rows(pairs: str, g: int, salt: str, hash_sql: Callable[[str], str] = digest) -> str:
    """Per unit, the g whole pair rows with the smallest (hash, key); no join back."""
    return (f"WITH p AS ({pairs}) SELECT unnest(arg_min(p, {by_hash(hash_sql(salt))}, {g}), "
            f"recursive := true) FROM p GROUP BY {UNIT}")


def topg_rows_blob(pairs: str, g: int, salt: str) -> str:
    """topg_rows with the 16-byte digest."""
    return topg_rows(pairs, g, salt, digest_blob)


def threshold(pairs: str, g: int, salt: str) -> str:
    """Per unit, its pair count and g-th smallest (hash, key); pairs at or under it kept.

    The hash is computed once per pair, in a column of the pairs.
    """
    return (f"WITH p AS (SELECT *, {digest_blob(salt)} AS __h FROM ({pairs})), "
            f"c AS (SELECT {UNIT}, min((__h, {KEY}), {g})[-1] AS __t FROM p GROUP BY {UNIT}) "
            f"SELECT p.* EXCLUDE (__h) FROM p JOIN c ON p.{UNIT} = c.{UNIT} "
            f"WHERE (p.__h, p.{KEY}) <= c.__t")


def topg_heavy(pairs: str, g: int, salt: str) -> str:
    """Today's heavy/light split; heavy units take their g smallest pair rows (no window)."""
    return (f"WITH p AS ({pairs}), h AS (SELECT {UNIT} FROM p GROUP BY {UNIT} "
            f"HAVING count(*) > {g}) "
            f"SELECT * FROM p WHERE {UNIT} NOT IN (SELECT {UNIT} FROM h) UNION ALL "
            f"SELECT unnest(arg_min(p, {by_hash(digest(salt))}, {g}), recursive := true) "
            f"FROM p WHERE {UNIT} IN (SELECT {UNIT} FROM h) GROUP BY {UNIT}")


def topg_light_first(pairs: str, g: int, salt: str) -> str:
    """One aggregate per unit over the pairs finds the heavy units and keeps the light units'
    pairs whole (a list, no hash); only heavy units' pairs are hashed, in a second
    aggregate over them alone."""
    return (f"WITH p AS ({pairs}), u AS (SELECT {UNIT}, count(*) AS __n, list(p) AS __l "
            f"FROM p GROUP BY {UNIT}), q AS (SELECT unnest(__l, recursive := true) FROM u "
            f"WHERE __n > {g}) "
            f"SELECT unnest(__l, recursive := true) FROM u WHERE __n <= {g} UNION ALL "
            f"SELECT unnest(arg_min(q, {by_hash(digest(salt))}, {g}), recursive := true) "
            f"FROM q GROUP BY {UNIT}")


VARIANTS: dict[str, tuple[Callable[[str, int, str], str], bool]] = {
    "window_all": (window_all, False),
    "argmin_join": (argmin_join, True),
    "argmin_row": (argmin_row, True),
    "argmin_row_blob": (argmin_row_blob, True),
    "argmin_heavy": (argmin_heavy, True),
    "topg_keys": (topg_keys, False),
    "topg_rows": (topg_rows, False),
    "topg_rows_blob": (topg_rows_blob, False),
    "threshold": (threshold, False),
    "topg_heavy": (topg_heavy, False),
    "topg_light_first": (topg_light_first, False),
}
"""Name → (kept-pairs SQL builder, g = 1 only)."""


def bounded_sql(con, query: str, salt: str) -> str:
    """dpsql's own bounded DuckDB SQL for ``query``, with ``salt`` written in as a literal
    (here only, so the prototypes can be spliced in as text; dpsql binds it as a parameter)."""
    compiled = con.compile(query, epsilon=1.0, delta=1e-6)
    return compiled.bounded.ast.transform(
        lambda node: exp.Literal.string(salt)
        if isinstance(node, exp.Placeholder) and node.name == digest_module.SALT else node
    ).sql(DUCKDB.dialect)


def kept_select(tree: exp.Expression) -> exp.Select:
    """The select of dpsql's bounded query that defines __dp_pairs: its kept pairs."""
    for select in tree.find_all(exp.Select):
        ctes = select.args.get("with_")
        if ctes and any(cte.alias == "__dp_pairs" for cte in ctes.expressions):
            return select
    raise LookupError("no __dp_pairs in the bounded query: is there a group limit?")


def split(bounded: str) -> tuple[str, str, Callable[[str], str]]:
    """(today's kept pairs SQL, the pairs SQL, a function putting other kept SQL in place)."""
    kept = kept_select(sqlglot.parse_one(bounded, read="duckdb"))
    pairs = next(c for c in kept.args["with_"].expressions if c.alias == "__dp_pairs")
    today, pairs_sql = kept.sql("duckdb"), pairs.this.sql("duckdb")

    def replaced(kept_sql: str) -> str:
        tree = sqlglot.parse_one(bounded, read="duckdb")
        kept_select(tree).replace(sqlglot.parse_one(kept_sql, read="duckdb"))
        return tree.sql("duckdb")
    return today, pairs_sql, replaced


def differences(con: duckdb.DuckDBPyConnection, a: str, b: str, columns: str = "*") -> int:
    """Rows in one result but not the other (as multisets)."""
    sql = (f"SELECT count(*) FROM ((SELECT {columns} FROM ({a}) EXCEPT ALL "
           f"SELECT {columns} FROM ({b})) UNION ALL (SELECT {columns} FROM ({b}) EXCEPT ALL "
           f"SELECT {columns} FROM ({a})))")
    return con.execute(sql).fetchall()[0][0]


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def timed(runs: dict[str, Callable[[], object]], repeats: int) -> dict[str, tuple[float, float]]:
    """(median wall s, median CPU s) of each run, the runs interleaved, after a warm-up."""
    for run in runs.values():
        run()
    wall: dict[str, list[float]] = {name: [] for name in runs}
    cpu: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeats):
        for name, run in runs.items():
            start, start_cpu = time.perf_counter(), cpu_seconds()
            run()
            wall[name].append(time.perf_counter() - start)
            cpu[name].append(cpu_seconds() - start_cpu)
    return {name: (statistics.median(wall[name]), statistics.median(cpu[name]))
            for name in runs}


def variants_for(g: int, names: list[str]) -> list[str]:
    return [n for n in names if g == 1 or not VARIANTS[n][1]]


def check(data: Dataset, bounded: str, g: int, names: list[str]) -> dict[str, str]:
    """Bounded SQL of each variant, after checking it keeps exactly dpsql's pairs."""
    today, pairs, replaced = split(bounded)
    out = {}
    for name in variants_for(g, names):
        kept = VARIANTS[name][0](pairs, g, SALT)
        full = replaced(kept)
        pairs_diff = differences(data.raw, today, kept, f"{UNIT}, {KEY}")
        result_diff = differences(data.raw, bounded, full)
        print(f"  check {name:<16} kept pairs differing: {pairs_diff}, bounded rows "
              f"differing: {result_diff}", flush=True)
        if pairs_diff or result_diff:
            raise AssertionError(f"{name} does not reproduce dpsql's group choice")
        out[name] = full
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--groups", type=int, nargs="+", choices=[1, 3, 8], default=[1, 3, 8])
    parser.add_argument("--shares", nargs="+", default=["none", "half", "most"])
    parser.add_argument("--query", choices=list(QUERIES), default="count")
    parser.add_argument("--variants", nargs="+", choices=list(VARIANTS), default=list(VARIANTS))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--sql", action="store_true", help="print the SQL, do not time it")
    args = parser.parse_args()
    print(f"DuckDB {duckdb.__version__}, load {os.getloadavg()}", flush=True)
    sql, grouped = QUERIES[args.query]
    lines = []
    for g in args.groups:
        for share in args.shares:
            data = Dataset(args.rows, share, g)
            print(f"# rows={args.rows:,} g={g} share={share}: "
                  f"{ {k: round(v, 3) for k, v in data.shape().items()} }", flush=True)
            con, _ = data.connect(str(g))
            bounded = bounded_sql(con, sql, SALT)
            full = check(data, bounded, g, args.variants)
            if args.sql:
                print(f"-- dpsql today\n{bounded}")
                for name, text in full.items():
                    print(f"-- {name}\n{text}")
                continue
            raw = data.raw
            queries = {"floor": data.unit_sql(grouped), "today": bounded, **full}
            runs = {n: (lambda s=s, r=raw: r.sql(s).fetchall()) for n, s in queries.items()}
            load = os.getloadavg()[0]
            times = timed(runs, args.repeats)
            floor_wall, floor_cpu = times["floor"]
            for name, (wall, cpu) in times.items():
                line = (f"| {args.rows:,} | {g} | {share} | {name} | {wall:.3f} | "
                        f"{wall / floor_wall:.2f} | {cpu / floor_cpu:.2f} | {load:.1f} |")
                lines.append(line)
                print(line, flush=True)
            con.close()
    print("\n| rows | g | share over | variant | wall s | ÷floor (wall) | ÷floor (CPU) | load |")
    print("|---:|---:|---|---|---:|---:|---:|---:|")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
