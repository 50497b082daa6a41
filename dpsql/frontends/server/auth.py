"""SCRAM-SHA-256 (RFC 5802, RFC 7677) as PostgreSQL speaks it, server side.

The ledger keeps a verifier in PostgreSQL's own format,
``SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>`` (base64), never the
password. A client proves it knows the password without sending it; the server proves it
holds the verifier. An unknown user gets the same exchange with a made-up verifier, so
the failure looks the same as a wrong password.

>>> verifier = make_verifier("s3cret", salt=b"0123456789abcdef", iterations=4096)
>>> verifier.startswith("SCRAM-SHA-256$4096:MDEyMzQ1Njc4OWFiY2RlZg==$")
True
>>> exchange = Exchange(verifier)
>>> first = exchange.start(b"n,,n=,r=clientnonce")
>>> client = Client("s3cret", "clientnonce")
>>> final = exchange.finish(client.final(first))
>>> client.verify(final)
True
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import unicodedata
from dataclasses import dataclass

MECHANISM = "SCRAM-SHA-256"
ITERATIONS = 4096
"""PostgreSQL's default; each client login computes PBKDF2 with this many rounds."""
NONCE_BYTES = 18


class AuthFailed(Exception):
    """The proof is wrong, or the exchange is malformed; the reason is never told the client."""


def _hmac(key: bytes, message: bytes) -> bytes:
    return hmac.new(key, message, hashlib.sha256).digest()


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def saslprep(password: str) -> bytes:
    """RFC 4013 in the part that matters for passwords: non-ASCII spaces become spaces,
    characters mapped to nothing go, then NFKC. ASCII passwords are unchanged.

    >>> saslprep("pass\\u00a0word\\u00ad") == b"pass word"
    True
    """
    mapped = "".join(" " if unicodedata.category(c) == "Zs" else c for c in password
                     if c not in _MAPPED_TO_NOTHING)
    return unicodedata.normalize("NFKC", mapped).encode("utf-8")


_MAPPED_TO_NOTHING = frozenset("\u00ad\u034f\u1806\u180b\u180c\u180d\u200b\u200c\u200d"
                               "\u2060\ufe00\ufe01\ufe02\ufe03\ufe04\ufe05\ufe06\ufe07"
                               "\ufe08\ufe09\ufe0a\ufe0b\ufe0c\ufe0d\ufe0e\ufe0f\ufeff")


@dataclass(frozen=True)
class Verifier:
    """The stored half of SCRAM: salt, iterations, StoredKey and ServerKey."""

    salt: bytes
    iterations: int
    stored_key: bytes
    server_key: bytes

    @classmethod
    def parse(cls, text: str) -> Verifier:
        """Read ``SCRAM-SHA-256$<iter>:<salt>$<StoredKey>:<ServerKey>``."""
        try:
            mechanism, params, keys = text.split("$")
            iterations, salt = params.split(":")
            stored, server = keys.split(":")
            if mechanism != MECHANISM:
                raise ValueError(mechanism)
            return cls(base64.b64decode(salt, validate=True), int(iterations),
                       base64.b64decode(stored, validate=True),
                       base64.b64decode(server, validate=True))
        except ValueError:
            raise ValueError("not a SCRAM-SHA-256 verifier") from None

    def __str__(self) -> str:
        return (f"{MECHANISM}${self.iterations}:{_b64(self.salt)}$"
                f"{_b64(self.stored_key)}:{_b64(self.server_key)}")


def _salted(password: str, salt: bytes, iterations: int) -> bytes:
    return hashlib.pbkdf2_hmac("sha256", saslprep(password), salt, iterations)


def make_verifier(password: str, *, salt: bytes | None = None,
                  iterations: int = ITERATIONS) -> str:
    """The verifier text to store for ``password`` (a fresh 16-byte salt unless given)."""
    salt = secrets.token_bytes(16) if salt is None else salt
    salted = _salted(password, salt, iterations)
    stored = hashlib.sha256(_hmac(salted, b"Client Key")).digest()
    return str(Verifier(salt, iterations, stored, _hmac(salted, b"Server Key")))


def decoy_verifier(user: str, key: bytes) -> str:
    """A verifier for a user who does not exist: fixed per name (a client that asks twice
    sees the same salt), matching no password."""
    salt = _hmac(key, b"salt:" + user.encode("utf-8"))[:16]
    return str(Verifier(salt, ITERATIONS, _hmac(key, b"stored:" + user.encode("utf-8")),
                        _hmac(key, b"server:" + user.encode("utf-8"))))


def _attributes(text: str) -> dict[str, str]:
    """``a=1,b=2`` as a dict; AuthFailed when malformed."""
    pairs = {}
    for part in text.split(","):
        if len(part) < 2 or part[1] != "=":
            raise AuthFailed("malformed SCRAM attribute")
        pairs.setdefault(part[0], part[2:])
    return pairs


class Exchange:
    """One server-side SCRAM exchange: ``start`` (client-first) then ``finish`` (client-final)."""

    def __init__(self, verifier: str) -> None:
        self.verifier = Verifier.parse(verifier)
        self._nonce = ""
        self._header = ""
        self._messages = ""

    def start(self, client_first: bytes) -> bytes:
        """The server-first message for a client-first message (``n,,n=user,r=nonce``)."""
        text = _ascii(client_first)
        if not text.startswith(("n,", "y,")):
            raise AuthFailed("channel binding is not offered: use gs2 header 'n,,'")
        header_end = text.find(",", 2)
        if header_end < 0:
            raise AuthFailed("malformed gs2 header")
        self._header, bare = text[:header_end + 1], text[header_end + 1:]
        client_nonce = _attributes(bare).get("r", "")
        if not client_nonce:
            raise AuthFailed("no client nonce")
        self._nonce = client_nonce + _b64(secrets.token_bytes(NONCE_BYTES))
        server_first = (f"r={self._nonce},s={_b64(self.verifier.salt)},"
                        f"i={self.verifier.iterations}")
        self._messages = f"{bare},{server_first}"
        return server_first.encode("ascii")

    def finish(self, client_final: bytes) -> bytes:
        """The server-final message (``v=signature``); AuthFailed if the proof is wrong."""
        text = _ascii(client_final)
        without_proof, _, proof_part = text.rpartition(",p=")
        attributes = _attributes(without_proof)
        if attributes.get("r") != self._nonce or not self._nonce:
            raise AuthFailed("nonce mismatch")
        if attributes.get("c") != _b64(self._header.encode("ascii")):
            raise AuthFailed("channel binding mismatch")
        try:
            proof = base64.b64decode(proof_part, validate=True)
        except ValueError:
            raise AuthFailed("malformed proof") from None
        message = f"{self._messages},{without_proof}".encode("ascii")
        signature = _hmac(self.verifier.stored_key, message)
        if len(proof) != len(signature):
            raise AuthFailed("malformed proof")
        client_key = bytes(a ^ b for a, b in zip(proof, signature, strict=True))
        if not hmac.compare_digest(hashlib.sha256(client_key).digest(),
                                   self.verifier.stored_key):
            raise AuthFailed("wrong password")
        return f"v={_b64(_hmac(self.verifier.server_key, message))}".encode("ascii")


def _ascii(data: bytes) -> str:
    try:
        return data.decode("ascii")
    except UnicodeDecodeError:
        raise AuthFailed("SCRAM messages are ASCII") from None


class Client:
    """The client side, for tests and the doctest above (clients bring their own)."""

    def __init__(self, password: str, nonce: str) -> None:
        self.password = password
        self.first_bare = f"n=,r={nonce}"
        self._signature = b""

    def final(self, server_first: bytes) -> bytes:
        attributes = _attributes(server_first.decode("ascii"))
        salted = _salted(self.password, base64.b64decode(attributes["s"]),
                         int(attributes["i"]))
        client_key = _hmac(salted, b"Client Key")
        without_proof = f"c=biws,r={attributes['r']}"
        message = f"{self.first_bare},{server_first.decode('ascii')},{without_proof}"
        signature = _hmac(hashlib.sha256(client_key).digest(), message.encode("ascii"))
        self._signature = _hmac(_hmac(salted, b"Server Key"), message.encode("ascii"))
        proof = bytes(a ^ b for a, b in zip(client_key, signature, strict=True))
        return f"{without_proof},p={_b64(proof)}".encode("ascii")

    def verify(self, server_final: bytes) -> bool:
        return server_final == f"v={_b64(self._signature)}".encode("ascii")
