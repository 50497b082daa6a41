"""``dpsql serve`` as a real process of its own, for faults (SIGKILL), soak and memory tests."""

from __future__ import annotations

import contextlib
import json
import os
import re
import resource
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pyarrow.parquet as pq

from dpsql.accounting.users import Users
from dpsql.accounting.values import Budget
from dpsql.datasets import REGIONS, visits
from dpsql.frontends.server.auth import make_verifier
from tests.server.conftest import PASSWORD

LISTENING = re.compile(r"listening on (\S+):(\d+) ")
SIZED = ("--session-memory", "256MiB", "--memory-cap", "20GiB")
"""Room for 64 sessions whatever the machine's memory (the default cap is 3/4 of it); a
test of the limits gives its own flags, which come later and win."""


class ServeProcess:
    """``python -m dpsql serve CATALOG --ledger LEDGER --port 0``; its output goes to files."""

    def __init__(self, catalog: Path, ledger: Path, *, log: Path, timeout: float = 60.0,
                 options: tuple[str, ...] = (), max_files: int | None = None) -> None:
        """``options`` are more of ``dpsql serve``'s flags; ``max_files`` lowers the process's
        limit on open descriptors (RLIMIT_NOFILE), as a small ``ulimit -n`` would."""
        self.log = log
        out, err = log.with_suffix(".out"), log.with_suffix(".err")
        with out.open("w") as stdout, err.open("w") as stderr:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "dpsql", "serve", str(catalog), "--ledger", str(ledger),
                 "--port", "0", *SIZED, *options], stdout=stdout, stderr=stderr, cwd=catalog.parent,
                preexec_fn=None if max_files is None else lambda: resource.setrlimit(
                    resource.RLIMIT_NOFILE, (max_files, max_files)))
        deadline = time.monotonic() + timeout
        while not (found := LISTENING.search(out.read_text())):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.process.kill()
                raise RuntimeError(f"dpsql serve did not start: {err.read_text()[-2000:]}")
            time.sleep(0.05)
        self.host, self.port = found[1], int(found[2])
        self.errors = err

    @property
    def pid(self) -> int:
        return self.process.pid

    def rss_mib(self) -> float:
        """Resident memory of the server process now."""
        return status_mib(self.pid, "VmRSS")

    def peak_rss_mib(self) -> float:
        """The most resident memory the server process has had (VmHWM)."""
        return status_mib(self.pid, "VmHWM")

    def kill(self) -> None:
        """SIGKILL: no clean-up of any kind, as a power cut or the OOM killer would."""
        os.kill(self.pid, signal.SIGKILL)
        self.process.wait(30)

    def stop(self) -> None:
        """SIGTERM, the orderly stop."""
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(30)

    def __enter__(self) -> ServeProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(30)


def ledger_counts(ledger: Path, analyst: str) -> tuple[int, int]:
    """(charges, cached answers) of ``analyst`` in the ledger file, read directly."""
    raw = sqlite3.connect(ledger, timeout=30)
    try:
        charges = raw.execute("SELECT COUNT(*) FROM charges WHERE analyst = ?",
                              (analyst,)).fetchone()[0]
        cached = raw.execute("SELECT COUNT(*) FROM cache WHERE analyst = ?",
                             (analyst,)).fetchone()[0]
        return charges, cached
    finally:
        raw.close()


def ledger_holds(ledger: Path, analyst: str) -> int:
    """How many questions of ``analyst`` are paid for by a hold, not yet settled."""
    raw = sqlite3.connect(ledger, timeout=30)
    try:
        return raw.execute("SELECT COUNT(*) FROM holds WHERE analyst = ?",
                           (analyst,)).fetchone()[0]
    finally:
        raw.close()


def integrity(ledger: Path) -> str:
    raw = sqlite3.connect(ledger, timeout=30)
    try:
        return raw.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        raw.close()


def add_users(ledger, budgets: dict[str, float]) -> None:
    """Pure ε budgets: basic composition is then the only filter, so counts are exact."""
    with Users(ledger) as users:
        for name, epsilon in budgets.items():
            users.add(name, make_verifier(PASSWORD), Budget(epsilon=epsilon))


def write_visits(folder: Path, rows: int) -> Path:
    """A catalog.toml over ``rows`` synthetic visits (regions public, 8 of them)."""
    pq.write_table(visits(rows, seed=3), folder / "visits.parquet")
    path = folder / "visits.toml"
    path.write_text('[tables.visits]\nsource = "visits.parquet"\nprivacy_unit = "patient_id"\n'
                    'bounds = { cost = [0, 2000], age = [0, 100] }\nmax_groups_per_unit = 3\n'
                    f'max_rows_per_group = 4\npublic_keys = {{ region = {json.dumps(REGIONS)} }}\n')
    return path


def status_mib(pid: int, field: str) -> float:
    """A memory figure of a process from /proc (VmRSS: now, VmHWM: its peak), in MiB."""
    return int(re.search(rf"{field}:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text())[1]) \
        / 1024


def children(pid: int) -> list[int]:
    """The process ids of ``pid``'s children (the server's probe processes), whichever of
    its threads started them."""
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):
            found += [int(c) for c in (task / "children").read_text().split()]
    return found


class Peaks:
    """The highest resident memory (VmHWM) of a server process and of each of its probe
    processes, read every 0.1 s while in the ``with`` block (a retired probe process's peak
    is read before it leaves, as far as sampling can)."""

    def __init__(self, pid: int) -> None:
        self.pid, self.server, self.probes = pid, 0.0, {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        while True:
            with contextlib.suppress(OSError, TypeError):
                self.server = status_mib(self.pid, "VmHWM")
            for child in children(self.pid):
                with contextlib.suppress(OSError, TypeError):
                    self.probes[child] = status_mib(child, "VmHWM")
            if self._stop.wait(0.1):
                return

    def __enter__(self) -> Peaks:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def probe(self) -> float:
        """The highest peak of any probe process."""
        return max(self.probes.values(), default=0.0)
