"""A minimal PostgreSQL client on a raw socket, for what libpq cannot do: choose the source
address (loopback has all of 127.0.0.0/8), stop half-way, or leave mid-query."""

from __future__ import annotations

import socket
import struct

from dpsql.frontends.server import protocol as pg
from dpsql.frontends.server.auth import Client


def connect(host: str, port: int, source: str | None = None,
            timeout: float = 30.0) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    if source is not None:
        sock.bind((source, 0))
    sock.connect((host, port))
    return sock


def startup(user: str) -> bytes:
    body = struct.pack("!i", pg.PROTOCOL_V3) + b"user\x00" + user.encode() + \
        b"\x00database\x00dpsql\x00\x00"
    return struct.pack("!i", len(body) + 4) + body


def read_message(sock: socket.socket) -> tuple[bytes, bytes]:
    head = exactly(sock, 5)
    (length,) = struct.unpack("!i", head[1:])
    return head[:1], exactly(sock, length - 4)


def exactly(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return data


def error_fields(body: bytes) -> dict[str, str]:
    """An ErrorResponse's fields by their one-letter codes (C: SQLSTATE, M: message)."""
    fields = {}
    for part in body.rstrip(b"\x00").split(b"\x00"):
        if part:
            fields[chr(part[0])] = part[1:].decode()
    return fields


def login(sock: socket.socket, user: str, password: str) -> tuple[str, str]:
    """SCRAM-SHA-256 on ``sock``: ("ok", "") after ReadyForQuery, else (SQLSTATE, message)."""
    sock.sendall(startup(user))
    kind, body = read_message(sock)
    if kind == b"E":
        fields = error_fields(body)
        return fields["C"], fields["M"]
    client = Client(password, "rawclientnonce")
    first = b"n,,n=,r=rawclientnonce"
    sock.sendall(pg.frame(b"p", pg.cstring("SCRAM-SHA-256") + struct.pack("!i", len(first)) +
                          first))
    server_first = read_message(sock)[1][4:]
    sock.sendall(pg.frame(b"p", client.final(server_first)))
    while (kind := read_message(sock))[0] != b"Z":
        if kind[0] == b"E":
            fields = error_fields(kind[1])
            return fields["C"], fields["M"]
    return "ok", ""


def try_login(host: str, port: int, user: str, password: str,
              source: str | None = None) -> tuple[str, str]:
    with connect(host, port, source) as sock:
        return login(sock, user, password)
