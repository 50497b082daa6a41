"""Who gets in: SCRAM-SHA-256 against the ledger's users, with guessing slowed and stopped.

An unknown user goes through the same exchange as a known one, with a made-up verifier,
and gets the same message after the same delay; the client's proof is compared in constant
time (:mod:`.auth`). Failures are counted per user name and per client address, answered
after a growing delay and locked out past a limit (:mod:`.throttle`).
"""

from __future__ import annotations

import secrets
import time

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
        self.throttle = Throttle(limit=limit, window=window)
        self._key = secrets.token_bytes(32)

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
