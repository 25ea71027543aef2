#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Check that docs/CONTRIBUTING.md quotes the recipes as they are.

A fenced code block right after a line `<!-- quote: PATH -->` must appear
in the file PATH (relative to the repository) as consecutive lines; a
line `...` in the block (or `/* ... */`, `# ...`) stands for any lines
left out.  When PATH is a .patch, the block is matched against the lines
the patch adds, without their `+`.  Every recipe directory of
tests/recipes/ must be quoted at least once.  Exits 1 naming each quote
that no longer matches.  Usage: quotes.py [ROOT]
"""
import os
import re
import sys

MARK = re.compile(r"^<!-- quote: (\S+) -->\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")
ELISION = {"...", "/* ... */", "# ...", "// ..."}


def source_lines(path):
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    if path.endswith(".patch"):
        return [l[1:] for l in lines
                if l.startswith("+") and not l.startswith("+++ ")]
    return lines


def find(hay, needle, start):
    for i in range(start, len(hay) - len(needle) + 1):
        if hay[i:i + len(needle)] == needle:
            return i + len(needle)
    return -1


def matches(block, lines):
    parts, cur = [], []
    for line in block:
        if line.strip() in ELISION:
            parts.append(cur)
            cur = []
        else:
            cur.append(line)
    parts.append(cur)
    at = 0
    for part in parts:
        if not part:
            continue
        at = find(lines, part, at)
        if at < 0:
            return False
    return True


def quotes(doc):
    with open(doc, encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        m = MARK.match(lines[i])
        if not m:
            i += 1
            continue
        j = i + 1
        if j >= len(lines) or not FENCE.match(lines[j]):
            yield i + 1, m.group(1), None
            i = j
            continue
        k = j + 1
        while k < len(lines) and not FENCE.match(lines[k]):
            k += 1
        yield i + 1, m.group(1), lines[j + 1:k]
        i = k + 1


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
    doc = os.path.join(root, "docs", "CONTRIBUTING.md")
    bad = 0
    quoted = set()
    for n, path, block in quotes(doc):
        full = os.path.join(root, path)
        parts = path.split("/")
        if parts[:2] == ["tests", "recipes"] and len(parts) > 2:
            quoted.add(parts[2])
        if block is None:
            print("docs/CONTRIBUTING.md:%d: no code block after the quote "
                  "mark" % n)
            bad += 1
        elif not os.path.isfile(full):
            print("docs/CONTRIBUTING.md:%d: %s: no such file" % (n, path))
            bad += 1
        elif not matches(block, source_lines(full)):
            print("docs/CONTRIBUTING.md:%d: the block is not in %s" %
                  (n, path))
            bad += 1
    recipes = os.path.join(root, "tests", "recipes")
    for name in sorted(os.listdir(recipes)):
        if os.path.isdir(os.path.join(recipes, name)) and name not in quoted:
            print("docs/CONTRIBUTING.md: the recipe %s is never quoted" % name)
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
