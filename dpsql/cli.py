"""The ``dpsql`` command line.

Examples::

    dpsql demo                                    # private answers on shipped data
    dpsql --catalog catalog.toml -c "SELECT COUNT(*) FROM visits" --epsilon 0.5
    dpsql --catalog catalog.toml explain "SELECT AVG(cost) FROM visits"

Heavy modules are imported only when a command runs, so ``--help`` is instant.
Exit codes: 0 success, 1 query refused or failed (message on stderr), 2 usage.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

DEMO_QUERIES = (
    ("How many people, and how old and rich are they on average? (PUMS, user-level)",
     "SELECT COUNT(DISTINCT pid) AS people, AVG(age) AS mean_age, AVG(income) AS mean_income "
     "FROM pums"),
    ("Income by sex (public keys: both groups always appear)",
     "SELECT sex, COUNT(*) AS n, AVG(income) AS mean_income FROM pums GROUP BY sex ORDER BY sex"),
    ("Top specialties by visits (private keys: DP partition selection)",
     "SELECT specialty, COUNT(*) AS visits, COUNT(DISTINCT patient_id) AS patients "
     "FROM visits GROUP BY specialty ORDER BY visits DESC LIMIT 8"),
    ("Cost by region, clamped to [0, 2000] per visit",
     "SELECT region, SUM(cost) AS total_cost, AVG(cost) AS mean_cost FROM visits "
     "GROUP BY region ORDER BY total_cost DESC"),
)


def _demo(args: argparse.Namespace) -> int:
    import dpsql
    from dpsql.datasets import REGIONS, pums_path, visits

    con = dpsql.connect(budget=dpsql.Budget(epsilon=4.0, delta=1e-6), seed=args.seed)
    con.register("pums", str(pums_path("PUMS_dup")), privacy_unit="pid",
                 bounds={"age": (0, 100), "income": (0, 500_000)},
                 max_rows_per_group=2, public_keys={"sex": [0, 1]})
    con.register("visits", visits(args.rows, seed=1), privacy_unit="patient_id",
                 bounds={"cost": (0, 2000), "age": (0, 100)}, max_groups_per_unit=3,
                 max_rows_per_group=4, public_keys={"region": list(REGIONS)})
    print(f"dpsql demo: PUMS_dup.csv (1,948 rows) and {args.rows:,} synthetic visits; "
          f"budget {con.budget.total}\n")
    for title, sql in DEMO_QUERIES:
        res = con.sql(sql, epsilon=args.epsilon, delta=1e-7)
        print(f"-- {title}\n{sql}\n{res!r}\n")
    left = con.budget.remaining
    print(f"budget left: ε={left.epsilon:.4g} δ={left.delta:.4g} "
          f"(spent ε={con.budget.spent.epsilon:.4g} on {len(con.budget.charges)} queries)")
    return 0


def _connect(args: argparse.Namespace):
    import dpsql

    budget: dpsql.Budget | None = None  # with a ledger: the budget stored in the file
    if args.budget_epsilon is not None or not args.ledger:
        budget = dpsql.Budget(epsilon=args.budget_epsilon or 1.0, delta=args.budget_delta)
    return dpsql.connect(args.database, budget=budget, catalog=args.catalog, seed=args.seed,
                         ledger=args.ledger, analyst=args.analyst)


def _query(args: argparse.Namespace) -> int:
    con = _connect(args)
    res = con.sql(args.command, epsilon=args.epsilon, delta=args.delta)
    if args.format == "json":
        print(json.dumps(res.ci(0.95).to_pylist(), default=str))
    elif args.format == "csv":
        import pyarrow.csv as pacsv

        pacsv.write_csv(res.ci(0.95), sys.stdout.buffer)
    else:
        print(repr(res))
    return 0


def _explain(args: argparse.Namespace) -> int:
    con = _connect(args)
    info = con.explain(args.sql, epsilon=args.epsilon, delta=args.delta)
    print(json.dumps(info.to_dict(), indent=2) if args.format == "json" else str(info))
    return 0


def _budget(args: argparse.Namespace) -> int:
    if args.guide:
        from dpsql.accounting.guide import render_guide

        print(render_guide())
        return 0
    print(_connect(args).report())
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dpsql", description="Differentially private SQL on DuckDB.",
        epilog="Example: dpsql --catalog catalog.toml -c \"SELECT COUNT(*) FROM visits\"")
    parser.add_argument("database", nargs="?", default=":memory:",
                        help="DuckDB database file (default: in memory)")
    parser.add_argument("-c", "--command", help="run one SQL query and print the noisy answer")
    parser.add_argument("--catalog", help="TOML file declaring private and public tables")
    parser.add_argument("--epsilon", type=float, default=1.0, help="ε for this query (default 1)")
    parser.add_argument("--delta", type=float, default=None, help="δ for this query")
    parser.add_argument("--budget-epsilon", type=float, default=None,
                        help="total ε budget (default 1, or what the ledger file holds)")
    parser.add_argument("--ledger", help="durable privacy ledger file shared by every process")
    parser.add_argument("--analyst", default="default", help="whose budget to spend")
    parser.add_argument("--budget-delta", type=float, default=1e-6, help="total δ budget")
    parser.add_argument("--seed", type=int, default=None,
                        help="fixed noise seed: reproducible but NOT private (tests only)")
    parser.add_argument("--format", choices=("table", "json", "csv"), default="table")
    sub = parser.add_subparsers(dest="cmd")
    demo = sub.add_parser("demo", help="run example queries on shipped data",
                          description="Example: dpsql demo --rows 200000")
    demo.add_argument("--rows", type=int, default=200_000, help="synthetic visits to generate")
    demo.add_argument("--epsilon", type=float, default=0.5, help="ε per demo query")
    demo.add_argument("--seed", type=int, default=None, help="fixed noise seed (not private)")
    budget = sub.add_parser("budget", help="show the budget, or how to choose epsilon",
                            description="Example: dpsql budget --guide")
    budget.add_argument("--guide", action="store_true",
                        help="typical epsilon per use case and advice on delta")
    explain = sub.add_parser("explain", help="show the plan and cost of a query (no data read)",
                             description="Example: dpsql --catalog c.toml explain \"SELECT ...\"")
    explain.add_argument("sql")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    handler = {"demo": _demo, "explain": _explain, "budget": _budget}.get(args.cmd)
    if handler is None and args.command is None:
        parser.print_help(sys.stderr)
        return 2
    from dpsql.errors import Error

    try:
        return (handler or _query)(args)
    except Error as err:
        print(f"dpsql: {type(err).__name__}: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
