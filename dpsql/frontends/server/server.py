"""``dpsql serve``: a PostgreSQL-protocol server whose every client is an analyst.

One thread per client. A client first negotiates TLS (SSLRequest: 'S' and a TLS handshake
when the server has a certificate, else 'N'), then logs in with SCRAM-SHA-256 against the
users in the ledger (:mod:`.login`: failures slowed, then locked out), then gets an
analyst-role dpsql connection on the owner's catalog whose budget is its own. Clients from
other hosts must use TLS. A CancelRequest carrying a session's process id and secret key
interrupts that session's query (it spends nothing). Until it has logged in, a connection
has one deadline for everything it sends and a place among a capped number of connections
logging in (:mod:`.login`); the server takes as many sessions as fit under its memory cap
(:mod:`.limits`), and answers tools' catalog probes in a process of their own
(:mod:`.metadata`).

An orderly stop (:meth:`Server.close`, SIGTERM for ``dpsql serve``) stops listening, lets
every running statement finish and send its answer for ``stop_grace`` seconds (interrupting
those still running then), tells each client FATAL 57P01, and closes the ledger only after
the last connection has ended.

>>> ServerConfig(catalog="c.toml", ledger="l.db").port
5433
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import secrets
import socket
import ssl
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import duckdb

import dpsql
from dpsql.accounting.ledger import stored_budget
from dpsql.accounting.users import Users
from dpsql.catalog import read_toml
from dpsql.connection import spark_session
from dpsql.frontends.server import protocol as pg
from dpsql.frontends.server.channel import Channel, Closed, LoginTimedOut
from dpsql.frontends.server.conversation import Conversation
from dpsql.frontends.server.limits import default_cap, room
from dpsql.frontends.server.login import Gate, Lobby, LoginFailed, turn_away
from dpsql.frontends.server.metadata import MetadataDatabase, catalog_columns
from dpsql.frontends.server.pacing import TIME_QUANTUM, Pacer, on_grid
from dpsql.frontends.server.session import CANCEL_WINDOW, Session
from dpsql.frontends.server.sqlstates import message, sqlstate

LOG = logging.getLogger("dpsql.server")
ACCEPT_PAUSE = 0.05
"""Seconds the accept loop waits after a failed accept, doubling while accepts keep failing
(descriptors run out), up to MAX_ACCEPT_PAUSE."""
MAX_ACCEPT_PAUSE = 1.0


@dataclass(frozen=True)
class ServerConfig:
    """Where the data, the ledger and the listener are, and the server's limits."""

    catalog: str | Path
    ledger: str | Path
    host: str = "127.0.0.1"
    port: int = 5433
    tls_cert: str | Path | None = None
    tls_key: str | Path | None = None
    login_timeout: float = 10.0
    """Seconds a client has from connecting to being logged in."""
    failure_delay: float = 1.0
    """Seconds before a failed login is answered, doubling with each recent failure of the
    user name or client address up to 16 times this (slows down password guessing)."""
    lockout_failures: int = 10
    """Failed logins of one user name, or from one address, that lock it out..."""
    lockout_window: float = 900.0
    """...until the oldest of them is this many seconds old."""
    max_connections: int = 64
    """Sessions at most; fewer when ``memory_cap`` has room for fewer (:mod:`.limits`)."""
    session_memory: int = 256
    """MiB each session's DuckDB engine may use (its ``memory_limit``)."""
    session_threads: int = 2
    """Threads each session's DuckDB engine runs a query on."""
    memory_cap: int | None = None
    """MiB the whole server may use; None: three quarters of the machine's memory."""
    max_pending: int = 128
    """Connections still logging in at most (see :class:`.login.Lobby`)."""
    stop_grace: float = 30.0
    """Seconds an orderly stop lets running statements finish before interrupting them."""
    statement_timeout: float = 300.0
    """Seconds a private query may run; then it is cancelled, charged in full if its engine
    had started (``dpsql.statements``)."""
    time_quantum: float = TIME_QUANTUM
    """Seconds of the grid private answers and cancels keep to (``.pacing``; 0: none)."""
    session_disk: int = 1024
    """MiB of temporary files each session's engine may spill to."""
    engine: str | None = None
    """``"duckdb"`` or ``"spark"``; None: the catalog's ``[engine]`` name (DuckDB if none)."""
    spark_master: str | None = None
    """Spark's master URL; None: the catalog's ``[engine]`` master, else ``spark-submit``'s."""


def _tls(config: ServerConfig) -> ssl.SSLContext | None:
    if config.tls_cert is None and config.tls_key is None:
        return None
    if config.tls_cert is None or config.tls_key is None:
        raise dpsql.InterfaceError("TLS needs both --tls-cert and --tls-key")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(str(config.tls_cert), str(config.tls_key))
    except (OSError, ssl.SSLError) as error:
        raise dpsql.InterfaceError(f"cannot load the TLS certificate {config.tls_cert} and key "
                                   f"{config.tls_key}: {error}") from None
    return context


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 and IPv4-mapped loopback addresses.

    >>> is_loopback("127.0.0.1"), is_loopback("::ffff:127.0.0.1"), is_loopback("10.0.0.1")
    (True, True, False)
    """
    address = ipaddress.ip_address(host.split("%")[0])
    mapped = getattr(address, "ipv4_mapped", None)
    return (mapped or address).is_loopback


class ListenError(dpsql.InterfaceError):
    """The server cannot listen on its host and port (in use, not this machine's, or
    privileged); ``errno`` says which."""

    def __init__(self, host: str, port: int, error: OSError) -> None:
        super().__init__(f"cannot listen on {host}:{port}: {error.strerror or error}")
        self.host, self.port, self.errno = host, port, error.errno
        self.reason = error.strerror or str(error)


class Server:
    """The listener, the registry of sessions (for cancel requests) and the shared state."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.tls = _tls(config)
        self.room = room(cap=config.memory_cap or default_cap(),
                         session_memory=config.session_memory,
                         max_connections=config.max_connections)
        self.users = Users(config.ledger)
        self.gate = Gate(self.users, failure_delay=config.failure_delay,
                         limit=config.lockout_failures, window=config.lockout_window)
        self.spark = SharedSpark.of(config)
        try:
            with dpsql.connect(catalog=config.catalog, role="analyst",
                               **self._engine()) as probe:
                self.metadata = MetadataDatabase(catalog_columns(probe.catalog))
        except BaseException:
            if self.spark is not None:
                self.spark.close()
            raise
        self.lobby = Lobby(config.max_pending)
        self._sessions: dict[int, tuple[bytes, Session | None]] = {}
        self._clients: dict[threading.Thread, Channel] = {}
        self._lock = threading.Lock()
        self._listener: socket.socket | None = None
        self._stopped = threading.Event()

    @property
    def address(self) -> tuple[str, int]:
        """The host and port the server listens on (the port is chosen when 0 was asked)."""
        assert self._listener is not None, "start() the server first"
        host, port = self._listener.getsockname()[:2]
        return host, port

    def start(self) -> Server:
        """Listen and accept clients in a background thread."""
        family = socket.AF_INET6 if ":" in self.config.host else socket.AF_INET
        listener = socket.socket(family, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            listener.bind((self.config.host, self.config.port))
            listener.listen(128)
        except OSError as error:
            listener.close()
            raise ListenError(self.config.host, self.config.port, error) from None
        self._listener = listener
        threading.Thread(target=self._accept, name="dpsql-accept", daemon=True).start()
        return self

    def _accept(self) -> None:
        """Accept clients until :meth:`stop` closes the listener. A failed accept (out of
        descriptors, a connection reset before it was taken) is passing: log it, pause,
        and go on, so a flood that ran the server out of descriptors does not end it."""
        assert self._listener is not None
        pause = ACCEPT_PAUSE
        while not self._stopped.is_set():
            try:
                sock, peer = self._listener.accept()
            except OSError as error:
                if self._stopped.is_set():
                    return
                LOG.warning("cannot accept a connection (%s): trying again in %.2f s",
                            error, pause)
                self._stopped.wait(pause)
                pause = min(2 * pause, MAX_ACCEPT_PAUSE)
                continue
            pause = ACCEPT_PAUSE
            self._admit(sock, peer[0])

    def _admit(self, sock: socket.socket, peer: str) -> None:
        """Give a new connection its login deadline, a place in the lobby and a thread; a
        full lobby turns it away at once with 53300 (see :class:`Lobby`)."""
        channel = Channel(sock, deadline=time.monotonic() + self.config.login_timeout)
        if not self.lobby.enter(channel, peer):
            turn_away(sock, f"too many connections are logging in (the limit is "
                       f"{self.config.max_pending}, the owner's --max-pending): try again")
            return
        client = threading.Thread(target=self._serve, args=(channel, peer),
                                  daemon=True, name=f"dpsql-client-{peer}")
        with self._lock:
            if self._stopped.is_set():
                self.lobby.leave(channel)
                channel.close()
                return
            self._clients[client] = channel
        try:
            client.start()
        except RuntimeError:  # no thread to be had: the connection cannot be served
            LOG.warning("cannot start a thread for a connection from %s", peer)
            with self._lock:
                self._clients.pop(client, None)
            self.lobby.leave(channel)
            channel.close()

    def stop(self) -> None:
        """Stop accepting; sessions end when their clients leave."""
        self._stopped.set()
        if self._listener is not None:
            self._listener.close()

    def close(self) -> None:
        """The orderly stop: no new clients, running statements end (within ``stop_grace``
        seconds, then interrupted), every connection ends, then the ledger is closed."""
        self.stop()
        with self._lock:
            clients = dict(self._clients)
        for channel in clients.values():
            channel.stop_reading()  # idle clients wake up; busy ones answer first
        deadline = time.monotonic() + self.config.stop_grace
        for client in clients:
            client.join(max(0.0, deadline - time.monotonic()))
        if any(client.is_alive() for client in clients):
            with self._lock:
                running = [session for _, session in self._sessions.values() if session]
            for session in running:
                session.cancel()
            for client in clients:
                client.join(CANCEL_WINDOW)
        self.metadata.close()
        self.gate.close()
        self.users.close()
        if self.spark is not None:
            self.spark.close()

    def __enter__(self) -> Server:
        try:
            return self.start()
        except BaseException:
            self.close()
            raise

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _serve(self, channel: Channel, peer: str) -> None:
        try:
            self._converse(channel, peer)
        except LoginTimedOut:
            _goodbye(channel, "57014", "canceling authentication due to timeout: the login "
                     f"did not finish within {self.config.login_timeout:g} s of connecting "
                     "(dpsql serve --login-timeout); connect again")
        except (Closed, TimeoutError):
            if self._stopped.is_set():
                _goodbye(channel, "57P01", "terminating connection: the server is stopping "
                         "(the owner stopped dpsql serve); connect again when it is back")
        except pg.ProtocolError as error:
            _goodbye(channel, "08P01", f"protocol violation: {error}")
        except LoginFailed as error:
            _goodbye(channel, error.sqlstate, str(error))
        except Exception:
            LOG.exception("internal error in a client connection")
            _goodbye(channel, "XX000", message(RuntimeError()))
        finally:
            self.lobby.leave(channel)
            channel.close()
            with self._lock:
                self._clients.pop(threading.current_thread(), None)

    def _converse(self, channel: Channel, peer: str) -> None:
        startup = self._startup(channel, peer)
        if startup is None:
            return
        user = startup.parameters.get("user", "")
        self.gate.login(channel, user, peer)
        channel.logged_in()
        self.lobby.leave(channel)
        session, pid, secret = self._open(user, startup.parameters, peer)
        try:
            self._welcome(channel, session, pid, secret)
            conversation = Conversation(channel, session)
            while conversation.handle(pg.decode(*channel.read_message())):
                pass
        finally:
            with self._lock:
                self._sessions.pop(pid, None)
            session.close()

    def _startup(self, channel: Channel, peer: str) -> pg.Startup | None:
        """The StartupMessage after any TLS negotiation; None after a cancel request."""
        negotiated = False
        while True:
            first = pg.decode_startup(channel.read_startup())
            if isinstance(first, pg.CancelRequest):
                self._cancel(first)
                return None
            if isinstance(first, pg.Startup):
                break
            if negotiated:
                raise pg.ProtocolError("TLS negotiation requested twice")
            negotiated = True
            accept = self.tls is not None and isinstance(first, pg.SSLRequest)
            channel.send(b"S" if accept else b"N")
            channel.flush()
            if accept:
                channel.start_tls(self.tls)
        if not channel.encrypted and not is_loopback(peer):
            raise LoginFailed("28000", "dpsql serve accepts connections from other hosts over "
                              "TLS only: connect with sslmode=require (the server needs "
                              "--tls-cert and --tls-key)")
        return first

    def _open(self, user: str, parameters: dict[str, str],
              peer: str) -> tuple[Session, int, bytes]:
        with self._lock:
            if len(self._sessions) >= self.room.sessions:
                raise LoginFailed("53300", f"too many connections: {self.room.why}")
            pid = secrets.randbelow(2**31 - 1) + 1
            while pid in self._sessions:
                pid = secrets.randbelow(2**31 - 1) + 1
            secret = secrets.token_bytes(4)
            self._sessions[pid] = (secret, None)  # reserved while the connection opens
        engine = self._session_engine()
        try:
            # The analyst's own budget, not the catalog's [budget] (which would replace it).
            con = dpsql.connect(*([engine] if engine else []), catalog=self.config.catalog,
                                ledger=self.config.ledger, analyst=user, role="analyst",
                                budget=stored_budget(self.config.ledger, user),
                                statement_timeout=on_grid(self.config.statement_timeout,
                                                          self.config.time_quantum),
                                **self._engine())
        except dpsql.Error as error:
            if engine is not None:
                engine.close()
            with self._lock:
                self._sessions.pop(pid, None)
            raise LoginFailed(sqlstate(error), message(error)) from None
        session = Session(con, engine=engine, user=user, pid=pid, client=peer,
                          database=parameters.get("database", user), users=self.users,
                          probes=self.metadata, startup=parameters,
                          pacer=Pacer(self.config.time_quantum))
        with self._lock:
            self._sessions[pid] = (secret, session)
        return session, pid, secret

    def _engine(self) -> dict[str, object]:
        """The engine options of every connection the server opens: the shared Spark
        session, or DuckDB (named, so that a catalog's ``[engine]`` cannot override
        ``--engine duckdb``)."""
        if self.spark is None:
            return {"backend": "duckdb"}
        return {"backend": "spark", "spark": self.spark.session}

    def _session_engine(self) -> duckdb.DuckDBPyConnection | None:
        """A session's own DuckDB engine within the server's limits; None on Spark, where
        every session's queries run in the server's one Spark session (its own job group)."""
        if self.spark is not None:
            return None
        engine = duckdb.connect(config={
            "memory_limit": f"{self.config.session_memory}MiB",
            "threads": self.config.session_threads,
            "max_temp_directory_size": f"{self.config.session_disk}MiB"})
        engine.execute("SET enable_progress_bar = false")  # it would print on the server
        return engine

    def _welcome(self, channel: Channel, session: Session, pid: int, secret: bytes) -> None:
        for name, value in session.settings.reported():
            channel.send(pg.encode_parameter_status(name, value))
        channel.send(pg.encode_backend_key(pid, int.from_bytes(secret, "big", signed=True)))
        channel.send(pg.encode_ready("I"))
        channel.flush()

    def _cancel(self, request: pg.CancelRequest) -> None:
        secret = request.secret.to_bytes(4, "big", signed=True)
        with self._lock:
            known = self._sessions.get(request.pid)
        if known is not None and known[1] is not None and secrets.compare_digest(known[0],
                                                                                 secret):
            known[1].cancel()


@dataclass(frozen=True)
class SharedSpark:
    """The one SparkSession a server's sessions share, and whether the server started it
    (then it stops it when it closes)."""

    session: object
    started: bool

    @staticmethod
    def of(config: ServerConfig) -> SharedSpark | None:
        """The session the config and the catalog's ``[engine]`` ask for; None for DuckDB.
        The command line wins over the catalog, as for every option."""
        declared = read_toml(config.catalog).engine
        if (config.engine or declared.get("name", "duckdb")) != "spark":
            return None
        session, started = spark_session(config.spark_master or declared.get("master"),
                                         declared.get("config"))
        return SharedSpark(session, started)

    def close(self) -> None:
        if self.started:
            self.session.stop()


def _goodbye(channel: Channel, code: str, text: str) -> None:
    """Send a FATAL error and let the caller close (errors while sending are moot)."""
    with contextlib.suppress(Closed):
        channel.send_last(pg.encode_error(code, text, severity="FATAL"))
