#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Check that src/ depends downward only: no cycle between files, no folder
reaching a folder above it.  Run by `make lint`; standard library only.

The graph
---------
Nodes are the files of src/ and include/tenure/ (.c and .h).  Edges:

* include: X -> H for each `#include "H"` or `#include <tenure/H>` that
  resolves to a file of the tree (first beside X, then under src/, then
  under include/);
* use: A.c -> B.c when A.c calls or names a function that B.c defines
  (not static) and that a header A.c includes (directly or through other
  headers) declares; a macro of a header counts as what it expands to.  A header shared by several .c files (embedded.h,
  api_int.h) would otherwise hide that they call each other: a cycle of
  .c files through one header is still a cycle.

Checks
------
(a) no cycle among files: every strongly connected component of more than
    one file is reported with one cycle through it;
(b) every edge between two folders (the first folder under src/; a public
    header belongs to the folder that implements it, PUBLIC below) is in
    ALLOWED: a folder may depend on itself and on the folders listed for
    it, nothing else.

Known violations that are being removed live in scripts/include-allow.txt
(one per line, exactly as this script prints them; `#` starts a comment).
A listed violation that no longer occurs is reported as stale (not an
error).  `--no-allow` ignores the file; `--dot` prints the folder graph.
"""
import fnmatch
import os
import re
import sys

# The layering, as data: folder -> the folders it may include or call.
# Read downward: common is the leaf; lease sits on common; store on lease;
# api on store and http; server wires everything.  publish reads the
# store's event log.  client, fence, kafka, check and cli are programs or
# libraries of their own and never reach into server, api, http or store.
ALLOWED = {
    "common": set(),
    "ui": set(),  # the console's assets, embedded as generated C arrays
    "lease": {"common"},
    "store": {"common", "lease"},
    "publish": {"common", "lease", "store"},
    "http": {"common"},
    "fence": {"common"},
    "api": {"common", "lease", "store", "http", "fence", "ui"},
    "server": {"common", "lease", "store", "http", "api", "publish",
               "fence"},
    "client": {"common"},
    "kafka": {"common", "fence"},
    "check": {"common", "ui"},
    "cli": {"common", "client", "check"},
    "migrate": {"common", "lease", "store"},  # embedded -> PostgreSQL copy
    "lib": {"common", "client", "fence"},
}

# Public headers belong to the folder that implements them, by name (the
# first pattern that matches), so a new fence backend's fence_NAME.h needs
# no line here.
PUBLIC = [
    ("export.h", "common"),
    ("err.h", "common"),
    ("client.h", "client"),
    ("events_*.h", "client"),
    ("session.h", "client"),
    ("share.h", "client"),
    ("fence.h", "fence"),
    ("fence_*.h", "fence"),
]

ALLOW_FILE = "scripts/include-allow.txt"

INCLUDE_RE = re.compile(r'^\s*#\s*include\s*(?:"([^"]+)"|<(tenure/[^>]+)>)')
DEFINE_RE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_][A-Za-z0-9_]*)"
                       r"((?:[^\n]*\\\n)*[^\n]*)", re.M)
IDENT_RE = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\b")
# A prototype or definition starts at column 0: "type name(" or
# "type *name(" (clang-format puts both there).
FUNC_RE = re.compile(r"^(?!static\b|typedef\b|#|\s|/|\*|}|{)"
                     r"[^=;()]*?\b([A-Za-z_][A-Za-z0-9_]*)\s*\(")


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"),
                  text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    return re.sub(r'"(?:\\.|[^"\\\n])*"', '""', text)


def folder_of(path):
    if path.startswith("include/tenure/"):
        base = path[len("include/tenure/"):]
        for pattern, folder in PUBLIC:
            if fnmatch.fnmatchcase(base, pattern):
                return folder
    parts = path.split("/")
    if parts[0] == "src" and len(parts) > 2:
        return parts[1]
    return parts[0]


def list_files(root):
    out = []
    for top in ("src", "include/tenure"):
        for d, _, names in os.walk(os.path.join(root, top)):
            for n in names:
                if n.endswith((".c", ".h")):
                    out.append(os.path.relpath(os.path.join(d, n), root))
    return sorted(out)


def resolve(root, src, name, files):
    for base in (os.path.dirname(src), "src", "include"):
        p = os.path.normpath(os.path.join(base, name))
        if p in files:
            return p
    return None


def functions(text, want_definitions):
    """Names declared (prototypes) or defined (bodies) at column 0."""
    names = set()
    lines = text.split("\n")
    for i, line in enumerate(lines):
        m = FUNC_RE.match(line)
        if not m:
            continue
        j, tail = i, line
        while ")" not in tail or not tail.rstrip().endswith((")", ";", "{")):
            j += 1
            if j >= len(lines):
                break
            tail = lines[j]
        nxt = lines[j + 1] if j + 1 < len(lines) else ""
        is_def = tail.rstrip().endswith(")") and nxt.startswith("{")
        if is_def == want_definitions:
            names.add(m.group(1))
    return names


def build(root):
    files = set(list_files(root))
    text, includes = {}, {}
    for f in files:
        with open(os.path.join(root, f), encoding="utf-8") as fh:
            raw = fh.read()
        includes[f] = set()
        for line in raw.split("\n"):
            m = INCLUDE_RE.match(line)
            if m:
                r = resolve(root, f, m.group(1) or m.group(2), files)
                if r is not None and r != f:
                    includes[f].add(r)
        text[f] = strip_comments(raw)
    defined = {}  # function name -> the .c file that defines it
    for f in files:
        if f.endswith(".c"):
            for n in functions(text[f], True):
                defined.setdefault(n, f)
    declared = {f: functions(text[f], False) for f in files
                if f.endswith(".h")}
    macros = {}  # macro name -> identifiers of its body (headers only)
    for f in files:
        if f.endswith(".h"):
            for m in DEFINE_RE.finditer(text[f]):
                macros[m.group(1)] = set(IDENT_RE.findall(m.group(2)))
    edges = {f: {t: "include" for t in includes[f]} for f in files}
    for f in files:
        if not f.endswith(".c"):
            continue
        seen, todo, decl = set(), list(includes[f]), set()
        while todo:
            h = todo.pop()
            if h in seen:
                continue
            seen.add(h)
            decl |= declared.get(h, set())
            todo.extend(includes.get(h, ()))
        used = set(IDENT_RE.findall(text[f]))
        todo = [n for n in used if n in macros]
        while todo:  # what the macros it uses expand to
            for n in macros[todo.pop()] - used:
                used.add(n)
                if n in macros:
                    todo.append(n)
        used &= decl
        for n in used:
            g = defined.get(n)
            if g is not None and g != f and g not in edges[f]:
                edges[f][g] = "calls " + n
    return files, edges


def sccs(nodes, edges):
    """Tarjan's strongly connected components, iteratively."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for start in sorted(nodes):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            pushed = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                    pushed = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if pushed:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def one_cycle(comp, edges):
    """A shortest cycle through the first file of comp (BFS)."""
    members, start = set(comp), comp[0]
    prev, todo = {start: None}, [start]
    while todo:
        nxt = []
        for v in todo:
            for w in sorted(edges[v]):
                if w == start:
                    path = [v]
                    while prev[path[-1]] is not None:
                        path.append(prev[path[-1]])
                    path.reverse()
                    return [(a, b, edges[a][b]) for a, b in
                            zip(path, path[1:] + [start])]
                if w in members and w not in prev:
                    prev[w] = v
                    nxt.append(w)
        todo = nxt
    return []


def check_table():
    for f, deps in ALLOWED.items():
        for d in deps:
            if d not in ALLOWED:
                sys.exit("check-includes: ALLOWED[%s] names unknown %s" % (f, d))
    state = {}

    def visit(f, path):
        if state.get(f) == 1:
            sys.exit("check-includes: ALLOWED has a cycle: " +
                     " -> ".join(path + [f]))
        if state.get(f) == 2:
            return
        state[f] = 1
        for d in sorted(ALLOWED[f]):
            visit(d, path + [f])
        state[f] = 2

    for f in sorted(ALLOWED):
        visit(f, [])


def violations(files, edges):
    out = []
    for comp in sccs(files, edges):
        out.append(("cycle: " + " ".join(comp),
                    ["    %s -> %s (%s)" % e for e in one_cycle(comp, edges)]))
    for f in sorted(files):
        for t in sorted(edges[f]):
            a, b = folder_of(f), folder_of(t)
            if a == b:
                continue
            if a not in ALLOWED:
                out.append(("folder: %s is not in the table" % a, []))
            elif b not in ALLOWED[a]:
                out.append(("layer: %s -> %s" % (f, t),
                            ["    %s may not reach %s (%s)" %
                             (a, b, edges[f][t])]))
    return out


def load_allow(root):
    path = os.path.join(root, ALLOW_FILE)
    if not os.path.exists(path):
        return set()
    with open(path, encoding="utf-8") as fh:
        return {line.split("#", 1)[0].strip() for line in fh} - {""}


def main(argv):
    root = os.path.normpath(os.path.join(os.path.dirname(__file__), ".."))
    check_table()
    files, edges = build(root)
    if "--dot" in argv:
        pairs = {(folder_of(f), folder_of(t)) for f in files for t in edges[f]}
        print("digraph layers {")
        for a, b in sorted(pairs):
            if a != b:
                print('  "%s" -> "%s";' % (a, b))
        print("}")
        return 0
    allow = set() if "--no-allow" in argv else load_allow(root)
    found = violations(files, edges)
    bad = [v for v in found if v[0] not in allow]
    known = [v for v in found if v[0] in allow]
    for head, detail in known:
        print("allowed (%s): %s" % (ALLOW_FILE, head))
    for stale in sorted(allow - {v[0] for v in found}):
        print("stale entry in %s (no longer occurs): %s" % (ALLOW_FILE, stale))
    for head, detail in bad:
        print(head)
        for d in detail:
            print(d)
    if bad:
        print("check-includes: %d violation(s); dependencies must go downward"
              " (see the table at the top of scripts/check-includes.py)"
              % len(bad))
        return 1
    print("check-includes: %d files, no new cycle or upward include (%d"
          " allowed for now)" % (len(files), len(known)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
