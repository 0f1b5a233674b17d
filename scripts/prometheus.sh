#!/usr/bin/env bash
# Start a throwaway Prometheus scraping a real node-exporter, for tests; print its URL (last line).
#
#   url=$(bash scripts/prometheus.sh /tmp/prom-test | tail -1)
#   ... use $url ...
#   kill $(cat /tmp/prom-test/*.pid)
#
# Everything lives under the directory given as the argument: the config and rule files written
# here, the TSDB and Alertmanager data, the logs (*.log) and one PID file per process (*.pid), so
# the caller can stop exactly the processes started here. Nothing listens beyond 127.0.0.1.
# Installs the Debian packages (prometheus, prometheus-node-exporter, prometheus-alertmanager)
# with apt-get when the binaries are missing (needs root). Idempotent: when the processes recorded
# in the directory still run and Prometheus is ready, it only prints the URL again.
#
# Environment:
#   DEVOPS_AGENT_PROM_PORT           Prometheus port (default 19090)
#   DEVOPS_AGENT_NODE_EXPORTER_PORT  node-exporter port (default 19100)
#   DEVOPS_AGENT_ALERTMANAGER_PORT   Alertmanager port (default 19093)
#   DEVOPS_AGENT_PROM_ALERTMANAGER   1 = also start Alertmanager and send alerts to it
#
# Progress goes to stderr so stdout is just the URL. Exits non-zero with a message when it
# cannot provide a ready server.
set -euo pipefail

HOST=127.0.0.1
PROM_PORT="${DEVOPS_AGENT_PROM_PORT:-19090}"
NODE_PORT="${DEVOPS_AGENT_NODE_EXPORTER_PORT:-19100}"
AM_PORT="${DEVOPS_AGENT_ALERTMANAGER_PORT:-19093}"
WITH_AM="${DEVOPS_AGENT_PROM_ALERTMANAGER:-0}"
URL="http://${HOST}:${PROM_PORT}"

log() { echo "prometheus.sh: $*" >&2; }
die() {
    log "error: $*"
    exit 1
}

[ $# -eq 1 ] || die "usage: $0 DIRECTORY (where config, data, logs and PID files go)"
mkdir -p "$1" || die "cannot create directory $1"
DIR=$(cd "$1" && pwd)

# Debian names the binaries prometheus-*; upstream tarballs do not.
find_bin() {
    local name
    for name in "$@"; do
        if command -v "$name" >/dev/null 2>&1; then
            command -v "$name"
            return 0
        fi
    done
    return 1
}

missing_packages() {
    find_bin prometheus >/dev/null || echo prometheus
    find_bin prometheus-node-exporter node_exporter >/dev/null || echo prometheus-node-exporter
    if [ "$WITH_AM" = 1 ]; then
        find_bin prometheus-alertmanager alertmanager >/dev/null || echo prometheus-alertmanager
    fi
}

ensure_installed() {
    local missing=()
    mapfile -t missing < <(missing_packages)
    [ ${#missing[@]} -eq 0 ] && return
    # Parallel test workers (pytest -n) may get here together, and apt-get refuses a second
    # dpkg: one installs, the others wait for it and then find the binaries.
    exec 9>"${TMPDIR:-/tmp}/devops-agent-prometheus-install.lock"
    flock 9
    mapfile -t missing < <(missing_packages)
    [ ${#missing[@]} -eq 0 ] && return
    [ "$(id -u)" = 0 ] || die "missing ${missing[*]} and installing needs root"
    command -v apt-get >/dev/null 2>&1 || die "missing ${missing[*]} and this is not a Debian system"
    log "installing ${missing[*]} with apt-get"
    export DEBIAN_FRONTEND=noninteractive
    # Debian's maintainer scripts would start the system services on their default ports;
    # policy-rc.d is the supported way to tell them not to, but only add one if none exists.
    local policy=/usr/sbin/policy-rc.d added_policy=0
    if [ ! -e "$policy" ]; then
        printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && added_policy=1
    fi
    local rc=0
    { apt-get update -qq >&2 && apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2; } || rc=$?
    [ "$added_policy" = 1 ] && rm -f "$policy"
    [ "$rc" = 0 ] || die "apt-get install ${missing[*]} failed"
}

http_ok() { curl -fsS -o /dev/null --max-time 2 "$1" 2>/dev/null; }

port_busy() { (exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null; }

pid_alive() {
    local file="$DIR/$1.pid" pid state
    [ -s "$file" ] || return 1
    pid=$(cat "$file")
    [ -r "/proc/$pid/stat" ] || return 1
    # A zombie (exited, not yet reaped) has state Z and does not count as running.
    state=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) || return 1
    [ "$state" != Z ]
}

already_running() {
    pid_alive prometheus && pid_alive node-exporter || return 1
    if [ "$WITH_AM" = 1 ]; then pid_alive alertmanager || return 1; fi
    http_ok "$URL/-/ready"
}

# start NAME BINARY ARGS...: run in the background, detached from this shell, and record the PID.
start() {
    local name=$1
    shift
    if pid_alive "$name"; then
        log "$name already runs (pid $(cat "$DIR/$name.pid"))"
        return
    fi
    log "starting $name"
    # setsid: the process outlives this script and is not hit by signals sent to its group.
    setsid "$@" >"$DIR/$name.log" 2>&1 </dev/null &
    echo $! >"$DIR/$name.pid"
}

wait_for() { # wait_for NAME URL SECONDS
    local i
    for i in $(seq 1 $(($3 * 4))); do
        http_ok "$2" && return 0
        pid_alive "$1" || die "$1 exited; last log lines: $(tail -5 "$DIR/$1.log" 2>/dev/null | tr '\n' ' ')"
        sleep 0.25
    done
    die "$1 not ready at $2 after $3 s (log: $DIR/$1.log)"
}

write_config() {
    cat >"$DIR/rules.yml" <<'EOF'
groups:
  - name: devops-agent-test
    interval: 1s
    rules:
      - record: devops_agent:up:sum
        expr: sum(up)
      - alert: DevOpsAgentTestAlwaysFiring
        expr: vector(1) > 0
        labels:
          severity: info
        annotations:
          summary: Always-firing alert used by the DevOps Agent test suite
          description: Fires as long as rule evaluation works; expression vector(1) > 0.
EOF
    {
        cat <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - $DIR/rules.yml
scrape_configs:
  - job_name: node
    static_configs:
      - targets: ["$HOST:$NODE_PORT"]
  - job_name: prometheus
    static_configs:
      - targets: ["$HOST:$PROM_PORT"]
EOF
        if [ "$WITH_AM" = 1 ]; then
            cat <<EOF
alerting:
  alertmanagers:
    - static_configs:
        - targets: ["$HOST:$AM_PORT"]
EOF
        fi
    } >"$DIR/prometheus.yml"
    cat >"$DIR/alertmanager.yml" <<'EOF'
route:
  receiver: "null"
  group_wait: 1s
receivers:
  - name: "null"
EOF
}

main() {
    command -v curl >/dev/null 2>&1 || die "curl is needed to check readiness"
    command -v setsid >/dev/null 2>&1 || die "setsid (util-linux) is needed to start the servers"
    if already_running; then
        log "Prometheus in $DIR already runs and is ready"
        echo "$URL"
        return
    fi
    ensure_installed
    local prom node am
    prom=$(find_bin prometheus) || die "no prometheus binary after installing"
    node=$(find_bin prometheus-node-exporter node_exporter) || die "no node-exporter binary after installing"
    for port in "$PROM_PORT" "$NODE_PORT"; do
        if port_busy "$port" && ! { pid_alive prometheus || pid_alive node-exporter; }; then
            die "port $port on $HOST is taken by another process; set DEVOPS_AGENT_PROM_PORT / DEVOPS_AGENT_NODE_EXPORTER_PORT"
        fi
    done
    write_config
    mkdir -p "$DIR/data" "$DIR/alertmanager-data"

    # A few collectors keep it light; the tests need cpu, and the rest are cheap and portable.
    start node-exporter "$node" --web.listen-address="$HOST:$NODE_PORT" --collector.disable-defaults \
        --collector.cpu --collector.meminfo --collector.loadavg --collector.time --collector.stat
    wait_for node-exporter "http://$HOST:$NODE_PORT/metrics" 30

    if [ "$WITH_AM" = 1 ]; then
        am=$(find_bin prometheus-alertmanager alertmanager) || die "no alertmanager binary after installing"
        # --cluster.listen-address= turns off gossip clustering (it would bind 0.0.0.0:9094).
        start alertmanager "$am" --config.file="$DIR/alertmanager.yml" --storage.path="$DIR/alertmanager-data" \
            --web.listen-address="$HOST:$AM_PORT" --cluster.listen-address=
        wait_for alertmanager "http://$HOST:$AM_PORT/-/ready" 30
    fi

    start prometheus "$prom" --config.file="$DIR/prometheus.yml" --storage.tsdb.path="$DIR/data" \
        --storage.tsdb.retention.time=2h --web.listen-address="$HOST:$PROM_PORT"
    wait_for prometheus "$URL/-/ready" 60
    log "ready (pids: $(cat "$DIR"/*.pid | tr '\n' ' '))"
    echo "$URL"
}

main
