"""Front-ends: the ways people reach a dpsql connection.

The command line (``cli``, ``shell``), notebooks (``magic``), SQLAlchemy and the tools
built on it (``sqlalchemy``), terminal rendering (``output``, ``progress``). Each only
calls the connection façade (``dpsql.connection``); nothing below imports a front-end.
"""
