"""``dpsql users`` and ``dpsql audit``: accounts and the audit log from the command line."""

from __future__ import annotations

import io

import psycopg
import pytest

from dpsql.frontends import cli
from tests.server.conftest import PASSWORD


def run(monkeypatch, capsys, *args: str, stdin: str = "") -> tuple[int, str, str]:
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    code = cli.main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_users_add_list_reset_remove(tmp_path, monkeypatch, capsys):
    ledger = str(tmp_path / "ledger.db")
    code, out, _ = run(monkeypatch, capsys, "users", "add", "alice", "--ledger", ledger,
                       "--epsilon", "3", "--password-stdin", stdin=PASSWORD + "\n")
    assert code == 0 and "added user 'alice'" in out
    code, _, err = run(monkeypatch, capsys, "users", "add", "alice", "--ledger", ledger,
                       "--epsilon", "3", "--password-stdin", stdin=PASSWORD + "\n")
    assert code != 0 and "exists" in err
    code, _, err = run(monkeypatch, capsys, "users", "add", "bob", "--ledger", ledger,
                       "--epsilon", "1", "--password-stdin", stdin="short\n")
    assert code != 0 and "shorter than 8" in err
    code, out, _ = run(monkeypatch, capsys, "users", "add", "carol", "--ledger", ledger,
                       "--rho", "0.5", "--password-stdin", stdin=PASSWORD + "\n")
    assert code == 0 and "budget ρ=0.5, δ=1e-06" in out
    code, _, err = run(monkeypatch, capsys, "users", "add", "dan", "--ledger", ledger,
                       "--rho", "0.5", "--epsilon", "1", "--password-stdin",
                       stdin=PASSWORD + "\n")
    assert code != 0 and "not allowed with" in err
    code, out, _ = run(monkeypatch, capsys, "users", "list", "--ledger", ledger)
    assert code == 0 and "alice" in out and "bob" not in out
    assert out.splitlines()[2].split() == ["carol", "ρ-zCDP", "0.5", "0", "1e-06", "0"]
    code, out, _ = run(monkeypatch, capsys, "users", "reset-password", "alice", "--ledger",
                       ledger, "--password-stdin", stdin="another long one\n")
    assert code == 0 and "new password" in out
    for name in ("alice", "carol"):
        assert run(monkeypatch, capsys, "users", "remove", name, "--ledger", ledger)[0] == 0
    assert "no users" in run(monkeypatch, capsys, "users", "list", "--ledger", ledger)[1]


def test_audit_lists_what_the_server_answered(served, monkeypatch, capsys):
    user = served.new_user()
    with served.connect(user) as con:
        con.execute("SET dpsql.epsilon = 1")
        con.execute("SELECT COUNT(*) AS n FROM pums WHERE age > 33")
        with pytest.raises(psycopg.errors.FeatureNotSupported):
            con.execute("SELECT * FROM pums")
    code, out, _ = run(monkeypatch, capsys, "audit", "--ledger", str(served.ledger), "--user",
                       user)
    lines = out.splitlines()[1:]  # after the SET
    assert code == 0 and len(lines) == 2
    assert "ok (00000)  ε=1" in lines[0] and "age > 33" in lines[0]
    assert "UnsupportedQueryError (0A000)  ε=0" in lines[1]
