# Petstore: the two commands are `make run` and `make test`; each installs what is missing.

CARGO ?= cargo
VENV := .venv
PY := $(VENV)/bin/python
DB ?= $(HOME)/.local/share/petstore-server/petstore.db
LISTEN ?= 127.0.0.1:8787

.PHONY: run test deps lint test-rust openapi-lint server clean

## run: build and start the Petstore server on its embedded database
run: deps
	$(CARGO) build --release --bin petstore-server
	@mkdir -p "$(dir $(DB))"
	@echo "The API key is in $(DB).key (print it with: target/release/petstore-server key --db $(DB))"
	target/release/petstore-server serve --db "$(DB)" --listen "$(LISTEN)"

## test: every test suite: Rust unit and integration tests, lints, the OpenAPI validator
test: deps lint test-rust openapi-lint

deps:
	@.ci/install-deps

lint:
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets --locked -- -D warnings

test-rust:
	$(CARGO) test --workspace --locked

# An independent validator of the hand-written document, from PyPI.
openapi-lint: $(VENV)/.openapi-validator
	$(VENV)/bin/openapi-spec-validator openapi.yaml

$(VENV)/.openapi-validator:
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check 'openapi-spec-validator==0.7.*'
	@touch $@

## server: the release build of the headless server
server:
	$(CARGO) build --release --bin petstore-server

clean:
	$(CARGO) clean
	rm -rf $(VENV)
