"""A throwaway PostgreSQL cluster for the tests: ``initdb`` and ``pg_ctl`` in a temporary
folder, listening on loopback only, on a free port, trusting the local user, no fsync.

Nothing is mocked: the ledger tests run against this server as they run against a SQLite
file. ``initdb`` refuses to run as root, so a root test run starts the cluster as the
unprivileged ``postgres`` system user (which Debian's ``postgresql`` package creates) and
hands it the folder.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import socket
import sqlite3
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BIN_DIRS = sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)
INSTALL = ("PostgreSQL's initdb and pg_ctl were not found: install Debian's `postgresql` "
           "package (apt-get install postgresql) or put them on PATH")


@dataclass(frozen=True)
class Cluster:
    """A running cluster: connect as ``user`` to ``127.0.0.1:port``."""

    port: int
    user: str

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/{database}"


def find_binary(name: str) -> Path | None:
    """``name`` on PATH, else in the newest /usr/lib/postgresql/*/bin (Debian's place)."""
    found = shutil.which(name)
    if found:
        return Path(found)
    return next((d / name for d in BIN_DIRS if (d / name).exists()), None)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _as_owner(user: str | None) -> list[str]:
    """The prefix that runs a command as ``user`` (nothing when we are that user already)."""
    return [] if user is None else ["runuser", "-u", user, "--"]


@contextlib.contextmanager
def running_cluster(*, durable: bool = False) -> Iterator[Cluster]:
    """Start a cluster, yield it, stop it and remove its folder; ``durable`` keeps fsync
    and synchronous commits on (for benchmarks: a commit waits for its WAL flush)."""
    initdb, pg_ctl = find_binary("initdb"), find_binary("pg_ctl")
    if initdb is None or pg_ctl is None:
        raise FileNotFoundError(INSTALL)
    owner = "postgres" if os.geteuid() == 0 else None
    folder = Path(tempfile.mkdtemp(prefix="dpsql-pg-"))
    data, port = folder / "data", _free_port()
    if owner is not None:
        account = pwd.getpwnam(owner)
        os.chown(folder, account.pw_uid, account.pw_gid)
    user = owner or pwd.getpwuid(os.geteuid()).pw_name
    run = _as_owner(owner)
    try:
        subprocess.run([*run, str(initdb), "-D", str(data), "-U", user, "--auth=trust",
                        "--no-sync", "-E", "UTF8", "--locale=C"],
                       check=True, capture_output=True, timeout=120)
        fast = "" if durable else \
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off "
        options = (f"-c listen_addresses=127.0.0.1 -c port={port} {fast}"
                   f"-c unix_socket_directories={folder} -c max_connections=200")
        subprocess.run([*run, str(pg_ctl), "-D", str(data), "-o", options, "-w", "-t", "60",
                        "-l", str(folder / "log"), "start"],
                       check=True, capture_output=True, timeout=90)
        yield Cluster(port, user)
    finally:
        if (data / "postmaster.pid").exists():
            subprocess.run([*run, str(pg_ctl), "-D", str(data), "-m", "immediate", "-w",
                            "stop"], capture_output=True, timeout=60)
        shutil.rmtree(folder, ignore_errors=True)


def create_database(cluster: Cluster, name: str) -> str:
    """A new empty database in ``cluster``; its URL."""
    import psycopg

    with psycopg.connect(cluster.url(), autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    return cluster.url(name)


def connect_raw(location: str) -> Any:
    """A plain DB-API connection (autocommit) to a ledger, to look behind its back."""
    if not location.startswith("postgresql://"):
        return sqlite3.connect(location, isolation_level=None)
    import psycopg

    return psycopg.connect(location, autocommit=True)
