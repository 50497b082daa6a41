"""A client's socket with the protocol's framing and hard limits on what it may send.

>>> import socket
>>> a, b = socket.socketpair()
>>> _ = a.sendall(b"Q\\x00\\x00\\x00\\x0dSELECT 1\\x00")
>>> Channel(b).read_message()
(b'Q', b'SELECT 1\\x00')
>>> a.close(); b.close()
"""

from __future__ import annotations

import contextlib
import socket
import ssl
import struct
import time

from dpsql.frontends.server.protocol import MAX_MESSAGE, ProtocolError

MAX_STARTUP = 10_000
"""The largest startup packet accepted (PostgreSQL allows 10,000 bytes too)."""
LAST_WORDS = 1.0
"""Seconds a client has to take a final message (a FATAL error) before the socket closes."""


class Closed(Exception):
    """The client went away (or the socket failed)."""


class LoginTimedOut(Closed):
    """The login deadline passed while the client was still logging in (the connection
    can still carry a last message, unlike a TLS handshake cut short)."""


class Channel:
    """Reads framed messages and buffers replies until :meth:`flush`.

    Until :meth:`logged_in`, every read, write and the TLS handshake must end by one
    ``deadline`` (a :func:`time.monotonic` time): a socket timeout alone restarts with each
    byte received, so a client trickling a byte a second would hold its connection forever.
    """

    def __init__(self, sock: socket.socket, deadline: float | None = None) -> None:
        self.sock = sock
        self.deadline = deadline
        self._out: list[bytes] = []

    @property
    def encrypted(self) -> bool:
        return isinstance(self.sock, ssl.SSLSocket)

    def _arm(self) -> None:
        """Give the next socket operation what is left before the deadline (if any)."""
        if self.deadline is None:
            return
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise LoginTimedOut("the login deadline passed")
        try:
            self.sock.settimeout(left)
        except OSError as error:  # a socket a failed TLS handshake closed
            raise Closed(str(error)) from None

    def logged_in(self) -> None:
        """No deadline from now on: a logged-in client may stay idle."""
        self.deadline = None
        self.sock.settimeout(None)

    def start_tls(self, context: ssl.SSLContext) -> None:
        """The server's side of the TLS handshake, within the deadline."""
        self._arm()
        try:
            self.sock = context.wrap_socket(self.sock, server_side=True)
        except (OSError, ssl.SSLError) as error:
            raise Closed(f"TLS handshake failed: {error}") from None

    def _exactly(self, n: int) -> bytes:
        chunks, left = [], n
        while left:
            self._arm()
            try:
                chunk = self.sock.recv(min(left, 65536))
            except TimeoutError:
                raise LoginTimedOut("the login deadline passed") from None
            except (OSError, ssl.SSLError) as error:
                raise Closed(str(error)) from None
            if not chunk:
                raise Closed("the client closed the connection")
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def read_startup(self) -> bytes:
        """The body of a startup packet (SSLRequest, CancelRequest or StartupMessage)."""
        (length,) = struct.unpack("!i", self._exactly(4))
        if not 8 <= length <= MAX_STARTUP:
            raise ProtocolError(f"invalid startup packet length {length}")
        return self._exactly(length - 4)

    def read_message(self) -> tuple[bytes, bytes]:
        """A message's type byte and body; ProtocolError if its length is out of bounds."""
        kind = self._exactly(1)
        (length,) = struct.unpack("!i", self._exactly(4))
        if not 4 <= length <= MAX_MESSAGE:
            raise ProtocolError(f"invalid message length {length} (at most {MAX_MESSAGE} "
                                "bytes are accepted)")
        return kind, self._exactly(length - 4)

    def send(self, data: bytes) -> None:
        self._out.append(data)

    def flush(self) -> None:
        data, self._out = b"".join(self._out), []
        if not data:
            return
        self._arm()
        try:
            self.sock.sendall(data)
        except TimeoutError:
            raise LoginTimedOut("the login deadline passed") from None
        except (OSError, ssl.SSLError) as error:
            raise Closed(str(error)) from None

    def send_last(self, data: bytes) -> None:
        """Send a final message within :data:`LAST_WORDS` seconds, whatever the deadline
        (a login refused after its failure delay is still told why)."""
        self.deadline = time.monotonic() + LAST_WORDS
        self.send(data)
        self.flush()

    def stop_reading(self) -> None:
        """Make a pending or later read raise :class:`Closed` (from another thread); replies
        can still be sent. The plain socket's shutdown, under any TLS layer."""
        with contextlib.suppress(OSError):
            socket.socket.shutdown(self.sock, socket.SHUT_RD)

    def stop(self) -> None:
        """End the connection from another thread: a pending read or write fails at once."""
        with contextlib.suppress(OSError):
            socket.socket.shutdown(self.sock, socket.SHUT_RDWR)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()
