"""Database clients (``psql``, ``mysql``, ``sqlite3``, ``redis-cli``): their options and what they run.

The statements a client is given on the command line are judged by
:mod:`~devops_agent.safety.commands.sql` (every ``psql -c``, every ``sqlite3`` argument and
``-cmd``, ``mysql -e`` and ``--init-command``); options that write files (``psql -o``/``-L``,
``mysql --tee``, ``redis-cli --rdb``), run programs (``mysql --pager``, ``redis-cli --eval``) or
read commands from a file or stdin (``psql -f``, ``sqlite3 -init``, ``redis-cli --pipe``) are
judged too. redis commands are judged by name, with their subcommands (``CLIENT LIST`` reads,
``CLIENT KILL`` does not). Must not connect to a database or run anything.
"""

from __future__ import annotations

from collections.abc import Sequence

from devops_agent.safety.commands.base import (
    Recurse,
    Verdict,
    destr,
    is_harmless_sink,
    mut,
    ro,
    unk,
    worst,
    write_target_verdict,
)
from devops_agent.safety.commands.options import Spec, parse
from devops_agent.safety.commands.sql import classify_sql, mysql_text, psql_text, sqlite_command

__all__ = ["classify_sql", "mysql", "psql", "redis_cli", "sqlite3"]

PSQL = Spec(
    "?01aAbc:d:eEf:F:h:HlL:no:p:P:qR:sStT:U:v:VwWxXz",
    "echo-all|a no-align|A echo-errors|b command=|c dbname=|d echo-queries|e echo-hidden|E file=|f "
    "field-separator=|F host=|h html|H list|l log-file=|L no-readline|n output=|o port=|p pset=|P "
    "quiet|q record-separator=|R single-step|s single-line|S tuples-only|t table-attr=|T "
    "username=|U set= variable=|v version|V no-password|w password|W expanded|x no-psqlrc|X "
    "field-separator-zero|z record-separator-zero|0 single-transaction|1 help? csv",
)


def psql(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``psql -c SQL`` (each one judged) / ``-f FILE`` / interactive; ``-o``/``-L`` write files."""
    parsed = parse(argv[1:], PSQL)
    if parsed.unknown:
        return unk(f"psql {parsed.unknown[0]}: an option this classifier does not know", "sql")
    vs = [
        write_target_verdict(f, "psql -o/-L", "files.write")
        for f in parsed.values("output", "log-file")
        if not is_harmless_sink(f)
    ]
    if parsed.has("list", "version", "help"):
        return worst([ro("psql --list/--version: reads metadata", "sql.read"), *vs]) or ro("psql", "sql.read")
    commands = parsed.values("command")
    if parsed.has("file"):
        vs.append(unk("psql -f FILE: runs a script this classifier cannot see", "sql"))
    elif not commands:
        vs.append(unk("psql without -c: interactive session or SQL from stdin", "sql"))
    for sql in commands:
        v = psql_text(sql)
        vs.append(Verdict(v.level, f"psql: {v.reason}", v.key))
    return worst(vs) or unk("psql", "sql")


_MYSQL_VALUED = {
    "-e": "execute", "--execute": "execute", "-D": "database", "--database": "database", "-h": "host",
    "--host": "host", "-P": "port", "--port": "port", "-u": "user", "--user": "user", "-S": "socket",
    "--socket": "socket", "--init-command": "init-command", "--tee": "tee", "--pager": "pager",
    "--defaults-file": "defaults-file", "--defaults-extra-file": "defaults-extra-file",
    "--plugin-dir": "plugin-dir", "--default-auth": "default-auth", "--login-path": "login-path",
    "--protocol": "protocol", "--connect-timeout": "connect-timeout",
}  # fmt: skip
_MYSQL_DANGER = {
    "pager": "runs a pager program",
    "defaults-file": "reads options (init-command, pager) from a file",
    "defaults-extra-file": "reads options (init-command, pager) from a file",
    "plugin-dir": "loads authentication plugins from a directory",
    "default-auth": "loads an authentication plugin",
}


def mysql(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``mysql -e SQL`` / interactive; ``--init-command`` SQL is judged, ``--tee`` writes, ``--pager``
    and option files run programs (long options may be abbreviated, as mysql allows)."""
    args = list(argv[1:])
    vs: list[Verdict] = []
    statements: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        name, eq, value = a.partition("=")
        if a.startswith("--") and name not in _MYSQL_VALUED:
            full = [k for k in _MYSQL_VALUED if k.startswith(name)]
            name = full[0] if len(full) == 1 else name
        key = _MYSQL_VALUED.get(name)
        if key is None and a.startswith("-e") and len(a) > 2:
            key, eq, value = "execute", "=", a[2:]
        if key is not None:
            if not eq:
                value = args[i + 1] if i + 1 < len(args) else ""
                i += 1
            if key in ("execute", "init-command"):
                statements.append(value)
            elif key == "tee":
                vs.append(write_target_verdict(value, "mysql --tee", "files.write"))
            elif key in _MYSQL_DANGER:
                vs.append(unk(f"mysql --{key}: {_MYSQL_DANGER[key]}", "sql"))
        elif a.split("=")[0] in ("--version", "-V", "--help", "-?"):
            return ro("mysql --version", "sql.read")
        i += 1
    if not statements:
        vs.append(unk(f"{argv[0]} without -e: interactive session or SQL from stdin", "sql"))
    for sql in statements:
        v = mysql_text(sql)
        vs.append(Verdict(v.level, f"{argv[0]}: {v.reason}", v.key))
    return worst(vs) or unk(argv[0], "sql")


_SQLITE_VALUED = frozenset(
    {"cmd", "init", "maxsize", "mmap", "newline", "nonce", "nullvalue", "separator", "sorterref", "vfs", "A"}
)
_SQLITE_PAIRS = frozenset({"lookaside", "pagecache"})


def sqlite3(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``sqlite3 [opts] DB [COMMAND…]``: every command (SQL or dot-command) and ``-cmd`` is judged;
    ``-init FILE`` and archive mode (``-A``) are not read-only."""
    args = list(argv[1:])
    cmds: list[str] = []
    operands: list[str] = []
    safe = False
    i = 0
    while i < len(args):
        a = args[i]
        if a.startswith("-") and len(a) > 1:
            opt = a.lstrip("-")
            if opt in ("version", "help"):
                return ro("sqlite3 -version", "sql.read")
            if opt == "safe":
                safe = True
            if opt.startswith("A") or opt == "init":
                return unk(f"sqlite3 {a}: archive mode or an init script", "sql")
            if opt in _SQLITE_VALUED:
                if opt == "cmd" and i + 1 < len(args):
                    cmds.append(args[i + 1])
                i += 2
                continue
            if opt in _SQLITE_PAIRS:
                i += 3
                continue
            i += 1
            continue
        operands.append(a)
        i += 1
    cmds.extend(operands[1:])
    if not cmds:
        return unk("sqlite3 without SQL: interactive session or SQL from stdin", "sql")
    vs = [sqlite_command(c) for c in cmds]
    v = worst(vs) or vs[0]
    if safe and v.level == "unknown" and v.key == "sql" and "runs" in v.reason:
        return ro("sqlite3 -safe: commands that run programs or write files are refused", "sql.read")
    return Verdict(v.level, f"sqlite3: {v.reason}", v.key)


# Commands (and "COMMAND SUBCOMMAND" pairs) redis flags read-only.
_REDIS_READ = frozenset(
    [
        "get",
        "mget",
        "strlen",
        "getrange",
        "substr",
        "exists",
        "type",
        "ttl",
        "pttl",
        "expiretime",
        "pexpiretime",
        "keys",
        "scan",
        "hscan",
        "sscan",
        "zscan",
        "randomkey",
        "dbsize",
        "info",
        "ping",
        "echo",
        "time",
        "lastsave",
        "role",
        "hget",
        "hmget",
        "hgetall",
        "hkeys",
        "hvals",
        "hlen",
        "hexists",
        "hstrlen",
        "hrandfield",
        "lrange",
        "llen",
        "lindex",
        "lpos",
        "smembers",
        "sismember",
        "smismember",
        "scard",
        "srandmember",
        "sinter",
        "sunion",
        "sdiff",
        "sintercard",
        "zrange",
        "zrangebyscore",
        "zrevrange",
        "zrevrangebyscore",
        "zrangebylex",
        "zrevrangebylex",
        "zcard",
        "zscore",
        "zmscore",
        "zrank",
        "zrevrank",
        "zcount",
        "zlexcount",
        "zrandmember",
        "zinter",
        "zunion",
        "zdiff",
        "zintercard",
        "xrange",
        "xrevrange",
        "xlen",
        "xpending",
        "getbit",
        "bitcount",
        "bitpos",
        "bitfield_ro",
        "geopos",
        "geodist",
        "geohash",
        "geosearch",
        "georadius_ro",
        "georadiusbymember_ro",
        "dump",
        "lcs",
        "sort_ro",
        "eval_ro",
        "evalsha_ro",
        "fcall_ro",
        "monitor",
        "subscribe",
        "psubscribe",
        "ssubscribe",
        "readonly",
        "auth",
        "select",
        "quit",
        "hello",
        "lolwut",
        "wait",
        "waitaof",
    ]
)
_REDIS_SUB_READ = {
    "object": {"encoding", "freq", "idletime", "refcount", "help"},
    "memory": {"usage", "stats", "doctor", "malloc-stats", "help"},
    "slowlog": {"get", "len", "help"},
    "latency": {"latest", "history", "doctor", "graph", "histogram", "help"},
    "config": {"get", "help"},
    "client": {"list", "info", "getname", "id", "trackinginfo", "getredir", "help", "no-evict", "no-touch"},
    "command": {"count", "docs", "info", "list", "getkeys", "getkeysandflags", "help", ""},
    "cluster": {
        "info",
        "nodes",
        "slots",
        "shards",
        "myid",
        "myshardid",
        "keyslot",
        "countkeysinslot",
        "getkeysinslot",
        "links",
        "help",
    },
    "acl": {"whoami", "list", "users", "getuser", "cat", "log", "genpass", "dryrun", "help"},
    "pubsub": {"channels", "numsub", "numpat", "shardchannels", "shardnumsub", "help"},
    "function": {"list", "dump", "stats", "help"},
    "script": {"exists", "help"},
    "module": {"list", "help"},
    "xinfo": {"stream", "groups", "consumers", "help"},
}
_REDIS_DESTROY = frozenset(
    {
        "flushall",
        "flushdb",
        "del",
        "unlink",
        "shutdown",
        "swapdb",
        "replicaof",
        "slaveof",
        "failover",
        "getdel",
    }
)
_REDIS_RUN = frozenset({"eval", "evalsha", "fcall", "debug"})
_REDIS_VALUED = frozenset(
    {"-h", "-p", "-s", "-a", "--user", "--pass", "-u", "-r", "-i", "-n", "-d", "-D", "-X", "-t",
     "--cacert", "--cacertdir", "--cert", "--key", "--tls-ciphers", "--tls-ciphersuites", "--sni",
     "--pattern", "--count", "--quoted-pattern", "--memkeys-samples", "--intrinsic-latency",
     "--pipe-timeout", "--ldb-sync-mode", "--lru-test"}
)  # fmt: skip


def redis_cli(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``redis-cli [opts] COMMAND …``: read commands (and read subcommands) only read."""
    args = list(argv[1:])
    pos: list[str] = []
    vs: list[Verdict] = []
    modes: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("--rdb", "--functions-rdb") and i + 1 < len(args):
            if not is_harmless_sink(args[i + 1]):
                vs.append(write_target_verdict(args[i + 1], f"redis-cli {a}", "files.write"))
            modes.append(a)
            i += 2
            continue
        if a == "--eval":
            return unk("redis-cli --eval: runs a Lua script file", "redis")
        if a in ("--pipe", "--lru-test", "-x"):
            vs.append(mut(f"redis-cli {a}: sends commands or data read from stdin", "redis.mutate"))
        if a == "--cluster":
            action = args[i + 1].lower() if i + 1 < len(args) else ""
            if action in ("check", "info", "help"):
                return worst([ro(f"redis-cli --cluster {action}", "redis.read"), *vs]) or ro(
                    "redis-cli", "redis.read"
                )
            return unk(f"redis-cli --cluster {action}: manages or calls every node", "redis")
        if a.startswith("-") and not pos:
            if a in _REDIS_VALUED:
                i += 1
            elif a in (
                "--scan",
                "--bigkeys",
                "--memkeys",
                "--hotkeys",
                "--keystats",
                "--stat",
                "--latency",
                "--latency-history",
                "--latency-dist",
                "--replica",
                "--slave",
                "--version",
                "-v",
                "--help",
            ):
                modes.append(a)
            i += 1
            continue
        pos.append(a)
        i += 1
    if not pos:
        if modes:
            return worst([ro(f"redis-cli {modes[0]}: reads", "redis.read"), *vs]) or ro(
                "redis-cli", "redis.read"
            )
        return worst([unk("redis-cli without a command: interactive session", "redis"), *vs]) or unk(
            "redis-cli", "redis"
        )
    return worst([_redis_command(pos), *vs]) or _redis_command(pos)


def _redis_command(pos: list[str]) -> Verdict:
    cmd = pos[0].lower()
    sub = pos[1].lower() if len(pos) > 1 else ""
    if cmd in _REDIS_DESTROY or (cmd in ("script", "function") and sub in ("flush", "delete")):
        return destr(f"redis-cli {cmd.upper()}: deletes data or stops the server", "redis.flush")
    if cmd in _REDIS_RUN or (cmd in ("script", "function", "module") and sub == "load"):
        return unk(f"redis-cli {cmd.upper()} {sub.upper()}".rstrip() + ": runs code on the server", "redis")
    if cmd in _REDIS_READ:
        return ro(f"redis-cli {cmd.upper()}: reads data", "redis.read")
    if cmd in _REDIS_SUB_READ:
        if sub in _REDIS_SUB_READ[cmd] and not (
            cmd == "acl" and sub == "log" and "reset" in [p.lower() for p in pos]
        ):
            return ro(f"redis-cli {cmd.upper()} {sub.upper()}: reads", "redis.read")
        return mut(f"redis-cli {cmd.upper()} {sub.upper()}: changes server state", "redis.mutate")
    return mut(f"redis-cli {cmd.upper()}: may change data", "redis.mutate")
