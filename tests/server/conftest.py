"""A real ``dpsql serve`` in this process, on a free loopback port, over the PUMS sample.

``served`` is shared by the tests of this folder; each test makes its own analysts with
``served.new_user(...)`` so budgets never leak between tests.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path

import pytest

from dpsql.accounting.users import Users
from dpsql.accounting.values import Budget
from dpsql.datasets import pums_path
from dpsql.frontends.server import Server, ServerConfig
from dpsql.frontends.server.auth import make_verifier

PASSWORD = "correct horse battery"
CATALOG = """
[tables.pums]
source = "{source}"
privacy_unit = "pid"
bounds = {{ age = [0, 100], income = [0, 500000] }}
max_rows_per_group = 2
public_keys = {{ sex = [0, 1] }}
"""


def write_catalog(folder: Path) -> Path:
    path = folder / "catalog.toml"
    path.write_text(CATALOG.format(source=pums_path("PUMS_dup")))
    return path


VISITS = """
[tables.visits]
source = "visits.parquet"
privacy_unit = "patient_id"
bounds = { cost = [0, 2000] }
max_groups_per_unit = 3
max_rows_per_group = 4
"""


def visits_catalog(folder: Path, rows: int, seed: int) -> Path:
    """A catalog of ``rows`` synthetic visits written to Parquet in ``folder``: queries
    over it run long enough for a cancel, a stop or a kill to land while they run."""
    import pyarrow.parquet as pq

    from dpsql.datasets import visits

    pq.write_table(visits(rows, seed=seed), folder / "visits.parquet")
    catalog = folder / "catalog.toml"
    catalog.write_text(VISITS)
    return catalog


@dataclass
class Served:
    server: Server
    host: str
    port: int
    ledger: Path
    folder: Path
    names = itertools.count()

    def new_user(self, epsilon: float | None = 5.0, delta: float = 1e-6,
                 password: str = PASSWORD, rho: float | None = None) -> str:
        """A new analyst with an (ε, δ) budget, or a ρ-zCDP one when ``rho`` is given."""
        name = f"analyst{next(self.names)}"
        budget = Budget(epsilon=None if rho is not None else epsilon, delta=delta, rho=rho)
        with Users(self.ledger) as users:
            users.add(name, make_verifier(password), budget)
        return name

    def connect(self, user: str, password: str = PASSWORD, **options):
        import psycopg

        return psycopg.connect(host=self.host, port=self.port, user=user, password=password,
                               dbname="dpsql", autocommit=options.pop("autocommit", True),
                               connect_timeout=10, **options)

    def audit(self, user: str):
        with Users(self.ledger) as users:
            return users.audit(user)


def start(folder: Path, **config) -> Served:
    catalog = config.pop("catalog", None) or write_catalog(folder)
    ledger = folder / "ledger.db"
    config.setdefault("failure_delay", 0.05)
    config.setdefault("session_memory", 256)  # room for 64 sessions on any machine; tests
    config.setdefault("memory_cap", 20 * 1024)  # of the limits give their own
    server = Server(ServerConfig(catalog=catalog, ledger=ledger, port=0, **config)).start()
    host, port = server.address
    return Served(server, host, port, ledger, folder)


@pytest.fixture(scope="session")
def served(tmp_path_factory):
    pytest.importorskip("psycopg", reason="the server tests use psycopg: pip install "
                        "'dpsql[test]'")
    running = start(tmp_path_factory.mktemp("served"))
    yield running
    running.server.close()


@pytest.fixture(scope="module")
def bi_served(tmp_path_factory):
    """A server of :mod:`tests.server.bi`'s visits: dates, timestamps, text, booleans and
    decimals, the types BI tools filter on."""
    from tests.server.bi import bi_catalog

    pytest.importorskip("psycopg", reason="the server tests use psycopg: pip install "
                        "'dpsql[test]'")
    folder = tmp_path_factory.mktemp("bi")
    running = start(folder, catalog=bi_catalog(folder))
    yield running
    running.server.close()
