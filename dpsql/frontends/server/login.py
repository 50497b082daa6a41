"""Who gets in: SCRAM-SHA-256 against the ledger's users, with guessing slowed and stopped.

An unknown user goes through the same exchange as a known one, with a made-up verifier,
and gets the same message after the same delay; the client's proof is compared in constant
time (:mod:`.auth`). Failures are counted per user name and per client address, answered
after a growing delay and locked out past a limit, counted in the ledger by every server
sharing it (:mod:`.throttle`).
"""

from __future__ import annotations

import contextlib
import ipaddress
import secrets
import socket
import threading
import time
from collections import Counter

from dpsql.accounting.store import open_store
from dpsql.accounting.users import Users
from dpsql.frontends.server import protocol as pg
from dpsql.frontends.server.auth import MECHANISM, AuthFailed, Exchange, decoy_verifier
from dpsql.frontends.server.channel import Channel
from dpsql.frontends.server.throttle import LockedOut, Throttle, delay


class LoginFailed(Exception):
    """Why a client is turned away before its session starts (sent with its SQLSTATE)."""

    def __init__(self, sqlstate: str, message: str) -> None:
        super().__init__(message)
        self.sqlstate = sqlstate


class Gate:
    """The login step of every connection (safe to share between threads)."""

    def __init__(self, users: Users, *, failure_delay: float, limit: int,
                 window: float) -> None:
        self.users = users
        self.failure_delay = failure_delay
        # A store of its own: logins do not queue behind the audit log's writes in this
        # process (a SQLite store runs one transaction at a time).
        self.throttle = Throttle(open_store(users.path), limit=limit, window=window)
        self._key = secrets.token_bytes(32)

    def close(self) -> None:
        self.throttle.close()

    def login(self, channel: Channel, user: str, address: str) -> None:
        """Authenticate ``user`` or raise LoginFailed (after the failure's delay)."""
        try:
            self.throttle.admit(user, address)
            verifier = self.users.verifier(user) if user else None
            exchange = Exchange(verifier or decoy_verifier(user, self._key))
            final_message = self._exchange(channel, exchange, user, address)
            final = self.throttle.verify(user, address,
                                         lambda: _prove(exchange, final_message, verifier))
        except LockedOut as locked:
            raise LoginFailed("28000", f'too many failed logins for user "{user}" or from '
                              f"this address: try again in {locked.args[0]} s") from None
        except AuthFailed:
            time.sleep(delay(self.failure_delay, self.throttle.failures(user, address)))
            raise LoginFailed("28P01",
                              f'password authentication failed for user "{user}"') from None
        channel.send(pg.encode_auth(12, final) + pg.encode_auth(0))

    def _exchange(self, channel: Channel, exchange: Exchange, user: str,
                  address: str) -> bytes:
        """Up to the client's final message (a failure here is recorded too)."""
        channel.send(pg.encode_auth(10, pg.cstring(MECHANISM) + b"\x00"))
        channel.flush()
        try:
            mechanism, first = _initial_response(channel)
            if mechanism != MECHANISM:
                raise AuthFailed("mechanism")
            channel.send(pg.encode_auth(11, exchange.start(first)))
            channel.flush()
            return _password(channel).data
        except AuthFailed:
            self.throttle.failed(user, address)
            raise


class Lobby:
    """The connections still logging in: at most ``limit`` at a time, whatever they send.

    A full lobby makes room for a newcomer by ending the oldest connection of the client
    host holding the most places, unless the newcomer comes from that host itself, which is
    then turned away: a flood of silent connections from one host takes no more places than
    there are, and never shuts out an analyst from another host. Hosts are addresses, or
    /64 networks for IPv6 (one machine's share).

    >>> lobby = Lobby(2)
    >>> class Conn:
    ...     def stop(self): print("stopped", self.name)
    >>> a, b, c, d = (Conn() for _ in range(4))
    >>> a.name, b.name = "a", "b"
    >>> lobby.enter(a, "10.0.0.9"), lobby.enter(b, "10.0.0.9"), lobby.enter(c, "10.0.0.9")
    (True, True, False)
    >>> lobby.enter(d, "192.168.1.5")
    stopped a
    True
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._hosts: dict[object, str] = {}  # connection -> host, oldest first
        self._lock = threading.Lock()

    def enter(self, connection, address: str) -> bool:
        """Take a place for ``connection`` (False: turn it away); may stop another."""
        host = _host(address)
        with self._lock:
            if len(self._hosts) >= self.limit:
                crowd, most = Counter(self._hosts.values()).most_common(1)[0]
                if list(self._hosts.values()).count(host) >= most:
                    return False
                oldest = next(c for c, h in self._hosts.items() if h == crowd)
                del self._hosts[oldest]
                oldest.stop()
            self._hosts[connection] = host
        return True

    def leave(self, connection) -> None:
        """Give back ``connection``'s place (logged in, or gone; twice is harmless)."""
        with self._lock:
            self._hosts.pop(connection, None)

    def __len__(self) -> int:
        return len(self._hosts)


def turn_away(sock: socket.socket, text: str) -> None:
    """Tell a connection FATAL 53300 without waiting for it (what its socket buffer takes),
    and close it: no thread is spent on a connection the server has no room for."""
    with contextlib.suppress(OSError):
        sock.setblocking(False)
        sock.send(pg.encode_error("53300", text, severity="FATAL"))
    with contextlib.suppress(OSError):
        sock.close()


def _host(address: str) -> str:
    """The host a client address stands for: itself, or its /64 network for IPv6.

    >>> _host("::ffff:10.1.2.3"), _host("2001:db8:1:2:a:b:c:d")
    ('10.1.2.3', '2001:db8:1:2::/64')
    """
    ip = ipaddress.ip_address(address.split("%")[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is None:
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) else ip)


def _prove(exchange: Exchange, final_message: bytes, verifier: str | None) -> bytes:
    final = exchange.finish(final_message)
    if verifier is None:
        raise AuthFailed("no such user")
    return final


def _initial_response(channel: Channel) -> tuple[str, bytes]:
    """SASLInitialResponse: the mechanism's name and the client-first message."""
    reader = pg.Reader(_password(channel).data)
    mechanism = reader.string()
    length = reader.int32()
    first = reader.take(length) if length >= 0 else b""
    reader.done()
    return mechanism, first


def _password(channel: Channel) -> pg.Password:
    message = pg.decode(*channel.read_message())
    if not isinstance(message, pg.Password):
        raise AuthFailed("expected a password message")
    return message
