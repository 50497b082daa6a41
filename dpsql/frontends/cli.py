"""The ``dpsql`` command line (docs/cli.md is its reference).

Examples::

    dpsql demo                                    # private answers on shipped data
    dpsql catalog.toml -c "SELECT COUNT(*) FROM visits" --epsilon 0.5
    dpsql catalog.toml explain "SELECT AVG(cost) FROM visits"
    dpsql catalog.toml shell < queries.sql

DATABASE is a TOML catalog (``*.toml``, same as ``--catalog``) or a DuckDB database
file whose tables a ``--catalog`` registers. This module imports only the standard
library and :mod:`dpsql.errors`; DuckDB, sqlglot, SciPy and Arrow load when a command
runs, so ``dpsql --help`` starts fast. Errors are one ``error: ...`` line on stderr
and an exit code from EXIT_CODES:

>>> [(name, c.code) for name, c in EXIT_CODES.items()][:6]
[('ok', 0), ('execution', 1), ('usage', 2), ('invalid', 3), ('refused', 4), ('budget', 5)]
>>> from dpsql.errors import UnsupportedQueryError
>>> describe(UnsupportedQueryError("SELECT list: `MAX(x)` is not supported"))
(4, 'UnsupportedQueryError: SELECT list: `MAX(x)` is not supported')
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import sys
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path

from dpsql.errors import BudgetExceededError, OperationalError
from dpsql.frontends.common import (
    EXIT_CODES,
    FORMATS,
    UsageError,
    answer,
    describe,
    interrupted,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from typing import Any, NoReturn

    from dpsql.accounting.values import Budget
    from dpsql.connection import Connection

COMMANDS = ("shell", "explain", "budget", "suggest-bounds", "demo", "serve", "users",
            "audit")
DUCKDB_MAGIC = b"DUCK"
"""Bytes 8-11 of every DuckDB database file."""
SOURCE_ALIAS = "source_database"
"""The name a DATABASE file is attached under (its tables are also found unqualified)."""
DEMO_EPSILON = 0.5
DEMO_QUERIES = (
    ("How many people, and how old and rich are they on average? (PUMS, user-level)",
     "SELECT COUNT(DISTINCT pid) AS people, AVG(age) AS mean_age, AVG(income) AS mean_income "
     "FROM pums"),
    ("Income by sex (public keys: both groups always appear; n counts rows, at most 2 a "
     "person)",
     "SELECT sex, COUNT(*) AS n, AVG(income) AS mean_income FROM pums GROUP BY sex ORDER BY sex"),
    ("Top specialties by visits (private keys: DP partition selection)",
     "SELECT specialty, COUNT(*) AS visits, COUNT(DISTINCT patient_id) AS patients "
     "FROM visits GROUP BY specialty ORDER BY visits DESC LIMIT 8"),
    ("Cost by region, clamped to [0, 2000] per visit",
     "SELECT region, SUM(cost) AS total_cost, AVG(cost) AS mean_cost FROM visits "
     "GROUP BY region ORDER BY total_cost DESC"),
)


class _Parser(argparse.ArgumentParser):
    """argparse, with usage errors raised as UsageError (one line on stderr, exit 2)."""

    def __init__(self, **options: Any) -> None:
        super().__init__(formatter_class=_Formatter, **options)

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message}; see {self.prog} --help")


class _Formatter(argparse.HelpFormatter):
    """Help wrapped to the terminal's width, found without importing shutil (start-up time)."""

    def __init__(self, prog: str) -> None:
        try:
            columns = os.get_terminal_size(sys.stdout.fileno()).columns
        except (OSError, ValueError):  # not a terminal
            columns = 80
        super().__init__(prog, width=max(columns, 40) - 2)


QUERY_OPTIONS: tuple[tuple[tuple[str, ...], dict[str, Any]], ...] = (
    (("--catalog",), {"metavar": "TOML",
                      "help": "TOML file declaring private and public tables (docs/catalog.md)"}),
    (("--epsilon",), {"type": float, "metavar": "E",
                      "help": "ε of each query (default: a tenth of the ε the budget has left)"}),
    (("--delta",), {"type": float, "metavar": "D",
                    "help": "δ of each query (default min(1e-7, budget δ))"}),
    (("--budget-epsilon",), {"type": float, "metavar": "E",
                             "help": "total ε budget (default 1, or what the ledger holds)"}),
    (("--budget-delta",), {"type": float, "metavar": "D", "help": "total δ budget (default 1e-6)"}),
    (("--reset-budget",), {"action": "store_true",
                           "help": "replace the ledger's budget with --budget-epsilon and "
                                   "--budget-delta (what was spent stays spent)"}),
    (("--ledger",), {"metavar": "FILE|URL",
                     "help": "durable privacy ledger shared by every process and run: a "
                             "SQLite file, or postgresql://USER@HOST:PORT/DB"}),
    (("--analyst",), {"metavar": "NAME", "help": "whose budget to spend (default: default)"}),
    (("--seed",), {"type": int, "metavar": "N",
                   "help": "fixed noise seed: reproducible but NOT private (tests only)"}),
    (("--format",), {"choices": FORMATS, "help": "query output format (default table)"}),
)
"""Options accepted before the command and after it (``dpsql explain SQL --epsilon 0.2``)."""
DEFAULTS = {"catalog": None, "epsilon": None, "delta": None, "budget_epsilon": None,
            "budget_delta": 1e-6, "reset_budget": False, "ledger": None, "analyst": "default",
            "seed": None, "format": "table"}
_TAKES_VALUE = {"-c", "--command", *(flag for flags, _ in QUERY_OPTIONS for flag in flags)}


def parser() -> argparse.ArgumentParser:
    """The command line's parser (its subcommands: ``subcommands(parser())``)."""
    parser = _Parser(
        prog="dpsql", description="Differentially private SQL on DuckDB.",
        usage="dpsql [OPTIONS] [DATABASE] (-c SQL | shell | explain SQL | budget | "
              "suggest-bounds TABLE | demo) | "
              "dpsql (serve | users | audit) ...",
        epilog="DATABASE is a catalog.toml (as --catalog) or a DuckDB database file. "
               "Example: dpsql catalog.toml -c \"SELECT COUNT(*) FROM visits\". "
               "Exit codes and every option: docs/cli.md.")
    parser.add_argument("--version", action="version", version=f"dpsql {_version()}")
    parser.add_argument("-c", "--command", metavar="SQL",
                        help="answer one SQL query with noise and print it")
    _add_query_options(parser, defaults=True)
    sub = parser.add_subparsers(dest="cmd", metavar="COMMAND", parser_class=_Parser,
                                prog="dpsql [OPTIONS] [DATABASE]", help="what to do (or -c SQL)")
    shell = sub.add_parser("shell", help="interactive SQL shell; also runs piped scripts",
                           description="SQL ends with ';'; .help lists dot-commands. "
                                       "Example: dpsql catalog.toml shell < queries.sql")
    explain = sub.add_parser("explain", help="the plan and cost of a query (no data read)",
                             description="Example: dpsql catalog.toml explain \"SELECT ...\"")
    explain.add_argument("sql", metavar="SQL", help="the query to explain")
    budget = sub.add_parser("budget", help="the budget spent and left, or how to choose ε",
                            description="Example: dpsql --ledger l.db --analyst ann budget")
    budget.add_argument("--guide", action="store_true",
                        help="typical ε per use case and advice on δ")
    suggest = sub.add_parser(
        "suggest-bounds", help="propose bounds and limits for a table, privately",
        description="Spends --epsilon and --delta (default ε=1, δ=1e-6) on private "
                    "histograms and prints the catalog lines they suggest. Example: dpsql "
                    "catalog.toml suggest-bounds visits --group-by specialty --output new.toml")
    suggest.add_argument("table", metavar="TABLE", help="a private table of the catalog")
    suggest.add_argument("--group-by", metavar="COLUMN",
                         help="the column queries group by, for its group limits")
    suggest.add_argument("--coverage", type=float, default=0.95, metavar="C",
                         help="share of people whose rows a suggested limit keeps (0.95)")
    suggest.add_argument("--output", metavar="TOML",
                         help="write the catalog with the suggestion in the table's entry")
    for command in (shell, explain, budget, suggest):
        _add_query_options(command, defaults=False)
    demo = sub.add_parser("demo", help="example queries on shipped data",
                          description="Example: dpsql demo --rows 20000")
    demo.add_argument("--rows", type=int, default=200_000, help="synthetic visits to generate")
    demo.add_argument("--epsilon", type=float, metavar="E",
                      help=f"ε per demo query (default {DEMO_EPSILON})")
    demo.add_argument("--seed", type=int, metavar="N", help="fixed noise seed (NOT private)")
    _add_server_commands(sub)
    return parser


def _add_server_commands(sub) -> None:
    """``serve``, ``users`` and ``audit``: the PostgreSQL-protocol server (docs/server.md)."""
    _add_serve(sub)
    _add_users(sub)
    _add_audit(sub)


def _add_serve(sub) -> None:
    """``serve``: the options of the server and of each analyst's session."""
    serve = sub.add_parser("serve", help="serve analysts over the PostgreSQL protocol",
                           description="Example: dpsql serve catalog.toml --ledger ledger.db "
                                       "--port 5433")
    serve.add_argument("catalog_file", metavar="CATALOG", nargs="?",
                       help="the catalog.toml of the tables to serve")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on")
    serve.add_argument("--port", type=int, default=5433, help="port to listen on")
    serve.add_argument("--tls-cert", metavar="PEM", help="TLS certificate (with --tls-key)")
    serve.add_argument("--tls-key", metavar="PEM", help="TLS private key")
    serve.add_argument("--session-memory", metavar="SIZE", default="256MiB",
                       help="memory each session's engine may use (default 256MiB)")
    serve.add_argument("--session-threads", type=int, default=2, metavar="N",
                       help="threads each session's engine runs a query on (default 2)")
    serve.add_argument("--memory-cap", metavar="SIZE", help="memory the whole server may use; "
                       "it takes only as many sessions as fit (default: 3/4 of the machine's)")
    serve.add_argument("--max-connections", type=int, default=64, metavar="N",
                       help="sessions at most (default 64; fewer if --memory-cap says so)")
    serve.add_argument("--max-pending", type=int, default=128, metavar="N",
                       help="connections still logging in at most (default 128)")
    serve.add_argument("--login-timeout", type=float, default=10.0, metavar="SECONDS",
                       help="a connection not logged in this long after it connects is "
                            "dropped (default 10)")
    serve.add_argument("--session-disk", metavar="SIZE", default="1GiB",
                       help="temporary files each session's engine may spill to "
                            "(default 1GiB)")
    serve.add_argument("--statement-timeout", type=float, default=300.0, metavar="SECONDS",
                       help="a private query running longer is cancelled, and charged in "
                            "full (default 300)")
    serve.add_argument("--time-quantum", type=float, default=0.05, metavar="SECONDS",
                       help="private answers and cancels keep to a grid of this many seconds, "
                            "so the clock shows little of the data (default 0.05; 0: none)")
    serve.add_argument("--engine", choices=("duckdb", "spark"),
                       help="the engine that runs the queries (default: the catalog's "
                            "[engine] name, else duckdb); every session of a Spark server "
                            "shares one SparkSession")
    serve.add_argument("--spark-master", metavar="URL",
                       help="Spark's master, e.g. spark://host:7077 or 'local[2]' (default: "
                            "the catalog's [engine] master, else spark-submit's --master)")
    _add_server_ledger(serve)


USER_ACTIONS = (("add", "add an analyst with a budget and a password", " alice --epsilon 3"),
                ("list", "every analyst with budget and spend", ""),
                ("set-budget", "give an analyst a new total budget (spends stay spent)",
                 " alice --epsilon 5 --delta 1e-6"),
                ("remove", "remove a login (spends stay in the ledger)", " alice"),
                ("reset-password", "set a new password", " alice"))
"""``dpsql users`` actions: name, help and the arguments of its example."""


def _add_users(sub) -> None:
    """``users``: add, list, set-budget, remove or reset-password an analyst."""
    users = sub.add_parser("users", help="the server's analysts: add, list, set-budget, "
                                         "remove, reset-password",
                           description="Example: dpsql users add alice --ledger ledger.db "
                                       "--epsilon 3 --delta 1e-6")
    actions = users.add_subparsers(dest="action", metavar="ACTION", parser_class=_Parser,
                                   required=True, help=", ".join(a[0] for a in USER_ACTIONS))
    for name, text, example in USER_ACTIONS:
        action = actions.add_parser(name, help=text, description=f"{text}. Example: dpsql "
                                    f"users {name}{example} --ledger ledger.db")
        if name != "list":
            action.add_argument("name", metavar="NAME", help="the analyst's login name")
        action.add_argument("--ledger", metavar="FILE|URL", required=True,
                            help="the ledger the server uses: a SQLite file, or "
                                 "postgresql://USER@HOST:PORT/DB")
        if name in ("add", "reset-password"):
            action.add_argument("--password-stdin", action="store_true",
                                help="read the password from standard input's first line")
        if name in ("add", "set-budget"):
            _add_budget_options(action, adding=name == "add")


def _add_budget_options(action: argparse.ArgumentParser, *, adding: bool) -> None:
    """``--epsilon`` or ``--rho``, and ``--delta``: required to add, each optional to set."""
    kept = "" if adding else " (default: as stored)"
    total = action.add_mutually_exclusive_group(required=adding)
    total.add_argument("--epsilon", type=float, metavar="E",
                       help=f"the analyst's total ε budget{kept}")
    total.add_argument("--rho", type=float, metavar="R",
                       help=f"a ρ-zCDP budget instead: the analyst's total ρ{kept}")
    action.add_argument("--delta", type=float, default=1e-6 if adding else None, metavar="D",
                        help="the analyst's total δ budget (default "
                             f"{'1e-6' if adding else 'as stored'})")


def _add_audit(sub) -> None:
    """``audit``: who asked what, and its cost."""
    audit = sub.add_parser("audit", help="the server's audit log: who asked what, and its cost",
                           description="Example: dpsql audit --ledger ledger.db --last 20")
    audit.add_argument("--user", metavar="NAME", help="only this analyst's statements")
    audit.add_argument("--last", type=int, metavar="N", help="only the last N statements")
    _add_server_ledger(audit)


def _add_server_ledger(command: argparse.ArgumentParser) -> None:
    """The ledger ``serve`` and ``audit`` share: users, budgets and the audit log."""
    command.add_argument("--ledger", metavar="FILE|URL", required=True,
                         help="the ledger holding users, budgets and the audit log: a SQLite "
                              "file, or postgresql://USER@HOST:PORT/DB")


def _add_query_options(parser: argparse.ArgumentParser, *, defaults: bool) -> None:
    """Add QUERY_OPTIONS; a command's copy leaves unset options to the main parser."""
    for flags, options in QUERY_OPTIONS:
        default = DEFAULTS[flags[0].lstrip("-").replace("-", "_")]
        parser.add_argument(*flags, **options,
                            default=default if defaults else argparse.SUPPRESS)


def _version() -> str:
    from dpsql import __version__

    return __version__


def split_database(argv: Sequence[str]) -> tuple[str | None, list[str]]:
    """The DATABASE argument (the first positional word that is not a command), and the rest.

    >>> split_database(["--epsilon", "0.5", "c.toml", "-c", "SELECT 1"])
    ('c.toml', ['--epsilon', '0.5', '-c', 'SELECT 1'])
    >>> split_database(["shell", "--format=json"])
    (None, ['shell', '--format=json'])
    """
    i = 0
    while i < len(argv):
        word = argv[i]
        if word == "--" or not word.startswith("-") or word == "-":
            break
        i += 2 if word in _TAKES_VALUE else 1
    if i >= len(argv) or argv[i] in COMMANDS:
        return None, list(argv)
    j = i + 1 if argv[i] == "--" else i
    if j >= len(argv):
        return None, list(argv[:i])
    return argv[j], [*argv[:i], *argv[j + 1:]]


def _sources(args: argparse.Namespace) -> tuple[str | None, str | None]:
    """The DuckDB database file (None: in memory only) and the catalog the options name."""
    database = args.database
    if database is None or database == ":memory:":
        return None, args.catalog
    if database.endswith(".toml"):
        if args.catalog is not None:
            raise UsageError(f"two catalogs: {database} and --catalog {args.catalog}; give one")
        return None, database
    if not Path(database).is_file():
        raise UsageError(f"no such DuckDB database file: {database} (a catalog must end in "
                         ".toml; dpsql never creates a database)")
    with open(database, "rb") as file:
        if file.read(12)[8:] != DUCKDB_MAGIC:
            raise UsageError(f"{database} is not a DuckDB database file; declare CSV, parquet "
                             "and JSON files as sources in a catalog.toml (docs/catalog.md)")
    return database, args.catalog


@contextlib.contextmanager
def _connected(args: argparse.Namespace) -> Iterator[Connection]:
    """A dpsql connection as the options describe it, on a DuckDB engine closed afterwards."""
    import duckdb

    import dpsql
    from dpsql.accounting.ledger import stored_budget
    from dpsql.catalog import read_toml
    from dpsql.connection import declared_budget
    from dpsql.frontends.progress import is_terminal

    database, catalog = _sources(args)
    declared = declared_budget(read_toml(catalog), catalog) if catalog else None
    budget = _asked_budget(args, stored_budget(args.ledger, args.analyst) if args.ledger
                           else None, declared)
    # dpsql does not close an engine it is given: this one is ours to close, before the
    # interpreter exits (a DuckDB connection left to interpreter shutdown can abort it).
    with duckdb.connect() as engine:
        if database is not None:
            _attach_read_only(engine, database)
        # DuckDB's own progress bar would go to stdout, even into a pipe, after 2 s: never
        # print it. Track progress only for our own line on a terminal.
        engine.execute("SET enable_progress_bar_print = false")
        engine.execute(f"SET enable_progress_bar = {str(is_terminal(sys.stderr)).lower()}")
        with dpsql.connect(engine, budget=budget, catalog=catalog, seed=args.seed,
                           ledger=args.ledger, analyst=args.analyst,
                           reset_budget=args.reset_budget) as con:
            yield con


def _asked_budget(args: argparse.Namespace, stored, declared) -> Budget | None:
    """The budget the options ask for; None to use the one the ledger holds (``stored``).

    The budget flags, else the catalog's ``[budget]`` (``declared``), else the defaults.
    Without a ledger, or with one that holds no budget for the analyst yet, that budget;
    with one that does, the stored budget, unless the flags or the catalog ask for
    another: then ``--reset-budget`` is needed, as spending is kept across runs.
    """
    from dpsql.accounting.values import Budget

    flagged = args.budget_epsilon is not None or args.budget_delta != DEFAULTS["budget_delta"]
    if flagged or declared is None:
        epsilon = 1.0 if args.budget_epsilon is None else args.budget_epsilon
        asked = Budget(epsilon=epsilon, delta=args.budget_delta)
    else:
        asked = declared
    if stored is None or args.reset_budget:
        return asked
    if not flagged and declared is None:
        return None
    if (stored.epsilon, stored.delta, stored.rho) == (asked.epsilon, asked.delta, asked.rho):
        return None
    where = ("leave out --budget-epsilon and --budget-delta to use it" if flagged else
             "change the catalog's [budget] to it")
    raise UsageError(f"the ledger {args.ledger} already holds the budget {stored} for "
                     f"analyst {args.analyst!r}, not {asked} (what was spent stays spent): "
                     f"{where}, or add --reset-budget to replace it")


def _attach_read_only(engine, database: str) -> None:
    """Make the tables of a DuckDB file visible, read-only: dpsql never changes the file.

    The file is attached next to the in-memory database (which receives the tables a
    catalog loads from CSV, parquet or JSON files) and searched after it. Read-only
    attachments also let several dpsql processes read one file at once.
    """
    import duckdb

    quoted = "'" + database.replace("'", "''") + "'"
    try:
        engine.execute(f"ATTACH {quoted} AS {SOURCE_ALIAS} (READ_ONLY)")
    except duckdb.Error as err:
        raise OperationalError(f"cannot open the DuckDB database {database}: "
                               f"{' '.join(str(err).split())}") from None
    engine.execute(f"SET search_path = 'memory.main,{SOURCE_ALIAS}.main'")


def subcommands(main: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The parsers of ``main``'s subcommands, by name (argparse keeps them private; this is
    the one place that reads them, for the docs check)."""
    actions = [a for a in main._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(actions[0].choices) if actions else {}


def options(command: argparse.ArgumentParser) -> list[tuple[list[str], str | None]]:
    """Each argument of a parser: its flags (empty for a positional) and its help text."""
    return [(list(a.option_strings), a.help) for a in command._actions]


def _query(args: argparse.Namespace) -> int:
    from dpsql.frontends.output import render, side_note, side_notes

    with _connected(args) as con:
        result = answer(con, args.command, epsilon=args.epsilon, delta=args.delta)
        print(render(result, args.format), flush=True)
        for note in side_notes(result, args.format):
            print(f"note: {note}", file=sys.stderr)
        if (note := side_note(result, args.format)) is not None and sys.stderr.isatty():
            print(note, file=sys.stderr, flush=True)
    return 0


def _shell(args: argparse.Namespace) -> int:
    from dpsql.frontends import shell

    with _connected(args) as con:
        session = shell.Session(con, epsilon=args.epsilon, delta=args.delta, fmt=args.format,
                                out=sys.stdout)
        if not sys.stdin.isatty():
            return shell.run(session, shell.piped_reader(sys.stdin), interactive=False)
        read, save = shell.terminal_reader(shell.HISTORY, shell.Completer(
            lambda: {info.name: list(info.columns) for info in con.catalog}))
        print(f"dpsql {_version()} shell: SQL ends with ';'; .help lists commands, .quit "
              f"leaves. Budget {con.budget.total}, ε per query "
              f"{con.default_epsilon if args.epsilon is None else args.epsilon:g}.")
        try:
            return shell.run(session, read, interactive=True)
        finally:
            save()


def _explain(args: argparse.Namespace) -> int:
    with _connected(args) as con:
        info = con.explain(args.sql, epsilon=args.epsilon, delta=args.delta)
    if args.format == "json":
        import json

        print(json.dumps(info.to_dict(), indent=2))
    else:
        print(info)
    return 0


def _budget(args: argparse.Namespace) -> int:
    if args.guide:
        from dpsql.accounting.guide import render_guide

        print(render_guide())
        return 0
    with _connected(args) as con:
        print(con.report())
    return 0


def _suggest_bounds(args: argparse.Namespace) -> int:
    import tomllib

    from dpsql.suggest import catalog_toml

    if args.output is not None and Path(args.output).exists():
        raise UsageError(f"{args.output} exists; --output writes a new catalog file, give "
                         "another name")
    with _connected(args) as con:
        suggestion = con.suggest_bounds(
            args.table, epsilon=1.0 if args.epsilon is None else args.epsilon,
            delta=1e-6 if args.delta is None else args.delta, group_by=args.group_by,
            coverage=args.coverage)
        catalog = _sources(args)[1]
    print(suggestion.toml())
    if args.output is None:
        return 0
    if catalog is None:
        raise UsageError("--output rewrites a catalog: give the catalog.toml the table is in")
    doc = tomllib.loads(Path(catalog).read_text())
    entry = next((e for n, e in doc.get("tables", {}).items()
                  if n.lower() == suggestion.table.lower()), None)
    if entry is None:
        raise UsageError(f"{suggestion.table} is not a [tables.*] entry of {catalog}")
    entry.update(suggestion.options())
    folder = Path(catalog).resolve().parent
    for section in ("tables", "public"):  # sources stay where they are from the new file
        for item in doc.get(section, {}).values():
            if not Path(item["source"]).is_absolute() and (folder / item["source"]).exists():
                item["source"] = str(folder / item["source"])
    Path(args.output).write_text(catalog_toml(doc))
    print(f"# written to {args.output}", file=sys.stderr)
    return 0


def _demo(args: argparse.Namespace) -> int:
    import dpsql
    from dpsql.datasets import REGIONS, pums_path, visits

    epsilon = DEMO_EPSILON if args.epsilon is None else args.epsilon
    con = dpsql.connect(budget=dpsql.Budget(epsilon=4.0, delta=1e-6), seed=args.seed)
    con.register("pums", str(pums_path("PUMS_dup")), privacy_unit="pid",
                 bounds={"age": (0, 100), "income": (0, 500_000)}, max_groups_per_unit=1,
                 max_rows_per_group=2, public_keys={"sex": [0, 1]})
    con.register("visits", visits(args.rows, seed=1), privacy_unit="patient_id",
                 bounds={"cost": (0, 2000), "age": (0, 100)}, max_groups_per_unit=3,
                 max_rows_per_group=4, public_keys={"region": list(REGIONS)})
    print(_demo_intro(con, args.rows))
    for title, sql in DEMO_QUERIES:
        res = con.sql(sql, epsilon=epsilon, delta=1e-7)
        print(f"-- {title}\n{sql}\n{res!r}\n")
    left = con.budget.remaining
    print(f"budget left: ε={left.epsilon:.4g} δ={left.delta:.4g} "
          f"(spent ε={con.budget.spent.epsilon:.4g} on {len(con.budget.charges)} queries)")
    return 0


def _demo_intro(con: Connection, rows: int) -> str:
    """The demo's tables with what each declares, and what the limits do to the counts."""
    import textwrap

    from dpsql.frontends.shell import describe_table

    tables = "\n".join(describe_table(con.catalog.get(name)) for name in ("pums", "visits"))
    limits = textwrap.fill(
        "pums is PUMS_dup.csv: 1,948 rows of 1,000 people, up to 4 rows each. One person "
        "adds at most 2 rows to a group (max_rows_per_group 2), so COUNT(*) counts the rows "
        "kept under that limit, fewer than the file's 1,948; COUNT(DISTINCT pid) counts "
        f"people. visits holds {rows:,} synthetic hospital visits; a patient counts in at "
        "most 3 specialties or regions, with at most 4 visits in each.", width=92)
    return (f"dpsql demo: budget {con.budget.total}. The tables, with what each declares:\n"
            f"{tables}\n\n{limits}\n")


def _serve(args: argparse.Namespace) -> int:
    from dpsql.frontends.server.admin import serve
    from dpsql.frontends.server.limits import memory_size
    from dpsql.frontends.server.server import ServerConfig

    catalog = args.catalog_file or args.database or args.catalog
    if catalog is None:
        raise UsageError("serve needs a catalog: dpsql serve catalog.toml --ledger ledger.db")
    cap = None if args.memory_cap is None else memory_size(args.memory_cap)
    with _listening(args.host, args.port):
        return serve(ServerConfig(catalog=catalog, ledger=args.ledger, host=args.host,
                                  port=args.port, tls_cert=args.tls_cert, tls_key=args.tls_key,
                                  session_memory=memory_size(args.session_memory),
                                  session_threads=args.session_threads, memory_cap=cap,
                                  max_connections=args.max_connections,
                                  max_pending=args.max_pending,
                                  login_timeout=args.login_timeout,
                                  session_disk=memory_size(args.session_disk),
                                  statement_timeout=args.statement_timeout,
                                  time_quantum=args.time_quantum, engine=args.engine,
                                  spark_master=args.spark_master))


ADDRESS_ERRORS = {
    errno.EADDRINUSE: "it is in use: give another --port (e.g. --port {next}), or stop what "
                      "listens there",
    errno.EADDRNOTAVAIL: "it is not an address of this machine: give one of its addresses as "
                         "--host (e.g. --host 127.0.0.1)",
    errno.EACCES: "a port below 1024 needs privileges: give --port 1024 or above (e.g. "
                  "--port 5433)",
}
"""Why the server cannot listen where the options say, and the option to change, by errno."""


@contextlib.contextmanager
def _listening(host: str, port: int) -> Iterator[None]:
    """A failure to listen on ``host:port`` as a usage error naming the option to change."""
    from dpsql.frontends.server.server import ListenError

    try:
        yield
    except ListenError as error:
        why = ADDRESS_ERRORS.get(error.errno, "{reason}: check --host and --port")
        raise UsageError(f"cannot listen on {host}:{port}: "
                         + why.format(next=port + 1, reason=error.reason)) from None


def _users(args: argparse.Namespace) -> int:
    from dpsql.frontends.server import admin

    if args.action == "list":
        print(admin.users_list(args.ledger))
    elif args.action == "set-budget":
        if args.epsilon is None and args.rho is None and args.delta is None:
            raise UsageError("set-budget needs --epsilon, --rho or --delta; see dpsql users "
                             "set-budget --help")
        print(admin.users_set_budget(args.ledger, args.name, epsilon=args.epsilon,
                                     delta=args.delta, rho=args.rho))
    elif args.action == "remove":
        print(admin.users_remove(args.ledger, args.name))
    else:
        password = admin.read_password(args.password_stdin)
        print(admin.users_add(args.ledger, args.name, epsilon=args.epsilon, delta=args.delta,
                              rho=args.rho, password=password) if args.action == "add" else
              admin.users_reset_password(args.ledger, args.name, password))
    return 0


def _audit(args: argparse.Namespace) -> int:
    from dpsql.frontends.server.admin import audit

    print(audit(args.ledger, user=args.user, last=args.last))
    return 0


def _dispatch(argv: Sequence[str]) -> int:
    database, rest = split_database(argv)
    args = parser().parse_args(rest)
    args.database = database
    if args.cmd is not None and args.command is not None:
        raise UsageError(f"-c runs one query; it cannot be combined with {args.cmd}")
    if args.cmd == "demo" and database is not None:
        raise UsageError("demo uses the shipped data; it takes no DATABASE")
    handler = {"demo": _demo, "shell": _shell, "explain": _explain, "budget": _budget,
               "suggest-bounds": _suggest_bounds, "serve": _serve, "users": _users,
               "audit": _audit,
               None: _query if args.command is not None else None}[args.cmd]
    if handler is None:
        raise UsageError("give -c SQL or a command: shell, explain SQL, budget or demo")
    return handler(args)


def _warning_line(message, category, filename, lineno, file=None, line=None) -> None:
    """Warnings as one ``warning: ...`` line on stderr (no source location), their Python
    advice said as flags and catalog keys."""
    from dpsql.frontends.advice import for_cli

    text = for_cli(" ".join(str(message).split()))
    sys.stderr.write(f"warning: {category.__name__}: {text}\n")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code (see EXIT_CODES)."""
    with warnings.catch_warnings():
        warnings.showwarning = _warning_line
        try:
            return _dispatch(sys.argv[1:] if argv is None else argv)
        except KeyboardInterrupt as error:
            sys.stderr.write(f"error: {interrupted(error)}\n")
            return EXIT_CODES["interrupted"].code
        except BrokenPipeError:
            _silence_stdout()
            return EXIT_CODES["broken_pipe"].code
        except Exception as error:  # every failure becomes one line and an exit code
            code, message = describe(error)
            if isinstance(error, BudgetExceededError):
                message += (" (on the command line: --epsilon asks for less; --budget-epsilon "
                            "sets the total, with --reset-budget when a --ledger holds one)")
            sys.stderr.write(f"error: {message}\n")
            return code


def _silence_stdout() -> None:
    """After a broken pipe, point stdout at /dev/null so the exit flush cannot fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


if __name__ == "__main__":
    sys.exit(main())
