"""The server's accounts and audit log in the ledger, against both stores (``ledger_url``),
and the owner's commands (``dpsql users``, ``dpsql audit``) given a ledger URL."""

from __future__ import annotations

import sqlite3
import subprocess
import sys

import pytest

import dpsql
from dpsql.accounting import Budget, Cost
from dpsql.accounting.ledger import Ledger, stored_budget
from dpsql.accounting.users import AuditEntry, Users
from tests.postgres import connect_raw


def entry(user: str, statement: str) -> AuditEntry:
    return AuditEntry(user=user, client="127.0.0.1", statement=statement, outcome="ok",
                      sqlstate="00000", epsilon=0.5, delta=0.0)


def test_accounts_keep_their_budget_and_history(ledger_url):
    with Users(ledger_url) as users:
        users.add("alice", "verifier-a", Budget(epsilon=3, delta=1e-6))
        users.add("bob", "verifier-b", Budget(rho=0.5, delta=1e-6))
        with pytest.raises(dpsql.PrivacyError, match="user 'alice' exists"):
            users.add("alice", "other", Budget(epsilon=1))
        assert users.verifier("alice") == "verifier-a" and users.verifier("carol") is None
        users.set_verifier("alice", "verifier-a2")
        assert users.verifier("alice") == "verifier-a2"
        with Ledger(ledger_url, budget=None, analyst="alice") as alice:
            alice.charge(1.0, 0.0, query="q")
        users.set_budget("alice", Budget(epsilon=5, delta=1e-6))
        listed = {u.name: u for u in users.list()}
        assert listed["alice"].budget == Budget(epsilon=5, delta=1e-6)
        assert listed["alice"].spent == Cost(1.0, 0.0) and listed["bob"].rho_spent == 0.0
        users.remove("alice")
        with pytest.raises(dpsql.PrivacyError, match="no user 'alice'"):
            users.remove("alice")
        assert [u.name for u in users.list()] == ["bob"]
    # the login is gone, the spend is not
    assert stored_budget(ledger_url, "alice") == Budget(epsilon=5, delta=1e-6)


def test_the_audit_log_is_kept_in_order_and_append_only(ledger_url):
    with Users(ledger_url) as users:
        for user, statement in [("alice", "SELECT 1"), ("bob", "SELECT 2"),
                                ("alice", "SELECT 3")]:
            users.record(entry(user, statement))
        assert [e.statement for e in users.audit()] == ["SELECT 1", "SELECT 2", "SELECT 3"]
        assert [e.statement for e in users.audit("alice", last=1)] == ["SELECT 3"]
        assert users.audit(last=0) == []
    raw = connect_raw(ledger_url)
    errors: type[Exception] = sqlite3.IntegrityError
    if not isinstance(raw, sqlite3.Connection):
        import psycopg

        errors = psycopg.Error
    for statement in ["UPDATE audit SET outcome = 'forged'", "DELETE FROM audit"]:
        with pytest.raises(errors, match="append-only"):
            raw.execute(statement)
    raw.close()


def dpsql_cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dpsql", *args], input=stdin,
                          capture_output=True, text=True, timeout=120)


def test_the_owner_commands_take_a_ledger_url(ledger_url):
    added = dpsql_cli("users", "add", "alice", "--ledger", ledger_url, "--epsilon", "2",
                      "--password-stdin", stdin="a long passphrase\n")
    assert added.returncode == 0, added.stderr
    assert "added user 'alice' with budget ε=2, δ=1e-06" in added.stdout
    raised = dpsql_cli("users", "set-budget", "alice", "--ledger", ledger_url, "--epsilon", "5")
    assert "set to ε=5, δ=1e-06" in raised.stdout, raised.stderr
    listed = dpsql_cli("users", "list", "--ledger", ledger_url)
    assert listed.stdout.splitlines()[1].split() == ["alice", "ε,", "δ", "5", "0", "1e-06", "0"]
    with Users(ledger_url) as users:
        users.record(entry("alice", "SELECT COUNT(*) FROM t"))
    audit = dpsql_cli("audit", "--ledger", ledger_url, "--user", "alice")
    assert audit.returncode == 0 and "alice  127.0.0.1  ok (00000)" in audit.stdout, audit.stderr
