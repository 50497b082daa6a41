"""The wire protocol against a hostile client: raw bytes, limits, TLS, cancel, fuzzing."""

from __future__ import annotations

import contextlib
import shutil
import socket
import struct
import subprocess
import threading
import time

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpsql.frontends.server import protocol as pg
from dpsql.frontends.server.auth import Client
from tests.server.conftest import PASSWORD, start, visits_catalog
from tests.server.wire import error_fields, read_message, startup


def raw(served) -> socket.socket:
    sock = socket.create_connection((served.host, served.port), timeout=10)
    return sock


def until_closed(sock: socket.socket) -> list[bytes]:
    """The kinds of the messages received until the server closes the connection."""
    kinds = []
    try:
        while True:
            kinds.append(read_message(sock)[0])
    except (ConnectionError, OSError):
        return kinds


def login(served, user: str) -> socket.socket:
    """A raw socket logged in with SCRAM, after its first ReadyForQuery."""
    sock = raw(served)
    sock.sendall(startup(user))
    assert read_message(sock)[0] == b"R"
    client = Client(PASSWORD, "fuzznonce")
    first = b"n,,n=,r=fuzznonce"
    sock.sendall(pg.frame(b"p", pg.cstring("SCRAM-SHA-256") + struct.pack("!i", len(first)) +
                          first))
    server_first = read_message(sock)[1][4:]
    sock.sendall(pg.frame(b"p", client.final(server_first)))
    while (kind := read_message(sock)[0]) != b"Z":
        assert kind in b"RSK", kind
    return sock


def still_serving(served, user: str) -> None:
    with served.connect(user) as con:
        assert con.execute("SELECT 1").fetchone() == (1,)


def test_garbage_startup_is_refused_and_the_server_stays_up(served):
    user = served.new_user()
    for garbage in (b"\x00\x00\x00\x08\x00\x00\x00\x00", b"\xff\xff\xff\xff",
                    b"GET / HTTP/1.1\r\n\r\n", struct.pack("!ii", 8, 1234)):
        with raw(served) as sock:
            sock.sendall(garbage)
            assert until_closed(sock) in ([b"E"], [])
    still_serving(served, user)


def test_oversized_and_truncated_messages_close_the_connection(served):
    user = served.new_user()
    with login(served, user) as sock:
        sock.sendall(b"Q" + struct.pack("!i", 2 << 20) + b"SELECT")
        kind, body = read_message(sock)
        assert kind == b"E" and b"08P01" in body and b"at most" in body
        assert until_closed(sock) == []
    with login(served, user) as sock:
        sock.sendall(b"Q\x00\x00\x00\x40SELECT")  # promises 60 bytes, sends 6, leaves
    with login(served, user) as sock:
        sock.sendall(pg.frame(b"B", b"\x00stmt"))  # a Bind cut short
        kind, body = read_message(sock)
        assert kind == b"E" and b"08P01" in body
    still_serving(served, user)


def test_ssl_request_without_tls_gets_n(served):
    with raw(served) as sock:
        sock.sendall(struct.pack("!ii", 8, pg.SSL_REQUEST))
        assert sock.recv(1) == b"N"


def test_a_silent_client_is_dropped_after_the_login_timeout(tmp_path):
    quick = start(tmp_path, login_timeout=0.5)
    try:
        with raw(quick) as sock:
            began = time.monotonic()
            kind, body = read_message(sock)  # told why (test_limits: what it says)
            assert (kind, error_fields(body)["C"]) == (b"E", "57014")
            assert sock.recv(1) == b""
            assert time.monotonic() - began < 5
    finally:
        quick.server.close()


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl makes the test's "
                    "self-signed certificate")
def test_tls_with_a_self_signed_certificate(tmp_path):
    cert, key = tmp_path / "server.crt", tmp_path / "server.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=localhost", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True, timeout=60)
    secure = start(tmp_path, tls_cert=cert, tls_key=key)
    try:
        user = secure.new_user()
        with secure.connect(user, sslmode="require") as con:
            assert con.pgconn.ssl_in_use
            assert con.execute("SELECT 1").fetchone() == (1,)
    finally:
        secure.server.close()


def test_cancel_interrupts_a_running_query_and_says_what_it_cost(tmp_path):
    """A cancel that lands before the engine starts spends nothing; one after is charged in
    full (when the query stopped tells how long it ran). Either way the client is told, and
    the budget agrees with what it was told."""
    big = start(tmp_path, catalog=visits_catalog(tmp_path, 2_000_000, seed=3))
    try:
        user = big.new_user()
        with big.connect(user) as con:
            done = threading.Event()

            def keep_cancelling() -> None:  # however fast the machine runs the query
                while not done.wait(0.05):
                    con.cancel_safe()

            con.execute("SET dpsql.epsilon = 1")
            canceller = threading.Thread(target=keep_cancelling, daemon=True)
            canceller.start()
            try:
                with pytest.raises(psycopg.errors.QueryCanceled) as caught:
                    con.execute("SELECT specialty, COUNT(*) AS n, AVG(cost) AS c FROM visits "
                                "GROUP BY specialty", prepare=False)
            finally:
                done.set()
                canceller.join()  # no cancel still in flight for the next statement
            spent = con.execute("SHOW dpsql.budget").fetchone()[1]
            told = str(caught.value)
            assert spent == (0 if "nothing was spent" in told else 1.0), (spent, told)
        assert [e.sqlstate for e in big.audit(user) if "visits" in e.statement] == ["57014"]
    finally:
        big.server.close()


@given(kind=st.sampled_from(sorted(pg.DECODERS)) | st.binary(min_size=1, max_size=1),
       body=st.binary(max_size=64))
@settings(max_examples=500, deadline=None)
def test_decoding_random_messages_raises_only_protocol_errors(kind, body):
    with contextlib.suppress(pg.ProtocolError):
        pg.decode(kind, body)


@given(body=st.binary(max_size=64))
@settings(max_examples=300, deadline=None)
def test_decoding_random_startup_packets_raises_only_protocol_errors(body):
    with contextlib.suppress(pg.ProtocolError):
        pg.decode_startup(body)


@given(messages=st.lists(st.tuples(st.sampled_from([b"Q", b"P", b"B", b"D", b"E", b"C", b"S",
                                                    b"H", b"d", b"F", b"z"]),
                                   st.binary(max_size=40)), min_size=1, max_size=6))
@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
def test_random_messages_after_login_get_answers_or_a_close(served, messages):
    user = fuzz_user(served)
    with login(served, user) as sock:
        sock.settimeout(10)
        for kind, body in messages:
            sock.sendall(pg.frame(kind, body))
        sock.sendall(pg.frame(b"S"))
        received = []
        try:
            while (kind := read_message(sock)[0]) != b"Z":
                received.append(kind)
        except ConnectionError:
            pass  # closed after a protocol error: allowed
        assert set(received) <= ANSWERS
    still_serving(served, user)


ANSWERS = {bytes([c]) for c in b"ETDCnstI123N"}
"""Backend messages that may answer a batch: errors, rows, completions, notices."""
_FUZZ_USER: list[str] = []


def fuzz_user(served) -> str:
    if not _FUZZ_USER:
        _FUZZ_USER.append(served.new_user(epsilon=1000))
    return _FUZZ_USER[0]
