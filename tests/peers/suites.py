"""Peers' own test queries, read from their repositories, and the tables they run on.

Each peer keeps its DP SQL test queries in its own format; this module reads them as the
peer's own test driver does and says whether the peer answers or refuses each one:

- **SmartNoise SQL** (opendp/smartnoise-sdk): ``sql/tests/query/queries/<stage>/*.sql``,
  queries split on ``;`` after dropping ``--`` lines; a ``_fail`` file holds queries the
  peer refuses. ``sql/tests/rewriter/test_rewriting.py`` lists more in ``queries = [...]``.
- **ZetaSQL** (google/zetasql): ``zetasql/compliance/testdata/*.test``, cases separated by
  ``==`` lines, the query before a ``--`` line, its expected output after; an output that
  starts with ``ERROR:`` is a refusal. ``[prepare_database]`` cases create the tables.
- **Qrlew** (Qrlew/pyqrlew): ``tests/queries/base_queries.sql``, one query per line, ``--``
  lines skipped; the peer answers each.

The peers' metadata is translated to dpsql registrations (``Peer.tables``): the same
columns, privacy units and bounds; two-part names (``PUMS.PUMS``) name the registered table;
the data is the peer's where it ships in its repository (ZetaSQL's tables, SmartNoise's
PUMS sample, which dpsql ships too) and synthetic with the declared types and ranges where
it does not (SmartNoise's devices, Qrlew's census).
"""

from __future__ import annotations

import ast
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.csv
import sqlglot

import dpsql
from dpsql.datasets import pums_path
from dpsql.dialect import dialect as dpsql_dialect
from dpsql.dialect import parse_one


@dataclass(frozen=True)
class Query:
    """One peer test query: where it comes from, its SQL, and whether the peer answers it."""

    source: str
    sql: str
    peer_answers: bool


class Repository:
    """Files of a peer's repository: a checkout or a bare git directory (``git show``)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.bare = not (self.path / ".git").exists() and (self.path / "HEAD").is_file()

    def read(self, name: str) -> str:
        if not self.bare:
            return (self.path / name).read_text()
        return subprocess.run(["git", f"--git-dir={self.path}", "show", f"HEAD:{name}"],
                              check=True, capture_output=True, text=True).stdout

    def commit(self) -> str:
        git = ["git", f"--git-dir={self.path}"] if self.bare else ["git", "-C", str(self.path)]
        return subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True,
                              text=True).stdout.strip()


# --- the peers' formats --------------------------------------------------------------------

def semicolon_file(text: str) -> list[str]:
    """SmartNoise's query files: ``--`` lines dropped, the rest split on ``;``.

    >>> semicolon_file("SELECT 1;\\n-- SELECT 2;\\nSELECT\\n 3;")
    ['SELECT 1', 'SELECT\\n  3']
    """
    body = " ".join(line for line in text.splitlines(keepends=True)
                    if line.strip() and not line.strip().startswith("--"))
    return [q.strip() for q in body.split(";") if q.strip()]


def python_list(text: str, name: str) -> list[str]:
    """The strings of the list literal assigned to ``name`` in a Python file.

    >>> python_list("x = 1\\nqueries = ['SELECT 1', \\"SELECT 2\\"]\\n", "queries")
    ['SELECT 1', 'SELECT 2']
    """
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return [e.value for e in node.value.elts
                    if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    raise ValueError(f"no list named {name}")


@dataclass(frozen=True)
class ZetaCase:
    """One case of ZetaSQL's file-based tests."""

    options: tuple[str, ...]
    sql: str
    output: str


def zetasql_cases(text: str) -> list[ZetaCase]:
    """ZetaSQL's ``.test`` format: cases split by ``==`` lines; option lines ``[...]`` and
    ``#`` comments before the SQL; ``--`` separates the SQL from the expected output.

    >>> case, = zetasql_cases("[name=a]\\n# note\\nSELECT 1\\n--\\nERROR: no\\n")
    >>> case.options, case.sql, case.output
    (('name=a',), 'SELECT 1', 'ERROR: no')
    """
    cases = []
    for block in re.split(r"^==$", text, flags=re.MULTILINE):
        head, _, output = block.partition("\n--\n")
        options, sql = [], []
        for line in head.strip().splitlines():
            if re.fullmatch(r"\[.*\]", line.strip()):
                options.append(line.strip()[1:-1])
            elif not line.startswith("#"):
                sql.append(line.replace("\\#", "#"))
        if sql or options:
            cases.append(ZetaCase(tuple(options), "\n".join(sql).strip().rstrip(";"),
                                  output.strip()))
    return cases


def line_file(text: str) -> list[str]:
    """pyqrlew's query file: one query per line, ``--`` lines skipped.

    >>> line_file("SELECT 1;\\n-- SELECT 2;\\n\\nSELECT 3\\n")
    ['SELECT 1', 'SELECT 3']
    """
    return [line.strip().rstrip(";").strip() for line in text.splitlines()
            if line.strip() and not line.startswith("--")]


# --- the peers -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Peer:
    """A peer: how to read its queries from its repository and how to set up its tables."""

    name: str
    queries: Callable[[Repository], list[Query]]
    tables: Callable[[Repository, dpsql.Connection], None]
    dialect: str = "duckdb"
    translate: Callable[[str], str] = lambda sql: sql


SMARTNOISE_FILES = {
    "sql/tests/query/queries/validate_pums/validate_pums.sql": True,
    "sql/tests/query/queries/validate_pums/validate_pums_fail.sql": False,
    "sql/tests/query/queries/run/run.sql": True,
    "sql/tests/query/queries/rewrite/rewrites.sql": True,
}
SMARTNOISE_LISTS = {"sql/tests/rewriter/test_rewriting.py": "queries"}


def smartnoise_queries(repo: Repository) -> list[Query]:
    found = [Query(f"{path}#{i + 1}", sql, answers)
             for path, answers in SMARTNOISE_FILES.items()
             for i, sql in enumerate(semicolon_file(repo.read(path)))]
    found += [Query(f"{path}#{i + 1}", sql, True) for path, name in SMARTNOISE_LISTS.items()
              for i, sql in enumerate(python_list(repo.read(path), name))]
    return found


def smartnoise_tables(_: Repository, con: dpsql.Connection) -> None:
    """datasets/PUMS_pid.yaml (sex, educ, race, married text; age, income bounded; pid the
    unit) and
    sql/tests/query/Devices.yaml (Telemetry.Crashes, Census, Rollouts), devices synthetic."""
    text = {name: pa.string() for name in ("sex", "educ", "race", "married")}
    pums = pa.csv.read_csv(pums_path("PUMS_pid"),
                           convert_options=pa.csv.ConvertOptions(column_types=text))
    con.register("pums", pums, privacy_unit="pid",
                 bounds={"age": (0, 100), "income": (0, 500_000)})
    rng = np.random.default_rng(0)
    n = 3_000
    device = rng.integers(0, 1_000, n)
    con.register("crashes", pa.table({
        "Refurbished": rng.random(n) < 0.3, "Temperature": rng.uniform(25, 65, n),
        "Building": [f"b{i}" for i in rng.integers(0, 12, n)],
        "Region": rng.choice(["LATAM", "EMEA", "APAC", "NA"], n), "DeviceID": device,
        "Crashes": rng.integers(0, 11, n)}), privacy_unit="DeviceID",
        bounds={"Temperature": (25.0, 65.0), "Crashes": (0, 10)})
    con.register("census", pa.table({
        "DeviceID": device, "OEM": [f"o{i}" for i in rng.integers(0, 100, n)],
        "Memory": [f"m{i}" for i in rng.integers(0, 1000, n)],
        "Disk": rng.integers(100, 10_001, n)}), privacy_unit="DeviceID",
        bounds={"Disk": (100, 10_000)})


def zetasql_queries(repo: Repository) -> list[Query]:
    found = []
    for path in ZETASQL_FILES:
        for i, case in enumerate(zetasql_cases(repo.read(path))):
            if "prepare_database" not in case.options and case.sql:
                found.append(Query(f"{path}#{i + 1}", case.sql,
                                   not case.output.startswith("ERROR:")))
    return found


ZETASQL_FILES = ("zetasql/compliance/testdata/differential_privacy.test",
                 "zetasql/compliance/testdata/anonymization.test")


def zetasql_tables(repo: Repository, con: dpsql.Connection) -> None:
    """The tables the ``[prepare_database]`` cases create, with their own rows; a table
    with ``userid_column=uid`` is private with unit ``uid``, the others public."""
    made = set()
    for path in ZETASQL_FILES:
        for case in zetasql_cases(repo.read(path)):
            create = sqlglot.parse_one(case.sql, read="bigquery") \
                if "prepare_database" in case.options and "CREATE TABLE" in case.sql else None
            if create is None or create.this.name.lower() in made:
                continue
            name = create.this.name
            rows = duckdb.connect().sql(create.expression.sql(dialect="duckdb")).to_arrow_table()
            if "userid_column" in case.sql:
                con.register(name, rows, privacy_unit="uid")
            else:
                con.register_public(name, rows)
            made.add(name.lower())


def zetasql_translate(sql: str) -> str:
    """ZetaSQL's compliance tests ask for no noise (ε ≥ 1e10, δ from 0.1 to 1); dpsql refuses
    those on purpose, so the harness asks for ε = 1, δ = 1e-6 instead: the SQL is what is
    measured. Values a test means to be wrong (ε ≤ 0, δ > 1) stay as written."""
    def epsilon(match: re.Match) -> str:
        return "epsilon=1" if float(match.group(1)) >= 1e10 else match.group(0)

    def delta(match: re.Match) -> str:
        return "delta=1e-6" if 0.1 <= float(match.group(1)) <= 1 else match.group(0)

    number = r"\s*=\s*([0-9.]+(?:e[+-]?[0-9]+)?)(?![\w.])"
    sql = re.sub(r"(?i)\bepsilon" + number, epsilon, sql)
    return re.sub(r"(?i)\bdelta" + number, delta, sql)


def pyqrlew_queries(repo: Repository) -> list[Query]:
    path = "tests/queries/base_queries.sql"
    return [Query(f"{path}#{i + 1}", sql, True)
            for i, sql in enumerate(line_file(repo.read(path)))]


CENSUS_DOMAINS = {"workclass": 8, "education": 16, "marital_status": 7, "occupation": 14,
                  "relationship": 6, "race": 5, "native_country": 40, "income": 2}


def pyqrlew_tables(_: Repository, con: dpsql.Connection) -> None:
    """The census (Adult) table of pyqrlew's tests, row privacy, synthetic rows with the
    types and ranges of its schema (the real rows are a Git LFS file of another repo)."""
    rng = np.random.default_rng(0)
    n = 2_000
    columns = {"age": rng.integers(20, 91, n), "fnlwgt": rng.integers(1, 10**6, n).astype(str),
               "education_num": rng.integers(1, 17, n), "sex": rng.choice(["Male", "Female"], n),
               "capital_gain": rng.integers(0, 100_000, n),
               "capital_loss": rng.integers(0, 4_357, n),
               "hours_per_week": rng.integers(1, 100, n)}
    columns |= {name: [f"{name}{i}" for i in rng.integers(0, k, n)]
                for name, k in CENSUS_DOMAINS.items()}
    con.register("census", pa.table(columns), row_privacy=True,
                 bounds={"age": (20, 90), "education_num": (1, 16), "capital_gain": (0, 99_999),
                         "capital_loss": (0, 4_356), "hours_per_week": (1, 99)})


PEERS = {
    "smartnoise": Peer("SmartNoise SQL", smartnoise_queries, smartnoise_tables,
                       translate=lambda sql: unqualified(sql, "duckdb")),
    "zetasql": Peer("ZetaSQL", zetasql_queries, zetasql_tables, dialect="bigquery",
                    translate=zetasql_translate),
    "pyqrlew": Peer("Qrlew", pyqrlew_queries, pyqrlew_tables, dialect="postgres"),
}


def unqualified(sql: str, dialect: str) -> str:
    """Two-part table names (``PUMS.PUMS``, ``Telemetry.Crashes``) as the registered name.

    >>> unqualified("SELECT COUNT(*) FROM PUMS.PUMS AS p", "duckdb")
    'SELECT COUNT(*) FROM pums AS p'
    """
    try:
        tree = parse_one(sql, dialect)
    except (sqlglot.errors.SqlglotError, dpsql.Error):
        return sql
    tables = list(tree.find_all(sqlglot.exp.Table))
    if not any(t.args.get("db") for t in tables):
        return sql
    for table in tables:
        if table.args.get("db"):
            table.set("db", None)
            table.set("this", sqlglot.exp.to_identifier(table.name.lower()))
    return tree.sql(dialect=dpsql_dialect(dialect))
