#!/usr/bin/env python3
"""`make bench`: every speed and memory figure the project holds itself to, measured in one run, written to BENCHMARKS.md.

Builds the release binaries, seeds fresh databases of 100,000 and 1,000,000 pets, loads
the real server and a minimal axum "ceiling" with wrk (same threads, connections and
durations for every scenario), measures the footprint (peak RSS, time to ready, the .deb),
runs the app's own measures (tests/e2e/bench.sh) and the Criterion benches, then prints
the tables, writes BENCHMARKS.md and exits non-zero if any target is missed or any figure
could not be measured. Python 3 standard library only. tests/bench/README.md says what
each scenario measures and why.

A record is made of a committed tree only: the run refuses to start when `git status` shows
any change (BENCHMARKS.md itself aside), names the full commit in the file, and does not
write BENCHMARKS.md if the tree changed while it ran. BENCH_ALLOW_DIRTY=1 lets it run on
a changed tree to try the driver; it then writes target/bench/BENCHMARKS.trial.md (or
--out), headed as no record, and never BENCHMARKS.md.

Environment: BENCH_SECONDS (measured seconds per scenario, default 10), BENCH_WARMUP
(warm-up seconds, default 3), BENCH_THREADS (2), BENCH_CONNECTIONS (64), BENCH_READY_RUNS
(9), BENCH_READ_ROUNDS (3), BENCH_SMALL_PETS (100000), BENCH_LARGE_PETS (1000000),
BENCH_FSYNC_COMMITS (2000), BENCH_MIRROR_SALES (2000), BENCH_MIRROR_CHANGES (200).
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import datetime
import glob
import http.client
import json
import os
import platform
import re
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WORK = ROOT / "target" / "bench"
LOGS = WORK / "logs"
LUA = ROOT / "tests" / "bench" / "lua"
SERVER = ROOT / "target" / "release" / "petstore-server"
CEILING = ROOT / "target" / "release" / "examples" / "ceiling"
FSYNC_CEILING = ROOT / "target" / "release" / "examples" / "fsync-ceiling"
MIRROR_BENCH = ROOT / "target" / "release" / "examples" / "mirror-bench"
APP = ROOT / "target" / "release" / "petstore-desktop"
APP_BENCH = ROOT / "tests" / "e2e" / "bench.sh"
OUTPUT = ROOT / "BENCHMARKS.md"
# Where a run on a changed tree (BENCH_ALLOW_DIRTY=1) writes: never over the record.
TRIAL_OUTPUT = ROOT / "target" / "bench" / "BENCHMARKS.trial.md"


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "")
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        sys.exit(f"bench: {name}={raw!r} is not a whole number")
    if value < 1:
        sys.exit(f"bench: {name} must be at least 1, got {value}")
    return value


SECONDS = env_int("BENCH_SECONDS", 10)
WARMUP = env_int("BENCH_WARMUP", 3)
THREADS = env_int("BENCH_THREADS", 2)
CONNECTIONS = env_int("BENCH_CONNECTIONS", 64)
READY_RUNS = env_int("BENCH_READY_RUNS", 9)
SMALL = env_int("BENCH_SMALL_PETS", 100_000)
LARGE = env_int("BENCH_LARGE_PETS", 1_000_000)
FSYNC_COMMITS = env_int("BENCH_FSYNC_COMMITS", 2_000)
READ_ROUNDS = env_int("BENCH_READ_ROUNDS", 3)

# The speed targets (tests/bench/README.md). MB is 10^6 bytes throughout (the stricter reading).
MB = 1_000_000
READ_SHARE_OF_CEILING = 0.5
PAGE_P99_MS = 10.0
ORDERS_PER_SEC = 10_000
SERVER_RSS_BYTES = 64 * MB
READY_MS = 200.0
FIRST_SCREEN_MS = 1_500.0
DEB_BYTES = 15 * MB

# Refusals an order may get when its pet is sold (pet_not_available) or sold out
# (insufficient_stock). Any other status during the orders run is a failure.
REFUSED = 409

HEADER = """\
# Benchmarks

Written by `make bench` (tests/bench/run.py; tests/bench/README.md says what each scenario
measures and why). Every figure below comes from the one run described under "Run",
beside its baseline from the same run and its target. Do not edit by hand: run
`make bench` again.

- **Ceiling**: a minimal axum 0.8 server on the same tokio runtime (no middleware, no
  database) returning a fixed Pet as JSON: the most this HTTP stack serves on this machine.
  The read targets are fractions of it.
- **fsync ceiling**: one SQLite commit (WAL, `synchronous=FULL`) per write, one after
  another: what one order per transaction could reach on this disk.
- Load: wrk over loopback, the same threads, connections, warm-up and duration for every
  scenario. wrk and the server share the machine's cores. Latencies are wrk's, from the
  moment a request is written to the moment its response is read.
- The ceiling and the two reads held against it run in alternating rounds (ceiling, by id,
  by ids; again): each req/s is its median round, and each ratio the median of the rounds'
  own ratios (a read over the ceiling of the same round). This shared machine's speed
  drifts by a tenth within a minute, and a ratio of runs far apart would measure the drift.
- MB is 10^6 bytes. "met" is judged by the driver against the targets in the table.
"""

# -- output -----------------------------------------------------------------------------

STARTED = time.monotonic()


def say(message: str) -> None:
    print(f"[{time.monotonic() - STARTED:6.1f}s] {message}", flush=True)


class BenchError(Exception):
    """A figure could not be measured; the message says why and where to look."""


def run(argv: list, log: Path | None = None, timeout: float | None = None, **kw) -> str:
    """Runs a command to completion and returns its stdout; a failure is a BenchError with
    the tail of the output (the whole of it goes to `log`)."""
    try:
        done = subprocess.run(
            [str(a) for a in argv], cwd=ROOT, capture_output=True, text=True, timeout=timeout, **kw
        )
    except FileNotFoundError as e:
        raise BenchError(f"{argv[0]} is not installed or not built: {e}") from e
    except subprocess.TimeoutExpired as e:
        raise BenchError(f"{' '.join(map(str, argv))} did not finish in {timeout} s") from e
    if log:
        log.write_text(done.stdout + done.stderr)
    if done.returncode != 0:
        tail = (done.stdout + done.stderr).strip().splitlines()[-15:]
        raise BenchError(
            f"{' '.join(map(str, argv))} exited with {done.returncode}:\n    " + "\n    ".join(tail)
        )
    return done.stdout


# -- processes --------------------------------------------------------------------------

# Every server this driver started and has not stopped yet: killed on any exit, so an
# error or Ctrl-C never leaves one holding a port or a database.
LIVE: set = set()


def kill_leftovers() -> None:
    for proc in list(LIVE):
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        LIVE.discard(proc)


atexit.register(kill_leftovers)
# SIGTERM (make killed, CI timeout) unwinds like Ctrl-C does: finally blocks and atexit run.
signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spawn(name: str, argv: list) -> tuple:
    """Starts a server on a free loopback port; its output goes to a log file, not a pipe,
    so a chatty server can never block on a full pipe."""
    port = free_port()
    log = LOGS / f"{name}.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(
            [str(a) for a in argv] + ["--listen", f"127.0.0.1:{port}"],
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    LIVE.add(proc)
    return proc, port, log


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    LIVE.discard(proc)


def peak_rss_kib(proc: subprocess.Popen, log: Path) -> int:
    """VmHWM: the most resident memory the process ever had, read while it still runs."""
    if proc.poll() is not None:
        raise BenchError(f"the server exited with {proc.returncode} during the run:\n    {tail(log)}")
    try:
        status = Path(f"/proc/{proc.pid}/status").read_text()
    except OSError as e:
        raise BenchError(f"cannot read the memory of process {proc.pid}: {e}") from e
    found = re.search(r"^VmHWM:\s+(\d+) kB$", status, re.MULTILINE)
    if not found:
        raise BenchError(f"no VmHWM line in /proc/{proc.pid}/status")
    return int(found.group(1))


def tail(log: Path, lines: int = 15) -> str:
    try:
        return "\n    ".join(log.read_text(errors="replace").strip().splitlines()[-lines:])
    except OSError:
        return "(no log)"


class Server:
    """A server for the length of a `with` block: started, ready, and always stopped."""

    def __init__(self, name: str, argv: list, probe: str, key: str | None = None):
        self.name, self.argv, self.probe, self.key = name, argv, probe, key

    def __enter__(self) -> "Server":
        self.proc, self.port, self.log = spawn(self.name, self.argv)
        deadline = time.monotonic() + 60
        while True:
            if self.proc.poll() is not None:
                raise BenchError(f"{self.name} exited with {self.proc.returncode}:\n    {tail(self.log)}")
            try:
                status, _, _ = self.get(self.probe)
                if status == 200:
                    return self
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise BenchError(f"{self.name} did not answer {self.probe} within 60 s; see {self.log}")
            time.sleep(0.05)

    def __exit__(self, *_) -> None:
        stop(self.proc)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def get(self, path: str, conn: http.client.HTTPConnection | None = None) -> tuple:
        """One GET (on `conn` to keep it alive): status, headers, body."""
        own = conn is None
        conn = conn or http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        headers = {"Authorization": f"Bearer {self.key}"} if self.key else {}
        try:
            conn.request("GET", path, headers=headers)
            response = conn.getresponse()
            return response.status, response, response.read()
        finally:
            if own:
                conn.close()


# -- wrk --------------------------------------------------------------------------------

TIME_UNITS_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60_000.0, "h": 3_600_000.0}


@dataclass
class Wrk:
    requests: int
    seconds: float
    rps: float
    p50_ms: float
    p99_ms: float
    max_ms: float
    non_2xx: int
    socket_errors: dict
    statuses: dict = field(default_factory=dict)  # only from scripts that tally (orders.lua)


def to_ms(number: str, unit: str, what: str) -> float:
    if unit not in TIME_UNITS_MS:
        raise BenchError(f"wrk printed {what} in an unknown unit {unit!r}")
    return float(number) * TIME_UNITS_MS[unit]


def parse_wrk(text: str) -> Wrk:
    """wrk 4's report, read strictly: a figure that is not there is an error, never 0."""

    def need(pattern: str, what: str) -> re.Match:
        found = re.search(pattern, text, re.MULTILINE)
        if not found:
            raise BenchError(f"wrk's output has no {what}:\n{text}")
        return found

    time_re = r"([\d.]+)(us|ms|s|m|h)"
    done = need(rf"^\s*(\d+) requests in {time_re}, ", "'N requests in T' line")
    rps = need(r"^Requests/sec:\s+([\d.]+)\s*$", "Requests/sec line")
    p50 = need(rf"^\s+50(?:\.0+)?%\s+{time_re}\s*$", "50% latency (was --latency given?)")
    p99 = need(rf"^\s+99(?:\.0+)?%\s+{time_re}\s*$", "99% latency")
    latency = need(rf"^\s+Latency\s+{time_re}\s+{time_re}\s+{time_re}\s", "Latency stats line")
    sock = re.search(
        r"^\s+Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)\s*$", text, re.MULTILINE
    )
    non_2xx = re.search(r"^\s+Non-2xx or 3xx responses: (\d+)\s*$", text, re.MULTILINE)
    statuses = {int(s): int(n) for s, n in re.findall(r"^status (\d+) (\d+)$", text, re.MULTILINE)}
    return Wrk(
        requests=int(done.group(1)),
        seconds=to_ms(done.group(2), done.group(3), "the duration") / 1000,
        rps=float(rps.group(1)),
        p50_ms=to_ms(p50.group(1), p50.group(2), "p50"),
        p99_ms=to_ms(p99.group(1), p99.group(2), "p99"),
        max_ms=to_ms(latency.group(5), latency.group(6), "the maximum latency"),
        non_2xx=int(non_2xx.group(1)) if non_2xx else 0,
        socket_errors=dict(zip(("connect", "read", "write", "timeout"), map(int, sock.groups())))
        if sock
        else {},
        statuses=statuses,
    )


def wrk(name: str, server: Server, script: str, max_id: int, seconds: int) -> Wrk:
    argv = ["wrk", f"-t{THREADS}", f"-c{CONNECTIONS}", f"-d{seconds}s", "--latency", "-s", LUA / script, server.url]
    child_env = dict(os.environ, BENCH_KEY=server.key or "none", BENCH_MAX_ID=str(max_id), BENCH_LUA_DIR=str(LUA))
    out = run(argv, log=LOGS / f"{name}.wrk.txt", timeout=seconds + 60, env=child_env)
    return parse_wrk(out)


def load(name: str, server: Server, script: str, max_id: int) -> tuple:
    """The same for every scenario: a warm-up run (caches, connections, JIT of the Lua
    script), then the measured run."""
    warm = wrk(f"{name}.warmup", server, script, max_id, WARMUP)
    measured = wrk(name, server, script, max_id, SECONDS)
    return warm, measured


# -- databases --------------------------------------------------------------------------


def db_files(db: Path) -> list:
    return [Path(f"{db}{suffix}") for suffix in ("", "-wal", "-shm", ".key")]


@contextlib.contextmanager
def read_only(db: Path):
    """Python's own sqlite3, read-only: the checks never go through the code they check."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        yield conn
    finally:
        conn.close()


def seed(db: Path, pets: int) -> float:
    for f in db_files(db):
        f.unlink(missing_ok=True)
    out = run([SERVER, "seed", "--db", db, "--pets", pets], log=LOGS / f"seed-{pets}.log", timeout=600)
    took = re.search(r"^Added (\d+) pets .* in ([\d.]+) s$", out, re.MULTILINE)
    if not took or int(took.group(1)) != pets:
        raise BenchError(f"petstore-server seed printed no 'Added {pets} pets ... in T s' line:\n{out}")
    with read_only(db) as conn:
        (count,) = conn.execute("SELECT count(*) FROM pets").fetchone()
    if count != pets:
        raise BenchError(f"{db} holds {count} pets after seeding {pets}")
    return float(took.group(2))


def api_key(db: Path) -> str:
    key = run([SERVER, "key", "--db", db], timeout=60).strip()
    if not key or len(key.split()) != 1:
        raise BenchError(f"petstore-server key --db {db} printed {key!r}, not a key")
    return key


def copy_db(src: Path, dst: Path) -> None:
    """A copy of a database no process has open (its WAL, if one was left, goes along)."""
    for f in db_files(dst):
        f.unlink(missing_ok=True)
    for suffix in ("", "-wal"):
        if Path(f"{src}{suffix}").exists():
            shutil.copyfile(f"{src}{suffix}", f"{dst}{suffix}")


# -- measures ---------------------------------------------------------------------------


@dataclass
class Load:
    wrk: Wrk
    rss_kib: int
    problems: list  # anything that makes the figure untrustworthy: errors, wrong statuses
    rounds: list = field(default_factory=list)  # req/s of every round, when there were rounds
    # Each round's req/s over the ceiling's of the same round, for the figures held against
    # it: their median is the figure's ratio (a ratio of two rounds would measure the drift).
    ratios: list = field(default_factory=list)


def read_load(name: str, server: Server, script: str, max_id: int) -> Load:
    _, measured = load(name, server, script, max_id)
    rss = peak_rss_kib(server.proc, server.log)
    problems = []
    if measured.non_2xx:
        problems.append(f"{measured.non_2xx} responses were not 2xx (see {server.log})")
    errors = {k: v for k, v in measured.socket_errors.items() if v}
    if errors:
        problems.append(f"socket errors {errors}")
    return Load(measured, rss, problems)


# The scenarios of the read rounds: figure name, file name, which server, wrk script.
READS = (
    ("ceiling", "ceiling", "ceiling", "get_pet.lua"),
    ("GET /pets/{petId}", "get-pet", "petstore", "get_pet.lua"),
    ("GET /pets?id=", "get-pets-by-id", "petstore", "get_pets_by_id.lua"),
)


def read_rounds(small: Path, key: str) -> dict:
    """The ceiling and the two reads held against it, one after another, READ_ROUNDS times,
    with both servers started once. Each figure's req/s is its median round; its ratio to
    the ceiling is the median of the rounds' own ratios (each read over the ceiling of its
    round), never one round's read over another round's ceiling. Every round's req/s and
    ratio are kept for the report; any round's problem is the figure's problem."""
    runs = {name: [] for name, *_ in READS}
    petstore = Server("petstore", [SERVER, "serve", "--db", small], "/health", key)
    with Server("ceiling", [CEILING], "/pets/1") as ceiling, petstore as server:
        servers = {"ceiling": ceiling, "petstore": server}
        for n in range(1, READ_ROUNDS + 1):
            for name, file_name, which, script in READS:
                runs[name].append(read_load(f"{file_name}.round{n}", servers[which], script, SMALL))
    return in_rounds(runs, "ceiling")


def median_round(loads: list) -> Load:
    """The round with the median req/s (the lower of the two middle ones for an even count)."""
    return sorted(loads, key=lambda load: load.wrk.rps)[(len(loads) - 1) // 2]


def in_rounds(runs: dict, ceiling: str) -> dict:
    """The figures of runs made in rounds (name -> one Load a round, the `ceiling` among
    them): each its median round, every round's req/s, and for all but the ceiling each
    round's ratio to the ceiling of that same round."""
    ceilings = [load.wrk.rps for load in runs[ceiling]]
    figures = {}
    for name, loads in runs.items():
        median = median_round(loads)
        problems = [p for load in loads for p in load.problems]
        ratios = [] if name == ceiling else [load.wrk.rps / c for load, c in zip(loads, ceilings, strict=True)]
        figures[name] = Load(median.wrk, median.rss_kib, problems, [load.wrk.rps for load in loads], ratios)
    return figures


def ratio_text(load: Load) -> str:
    """The median of the rounds' ratios, with each round's."""
    return (f"{statistics.median(load.ratios):.2f} × (median of the rounds' own ratios: "
            + ", ".join(f"{x:.2f}" for x in load.ratios) + ")")


def fsync_ceiling() -> float:
    out = run([FSYNC_CEILING, "--db", WORK / "fsync-ceiling.db", "--commits", FSYNC_COMMITS], timeout=300)
    found = re.search(r"^commits_per_sec=(\d+)$", out, re.MULTILINE)
    if not found:
        raise BenchError(f"fsync-ceiling printed no commits_per_sec= line:\n{out}")
    return float(found.group(1))


def time_to_ready(name: str, argv: list, probe: str) -> float:
    """Milliseconds from spawning the server to its first 200 on `probe`, polled every 2 ms
    on a raw socket (a refused connection costs microseconds, so polling adds ~2 ms at most)."""
    request = f"GET {probe} HTTP/1.1\r\nHost: 127.0.0.1:{{port}}\r\nConnection: close\r\n\r\n"
    started = time.perf_counter()
    proc, port, log = spawn(name, argv)
    try:
        while True:
            elapsed_ms = (time.perf_counter() - started) * 1000
            if proc.poll() is not None:
                raise BenchError(f"{name} exited with {proc.returncode}:\n    {tail(log)}")
            if elapsed_ms > 30_000:
                raise BenchError(f"{name} did not answer {probe} within 30 s; see {log}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
                    s.sendall(request.format(port=port).encode())
                    status_line = s.makefile("rb").readline()
                if status_line.split()[1:2] == [b"200"]:
                    return (time.perf_counter() - started) * 1000
            except OSError:
                pass
            time.sleep(0.002)
    finally:
        stop(proc)


def ready_times(name: str, argv: list, probe: str) -> list:
    return [time_to_ready(name, argv, probe) for _ in range(READY_RUNS)]


def page_latencies(server: Server) -> dict:
    """Single requests, one after another on one kept-alive connection, on an idle server:
    the first page of the largest filter and a page in the middle of it."""
    query = "/pets?categoryId=1&status=available&sort=name&limit=20&offset={}"
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    try:
        status, response, _ = server.get(query.format(0), conn)
        total = response.getheader("X-Total-Count")
        if status != 200 or total is None or not total.isdigit():
            raise BenchError(f"GET {query.format(0)} answered {status} with X-Total-Count {total!r}")
        deep = int(total) // 2 // 20 * 20

        def timed(offset: int) -> list:
            times = []
            for _ in range(7):
                started = time.perf_counter()
                status, _, body = server.get(query.format(offset), conn)
                times.append((time.perf_counter() - started) * 1000)
                if status != 200 or len(json.loads(body)) != 20:
                    raise BenchError(f"GET {query.format(offset)} answered {status} with {body[:200]!r}")
            return times

        server.get(query.format(deep), conn)  # once untimed, like the first page above
        return {"total": int(total), "offset": deep, "first": timed(0), "deep": timed(deep)}
    finally:
        conn.close()


def stock_snapshot(db: Path) -> tuple:
    with read_only(db) as conn:
        stock = dict(conn.execute("SELECT id, stock FROM pets"))
        (last_order,) = conn.execute("SELECT coalesce(max(id), 0) FROM orders").fetchone()
    return stock, last_order


@dataclass
class Orders:
    load: Load
    created_per_sec: float
    created: int  # 201s seen by wrk, warm-up and measured run
    refused: int
    in_db: int  # orders the run added to the database
    checks: list  # (what, ok, detail)


def orders(db: Path, key: str) -> Orders:
    before, last_order = stock_snapshot(db)
    with Server("orders", [SERVER, "serve", "--db", db], "/health", key) as server:
        warm, measured = load("orders", server, "orders.lua", len(before))
        rss = peak_rss_kib(server.proc, server.log)
    # The server is stopped: everything it acknowledged is in the file.
    with read_only(db) as conn:
        after = dict(conn.execute("SELECT id, stock FROM pets"))
        ordered = dict(
            conn.execute("SELECT pet_id, sum(quantity) FROM orders WHERE id > ? GROUP BY pet_id", (last_order,))
        )
        (in_db,) = conn.execute("SELECT count(*) FROM orders WHERE id > ?", (last_order,)).fetchone()

    problems, checks = [], []
    for run_ in (warm, measured):
        if not run_.statuses:
            raise BenchError("orders.lua printed no status tally (see target/bench/logs/orders.wrk.txt)")
        if sum(run_.statuses.values()) != run_.requests:
            problems.append(f"status tally {run_.statuses} does not add up to wrk's {run_.requests} requests")
        if sum(n for s, n in run_.statuses.items() if s >= 400) != run_.non_2xx:
            problems.append(f"status tally {run_.statuses} disagrees with wrk's Non-2xx count {run_.non_2xx}")
        unexpected = {s: n for s, n in run_.statuses.items() if s not in (201, REFUSED)}
        if unexpected:
            problems.append(f"statuses other than 201 and {REFUSED}: {unexpected} (see {server.log})")
        errors = {k: v for k, v in run_.socket_errors.items() if v}
        if errors:
            problems.append(f"socket errors {errors}")
    created = warm.statuses.get(201, 0) + measured.statuses.get(201, 0)
    refused = warm.statuses.get(REFUSED, 0) + measured.statuses.get(REFUSED, 0)

    negative = sum(1 for s in after.values() if s < 0)
    checks.append(("no pet with negative stock", negative == 0, f"{negative} pets below 0"))
    broken = [p for p, s in before.items() if after.get(p) != s - ordered.get(p, 0)]
    checks.append(
        (
            "stock before = stock after + quantities ordered, for every pet",
            not broken and set(after) == set(before),
            f"{len(broken)} pets differ, e.g. {broken[:5]}" if broken else f"{len(before):,} pets match",
        )
    )
    # wrk stops mid-flight: up to one request per connection per run can be committed
    # without wrk reading its 201. Fewer orders than 201s would be lost acknowledged orders.
    in_flight = 2 * CONNECTIONS
    checks.append(
        (
            "orders in the database = 201s answered (+ at most one in flight per connection per run)",
            created <= in_db <= created + in_flight,
            f"{in_db:,} new orders, {created:,} 201s",
        )
    )
    # wrk's Requests/sec comes from its exact run time; the printed duration is rounded.
    created_per_sec = measured.rps * measured.statuses.get(201, 0) / measured.requests
    return Orders(Load(measured, rss, problems), created_per_sec, created, refused, in_db, checks)


def orders_only() -> int:
    """`run.py --only-orders`: the fsync ceiling, the seed of 100,000 pets and the SQLite
    orders on a fresh copy of it, printed and judged in about a minute (BENCHMARKS.md is
    left alone): for comparing two builds back to back."""
    small, orders_db = WORK / f"pets-{SMALL}.db", WORK / f"orders-{SMALL}.db"
    fsync = fsync_ceiling()
    seed(small, SMALL)
    copy_db(small, orders_db)
    o = orders(orders_db, api_key(orders_db))
    w = o.load.wrk
    ok = o.created_per_sec >= ORDERS_PER_SEC and not o.load.problems and all(c[1] for c in o.checks)
    say(f"POST /store/orders: {o.created_per_sec:,.0f} 201s/s, p50 {w.p50_ms:.2f} ms, p99 {w.p99_ms:.1f} ms; "
        f"fsync ceiling {fsync:,.0f}/s ({o.created_per_sec / fsync:.1f} x); target >= {ORDERS_PER_SEC:,}: "
        f"{'met' if ok else 'MISSED'}{'; ' + '; '.join(o.load.problems) if o.load.problems else ''}")
    for name, good, detail in o.checks:
        say(f"  {name}: {'yes' if good else 'NO'} ({detail})")
    return 0 if ok else 1


def app_figures(db_1m: Path) -> dict:
    if not APP_BENCH.exists():
        raise BenchError(f"{APP_BENCH.relative_to(ROOT)} does not exist yet: no app figures")
    if not os.access(APP_BENCH, os.X_OK):
        raise BenchError(f"{APP_BENCH.relative_to(ROOT)} is not executable: no app figures")
    if not APP.exists():
        raise BenchError(f"{APP.relative_to(ROOT)} is missing: `make bundle` builds it")
    # bench.sh copies the database into the app's own data directory; this one stays as is.
    out = WORK / "app.txt"
    out.unlink(missing_ok=True)
    run([APP_BENCH, "--db", db_1m, "--out", out], log=LOGS / "app.log", timeout=900)
    figures = {}
    for line in out.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        if not sep or not re.fullmatch(r"[A-Za-z0-9_.-]+", key):
            raise BenchError(f"{out}: {line!r} is not a key=value line")
        figures[key] = value.strip()
    if "first_screen_ms" not in figures:
        raise BenchError(f"{APP_BENCH.relative_to(ROOT)} wrote no first_screen_ms= (see {out})")
    return figures


def deb_size() -> tuple:
    debs = sorted(glob.glob(str(ROOT / "target/release/bundle/deb/*.deb")))
    if len(debs) != 1:
        raise BenchError(f"expected one .deb in target/release/bundle/deb/, found {len(debs)}: run `make bundle`")
    deb = Path(debs[0])
    # `make bench` bundles just before; run alone, the driver measures whatever .deb is
    # there, so its age is shown with it.
    age_min = (time.time() - deb.stat().st_mtime) / 60
    return deb.name, deb.stat().st_size, age_min


def criterion(since: float) -> list:
    run(
        ["cargo", "bench", "--locked", "--bench", "store", "--", "--warm-up-time", "1", "--measurement-time", "3"],
        log=LOGS / "criterion.log",
        timeout=1800,
    )
    rows = []
    # Only this run's results: target/criterion keeps every earlier run's too.
    for path in sorted(glob.glob(str(ROOT / "target/criterion/**/new/estimates.json"), recursive=True)):
        if os.path.getmtime(path) < since:
            continue
        new = Path(path).parent
        name = str(new.parent.relative_to(ROOT / "target/criterion"))
        meta = new / "benchmark.json"
        if meta.exists():
            name = json.loads(meta.read_text()).get("full_id", name)
        mean = json.loads(Path(path).read_text())["mean"]
        ci = mean["confidence_interval"]
        rows.append((name, mean["point_estimate"], ci["lower_bound"], ci["upper_bound"]))
    return rows


# -- the run ----------------------------------------------------------------------------


@dataclass
class Results:
    figures: dict = field(default_factory=dict)
    errors: dict = field(default_factory=dict)  # figure -> why it could not be measured
    skipped: dict = field(default_factory=dict)  # figure -> why it was left out on purpose

    def attempt(self, name: str, measure, *args):
        say(f"{name} ...")
        try:
            value = measure(*args)
        except BenchError as e:
            say(f"{name}: ERROR: {e}")
            self.errors[name] = str(e)
            return None
        self.figures[name] = value
        return value


def allocator(binary: Path) -> str:
    """The allocator a binary links: "mimalloc" when mimalloc's code is in it, which carries
    the prefix of its own messages as a constant (kept however the binary is stripped);
    else "system"."""
    return "mimalloc" if b"mimalloc: warning: " in binary.read_bytes() else "system"


def build(skip_criterion: bool) -> None:
    argv = ["cargo", "build", "--release", "--locked", "--bin", "petstore-server"]
    argv += ["--example", "ceiling", "--example", "fsync-ceiling", "--example", "mirror-bench"]
    argv += ["--example", "chain-bench"]
    say("building release binaries: " + " ".join(argv))
    # Streamed, not captured: a cold build takes minutes and should show it is alive.
    if subprocess.run(argv, cwd=ROOT).returncode != 0:
        raise SystemExit("bench: the release build failed (above)")
    if not skip_criterion:
        argv = ["cargo", "bench", "--locked", "--bench", "store", "--no-run"]
        say("building the Criterion benches: " + " ".join(argv))
        if subprocess.run(argv, cwd=ROOT).returncode != 0:
            raise SystemExit("bench: building the Criterion benches failed (above)")
    for binary in (SERVER, CEILING, FSYNC_CEILING, MIRROR_BENCH):
        if not binary.exists():
            raise SystemExit(f"bench: {binary.relative_to(ROOT)} is missing after the build")
    allocators = {binary.name: allocator(binary) for binary in (SERVER, CEILING)}
    if set(allocators.values()) != {"mimalloc"}:
        raise SystemExit(f"bench: the server and the ceiling must both use mimalloc, or their ratio "
                         f"compares allocators: {allocators}")
    if shutil.which("wrk") is None:
        raise SystemExit("bench: wrk is not installed (apt-get install wrk; .ci/install-deps does it)")


def measure_all(r: Results, no_bundle: bool, skip_criterion: bool, skip_postgres: bool) -> None:
    small, large = WORK / f"pets-{SMALL}.db", WORK / f"pets-{LARGE}.db"
    orders_db = WORK / f"orders-{SMALL}.db"

    r.attempt("fsync ceiling", fsync_ceiling)
    if r.attempt("seed small", seed, small, SMALL) is not None:
        copy_db(small, orders_db)  # pristine, before any server opens the original
    r.attempt("seed large", seed, large, LARGE)

    r.attempt("ready ceiling", ready_times, "ready-ceiling", [CEILING], "/pets/1")

    if "seed small" in r.figures:
        reads = r.attempt("read rounds", read_rounds, small, api_key(small))
        if reads:
            r.figures.update(reads)
        else:
            why = r.errors.pop("read rounds")
            r.errors.update({name: why for name, *_ in READS})
        r.attempt("POST /store/orders", orders, orders_db, api_key(orders_db))
    if "seed large" in r.figures:
        key = api_key(large)
        serve = [SERVER, "serve", "--db", large]

        try:
            with Server("pets-page", serve, "/health", key) as server:
                r.attempt("page single", page_latencies, server)
                r.attempt("page load", read_load, "pets-page", server, "pets_page.lua", LARGE)
        except BenchError as e:  # the server did not start
            say(f"page: ERROR: {e}")
            r.errors["page single"] = r.errors["page load"] = str(e)
        r.attempt("ready 1M", ready_times, "ready-1m", serve, "/health")

    if no_bundle:
        r.skipped["deb"] = r.skipped["app"] = "--no-bundle"
    else:
        r.attempt("deb", deb_size)
        if "seed large" in r.figures:
            r.attempt("app", app_figures, large)
        else:
            r.errors["app"] = "no 1M database to run the app on"
    r.attempt("remote", mirror_figures)
    for db, pets in ((small, SMALL), (large, LARGE)):
        if f"seed {'small' if pets == SMALL else 'large'}" in r.figures:
            sqlite_csv(r, db, pets)
    if skip_postgres:
        r.skipped["pg server"] = "--skip-postgres"
    else:
        postgres.measure(r)
    import chain

    r.attempt("chain", chain.figures, skip_postgres)
    if skip_criterion:
        r.skipped["criterion"] = "--skip-criterion"
    else:
        r.attempt("criterion", criterion, time.time())


def sqlite_csv(r: Results, db: Path, pets: int) -> None:
    """The CSV export on the seeded database, the import on a copy of it (csv_io.py)."""
    copy = WORK / f"import-{pets}.db"

    def serve(name: str, for_import: bool) -> Server:
        if for_import:
            copy_db(db, copy)
        target = copy if for_import else db
        return Server(name, [SERVER, "serve", "--db", target], "/health", api_key(target))

    def imported() -> int:
        with read_only(copy) as conn:
            return conn.execute("SELECT count(*) FROM pets").fetchone()[0]

    csv_io.measure(r, "sqlite", pets, serve, imported)


def csv_only() -> int:
    """`run.py --only-csv`: the seeds, then the CSV figures on both engines, printed and
    judged (BENCHMARKS.md is left alone: it holds only whole runs)."""
    r = Results()
    for pets in (SMALL, LARGE):
        db = WORK / f"pets-{pets}.db"
        if r.attempt(f"seed {'small' if pets == SMALL else 'large'}", seed, db, pets) is not None:
            sqlite_csv(r, db, pets)
    postgres.csv_only(r)
    j = Judge(r)
    print("\n".join(csv_io.section(r, j)))
    for name, why in r.errors.items():
        say(f"not measured: {name}: {why}")
    return 1 if j.misses or r.errors else 0


# -- the report -------------------------------------------------------------------------


def machine() -> list:
    def first_line(cmd: list, line: int = 0) -> str:
        try:
            done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=30)
            return (done.stdout or done.stderr).strip().splitlines()[line].strip()
        except (OSError, IndexError, subprocess.TimeoutExpired):
            return "unknown"

    cpu = re.search(r"^model name\s*:\s*(.+)$", Path("/proc/cpuinfo").read_text(), re.MULTILINE)
    mem = re.search(r"^MemTotal:\s+(\d+) kB", Path("/proc/meminfo").read_text(), re.MULTILINE)
    return [
        ("CPU", f"{cpu.group(1) if cpu else 'unknown'}, {os.cpu_count()} cores"),
        ("memory", f"{int(mem.group(1)) / 1024 / 1024:.1f} GiB" if mem else "unknown"),
        ("kernel", f"{platform.system()} {platform.release()}"),
        ("filesystem of target/", " on ".join(first_line(["df", "--output=fstype,source", "target"], 1).split())),
        ("rustc", first_line(["rustc", "-V"])),
        ("wrk", first_line(["wrk", "-v"]).split(" Copyright")[0]),
    ]


@dataclass(frozen=True)
class Tree:
    """The commit the run measures, and what `git status` shows beside it."""

    commit: str  # the full hash of HEAD
    changes: tuple  # `git status --porcelain` lines, BENCHMARKS.md (the output) left out

    @property
    def clean(self) -> bool:
        return not self.changes

    def describe(self) -> str:
        if self.clean:
            return f"{self.commit} (clean tree)"
        return (f"{self.commit} + {len(self.changes)} uncommitted change(s): NOT A RECORD "
                f"(BENCH_ALLOW_DIRTY=1; {', '.join(line[3:] for line in self.changes[:5])}"
                f"{', ...' if len(self.changes) > 5 else ''})")


def tree() -> Tree:
    """HEAD and the working tree's changes (untracked files included: a new source file can
    change the build as much as an edited one)."""
    def git(*argv: str) -> str:
        done = subprocess.run(["git", *argv], cwd=ROOT, capture_output=True, text=True, timeout=60)
        if done.returncode != 0:
            raise SystemExit(f"bench: git {' '.join(argv)} failed: {done.stderr.strip()}")
        return done.stdout

    commit = git("rev-parse", "--verify", "HEAD").strip()
    changes = tuple(line for line in git("status", "--porcelain", "--untracked-files=all").splitlines()
                    if line[3:] != OUTPUT.name)
    return Tree(commit, changes)


def ms(x: float) -> str:
    return f"{x:.2f} ms" if x < 10 else f"{x:.1f} ms" if x < 1000 else f"{x / 1000:.2f} s"


def mb(kib: int) -> str:
    return f"{kib * 1024 / MB:.1f} MB"


def met(ok: bool | None) -> str:
    return "—" if ok is None else "yes" if ok else "**NO**"


def table(head: list, rows: list) -> list:
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(" --- " for _ in head) + "|"]
    return lines + ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]


class Judge:
    """Holds each figure against its target; what is missed or unmeasured is remembered."""

    def __init__(self, r: Results):
        self.r, self.misses = r, []

    def __call__(self, what: str, ok: bool) -> str:
        if not ok:
            self.misses.append(what)
        return met(ok)

    def missing(self, name: str, what: str) -> str:
        if name in self.r.skipped:
            return f"not measured: skipped ({self.r.skipped[name]})"
        self.misses.append(f"{what}: not measured")
        why = self.r.errors.get(name, "an earlier step failed")
        return f"not measured: {why.splitlines()[0]}"


def load_rows(r: Results, j: Judge) -> list:
    f = r.figures
    ceiling = f.get("ceiling")
    rows = []

    def row(name: str, label: str, target: str, judged) -> None:
        load = f.get(name)
        if load is None:
            rows.append([label, j.missing(name, label), "", "", "", "", target, "**NO**"])
            return
        w = load.wrk
        # Only a figure measured in the ceiling's rounds is held against it: any other ran
        # minutes away from it, and their ratio would measure the machine's drift too.
        ratio = "1.00 ×" if name == "ceiling" else ratio_text(load) if load.ratios else ""
        ok = judged(load) if judged else None
        if judged and load.problems:
            j.misses.append(f"{label}: {'; '.join(load.problems)}")
            verdict = "**NO** (" + "; ".join(load.problems) + ")"
        else:
            verdict = j(label, ok) if judged else met(None)
        rows.append([label, f"{w.rps:,.0f}", ms(w.p50_ms), ms(w.p99_ms), mb(load.rss_kib), ratio, target, verdict])

    row("ceiling", "ceiling: fixed Pet as JSON, axum only", "baseline", None)
    share = f"≥ {READ_SHARE_OF_CEILING} × ceiling"
    enough = lambda load: bool(ceiling) and bool(load.ratios) and statistics.median(load.ratios) >= READ_SHARE_OF_CEILING  # noqa: E731
    row("GET /pets/{petId}", f"GET /pets/{{petId}}, random id, {SMALL:,} pets", share, enough)
    row("GET /pets?id=", f"GET /pets?id=, random id, {SMALL:,} pets", share, enough)

    row(
        "page load",
        f"GET /pets filtered + sorted page, {LARGE:,} pets (workload below)",
        f"p99 < {PAGE_P99_MS:g} ms",
        lambda load: load.wrk.p99_ms < PAGE_P99_MS,
    )

    label = f"POST /store/orders, random pet of {SMALL:,}: 201s per second"
    o = f.get("POST /store/orders")
    if o is None:
        rows.append([label, j.missing("POST /store/orders", label), "", "", "", "", "", "**NO**"])
    else:
        w, fsync = o.load.wrk, f.get("fsync ceiling")
        baseline = f"fsync ceiling {fsync:,.0f}/s ({o.created_per_sec / fsync:.1f} ×)" if fsync else "fsync ceiling n/a"
        oversold = [c[0] for c in o.checks if not c[1]]
        verdict = j(label, o.created_per_sec >= ORDERS_PER_SEC)
        for what in oversold + o.load.problems:
            j.misses.append(f"POST /store/orders: {what}")
        if oversold or o.load.problems:
            verdict = "**NO** (" + "; ".join(oversold + o.load.problems) + ")"
        rows.append(
            [label, f"{o.created_per_sec:,.0f}", ms(w.p50_ms), ms(w.p99_ms), mb(o.load.rss_kib), baseline,
             f"≥ {ORDERS_PER_SEC:,}/s, no oversell", verdict]
        )
    return rows


def footprint_rows(r: Results, j: Judge) -> list:
    f, rows = r.figures, []
    ceiling = f.get("ceiling")
    page = f.get("page load")
    label = f"server peak RSS (VmHWM) under load, {LARGE:,} pets"
    if page:
        rss = page.rss_kib
        rows.append([label, mb(rss), f"ceiling {mb(ceiling.rss_kib)}" if ceiling else "",
                     f"< {SERVER_RSS_BYTES // MB} MB", j(label, rss * 1024 < SERVER_RSS_BYTES)])
    else:
        rows.append([label, j.missing("page load", label), "", f"< {SERVER_RSS_BYTES // MB} MB", "**NO**"])

    def spread(times: list) -> str:
        return f"median {ms(statistics.median(times))}, max {ms(max(times))} ({len(times)} starts)"

    label = f"server spawn → first 200 on /health, {LARGE:,} pets"
    ready, base = f.get("ready 1M"), f.get("ready ceiling")
    if ready:
        rows.append([label, spread(ready), f"ceiling {spread(base)}" if base else "",
                     f"median < {READY_MS:g} ms", j(label, statistics.median(ready) < READY_MS)])
    else:
        rows.append([label, j.missing("ready 1M", label), "", f"median < {READY_MS:g} ms", "**NO**"])

    single = f.get("page single")
    if single:
        for which, title in (("first", "first page (offset 0)"), ("deep", f"deep page (offset {single['offset']:,})")):
            times = single[which]
            rows.append([f"one request alone: {title} of category 1, available, by name ({single['total']:,} pets)",
                         f"median {ms(statistics.median(times))}, max {ms(max(times))} ({len(times)} requests)",
                         "", "none (shown so deep paging is not hidden)", "—"])

    label = ".deb size"
    deb = f.get("deb")
    if deb:
        rows.append([label, f"{deb[1] / MB:.1f} MB ({deb[0]}, {deb[1]:,} bytes, built {deb[2]:.0f} min before it was measured)", "",
                     f"< {DEB_BYTES // MB} MB", j(label, deb[1] < DEB_BYTES)])
    else:
        rows.append([label, j.missing("deb", label), "", f"< {DEB_BYTES // MB} MB",
                     "—" if "deb" in r.skipped else "**NO**"])
    for name, pets in (("seed small", SMALL), ("seed large", LARGE)):
        if name in f:
            rows.append([f"petstore-server seed --pets {pets:,}", f"{f[name]:.1f} s", "", "none", "—"])
    return rows


def orders_check_rows(r: Results) -> list:
    o = r.figures.get("POST /store/orders")
    if o is None:
        return []
    rows = [[what, "yes" if ok else "**NO**", detail] for what, ok, detail in o.checks]
    rows.append(["responses (warm-up + measured run)", "", f"{o.created:,} × 201, {o.refused:,} × {REFUSED} "
                 "(pet sold or sold out)"])
    return rows


# Remote mode (a till's mirror and outbox): tests/bench/mirror.rs against a server in its own process.
MIRROR_PETS = SMALL
MIRROR_SALES = env_int("BENCH_MIRROR_SALES", 2_000)
MIRROR_CHANGES = env_int("BENCH_MIRROR_CHANGES", 200)
FIRST_SYNC_S, REPLAY_S, FEED_LAG_P99_MS = 10.0, 20.0, 1000.0


def mirror_figures() -> dict:
    """A mirror's first copy, its feed lag and an offline outbox's replay (mirror-bench
    prints them as one JSON object)."""
    argv = [MIRROR_BENCH, "--pets", str(MIRROR_PETS), "--sales", str(MIRROR_SALES),
            "--changes", str(MIRROR_CHANGES), "--dir", WORK / "mirror"]
    out = run(argv, log=LOGS / "mirror.log", timeout=900)
    try:
        return json.loads(out.strip().splitlines()[-1])
    except (ValueError, IndexError) as e:
        raise BenchError(f"mirror-bench printed no figures ({e}); see {LOGS / 'mirror.log'}")


def remote_rows(r: Results, j: Judge) -> list:
    f = r.figures.get("remote")
    if f is None:
        return [["first copy", j.missing("remote", "remote mode figures"), f"< {FIRST_SYNC_S:g} s", "**NO**"]]
    return [
        [f"first copy of {f['pets']:,} pets", f"{f['first_sync_s']:.2f} s", f"< {FIRST_SYNC_S:g} s",
         j("first mirror copy", f["first_sync_s"] < FIRST_SYNC_S)],
        [f"feed lag, {f['changes']} changes one at a time (p50 / p99)",
         f"{f['feed_lag_p50_ms']:.2f} / {f['feed_lag_p99_ms']:.2f} ms", f"p99 < {FEED_LAG_P99_MS:g} ms",
         j("feed lag p99", f["feed_lag_p99_ms"] < FEED_LAG_P99_MS)],
        [f"{f['sales']:,} sales taken offline, server back to the last placed", f"{f['replay_s']:.2f} s",
         f"< {REPLAY_S:g} s", j("offline replay", f["replay_s"] < REPLAY_S)],
        ["orders placed on the server by the replay", f"{f['placed']:,} ({f['attention']} need attention)",
         f"exactly {f['sales']:,}", j("replayed exactly once", f["placed"] == f["sales"])],
    ]


def app_rows(r: Results, j: Judge) -> list:
    figures = r.figures.get("app")
    if figures is None:
        verdict = "—" if "app" in r.skipped else "**NO**"
        return [["first_screen_ms", j.missing("app", "app first screen"), f"< {FIRST_SCREEN_MS:g} ms", verdict]]
    rows = []
    for key, value in figures.items():
        if key == "first_screen_ms":
            try:
                ok = float(value) < FIRST_SCREEN_MS
            except ValueError:
                ok = False
            rows.append([key, value, f"< {FIRST_SCREEN_MS:g} ms", j("app first screen", ok)])
        else:
            rows.append([key, value, "", "—"])
    return rows


def criterion_rows(r: Results) -> list:
    def ns(x: float) -> str:
        for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
            if x >= scale:
                return f"{x / scale:.3g} {unit}"
        return f"{x:.3g} ns"

    return [[name, ns(mean), f"{ns(lo)} – {ns(hi)}"] for name, mean, lo, hi in r.figures.get("criterion") or []]


def report(r: Results, facts: list, measured: Tree, changed: bool = False) -> tuple:
    """The report's text, and the targets missed. `measured` is the tree the run started on;
    `changed` says it changed before the run ended."""
    j = Judge(r)
    title, rest = HEADER.split("\n", 1)
    lines = [title, ""]
    if not measured.clean:
        lines += ["**NOT A RECORD**: measured on a tree with uncommitted changes (BENCH_ALLOW_DIRTY=1), to try",
                  "the driver. BENCHMARKS.md holds figures of a committed tree only.", ""]
    if changed:
        lines += ["**NOT A RECORD**: the tree changed while the run measured (another commit, or changed files),",
                  "so these figures are not all of the commit named below.", ""]
    lines += [rest.lstrip("\n"), "## Run", ""]
    commit = measured.describe() + (" (changed during the run)" if changed else "")
    lines += [f"- **{k}**: {v}" for k, v in facts + machine() + [("commit", commit)]]
    lines += [
        "",
        f"Load: `wrk -t{THREADS} -c{CONNECTIONS} -d{SECONDS}s --latency` after a {WARMUP} s warm-up run with the "
        "same settings. The ceiling and the two reads: "
        f"{READ_ROUNDS} alternating rounds against one ceiling and one server on the {SMALL:,}-pet database, "
        "each req/s its median round, each ratio the median of the rounds' own ratios. Every other "
        "scenario: a server started for it on a fresh database and stopped after it.",
        "",
        "## Throughput and latency",
        "",
    ]
    lines += table(["scenario", "req/s", "p50", "p99", "peak RSS", "vs ceiling", "target", "met"], load_rows(r, j))
    rounds = [(name, r.figures[name]) for name, *_ in READS if name in r.figures]
    if rounds:
        lines += ["", "Every round, in order (req/s, and over the ceiling of the same round): " + "; ".join(
            f"{name} " + ", ".join(f"{rps:,.0f}" + (f" ({x:.2f} ×)" if load.ratios else "")
                                   for rps, x in zip(load.rounds, load.ratios or load.rounds))
            for name, load in rounds) + "."]
    lines += [
        "",
        "Workloads: the ceiling and GET /pets/{petId} get the same script (tests/bench/lua/get_pet.lua, "
        f"ids uniform in 1..{SMALL:,}). The page: `GET /pets?categoryId={{1..6}}&status={{available|sold}}"
        "&sort={name|-name}&limit=20&offset={0, 20, ..., 980}`, each part uniform at random, over "
        f"{LARGE:,} seeded pets (about 90 % available, 10 % sold). Orders: `{{\"petId\": random 1..{SMALL:,}, "
        "\"quantity\": 1}` on a fresh copy of the seeded database; only 201s count, latency covers every "
        f"response (201 and {REFUSED}).",
        "",
    ]
    checks = orders_check_rows(r)
    if checks:
        lines += ["### Orders: no oversell", ""] + table(["check", "ok", "detail"], checks) + [""]
    lines += ["## Footprint", ""]
    lines += table(["measure", "figure", "baseline", "target", "met"], footprint_rows(r, j))
    lines += ["", f"## The desktop app (tests/e2e/bench.sh, release build under Xvfb, {LARGE:,} pets)", ""]
    lines += table(["figure", "value", "target", "met"], app_rows(r, j))
    lines += ["", "## Remote mode: the mirror and the outbox (tests/bench/mirror.rs)", "",
              "A release build of tests/bench/mirror.rs: a Petstore server in the same process on loopback over "
              f"a fresh SQLite database of {MIRROR_PETS:,} seeded pets; a new mirror copies it, then follows "
              "one stock change at a time (lag from the server's answer to the change in the mirror), then "
              "takes sales with the server stopped and sends them when it is started again. The replay "
              "includes the mirror noticing the server is back (it tries again at most 5 s apart).", ""]
    lines += table(["figure", "value", "target", "met"], remote_rows(r, j))
    if "pg server" in r.skipped:
        lines += ["", f"## PostgreSQL", "", f"Skipped ({r.skipped['pg server']})."]
    else:
        lines += [""] + postgres.section(r, j)
    lines += [""] + csv_io.section(r, j)
    import chain

    lines += [""] + chain.section(r, j)
    lines += ["", "## Store operations (Criterion, tests/bench/store.rs)", ""]
    crit = criterion_rows(r)
    if crit:
        lines += table(["benchmark", "mean", "95 % confidence interval"], crit)
    elif "criterion" in r.figures:
        lines += ["Criterion ran but wrote no results: tests/bench/store.rs defines no benchmarks yet."]
    else:
        lines += [j.missing("criterion", "Criterion benches")]
    lines += ["", "## Verdict", ""]
    for name, why in r.skipped.items():
        lines.append(f"- skipped: {name} ({why})")
    for name, why in r.errors.items():
        lines.append(f"- not measured: {name}: " + why.replace("\n", " "))
    lines += [f"- missed: {m}" for m in j.misses]
    if not j.misses and not r.errors:
        lines.append("- every target met" + (" (some figures skipped)" if r.skipped else ""))
    return "\n".join(lines) + "\n", j.misses


def cpu_times() -> list:
    """The machine's CPU time so far, in ticks, as /proc/stat's first line counts it."""
    return [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]


def stolen_share(before: list, after: list) -> str:
    """How much of the machine's CPU time the hypervisor gave to other guests (steal, the
    eighth count) between two readings: why one run of a shared VM is slower than another."""
    spent = [b - a for a, b in zip(before, after)]
    return f"{100 * spent[7] / max(1, sum(spent)):.1f} % of all CPU time"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-bundle", action="store_true", help="leave out the .deb size and the app figures")
    parser.add_argument("--skip-criterion", action="store_true", help="leave out the Criterion benches")
    parser.add_argument("--skip-postgres", action="store_true", help="leave out the PostgreSQL figures")
    parser.add_argument("--only-remote", action="store_true",
                        help="measure only remote mode's figures (tests/bench/mirror.rs) and print them")
    parser.add_argument("--only-pg-reads", action="store_true",
                        help="measure only GET /pets/{petId} on PostgreSQL against the ceiling (and the seed it needs)")
    parser.add_argument("--only-csv", action="store_true",
                        help="measure only the CSV export and import figures (and the seeds they need), both engines")
    parser.add_argument("--only-pg-orders", action="store_true",
                        help="measure only POST /store/orders on one PostgreSQL replica against pgbench -N")
    parser.add_argument("--only-orders", action="store_true",
                        help="measure only POST /store/orders on SQLite against the fsync ceiling (and the seed it needs)")
    parser.add_argument("--only-pg-page", action="store_true",
                        help="measure only the PostgreSQL filtered page (and the seed it needs)")
    parser.add_argument("--check-tree", action="store_true",
                        help="only check that a whole run may start on this tree (make bench, before its builds)")
    parser.add_argument("--out", type=Path,
                        help=f"write the report here instead of {OUTPUT.name} (on a changed tree, "
                             f"BENCH_ALLOW_DIRTY=1, the default is {TRIAL_OUTPUT.relative_to(ROOT)})")
    args = parser.parse_args()
    whole_run = not (args.only_orders or args.only_pg_page or args.only_pg_reads or args.only_pg_orders
                     or args.only_csv or args.only_remote)
    started_on = tree()
    output = (args.out or (OUTPUT if started_on.clean else TRIAL_OUTPUT)).resolve()
    if whole_run and not started_on.clean:
        if os.environ.get("BENCH_ALLOW_DIRTY") != "1":
            raise SystemExit(
                "bench: the tree has uncommitted changes (git status):\n  " + "\n  ".join(started_on.changes[:20])
                + "\nBENCHMARKS.md holds figures of a committed tree, named: commit first. To try the driver "
                f"on this tree, BENCH_ALLOW_DIRTY=1 writes {TRIAL_OUTPUT.relative_to(ROOT)} (or --out) instead.")
        if output == OUTPUT.resolve():
            raise SystemExit("bench: a run on a changed tree never writes BENCHMARKS.md: give another --out")
        say(f"a trial on a changed tree (BENCH_ALLOW_DIRTY=1): the report goes to {output}, headed as no record")
    if args.check_tree:
        say(f"the run measures {started_on.describe()} and writes {output}")
        return 0

    wall = time.monotonic()
    LOGS.mkdir(parents=True, exist_ok=True)
    build(args.skip_criterion or args.only_pg_page or args.only_pg_reads or args.only_csv or args.only_pg_orders
          or args.only_orders)
    if args.only_orders:
        return orders_only()
    if args.only_pg_page:
        return postgres.page_only()
    if args.only_pg_reads:
        return postgres.reads_only()
    if args.only_pg_orders:
        return postgres.orders_only()
    if args.only_csv:
        return csv_only()
    if args.only_remote:
        r = Results()
        r.attempt("remote", mirror_figures)
        j = Judge(r)
        print("\n".join(table(["figure", "value", "target", "met"], remote_rows(r, j))))
        return 1 if j.misses or r.errors else 0
    load_before = Path("/proc/loadavg").read_text().split()[:3]
    cpu_before = cpu_times()
    r = Results()
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    measure_all(r, args.no_bundle, args.skip_criterion, args.skip_postgres)
    load_after = Path("/proc/loadavg").read_text().split()[:3]
    facts = [
        ("date", date),
        ("load average (1, 5, 15 min) before / after", f"{' '.join(load_before)} / {' '.join(load_after)}"),
        ("CPU time stolen by the hypervisor during the measurements", stolen_share(cpu_before, cpu_times())),
        ("wall time of the measurements", f"{time.monotonic() - wall:.0f} s (the driver's builds included, `make bundle` before it not)"),
    ]
    ended_on = tree()
    changed = ended_on != started_on
    if changed:
        # Built from one tree, partly measured on another (the Criterion benches build
        # again, the driver's own files are read as they are): the file would name a
        # commit its figures do not all come from.
        say(f"the tree changed during the run: from {started_on.describe()} to {ended_on.describe()}")
        if output == OUTPUT.resolve():
            output = TRIAL_OUTPUT.resolve()
    text, misses = report(r, facts, started_on, changed)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text)
    print()
    print(text[text.index("## Run") :])
    say(f"wrote {output}")
    if changed:
        say(f"not a record: the tree changed during the run, so {OUTPUT.name} was not written")
        return 1
    if misses or r.errors:
        say(f"{len(misses)} target(s) missed or not measured:")
        for m in misses:
            print(f"  - {m}")
        return 1
    return 0


# postgres.py uses this file's helpers as `run`: the module running as __main__ is that
# module (imported again under its file name, it would be a second copy with its own
# servers to clean up and its own clock).
sys.modules.setdefault("run", sys.modules[__name__])
import csv_io  # noqa: E402
import postgres  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
