#!/usr/bin/env bash
# not under the sanitizers: the Java and TypeScript examples (their clients
#   are not built with the sanitizers; tenured's side is the other tests')
# The first examples of docs/JAVA.md and docs/JS.md, pasted as written: the
# first ```java block is saved as Example.java and run as a single source
# file with the jar of this build and Debian's SQLite driver, the first
# ```js block as example.js with the package of js/ (built here with its
# locked dependencies, better-sqlite3 among them), each in an empty folder
# against a fresh tenured (TENURE_SERVER, which the examples read).  Each
# must print what the page shows: a lease taken by worker-a and its write
# admitted, worker-b's higher token and write, worker-a no longer held and
# its late write refused by the fence.
. "$(dirname "$0")/lib.sh"
jar=$TN_BIN/../java/tenure.jar
[ -f "$jar" ] || fail "no $jar (the build makes it when a JDK 17 is there: scripts/deps.sh)"
[ -f /usr/share/java/sqlite-jdbc.jar ] || fail "no sqlite-jdbc.jar (scripts/deps.sh installs libxerial-sqlite-jdbc-java)"

# block DOC LANG: the first fenced block of LANG in DOC, and the first
# plain ``` block after it (the output the page shows) in $T/shown.
block() {
    python3 - "$1" "$2" "$T/shown" <<'PY'
import sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
lang, shown = sys.argv[2], sys.argv[3]
blocks, cur = [], None  # (language, lines) of every fenced block in order
for line in lines:
    if cur is None and line.startswith("```"):
        cur = (line[3:].strip(), [])
    elif cur is not None and line == "```":
        blocks.append(cur)
        cur = None
    elif cur is not None:
        cur[1].append(line)
i = next(n for n, b in enumerate(blocks) if b[0] == lang)
out = next(b for b in blocks[i + 1:] if b[0] == "")
print("\n".join(blocks[i][1]))
open(shown, "w").write("\n".join(out[1]) + "\n")
PY
}

# check OUT: the six lines of the example, in order, with increasing tokens.
check() {
    python3 - "$1" "$T/shown" <<'PY' || fail "$(basename "$1"): the output is not what the page shows (above)"
import re, sys
pat = [r"worker-a holds (\S+) with token (\d+)", r"worker-a wrote: true",
       r"worker-b holds (\S+) with token (\d+)", r"worker-b wrote: true",
       r"worker-a still held\? false", r"worker-a wrote: false"]
for f in sys.argv[1:]:
    lines = open(f).read().strip().split("\n")
    ms = [re.fullmatch(p, l) for p, l in zip(pat, lines)]
    if len(lines) != len(pat) or not all(ms):
        sys.exit(f"{f}:\n" + "\n".join(lines))
    if ms[0].group(1) != ms[2].group(1) or int(ms[2].group(2)) <= int(ms[0].group(2)):
        sys.exit(f"{f}: worker-b's grant is not a higher token of the same name:\n" + "\n".join(lines))
PY
}

tn_start_server
export TENURE_SERVER=$URL

mkdir -p "$T/java"
block "$TN_SRC/docs/JAVA.md" java >"$T/java/Example.java"
(cd "$T/java" && java -cp "$jar:/usr/share/java/sqlite-jdbc.jar" Example.java) >"$T/java.out" 2>&1 ||
    fail "Example.java: $(cat "$T/java.out")"
cat "$T/java.out"
check "$T/java.out"
pass "docs/JAVA.md's first example: a lease taken, the paused worker's stale write refused"

"$TN_SRC/scripts/npm-tools.sh" js
(cd "$TN_SRC/js" && rm -rf dist && node_modules/.bin/tsc -p tsconfig.json) || fail "tsc"
mkdir -p "$T/js/node_modules"
block "$TN_SRC/docs/JS.md" js >"$T/js/example.js"
# as "npm install /path/to/tenure/js" would: a link to the package; the
# SQLite driver is the one js/ installed from its lock file
ln -s "$TN_SRC/js" "$T/js/node_modules/tenure-client"
(cd "$T/js" && NODE_PATH=$TN_SRC/js/node_modules node example.js) >"$T/js.out" 2>&1 ||
    fail "example.js: $(cat "$T/js.out")"
cat "$T/js.out"
check "$T/js.out"
pass "docs/JS.md's first example: a lease taken, the paused worker's stale write refused"
