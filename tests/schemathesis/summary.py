"""Counts the test cases of schemathesis runs per phase, from their NDJSON event reports, and
fails when a phase that was asked for executed no case: a run that tested nothing must not
pass (a phase can end at once, for instance when every operation it would call is skipped).

Usage: python summary.py REPORT.ndjson:PHASE[,PHASE...] [REPORT.ndjson:PHASE...]

Each argument is a report and the phases its run was given. A case counts as executed when
a response to it was recorded (an interaction), not merely generated.
"""

import collections
import json
import sys


def executed_cases(path):
    """Per phase, the ids of the cases a response was recorded for, and the scenarios."""
    cases = collections.defaultdict(set)
    scenarios = collections.Counter()
    with open(path, encoding="utf-8") as events:
        for line in events:
            finished = json.loads(line).get("ScenarioFinished")
            if not finished:
                continue
            recorder = finished.get("recorder") or {}
            interactions = recorder.get("interactions") or {}
            sent = [case for case in recorder.get("cases") or {} if case in interactions]
            cases[finished["phase"]].update(sent)
            if sent:
                scenarios[finished["phase"]] += 1
    return cases, scenarios


def main(arguments):
    failed = []
    for argument in arguments:
        path, _, phases = argument.rpartition(":")
        try:
            cases, scenarios = executed_cases(path)
        except FileNotFoundError:
            print(f"schemathesis: no report {path}: the run of {phases} did not start", file=sys.stderr)
            failed += phases.split(",")
            continue
        counts = {phase: len(cases.get(phase, ())) for phase in phases.split(",")}
        print(
            "schemathesis test cases executed: "
            + ", ".join(f"{phase} {n} (in {scenarios[phase]} scenarios)" for phase, n in counts.items())
        )
        failed += [phase for phase, n in counts.items() if n == 0]
    if failed:
        print(f"schemathesis: no test case was executed in the {', '.join(failed)} phase(s)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
