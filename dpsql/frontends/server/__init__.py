"""``dpsql serve``: the PostgreSQL wire protocol in front of analyst-role connections.

Modules, from the socket inwards: :mod:`.server` (listener, TLS, cancel), :mod:`.login`
(authentication) and :mod:`.throttle` (password guessing),
:mod:`.channel` (framing and limits), :mod:`.protocol` (messages), :mod:`.auth`
(SCRAM-SHA-256), :mod:`.conversation` (simple and extended query protocols),
:mod:`.session` (statements: settings, EXPLAIN, private queries, audit), :mod:`.answers`
(result sets, the budget and catalog answers), :mod:`.settings`,
:mod:`.metadata` (tools' catalog probes), :mod:`.types` (Arrow to PostgreSQL types) and
:mod:`.sqlstates`. docs/server.md is the guide.
"""

from dpsql.frontends.server.server import Server, ServerConfig

__all__ = ["Server", "ServerConfig"]
