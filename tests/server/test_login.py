"""Password guessing against a real server: a growing delay, then a lockout per user name
and per client address (loopback's 127.0.0.0/8 gives each attacker its own address)."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import psycopg
import pytest

from tests.server.conftest import PASSWORD, start
from tests.server.wire import try_login

WRONG = "not the password"


@pytest.fixture
def guarded(tmp_path):
    running = start(tmp_path, failure_delay=0.05, lockout_failures=3)
    yield running
    running.server.close()


def attempt(served, user: str, password: str, source: str) -> tuple[str, str]:
    return try_login(served.host, served.port, user, password, source)


def test_failed_logins_are_answered_slower_and_slower(tmp_path):
    slow = start(tmp_path, failure_delay=0.2, lockout_failures=5)
    try:
        user = slow.new_user()
        took = []
        for _ in range(3):
            began = time.monotonic()
            with pytest.raises(psycopg.OperationalError, match="password authentication"):
                slow.connect(user, password=WRONG)
            took.append(time.monotonic() - began)
        assert took[0] < 0.6 and took[2] >= 0.8 and took[2] > took[0] + 0.4  # 0.2, 0.4, 0.8 s
    finally:
        slow.server.close()


def test_a_user_name_is_locked_out_from_every_address(guarded):
    alice, bob = guarded.new_user(), guarded.new_user()
    for source in ("127.0.0.2", "127.0.0.3", "127.0.0.4"):
        assert attempt(guarded, alice, WRONG, source)[0] == "28P01"
    state, message = attempt(guarded, alice, PASSWORD, "127.0.0.5")  # the right password
    assert state == "28000" and "too many failed logins" in message and "try again in" in message
    assert attempt(guarded, bob, PASSWORD, "127.0.0.5") == ("ok", "")
    for source in ("127.0.0.6", "127.0.0.7", "127.0.0.8"):  # a name nobody has: the same
        assert attempt(guarded, "nobody", PASSWORD, source)[0] == "28P01"
    assert attempt(guarded, "nobody", PASSWORD, "127.0.0.9")[0] == "28000"


def test_an_address_is_locked_out_for_every_user(guarded):
    bob = guarded.new_user()
    for name in ("carol", "dave", bob):
        assert attempt(guarded, name, WRONG, "127.0.0.20")[0] == "28P01"
    assert attempt(guarded, bob, PASSWORD, "127.0.0.20")[0] == "28000"
    assert attempt(guarded, guarded.new_user(), PASSWORD, "127.0.0.20")[0] == "28000"
    assert attempt(guarded, bob, PASSWORD, "127.0.0.21") == ("ok", "")  # bob is not locked


def test_parallel_guesses_never_pass_the_limit(guarded):
    victim = guarded.new_user()
    sources = [f"127.0.1.{i}" for i in range(1, 13)]
    with ThreadPoolExecutor(12) as pool:
        states = [s for s, _ in pool.map(lambda src: attempt(guarded, victim, WRONG, src),
                                         sources)]
    assert states.count("28P01") == 3 and states.count("28000") == 9  # 3 passwords tried


def test_a_successful_login_clears_the_name_not_the_address(guarded):
    erin = guarded.new_user()
    for _ in range(2):
        assert attempt(guarded, erin, WRONG, "127.0.0.30")[0] == "28P01"
    assert attempt(guarded, erin, PASSWORD, "127.0.0.31") == ("ok", "")
    for source in ("127.0.0.32", "127.0.0.33"):
        assert attempt(guarded, erin, WRONG, source)[0] == "28P01"
    assert attempt(guarded, erin, PASSWORD, "127.0.0.34") == ("ok", "")  # 2 since the success
    assert attempt(guarded, guarded.new_user(), WRONG, "127.0.0.30")[0] == "28P01"
    assert attempt(guarded, guarded.new_user(), PASSWORD, "127.0.0.30")[0] == "28000"


def test_servers_sharing_a_ledger_count_failures_together(tmp_path, ledger_url):
    """The failures are in the ledger: two servers on one ledger (a file or PostgreSQL)
    lock a name out after the limit counted over both, and a new server still knows."""
    from dpsql.accounting.users import Users
    from dpsql.accounting.values import Budget
    from dpsql.frontends.server import Server, ServerConfig
    from dpsql.frontends.server.auth import make_verifier
    from tests.server.conftest import write_catalog

    catalog = write_catalog(tmp_path)
    with Users(ledger_url) as users:
        users.add("frank", make_verifier(PASSWORD), Budget(epsilon=1.0))

    def serve() -> Server:
        return Server(ServerConfig(catalog=catalog, ledger=ledger_url, port=0,
                                   failure_delay=0.01, lockout_failures=3,
                                   session_memory=256, memory_cap=20 * 1024)).start()

    running = [serve(), serve()]
    try:
        one, two = running
        for server, source in ((one, "127.0.0.40"), (two, "127.0.0.41"), (one, "127.0.0.42")):
            assert try_login(*server.address, "frank", WRONG, source)[0] == "28P01"
        assert try_login(*two.address, "frank", PASSWORD, "127.0.0.43")[0] == "28000"
        running.pop().close()
        running.append(serve())  # a restart forgets nothing
        assert try_login(*running[1].address, "frank", PASSWORD, "127.0.0.44")[0] == "28000"
    finally:
        for server in running:
            server.close()
