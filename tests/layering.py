#!/usr/bin/env python3
"""ctest `layering`: every #include "dir/File.h" in the compiler's and the
runtime's sources names a header of the including target's own library or
of one it links (cmake/Layering.cmake writes the targets, their sources and
their transitive tk links). A header belongs to the target that compiles
its .cpp, else to the targets with sources in its folder. Public headers
(tk/...) and generated ones are the linker's business and are not checked.
Headers are checked against what every target owning them links, and the
public headers (include/tk) may include nothing but each other.

    tests/layering.py SOURCE_DIR LAYERING_FILE
"""
import os
import re
import sys

root, layering = sys.argv[1], sys.argv[2]
targets = {}  # name -> (deps, files)
for line in open(layering):
    name, deps, files = line.rstrip("\n").split("|")
    targets[name] = (set(filter(None, deps.split(","))), [f for f in files.split(",") if f])

owner_of_file = {}
owners_of_dir = {}
for name, (_, files) in targets.items():
    for f in files:
        owner_of_file[f] = name
        owners_of_dir.setdefault(os.path.dirname(f), set()).add(name)


def owners(header):
    stem, _ = os.path.splitext(header)
    for ext in (".cpp", ".h", ".c"):
        if stem + ext in owner_of_file:
            return {owner_of_file[stem + ext]}
    return owners_of_dir.get(os.path.dirname(header), set())


include = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
errors = []
checked = 0


def includes(path):
    return [m.group(1) for m in include.finditer(open(path, encoding="utf-8", errors="replace").read())]


def check(f, name, allowed):
    global checked
    path = os.path.join(root, f)
    if not os.path.isfile(path):
        return
    for header in includes(path):
        if "/" not in header or header.startswith("tk/") or not os.path.isfile(os.path.join(root, header)):
            continue  # same folder, public API, generated
        checked += 1
        found = owners(header)
        if found and not found & allowed:
            errors.append(f"{f}: includes {header} (of {', '.join(sorted(found))}), "
                          f"but {name} links none of them")


for name, (deps, files) in sorted(targets.items()):
    for f in files:
        check(f, name, deps | {name})

# Headers too: a header may include what every target that owns it links.
dirs = {os.path.dirname(f) for _, files in targets.values() for f in files}
for d in sorted(dirs):
    for h in sorted(os.listdir(os.path.join(root, d))):
        f = os.path.join(d, h)
        if not h.endswith(".h") or f in owner_of_file:
            continue
        found = owners(f)
        if found:
            allowed = set.intersection(*(targets[o][0] | {o} for o in found))
            check(f, " and ".join(sorted(found)), allowed)

# The public API (include/tk) stands alone: it includes only itself and the
# standard library, never an internal header.
public = os.path.join(root, "include", "tk")
for h in sorted(os.listdir(public)):
    for header in includes(os.path.join(public, h)):
        checked += 1
        if not header.startswith("tk/"):
            errors.append(f"include/tk/{h}: includes {header}, an internal header, from the public API")
for e in errors:
    print("layering: " + e)
print(f"layering: {checked} includes in {len(targets)} targets checked, {len(errors)} out of layer")
sys.exit(1 if errors or checked == 0 else 0)
