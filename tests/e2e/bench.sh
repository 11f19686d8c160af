#!/usr/bin/env bash
# The desktop app's figures for `make bench`: the RELEASE app on a copy of a
# database (e.g. one seeded with 1,000,000 pets), under Xvfb exactly as the end-to-end suite
# runs it (run.sh: xvfb-run, dbus-run-session, NO_AT_BRIDGE=1, tauri-driver), measured by the
# suite's own scale.test.js:
#   - first screen: app process start (from /proc) to the Pets table showing rows, median of
#     SCALE_LAUNCHES (default 3) starts; and the same on an empty database for comparison;
#   - memory: resident set of the app and every process it started (WebKit's web and network
#     processes), summed, once the first screen shows its data; with the breakdown, and the
#     PSS sum (shared libraries counted once);
#   - the Pets screen's actions (page next/last/first, category, status, search, clearing it),
#     median of SCALE_REPEAT (default 5) runs each, from the click or last key to the new rows
#     painted; and the search's debounce as the app applied it, from the last key to the
#     list_pets request leaving (search_debounce_ms).
#
#   tests/e2e/bench.sh --db PATH --out FILE
#
# Writes key=value lines to FILE (first_screen_ms, memory_mb, processes, page_next_ms, ...;
# the full set, with max and per-part figures, stays in target/e2e/scale-release.txt).
# APP_BIN and SERVER_BIN override target/release/. The database itself is never opened.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$HERE/../.." && pwd)"

usage() { echo "usage: tests/e2e/bench.sh --db PATH --out FILE"; }
fail() {
  echo "bench: $*" >&2
  exit 1
}

DB=""
OUT=""
while [ $# -gt 0 ]; do
  case "$1" in
    --db) DB="${2:?--db needs a path}"; shift 2 ;;
    --out) OUT="${2:?--out needs a path}"; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
done
if [ -z "$DB" ] || [ -z "$OUT" ]; then
  usage >&2
  exit 2
fi
[ -f "$DB" ] || fail "no database at $DB"

export APP_BIN="${APP_BIN:-$REPO_ROOT/target/release/petstore-desktop}"
export SERVER_BIN="${SERVER_BIN:-$REPO_ROOT/target/release/petstore-server}"
[ -x "$APP_BIN" ] || fail "missing $APP_BIN: make ui && cargo build --release -p petstore-desktop --bin petstore-desktop"

# scale.test.js copies the database into the app's fresh data directory itself.
SCALE_DB="$(realpath "$DB")"
export SCALE_DB
export SCALE_OUT="$REPO_ROOT/target/e2e/scale-release.txt"
export SCALE_REPEAT="${SCALE_REPEAT:-5}"
export SCALE_LAUNCHES="${SCALE_LAUNCHES:-3}"
export E2E_TESTS=./scale.test.js
rm -f "$SCALE_OUT"
# run.sh makes it too, but its output goes there from the start (a fresh clone has none).
mkdir -p "$REPO_ROOT/target/e2e"

started=$(date +%s%N)
"$HERE/run.sh" >"$REPO_ROOT/target/e2e/bench-run.log" 2>&1 || {
  tail -n 40 "$REPO_ROOT/target/e2e/bench-run.log" >&2
  fail "scale.test.js failed (whole output: target/e2e/bench-run.log)"
}
elapsed_ms=$((($(date +%s%N) - started) / 1000000))

# The figures BENCHMARKS.md shows, in this order; every one must have been measured.
KEYS=(
  first_screen_ms first_screen_max_ms first_screen_split_ms first_screen_empty_ms
  memory_mb memory_pss_mb memory_empty_mb processes pets
  page_next_ms page_next_max_ms page_last_ms page_last_max_ms page_first_ms
  filter_ms filter_max_ms status_ms
  search_ms search_max_ms search_split_ms search_debounce_ms search_clear_ms
)
lines=()
for key in "${KEYS[@]}"; do
  lines+=("$(grep -m1 "^$key=" "$SCALE_OUT")") || fail "$key missing from $SCALE_OUT"
done
lines+=("app_bench_wall_ms=$elapsed_ms")
mkdir -p "$(dirname "$OUT")"
printf '%s\n' "${lines[@]}" >"$OUT"
cat "$OUT"
