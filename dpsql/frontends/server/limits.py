"""How much memory a server may take, and so how many sessions it has room for.

Each session answers on a DuckDB engine of its own whose ``memory_limit`` is the owner's
``--session-memory``; tools' catalog probes share the metadata database, in a process of
its own whose data is capped (:data:`PROBE_PROCESS`). The server's processes together must
stay under ``--memory-cap``, so the server takes no more sessions than fit::

    SERVER_BASE + PROBE_PROCESS + sessions × (session_memory + SESSION_OVERHEAD) ≤ cap

``SESSION_OVERHEAD`` is what a session holds beyond its engine's limit (the engine's own
bookkeeping, DuckDB's untracked allocations, the Arrow answer, Python objects); the figures
are measured (docs/server.md, Limits).

>>> room(cap=4096, session_memory=512, max_connections=64).sessions
5
>>> room(cap=4096, session_memory=512, max_connections=4).sessions
4
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from dpsql.errors import InterfaceError
from dpsql.frontends.server.metadata import PROBE_CEILING

SERVER_BASE = 320
"""MiB the server process holds with no session (Python, DuckDB, the ledger, the catalog)."""
PROBE_PROCESS = PROBE_CEILING + 64
"""MiB the probe process may hold: its data ceiling and its libraries' code."""
SESSION_OVERHEAD = 96
"""MiB a busy session holds beyond its engine's ``memory_limit``."""
UNITS = {"": 1, "mib": 1, "mb": 1, "m": 1, "gib": 1024, "gb": 1024, "g": 1024}


def memory_size(text: str) -> int:
    """A memory size in MiB from ``512``, ``512MiB`` or ``4GiB`` (MB and GB are read as MiB
    and GiB, as DuckDB does not distinguish them either).

    >>> memory_size("4GiB"), memory_size("512"), memory_size("1.5 GB")
    (4096, 512, 1536)
    """
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", text)
    if match is None or match[2].lower() not in UNITS:
        raise InterfaceError(f"cannot read {text!r} as a memory size: write MiB or GiB, e.g. "
                             "512MiB or 4GiB")
    return int(float(match[1]) * UNITS[match[2].lower()])


def machine_memory() -> int:
    """MiB of physical memory on this machine."""
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20


def default_cap() -> int:
    """Three quarters of the machine's memory: the rest is the system's and the page cache's."""
    return machine_memory() * 3 // 4


@dataclass(frozen=True)
class Room:
    """How many sessions a server takes, and the limit that decides it (for its 53300)."""

    sessions: int
    why: str


def room(*, cap: int, session_memory: int, max_connections: int) -> Room:
    """The sessions that fit under ``cap`` MiB, at most ``max_connections``."""
    fitting = (cap - SERVER_BASE - PROBE_PROCESS) // (session_memory + SESSION_OVERHEAD)
    if fitting < 1:
        raise InterfaceError(
            f"--memory-cap {cap} MiB has no room for a session of --session-memory "
            f"{session_memory} MiB (the server needs {SERVER_BASE + PROBE_PROCESS} MiB, and "
            f"each session {SESSION_OVERHEAD} MiB beyond its limit): raise --memory-cap or "
            "lower --session-memory")
    if fitting >= max_connections:
        return Room(max_connections, f"the server's limit is {max_connections} sessions "
                    "(the owner's --max-connections)")
    return Room(fitting, f"the server has memory for {fitting} sessions: {session_memory} MiB "
                f"each (the owner's --session-memory) within {cap} MiB in all (--memory-cap)")
