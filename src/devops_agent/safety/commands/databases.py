"""Domain knowledge for database clients (``psql``, ``mysql``, ``sqlite3`` …) and the SQL they run.

SQL is judged by statement keyword after stripping comments and string literals; it is not a SQL
parser and does not try to be one: anything it cannot place is ``unknown``. Must not connect to
a database or run anything.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from devops_agent.safety.commands.base import (
    LEVEL_RANK,
    Recurse,
    Verdict,
    destr,
    flag_value,
    has_flag,
    mut,
    positionals,
    ro,
    unk,
)

_STRINGS = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|--[^\n]*|/\*.*?\*/", re.S)
_READ = {
    "select",
    "show",
    "explain",
    "describe",
    "desc",
    "with",
    "values",
    "table",
    "pragma",
    "help",
    "\\d",
    "\\dt",
    "\\l",
    "\\du",
    "\\dn",
    "\\df",
    "\\dv",
    "\\di",
    "\\x",
    "\\conninfo",
    "\\list",
    "\\dx",
    "\\d+",
    "\\dt+",
    "use",
    "begin",
    "commit",
    "rollback",
    "set",
    "analyze",
    "\\timing",
    "\\q",
    ".tables",
    ".schema",
    ".headers",
    ".mode",
    ".databases",
    ".indexes",
    ".dump",
    ".quit",
}
_MUTATE = {
    "insert",
    "update",
    "create",
    "alter",
    "grant",
    "revoke",
    "copy",
    "merge",
    "replace",
    "upsert",
    "vacuum",
    "reindex",
    "cluster",
    "refresh",
    "comment",
    "lock",
    "call",
    "do",
    "load",
    "rename",
    "flush",
    "optimize",
    "repair",
    "kill",
    "reset",
    "listen",
    "notify",
    "security",
    "import",
    ".import",
    ".restore",
}


def classify_sql(sql: str) -> Verdict:
    """The level of a SQL script: the worst of its statements."""
    text = _STRINGS.sub(" '' ", sql)
    statements = [s.strip() for s in re.split(r";|\n(?=\\)", text) if s.strip()]
    if not statements:
        return unk("empty SQL", "sql")
    worst: Verdict | None = None
    for stmt in statements:
        v = _statement(stmt)
        if worst is None or LEVEL_RANK[v.level] > LEVEL_RANK[worst.level]:
            worst = v
    assert worst is not None
    return worst


def _statement(stmt: str) -> Verdict:
    words = stmt.lower().split()
    head = words[0]
    if head in ("drop", "truncate"):
        return destr(f"SQL {head.upper()}: removes tables or all their rows", f"sql.{head}")
    if head == "delete":
        if "where" in words:
            return mut("SQL DELETE … WHERE: deletes matching rows", "sql.delete_where")
        return destr("SQL DELETE without WHERE: deletes every row", "sql.delete_all")
    if head == "update" and "where" not in words:
        return destr("SQL UPDATE without WHERE: overwrites every row", "sql.update_all")
    if head == "alter" and "drop" in words:
        return destr("SQL ALTER … DROP: removes columns or constraints and their data", "sql.drop")
    if head == "with" and any(w in words for w in ("delete", "update", "insert")):
        return mut("SQL WITH … data-modifying statement", "sql.mutate")
    if head == "select" and "into" in words:
        return mut("SQL SELECT INTO: creates a table", "sql.mutate")
    if head in _READ or (head.startswith("\\d") and len(head) <= 4):
        return ro(f"SQL {head.upper()}: reads data", "sql.read")
    if head in _MUTATE:
        return mut(f"SQL {head.upper()}: changes data or schema", "sql.mutate")
    return unk(f"SQL statement {head!r}: not one this classifier knows", "sql")


def psql(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``psql -c SQL`` / ``psql -f FILE`` / interactive."""
    args = argv[1:]
    if has_flag(args, "-l", "--list", "--version", "-V", "--help"):
        return ro("psql --list/--version: reads metadata", "sql.read")
    sql = flag_value(args, "-c", "--command")
    if sql is not None:
        return _with_client("psql", classify_sql(sql))
    if has_flag(args, "-f", "--file"):
        return unk("psql -f FILE: runs a script this classifier cannot see", "sql")
    return unk("psql without -c: interactive session or SQL from stdin", "sql")


def mysql(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``mysql -e SQL`` / interactive."""
    args = argv[1:]
    sql = flag_value(args, "-e", "--execute")
    if has_flag(args, "--version", "-V", "--help"):
        return ro("mysql --version", "sql.read")
    if sql is not None:
        return _with_client(argv[0], classify_sql(sql))
    return unk(f"{argv[0]} without -e: interactive session or SQL from stdin", "sql")


def sqlite3(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``sqlite3 DB "SQL"``; a read-only open (``-readonly``) of a query is still judged by the SQL."""
    pos = positionals(argv[1:], ("-cmd", "-separator", "-newline", "-nullvalue"))
    if len(pos) >= 2:
        return _with_client("sqlite3", classify_sql(" ".join(pos[1:])))
    if has_flag(argv[1:], "-version", "--version", "-help"):
        return ro("sqlite3 -version", "sql.read")
    return unk("sqlite3 without SQL: interactive session or SQL from stdin", "sql")


def redis_cli(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``redis-cli [opts] COMMAND …``."""
    pos = positionals(argv[1:], ("-h", "-p", "-a", "-n", "-u", "--user", "--pass", "-r", "-i"))
    if not pos:
        return unk("redis-cli without a command: interactive session", "redis")
    cmd = pos[0].lower()
    if cmd in ("flushall", "flushdb", "del", "unlink", "shutdown", "debug"):
        return destr(f"redis-cli {cmd.upper()}: deletes data or stops the server", "redis.flush")
    if cmd in (
        "get",
        "mget",
        "keys",
        "scan",
        "info",
        "ping",
        "ttl",
        "type",
        "exists",
        "hget",
        "hgetall",
        "lrange",
        "smembers",
        "zrange",
        "llen",
        "scard",
        "dbsize",
        "client",
        "slowlog",
        "memory",
        "strlen",
        "hkeys",
        "latency",
        "monitor",
        "--scan",
        "--bigkeys",
    ):
        return ro(f"redis-cli {cmd.upper()}: reads data", "redis.read")
    return mut(f"redis-cli {cmd.upper()}: may change data", "redis.mutate")


def _with_client(client: str, v: Verdict) -> Verdict:
    return Verdict(v.level, f"{client}: {v.reason}", v.key)
