#!/usr/bin/env bash
# schemathesis (PyPI) against the real petstore-server: every check, the examples, coverage,
# fuzzing and stateful phases, driven by the document the server itself serves at
# /openapi.json. Any failure fails the run.
#
#   tests/schemathesis/run.sh              # the bounded run of `make test`, on SQLite
#   tests/schemathesis/run.sh postgres     # the same against a PostgreSQL database
#   SCHEMATHESIS_MAX_EXAMPLES=500 tests/schemathesis/run.sh   # a longer one
#   SCHEMATHESIS_SEED=123 tests/schemathesis/run.sh           # another seed
#
# On postgres, the script starts a throwaway PostgreSQL server of its own (initdb in a
# temporary folder, as the `postgres` user when run as root, on a free loopback port; the
# `postgresql` package, `make deps`) and stops it and removes the folder on exit.
#
# Needs target/debug/petstore-server (cargo build --bin petstore-server), or SERVER_BIN.
# The reports (stateless.xml/.ndjson for the examples, coverage and fuzzing phases,
# stateful.xml/.ndjson for the stateful one, and the server's log) land in
# target/schemathesis/ENGINE/.
set -euo pipefail

ENGINE="${1:-${SCHEMATHESIS_ENGINE:-sqlite}}"
case "$ENGINE" in
  sqlite | postgres) ;;
  *)
    echo "usage: $0 [sqlite|postgres]" >&2
    exit 2
    ;;
esac

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
VERSION=4.32.5
VENV="$ROOT/.venv"
SERVER_BIN="${SERVER_BIN:-$ROOT/target/debug/petstore-server}"
MAX_EXAMPLES="${SCHEMATHESIS_MAX_EXAMPLES:-200}"
SEED="${SCHEMATHESIS_SEED:-20261122}"
# One worker: on CPython 3.11 before 3.11.8 (Debian 12 has 3.11.2), building ASTs in two
# threads at once can raise a spurious "SystemError: AST constructor recursion depth
# mismatch" inside schemathesis (python/cpython#106905), which fails the run at random.
WORKERS="${SCHEMATHESIS_WORKERS:-1}"
OUT="$ROOT/target/schemathesis/$ENGINE"
KEY="psk_schemathesis_0123456789abcdefghijkl"

fail() {
  echo "schemathesis: $*" >&2
  exit 1
}

[ -x "$SERVER_BIN" ] || fail "missing $SERVER_BIN: build it first (cargo build --bin petstore-server)"

# Wheels only: nothing is compiled, and the version is pinned so a new release cannot turn
# the suite red (or green) on its own.
if [ ! -e "$VENV/.schemathesis-$VERSION" ]; then
  [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --only-binary=:all: \
    "schemathesis==$VERSION"
  touch "$VENV/.schemathesis-$VERSION"
fi

# The hooks' own tests first: an exemption that lets through more than it says would turn
# failures of the run into passes.
"$VENV/bin/python" -m unittest discover -q -s "$ROOT/tests/schemathesis" -p 'test_*.py' ||
  fail "the tests of hooks.py failed (above)"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/petstore-schemathesis.XXXXXX")"
SERVER_PID=""
cleanup() {
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  PG_LOG_COPY="$OUT/postgres.log" stop_postgres
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$OUT"

# shellcheck source=../support/throwaway-postgres.sh
. "$ROOT/tests/support/throwaway-postgres.sh"

# A shop with something in it, so GETs by id and the stateful links find real resources.
# The stateful phase gets a shop of its own, seeded the same way (the seed is a fixed run,
# src/demo.rs): started after the fuzzing phase's thousands of random writes, its scenarios
# met whatever those left behind, and ran 64 cases on SQLite against 261 on PostgreSQL with
# the same seed. From a fresh shop, the same requests get the same answers on
# every run of an engine, so a pass means the same on every machine.
if [ "$ENGINE" = postgres ]; then
  start_postgres petstore-schemathesis || fail "no throwaway PostgreSQL (above)"
  PG_PORT="${PG_URL##*:}"
  PG_PORT="${PG_PORT%%/*}"
  "$PG_BIN/psql" -X -q -h "$PG_DIR" -p "$PG_PORT" -U petstore -d postgres -c "CREATE DATABASE petstore_stateful" ||
    fail "CREATE DATABASE petstore_stateful failed"
  DB="$PG_URL"
  STATEFUL_DB="${PG_URL%/petstore}/petstore_stateful"
else
  DB="$WORK/petstore.db"
  STATEFUL_DB="$WORK/stateful.db"
fi
for db in "$DB" "$STATEFUL_DB"; do
  PETSTORE_API_KEY="$KEY" "$SERVER_BIN" seed --db "$db" --pets 50 >"$WORK/seed.log" 2>&1 ||
    fail "petstore-server seed failed: $(cat "$WORK/seed.log")"
done

# Starts the server on `$1` on a free port; sets SERVER_PID and ORIGIN.
# Port 0: the OS picks a free port and the server prints it once it listens.
# schemathesis sends hundreds of requests with no key or a made-up one (ignored_auth,
# missing_required_header) and expects each refused with 401; past 10 a minute the server
# would answer 429 instead and fail those checks, so the limit is raised for this run (the
# limiter has its own tests in tests/api).
start_server() {
  : >"$WORK/stdout"
  PETSTORE_MAX_AUTH_FAILURES=1000000 PETSTORE_API_KEY="$KEY" "$SERVER_BIN" serve --db "$1" --listen 127.0.0.1:0 \
    >"$WORK/stdout" 2>>"$OUT/server.log" &
  SERVER_PID=$!
  ORIGIN=""
  for _ in $(seq 1 150); do
    ORIGIN="$(grep -o 'http://127\.0\.0\.1:[0-9]*' "$WORK/stdout" 2>/dev/null | head -n1 || true)"
    [ -n "$ORIGIN" ] && break
    kill -0 "$SERVER_PID" 2>/dev/null || fail "petstore-server exited: $(cat "$OUT/server.log")"
    sleep 0.1
  done
  [ -n "$ORIGIN" ] || fail "petstore-server did not start within 15 s"
}

stop_server() {
  kill -TERM "$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=""
}

# Every check, with one swapped for a narrower twin: positive_data_acceptance would fail
# the refusals of the contract that depend on the database's contents, which no schema can
# express: a reference to an id that does not exist (400 invalid_reference), an adjustment
# past the stock maximum (400 validation_failed) and an Idempotency-Key already used for
# another order (422 idempotency_key_reused). hooks.py registers
# positive_data_acceptance_but_state_rules, the built-in check with just those answers let
# through; `all` runs it.
export SCHEMATHESIS_HOOKS="$ROOT/tests/schemathesis/hooks.py"
# GET /events is left out: a good request opens an event stream that lasts until the
# client closes it, and schemathesis reads every answer to its end. tests/api/changes.rs
# covers it (its refusals, the stream, resuming, its end at shutdown).
#
# `phases report` runs schemathesis on the server at $ORIGIN with those phases and keeps
# its report as REPORT.ndjson and REPORT.xml; `--generation-deterministic` takes the
# randomness of Hypothesis out beyond the seed (no generated seeds, a fixed exploration)
# and keeps no example database between runs.
run_phases() {
  "$VENV/bin/schemathesis" run "$ORIGIN/openapi.json" \
    --url "$ORIGIN" \
    --header "Authorization: Bearer $KEY" \
    --checks all \
    --exclude-checks positive_data_acceptance \
    --exclude-path /events \
    --phases "$1" \
    --max-examples "$MAX_EXAMPLES" \
    --seed "$SEED" \
    --generation-deterministic \
    --workers "$WORKERS" \
    --no-color \
    --report junit,ndjson --report-junit-path "$OUT/$2.xml" --report-ndjson-path "$OUT/$2.ndjson"
}

status=0
: >"$OUT/server.log"
start_server "$DB"
echo "schemathesis $VERSION against $ORIGIN ($ENGINE), seed $SEED, at most $MAX_EXAMPLES examples per operation"
# From the scratch directory: schemathesis keeps a .schemathesis/ cache in its working
# directory, which does not belong in the repository.
cd "$WORK"
run_phases examples,coverage,fuzzing stateless || status=$?
stop_server

start_server "$STATEFUL_DB"
echo "schemathesis stateful phase against $ORIGIN ($ENGINE), on a freshly seeded shop"
run_phases stateful stateful || status=$?
stop_server

# Fails the run when a phase ran no test case: a pass must have tested something.
"$VENV/bin/python" "$ROOT/tests/schemathesis/summary.py" \
  "$OUT/stateless.ndjson:examples,coverage,fuzzing" "$OUT/stateful.ndjson:stateful" || status=1

# CatchPanicLayer turns a panic into a 500, which not_a_server_error already fails; this
# also catches one on a path that answered anyway.
if grep -q "panicked" "$OUT/server.log"; then
  echo "schemathesis: the server log has a panic:" >&2
  grep -n -A5 "panicked" "$OUT/server.log" >&2
  status=1
fi
exit "$status"
