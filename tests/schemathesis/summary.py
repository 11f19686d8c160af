"""Counts the test cases of a schemathesis run per phase, from its NDJSON event report.

Usage: python summary.py events.ndjson
"""

import collections
import json
import sys

PHASES = ("examples", "coverage", "fuzzing", "stateful")


def main(path):
    cases = collections.defaultdict(set)
    with open(path, encoding="utf-8") as events:
        for line in events:
            event = json.loads(line)
            finished = event.get("ScenarioFinished")
            if finished:
                recorder = finished.get("recorder") or {}
                cases[finished["phase"]].update(recorder.get("cases", {}))
    counts = {phase: len(cases.get(phase, ())) for phase in PHASES}
    total = sum(len(ids) for ids in cases.values())
    print("schemathesis test cases: " + ", ".join(f"{p} {n}" for p, n in counts.items()) + f", total {total}")


if __name__ == "__main__":
    main(sys.argv[1])
