#!/usr/bin/python3
"""Prints how many tests the last ctest run skipped, and why (from its LastTest.log).

Usage: scripts/summarize_skips.py BUILD_DIR

A GoogleTest skip prints "<file>:<line>: Skipped" and its message before "[  SKIPPED ] <name>";
pytest (run with -rs) prints "SKIPPED [n] <file>:<line>: <reason>". Both are counted by reason.
"""
import collections
import pathlib
import re
import sys


def main():
    build = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "build")
    log = build / "Testing" / "Temporary" / "LastTest.log"
    if not log.exists():
        print(f"skipped tests: no {log} to read")
        return 0
    text = log.read_text(errors="replace")
    reasons = collections.Counter()
    # GoogleTest: the message lines between "Skipped" and "[  SKIPPED ]".
    for m in re.finditer(r": Skipped\n(.*?)\n\[  SKIPPED \] (\S+)", text, re.S):
        reasons[m.group(1).strip().splitlines()[0] if m.group(1).strip() else "(no reason given)"] += 1
    # pytest -rs summary lines.
    for m in re.finditer(r"^SKIPPED \[(\d+)\] [^:]+:\d+: (.*)$", text, re.M):
        reasons[m.group(2).strip()] += int(m.group(1))
    total = sum(reasons.values())
    print(f"skipped tests: {total}")
    for reason, n in reasons.most_common():
        print(f"  {n:4d}  {reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
