"""The PostgreSQL wire protocol (v3), the part ``dpsql serve`` speaks: framing and messages.

Reading never trusts the client: every length is checked against :data:`MAX_MESSAGE` before
anything is allocated, every field must lie inside its message, and anything malformed
raises :class:`ProtocolError` (the server answers with an ErrorResponse and closes).

>>> msg = decode(b"Q", b"SELECT 1\\x00")
>>> msg
Query(sql='SELECT 1')
>>> encode_command_complete("SELECT 1")
b'C\\x00\\x00\\x00\\rSELECT 1\\x00'
>>> decode(b"Q", b"no terminator")
Traceback (most recent call last):
...
dpsql.frontends.server.protocol.ProtocolError: a string field is not terminated by a zero byte
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

MAX_MESSAGE = 1 << 20
"""The largest message a client may send (1 MiB): longer ones close the connection."""
PROTOCOL_V3 = 196608
SSL_REQUEST = 80877103
GSSENC_REQUEST = 80877104
CANCEL_REQUEST = 80877102


class ProtocolError(Exception):
    """The client broke the protocol; the connection is closed after one ErrorResponse."""


@dataclass(frozen=True)
class Startup:
    """A StartupMessage's parameters (``user``, ``database``, ``application_name``, ...)."""

    parameters: dict[str, str]


@dataclass(frozen=True)
class SSLRequest:
    """The client asks for TLS before its StartupMessage."""


@dataclass(frozen=True)
class GSSRequest:
    """The client asks for GSSAPI encryption (never offered)."""


@dataclass(frozen=True)
class CancelRequest:
    """Cancel the query of the backend with this process id and secret key."""

    pid: int
    secret: int


@dataclass(frozen=True)
class Query:
    """Simple query protocol: one or more statements as text."""

    sql: str


@dataclass(frozen=True)
class Parse:
    """Extended protocol: prepare ``sql`` under ``name`` ('' is the unnamed statement)."""

    name: str
    sql: str
    param_types: tuple[int, ...]


@dataclass(frozen=True)
class Bind:
    """Extended protocol: bind parameter values to a statement, making a portal."""

    portal: str
    statement: str
    param_formats: tuple[int, ...]
    values: tuple[bytes | None, ...]
    result_formats: tuple[int, ...]


@dataclass(frozen=True)
class Describe:
    """Describe a statement (``kind='S'``) or a portal (``kind='P'``)."""

    kind: str
    name: str


@dataclass(frozen=True)
class Execute:
    """Run a portal, returning at most ``max_rows`` rows (0: all)."""

    portal: str
    max_rows: int


@dataclass(frozen=True)
class Close:
    """Close a statement (``kind='S'``) or a portal (``kind='P'``)."""

    kind: str
    name: str


@dataclass(frozen=True)
class Sync:
    """End of an extended-protocol batch: answer ReadyForQuery."""


@dataclass(frozen=True)
class Flush:
    """Send what is buffered now."""


@dataclass(frozen=True)
class Terminate:
    """The client is leaving."""


@dataclass(frozen=True)
class Password:
    """A PasswordMessage: a SASL response's bytes (the exchange decides how to read them)."""

    data: bytes


@dataclass(frozen=True)
class Unsupported:
    """A message dpsql does not serve (COPY data, FunctionCall): answered with an error."""

    kind: str


Message = (Query | Parse | Bind | Describe | Execute | Close | Sync | Flush | Terminate |
           Password | Unsupported)


class Reader:
    """A cursor over one message body; every read is bounds-checked."""

    def __init__(self, body: bytes) -> None:
        self.body = body
        self.at = 0

    def take(self, n: int) -> bytes:
        if n < 0 or self.at + n > len(self.body):
            raise ProtocolError("a message is shorter than its fields say")
        chunk = self.body[self.at:self.at + n]
        self.at += n
        return chunk

    def int16(self) -> int:
        return struct.unpack("!h", self.take(2))[0]

    def int32(self) -> int:
        return struct.unpack("!i", self.take(4))[0]

    def string(self) -> str:
        end = self.body.find(b"\x00", self.at)
        if end < 0:
            raise ProtocolError("a string field is not terminated by a zero byte")
        raw = self.body[self.at:end]
        self.at = end + 1
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise ProtocolError("a string field is not valid UTF-8 (client_encoding must be "
                                "UTF8)") from None

    def count(self) -> int:
        n = self.int16()
        if n < 0:
            raise ProtocolError("a negative count")
        return n

    def done(self) -> None:
        if self.at != len(self.body):
            raise ProtocolError("a message has bytes after its last field")


def decode_startup(body: bytes) -> Startup | SSLRequest | GSSRequest | CancelRequest:
    """The first message of a connection (its length word already removed).

    >>> decode_startup(struct.pack("!i", PROTOCOL_V3) + b"user\\x00ann\\x00\\x00")
    Startup(parameters={'user': 'ann'})
    """
    reader = Reader(body)
    code = reader.int32()
    if code == SSL_REQUEST:
        reader.done()
        return SSLRequest()
    if code == GSSENC_REQUEST:
        reader.done()
        return GSSRequest()
    if code == CANCEL_REQUEST:
        request = CancelRequest(reader.int32(), reader.int32())
        reader.done()
        return request
    if code != PROTOCOL_V3:
        raise ProtocolError(f"unsupported protocol version {code >> 16}.{code & 0xFFFF}: "
                            "dpsql serves protocol 3.0")
    return Startup(_startup_parameters(reader))


def _startup_parameters(reader: Reader) -> dict[str, str]:
    parameters: dict[str, str] = {}
    while (key := reader.string()) != "":
        parameters[key] = reader.string()
    reader.done()
    return parameters


def _query(r: Reader) -> Query:
    return Query(r.string())


def _parse(r: Reader) -> Parse:
    name, sql = r.string(), r.string()
    return Parse(name, sql, tuple(r.int32() for _ in range(r.count())))


def _bind(r: Reader) -> Bind:
    portal, statement = r.string(), r.string()
    formats = tuple(r.int16() for _ in range(r.count()))
    values = tuple(_value(r) for _ in range(r.count()))
    return Bind(portal, statement, formats, values, tuple(r.int16() for _ in range(r.count())))


def _value(r: Reader) -> bytes | None:
    n = r.int32()
    return None if n == -1 else r.take(n)


def _kind(r: Reader) -> str:
    kind = r.take(1).decode("latin-1")
    if kind not in "SP":
        raise ProtocolError(f"Describe/Close names {kind!r}: expected 'S' or 'P'")
    return kind


DECODERS: dict[bytes, Callable[[Reader], Message]] = {
    b"Q": _query,
    b"P": _parse,
    b"B": _bind,
    b"D": lambda r: Describe(_kind(r), r.string()),
    b"E": lambda r: Execute(r.string(), r.int32()),
    b"C": lambda r: Close(_kind(r), r.string()),
    b"S": lambda r: Sync(),
    b"H": lambda r: Flush(),
    b"X": lambda r: Terminate(),
    b"p": lambda r: Password(r.take(len(r.body))),
    b"d": lambda r: Unsupported("CopyData"),
    b"c": lambda r: Unsupported("CopyDone"),
    b"f": lambda r: Unsupported("CopyFail"),
    b"F": lambda r: Unsupported("FunctionCall"),
}


def decode(kind: bytes, body: bytes) -> Message:
    """A frontend message from its type byte and body; ProtocolError if malformed."""
    decoder = DECODERS.get(kind)
    if decoder is None:
        raise ProtocolError(f"unknown message type {kind!r}")
    reader = Reader(body)
    message = decoder(reader)
    if not isinstance(message, Unsupported):
        reader.done()
    return message


def frame(kind: bytes, body: bytes = b"") -> bytes:
    """A backend message: type byte, length (itself included), body."""
    return kind + struct.pack("!i", len(body) + 4) + body


def cstring(text: str) -> bytes:
    return text.encode("utf-8") + b"\x00"


def encode_auth(code: int, data: bytes = b"") -> bytes:
    """AuthenticationOk (0), SASL (10), SASLContinue (11), SASLFinal (12)."""
    return frame(b"R", struct.pack("!i", code) + data)


def encode_parameter_status(name: str, value: str) -> bytes:
    return frame(b"S", cstring(name) + cstring(value))


def encode_backend_key(pid: int, secret: int) -> bytes:
    return frame(b"K", struct.pack("!ii", pid, secret))


def encode_ready(status: str) -> bytes:
    """ReadyForQuery: 'I' idle, 'T' in a transaction block, 'E' in a failed one."""
    return frame(b"Z", status.encode("ascii"))


@dataclass(frozen=True)
class Field:
    """A column of a RowDescription: its name, type OID, type size and format (0 text)."""

    name: str
    oid: int
    size: int = -1
    format: int = 0


def encode_row_description(fields: Sequence[Field]) -> bytes:
    body = struct.pack("!h", len(fields))
    for f in fields:
        body += cstring(f.name) + struct.pack("!ihihih", 0, 0, f.oid, f.size, -1, f.format)
    return frame(b"T", body)


def encode_data_row(cells: Iterable[bytes | None]) -> bytes:
    parts = [b""]
    n = 0
    for cell in cells:
        n += 1
        parts.append(struct.pack("!i", -1) if cell is None else
                     struct.pack("!i", len(cell)) + cell)
    parts[0] = struct.pack("!h", n)
    return frame(b"D", b"".join(parts))


def encode_parameter_description(oids: Sequence[int]) -> bytes:
    return frame(b"t", struct.pack(f"!h{len(oids)}i", len(oids), *oids))


def encode_command_complete(tag: str) -> bytes:
    return frame(b"C", cstring(tag))


def encode_error(sqlstate: str, message: str, *, severity: str = "ERROR",
                 hint: str | None = None, notice: bool = False) -> bytes:
    """An ErrorResponse (or NoticeResponse): severity, SQLSTATE, message and hint."""
    body = b"S" + cstring(severity) + b"V" + cstring(severity) + b"C" + cstring(sqlstate)
    body += b"M" + cstring(message.replace("\x00", ""))
    if hint:
        body += b"H" + cstring(hint.replace("\x00", ""))
    return frame(b"N" if notice else b"E", body + b"\x00")


PARSE_COMPLETE = frame(b"1")
BIND_COMPLETE = frame(b"2")
CLOSE_COMPLETE = frame(b"3")
NO_DATA = frame(b"n")
EMPTY_QUERY = frame(b"I")
PORTAL_SUSPENDED = frame(b"s")
