#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Check that the code depends downward only: no cycle between files or
modules of src/, no folder reaching a folder above it, and no import cycle
between Python modules.  Run by `make lint`; standard library only.

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
(b) no cycle among modules.  A module is a .c file and the header of its
    stem (lease.c and lease.h); a header without a .c of its own (pg.h,
    api_int.h, a public header) is no module: whoever includes it depends
    on what it includes.  A .c file that defines functions declared by
    its own header, or by a header of no module (internal.h, the insides
    shared by the files of src/publish/), implements it: its include of
    that header (and of what the header brings along) is no dependency.
    A module's header that declares another file's functions ties the two
    together both ways.  So lease.c calling table.c while table.c takes
    its types from lease.h is a cycle, which (a) does not see: lease.h and
    lease.c are two files there;
(c) every edge between two folders (the first folder under src/; a public
    header belongs to the folder that implements it, PUBLIC below) is in
    ALLOWED: a folder may depend on itself and on the folders listed for
    it, nothing else;
(d) no cycle among the Python modules of the tree (python/, tests/,
    compare/, examples/, bench/, scripts/): an edge for every import of a
    module of the tree, at the top of a file or inside a function (an
    import moved into a function still goes both ways).  Relative imports
    resolve in their package; absolute ones beside the importing file, at
    the top of its package and under python/.

Known violations that are being removed live in scripts/include-allow.txt
(one per line, exactly as this script prints them; `#` starts a comment).
A listed violation that no longer occurs is reported as stale (not an
error).  `--no-allow` ignores the file; `--dot` prints the folder graph.
"""
import ast
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

# Where the Python modules of the tree live (d), and the folder holding
# the tenure package.
PY_TOPS = ("python", "tests", "compare", "examples", "bench", "scripts")
PY_PACKAGES = "python"

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
    defines = {f: functions(text[f], True) for f in files if f.endswith(".c")}
    defined = {}  # function name -> the .c file that defines it
    for f in sorted(defines):
        for n in defines[f]:
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
    implements = {f: {h for h in declared if declared[h] & defines[f]}
                  for f in defines}
    return files, edges, implements


def module_of(f, stems):
    """The module of f (its stem), or None for a header with no .c."""
    stem = os.path.splitext(f)[0]
    return stem if stem in stems else None


def module_edges(files, edges, implements):
    """The module graph of (b): stem -> {stem: the file edge behind it}."""
    stems = {os.path.splitext(f)[0] for f in files if f.endswith(".c")}
    out = {m: {} for m in stems}

    def reach(src, f, via, seen):
        a = module_of(src, stems)
        for t in sorted(edges[f]):
            if t in seen or (t in implements.get(src, ()) and
                             module_of(t, stems) in (None, a)):
                continue
            why = edges[f][t] if via is None else "include via " + via
            b = module_of(t, stems)
            if b is None:
                seen.add(t)
                reach(src, t, via or t, seen)
            elif b != a and b not in out[a]:
                out[a][b] = "%s -> %s (%s)" % (src, t, why)

    for f in sorted(files):
        if module_of(f, stems) is not None:
            reach(f, f, None, set())
    return out


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


def violations(files, edges, implements):
    out = []
    for comp in sccs(files, edges):
        out.append(("cycle: " + " ".join(comp),
                    ["    %s -> %s (%s)" % e for e in one_cycle(comp, edges)]))
    mods = module_edges(files, edges, implements)
    for comp in sccs(mods, mods):
        out.append(("module cycle: " + " ".join(comp),
                    ["    " + e[2] for e in one_cycle(comp, mods)]))
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


# ---- Python (d) ----

def py_files(root):
    out = []
    for top in PY_TOPS:
        for d, dirs, names in os.walk(os.path.join(root, top)):
            dirs[:] = sorted(x for x in dirs if not x.startswith((".", "__")))
            out += [os.path.relpath(os.path.join(d, n), root)
                    for n in sorted(names) if n.endswith(".py")]
    return out


def py_package(path, files):
    """The dotted package of path ("tenure" for python/tenure/x.py) and
    the folder it is relative to, or ("", its folder) outside a package."""
    d, parts = os.path.dirname(path), []
    while os.path.join(d, "__init__.py") in files:
        d, tail = os.path.split(d)
        parts.insert(0, tail)
    return ".".join(parts), d


def py_find(name, bases, files):
    """The file of module name (dotted) under one of bases, or None."""
    rel = name.replace(".", "/")
    for b in bases:
        for cand in (rel + ".py", rel + "/__init__.py"):
            p = os.path.normpath(os.path.join(b, cand))
            if p in files:
                return p
    return None


def py_imports(path, files):
    """(module file, line) of every import in path of a module of the tree."""
    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read(), path)
    pkg, top = py_package(path, files)
    bases = [os.path.dirname(path), top, PY_PACKAGES]
    out = []
    for node in ast.walk(tree):
        wanted = []  # dotted names, each with the names it may be a package of
        if isinstance(node, ast.Import):
            wanted = [(a.name, []) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level > 0:
                up = pkg.split(".")[:len(pkg.split(".")) - node.level + 1]
                base = ".".join([p for p in up if p] + ([base] if base else []))
            wanted = [(base, [a.name for a in node.names])]
        for name, subs in wanted:
            found = [py_find(name + "." + n, bases, files) for n in subs]
            found = [f for f in found if f is not None]
            if len(found) < len(subs) or not subs:
                f = py_find(name, bases, files) if name else None
                found += [f] if f is not None else []
            out += [(f, node.lineno) for f in found if f != path]
    return out


def py_graph(root):
    cwd = os.getcwd()
    os.chdir(root)
    try:
        files = set(py_files("."))
        files = {os.path.normpath(f) for f in files}
        edges = {f: {} for f in files}
        for f in sorted(files):
            for t, line in py_imports(f, files):
                edges[f].setdefault(t, "imports it at line %d" % line)
    finally:
        os.chdir(cwd)
    return files, edges


def py_violations(root):
    files, edges = py_graph(root)
    return [("import cycle: " + " ".join(comp),
             ["    %s -> %s (%s)" % e for e in one_cycle(comp, edges)])
            for comp in sccs(files, edges)]


def load_allow(root):
    path = os.path.join(root, ALLOW_FILE)
    if not os.path.exists(path):
        return set()
    with open(path, encoding="utf-8") as fh:
        return {line.split("#", 1)[0].strip() for line in fh} - {""}


def main(argv):
    root = os.path.normpath(os.path.join(os.path.dirname(__file__), ".."))
    check_table()
    files, edges, implements = build(root)
    if "--dot" in argv:
        pairs = {(folder_of(f), folder_of(t)) for f in files for t in edges[f]}
        print("digraph layers {")
        for a, b in sorted(pairs):
            if a != b:
                print('  "%s" -> "%s";' % (a, b))
        print("}")
        return 0
    allow = set() if "--no-allow" in argv else load_allow(root)
    found = violations(files, edges, implements) + py_violations(root)
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
