#!/usr/bin/env bash
# The remote-key command tests against a real Secret Service: a private D-Bus session bus
# (dbus-run-session) with gnome-keyring started headless and unlocked with a throwaway
# password, its keyrings in a temporary directory (the user's own are never touched).
#   1. keyring unlocked: the key must be in the keyring and in no file, then be deleted
#      from it; afterwards no entry of the app may be left in the keyring;
#   2. the keyring locked while the app runs: the key goes to the 0600 file, and why;
#   3. the keyring locked from the start: the same tests as 1, expecting the file.
# Needs gnome-keyring, libsecret-tools (secret-tool) and dbus (dbus-run-session, dbus-send).
set -euo pipefail
cd "$(dirname "$0")/../.."

if [ -z "${PETSTORE_KEYRING_SESSION:-}" ]; then
  for tool in dbus-run-session dbus-send gnome-keyring-daemon secret-tool; do
    command -v "$tool" >/dev/null || { echo "missing $tool (apt-get install dbus gnome-keyring libsecret-tools)" >&2; exit 1; }
  done
  # Built before the session starts, so that its time is the tests' own.
  cargo test -p petstore-desktop --test commands --locked --no-run
  exec env PETSTORE_KEYRING_SESSION=1 dbus-run-session -- "$0" "$@"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_DATA_HOME="$tmp/data" XDG_RUNTIME_DIR="$tmp/run"
mkdir -p -m 700 "$XDG_DATA_HOME" "$XDG_RUNTIME_DIR"
# --unlock reads the password from stdin and creates the login keyring with it; the
# daemon prints the variables its clients need.
eval "$(printf '%s' 'keyring-test-password' | gnome-keyring-daemon --unlock --components=secrets)"
export GNOME_KEYRING_CONTROL

entries() {
  secret-tool search --all service org.petstore.desktop 2>&1 | grep -c '^\[' || true
}

echo "== 1. keyring unlocked"
started=$(date +%s)
PETSTORE_KEYRING_TEST=1 cargo test -p petstore-desktop --test commands --locked remote_key
left=$(entries)
echo "entries of org.petstore.desktop left in the keyring: $left"
[ "$left" -eq 0 ] || { echo "the tests or the probes left keys in the keyring" >&2; exit 1; }

echo "== 2. keyring locked while the app runs"
PETSTORE_KEYRING_TEST=1 cargo test -p petstore-desktop --test commands --locked -- --ignored --exact \
  remote_key::a_keyring_that_refuses_after_start_keeps_the_key_in_the_file_and_says_why

echo "== 3. keyring locked from the start"
PETSTORE_KEYRING_TEST=locked cargo test -p petstore-desktop --test commands --locked remote_key
echo "keyring tests took $(($(date +%s) - started)) s"
