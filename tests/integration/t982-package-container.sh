#!/usr/bin/env bash
# The container recipe, contrib/container/ (docs/OPERATIONS.md, "Container").
# Always, without a container engine:
#  - the Dockerfile: FROM debian:12-slim, every COPY source is a package
#    `make deb` builds (a Package of debian/control) and is let into the
#    build context by Dockerfile.dockerignore, the user is the
#    package's "tenure" (made by its postinst), the first-install auth file
#    is removed, a HEALTHCHECK on /readyz, EXPOSE matches TENURE_LISTEN;
#  - compose.yaml parses (python3-yaml) and has the services, the port and
#    the store the docs name; its secrets live in a git-ignored folder;
#  - the image's environment, given to the dev build's tenured: with no
#    auth file at TENURE_AUTH_FILE it refuses to start; with one (and the
#    PostgreSQL store of scripts/with-pg.sh when there is one, as compose
#    runs it) it becomes ready, serves an acquire to a bearer token and
#    /ui, and refuses a request without the token.
# Where `docker info` succeeds (a container engine): builds the image,
# starts the compose file, acquires a lease through it and fetches /ui.
# Otherwise that part is skipped with a message (the rest has run).
. "$(dirname "$0")/lib.sh"
C=$TN_SRC/contrib/container
PY=${TN_PYTHON3:-/usr/bin/python3}
"$PY" -c 'import yaml' 2>/dev/null || fail "python3-yaml is missing (scripts/deps.sh)"
[ -f "$C/Dockerfile" ] && [ -f "$C/compose.yaml" ] || fail "no contrib/container/{Dockerfile,compose.yaml}"

# --- static checks ---
"$PY" - "$TN_SRC" >"$T/env" <<'PY' || fail "the recipe is inconsistent (above)"
import re, sys, pathlib, yaml
src = pathlib.Path(sys.argv[1]); c = src / "contrib/container"
def bad(msg):
    print(msg, file=sys.stderr); sys.exit(1)
text = re.sub(r"\\\n", " ", (c / "Dockerfile").read_text())
lines = [l.strip() for l in text.splitlines() if l.strip() and not l.startswith("#")]
ins = {}
for l in lines:
    ins.setdefault(l.split()[0], []).append(l.split(None, 1)[1])
if ins.get("FROM") != ["debian:12-slim"]: bad(f"FROM: {ins.get('FROM')}")
pkgs = re.findall(r"^Package: (\S+)", (src / "debian/control").read_text(), re.M)
keep = (c / "Dockerfile.dockerignore").read_text().split()
for copy in ins.get("COPY", []):
    for s in copy.split()[:-1]:
        m = re.fullmatch(r"build/deb/([a-z0-9.+-]+)_\*\.deb", s)
        if not m or m.group(1) not in pkgs: bad(f"COPY {s}: not a package make deb builds")
        if "!" + s not in keep: bad(f"COPY {s}: Dockerfile.dockerignore leaves it out of the context")
if ins.get("USER") != ["tenure"]: bad(f"USER: {ins.get('USER')}")
if "adduser --system" not in (src / "debian/tenured.postinst").read_text(): bad("postinst makes no user")
run = " ".join(ins.get("RUN", []))
if "rm -f /etc/tenure/auth.json /etc/tenure/admin.token" not in run: bad("the package's auth file stays in the image")
if "/readyz" not in " ".join(ins.get("HEALTHCHECK", [])): bad("no HEALTHCHECK on /readyz")
env = dict(re.findall(r"(TENURE_[A-Z_]+)=(\S+)", " ".join(ins.get("ENV", []))))
port = env.get("TENURE_LISTEN", "").rpartition(":")[2]
if ins.get("EXPOSE") != [port]: bad(f"EXPOSE {ins.get('EXPOSE')} but TENURE_LISTEN={env.get('TENURE_LISTEN')}")
if not env.get("TENURE_AUTH_FILE"): bad("no TENURE_AUTH_FILE")
if ins.get("CMD") != ['["tenured"]']: bad(f"CMD: {ins.get('CMD')}")
comp = yaml.safe_load((c / "compose.yaml").read_text())
svc = comp.get("services", {})
if set(svc) != {"db", "tenured"}: bad(f"services: {sorted(svc)}")
t = svc["tenured"]
if not (c / t["build"]["context"] / t["build"]["dockerfile"]).resolve().samefile(c / "Dockerfile"):
    bad("compose builds another Dockerfile")
if not t["environment"]["TENURE_STORE"].startswith("postgresql://"): bad("tenured not on PostgreSQL")
if t["ports"] != [f"127.0.0.1:{port}:{port}"]: bad(f"ports: {t['ports']}")
if svc["db"]["image"] != "postgres:15": bad(f"db image: {svc['db']['image']}")
ign = (src / ".gitignore").read_text().split()
for name, s in comp["secrets"].items():
    if not s["file"].startswith("./secrets/") or "/contrib/container/secrets/" not in ign:
        bad(f"secret {name} is not in the git-ignored contrib/container/secrets/")
if "tenure-auth.json" not in t["secrets"] or env["TENURE_AUTH_FILE"] != "/run/secrets/tenure-auth.json":
    bad("the auth file is not the tenure-auth.json secret")
ops = (src / "docs/OPERATIONS.md").read_text()
for word in ["contrib/container/Dockerfile", "compose.yaml", f"{port}/ui", "tenure-auth.json", "pg-password"]:
    if word not in ops: bad(f"docs/OPERATIONS.md does not mention {word}")
for k, v in env.items(): print(f"{k}={v}")
PY
pass "Dockerfile and compose.yaml agree with debian/, .gitignore and docs/OPERATIONS.md"

# --- the image's environment on the dev build ---
set -a; . "$T/env"; set +a
export TENURE_DATA_DIR=$T/data
mkdir -p "$TENURE_DATA_DIR"
rc=0
TENURE_AUTH_FILE=$T/absent.json "$TN_BIN/tenured" >"$T/noauth.log" 2>&1 || rc=$?
[ "$rc" != 0 ] && grep -q 'absent.json' "$T/noauth.log" ||
    fail "the image's tenured without its auth file: exit $rc: $(cat "$T/noauth.log")"
pass "without the auth-file secret the image's tenured does not start (exit $rc, names the file)"
token=container-test-token
sha=$(printf '%s' "$token" | sha256sum | cut -d' ' -f1)
printf '{"principals": [{"name": "admin", "token_sha256": "%s", "admin": true}]}\n' "$sha" \
    >"$T/tenure-auth.json"
export TENURE_AUTH_FILE=$T/tenure-auth.json
unset TENURE_LISTEN # the rest on loopback: nothing here listens beyond it
store=embedded
if [ -n "${TENURE_TEST_PG_URL:-}" ]; then
    export TENURE_STORE=$TENURE_TEST_PG_URL
    store=PostgreSQL
fi
tn_start_server
req POST /v1/leases '{"name":"ctr:1","owner_id":"c","ttl_ms":30000}'
expect_code 401 "acquire without a bearer token"
req POST /v1/leases '{"name":"ctr:1","owner_id":"c","ttl_ms":30000}' -H "Authorization: Bearer $token"
expect_code 201 "acquire with the admin token"
req GET /ui
expect_code 200 "the console"
pass "with the secret, the image's environment serves acquires ($store store) and /ui"

# --- a container engine, where there is one ---
if ! docker info >/dev/null 2>&1; then
    echo "skip: no container engine (docker info failed): the image was not built and compose was not started"
    exit 0
fi
ls "$TN_SRC"/build/deb/tenured_*.deb >/dev/null 2>&1 || "$TN_SRC/scripts/deb.sh" >/dev/null ||
    fail "make deb failed"
# The secrets from $T (an override file), so that a contrib/container/
# secrets/ of the user's own is never touched.
head -c 18 /dev/urandom | base64 >"$T/pg-password"
chmod 0644 "$T/tenure-auth.json" "$T/pg-password"
printf 'secrets:\n  pg-password:\n    file: %s\n  tenure-auth.json:\n    file: %s\n' \
    "$T/pg-password" "$T/tenure-auth.json" >"$T/override.yaml"
dc() { docker compose -p "tenure-t982-$$" -f "$C/compose.yaml" -f "$T/override.yaml" "$@"; }
trap 'dc down -v >/dev/null 2>&1 || true; tn_cleanup' EXIT
dc up -d --build >"$T/compose.log" 2>&1 || fail "compose up: $(tail -20 "$T/compose.log")"
URL=http://127.0.0.1:7300
tn_wait_ready "$URL" || fail "the container never became ready: $(dc logs 2>&1 | tail -20)"
req POST /v1/leases '{"name":"ctr:2","owner_id":"c","ttl_ms":30000}' -H "Authorization: Bearer $token"
expect_code 201 "acquire through the container"
req GET /ui
expect_code 200 "the console in the container"
pass "the image builds, compose starts it on PostgreSQL, it grants a lease and serves /ui"
