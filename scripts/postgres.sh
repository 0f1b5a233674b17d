#!/usr/bin/env bash
# Ensure a local PostgreSQL server for the test suite and print the URL to use (last line of stdout).
#
#   export DEVOPS_AGENT_TEST_POSTGRES_URL=$(bash scripts/postgres.sh | tail -1)
#
# Idempotent and non-interactive; meant for Debian/Ubuntu as root (CI, dev containers). If a
# server already answers on 127.0.0.1:$PORT it is used; otherwise the `postgresql` package is
# installed when missing and a cluster on that port is started (or created). Then the role and
# database below are created when missing. Progress goes to stderr so stdout is just the URL.
# Exits non-zero with a message when it cannot provide a server.
set -euo pipefail

HOST=127.0.0.1
PORT="${DEVOPS_AGENT_PG_PORT:-5432}"
ROLE=devops_agent
PASSWORD=devops_agent
DATABASE=devops_agent_test
URL="postgresql+psycopg://${ROLE}:${PASSWORD}@${HOST}:${PORT}/${DATABASE}"

log() { echo "postgres.sh: $*" >&2; }
die() {
    log "error: $*"
    exit 1
}

server_up() {
    if command -v pg_isready >/dev/null 2>&1; then
        pg_isready -q -h "$HOST" -p "$PORT"
    else
        # No client tools yet: a TCP connect tells us whether anything listens.
        (exec 3<>"/dev/tcp/$HOST/$PORT") 2>/dev/null
    fi
}

can_login() {
    command -v psql >/dev/null 2>&1 &&
        PGPASSWORD="$PASSWORD" PGCONNECT_TIMEOUT=5 psql -h "$HOST" -p "$PORT" -U "$ROLE" -d "$DATABASE" \
            -XqtAc 'SELECT 1' >/dev/null 2>&1
}

as_postgres() {
    if command -v runuser >/dev/null 2>&1; then
        runuser -u postgres -- "$@"
    else
        su postgres -s /bin/sh -c "$(printf '%q ' "$@")"
    fi
}

admin_psql() {
    # Over the local socket with peer authentication: needs no password for the superuser.
    as_postgres psql -X -v ON_ERROR_STOP=1 -p "$PORT" -d postgres -qtA "$@"
}

ensure_installed() {
    command -v pg_ctlcluster >/dev/null 2>&1 && ls -d /usr/lib/postgresql/*/bin >/dev/null 2>&1 && return
    [ "$(id -u)" = 0 ] || die "PostgreSQL is not installed and installing it needs root"
    command -v apt-get >/dev/null 2>&1 || die "PostgreSQL is not installed and this is not a Debian system"
    log "installing postgresql with apt-get"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2 || die "apt-get update failed"
    apt-get install -y -qq postgresql >&2 || die "apt-get install postgresql failed"
}

ensure_cluster_running() {
    local version name status
    # pg_lsclusters -h: "<version> <cluster> <port> <status> <owner> <datadir> <logfile>"
    read -r version name status < <(pg_lsclusters -h | awk -v p="$PORT" '$3 == p {print $1, $2, $4; exit}') || true
    if [ -z "${version:-}" ]; then
        version=$(ls /usr/lib/postgresql | sort -V | tail -1)
        [ -n "$version" ] || die "no PostgreSQL server binaries under /usr/lib/postgresql"
        name=main
        if pg_lsclusters -h | awk -v v="$version" '$1 == v && $2 == "main" {found=1} END {exit !found}'; then
            name="devops_agent_$PORT"
        fi
        log "creating cluster $version/$name on port $PORT"
        pg_createcluster "$version" "$name" -p "$PORT" >&2 || die "pg_createcluster $version $name failed"
        status=down
    fi
    if [ "$status" != online ]; then
        log "starting cluster $version/$name"
        # A concurrent run may have started it meanwhile; only the final check below decides.
        pg_ctlcluster "$version" "$name" start >&2 || log "pg_ctlcluster start returned non-zero"
    fi
    for _ in $(seq 1 60); do
        server_up && return
        sleep 0.5
    done
    die "cluster $version/$name did not accept connections on $HOST:$PORT (see /var/log/postgresql/)"
}

provision() {
    id postgres >/dev/null 2>&1 || die "a server runs on $HOST:$PORT but login as $ROLE fails and there is no local postgres user to fix it"
    log "ensuring role $ROLE and database $DATABASE"
    # DO block: CREATE ROLE has no IF NOT EXISTS, and concurrent runs must not fail on it.
    admin_psql -c "DO \$\$ BEGIN
            CREATE ROLE $ROLE LOGIN CREATEDB PASSWORD '$PASSWORD';
        EXCEPTION WHEN duplicate_object THEN
            ALTER ROLE $ROLE LOGIN CREATEDB PASSWORD '$PASSWORD';
        END \$\$;" >&2 || die "cannot create role $ROLE (is the server local, with peer auth for postgres?)"
    # CREATE DATABASE cannot run inside a DO block; check, create, and re-check if a concurrent
    # run won the race.
    local exists="SELECT 1 FROM pg_database WHERE datname = '$DATABASE'"
    if [ "$(admin_psql -c "$exists")" != 1 ]; then
        admin_psql -c "CREATE DATABASE $DATABASE OWNER $ROLE" >&2 ||
            [ "$(admin_psql -c "$exists")" = 1 ] || die "cannot create database $DATABASE"
    fi
}

main() {
    if server_up; then
        log "a server answers on $HOST:$PORT"
        command -v psql >/dev/null 2>&1 || ensure_installed
    else
        ensure_installed
        ensure_cluster_running
    fi
    if ! can_login; then
        provision
        can_login || die "cannot log in as $ROLE to $DATABASE on $HOST:$PORT (check pg_hba.conf allows password auth)"
    fi
    echo "$URL"
}

main "$@"
