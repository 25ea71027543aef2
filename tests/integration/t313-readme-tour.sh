#!/usr/bin/env bash
# The README's tour, pasted as written: the sh blocks of its "A 60-second
# tour" section are taken from README.md literally and run, in one bash,
# against a fresh tenured.  The only things set from outside are the ones
# the README itself names: TENURE_SERVER (the tour defaults it to
# localhost:7300; here it is this test's server) and the PATH, which gets
# the CLI of this build (the tour's own PATH entry, build/release/bin under
# the directory it runs in, does not exist in the temp dir it runs in).
# Every answer shown in the tour (the "# …" lines right under a command)
# must appear in the output with the same shape: JSON with the same keys,
# the same strings (one shown with "…", like the secret "9f…", stands for
# any string), the same tokens, floors and TTLs, and numbers where numbers
# are shown; text lines the same word for word (a word with "…" stands for
# any word).
. "$(dirname "$0")/lib.sh"
tn_start_server

python3 - "$TN_SRC/README.md" "$T/tour.sh" "$T/expected.txt" <<'PY'
import sys
readme, script, expected = sys.argv[1:]
text = open(readme, encoding="utf-8").read()
start = text.index("## A 60-second tour")
end = text.find("\n## ", start + 1)
section = text[start:end if end >= 0 else len(text)]
blocks, cur = [], None
for line in section.split("\n"):
    if cur is None and line.strip() == "```sh":
        cur = []
    elif cur is not None and line.strip() == "```":
        blocks.append(cur)
        cur = None
    elif cur is not None:
        cur.append(line)
if len(blocks) < 2:
    sys.exit("README tour: expected at least two sh blocks, found %d" % len(blocks))
exp = []
for b in blocks:
    after_code = False
    for line in b:
        s = line.strip()
        if s.startswith("# ") and after_code:
            body = s[2:].strip()
            if not body.endswith(":"):  # "the watch printed:" is a caption
                exp.append(body)
            continue
        after_code = bool(s) and not s.startswith("#")
open(script, "w").write("\n".join("\n".join(b) for b in blocks) + "\n")
open(expected, "w").write("\n".join(exp) + "\n")
PY
n=$(wc -l <"$T/expected.txt")
[ "$n" -ge 12 ] || fail "only $n expected answers found in the README tour"

mkdir -p "$T/cwd"
(cd "$T/cwd" && TENURE_SERVER="127.0.0.1:$PORT" PATH="$TN_BIN:$PATH" \
    timeout 120 bash "$T/tour.sh") >"$T/tour.out" 2>"$T/tour.err" ||
    fail "the tour exited $?: $(cat "$T/tour.out" "$T/tour.err")"

python3 - "$T/expected.txt" "$T/tour.out" <<'PY' || fail "the tour's answers differ from the README: $(cat "$T/tour.out")"
import json, re, sys
expected = [l for l in open(sys.argv[1]).read().split("\n") if l]
out = [l.strip() for l in open(sys.argv[2]).read().split("\n") if l.strip()]
EXACT = {"token", "floor", "ttl_ms", "live_token"}

def same(e, o, key=None):
    if isinstance(e, dict):
        return isinstance(o, dict) and set(e) == set(o) and all(same(e[k], o[k], k) for k in e)
    if isinstance(e, list):
        return isinstance(o, list) and len(e) == len(o) and all(same(a, b, key) for a, b in zip(e, o))
    if isinstance(e, str):
        if "…" in e:  # an example ("9f…"): any string
            return isinstance(o, str)
        return e == o
    if isinstance(e, bool) or e is None:
        return e is o
    if isinstance(e, int):
        if isinstance(o, bool) or not isinstance(o, int):
            return False
        return e == o if key in EXACT else True
    return e == o

def matches(e, line):
    if e.startswith("{"):
        try:
            return same(json.loads(e), json.loads(line))
        except ValueError:
            return False
    pat = r"\s+".join(r"\S*" if "…" in w else re.escape(w) for w in e.split())
    return re.fullmatch(pat, " ".join(line.split())) is not None

bad = 0
used = set()
for e in expected:
    hit = next((i for i, l in enumerate(out) if i not in used and matches(e, l)), None)
    if hit is None:
        print("README shows an answer the tour did not give:\n  %s" % e, file=sys.stderr)
        bad += 1
    else:
        used.add(hit)
sys.exit(1 if bad else 0)
PY
pass "the README tour runs as written and answers what it shows ($n answers)"
