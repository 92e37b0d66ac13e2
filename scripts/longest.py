#!/usr/bin/env python3
"""Lists the longest files and functions of tk's C++ sources (STYLE.md: files
under ~600 lines; issue 22: no function over 150 lines outside generated
code), longest first.

    scripts/longest.py [--top N] [--files-over L] [--functions-over L]

With --files-over / --functions-over it lists only those past the limit and
exits 1 when there are any. Functions are found the way a reader finds
them: a line that opens a definition at namespace or class level (ends in
'{', has a '(' and is not a control statement), to its matching '}'.
Comments and string literals are blanked first, so braces in them do not
count.
"""
import argparse
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CODE = ("syntax", "ir", "parser", "lang", "lower", "backend", "driver", "tune", "runtime", "tools", "include", "examples", "bench")
CONTROL = re.compile(r"^\s*(if|for|while|switch|do|else|try|catch|return|namespace|struct|class|enum|union)\b")


def blank(text):
    """Comments, string and char literals replaced by spaces; newlines kept."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith('R"', i):
            m = re.match(r'R"([^(]*)\(', text[i:])
            end = text.find(")" + (m.group(1) if m else "") + '"', i)
            j = n if end < 0 else end + len(m.group(1) if m else "") + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(" " * (min(j + 1, n) - i))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(path):
    lines = blank(open(path, encoding="utf-8", errors="replace").read()).split("\n")
    found, depth, start, name, body_depth = [], 0, None, None, None
    signature = ""  # a declaration so far, across lines (a signature may wrap)
    for no, line in enumerate(lines, 1):
        stripped = line.strip()
        if start is None and depth <= 2:
            signature = (signature + " " + stripped).strip()
            head = signature.split("(")[0]
            if stripped.endswith("{") and "(" in signature and not CONTROL.match(signature) and "=" not in head:
                start, body_depth = no - signature.count("\n"), depth
                name = head.split()[-1] if head.split() else "?"
            if stripped.endswith((";", "{", "}")) or stripped.startswith("#") or not stripped:
                signature = ""
        depth += line.count("{") - line.count("}")
        if start is not None and depth <= body_depth:
            found.append((no - start + 1, name, start))
            start = None
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--files-over", type=int)
    ap.add_argument("--functions-over", type=int)
    a = ap.parse_args()
    tracked = subprocess.run(["git", "-C", ROOT, "ls-files", "--", *CODE], capture_output=True, text=True).stdout.split()
    sources = [f for f in tracked if f.endswith((".cpp", ".h", ".c"))]
    files = sorted(((sum(1 for _ in open(os.path.join(ROOT, f), errors="replace")), f) for f in sources), reverse=True)
    funcs = sorted(((n, f"{f}:{line} {name}") for f in sources for n, name, line in functions(os.path.join(ROOT, f))),
                   reverse=True)
    over = False
    for title, rows, limit in (("files", files, a.files_over), ("functions", funcs, a.functions_over)):
        if limit is not None:
            rows = [r for r in rows if r[0] > limit]
            over |= bool(rows)
        elif a.files_over is not None or a.functions_over is not None:
            continue
        else:
            rows = rows[:a.top]
        print(f"longest {title}" + (f" (over {limit} lines)" if limit is not None else "") + ":")
        for n, what in rows:
            print(f"  {n:5d}  {what}")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
