#!/usr/bin/env bash
# The reference server under load: PUTs per second and p50/p99 latency for the Folio-folder
# storage (one process) and PostgreSQL (one and two processes on one database), with many owners
# and with one hot owner. Everything on 127.0.0.1; PostgreSQL is a throwaway cluster with fsync
# on (every acknowledged push is durable, as on the folder). Prints a Markdown table.
#
# Usage: Examples/SyncServer/load-benchmark.sh [SECONDS] [CONNECTIONS]   (defaults: 10, 32)
# Needs PostgreSQL's binaries (apt-get install postgresql). Builds in release mode first.
set -euo pipefail
cd "$(dirname "$0")"
seconds=${1:-10}
connections=${2:-32}
swift build -c release >/dev/null
bin=.build/release
work=$(mktemp -d /tmp/folio-load.XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  if [ -n "${PG_DIR:-}" ]; then
    as=(); [ "$(id -u)" = 0 ] && as=(runuser -u postgres --)
    "${as[@]}" "$PGBIN/pg_ctl" -D "$PG_DIR/data" -m fast -w stop >/dev/null 2>&1 || true
    rm -rf "$PG_DIR"
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# A durable throwaway cluster (fsync on), on a Unix socket.
PGBIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
PG_DIR=$(mktemp -d /tmp/fpg-load.XXXXXX)
as=(); if [ "$(id -u)" = 0 ]; then chown postgres: "$PG_DIR"; as=(runuser -u postgres --); fi
chmod 700 "$PG_DIR"
"${as[@]}" "$PGBIN/initdb" -D "$PG_DIR/data" -U folio --auth=trust -E UTF8 >/dev/null
"${as[@]}" "$PGBIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/log" -w start \
  -o "-c listen_addresses='' -k $PG_DIR -c max_connections=200" >/dev/null

# 64 owners.
for i in $(seq 1 64); do echo "owner$i token-$(printf '%08d' "$i")-load"; done > "$work/tokens"

start_server() { # NAME ARGS… ; sets URL to its base URL
  local name=$1; shift
  "$bin/folio-sync-server" --port 0 --tokens "$work/tokens" "$@" > "$work/$name.out" 2> "$work/$name.err" &
  pids+=($!)
  for _ in $(seq 1 300); do
    if grep -q '^listening on ' "$work/$name.out"; then URL=$(sed -n 's/^listening on //p' "$work/$name.out"); return; fi
    sleep 0.1
  done
  echo "the server $name did not start: $(cat "$work/$name.err")" >&2; exit 1
}
stop_servers() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  pids=()
}
load() { # LABEL URLS… [-- --hot]
  local label=$1; shift
  local args=()
  for url in "$@"; do if [ "$url" = --hot ]; then args+=(--hot); else args+=(--url "$url"); fi; done
  local line
  line=$("$bin/folio-sync-load" "${args[@]}" --tokens "$work/tokens" --seconds "$seconds" --connections "$connections")
  python3 -c 'import json,sys; r=json.loads(sys.argv[2]); print("| %s | %d | %.2f | %.2f | %d |" % (sys.argv[1], r["putsPerSecond"], r["p50Ms"], r["p99Ms"], r["errors"]))' "$label" "$line"
}
database() { "$PGBIN/createdb" -h "$PG_DIR" -U folio "$1"; echo "postgres://folio@/$1?host=$PG_DIR&sslmode=disable"; }

echo "| storage, processes, owners | PUTs/s | p50 ms | p99 ms | errors |"
echo "|---|---|---|---|---|"
start_server folder --data "$work/folder-many"; load "folder, 1, many (64)" "$URL"; stop_servers
start_server folder-hot --data "$work/folder-hot"; load "folder, 1, one hot" "$URL" --hot; stop_servers
db=$(database load1); start_server pg1 --postgres "$db" --pool-size 32; load "PostgreSQL, 1, many (64)" "$URL"; stop_servers
db=$(database load2); start_server pg1h --postgres "$db" --pool-size 32; load "PostgreSQL, 1, one hot" "$URL" --hot; stop_servers
db=$(database load3); start_server pg2a --postgres "$db" --pool-size 16; a=$URL; start_server pg2b --postgres "$db" --pool-size 16
load "PostgreSQL, 2, many (64)" "$a" "$URL"; stop_servers
db=$(database load4); start_server pg2ha --postgres "$db" --pool-size 16; a=$URL; start_server pg2hb --postgres "$db" --pool-size 16
load "PostgreSQL, 2, one hot" "$a" "$URL" --hot; stop_servers
echo
echo "($seconds s each, $connections connections, $(nproc) cores, PostgreSQL $("$PGBIN/postgres" --version | awk '{print $3}') with fsync on)"
