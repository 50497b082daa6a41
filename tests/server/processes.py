"""``dpsql serve`` as a real process of its own, for faults (SIGKILL), soak and memory tests."""

from __future__ import annotations

import os
import re
import resource
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

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
        status = Path(f"/proc/{self.pid}/status").read_text()
        return int(re.search(r"VmRSS:\s+(\d+) kB", status)[1]) / 1024

    def peak_rss_mib(self) -> float:
        """The most resident memory the server process has had (VmHWM)."""
        status = Path(f"/proc/{self.pid}/status").read_text()
        return int(re.search(r"VmHWM:\s+(\d+) kB", status)[1]) / 1024

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


def integrity(ledger: Path) -> str:
    raw = sqlite3.connect(ledger, timeout=30)
    try:
        return raw.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        raw.close()
