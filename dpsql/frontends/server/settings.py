"""Session settings: ``SET dpsql.epsilon = 0.5`` and the harmless settings clients send.

dpsql's own settings (``dpsql.epsilon``, ``dpsql.delta``, ``dpsql.intervals``,
``dpsql.interval_level``) change how the session's next queries are answered. A client's
settings (``application_name``, ``extra_float_digits``, ``DateStyle``...) are remembered
for ``SHOW`` and change nothing. Every other ``SET`` is refused: an analyst sets no engine
setting.

>>> s = Settings()
>>> s.set("dpsql.epsilon", "0.5"); s.set("application_name", "'psql'")
>>> s.epsilon, s.show("dpsql.epsilon"), s.show("application_name"), s.show("TIME ZONE")
(0.5, '0.5', 'psql', 'UTC')
>>> s.set("memory_limit", "'1TB'")
Traceback (most recent call last):
...
dpsql.frontends.server.sqlstates.SessionError: SET memory_limit is not allowed: ...
"""

from __future__ import annotations

import math
import re

from dpsql.frontends.server.sqlstates import SessionError

SET = re.compile(r"^SET\s+(?:SESSION\s+|LOCAL\s+)?([\w.]+)\s*(?:=|\bTO\b)\s*(.*?)\s*$",
                 re.IGNORECASE | re.DOTALL)
SET_TRANSACTION = re.compile(r"^SET\s+(?:SESSION\s+CHARACTERISTICS\s+AS\s+)?TRANSACTION\b",
                             re.IGNORECASE)
SET_NAMES = re.compile(r"^SET\s+(?:SESSION\s+|LOCAL\s+)?(TIME\s+ZONE|NAMES)\s+(.*?)\s*$",
                       re.IGNORECASE | re.DOTALL)

CLIENT_DEFAULTS = {
    "application_name": "", "client_encoding": "UTF8", "datestyle": "ISO, MDY",
    "extra_float_digits": "1", "intervalstyle": "postgres", "search_path": "public",
    "statement_timeout": "0", "lock_timeout": "0", "timezone": "UTC",
    "client_min_messages": "notice", "bytea_output": "hex",
    "idle_in_transaction_session_timeout": "0", "default_transaction_isolation":
    "read committed", "default_transaction_read_only": "on", "jit": "off",
    "standard_conforming_strings": "on", "escape_string_warning": "on",
}
"""Client settings a SET may change (they change nothing in dpsql) and their values."""

FIXED = {
    "server_version": "15.0", "server_version_num": "150000", "server_encoding": "UTF8",
    "integer_datetimes": "on", "is_superuser": "off", "max_identifier_length": "63",
    "transaction_isolation": "read committed", "transaction isolation level":
    "read committed", "transaction_read_only": "on", "transaction read only": "on",
    "lc_collate": "C", "lc_ctype": "C", "max_index_keys": "32",
}
"""What SHOW answers about the server, which no SET changes."""

STARTUP_REPORTED = ("server_version", "server_encoding", "client_encoding", "datestyle",
                    "timezone", "integer_datetimes", "standard_conforming_strings",
                    "application_name", "is_superuser", "intervalstyle")
"""Parameters reported to the client at startup (ParameterStatus), as PostgreSQL does."""

REPORTED_NAMES = {"datestyle": "DateStyle", "timezone": "TimeZone",
                  "intervalstyle": "IntervalStyle"}

PINNED = {"client_encoding": ("utf8", "utf-8", "unicode"),
          "standard_conforming_strings": ("on", "true")}
"""Client settings dpsql serves in one way only."""


def _unquote(value: str) -> str:
    value = value.strip().rstrip(";").strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1].replace(value[0] * 2, value[0])
    return value


class Settings:
    """One session's settings (see the module)."""

    def __init__(self, client: dict[str, str] | None = None) -> None:
        self.client: dict[str, str] = {}
        self.epsilon: float | None = None
        self.delta: float | None = None
        self.intervals = False
        self.interval_level = 0.95
        self._defaults()
        for name, value in (client or {}).items():
            if name.lower() in CLIENT_DEFAULTS:
                self.set(name, value)

    def _defaults(self) -> None:
        self.client = dict(CLIENT_DEFAULTS)
        self.epsilon = self.delta = None
        self.intervals, self.interval_level = False, 0.95

    def set(self, name: str, value: str) -> None:
        """Apply ``SET name = value``; SessionError if it is not allowed."""
        key, text = name.lower(), _unquote(value)
        if key.startswith("dpsql."):
            self._set_dpsql(key, text)
        elif key in CLIENT_DEFAULTS:
            allowed = PINNED.get(key)
            if allowed and text.lower() not in allowed:
                raise SessionError("22023", f"{name} = {text!r} is not supported: dpsql serve "
                                   f"speaks {CLIENT_DEFAULTS[key]} only")
            self.client[key] = "UTF8" if key == "client_encoding" else text
        else:
            raise SessionError("42501", f"SET {name} is not allowed: an analyst may set "
                               "dpsql.epsilon, dpsql.delta, dpsql.intervals, "
                               "dpsql.interval_level and client settings such as "
                               "application_name, never engine settings")

    def _set_dpsql(self, key: str, text: str) -> None:
        default = text.lower() in ("default", "")
        if key == "dpsql.epsilon":
            self.epsilon = None if default else _number(key, text, lambda v: v > 0, "> 0")
        elif key == "dpsql.delta":
            self.delta = None if default else _number(key, text, lambda v: 0 <= v < 1,
                                                      "in [0, 1)")
        elif key == "dpsql.intervals":
            self.intervals = False if default else _switch(key, text)
        elif key == "dpsql.interval_level":
            self.interval_level = 0.95 if default else _number(key, text,
                                                               lambda v: 0 < v < 1, "in (0, 1)")
        else:
            raise SessionError("42704", f"unrecognized setting {key!r}: dpsql serve has "
                               "dpsql.epsilon, dpsql.delta, dpsql.intervals and "
                               "dpsql.interval_level")

    def reset(self, name: str) -> None:
        """``RESET name`` (or ``RESET ALL``): back to the default."""
        key = name.lower()
        if key == "all":
            self._defaults()
        elif key.startswith("dpsql."):
            self._set_dpsql(key, "default")
        elif key in CLIENT_DEFAULTS:
            self.client[key] = CLIENT_DEFAULTS[key]
        else:
            self.set(name, "")

    def show(self, name: str) -> str:
        """The value SHOW reports for ``name``; SessionError if there is no such setting."""
        key = " ".join(name.lower().split())
        key = "timezone" if key == "time zone" else key  # SHOW TIME ZONE (pgcli sends it)
        dpsql_values = {
            "dpsql.epsilon": "default" if self.epsilon is None else f"{self.epsilon:g}",
            "dpsql.delta": "default" if self.delta is None else f"{self.delta:g}",
            "dpsql.intervals": "on" if self.intervals else "off",
            "dpsql.interval_level": f"{self.interval_level:g}",
        }
        for table in (dpsql_values, self.client, FIXED):
            if key in table:
                return table[key]
        raise SessionError("42704", f'unrecognized configuration parameter "{name}"')

    def reported(self) -> list[tuple[str, str]]:
        """The ParameterStatus pairs sent at startup."""
        return [(REPORTED_NAMES.get(name, name), self.show(name)) for name in STARTUP_REPORTED]


def _number(key: str, text: str, ok, wanted: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or not ok(value):
        raise SessionError("22023", f"SET {key} = {text!r}: give a number {wanted}, or DEFAULT")
    return value


def _switch(key: str, text: str) -> bool:
    lowered = text.lower()
    if lowered in ("on", "true", "yes", "1"):
        return True
    if lowered in ("off", "false", "no", "0"):
        return False
    raise SessionError("22023", f"SET {key} = {text!r}: give on or off")
