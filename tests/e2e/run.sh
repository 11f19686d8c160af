#!/usr/bin/env bash
# The end-to-end suite: the real app binary under tauri-driver and WebKitWebDriver, on a
# virtual X display with its own D-Bus session. Takes no arguments; expects the binaries
# built (APP_BIN, SERVER_BIN default to target/debug/ of this repository). E2E_TESTS picks
# test files (default: every *.test.js here; bench.sh runs scale.test.js alone). Screenshots,
# metrics and per-test logs land in target/e2e/. Exits non-zero on any failure.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$HERE/../.." && pwd)"
export APP_BIN="${APP_BIN:-$REPO_ROOT/target/debug/petstore-desktop}"
export SERVER_BIN="${SERVER_BIN:-$REPO_ROOT/target/debug/petstore-server}"
export PATH="$HOME/.cargo/bin:$PATH"

fail() {
  echo "e2e: $*" >&2
  exit 1
}

for bin in "$APP_BIN" "$SERVER_BIN"; do
  [ -x "$bin" ] || fail "missing $bin: build it first (cargo build -p petstore-desktop; cargo build --bin petstore-server)"
done
for tool in tauri-driver WebKitWebDriver xvfb-run dbus-run-session node npm; do
  command -v "$tool" >/dev/null || fail "missing $tool (tauri-driver: cargo install tauri-driver --locked; the others: apt-get install xvfb webkit2gtk-driver dbus)"
done

cd "$HERE"
# Registry packages only, and no install scripts (webdriverio's optional driver downloads).
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
fi

mkdir -p "$REPO_ROOT/target/e2e"
rm -rf "$REPO_ROOT/target/e2e/logs"

# The suite's temp files live in one directory, and every process group it spawns is listed,
# so that nothing is left behind even when a test, or the whole run, is cut short.
E2E_TMP="$(mktemp -d "${TMPDIR:-/tmp}/petstore-e2e.XXXXXX")"
export E2E_TMP
export E2E_PID_FILE="$E2E_TMP/pids"
: >"$E2E_PID_FILE"
cleanup() {
  local pid left=0
  [ -f "$E2E_PID_FILE" ] || return 0
  while read -r pid; do
    [ -n "$pid" ] || continue
    # Anything but a zombie still in that process group.
    if ps -eo pgid=,stat= | awk -v g="$pid" '$1 == g && $2 !~ /^Z/ { found = 1 } END { exit !found }'; then
      left=1
      kill -KILL -- "-$pid" 2>/dev/null || true
    fi
  done <"$E2E_PID_FILE"
  rm -rf "$E2E_TMP"
  return "$left"
}
trap 'cleanup || true; exit 130' INT
trap 'cleanup || true; exit 143' TERM

# One test file at a time (two cores, one WebKit app each); every test has its own timeout
# and the whole run is bounded here too. The last line is node's test summary.
if [ -n "${E2E_TESTS:-}" ]; then
  read -r -a TESTS <<<"$E2E_TESTS"
else
  TESTS=(./*.test.js)
fi
export NO_AT_BRIDGE=1
suite() {
  timeout --kill-after=20s 540s \
    xvfb-run -a -s "-screen 0 1440x900x24 -nolisten tcp" \
    dbus-run-session -- \
    node --test --test-concurrency=1 --test-timeout=150000 --test-reporter=tap "$@"
}
set +e
suite "${TESTS[@]}"
rc=$?
set -e

# Remote mode once more against a server on PostgreSQL (a chain's till talks to one): the app cannot tell the
# engines apart, and this run shows it. E2E_POSTGRES=0 leaves it out; so does picking tests.
if [ -z "${E2E_TESTS:-}" ] && [ "${E2E_POSTGRES:-1}" != 0 ]; then
  # shellcheck source=../support/throwaway-postgres.sh
  . "$REPO_ROOT/tests/support/throwaway-postgres.sh"
  PG_LOG_COPY="$REPO_ROOT/target/e2e/postgres.log"
  trap 'stop_postgres; cleanup || true; exit 130' INT
  trap 'stop_postgres; cleanup || true; exit 143' TERM
  if start_postgres petstore-e2e; then
    set +e
    E2E_SERVER_DB="$PG_URL" suite ./remote-mode.test.js
    pg_rc=$?
    set -e
    [ "$pg_rc" -eq 0 ] || rc="$pg_rc"
  else
    rc=1
  fi
  stop_postgres
fi
if ! cleanup; then
  echo "e2e: processes spawned by the suite were still running after it; killed them" >&2
  [ "$rc" -ne 0 ] || rc=1
fi
exit "$rc"
