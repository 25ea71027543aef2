#!/usr/bin/env bash
# not under the sanitizers: the container recipe and image, made from the
#   packages
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
# Then with podman (lib-container.sh; skipped with a message only where no
# engine can start): the local base images (contrib/container/
# local-images.sh, cached in build/container and podman's storage), the
# image built from the packages of `make deb` with the recipe as it is,
# HEALTHCHECK and USER kept in it; the container becomes healthy and
# ready, runs as the non-root "tenure", answers 401 without the bearer
# token and 201 with it, serves /ui; and compose.yaml's PostgreSQL variant,
# its two services in one pod with the file's images, environment,
# entrypoint, secrets and healthcheck, grants a lease on PostgreSQL.
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

# --- the image and compose.yaml with podman ---
. "$(dirname "$0")/lib-container.sh"
if ! why=$(ctr_engine); then
    echo "skip: no container engine can start here ($why): the image was not built and compose was not started"
    exit 0
fi
trap ctr_cleanup EXIT
nice -n 5 "$TN_SRC/scripts/deb.sh" --if-stale >/dev/null || fail "make deb failed"
"$C/local-images.sh" "$TN_SRC/build/container" 2>"$T/images.log" ||
    fail "the local base images: $(tail -20 "$T/images.log")"
img=localhost/tenure:t982
ctr_build "$img" "$C/Dockerfile" "$C/Dockerfile.dockerignore" || fail "podman build: $(tail -30 "$T/build.log")"
meta=$(podman image inspect --format '{{.Config.User}} {{json .Config.Healthcheck.Test}}' "$img")
[[ $meta == "tenure "*readyz* ]] || fail "the image lost USER or HEALTHCHECK: $meta"
pass "podman built the image from the packages (user, HEALTHCHECK on /readyz kept: $meta)"

auth=$(ctr_secret auth "$T/tenure-auth.json") || fail "podman secret create"
PORT=$(tn_free_port)
# podman logs that it has no systemd for the periodic healthcheck timer;
# "podman healthcheck run" below runs the image's HEALTHCHECK itself.
podman run -d --name "$CTR_NAME" -p "127.0.0.1:$PORT:7300" --secret "$auth,target=tenure-auth.json" \
    "$img" >/dev/null 2>"$T/run.log" || fail "podman run: $(cat "$T/run.log")"
URL=http://127.0.0.1:$PORT
tn_wait_ready "$URL" 60 || fail "the container never became ready: $(podman logs "$CTR_NAME" 2>&1 | tail -20)"
podman healthcheck run "$CTR_NAME" >"$T/health" 2>&1 || fail "HEALTHCHECK: $(cat "$T/health")"
uid=$(podman exec "$CTR_NAME" id -u)
user=$(podman exec "$CTR_NAME" id -un)
[ "$uid" != 0 ] && [ "$user" = tenure ] || fail "the container runs as $user ($uid)"
pid1=$(podman exec "$CTR_NAME" sh -c 'stat -c %U /proc/1')
[ "$pid1" = tenure ] || fail "tenured runs as $pid1"
req POST /v1/leases '{"name":"ctr:2","owner_id":"c","ttl_ms":30000}'
expect_code 401 "acquire through the container without a bearer token"
req POST /v1/leases '{"name":"ctr:2","owner_id":"c","ttl_ms":30000}' -H "Authorization: Bearer $token"
expect_code 201 "acquire through the container"
req GET /ui
expect_code 200 "the console in the container"
pass "the container is healthy and ready, runs as $user (uid $uid), 401 without the token, 201 with it, /ui"
podman rm -f "$CTR_NAME" >/dev/null 2>&1

# compose.yaml's PostgreSQL variant: the file's two services in one pod
# (they reach each other on localhost; "db" names it, as compose's network
# would), with the file's images, environment, entrypoint and secrets.
"$PY" - "$C/compose.yaml" >"$T/compose.env" <<'PY' || fail "compose.yaml"
import shlex, sys, yaml
c = yaml.safe_load(open(sys.argv[1]))
db, t = c["services"]["db"], c["services"]["tenured"]
q = lambda xs: " ".join(shlex.quote(x) for x in xs)
print("db_image=" + shlex.quote(db["image"]))
print("db_env=(" + q(f"{k}={v}" for k, v in db["environment"].items()) + ")")
print("db_secrets=(" + q(db["secrets"]) + ")")
print("db_health=(" + q(db["healthcheck"]["test"][1:]) + ")")
print("t_env=(" + q(f"{k}={v}" for k, v in t["environment"].items()) + ")")
print("t_secrets=(" + q(t["secrets"]) + ")")
# compose writes a literal $ as $$
print("t_entry=" + shlex.quote(__import__("json").dumps([a.replace("$$", "$") for a in t["entrypoint"]])))
print("t_port=" + t["ports"][0].rsplit(":", 1)[1])
PY
. "$T/compose.env"
head -c 18 /dev/urandom | base64 >"$T/pg-password"
pgpw=$(ctr_secret pg-password "$T/pg-password") || fail "podman secret create"
declare -A secret=([pg-password]=$pgpw [tenure-auth.json]=$auth)
sargs() { local s; for s in "$@"; do printf -- '--secret\0%s,target=%s\0' "${secret[$s]}" "$s"; done; }
eargs() { local e; for e in "$@"; do printf -- '-e\0%s\0' "$e"; done; }
PORT=$(tn_free_port)
podman pod create --name "$CTR_NAME-pod" -p "127.0.0.1:$PORT:$t_port" --add-host db:127.0.0.1 >/dev/null ||
    fail "podman pod create"
mapfile -d '' -t a < <(sargs "${db_secrets[@]}"; eargs "${db_env[@]}")
podman run -d --pod "$CTR_NAME-pod" --name "$CTR_NAME-db" "${a[@]}" "$db_image" >/dev/null ||
    fail "podman run $db_image"
ctr_wait_cmd 60 podman exec "$CTR_NAME-db" "${db_health[@]}" ||
    fail "the db service never became healthy: $(podman logs "$CTR_NAME-db" 2>&1 | tail -20)"
mapfile -d '' -t a < <(sargs "${t_secrets[@]}"; eargs "${t_env[@]}")
podman run -d --pod "$CTR_NAME-pod" --name "$CTR_NAME-tenured" "${a[@]}" --entrypoint "$t_entry" "$img" \
    >/dev/null 2>"$T/run.log" || fail "podman run the tenured service: $(cat "$T/run.log")"
URL=http://127.0.0.1:$PORT
tn_wait_ready "$URL" 60 || fail "the tenured service never became ready: $(podman logs "$CTR_NAME-tenured" 2>&1 | tail -20)"
logs=$(podman logs "$CTR_NAME-tenured" 2>&1)
grep -q 'postgresql store ready' <<<"$logs" || fail "tenured did not say it runs on PostgreSQL: $(tail <<<"$logs")"
req POST /v1/leases '{"name":"ctr:3","owner_id":"c","ttl_ms":30000}' -H "Authorization: Bearer $token"
expect_code 201 "acquire through the compose variant"
tok=$(jget token)
rows=$(podman exec "$CTR_NAME-db" psql -U tenure -d tenure -tAc "SELECT fencing_token FROM leases WHERE name='ctr:3'")
[ "$rows" = "$tok" ] || fail "the grant (token $tok) is not in PostgreSQL's leases table: '$rows'"
pass "compose.yaml's PostgreSQL variant in a pod: $db_image healthy, the grant of token $tok is PostgreSQL's row"
