"""PostgreSQL catalog relations and columns that DuckDB's ``pg_catalog`` lacks, for the
metadata database: enough for psql's ``\\d TABLE``, ``\\d+ TABLE``, ``\\dt+``, ``\\l``, ``\\du``,
the navigators of JDBC and ODBC tools, and SQLAlchemy's inspector.

A probe's reference to one of them becomes a subquery in its place (:func:`redirect`), so
nothing is added to the metadata database that other catalog queries could list. The
relations with nothing to describe here (triggers, policies, inheritance, publications,
extended statistics, roles) are empty; ``pg_class`` and ``pg_database`` are DuckDB's with
the columns they miss, as constants.

>>> from sqlglot import exp
>>> redirect(exp.to_table("pg_catalog.pg_policy")).sql("duckdb")[:48]
'(SELECT CAST(NULL AS BIGINT) AS oid, CAST(NULL A'
>>> redirect(exp.to_table("pums")).sql()
'pums'
"""

from __future__ import annotations

from sqlglot import exp, parse_one

EXTENDED = {
    # Without DuckDB's own views (duckdb_columns, its information_schema), which are in no
    # schema pg_namespace lists: pgcli would offer them as views of no schema.
    "pg_class": "SELECT * REPLACE (CAST(NULL AS VARCHAR[]) AS reloptions, "
                "'d' AS relreplident), false AS relforcerowsecurity FROM pg_catalog.pg_class "
                "WHERE relnamespace IN (SELECT oid FROM pg_catalog.pg_namespace)",
    # PostgreSQL's attlen (DuckDB has none: psqlODBC's SQLColumns refuses a NULL), storage
    # and statistics target (psql's \d+ shows them), and its numeric typmod, ((precision
    # << 16) | scale) + 4, where DuckDB's is precision * 1000 + scale: format_type, psql
    # and the drivers decode PostgreSQL's.
    "pg_attribute": "SELECT a.* REPLACE (CASE WHEN a.atttypid IN (17, 25, 1043) THEN 'x' "
                    "WHEN a.atttypid = 1700 THEN 'm' ELSE 'p' END AS attstorage, "
                    "-1 AS attstattarget, "
                    "CAST(COALESCE(t.typlen, -1) AS SMALLINT) AS attlen, "
                    "CASE WHEN a.atttypid = 1700 AND a.atttypmod > 0 THEN "
                    "a.atttypmod // 1000 * 65536 + a.atttypmod % 1000 + 4 "
                    "ELSE a.atttypmod END AS atttypmod) FROM pg_catalog.pg_attribute a "
                    "LEFT JOIN pg_catalog.pg_type t ON t.oid = a.atttypid",
    # DuckDB's own schema, where its types and functions are, is PostgreSQL's pg_catalog.
    "pg_namespace": "SELECT * REPLACE (CASE nspname WHEN 'main' THEN 'pg_catalog' ELSE "
                    "nspname END AS nspname) FROM pg_catalog.pg_namespace",
    "pg_type": "SELECT * REPLACE (CAST(0 AS BIGINT) AS typrelid, CAST(-1 AS INTEGER) AS "
               "typtypmod) FROM pg_catalog.pg_type",
    # DuckDB's functions, with PostgreSQL's types for what they take and return (DuckDB's
    # are type names, or untyped NULLs): pgcli's function list reads them as regtype[].
    "pg_proc": "SELECT * REPLACE (CAST(NULL AS BIGINT) AS prorettype, CAST(NULL AS "
               "BIGINT[]) AS proargtypes, CAST(NULL AS BIGINT[]) AS proallargtypes, "
               "CAST(NULL AS VARCHAR[]) AS proargmodes, CAST(NULL AS VARCHAR) AS "
               "proargdefaults) FROM pg_catalog.pg_proc",
    # DuckDB's settings are the engine's own (its memory, its threads): a few of
    # PostgreSQL's instead, those drivers read.
    "pg_settings": "SELECT * FROM (VALUES ('max_index_keys', '32', 'integer'), "
                   "('max_identifier_length', '63', 'integer'), "
                   "('server_version', '15.0', 'string'), "
                   "('server_encoding', 'UTF8', 'string'), "
                   "('standard_conforming_strings', 'on', 'bool'), "
                   "('integer_datetimes', 'on', 'bool')) AS s(name, setting, vartype)",
    "pg_database": "SELECT 0 AS oid, 'dpsql' AS datname, true AS datallowconn, "
                   "false AS datistemplate, 6 AS encoding, 'c' AS datlocprovider, "
                   "'C' AS datcollate, 'C' AS datctype, NULL AS daticulocale, "
                   "NULL AS datacl, 0 AS datdba, -1 AS datconnlimit",
}
"""DuckDB's relations with the columns psql reads that they lack (or wrong: DuckDB's own
databases are not the server's, which has one)."""

EMPTY = {
    "pg_inherits": "inhrelid BIGINT, inhparent BIGINT, inhseqno INTEGER, "
                   "inhdetachpending BOOLEAN",
    "pg_trigger": "oid BIGINT, tgrelid BIGINT, tgparentid BIGINT, tgname VARCHAR, "
                  "tgfoid BIGINT, tgtype SMALLINT, tgenabled VARCHAR, tgisinternal BOOLEAN, "
                  "tgconstrrelid BIGINT, tgconstrindid BIGINT, tgconstraint BIGINT",
    "pg_policy": "oid BIGINT, polname VARCHAR, polrelid BIGINT, polcmd VARCHAR, "
                 "polpermissive BOOLEAN, polroles BIGINT[], polqual VARCHAR, "
                 "polwithcheck VARCHAR",
    "pg_statistic_ext": "oid BIGINT, stxrelid BIGINT, stxname VARCHAR, stxnamespace BIGINT, "
                        "stxowner BIGINT, stxstattarget INTEGER, stxkeys SMALLINT[], "
                        "stxkind VARCHAR[], stxexprs VARCHAR",
    "pg_publication": "oid BIGINT, pubname VARCHAR, pubowner BIGINT, puballtables BOOLEAN, "
                      "pubinsert BOOLEAN, pubupdate BOOLEAN, pubdelete BOOLEAN, "
                      "pubtruncate BOOLEAN, pubviaroot BOOLEAN",
    "pg_publication_rel": "oid BIGINT, prpubid BIGINT, prrelid BIGINT, prqual VARCHAR, "
                          "prattrs SMALLINT[]",
    "pg_publication_namespace": "oid BIGINT, pnpubid BIGINT, pnnspid BIGINT",
    "pg_partitioned_table": "partrelid BIGINT, partstrat VARCHAR, partnatts SMALLINT, "
                            "partdefid BIGINT",
    "pg_foreign_table": "ftrelid BIGINT, ftserver BIGINT, ftoptions VARCHAR[]",
    "pg_roles": "oid BIGINT, rolname VARCHAR, rolsuper BOOLEAN, rolinherit BOOLEAN, "
                "rolcreaterole BOOLEAN, rolcreatedb BOOLEAN, rolcanlogin BOOLEAN, "
                "rolreplication BOOLEAN, rolbypassrls BOOLEAN, rolconnlimit INTEGER, "
                "rolvaliduntil TIMESTAMP, rolconfig VARCHAR[]",
    "pg_auth_members": "roleid BIGINT, member BIGINT, grantor BIGINT, admin_option BOOLEAN",
    "pg_index": "indexrelid BIGINT, indrelid BIGINT, indnatts SMALLINT, "
                "indnkeyatts SMALLINT, indisunique BOOLEAN, indnullsnotdistinct BOOLEAN, "
                "indisprimary BOOLEAN, indisexclusion BOOLEAN, indimmediate BOOLEAN, "
                "indisclustered BOOLEAN, indisvalid BOOLEAN, indcheckxmin BOOLEAN, "
                "indisready BOOLEAN, indislive BOOLEAN, indisreplident BOOLEAN, "
                "indkey SMALLINT[], indcollation BIGINT[], indclass BIGINT[], "
                "indoption SMALLINT[], indexprs VARCHAR, indpred VARCHAR",
    "pg_opclass": "oid BIGINT, opcmethod BIGINT, opcname VARCHAR, opcnamespace BIGINT, "
                  "opcowner BIGINT, opcfamily BIGINT, opcintype BIGINT, opcdefault BOOLEAN, "
                  "opckeytype BIGINT",
    "pg_collation": "oid BIGINT, collname VARCHAR, collnamespace BIGINT, collowner BIGINT, "
                    "collprovider VARCHAR, collisdeterministic BOOLEAN, collencoding INTEGER, "
                    "collcollate VARCHAR, collctype VARCHAR",
    "pg_attrdef": "oid BIGINT, adrelid BIGINT, adnum SMALLINT, adbin VARCHAR",
    "pg_sequence": "seqrelid BIGINT, seqtypid BIGINT, seqstart BIGINT, seqincrement BIGINT, "
                   "seqmax BIGINT, seqmin BIGINT, seqcache BIGINT, seqcycle BOOLEAN",
    "pg_extension": "oid BIGINT, extname VARCHAR, extowner BIGINT, extnamespace BIGINT, "
                    "extrelocatable BOOLEAN, extversion VARCHAR, extconfig BIGINT[], "
                    "extcondition VARCHAR[]",
}
"""Relations with nothing in them here: their columns, as PostgreSQL 15 names them. dpsql's
tables have no indexes, keys, sequences or collations of their own."""


def _empty(columns: str) -> str:
    pairs = [column.strip().split(" ", 1) for column in columns.split(",")]
    return "SELECT " + ", ".join(f"CAST(NULL AS {kind}) AS {name}" for name, kind in pairs) + \
        " WHERE false"


RELATIONS = {name: parse_one(sql, dialect="duckdb") for name, sql in
             {**EXTENDED, **{name: _empty(cols) for name, cols in EMPTY.items()}}.items()}


def redirect(table: exp.Table) -> exp.Expression:
    """A reference to a relation DuckDB lacks (or lacks columns of), as a subquery under the
    reference's alias; other references unchanged."""
    name = table.name.lower()
    if name not in RELATIONS or table.db.lower() not in ("pg_catalog", "") or table.catalog:
        return table
    alias = table.alias or name
    # In a parenthesized join (psqlODBC's ``((pg_class c JOIN pg_namespace n ...) JOIN
    # ...)``) the first table holds the joins that follow it: they move with it.
    return exp.Subquery(this=RELATIONS[name].copy(), joins=table.args.get("joins"),
                        alias=exp.TableAlias(this=exp.to_identifier(alias)))


def unqualify(column: exp.Column) -> exp.Column:
    """``pg_catalog.pg_class.relname`` names the relation by its name, which is the
    subquery's alias for a redirected relation, and which DuckDB's binder resolves where the
    schema-qualified name is not found (in a correlated subquery): drop the schema (changed
    in place)."""
    if column.db.lower() == "pg_catalog" and not column.catalog:
        column.set("db", None)
    return column


TYPE_NAMES = {16: "boolean", 17: "bytea", 20: "bigint", 21: "smallint", 23: "integer",
              25: "text", 700: "real", 701: "double precision", 1082: "date",
              1083: "time without time zone", 1114: "timestamp without time zone",
              1184: "timestamp with time zone", 1186: "interval", 2950: "uuid"}
"""PostgreSQL's names for the types DuckDB gives PostgreSQL's OIDs, as ``format_type``
answers them (``SELECT format_type(20, -1)`` is ``bigint`` on PostgreSQL 15, ``int8`` in
DuckDB): SQLAlchemy's reflection looks a column's type up by this name."""

_FORMAT_TYPE = parse_one(
    "CASE WHEN oid_ = 1700 THEN 'numeric' || CASE WHEN mod_ > 4 THEN '(' || "
    "((mod_ - 4) // 65536) || ',' || ((mod_ - 4) % 65536) || ')' ELSE '' END "
    "WHEN oid_ = 1043 THEN 'character varying' || CASE WHEN mod_ > 4 THEN '(' || "
    "(mod_ - 4) || ')' ELSE '' END "
    + " ".join(f"WHEN oid_ = {oid} THEN '{name}'" for oid, name in TYPE_NAMES.items())
    + " ELSE format_type(oid_, NULL) END", dialect="duckdb")


def format_type(oid: exp.Expression, typmod: exp.Expression | None) -> exp.Expression:
    """PostgreSQL's ``format_type(oid, typmod)``: its type names (:data:`TYPE_NAMES`),
    ``numeric(p,s)`` and ``character varying(n)`` decoded from PostgreSQL's typmods; DuckDB's
    name for any other type.

    >>> format_type(exp.column("atttypid"), exp.column("atttypmod")).sql("duckdb")[:60]
    "CASE WHEN atttypid = 1700 THEN 'numeric' || CASE WHEN atttyp"
    """
    typmod = typmod or exp.null()
    return _FORMAT_TYPE.transform(
        lambda node: (oid if node.name == "oid_" else typmod).copy()
        if isinstance(node, exp.Column) and node.name in ("oid_", "mod_") else node)
