"""CSV in and out of a shop, measured in the same run as the rest, on SQLite and
on PostgreSQL, at 100,000 and at 1,000,000 seeded pets:

- `GET /exports/pets.csv` read to the end: its time, size and rows, and the server's peak
  resident memory afterwards (the export is streamed a page at a time: a million pets must
  not sit in memory);
- `POST /imports/pets` of a file of 100,000 new pets (the most a file may hold: name,
  category, price, barcode, status and stock; five new categories), for real, into the
  seeded shop: the target is under 10 s; then the shop is counted.

A shop is copied (SQLite) or made from a template (PostgreSQL) for the import, so the other
figures' databases stay as seeded.
"""

from __future__ import annotations

import http.client
import json
import time

import run as bench

IMPORT_LINES = 100_000
IMPORT_S = 10.0


def import_file(lines: int, tag: str) -> bytes:
    """A file of `lines` new pets, each with its own barcode (checked against the shop)."""
    out = ["name,category,price,sku,status,stock"]
    for i in range(lines):
        out.append(f"Imported {tag} {i},Import {'ABCDE'[i % 5]},{(i % 50000) + 1}.{i % 100:02d},"
                   f"{tag}-{i:07d},{('available', 'pending')[i % 10 == 0]},{i % 20 or ''}")
    return ("\r\n".join(out) + "\r\n").encode()


def export(server: bench.Server, path: str) -> dict:
    """Reads an export to its end; its time, bytes and rows (the header not counted)."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=600)
    try:
        started = time.monotonic()
        conn.request("GET", path, headers={"Authorization": f"Bearer {server.key}"})
        response = conn.getresponse()
        if response.status != 200:
            raise bench.BenchError(f"GET {path} answered {response.status}: {response.read()[:300]!r}")
        size = lines = 0
        while chunk := response.read(1 << 20):
            size += len(chunk)
            lines += chunk.count(b"\r\n")
        return {"s": time.monotonic() - started, "bytes": size, "rows": lines - 1}
    finally:
        conn.close()


def import_pets(server: bench.Server, body: bytes) -> dict:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=600)
    try:
        started = time.monotonic()
        conn.request("POST", "/imports/pets?createCategories=true", body=body,
                     headers={"Authorization": f"Bearer {server.key}", "Content-Type": "text/csv"})
        response = conn.getresponse()
        answer = response.read()
        took = time.monotonic() - started
        if response.status != 201:
            raise bench.BenchError(f"POST /imports/pets answered {response.status}: {answer[:300]!r}")
        return {"s": took, "pets": int(json.loads(answer)["pets"])}
    finally:
        conn.close()


def measure(r: "bench.Results", engine: str, pets: int, serve, imported) -> None:
    """The export and the import on one seeded shop: `serve(name, for_import)` gives the
    server (on the seeded shop, or on a copy for the import), `imported()` counts the
    copy's pets afterwards."""
    name = f"csv {engine} {pets}"

    def run() -> dict:
        figures = {}
        with serve(f"{engine}-export-{pets}", False) as s:
            figures["export"] = export(s, "/exports/pets.csv")
            figures["rss_kib"] = bench.peak_rss_kib(s.proc, s.log)
        if figures["export"]["rows"] != pets:
            raise bench.BenchError(f"pets.csv of {pets:,} pets had {figures['export']['rows']:,} rows")
        body = import_file(IMPORT_LINES, f"{engine[:2]}{pets}")
        with serve(f"{engine}-import-{pets}", True) as s:
            figures["import"] = import_pets(s, body)
        figures["import"]["bytes"] = len(body)
        figures["after"] = imported()
        if figures["after"] != pets + IMPORT_LINES:
            raise bench.BenchError(f"{figures['after']:,} pets after importing {IMPORT_LINES:,} into {pets:,}")
        return figures

    r.attempt(name, run)


def rows(r: "bench.Results", j: "bench.Judge", engine: str) -> list:
    out = []
    for pets in (bench.SMALL, bench.LARGE):
        name = f"csv {engine} {pets}"
        f = r.figures.get(name)
        if f is None:
            out.append([f"CSV at {pets:,} pets", j.missing(name, f"{engine} CSV at {pets:,} pets"), "", "**NO**"])
            continue
        e, i = f["export"], f["import"]
        out.append([f"GET /exports/pets.csv, {pets:,} pets",
                    f"{e['s']:.2f} s, {e['bytes'] / bench.MB:.1f} MB, server peak RSS {bench.mb(f['rss_kib'])}",
                    "streamed (the figure)", "—"])
        out.append([f"POST /imports/pets, {IMPORT_LINES:,} lines ({i['bytes'] / bench.MB:.1f} MB) into {pets:,} pets",
                    f"{i['s']:.2f} s", f"< {IMPORT_S:g} s",
                    j(f"{engine} import of {IMPORT_LINES:,} lines into {pets:,} pets", i["s"] < IMPORT_S)])
    return out


def section(r: "bench.Results", j: "bench.Judge") -> list:
    lines = ["## CSV export and import (tests/bench/csv_io.py)", "",
             "The whole pets export read to its end over loopback, then a file of 100,000 new pets "
             "(name, category, price, barcode, status, stock; five new categories) imported for real, all or "
             "nothing, into a copy of the same seeded shop; the shop counted afterwards.", ""]
    for engine in ("sqlite", "postgres"):
        if engine == "postgres" and "pg server" in r.skipped:
            lines += ["### PostgreSQL", "", f"Skipped ({r.skipped['pg server']}).", ""]
            continue
        lines += [f"### {'SQLite' if engine == 'sqlite' else 'PostgreSQL'}", ""]
        lines += bench.table(["figure", "value", "target", "met"], rows(r, j, engine)) + [""]
    return lines
