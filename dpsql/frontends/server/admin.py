"""The owner's commands around the server: ``dpsql serve``, ``dpsql users``, ``dpsql audit``.

The command line (:mod:`dpsql.frontends.cli`) parses the options and calls these.
"""

from __future__ import annotations

import getpass
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from dpsql.accounting.store import is_url, shown
from dpsql.accounting.users import User, Users
from dpsql.accounting.values import Budget
from dpsql.errors import InterfaceError
from dpsql.frontends.server.auth import make_verifier
from dpsql.frontends.server.server import Server, ServerConfig

MIN_PASSWORD = 8


def serve(config: ServerConfig, *, out: TextIO = sys.stdout,
          until: threading.Event | None = None) -> int:
    """Run the server until Ctrl-C, SIGTERM, or ``until`` is set."""
    stop = until or threading.Event()
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with Server(config) as server:
        host, port = server.address
        tls = "TLS" if server.tls else "no TLS: loopback clients only"
        print(f"dpsql serve: listening on {host}:{port} ({tls}); catalog {config.catalog}, "
              f"ledger {shown(config.ledger)}. Connect with: psql -h {host} -p {port} "
              "-U <user> dpsql", file=out, flush=True)
        try:
            while not stop.wait(0.5):
                pass
        except KeyboardInterrupt:
            pass
    print("dpsql serve: stopped", file=out, flush=True)
    return 0


def read_password(from_stdin: bool, stdin: TextIO | None = None,
                  ask: Callable[[str], str] = getpass.getpass) -> str:
    """The new password: the first line of standard input, or typed twice at the terminal."""
    stdin = sys.stdin if stdin is None else stdin
    if from_stdin:
        password = stdin.readline().rstrip("\r\n")
    elif not stdin.isatty():
        raise InterfaceError("standard input is not a terminal: pass --password-stdin and "
                             "pipe the password in")
    else:
        password = ask("Password: ")
        if ask("Password again: ") != password:
            raise InterfaceError("the two passwords differ; nothing was changed")
    if len(password) < MIN_PASSWORD:
        raise InterfaceError(f"the password is shorter than {MIN_PASSWORD} characters; "
                             "choose a longer one")
    return password


def users_add(ledger: str, name: str, *, epsilon: float | None, delta: float, password: str,
              rho: float | None = None) -> str:
    """Add a login with its budget, (ε, δ) or ρ-zCDP (with δ); the line to print."""
    budget = Budget(epsilon=epsilon, delta=delta, rho=rho)
    with Users(ledger) as users:
        users.add(name, make_verifier(password), budget)
    return f"added user {name!r} with budget {budget} to {shown(ledger)}"


def _existing(ledger: str) -> str:
    """``ledger``, if it is a PostgreSQL URL or an existing file (not a typo's new file)."""
    if not is_url(ledger) and not Path(ledger).is_file():
        raise InterfaceError(f"no ledger file {ledger}: `dpsql users add NAME --ledger "
                             f"{ledger}` creates it")
    return ledger


def users_list(ledger: str) -> str:
    """Every user with budget, spend and what is left."""
    with Users(_existing(ledger)) as users:
        rows = users.list()
    if not rows:
        where = shown(ledger)
        return f"no users in {where}: add one with `dpsql users add NAME --ledger {where}`"
    lines = [f"{'user':<16} {'budget':<7} {'total':>9} {'spent':>9} {'δ total':>9} "
             f"{'δ spent':>9}"]
    lines += [f"{u.name:<16} {'ρ-zCDP' if u.budget.rho is not None else 'ε, δ':<7} "
              f"{_total(u.budget):>9.4g} {_used(u):>9.4g} {u.budget.delta:>9.3g} "
              f"{u.spent.delta:>9.3g}" for u in rows]
    return "\n".join(lines)


def _total(budget: Budget) -> float:
    return budget.epsilon if budget.rho is None else budget.rho


def _used(user: User) -> float:
    return user.spent.epsilon if user.rho_spent is None else user.rho_spent


def users_set_budget(ledger: str, name: str, *, epsilon: float | None, delta: float | None,
                     rho: float | None = None) -> str:
    """Give a user a new total budget; what is not given stays as stored. The line to print."""
    with Users(_existing(ledger)) as users:
        stored = users.budget(name)
        budget = _new_budget(stored, epsilon=epsilon, delta=delta, rho=rho)
        users.set_budget(name, budget)
        user = next(u for u in users.list() if u.name == name)
    left = max(_total(budget) - _used(user), 0.0)
    return (f"budget of user {name!r} set to {budget} in {shown(ledger)} (was {stored}); spent "
            f"{_used(user):.4g} of it, {left:.4g} left (what was spent stays spent)")


def _new_budget(stored: Budget, *, epsilon: float | None, delta: float | None,
                rho: float | None) -> Budget:
    """``stored`` with what is given replaced: ε or ρ (one replaces the other), and δ."""
    delta = stored.delta if delta is None else delta
    if epsilon is None and rho is None:
        epsilon, rho = stored.epsilon, stored.rho
    return Budget(epsilon=epsilon, delta=delta, rho=rho)


def users_remove(ledger: str, name: str) -> str:
    with Users(_existing(ledger)) as users:
        users.remove(name)
    return f"removed user {name!r} (their spends stay in the ledger)"


def users_reset_password(ledger: str, name: str, password: str) -> str:
    with Users(_existing(ledger)) as users:
        users.set_verifier(name, make_verifier(password))
    return f"new password set for user {name!r}"


def audit(ledger: str, *, user: str | None = None, last: int | None = None) -> str:
    """The audit log as text, oldest first."""
    with Users(_existing(ledger)) as users:
        entries = users.audit(user, last=last)
    return "\n".join(map(str, entries)) if entries else "the audit log is empty"
