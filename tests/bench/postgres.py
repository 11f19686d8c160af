"""The PostgreSQL figures of `make bench`, measured in the same run as the rest.

A throwaway PostgreSQL 15 server (initdb as the `postgres` user, durable: fsync and
synchronous_commit on, as a chain's server runs) on a free loopback port, with:

- `pgbench -N` at 64 clients on a database of its own: the baseline the orders figure is
  held against (what this PostgreSQL does with small write transactions here);
- 100,000 and 1,000,000 pets seeded by `petstore-server seed --db postgres://...`;
- GET /pets/{petId} at 100,000 pets against the axum ceiling, in alternating rounds beside it;
- orders at 64 connections, then the database checked for oversell;
- the filtered, sorted page at 1,000,000 pets (its p99);
- two replicas against one on the same database, with the CPU the machine spent.

Everything goes through run.py's helpers (wrk, Server, the Results); this file only adds
what PostgreSQL needs: its server, psql checks, and the rows of the report.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import statistics
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import csv_io
import run as bench

PG_BIN = Path(os.environ.get("PG_BIN", "/usr/lib/postgresql/15/bin"))
PG_USER = "petstore"
KEY = "bench-key-0123456789abcdefghijklmnopqrstuvwxyz"

# The PostgreSQL targets (tests/bench/README.md says what each is held against).
ORDERS_SHARE_OF_PGBENCH = 0.6
READ_SHARE_OF_CEILING = 0.25
PAGE_P99_MS = 20.0
SEED_1M_SECONDS = 60.0


class Postgres:
    """A throwaway PostgreSQL server for the length of a `with` block."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.data = folder / "data"
        self.port = bench.free_port()

    def _as_postgres(self, argv: list, **kw) -> str:
        # initdb and pg_ctl refuse root; the folder belongs to `postgres`.
        prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        return bench.run(prefix + [str(a) for a in argv], log=bench.LOGS / "postgres-ctl.log", **kw)

    def __enter__(self) -> "Postgres":
        if not (PG_BIN / "initdb").exists():
            raise bench.BenchError(f"no PostgreSQL in {PG_BIN}: apt-get install postgresql (make deps)")
        shutil.rmtree(self.folder, ignore_errors=True)
        self.folder.mkdir(parents=True)
        if os.geteuid() == 0:
            shutil.chown(self.folder, "postgres", "postgres")
        self._as_postgres([PG_BIN / "initdb", "-D", self.data, "-A", "trust", "-U", PG_USER], timeout=120)
        options = (
            f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c max_connections=300 "
            "-c shared_buffers=512MB"
        )
        self._as_postgres(
            [PG_BIN / "pg_ctl", "-D", self.data, "-o", options, "-l", self.folder / "log", "-w", "start"], timeout=120
        )
        return self

    def __exit__(self, *_) -> None:
        try:
            self._as_postgres([PG_BIN / "pg_ctl", "-D", self.data, "-m", "fast", "-w", "stop"], timeout=120)
        except bench.BenchError as e:
            bench.say(f"postgres: stopping failed: {e}")
        shutil.rmtree(self.folder, ignore_errors=True)

    def url(self, db: str) -> str:
        return f"postgres://{PG_USER}@127.0.0.1:{self.port}/{db}?sslmode=disable"

    def psql(self, db: str, sql: str) -> list:
        out = bench.run([PG_BIN / "psql", "-X", "-At", "-F", "\t", "-d", self.url(db), "-c", sql], timeout=600)
        return [line.split("\t") for line in out.splitlines() if line]

    def create(self, db: str) -> None:
        self.psql("postgres", f"CREATE DATABASE {db}")


def pgbench_init(pg: Postgres) -> None:
    """The pgbench database, scale 10, on the same server."""
    pg.create("pgbench")
    bench.run([PG_BIN / "pgbench", "-i", "-s", "10", "-q", pg.url("pgbench")], log=bench.LOGS / "pgbench-init.log",
              timeout=600)


def pgbench(pg: Postgres, round_name: str) -> float:
    """`pgbench -N` (simple update: UPDATE, SELECT, INSERT per transaction, no contended
    branch rows), 64 clients, 2 threads, the same seconds as every wrk run; its tps."""
    out = bench.run(
        [PG_BIN / "pgbench", "-N", "-c", bench.CONNECTIONS, "-j", bench.THREADS, "-T", bench.SECONDS, pg.url("pgbench")],
        log=bench.LOGS / f"pgbench{round_name}.log",
        timeout=bench.SECONDS + 120,
    )
    found = re.search(r"^tps = ([\d.]+) \(without initial connection time\)", out, re.MULTILINE)
    if not found:
        raise bench.BenchError(f"pgbench printed no 'tps = ... (without initial connection time)' line:\n{out}")
    return float(found.group(1))


def seed(pg: Postgres, db: str, pets: int) -> float:
    pg.create(db)
    out = bench.run([bench.SERVER, "seed", "--db", pg.url(db), "--pets", pets], log=bench.LOGS / f"pg-seed-{pets}.log",
                    timeout=900)
    took = re.search(r"^Added (\d+) pets .* in ([\d.]+) s$", out, re.MULTILINE)
    if not took or int(took.group(1)) != pets:
        raise bench.BenchError(f"petstore-server seed printed no 'Added {pets} pets ... in T s' line:\n{out}")
    (count,), = pg.psql(db, "SELECT count(*) FROM pets")
    if int(count) != pets:
        raise bench.BenchError(f"{db} holds {count} pets after seeding {pets}")
    return float(took.group(2))


def server(pg: Postgres, name: str, db: str) -> bench.Server:
    os.environ["PETSTORE_API_KEY"] = KEY
    return bench.Server(name, [bench.SERVER, "serve", "--db", pg.url(db)], "/health", KEY)


def cpu_busy(before: list, after: list) -> float:
    """Cores kept busy between two /proc/stat readings (user+nice+system+irq+softirq+steal)."""
    spent = [b - a for a, b in zip(before, after)]
    busy = spent[0] + spent[1] + spent[2] + spent[5] + spent[6] + spent[7]
    return (os.cpu_count() or 1) * busy / max(1, sum(spent))


@dataclass
class PgOrders:
    created_per_sec: float
    wrk: list  # the measured run(s)
    cores: float
    problems: list
    checks: list
    statuses: dict = field(default_factory=dict)  # every status answered, warm-up and measured runs
    # In rounds: each round's (baseline, orders/s), the median of the rounds' own ratios,
    # and, for two replicas, the one replica of the round whose figures these are.
    rounds: list = field(default_factory=list)
    ratio: float | None = None
    one: "PgOrders | None" = None


def stock_snapshot(pg: Postgres, db: str) -> tuple:
    stock = {int(i): int(s) for i, s in pg.psql(db, "SELECT id, stock FROM pets")}
    (last,), = pg.psql(db, "SELECT coalesce(max(id), 0) FROM orders")
    return stock, int(last)


def orders(pg: Postgres, db: str, replicas: int, round_name: str = "") -> PgOrders:
    """Orders of one of a random pet through `replicas` servers on one database, the 64
    connections split evenly between them; then the database must show no oversell and no
    lost order: every 201 of the warm-up and the measured run is an order in the database,
    and every status of both runs a 201 or a refusal of a sold (out) pet. The same checks as
    run.py's SQLite orders."""
    before, last = stock_snapshot(pg, db)
    per = bench.CONNECTIONS // replicas
    servers = [server(pg, f"pg-orders-{replicas}-{n}", db) for n in range(replicas)]
    entered = []
    try:
        for s in servers:
            entered.append(s.__enter__())
        env = dict(os.environ, BENCH_KEY=KEY, BENCH_MAX_ID=str(len(before)), BENCH_LUA_DIR=str(bench.LUA))

        def wrk_all(tag: str, seconds: int) -> list:
            procs = []
            for n, s in enumerate(entered):
                argv = ["wrk", f"-t{max(1, bench.THREADS // replicas)}", f"-c{per}", f"-d{seconds}s", "--latency",
                        "-s", str(bench.LUA / "orders.lua"), s.url]
                log = open(bench.LOGS / f"pg-orders-{replicas}-{n}{round_name}.{tag}.wrk.txt", "w")
                procs.append((subprocess.Popen(argv, cwd=bench.ROOT, stdout=log, stderr=subprocess.STDOUT, env=env),
                              log))
            runs = []
            for proc, log in procs:
                proc.wait(timeout=seconds + 60)
                log.close()
                runs.append((log.name, bench.parse_wrk(Path(log.name).read_text())))
            return runs

        warm = wrk_all("warmup", bench.WARMUP)
        cpu_before = bench.cpu_times()
        measured = wrk_all("measured", bench.SECONDS)
        cores = cpu_busy(cpu_before, bench.cpu_times())
    finally:
        for s in entered:
            s.__exit__()

    problems, statuses = [], {}
    for log, w in warm + measured:
        if not w.statuses:
            raise bench.BenchError(f"orders.lua printed no status tally (see {log})")
        for status, n in w.statuses.items():
            statuses[status] = statuses.get(status, 0) + n
        if sum(w.statuses.values()) != w.requests:
            problems.append(f"status tally {w.statuses} does not add up to wrk's {w.requests} requests ({log})")
        if sum(n for st, n in w.statuses.items() if st >= 400) != w.non_2xx:
            problems.append(f"status tally {w.statuses} disagrees with wrk's Non-2xx count {w.non_2xx} ({log})")
        unexpected = {st: n for st, n in w.statuses.items() if st not in (201, bench.REFUSED)}
        if unexpected:
            problems.append(f"statuses other than 201 and {bench.REFUSED}: {unexpected} ({log})")
        errors = {k: v for k, v in w.socket_errors.items() if v}
        if errors:
            problems.append(f"socket errors {errors} ({log})")
    created_per_sec = sum(w.rps * w.statuses.get(201, 0) / max(1, w.requests) for _, w in measured)

    after = {int(i): int(s) for i, s in pg.psql(db, "SELECT id, stock FROM pets")}
    ordered = {int(p): int(q) for p, q in
               pg.psql(db, f"SELECT pet_id, sum(quantity) FROM orders WHERE id > {last} GROUP BY pet_id")}
    (in_db,), = pg.psql(db, f"SELECT count(*) FROM orders WHERE id > {last}")
    in_db, created = int(in_db), statuses.get(201, 0)
    negative = sum(1 for s in after.values() if s < 0)
    broken = [p for p, s in before.items() if after.get(p) != s - ordered.get(p, 0)]
    # wrk stops mid-flight: up to one request per connection per run can be committed
    # without wrk reading its 201. Fewer orders than 201s would be lost acknowledged orders.
    in_flight = 2 * per * replicas
    checks = [
        ("no pet with negative stock", negative == 0, f"{negative} pets below 0"),
        ("stock before = stock after + quantities ordered, for every pet", not broken and set(after) == set(before),
         f"{len(broken)} pets differ, e.g. {broken[:5]}" if broken else f"{len(before):,} pets match"),
        ("orders in the database = 201s answered (+ at most one in flight per connection per run)",
         created <= in_db <= created + in_flight,
         f"{in_db:,} new orders, {created:,} 201s; responses (warm-up + measured run): "
         + ", ".join(f"{n:,} × {st}" for st, n in sorted(statuses.items()))),
    ]
    return PgOrders(created_per_sec, [w for _, w in measured], cores, problems, checks, statuses)


def read_rounds(r: "bench.Results", pg: Postgres) -> None:
    """GET /pets/{petId} on PostgreSQL held against a ceiling measured beside it, in
    alternating rounds (ceiling, PostgreSQL; READ_ROUNDS times), each req/s its median
    round and the ratio the median of the rounds' own ratios, as run.py does for SQLite's
    reads: this machine's speed drifts by a tenth within
    a minute, and the ceiling of the SQLite rounds, minutes earlier, measured that drift
    (0.28 x one run, 0.20 x the next, with the same code)."""
    runs = {"pg ceiling": [], "pg GET /pets/{petId}": []}
    with bench.Server("ceiling", [bench.CEILING], "/pets/1") as ceiling, server(pg, "pg-get-pet", "shop_small") as s:
        for n in range(1, bench.READ_ROUNDS + 1):
            runs["pg ceiling"].append(bench.read_load(f"pg-ceiling.round{n}", ceiling, "get_pet.lua", bench.SMALL))
            runs["pg GET /pets/{petId}"].append(
                bench.read_load(f"pg-get-pet.round{n}", s, "get_pet.lua", bench.SMALL))
    r.figures.update(bench.in_rounds(runs, "pg ceiling"))


def order_rounds(r: "bench.Results", pg: Postgres) -> None:
    """The orders of one replica held against pgbench -N, and of two replicas against one,
    in alternating rounds (pgbench, orders of one replica, orders of two, each on a fresh
    copy of the 100,000-pet shop; READ_ROUNDS times). Every ratio is of runs of the same
    round, a minute apart at most, and its figure the median of the rounds' own ratios; the
    req/s shown are those of the round with that median. Every round must show no oversell
    and no lost order. One pgbench run and one orders run minutes apart measured this
    machine's drift as much as the server: 0.50 to 0.68 x with the same code, pgbench alone
    anywhere from 6,300 to 9,400 tps within an hour."""
    pgbench_init(pg)
    rounds = []
    for n in range(1, bench.READ_ROUNDS + 1):
        tps = None
        for replicas in (0, 1, 2):
            # Each run starts from a checkpoint, and a round's copy is dropped after it: the
            # next runs must not pay for the last one's dirty pages or its autovacuum.
            pg.psql("postgres", "CHECKPOINT")
            if replicas == 0:
                tps = pgbench(pg, f".round{n}")
                continue
            db = f"shop_orders{replicas}_round{n}"
            pg.psql("postgres", f"CREATE DATABASE {db} TEMPLATE shop_small")
            pg.psql("postgres", "CHECKPOINT")
            o = orders(pg, db, replicas, f".round{n}")
            pg.psql("postgres", f"DROP DATABASE {db}")
            if replicas == 1:
                one = o
            else:
                two = o
        bench.say(f"  round {n}: pgbench -N {tps:,.0f} tps, orders {one.created_per_sec:,.0f}/s "
                  f"({one.created_per_sec / tps:.2f} x), two replicas {two.created_per_sec:,.0f}/s "
                  f"({two.created_per_sec / one.created_per_sec:.2f} x one)")
        rounds.append((tps, one, two))

    def median_round(ratio):
        return sorted(rounds, key=ratio)[(len(rounds) - 1) // 2]

    def in_rounds(o: PgOrders, ratio, baselines: list, of: list) -> PgOrders:
        """The round's figures `o`, with every round's ratio, problems and checks."""
        return dataclasses.replace(
            o,
            ratio=statistics.median(ratio(each) for each in rounds),
            rounds=list(zip(baselines, [each.created_per_sec for each in of])),
            problems=[f"round {n}: {p}" for n, each in enumerate(of, 1) for p in each.problems],
            checks=[(f"round {n}: {what}", ok, detail) for n, each in enumerate(of, 1) for what, ok, detail in each.checks],
        )

    def vs_pgbench(each):
        return each[1].created_per_sec / each[0]

    def vs_one(each):
        return each[2].created_per_sec / each[1].created_per_sec

    tps, one, _ = median_round(vs_pgbench)
    one = in_rounds(one, vs_pgbench, [t for t, _, _ in rounds], [o for _, o, _ in rounds])
    _, one_beside, two = median_round(vs_one)
    two = in_rounds(two, vs_one, [o.created_per_sec for _, o, _ in rounds], [o for _, _, o in rounds])
    two.one = one_beside
    r.figures["pg pgbench -N"], r.figures["pg orders 1"], r.figures["pg orders 2"] = tps, one, two


def measure(r: "bench.Results", only_page: bool = False) -> None:
    """Every PostgreSQL figure into `r`, under names starting with "pg "; with `only_page`,
    only the large seed and the filtered page (run.py --only-pg-page)."""
    folder = bench.WORK / "postgres"
    try:
        with Postgres(folder) as pg:
            small = None
            if not only_page:
                small = r.attempt("pg seed small", seed, pg, "shop_small", bench.SMALL)
            r.attempt("pg seed large", seed, pg, "shop_large", bench.LARGE)
            if small is not None:
                bench.say("pg GET /pets/{petId} against the ceiling, in rounds ...")
                try:
                    read_rounds(r, pg)
                except bench.BenchError as e:
                    bench.say(f"pg GET /pets/{{petId}}: ERROR: {e}")
                    r.errors["pg GET /pets/{petId}"] = str(e)
                bench.say("pg orders of one replica against pgbench -N, and of two against one, in rounds ...")
                try:
                    order_rounds(r, pg)
                except bench.BenchError as e:
                    bench.say(f"pg orders: ERROR: {e}")
                    r.errors["pg orders 1"] = r.errors["pg orders 2"] = r.errors["pg pgbench -N"] = str(e)
            if "pg seed large" in r.figures:
                with server(pg, "pg-page", "shop_large") as s:
                    r.attempt("pg page load", bench.read_load, "pg-page", s, "pets_page.lua", bench.LARGE)
            if not only_page:
                for db, pets in (("shop_small", bench.SMALL), ("shop_large", bench.LARGE)):
                    if f"pg seed {'small' if pets == bench.SMALL else 'large'}" in r.figures:
                        csv(r, pg, db, pets)
    except bench.BenchError as e:
        bench.say(f"postgres: ERROR: {e}")
        r.errors["pg server"] = str(e)


def csv(r: "bench.Results", pg: Postgres, db: str, pets: int) -> None:
    """The CSV export on the seeded database, the import on a copy made from it (csv_io.py)."""
    copy = f"{db}_import"

    def serve(name: str, for_import: bool) -> bench.Server:
        if for_import:
            pg.psql("postgres", f"CREATE DATABASE {copy} TEMPLATE {db}")
        return server(pg, name, copy if for_import else db)

    def imported() -> int:
        (count,), = pg.psql(copy, "SELECT count(*) FROM pets")
        return int(count)

    csv_io.measure(r, "postgres", pets, serve, imported)


def csv_only(r: "bench.Results") -> None:
    """The seeds and the CSV figures alone (run.py --only-csv)."""
    try:
        with Postgres(bench.WORK / "postgres") as pg:
            for db, pets in (("shop_small", bench.SMALL), ("shop_large", bench.LARGE)):
                if r.attempt(f"pg seed {'small' if pets == bench.SMALL else 'large'}", seed, pg, db, pets) is not None:
                    csv(r, pg, db, pets)
    except bench.BenchError as e:
        r.errors["pg server"] = str(e)


def page_only() -> int:
    """`run.py --only-pg-page`: the seed of 1,000,000 pets and the filtered page over it,
    printed and judged, in about a minute instead of the whole run. BENCHMARKS.md is left
    alone: it holds only whole runs."""
    r = bench.Results()
    measure(r, only_page=True)
    load = r.figures.get("pg page load")
    if load is None:
        bench.say(f"pg page load: not measured: {r.errors}")
        return 1
    w = load.wrk
    ok = w.p99_ms < PAGE_P99_MS and not load.problems
    bench.say(f"pg page load: {w.rps:,.0f} req/s, p50 {bench.ms(w.p50_ms)}, p99 {bench.ms(w.p99_ms)} "
              f"(target p99 < {PAGE_P99_MS:g} ms: {'met' if ok else 'MISSED'}){'; ' + '; '.join(load.problems) if load.problems else ''}")
    return 0 if ok else 1


def reads_only() -> int:
    """`run.py --only-pg-reads`: GET /pets/{petId} on PostgreSQL against the ceiling, in
    rounds, printed and judged in about two minutes (BENCHMARKS.md is left alone)."""
    r = bench.Results()
    try:
        with Postgres(bench.WORK / "postgres") as pg:
            r.attempt("pg seed small", seed, pg, "shop_small", bench.SMALL)
            read_rounds(r, pg)
    except bench.BenchError as e:
        bench.say(f"postgres: ERROR: {e}")
        return 1
    load, ceiling = r.figures["pg GET /pets/{petId}"], r.figures["pg ceiling"]
    share = statistics.median(load.ratios)
    ok = share >= READ_SHARE_OF_CEILING and not load.problems
    bench.say(f"pg GET /pets/{{petId}}: {load.wrk.rps:,.0f} req/s, p99 {bench.ms(load.wrk.p99_ms)}; ceiling "
              f"{ceiling.wrk.rps:,.0f}: {share:.2f} x, the median of the rounds' own ratios (rounds "
              f"{', '.join(f'{x:,.0f}' for x in load.rounds)} against {', '.join(f'{x:,.0f}' for x in ceiling.rounds)}: "
              f"{', '.join(f'{x:.2f}' for x in load.ratios)}; target >= {READ_SHARE_OF_CEILING}: "
              f"{'met' if ok else 'MISSED'})")
    return 0 if ok else 1


def orders_only() -> int:
    """`run.py --only-pg-orders`: the seed of 100,000 pets and the orders of one replica
    against pgbench -N, and of two replicas against one, in rounds, printed and judged in
    about three minutes (BENCHMARKS.md is left alone)."""
    r = bench.Results()
    try:
        with Postgres(bench.WORK / "postgres") as pg:
            seed(pg, "shop_small", bench.SMALL)
            order_rounds(r, pg)
    except bench.BenchError as e:
        bench.say(f"postgres: ERROR: {e}")
        return 1
    tps, o, two = r.figures["pg pgbench -N"], r.figures["pg orders 1"], r.figures["pg orders 2"]
    ok = o.ratio >= ORDERS_SHARE_OF_PGBENCH and not o.problems and all(c[1] for c in o.checks)
    bench.say(f"pg POST /store/orders: {o.created_per_sec:,.0f} 201s/s, CPU {o.cores:.2f} cores; pgbench -N "
              f"{tps:,.0f} tps: {o.ratio:.2f} x, the median of the rounds' own ratios "
              f"(target >= {ORDERS_SHARE_OF_PGBENCH}: {'met' if ok else 'MISSED'})"
              f"{'; ' + '; '.join(o.problems) if o.problems else ''}")
    good_two = not two.problems and all(c[1] for c in two.checks)
    bench.say(f"pg POST /store/orders, two replicas: {two.created_per_sec:,.0f} 201s/s, CPU {two.cores:.2f} cores; "
              f"{two.ratio:.2f} x one replica of the same round (median of the rounds' own ratios)"
              f"{'; ' + '; '.join(two.problems) if two.problems else ''}")
    for name, good, detail in o.checks + [(f"two replicas: {w}", g, d) for w, g, d in two.checks]:
        bench.say(f"  {name}: {'yes' if good else 'NO'} ({detail})")
    return 0 if ok and good_two else 1


def rows(r: "bench.Results", j: "bench.Judge") -> list:
    """The report's PostgreSQL table: scenario, figure, p50, p99, baseline, target, met."""
    f, out = r.figures, []
    ceiling, tps = f.get("pg ceiling"), f.get("pg pgbench -N")

    def missing(name: str, label: str, target: str) -> None:
        out.append([label, j.missing(name, label), "", "", "", target, "**NO**"])

    out.append([f"pgbench -N, {bench.CONNECTIONS} clients", f"{tps:,.0f} tps" if tps else j.missing("pg pgbench -N", "pgbench"),
                "", "", "baseline", "baseline", "—"])

    label = f"GET /pets/{{petId}}, random id, {bench.SMALL:,} pets"
    load = f.get("pg GET /pets/{petId}")
    if load is None:
        missing("pg GET /pets/{petId}", label, f"≥ {READ_SHARE_OF_CEILING} × ceiling")
    else:
        share_ = statistics.median(load.ratios) if load.ratios else None
        ok = share_ is not None and share_ >= READ_SHARE_OF_CEILING and not load.problems
        share = (f"{share_:.2f} × ceiling, the median of the rounds' own ratios (ceiling {ceiling.wrk.rps:,.0f}, "
                 "in alternating rounds; rounds: "
                 + ", ".join(f"{x:,.0f} against {c:,.0f} ({x / c:.2f} ×)" for x, c in zip(load.rounds, ceiling.rounds))
                 + ")") if ceiling and share_ is not None else "n/a"
        out.append([label, f"{load.wrk.rps:,.0f} req/s", bench.ms(load.wrk.p50_ms), bench.ms(load.wrk.p99_ms), share,
                    f"≥ {READ_SHARE_OF_CEILING} × ceiling", j(f"PostgreSQL {label}", ok)])

    for replicas in (1, 2):
        name = f"pg orders {replicas}"
        label = f"POST /store/orders, {replicas} replica{'s' if replicas > 1 else ''}: 201s per second"
        o = f.get(name)
        if o is None:
            missing(name, label, "")
            continue
        p50 = max(w.p50_ms for w in o.wrk)
        p99 = max(w.p99_ms for w in o.wrk)
        rounds = ", ".join(f"{made:,.0f} against {base:,.0f} ({made / base:.2f} ×)" for base, made in o.rounds)
        bad = [c[0] for c in o.checks if not c[1]] + o.problems
        if replicas == 1:
            share = (f"{o.ratio:.2f} × pgbench -N of the same round, the median of the rounds' own ratios "
                     f"(rounds: {rounds}); CPU {o.cores:.2f} cores")
            ok = o.ratio >= ORDERS_SHARE_OF_PGBENCH and not bad
            target = f"≥ {ORDERS_SHARE_OF_PGBENCH} × pgbench -N, no oversell, no lost order"
            verdict = j(f"PostgreSQL {label}", ok)
        else:
            share = (f"{o.ratio:.2f} × one replica of the same round, the median of the rounds' own ratios "
                     f"(rounds: {rounds}); CPU {o.cores:.2f} cores against {o.one.cores:.2f} for one")
            target = f"the figure (CPU of {os.cpu_count()} cores), no oversell, no lost order"
            verdict = j(f"PostgreSQL {label}", not bad)
        if bad:
            verdict = "**NO** (" + "; ".join(bad) + ")"
        out.append([label, f"{o.created_per_sec:,.0f}", bench.ms(p50), bench.ms(p99), share, target, verdict])

    label = f"GET /pets filtered + sorted page, {bench.LARGE:,} pets"
    load = f.get("pg page load")
    if load is None:
        missing("pg page load", label, f"p99 < {PAGE_P99_MS:g} ms")
    else:
        out.append([label, f"{load.wrk.rps:,.0f} req/s", bench.ms(load.wrk.p50_ms), bench.ms(load.wrk.p99_ms), "",
                    f"p99 < {PAGE_P99_MS:g} ms",
                    j(f"PostgreSQL {label}", load.wrk.p99_ms < PAGE_P99_MS and not load.problems)])

    for name, pets in (("pg seed small", bench.SMALL), ("pg seed large", bench.LARGE)):
        if name in f:
            big = pets >= 1_000_000
            out.append([f"petstore-server seed --pets {pets:,}", f"{f[name]:.1f} s", "", "", "",
                        f"< {SEED_1M_SECONDS:g} s" if big else "none",
                        j(f"PostgreSQL seed of {pets:,} pets", f[name] < SEED_1M_SECONDS) if big else "—"])
    return out


def section(r: "bench.Results", j: "bench.Judge") -> list:
    lines = [
        "## PostgreSQL",
        "",
        "A throwaway PostgreSQL 15 on loopback, durable (fsync and synchronous_commit on), "
        "`shared_buffers=512MB`, started by the driver (tests/bench/postgres.py). pgbench -N is "
        f"`pgbench -N -c {bench.CONNECTIONS} -j {bench.THREADS} -T {bench.SECONDS}` on a scale-10 pgbench database of "
        "the same server; it, the orders of one replica and those of two replicas run in "
        f"{bench.READ_ROUNDS} alternating rounds (pgbench, orders of one replica, orders of two, each on a fresh "
        "copy of the shop): one replica is held against the pgbench of its round, two replicas against the one "
        "replica of theirs, each ratio being the median of the rounds' own ratios, and the req/s shown those "
        "of the round with that median. Every round's orders are checked: no oversell, and every 201 an order "
        "in the database. The servers, PostgreSQL, pgbench and wrk all share this machine's "
        f"{os.cpu_count()} cores: two replicas here add no CPU, they split the same two cores, so their "
        "figure shows the cost of a second process rather than the gain a second machine would bring.",
        "",
    ]
    lines += bench.table(["scenario", "figure", "p50", "p99", "baseline", "target", "met"], rows(r, j))
    checks = []
    for replicas in (1, 2):
        o = r.figures.get(f"pg orders {replicas}")
        if o:
            checks += [[f"{replicas} replica(s): {what}", "yes" if ok else "**NO**", detail] for what, ok, detail in o.checks]
    if checks:
        lines += ["", "### PostgreSQL orders: no oversell", ""] + bench.table(["check", "ok", "detail"], checks)
    return lines + [""]
