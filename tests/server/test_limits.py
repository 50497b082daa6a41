"""Before login, a client is a stranger: running the server out of descriptors, flooding it
with silent connections, or trickling bytes must not shut the analysts out."""

from __future__ import annotations

import select
import shutil
import socket
import ssl
import struct
import subprocess
import threading
import time

import psycopg
import pytest

from dpsql.accounting.users import Users
from dpsql.accounting.values import Budget
from dpsql.frontends import cli
from dpsql.frontends.server import protocol as pg
from dpsql.frontends.server.auth import make_verifier
from dpsql.frontends.server.channel import Channel, Closed
from dpsql.frontends.server.limits import PROBE_PROCESS, SERVER_BASE, SESSION_OVERHEAD
from tests.server import wire
from tests.server.conftest import PASSWORD, start, write_catalog
from tests.server.processes import ServeProcess, add_users, write_visits


def closed_within(sock: socket.socket, seconds: float) -> bool:
    """True if the server closes ``sock`` within ``seconds`` (what it sent first is read)."""
    sock.settimeout(seconds)
    try:
        while sock.recv(4096):
            pass
    except TimeoutError:
        return False
    except OSError:
        pass  # reset by the server: closed too
    return True


def trickle(sock: socket.socket, data: bytes, every: float, until: float) -> bool:
    """Send ``data`` one byte every ``every`` seconds; True once the server has closed the
    connection, False if it is still open at ``until`` (a monotonic time)."""
    for byte in data:
        if time.monotonic() > until:
            return False
        try:
            sock.sendall(bytes([byte]))
        except OSError:
            return True
        if select.select([sock], [], [], every)[0]:
            return closed_within(sock, 0.1)
    return closed_within(sock, max(0.0, until - time.monotonic()))


def test_the_server_keeps_accepting_after_running_out_of_descriptors(tmp_path):
    """With 32 descriptors, 60 silent connections exhaust them; once they leave, an analyst
    logs in at once (the accept loop backs off and goes on instead of ending)."""
    ledger = tmp_path / "ledger.db"
    add_users(ledger, {"alice": 10.0})
    with ServeProcess(write_catalog(tmp_path), ledger, log=tmp_path / "serve",
                      max_files=32) as server:
        flood = [socket.create_connection((server.host, server.port), timeout=5)
                 for _ in range(60)]
        deadline = time.monotonic() + 10
        while "Too many open files" not in server.errors.read_text() and \
                time.monotonic() < deadline:
            time.sleep(0.1)
        for sock in flood:
            sock.close()
        began = time.monotonic()
        with psycopg.connect(host=server.host, port=server.port, user="alice",
                             password=PASSWORD, dbname="dpsql", autocommit=True,
                             connect_timeout=8) as con:
            assert con.execute("SELECT 1").fetchone() == (1,)
        assert time.monotonic() - began < 5
        assert server.process.poll() is None
        assert "Too many open files" in server.errors.read_text()  # the flood did run it out


def test_a_client_trickling_bytes_is_cut_at_the_login_deadline(tmp_path):
    """One login deadline from connect: a byte every 0.3 s does not restart it."""
    quick = start(tmp_path, login_timeout=1.5)
    try:
        with wire.connect(quick.host, quick.port) as sock:
            began = time.monotonic()
            assert trickle(sock, wire.startup("nobody") * 4, every=0.3, until=began + 4)
            assert time.monotonic() - began < 1.5 + 0.8
    finally:
        quick.server.close()


def test_a_login_cut_at_its_deadline_is_told_why(tmp_path):
    """A client that stalls midway through SCRAM gets a FATAL 57014 naming the deadline
    before the server closes (not a bare close, which clients report as the server closing
    the connection unexpectedly; a silent client: test_protocol)."""
    quick = start(tmp_path, login_timeout=1.0)
    try:
        with wire.connect(quick.host, quick.port) as sock:
            sock.sendall(wire.startup("alice"))
            kind, body = wire.read_message(sock)
            assert kind == b"R" and b"SCRAM-SHA-256" in body  # AuthenticationSASL, unanswered
            sock.settimeout(5)
            kind, body = wire.read_message(sock)
            assert kind == b"E"
            fields = wire.error_fields(body)
            assert (fields["S"], fields["C"]) == ("FATAL", "57014")
            assert "within 1 s" in fields["M"] and "--login-timeout" in fields["M"]
            assert closed_within(sock, 2)
    finally:
        quick.server.close()


def client_hello() -> bytes:
    """The first flight of a TLS client (its ClientHello), made in memory."""
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    tls = context.wrap_bio(ssl.MemoryBIO(), outgoing := ssl.MemoryBIO())
    with pytest.raises(ssl.SSLWantReadError):
        tls.do_handshake()
    return outgoing.read()


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl makes the test's "
                    "self-signed certificate")
def test_the_login_deadline_covers_tls_negotiation_and_handshake(tmp_path):
    cert, key = tmp_path / "server.crt", tmp_path / "server.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=localhost", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True, timeout=60)
    secure = start(tmp_path, tls_cert=cert, tls_key=key, login_timeout=2.0)
    try:
        with wire.connect(secure.host, secure.port) as sock:
            began = time.monotonic()
            for byte in struct.pack("!ii", 8, pg.SSL_REQUEST):  # 1.6 s for the SSLRequest
                sock.sendall(bytes([byte]))
                time.sleep(0.2)
            assert sock.recv(1) == b"S"
            assert trickle(sock, client_hello(), every=0.2, until=began + 5)
            assert time.monotonic() - began < 2.0 + 0.8
    finally:
        secure.server.close()


def test_last_words_on_a_socket_already_closed_are_moot() -> None:
    """A failed TLS handshake closes the socket; a server stopping then says goodbye on it.
    That must end as the client having gone (Closed, which the goodbye ignores), not as an
    OSError escaping the client's thread (seen in CI's warnings)."""
    ours, theirs = socket.socketpair()
    channel = Channel(ours, deadline=time.monotonic() + 5)
    ours.close()
    with pytest.raises(Closed):
        channel.send_last(b"bye")
    theirs.close()


def answered_within(socks: list[socket.socket], seconds: float) -> list[socket.socket]:
    """The sockets the server has sent something on (or closed) within ``seconds``."""
    deadline, answered = time.monotonic() + seconds, set()
    while time.monotonic() < deadline:
        waiting = [sock for sock in socks if sock not in answered]
        answered.update(select.select(waiting, [], [], 0.05)[0])
    return [sock for sock in socks if sock in answered]


def client_threads(address: str) -> int:
    return sum(t.name == f"dpsql-client-{address}" for t in threading.enumerate())


def test_a_flood_of_silent_connections_is_capped_and_lets_analysts_in(tmp_path):
    """40 silent connections from one address against a cap of 8 connections logging in:
    the 32 beyond it are told 53300 and closed at once (no thread each); an analyst from
    another address still logs in, and one already in keeps getting answers."""
    guarded = start(tmp_path, max_pending=8)
    try:
        user = guarded.new_user()
        with guarded.connect(user) as early:
            flood = [wire.connect(guarded.host, guarded.port, source="127.0.0.2", timeout=5)
                     for _ in range(40)]
            answered = answered_within(flood, 2.0)
            assert [wire.error_fields(wire.read_message(s)[1])["C"] for s in answered] == \
                ["53300"] * 32
            assert client_threads("127.0.0.2") <= 8
            began = time.monotonic()
            with guarded.connect(user) as late:
                assert late.execute("SELECT 1").fetchone() == (1,)
            assert time.monotonic() - began < 3
            assert early.execute("SELECT 1").fetchone() == (1,)
            for sock in flood:
                sock.close()
    finally:
        guarded.server.close()


def test_sessions_beyond_the_memory_cap_are_refused_with_the_flags_to_change(tmp_path):
    """Room for two sessions of 256 MiB: the third connection is told 53300 and why."""
    cap = SERVER_BASE + PROBE_PROCESS + 2 * (256 + SESSION_OVERHEAD)
    small = start(tmp_path, session_memory=256, memory_cap=cap)
    try:
        user = small.new_user()
        with small.connect(user), small.connect(user):
            state, text = wire.try_login(small.host, small.port, user, PASSWORD)
            assert state == "53300"
            assert "memory for 2 sessions" in text and "--session-memory" in text and \
                "--memory-cap" in text
        with small.connect(user) as con:  # a session that ended gave its room back
            assert con.execute("SELECT 1").fetchone() == (1,)
    finally:
        small.server.close()


def test_a_memory_cap_without_room_for_one_session_is_an_error_at_start(tmp_path, capsys):
    code = cli.main(["serve", str(write_catalog(tmp_path)), "--ledger", str(tmp_path / "l.db"),
                     "--memory-cap", "1GiB", "--session-memory", "2GiB"])
    assert code != 0
    assert "--memory-cap 1024 MiB has no room for a session of --session-memory 2048 MiB" in \
        capsys.readouterr().err


def test_each_session_engine_keeps_to_its_memory_limit(tmp_path):
    """A GROUP BY of private keys over 4M rows takes ~470 MiB with no limit; on a server
    started with --session-memory 160MiB it stays within that and a session's overhead."""
    catalog, ledger = write_visits(tmp_path, 4_000_000), tmp_path / "ledger.db"
    with Users(ledger) as users:
        users.add("alice", make_verifier(PASSWORD), Budget(epsilon=100, delta=1e-3))
    with ServeProcess(catalog, ledger, log=tmp_path / "serve",
                      options=("--session-memory", "160MiB", "--session-threads", "2")) as server:
        with psycopg.connect(host=server.host, port=server.port, user="alice",
                             password=PASSWORD, dbname="dpsql", autocommit=True) as con:
            con.execute("SET dpsql.delta = 1e-6")
            idle = server.rss_mib()
            rows = con.execute("SELECT specialty, COUNT(*) AS n, AVG(cost) AS c FROM visits "
                               "GROUP BY specialty").fetchall()
        assert rows
        assert server.peak_rss_mib() - idle < 160 + SESSION_OVERHEAD
