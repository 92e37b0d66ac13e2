#!/usr/bin/env python3
"""After `make test`: why the skipped tests skipped, one line per reason.

ctest lists skipped tests by name only; GoogleTest writes each GTEST_SKIP
reason on the line after "Skipped" in the test's output, which ctest keeps
in Testing/Temporary/LastTest.log. Reads that log, prints nothing when no
test skipped, and always exits 0 (a report, not a check)."""
import collections
import pathlib
import re
import sys


def main() -> int:
    log = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "build") / "Testing/Temporary/LastTest.log"
    if not log.is_file():
        return 0
    reasons = collections.Counter()
    lines = log.read_text(errors="replace").splitlines()
    for i, line in enumerate(lines):
        if re.search(r": Skipped$", line) and i + 1 < len(lines):
            reasons[lines[i + 1].strip() or "(no reason given)"] += 1
    if reasons:
        total = sum(reasons.values())
        print(f"{total} test{'s' if total != 1 else ''} skipped:")
        for reason, n in reasons.most_common():
            print(f"  {n:4d}  {reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
