#!/usr/bin/env python3
"""Paired runs of one `make bench` scenario with and without a switch of the server.

A switch (an environment variable of petstore-server) is kept only if it pays for itself;
this measures that on this shared machine, whose speed drifts by a tenth within a minute:
the two settings run in alternating rounds on fresh copies of one seeded database, and the
figures of each round are printed side by side.

    python3 tests/bench/paired.py NAME=VALUE [--rounds 3] [--pets 100000]

The WAL-writes VFS (PETSTORE_WAL_WRITES=off, since removed) was decided with it.

Needs the release server (`cargo build --release --bin petstore-server`) and wrk.
"""

import argparse
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run as bench  # noqa: E402  (the driver of `make bench`: its servers, wrk runs, checks)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("switch", help="NAME=VALUE set for the server in the 'with' rounds")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--pets", type=int, default=100_000)
    args = parser.parse_args()
    name, sep, value = args.switch.partition("=")
    if not sep:
        parser.error("the switch is NAME=VALUE")

    bench.LOGS.mkdir(parents=True, exist_ok=True)
    seeded = bench.WORK / f"paired-{args.pets}.db"
    for f in bench.db_files(seeded):
        f.unlink(missing_ok=True)
    bench.seed(seeded, args.pets)

    figures = {"without": [], "with": []}
    for round_ in range(1, args.rounds + 1):
        for setting in ("without", "with"):
            db = bench.WORK / "paired-run.db"
            for f in bench.db_files(db):
                f.unlink(missing_ok=True)
            bench.copy_db(seeded, db)
            if setting == "with":
                os.environ[name] = value
            else:
                os.environ.pop(name, None)
            result = bench.orders(db, bench.api_key(db))
            failed = [what for what, ok, _ in result.checks if not ok]
            if failed or result.load.problems:
                print(f"round {round_} {setting} {args.switch}: {failed} {result.load.problems}", file=sys.stderr)
                return 1
            figures[setting].append(result.created_per_sec)
            print(f"round {round_}: {setting:>7} {args.switch}: {result.created_per_sec:,.0f} orders/s", flush=True)
    os.environ.pop(name, None)
    for setting, rates in figures.items():
        print(f"{setting:>7} {args.switch}: median {statistics.median(rates):,.0f} orders/s ({', '.join(f'{r:,.0f}' for r in rates)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
