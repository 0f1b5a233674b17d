"""SQL text and the client commands mixed into it (psql ``\\…``, mysql ``system``, sqlite ``.…``).

SQL is judged by statement keyword after removing string literals and comments, and by the
functions a statement calls: a ``SELECT`` can write (``nextval``, ``pg_terminate_backend``,
``lo_export``, ``writefile``) or run code (``query_to_xml``, ``dblink``, user functions), so a
call to a function not known to be pure is ``unknown``. ``EXPLAIN ANALYZE`` runs its statement.
Client commands are judged too: psql's ``\\!``, ``\\gexec``, ``\\o FILE``, ``\\copy … to``; mysql's
``system``, ``tee``, ``source``; sqlite's ``.shell``, ``.output``, ``.load``, ``.save``. This is
not a SQL parser and does not try to be one: anything it cannot place is ``unknown``. Must not
connect to a database or run anything.
"""

from __future__ import annotations

import re

from devops_agent.safety.commands.base import Verdict, destr, mut, ro, unk, worst

_STRINGS = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|--[^\n]*|/\*.*?\*/|\$\$.*?\$\$", re.S)
_CALL = re.compile(r"\b([a-z_][a-z0-9_.]*)\s*\(", re.I)
_READ = {
    "select", "show", "explain", "describe", "desc", "with", "values", "table", "pragma", "help",
    "use", "begin", "start", "commit", "rollback", "end", "abort", "set", "reset", "analyze",
    "savepoint", "release", "fetch", "declare", "close", "move", "listen", "unlisten", "checkpoint",
    "discard", "deallocate", "prepare", "handler",
}  # fmt: skip
_MUTATE = {
    "insert", "update", "create", "alter", "grant", "revoke", "copy", "merge", "replace", "upsert",
    "vacuum", "reindex", "cluster", "refresh", "comment", "lock", "load", "rename", "flush",
    "optimize", "repair", "kill", "notify", "security", "import", "attach", "detach", "install",
    "uninstall", "purge", "cache", "change", "reassign",
}  # fmt: skip
_RUNS_CODE = {"do", "call", "execute", "exec"}
_KEYWORDS = {
    "in", "exists", "any", "all", "some", "values", "cast", "coalesce", "case", "when", "and", "or",
    "not", "on", "using", "from", "where", "over", "filter", "within", "as", "select", "join",
    "if", "array", "row", "interval", "extract", "position", "substring", "trim", "overlay", "into",
    "table", "lateral", "unnest", "with", "insert", "update", "delete", "set", "returning", "count",
    "decimal", "numeric", "varchar", "char", "timestamp", "date", "time", "float", "double",
    "int", "integer", "bigint", "smallint", "text", "is", "like", "ilike", "between", "by",
    "partition", "order", "group", "having", "limit", "offset", "union", "except", "intersect",
}  # fmt: skip
_PURE_FUNCTIONS = frozenset(
    {
        "sum", "avg", "min", "max", "now", "version", "nullif", "greatest", "least", "lower",
        "upper", "length", "char_length", "character_length", "octet_length", "bit_length",
        "substr", "ltrim", "rtrim", "btrim", "replace", "concat", "concat_ws", "format", "to_char",
        "to_date", "to_timestamp", "to_number", "date_trunc", "date_part", "age", "round", "floor",
        "ceil", "ceiling", "abs", "mod", "power", "pow", "sqrt", "exp", "ln", "log", "log10",
        "sign", "trunc", "random", "pi", "degrees", "radians", "sin", "cos", "tan", "div",
        "pg_size_pretty", "pg_database_size", "pg_relation_size", "pg_total_relation_size",
        "pg_table_size", "pg_indexes_size", "pg_column_size", "pg_tablespace_size",
        "pg_tablespace_location", "pg_current_wal_lsn", "pg_current_wal_insert_lsn",
        "pg_current_wal_flush_lsn", "pg_is_in_recovery", "pg_postmaster_start_time",
        "pg_conf_load_time", "current_setting", "pg_backend_pid", "array_agg", "string_agg",
        "json_agg", "jsonb_agg", "json_object_agg", "jsonb_object_agg", "row_number", "rank",
        "dense_rank", "lag", "lead", "first_value", "last_value", "nth_value", "ntile",
        "percent_rank", "cume_dist", "generate_series", "split_part", "regexp_replace",
        "regexp_matches", "regexp_match", "regexp_split_to_table", "regexp_split_to_array",
        "regexp_count", "regexp_like", "regexp_substr", "md5", "sha224", "sha256", "sha384",
        "sha512", "encode", "decode", "pg_get_viewdef", "pg_get_indexdef", "pg_get_constraintdef",
        "pg_get_functiondef", "pg_get_triggerdef", "pg_get_expr", "pg_get_userbyid",
        "pg_get_serial_sequence", "pg_get_keywords", "has_table_privilege", "has_schema_privilege",
        "has_database_privilege", "has_column_privilege", "has_function_privilege",
        "has_sequence_privilege", "pg_has_role", "current_database", "current_schema",
        "current_schemas", "inet_server_addr", "inet_server_port", "inet_client_addr",
        "inet_client_port", "pg_last_xact_replay_timestamp", "pg_wal_lsn_diff",
        "pg_last_wal_receive_lsn", "pg_last_wal_replay_lsn", "pg_blocking_pids", "pg_typeof",
        "quote_ident", "quote_literal", "quote_nullable", "obj_description", "col_description",
        "shobj_description", "format_type", "pg_encoding_to_char", "to_json", "to_jsonb",
        "jsonb_pretty", "json_build_object", "jsonb_build_object", "json_build_array",
        "jsonb_build_array", "json_extract_path", "jsonb_extract_path", "json_extract_path_text",
        "jsonb_extract_path_text", "json_array_length", "jsonb_array_length", "jsonb_each",
        "json_each", "jsonb_each_text", "json_each_text", "jsonb_object_keys", "json_object_keys",
        "json_typeof", "jsonb_typeof", "jsonb_path_query", "jsonb_set", "jsonb_strip_nulls",
        "array_length", "array_to_string", "string_to_array", "array_upper", "array_lower",
        "array_position", "array_remove", "array_append", "array_cat", "cardinality", "left",
        "right", "lpad", "rpad", "reverse", "repeat", "strpos", "initcap", "translate", "chr",
        "ascii", "bool_and", "bool_or", "every", "stddev", "stddev_pop", "stddev_samp", "variance",
        "var_pop", "var_samp", "percentile_cont", "percentile_disc", "mode", "corr", "covar_pop",
        "covar_samp", "regr_slope", "make_interval", "make_date", "make_time", "make_timestamp",
        "make_timestamptz", "clock_timestamp", "statement_timestamp", "transaction_timestamp",
        "timeofday", "to_hex", "width_bucket", "num_nonnulls", "num_nulls", "txid_current",
        "txid_current_if_assigned", "pg_current_xact_id", "pg_xact_commit_timestamp",
        "pg_stat_get_activity", "pg_stat_get_backend_pid", "pg_stat_file", "pg_read_file",
        "pg_read_binary_file", "pg_ls_dir", "pg_ls_waldir", "pg_ls_logdir", "pg_ls_tmpdir",
        "pg_ls_archive_statusdir", "pg_control_checkpoint", "pg_control_system", "pg_control_init",
        "pg_control_recovery", "pg_walfile_name", "pg_walfile_name_offset", "pg_relation_filepath",
        "pg_relation_filenode", "pg_filenode_relation", "pg_partition_tree", "pg_partition_root",
        "pg_partition_ancestors", "pg_options_to_table", "pg_get_partkeydef", "pg_get_ruledef",
        "pg_get_statisticsobjdef", "pg_index_column_has_property", "pg_indexam_has_property",
        "pg_index_has_property", "pg_column_is_updatable", "pg_relation_is_updatable", "pg_sleep",
        "pg_stat_get_numscans", "pg_stat_get_live_tuples", "pg_stat_get_dead_tuples",
        "pg_jit_available", "pg_last_committed_xact", "pg_snapshot_xmin", "pg_current_snapshot",
        "pg_visible_in_snapshot", "pg_get_wal_replay_pause_state", "pg_is_wal_replay_paused",
        "pg_tablespace_databases", "pg_get_replica_identity_index", "pg_get_object_address",
        "pg_identify_object", "pg_describe_object", "pg_settings_get_flags", "pg_input_is_valid",
        "pg_size_bytes", "pg_column_compression", "ifnull", "isnull", "nvl", "iif", "date_format",
        "from_unixtime", "unix_timestamp", "str_to_date", "datediff", "timestampdiff",
        "timestampadd", "date_add", "date_sub", "adddate", "subdate", "curdate", "curtime",
        "sysdate", "utc_timestamp", "utc_date", "utc_time", "group_concat", "json_extract",
        "json_unquote", "json_keys", "json_length", "json_contains", "json_valid", "json_type",
        "json_quote", "json_search", "json_value", "json_pretty", "json_arrayagg", "json_objectagg",
        "inet_ntoa", "inet_aton", "inet6_ntoa", "inet6_aton", "database", "schema", "user",
        "current_user", "session_user", "system_user", "connection_id", "last_insert_id",
        "found_rows", "row_count", "uuid", "uuid_short", "sleep", "benchmark", "load_file", "hex",
        "unhex", "bin", "oct", "conv", "field", "find_in_set", "instr", "locate", "lcase", "ucase",
        "space", "soundex", "elt", "makedate", "maketime", "monthname", "dayname", "dayofweek",
        "dayofmonth", "dayofyear", "week", "weekday", "weekofyear", "yearweek", "year", "month",
        "day", "hour", "minute", "second", "quarter", "microsecond", "last_day", "period_add",
        "period_diff", "sec_to_time", "time_to_sec", "to_days", "from_days", "to_seconds",
        "time_format", "convert_tz", "crc32", "sha1", "sha2", "aes_encrypt", "aes_decrypt",
        "compress", "uncompress", "uncompressed_length", "bit_count", "bit_and", "bit_or",
        "bit_xor", "std", "std_dev", "cot", "truncate", "rand", "typeof", "sqlite_version",
        "datetime", "julianday", "strftime", "printf", "quote", "zeroblob", "likelihood", "likely",
        "unlikely", "unicode", "total", "changes", "last_insert_rowid", "total_changes",
        "sqlite_source_id", "readfile", "json", "json_array", "json_object",
        "json_tree", "json_group_array", "json_group_object", "json_insert", "json_patch",
        "json_remove", "json_set", "randomblob", "glob", "char", "coalesce", "count", "date",
        "time", "timestamp", "extract", "position", "substring", "trim", "overlay", "cast",
        "interval", "array", "row", "if", "exists", "any", "all", "some", "unnest",
        "values", "timezone",
    }
)  # fmt: skip
_WRITING_FUNCTIONS = frozenset(
    {
        "pg_terminate_backend", "pg_cancel_backend", "pg_reload_conf", "pg_rotate_logfile",
        "pg_switch_wal", "pg_create_restore_point", "pg_promote", "pg_wal_replay_pause",
        "pg_wal_replay_resume", "pg_start_backup", "pg_stop_backup", "pg_backup_start",
        "pg_backup_stop", "pg_create_physical_replication_slot",
        "pg_create_logical_replication_slot", "pg_drop_replication_slot",
        "pg_replication_origin_create", "pg_replication_origin_drop", "pg_logical_emit_message",
        "pg_stat_reset", "pg_stat_reset_shared", "pg_stat_reset_single_table_counters",
        "pg_stat_statements_reset", "pg_file_write", "pg_file_rename", "pg_file_unlink",
        "pg_file_sync", "lo_import", "lo_export", "lo_unlink", "lo_create", "lo_creat", "lo_put",
        "lo_from_bytea", "lo_truncate", "nextval", "setval", "set_config", "pg_notify",
        "pg_advisory_lock", "pg_advisory_xact_lock", "pg_try_advisory_lock", "pg_advisory_unlock",
        "pg_advisory_unlock_all", "get_lock", "release_lock", "release_all_locks", "writefile",
        "pg_import_system_collations",
    }
)  # fmt: skip


def classify_sql(sql: str) -> Verdict:
    """The level of a SQL script: the worst of its statements."""
    text = _STRINGS.sub(" '' ", sql)
    statements = [s.strip() for s in re.split(r";|\n(?=\\)", text) if s.strip()]
    if not statements:
        return unk("empty SQL", "sql")
    return worst(_statement(s) for s in statements) or unk("empty SQL", "sql")


def _functions(stmt: str) -> Verdict | None:
    vs: list[Verdict] = []
    for m in _CALL.finditer(stmt):
        fn = m.group(1).lower().split(".")[-1]
        if fn in _KEYWORDS or fn in _PURE_FUNCTIONS:
            continue
        if fn in _WRITING_FUNCTIONS:
            vs.append(mut(f"SQL calls {fn}(): changes data or server state", "sql.mutate"))
        else:
            vs.append(
                unk(f"SQL calls {fn}(): a function this classifier does not know (it may write)", "sql")
            )
    return worst(vs)


def _statement(stmt: str) -> Verdict:
    words = stmt.lower().replace("(", " ( ").split()
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
    if head == "explain" and {"analyze", "analyse"} & set(words[1:3]):
        inner = stmt.split(None, 2)[2] if len(words) > 2 else ""
        inner = re.sub(r"^\s*(?:\([^)]*\)\s*)?(?:verbose\s+)?", "", inner, flags=re.I)
        return _statement(inner) if inner.strip() else ro("EXPLAIN ANALYZE", "sql.read")
    if head == "pragma":
        changing = re.match(
            r"pragma\s+(?:\w+\.)?(optimize|wal_checkpoint|incremental_vacuum|shrink_memory)", stmt, re.I
        )
        if "=" in stmt or changing:
            return mut("SQL PRAGMA … = / optimize / checkpoint: changes the database", "sql.mutate")
        return ro("SQL PRAGMA: reads a setting or the schema", "sql.read")
    if head == "copy" and "program" in words:
        return unk("SQL COPY … PROGRAM: runs a command on the database server", "sql")
    if head in _RUNS_CODE:
        return unk(f"SQL {head.upper()}: runs code (a procedure or a block)", "sql")
    if head == "with" and any(w in words for w in ("delete", "update", "insert")):
        return mut("SQL WITH … data-modifying statement", "sql.mutate")
    if head == "select" and "into" in words:
        return mut("SQL SELECT INTO / INTO OUTFILE: creates a table or a file", "sql.mutate")
    if head in _READ or (head.startswith("\\d") and len(head) <= 4):
        v = ro(f"SQL {head.upper()}: reads data", "sql.read")
        calls = _functions(stmt)
        return v if calls is None else calls
    if head in _MUTATE:
        return mut(f"SQL {head.upper()}: changes data or schema", "sql.mutate")
    return unk(f"SQL statement {head!r}: not one this classifier knows", "sql")


# -- psql meta-commands ---------------------------------------------------------------------------
_PSQL_READ = re.compile(
    r"^(?:d[a-zA-Z]*\+?S?|l\+?|list|x|timing|q|quit|conninfo|echo|qecho|warn|encoding|errverbose|"
    r"copyright|\?|h|help|a|t|H|f|C|T|pset|set|unset|if|elif|else|endif|gset|gdesc|sf\+?|sv\+?|c|"
    r"connect|crosstabview|watch|bind|getenv|prompt|r|reset|p|print|lo_list|z|cd|gx|g|sendpipeline|"
    r"startpipeline|endpipeline|syncpipeline|flushrequest|flush|getresults|restrict|unrestrict)$"
)
_PSQL_WRITE = re.compile(r"^(?:o|out|w|write|s|lo_export|password|lo_import|lo_unlink)$")
_PSQL_RUN = re.compile(r"^(?:!|gexec|i|include|ir|include_relative|e|edit|ef|ev|setenv)$")


def psql_text(text: str) -> Verdict:
    """A ``psql -c`` string: SQL with backslash meta-commands anywhere in it."""
    parts = re.split(r"(?<!\\)\\(?=[!?a-zA-Z])", text)
    vs: list[Verdict] = []
    if parts[0].strip():
        vs.append(classify_sql(parts[0]))
    for part in parts[1:]:
        m = re.match(r"(!|\?|[a-zA-Z_+]+)\s*(.*)", part, re.S)
        if m is None:
            vs.append(unk("psql meta-command this classifier cannot read", "sql"))
            continue
        name, arg = m.group(1), m.group(2).strip()
        name = name.rstrip("+") if name not in ("?",) else name
        if name in ("copy",):
            vs.append(_copy(arg))
        elif _PSQL_RUN.match(name):
            vs.append(unk(f"psql \\{name}: runs a command, a file or the result as SQL", "sql"))
        elif name in ("g", "gx", "o", "out", "w", "write") and arg.startswith("|"):
            vs.append(unk(f"psql \\{name} |COMMAND: pipes to a command", "sql"))
        elif name in ("g", "gx") and arg and not arg.startswith(("(", "\\")):
            vs.append(mut(f"psql \\{name} FILE: writes the result to a file", "files.write"))
        elif _PSQL_WRITE.match(name):
            if arg or name not in ("o", "out"):
                vs.append(mut(f"psql \\{name}: writes a file or changes large objects", "files.write"))
            else:
                vs.append(ro(f"psql \\{name}: output back to stdout", "sql.read"))
        elif _PSQL_READ.match(name):
            vs.append(ro(f"psql \\{name}: describes or formats", "sql.read"))
            tail = re.split(r"\n", arg, maxsplit=1)
            if len(tail) > 1 and tail[1].strip():
                vs.append(classify_sql(tail[1]))
        else:
            vs.append(unk(f"psql \\{name}: a meta-command this classifier does not know", "sql"))
    return worst(vs) or unk("empty psql command", "sql")


def _copy(arg: str) -> Verdict:
    low = arg.lower()
    if " program " in f" {low} ":
        return unk("psql \\copy … program: runs a command", "sql")
    if re.search(r"\bto\b", low):
        return mut("psql \\copy … to: writes a local file", "files.write")
    return mut("psql \\copy … from: inserts rows from a file", "sql.mutate")


# -- mysql client commands ------------------------------------------------------------------------
_MYSQL_RUN = re.compile(r"^\s*(?:system|\\!|source|\\\.|pager|\\P|edit|\\e|delimiter|\\d)\b", re.I | re.M)
_MYSQL_WRITE = re.compile(r"^\s*(?:tee|\\T|ssl_session_data_print)\b", re.I | re.M)


def mysql_text(text: str) -> Verdict:
    """A ``mysql -e`` string: statements, and client commands (``system``, ``tee``, ``source`` …)."""
    stripped = _STRINGS.sub(" '' ", text)
    if _MYSQL_RUN.search(stripped) or re.search(r"\\[!.Pe]", stripped):
        return unk(
            "mysql client command (system, source, pager, edit, delimiter): runs a command or file", "sql"
        )
    if _MYSQL_WRITE.search(stripped) or "\\T" in stripped:
        return mut("mysql tee: writes the session to a file", "files.write")
    return classify_sql(text)


# -- sqlite3 dot-commands -------------------------------------------------------------------------
_DOT_READ = frozenset(
    {
        "tables", "schema", "fullschema", "indexes", "indices", "databases", "dump", "headers",
        "header", "mode", "show", "stats", "timer", "width", "help", "quit", "exit", "print",
        "separator", "nullvalue", "echo", "bail", "changes", "dbinfo", "eqp", "explain", "lint",
        "parameter", "prompt", "scanstats", "sha3sum", "vfsinfo", "vfslist", "vfsname", "expert",
        "timeout", "limit", "recover", "binary", "crnl", "auth", "progress", "nonce", "connection",
        "dbtotxt", "intck", "version", "cd",
    }
)  # fmt: skip
_DOT_WRITE = frozenset({"output", "once", "save", "backup", "clone", "log", "trace", "iotrace", "excel"})
_DOT_CHANGE = frozenset(
    {"restore", "import", "open", "imposter", "dbconfig", "filectrl", "testctrl", "session", "unmodule"}
)
_DOT_RUN = frozenset({"shell", "system", "load", "read", "archive", "ar"})


def sqlite_command(text: str) -> Verdict:
    """One sqlite3 command-line argument: a dot-command, or SQL."""
    stripped = text.strip()
    if not stripped.startswith("."):
        return classify_sql(text)
    vs: list[Verdict] = []
    for line in stripped.splitlines():
        line = line.strip()
        if not line:
            continue
        if not line.startswith("."):
            vs.append(classify_sql(line))
            continue
        name, _, arg = line[1:].partition(" ")
        arg = arg.strip()
        if (
            name in _DOT_RUN
            or arg.startswith("|")
            or (name in ("once", "output") and arg.startswith(("-x", "-e")))
        ):
            vs.append(unk(f"sqlite3 .{name}: runs a command, a file or loads a library", "sql"))
        elif name in _DOT_WRITE:
            if name in ("output", "log", "trace") and (not arg or arg in ("stdout", "stderr", "off")):
                vs.append(ro(f"sqlite3 .{name}: back to stdout", "sql.read"))
            else:
                vs.append(mut(f"sqlite3 .{name}: writes a file", "files.write"))
        elif name in _DOT_CHANGE:
            vs.append(mut(f"sqlite3 .{name}: changes the database or its settings", "sql.mutate"))
        elif name in _DOT_READ:
            vs.append(ro(f"sqlite3 .{name}: reads", "sql.read"))
        else:
            vs.append(unk(f"sqlite3 .{name}: a dot-command this classifier does not know", "sql"))
    return worst(vs) or unk("empty sqlite3 command", "sql")
