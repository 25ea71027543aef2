#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Check the relative links of README.md and docs/**/*.md.

Every Markdown link or image whose target is not a URL (http:, https:,
mailto:) must name a file or directory that exists in the tree, and a
"#anchor" on a Markdown target must be one of that page's headings (the
GitHub slug: lower case, punctuation dropped, spaces to dashes).  Links
inside code blocks and code spans are not links.  Prints one line per
broken link and exits 1 if there is any; standard library only.
Usage: scripts/check-doc-links.py [ROOT]
"""
import os
import re
import sys

LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^\s*(```|~~~)")
SPAN = re.compile(r"`+[^`]*`+")


def slug(heading):
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def lines_outside_code(path):
    with open(path, encoding="utf-8") as f:
        fenced = False
        for n, line in enumerate(f, 1):
            if FENCE.match(line):
                fenced = not fenced
                continue
            if not fenced and not line.startswith("    "):
                yield n, line


def anchors(path, cache={}):
    if path not in cache:
        seen = {}
        out = set()
        for _, line in lines_outside_code(path):
            m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
            if not m:
                continue
            s = slug(m.group(1))
            k = seen.get(s, 0)
            seen[s] = k + 1
            out.add(s if k == 0 else "%s-%d" % (s, k))
        cache[path] = out
    return cache[path]


def pages(root):
    yield os.path.join(root, "README.md")
    for d, dirs, files in os.walk(os.path.join(root, "docs")):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(".md"):
                yield os.path.join(d, name)


def check(root, page):
    bad = []
    for n, line in lines_outside_code(page):
        for m in LINK.finditer(SPAN.sub("", line)):
            target = m.group(1)
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):
                continue
            file_part, _, anchor = target.partition("#")
            dest = page
            if file_part:
                dest = os.path.normpath(
                    os.path.join(os.path.dirname(page), file_part))
                if not dest.startswith(os.path.abspath(root) + os.sep):
                    bad.append((n, target, "points outside the repository"))
                    continue
                if not os.path.exists(dest):
                    bad.append((n, target, "no such file"))
                    continue
            if anchor and dest.endswith(".md") and os.path.isfile(dest):
                if anchor.lower() not in anchors(dest):
                    bad.append((n, target, "no such heading"))
    return bad


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
    broken = 0
    for page in pages(root):
        if not os.path.isfile(page):
            continue
        for n, target, why in check(root, page):
            print("%s:%d: %s: %s" % (os.path.relpath(page, root), n, target,
                                     why))
            broken += 1
    if broken:
        print("check-doc-links: %d broken link(s)" % broken, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
