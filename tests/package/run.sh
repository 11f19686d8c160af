#!/usr/bin/env bash
# The package test: what `make bundle` built is what a shop installs. Checks the .deb's
# control fields, its desktop entry (desktop-file-validate) and icons, the .rpm's version
# and requirements (read with rpm), then unpacks the .deb into a temporary root
# (dpkg-deb -x, no root rights, nothing installed on this machine) and starts the PACKAGED
# binary under Xvfb with an empty data directory: its local API must answer /health, accept
# the key it generated and refuse a request without one. Takes no arguments; BUNDLE_DIR
# defaults to target/release/bundle of this repository. Exits non-zero, with the reason, on
# the first failed check; a missing tool is one.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$HERE/../.." && pwd)"
BUNDLE_DIR="${BUNDLE_DIR:-$REPO_ROOT/target/release/bundle}"
# A cold WebKit start under Xvfb takes a few seconds; 30 s means something is wrong.
STARTUP_TIMEOUT="${STARTUP_TIMEOUT:-30}"

fail() {
  echo "package test: FAIL: $*" >&2
  exit 1
}
ok() {
  echo "package test: ok: $*"
}

# Every check runs: a missing tool is a failure, not a reason to skip one (.ci/install-deps
# installs them all).
for tool in dpkg-deb rpm desktop-file-validate xvfb-run dbus-run-session curl python3 cargo; do
  command -v "$tool" >/dev/null ||
    fail "missing $tool (apt-get install dpkg rpm desktop-file-utils xvfb xauth dbus curl python3)"
done

# --- The packages ------------------------------------------------------------------------

# The version Cargo resolves for the app crate; the installers must carry the same one.
version="$(cd "$REPO_ROOT" && cargo metadata --no-deps --format-version 1 |
  python3 -c 'import json, sys
print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "petstore-desktop"))')"
[ -n "$version" ] || fail "could not read the version of petstore-desktop from cargo metadata"

# Exactly one of each: `make bundle` removes old bundles, so two means a stale file that the
# checks below might pick instead of the new one.
shopt -s nullglob
debs=("$BUNDLE_DIR"/deb/*.deb)
rpms=("$BUNDLE_DIR"/rpm/*.rpm)
shopt -u nullglob
[ "${#debs[@]}" -eq 1 ] || fail "expected one .deb in $BUNDLE_DIR/deb, found ${#debs[@]}: run make bundle"
[ "${#rpms[@]}" -eq 1 ] || fail "expected one .rpm in $BUNDLE_DIR/rpm, found ${#rpms[@]}: run make bundle"
deb="${debs[0]}"
rpm="${rpms[0]}"

size_line() {
  local bytes
  bytes="$(stat -c %s "$1")"
  printf '%s: %s bytes (%s MB)\n' "$(basename "$1")" "$bytes" "$(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1000000 }')"
}
echo "package test: sizes:"
size_line "$deb"
size_line "$rpm"

field() {
  dpkg-deb -f "$deb" "$1"
}
[ "$(field Package)" = "petstore" ] || fail "Package is '$(field Package)', expected 'petstore'"
[ "$(field Version)" = "$version" ] || fail "Version is '$(field Version)', Cargo says '$version'"
[ "$(field Architecture)" = "$(dpkg --print-architecture)" ] ||
  fail "Architecture is '$(field Architecture)', this machine is $(dpkg --print-architecture)"
depends="$(field Depends)"
# One name a line, without version constraints, so that a longer name
# (libwebkit2gtk-4.1-0-dbg) cannot pass for the real one.
depends_names="$(tr ',' '\n' <<<"$depends" | sed 's/^ *//; s/[ (].*//')"
for dep in libwebkit2gtk-4.1-0 libgtk-3-0; do
  grep -qxF "$dep" <<<"$depends_names" || fail "Depends lacks $dep: '$depends'"
done
ok "deb $(basename "$deb"): Package petstore, Version $version, Depends: $depends"

# The .rpm's name carries name-version-release.arch (Petstore-1.0.0-1.x86_64.rpm).
case "$(basename "$rpm")" in
  *-"$version"-*.rpm) ok "rpm $(basename "$rpm") has version $version" ;;
  *) fail "the .rpm's file name $(basename "$rpm") does not carry version $version" ;;
esac
# The package itself, read with rpm: the file name alone proves nothing about its fields.
# (rpm's own reason, if it cannot, goes to stderr.)
rpm_version="$(rpm -qp --qf '%{VERSION}' "$rpm")" || fail "rpm cannot read $(basename "$rpm")"
[ "$rpm_version" = "$version" ] || fail "the .rpm's Version is '$rpm_version', Cargo says '$version'"
requires="$(rpm -qpR "$rpm")" || fail "rpm cannot read the requirements of $(basename "$rpm")"
grep -qF 'libwebkit2gtk-4.1.so.0' <<<"$requires" || fail "the .rpm does not require libwebkit2gtk-4.1: $requires"
ok "rpm Version $version, requires libwebkit2gtk-4.1"

# --- The unpacked tree -------------------------------------------------------------------

# Everything this test creates lives here; the trap removes it and stops the app, however
# the script ends.
tmp="$(mktemp -d "${TMPDIR:-/tmp}/petstore-package.XXXXXX")"
app_pid=""
stop_app() {
  [ -n "$app_pid" ] || return 0
  # The app runs in its own process group (setsid below): xvfb-run, Xvfb, the D-Bus
  # session and the app itself. Ask them all to stop, then insist.
  kill -TERM -- "-$app_pid" 2>/dev/null || true
  for _ in $(seq 50); do
    kill -0 -- "-$app_pid" 2>/dev/null || break
    sleep 0.2
  done
  kill -KILL -- "-$app_pid" 2>/dev/null || true
  wait "$app_pid" 2>/dev/null || true
  app_pid=""
}
cleanup() {
  stop_app
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

root="$tmp/root"
dpkg-deb -x "$deb" "$root"
app="$root/usr/bin/petstore-desktop"
[ -x "$app" ] || fail "the package has no executable /usr/bin/petstore-desktop"

desktop="$root/usr/share/applications/Petstore.desktop"
[ -f "$desktop" ] || fail "the package has no /usr/share/applications/Petstore.desktop"
entry() {
  sed -n "s/^$1=//p" "$desktop"
}
[ "$(entry Type)" = "Application" ] || fail "desktop entry: Type is '$(entry Type)'"
[ "$(entry Name)" = "Petstore" ] || fail "desktop entry: Name is '$(entry Name)'"
[ "$(entry Exec)" = "petstore-desktop" ] || fail "desktop entry: Exec is '$(entry Exec)', not the packaged binary"
[ -n "$(entry Categories)" ] || fail "desktop entry: no Categories (menus would file it under Other)"
icon="$(entry Icon)"
[ -n "$icon" ] || fail "desktop entry: no Icon"
desktop-file-validate "$desktop" || fail "desktop entry: desktop-file-validate refused it"
ok "desktop entry: Name=$(entry Name) Exec=$(entry Exec) Icon=$icon Categories=$(entry Categories)"

# The Icon name must resolve in the hicolor theme at the sizes menus, docks and the
# alt-tab switcher ask for; each file must be a PNG of the size its folder claims.
for size in 32 64 128 512; do
  png="$root/usr/share/icons/hicolor/${size}x${size}/apps/$icon.png"
  [ -f "$png" ] || fail "no ${size}x${size} icon: ${png#"$root"}"
  dims="$(python3 -c 'import struct, sys
d = open(sys.argv[1], "rb").read(24)
assert d[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
print("%dx%d" % struct.unpack(">II", d[16:24]))' "$png")" || fail "${png#"$root"} is not a PNG"
  [ "$dims" = "${size}x${size}" ] || fail "${png#"$root"} is $dims"
done
ok "icons: $(cd "$root/usr/share/icons/hicolor" && find . -name "$icon.png" | sed 's|^\./||; s|/apps/.*||' | sort -V | tr '\n' ' ')"

# --- The packaged app --------------------------------------------------------------------

# A port nobody listens on now (the OS picks it; the tiny window until the app binds it
# is acceptable for a test).
port="$(python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])')"
data="$tmp/data"
mkdir -p "$data"
# HOME and the XDG folders point into $tmp too, so that WebKit's caches and anything else the
# app writes stay out of the real user's home and go with the trap.
mkdir -p "$tmp/home"
echo "package test: starting $app on port $port with the empty data directory $data"
# setsid: one process group for the app and everything xvfb-run starts, for stop_app.
# NO_AT_BRIDGE: no accessibility bus in this session; without it GTK waits for one.
HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/home/.config" XDG_DATA_HOME="$tmp/home/.local/share" \
  XDG_CACHE_HOME="$tmp/home/.cache" NO_AT_BRIDGE=1 \
  PETSTORE_DATA_DIR="$data" PETSTORE_LOCAL_API_PORT="$port" \
  setsid xvfb-run -a -s "-screen 0 1280x800x24 -nolisten tcp" \
  dbus-run-session -- "$app" >"$tmp/app.log" 2>&1 &
app_pid=$!

app_failed() {
  echo "----- app output -----" >&2
  cat "$tmp/app.log" >&2 || true
  echo "----------------------" >&2
  fail "$*"
}

base="http://127.0.0.1:$port"
# status URL [curl args...]: the HTTP status, or 000 when nothing answers.
status() {
  local url="$1"
  shift
  curl -sS -o "$tmp/body" -w '%{http_code}' --max-time 5 "$@" "$url" 2>/dev/null || true
}

started=$SECONDS
deadline=$((started + STARTUP_TIMEOUT))
until [ "$(status "$base/health")" = "200" ]; do
  kill -0 "$app_pid" 2>/dev/null || app_failed "the app exited before its local API answered"
  [ "$SECONDS" -lt "$deadline" ] || app_failed "GET /health did not answer 200 within ${STARTUP_TIMEOUT}s"
  sleep 0.5
done
ok "GET /health answered 200 after $((SECONDS - started))s"

key_file="$data/local-api.key"
[ -s "$key_file" ] || app_failed "the app did not write its key to $key_file"
key="$(tr -d '[:space:]' <"$key_file")"

code="$(status "$base/pets" -H "Authorization: Bearer $key")"
[ "$code" = "200" ] || app_failed "GET /pets with the generated key answered $code: $(cat "$tmp/body")"
python3 -c 'import json, sys
assert isinstance(json.load(open(sys.argv[1])), list)' "$tmp/body" ||
  app_failed "GET /pets did not answer a JSON array: $(cat "$tmp/body")"
ok "GET /pets with the key from $(basename "$key_file") answered 200 and a JSON array"

code="$(status "$base/pets")"
[ "$code" = "401" ] || app_failed "GET /pets without a key answered $code, expected 401"
ok "GET /pets without a key answered 401"

# The API reference is part of the product: the packaged app serves it offline.
code="$(status "$base/docs/")"
[ "$code" = "200" ] && grep -qF '<title>Petstore API reference</title>' "$tmp/body" ||
  app_failed "GET /docs/ answered $code without the API reference page"
ok "GET /docs/ answered the API reference page"

stop_app
echo "package test: passed ($(basename "$deb"), $(basename "$rpm"))"
