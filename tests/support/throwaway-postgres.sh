# A throwaway PostgreSQL for the shell-driven suites (schemathesis, the end-to-end run):
# source this file, call `start_postgres LABEL`, and `stop_postgres` from your EXIT trap.
#
# The server gets its own folder (data, log, socket), trust authentication on loopback only,
# a free port, and durability off: nothing in it outlives the run, and it is never crashed
# (the crash tests start durable servers of their own, tests/support/pg_server.rs). As root,
# initdb and pg_ctl run as the `postgres` user (initdb refuses root). Needs the `postgresql`
# package (`make deps`). After `start_postgres`, PG_URL is the URL of its database
# `petstore`; `stop_postgres` copies the server's log to $PG_LOG_COPY if that is set.

PG_DIR=""

# Runs a PostgreSQL program as the owner of the folder.
as_postgres() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

start_postgres() {
  local label="${1:-petstore}"
  PG_BIN="${PETSTORE_PG_BIN:-}"
  if [ -z "$PG_BIN" ]; then
    for dir in /usr/lib/postgresql/*/bin; do # Debian's layout; the last is the newest
      [ -x "$dir/initdb" ] && PG_BIN="$dir"
    done
  fi
  [ -x "$PG_BIN/initdb" ] || PG_BIN="$(dirname "$(command -v initdb 2>/dev/null || echo /nonexistent/initdb)")"
  if [ ! -x "$PG_BIN/initdb" ]; then
    echo "PostgreSQL is missing: install the postgresql package: make deps" >&2
    return 1
  fi
  PG_DIR="$(mktemp -d "${TMPDIR:-/tmp}/$label-pg.XXXXXX")"
  [ "$(id -u)" -ne 0 ] || chown postgres: "$PG_DIR"
  if ! (cd "$PG_DIR" && as_postgres "$PG_BIN/initdb" -D "$PG_DIR/data" -A trust -U petstore -E UTF8 \
    --locale=C.UTF-8 --no-sync --no-instructions >"$PG_DIR/initdb.log" 2>&1); then
    echo "initdb failed: $(cat "$PG_DIR/initdb.log")" >&2
    return 1
  fi
  printf "%s\n" "listen_addresses = '127.0.0.1'" "unix_socket_directories = '$PG_DIR'" \
    "fsync = off" "synchronous_commit = off" "full_page_writes = off" >>"$PG_DIR/data/postgresql.conf"
  local port started=""
  for _ in 1 2 3 4 5; do
    port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    if (cd "$PG_DIR" && as_postgres "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/postgres.log" -w -t 60 \
      -o "-p $port" start >/dev/null 2>&1); then
      started=yes
      break
    fi
    # Another process took the port between our look and the server's bind: try another.
    grep -q "could not bind" "$PG_DIR/postgres.log" 2>/dev/null || break
  done
  if [ -z "$started" ]; then
    echo "PostgreSQL did not start: $(cat "$PG_DIR/postgres.log" 2>/dev/null)" >&2
    return 1
  fi
  if ! "$PG_BIN/psql" -X -q -h "$PG_DIR" -p "$port" -U petstore -d postgres -c "CREATE DATABASE petstore"; then
    echo "CREATE DATABASE failed" >&2
    return 1
  fi
  PG_URL="postgres://petstore@127.0.0.1:$port/petstore"
}

stop_postgres() {
  [ -n "$PG_DIR" ] || return 0
  if [ -f "$PG_DIR/data/postmaster.pid" ]; then
    (cd "$PG_DIR" && as_postgres "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m immediate -w stop >/dev/null 2>&1) || true
  fi
  [ -z "${PG_LOG_COPY:-}" ] || cp "$PG_DIR/postgres.log" "$PG_LOG_COPY" 2>/dev/null || true
  rm -rf "$PG_DIR"
  PG_DIR=""
}
