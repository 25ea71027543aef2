# SPDX-License-Identifier: MIT
"""Property-based test of tenured against its own description.

Hypothesis draws requests from docs/openapi.yaml's schemas: valid ones
(every constraint kept) and invalid ones (one constraint broken: a missing
or wrongly typed field, a value out of range, a string over its byte limit,
a bad percent-encoding, an undescribed method or path, a bad media type, a
body over 4 KiB, no or a wrong bearer token...).  Each is sent to a live
tenured, without and with --auth-file, and every answer must

  1. be one the description allows (status described for the operation,
     Content-Type, JSON body against the schema, required headers) and
     never a 5xx;
  2. refuse an invalid request (4xx), and not refuse a valid request of a
     privileged caller for its shape (400/401/413/415);
  3. with authentication on, be 401 for a protected operation without a
     valid bearer token (unless the path itself was refused first);
  4. after a refused mutation (acquire, renew, release), show no change:
     the grant/renew/release counters, the live leases (names, owners,
     tokens) and the floor of the name asked about are what they were.

Drawn numbers are kept to what runs quickly: wait_ms at most 200 ms (a
blocking acquire on a held name would otherwise wait for minutes)."""
import json
import os
import re
import secrets
import types
import urllib.parse
from dataclasses import dataclass, field
from typing import Optional

import pytest
from hypothesis import HealthCheck, Phase, event, given, settings
from hypothesis import strategies as st

from openapi_check import Spec
from session_requests import SESSION_KINDS, session_request

SPEC = Spec()
EXAMPLES = int(os.environ.get("TN_OPENAPI_EXAMPLES", "150"))
# No shrinking: the server keeps state, so a replayed example may answer
# differently (a name it granted is now held); the first failure is shown.
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, database=None,
                    phases=(Phase.explicit, Phase.generate),
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture,
                                           HealthCheck.data_too_large])
BAD_CHARS = [chr(c) for c in range(0x20)] + [chr(c) for c in range(0x7F, 0xA0)]
PRINTABLE = st.characters(blacklist_categories=("Cs",), blacklist_characters=BAD_CHARS)
SEGMENT_SAFE = "-._~:@!$&'()*+,;="
TOKEN_LIMIT = 1 << 53


def nbytes(s):
    return len(s.encode("utf-8"))


def schema(name):
    return SPEC.deref({"$ref": f"#/components/schemas/{name}"})


# -- strings and numbers drawn from the schemas -----------------------------

def text_within(sch, min_size=None):
    """Valid strings for a string schema with minLength, x-max-bytes and the
    printable pattern."""
    sch = SPEC.deref(sch)
    lo = sch.get("minLength", 0) if min_size is None else min_size
    hi = sch.get("x-max-bytes", 64)
    short = st.text(PRINTABLE, min_size=lo, max_size=min(hi, 40))
    full = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E),
                   min_size=max(lo, hi - 3), max_size=hi)
    wide = st.text(st.sampled_from("é€𝄞日"), min_size=max(lo, 1), max_size=hi // 4)
    return st.one_of(short, short, full, wide).filter(lambda s: lo <= nbytes(s) <= hi)


def text_invalid(sch):
    """Strings that break a string schema: empty, over x-max-bytes (also
    with fewer characters than bytes), or holding a control character."""
    sch = SPEC.deref(sch)
    hi = sch.get("x-max-bytes", 64)
    bad = [st.builds(lambda a, c, b: a + c + b, st.text(PRINTABLE, max_size=5),
                     st.sampled_from(BAD_CHARS), st.text(PRINTABLE, max_size=5)),
           st.just("x" * (hi + 1)),
           st.just("é" * (hi // 2 + 1))]  # <= hi characters, > hi bytes
    if sch.get("minLength", 0) > 0:
        bad.append(st.just(""))
    return st.one_of(bad)


def int_within(sch):
    sch = SPEC.deref(sch)
    return st.integers(sch.get("minimum", 0), sch.get("maximum", TOKEN_LIMIT - 1))


def int_invalid(sch):
    sch = SPEC.deref(sch)
    lo, hi = sch.get("minimum"), sch.get("maximum")
    out = [st.sampled_from([2**63, 2**64, -(2**63)])]
    if lo is not None:
        out.append(st.integers(max_value=lo - 1).filter(lambda v: v > -(2**70)))
    if hi is not None:
        out.append(st.integers(min_value=hi + 1, max_value=2**70))
    return st.one_of(out)


WRONG_TYPE_FOR_INT = st.sampled_from(["100", 100.5, True, None, [], {}])
WRONG_TYPE_FOR_STR = st.sampled_from([1, 0.5, False, None, ["a"], {"a": 1}])


# -- requests ---------------------------------------------------------------

@dataclass
class Req:
    method: str
    target: str
    body: Optional[bytes] = None
    headers: dict = field(default_factory=dict)
    valid: bool = True           # by the description
    why: str = "valid"           # what was broken
    template: Optional[str] = None
    name: Optional[str] = None   # the lease name concerned, when valid
    mutation: bool = False
    needs: str = "read"          # read | acquire | admin | none


def enc_segment(name, safe):
    return urllib.parse.quote(name, safe=safe, encoding="utf-8", errors="strict")


@st.composite
def name_segment(draw):
    """(raw segment, decoded name or None when it is invalid)."""
    if draw(st.integers(0, 3)) > 0:
        name = draw(text_within(schema("LeaseName")))
        return enc_segment(name, draw(st.sampled_from(["", SEGMENT_SAFE]))), name
    bad = draw(st.sampled_from([
        "a%zz", "a%2", "%", "%00", "a%1Fb", "%7F", "%C2%80", "%FF", "%C0%80",
        "%ED%A0%80", "%F5%80%80%80", "%E2%82", "x" * 257, "%C3%A9" * 129]))
    return bad, None


def json_body(value):
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


@st.composite
def acquire_body(draw):
    """(body bytes, valid?, why)."""
    sch = schema("AcquireRequest")
    props = sch["properties"]
    body = {"name": draw(text_within(props["name"])),
            "owner_id": draw(text_within(props["owner_id"])),
            "ttl_ms": draw(int_within(schema("TtlMs")))}
    if draw(st.booleans()):
        body["request_id"] = draw(text_within(props["request_id"]))
    if draw(st.booleans()):
        body["lock_delay_ms"] = draw(int_within(props["lock_delay_ms"]))
    if draw(st.booleans()):
        body["wait_ms"] = draw(st.integers(0, 200))
    if draw(st.booleans()):
        body["unknown_" + draw(st.text("abc", max_size=3))] = draw(
            st.sampled_from([1, "x", None, [1], {"a": {}}]))
    how = draw(st.sampled_from(["valid"] * 6 + [
        "missing", "wrong_type", "out_of_range", "bad_string", "not_object",
        "syntax", "duplicate", "bad_utf8"]))
    if how == "valid":
        return json_body(body), True, how, body["name"]
    if how == "missing":
        del body[draw(st.sampled_from(sch["required"]))]
    elif how == "wrong_type":
        k = draw(st.sampled_from(sorted(props)))
        body[k] = draw(WRONG_TYPE_FOR_STR if SPEC.deref(props[k]).get("type") == "string"
                       else WRONG_TYPE_FOR_INT)
    elif how == "out_of_range":
        k = draw(st.sampled_from(["ttl_ms", "lock_delay_ms", "wait_ms"]))
        body[k] = draw(int_invalid(SPEC.deref(props[k])))
    elif how == "bad_string":
        k = draw(st.sampled_from(["name", "owner_id", "request_id"]))
        body[k] = draw(text_invalid(SPEC.deref(props[k])))
    elif how == "not_object":
        return json_body(draw(st.sampled_from([[], "x", 1, None, [body]]))), False, how, None
    elif how == "syntax":
        raw = json_body(body)
        assert raw.endswith(b"}") and b":" in raw
        return draw(st.sampled_from([raw[:-1], raw + b" x", raw + b"{}",
                                     raw.replace(b":", b"=", 1), b"", b"{",
                                     raw[:-1] + b",}"])), False, how, None
    elif how == "duplicate":
        raw = json_body(body)
        return raw[:-1] + b',"name":"dup"}', False, how, None
    elif how == "bad_utf8":
        raw = json_body(body)
        assert b'"name":"' in raw
        return raw.replace(b'"name":"', b'"name":"\xff', 1), False, how, None
    # Whether the mutation broke the body is the description's call (null
    # in an optional field, for one, is allowed).
    valid = SPEC.body_valid("POST", "/v1/leases", body)
    return json_body(body), valid, how, body["name"] if valid else None


@st.composite
def token_body(draw, renew, lease):
    """A renew or release body for lease (dict with token, secret)."""
    body = {"token": lease["token"], "lease_secret": lease["secret"]}
    how = draw(st.sampled_from(["wrong_secret", "wrong_token", "missing",
                                "wrong_type", "bad_token", "bad_secret"]
                               + (["bad_ttl", "valid_ttl"] if renew else [])))
    valid = how in ("wrong_secret", "wrong_token", "valid_ttl")
    if how == "wrong_secret":
        body["lease_secret"] = secrets.token_hex(16)
    elif how == "wrong_token":
        body["token"] = draw(int_within(schema("Token")).filter(lambda t: t != lease["token"]))
    elif how == "missing":
        del body[draw(st.sampled_from(["token", "lease_secret"]))]
    elif how == "wrong_type":
        k = draw(st.sampled_from(["token", "lease_secret"]))
        body[k] = draw(WRONG_TYPE_FOR_INT if k == "token" else WRONG_TYPE_FOR_STR)
    elif how == "bad_token":
        body["token"] = draw(int_invalid(schema("Token")))
    elif how == "bad_secret":
        body["lease_secret"] = draw(st.sampled_from(
            ["", "zz" * 16, "ab" * 15, "ab" * 17, "ab" * 16 + " "]))
    elif how == "bad_ttl":
        body["ttl_ms"] = draw(int_invalid(schema("TtlMs")) | WRONG_TYPE_FOR_INT)
    elif how == "valid_ttl":
        body["lease_secret"] = secrets.token_hex(16)  # refused, not applied
        body["ttl_ms"] = draw(int_within(schema("TtlMs")))
    method = "PATCH" if renew else "DELETE"
    assert valid == SPEC.body_valid(method, "/v1/leases/{name}", body) or how == "bad_ttl", body
    if how == "bad_ttl":  # a null TTL is allowed: the description decides
        valid = SPEC.body_valid(method, "/v1/leases/{name}", body)
    return json_body(body), valid, how


def query_value(draw, sch, valid):
    if sch.get("type") == "integer":
        return str(draw(int_within(sch) if valid else int_invalid(sch)))
    if "enum" in sch:
        return draw(st.sampled_from(sch["enum"])) if valid else draw(
            st.sampled_from(["", "1", "TRUE", "yes", "true "]))
    return draw(text_within(sch, min_size=0)) if valid else "x" * (sch["x-max-bytes"] + 1)


@st.composite
def queries(draw, method, template, required=()):
    """(query string, valid?, why) for the operation's query parameters."""
    item = SPEC.doc["paths"][template]
    params = [p for (where, _), p in SPEC.parameters(item, item[method.lower()]).items()
              if where == "query"]
    parts, valid, why = [], True, "valid"
    breakable = [p["name"] for p in params
                 if {"enum", "x-max-bytes", "minimum"} & set(SPEC.deref(p["schema"]))]
    broken = draw(st.sampled_from([None, None, None] + breakable + ["%encoding"]))
    for p in params:
        sch = SPEC.deref(p["schema"])
        if p["name"] == broken:
            if sch.get("type") == "integer" and draw(st.booleans()):
                v = draw(st.sampled_from(["", "abc", "1.5", "-1", "1e3",
                                          "99999999999999999999"]))
            else:
                v = query_value(draw, sch, False)
            parts.append((p["name"], v))
            valid, why = False, f"query {p['name']}"
        elif p.get("required") or draw(st.booleans()):
            parts.append((p["name"], query_value(draw, sch, True)))
    if draw(st.booleans()):
        parts.append(("unknown", "1"))  # ignored
    q = urllib.parse.urlencode(parts, quote_via=urllib.parse.quote)
    if broken == "%encoding":
        q = (q + "&" if q else "") + draw(st.sampled_from(["prefix=%zz", "x=%", "limit=%G1"]))
        valid, why = False, "query encoding"
    return q, valid, why


@st.composite
def requests(draw, victim, vsess, privileged):
    kind = draw(st.sampled_from([
        "acquire", "acquire", "acquire", "list", "get", "check", "history",
        "events", "renew", "renew", "release", "release", "force", "ops",
        "bad_method", "bad_path", "bad_media", "too_big"] + SESSION_KINDS))
    if kind in SESSION_KINDS:
        return draw(session_request(helpers(), vsess, privileged, kind))
    seg, name = draw(name_segment())
    if kind == "acquire":
        body, valid, why, nm = draw(acquire_body())
        return Req("POST", "/v1/leases", body, {"Content-Type": draw(st.sampled_from(
            ["application/json", "application/json; charset=utf-8",
             "application/x-www-form-urlencoded"]))}, valid, why, "/v1/leases",
            nm, True, "acquire")
    if kind in ("list", "events"):
        template = "/v1/leases" if kind == "list" else "/v1/events"
        q, valid, why = draw(queries("GET", template))
        return Req("GET", template + ("?" + q if q else ""), valid=valid, why=why,
                   template=template)
    if kind in ("get", "check", "history"):
        template = {"get": "/v1/leases/{name}", "check": "/v1/leases/{name}/check",
                    "history": "/v1/leases/{name}/history"}[kind]
        if kind == "get" and seg == "":
            seg = "%"
        q, valid, why = draw(queries("GET", template))
        path = template.replace("{name}", seg)
        return Req("GET", path + ("?" + q if q else ""), valid=valid and name is not None,
                   why=why if name is not None else "path name", template=template,
                   name=name)
    if kind in ("renew", "release"):
        method = "PATCH" if kind == "renew" else "DELETE"
        target_victim = draw(st.booleans())
        lease = victim if target_victim else {"name": name or "x", "token": 1,
                                              "secret": secrets.token_hex(16)}
        body, valid, why = draw(token_body(kind == "renew", lease))
        if target_victim:
            seg, name = enc_segment(victim["name"], ""), victim["name"]
        q = ""
        if kind == "release" and draw(st.booleans()):
            q = "?force=" + draw(st.sampled_from(["false", "nope", "1"]))
            if q != "?force=false":
                valid, why = False, "query force"
        return Req(method, "/v1/leases/" + seg + q, body, {"Content-Type": "application/json"},
                   valid and name is not None, why if name is not None else "path name",
                   "/v1/leases/{name}", name, True, "acquire")
    if kind == "force":
        # A force release of the victim by a caller that may not do it must
        # be refused; a privileged caller's aims at a drawn name instead (it
        # would end the victim every example relies on).
        if privileged:
            return Req("DELETE", "/v1/leases/" + seg + "?force=true", None, {},
                       name is not None, "force" if name else "path name",
                       "/v1/leases/{name}", name, False, "admin")
        return Req("DELETE", "/v1/leases/" + enc_segment(victim["name"], "") + "?force=true",
                   None, {}, True, "force", "/v1/leases/{name}", victim["name"], True, "admin")
    if kind == "ops":
        path = draw(st.sampled_from(["/healthz", "/readyz", "/metrics", "/v1/openapi.json"]))
        method = draw(st.sampled_from(["GET", "HEAD"]))
        return Req(method, path, template=path,
                   needs="read" if path == "/metrics" else "none")
    if kind == "bad_method":
        path, template = draw(st.sampled_from([
            ("/v1/leases", "/v1/leases"), ("/v1/leases/a", "/v1/leases/{name}"),
            ("/v1/leases/a/check?token=1", "/v1/leases/{name}/check"),
            ("/v1/leases/a/history", "/v1/leases/{name}/history"),
            ("/v1/events", "/v1/events"), ("/healthz", "/healthz"),
            ("/readyz", "/readyz"), ("/metrics", "/metrics"),
            ("/v1/openapi.json", "/v1/openapi.json")]))
        described = {m.upper() for m in SPEC.doc["paths"][template]}
        method = draw(st.sampled_from(sorted(
            {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"} - described)))
        public = SPEC.doc["paths"][template]["get"].get("security") == []
        return Req(method, path, b"{}" if method in ("POST", "PUT", "PATCH") else None,
                   {}, False, "method", template, mutation=method != "OPTIONS",
                   needs="none" if public else "read")
    if kind == "bad_path":
        path = draw(st.sampled_from([
            "/", "/v1", "/v2/leases", "/v1/lease", "/v1/leasesx", "/v1/leases/a/b",
            "/v1/leases/a/check/x", "/v1/leases/a/Check", "/healthz/", "/V1/leases",
            "/v1/events/", "/v1/openapi.yaml", "/metrics/x"]))
        method = draw(st.sampled_from(["GET", "POST", "DELETE"]))
        return Req(method, path, b"{}" if method == "POST" else None, {}, False,
                   "path", None, mutation=method != "GET")
    if kind == "bad_media":
        body, _, _, _ = draw(acquire_body())
        return Req("POST", "/v1/leases", body, {"Content-Type": draw(st.sampled_from(
            ["text/plain", "application/xml", "multipart/form-data; boundary=x",
             "application/jsonx"]))}, False, "media type", "/v1/leases", None, True,
            "acquire")
    # too_big: a valid acquire padded past the body limit with an unknown field
    limit = SPEC.deref(SPEC.doc["paths"]["/v1/leases"]["post"]["requestBody"])["x-max-bytes"]
    pad = draw(st.integers(limit + 1, 2 * limit))
    body = json.dumps({"name": "big", "owner_id": "o", "ttl_ms": 1000,
                       "pad": "p" * pad}).encode()
    return Req("POST", "/v1/leases", body, {"Content-Type": "application/json"}, False,
               "body over 4 KiB", "/v1/leases", None, True, "acquire")


def helpers():
    """What session_requests.py draws with, from this module."""
    return types.SimpleNamespace(
        Req=Req, SPEC=SPEC, schema=schema, text_within=text_within,
        text_invalid=text_invalid, int_within=int_within, int_invalid=int_invalid,
        json_body=json_body, queries=queries, WRONG_TYPE_FOR_INT=WRONG_TYPE_FOR_INT)


# -- the state a refused request must not change ----------------------------

def metric(server, name):
    text = server.request("GET", "/metrics", bearer=server.admin).body.decode()
    m = re.search(rf"^{name} (\d+)$", text, re.M)
    return int(m.group(1)) if m else None


def snapshot(server, name):
    text = server.request("GET", "/metrics", bearer=server.admin).body.decode()
    counters = tuple(re.findall(r"^tenure_(?:grants|renews|releases)_total (\d+)$",
                                text, re.M))
    leases, after = set(), None
    while True:
        q = "limit=1000" + ("&after=" + urllib.parse.quote(after, safe="") if after else "")
        page = server.request("GET", "/v1/leases?" + q, bearer=server.admin).json()
        # Leases that may expire while the request runs are left out.
        leases |= {(x["name"], x["owner_id"], x["token"]) for x in page["leases"]
                   if x["expires_in_ms"] > 60000}
        after = page["next"]
        if after is None:
            break
    floor = None
    if name is not None:
        a = server.request("GET", "/v1/leases/" + enc_segment(name, "") + "/check?token=0",
                           bearer=server.admin)
        floor = a.json().get("floor") if a.status == 200 else a.status
    return counters, leases, floor


# -- the property -------------------------------------------------------------

PRE_AUTH = {400, 404, 413, 431}  # answers that may come before authentication


def creds(draw_value, server):
    if not server.tokens:
        return None, "noauth"
    who = draw_value
    if who == "none":
        return None, who
    if who == "garbage":
        return "not-a-token", who
    return server.tokens[who], who


@pytest.fixture(scope="module")
def victim(server):
    """A lease held for the whole module, owned by the writer (auth on) or
    anyone (auth off); refused renews and releases aim at it."""
    who = server.tokens.get("writer")
    a = server.request("POST", "/v1/leases", json.dumps(
        {"name": "victim/ü", "owner_id": "keeper", "ttl_ms": 3600000}).encode(),
        {"Content-Type": "application/json"}, bearer=who)
    assert a.status == 201, a.body
    g = a.json()
    return {"name": g["name"], "token": g["token"], "secret": g["lease_secret"]}


@pytest.fixture(scope="module")
def vsess(server):
    """A session held for the whole module, opened by the writer (auth on)
    or anyone (auth off): the session requests' target."""
    a = server.request("POST", "/v1/sessions", json.dumps(
        {"owner_id": "keeper", "ttl_ms": 3600000}).encode(),
        {"Content-Type": "application/json"}, bearer=server.tokens.get("writer"))
    assert a.status == 201, a.body
    g = a.json()
    return {"id": g["session_id"], "secret": g["session_secret"]}


@SETTINGS
@given(data=st.data())
def test_answers_match_the_description(server, victim, vsess, data):
    who = data.draw(st.sampled_from(["ops", "writer", "reader", "narrow", "none", "garbage"]),
                    label="caller") if server.tokens else "noauth"
    bearer, who = creds(who, server)
    req = data.draw(requests(victim, vsess, who in ("noauth", "ops")), label="request")
    before = snapshot(server, req.name) if req.mutation else None
    ans = server.request(req.method, req.target, req.body, req.headers, bearer)
    event(f"answer {ans.status}")
    event(f"request {'valid' if req.valid else 'invalid'}: {req.why}")
    what = (f"{req.method} {req.target} [{req.why}, caller {who}] "
            f"body={req.body[:120] if req.body else None!r} -> {ans.status} {ans.body[:300]!r}")

    # 1. described, and no 5xx
    problems = SPEC.check_answer(req.method, req.target, ans.status, ans.headers, ans.body)
    assert not problems, f"{what}\n" + "\n".join(problems)
    assert ans.status < 500, what

    # 2. invalid requests are refused
    if not req.valid:
        assert 400 <= ans.status < 500, what
    privileged = who in ("noauth", "ops")
    if req.valid and privileged:
        assert ans.status not in (400, 401, 405, 413, 415), what
        if req.needs == "read" or req.needs == "none":
            assert ans.status != 403, what

    # 3. authentication
    if who in ("none", "garbage") and req.needs != "none" and req.template is not None:
        assert ans.status == 401 or ans.status in PRE_AUTH, what
    if req.needs == "none":
        assert ans.status != 401, what
    if who == "reader" and req.mutation and req.needs != "none":
        assert not 200 <= ans.status < 300, what
    if req.needs == "admin" and who not in ("noauth", "ops"):
        assert ans.status in (401, 403), what

    # The holder's own renew and release of a fresh grant succeed.
    if (req.target == "/v1/leases" and ans.status == 201
            and "session_id" not in ans.json() and who in ("noauth", "ops", "writer")):
        g = ans.json()
        seg = enc_segment(g["name"], "")
        own = data.draw(st.sampled_from(["renew", "release"]), label="then")
        body = {"token": g["token"], "lease_secret": g["lease_secret"]}
        if own == "renew":
            body["ttl_ms"] = data.draw(int_within(schema("TtlMs")), label="ttl")
        method, target = ("PATCH" if own == "renew" else "DELETE"), "/v1/leases/" + seg
        a2 = server.request(method, target, json_body(body),
                            {"Content-Type": "application/json"}, bearer)
        event(f"own {own} -> {a2.status}")
        problems = SPEC.check_answer(method, target, a2.status, a2.headers, a2.body)
        assert not problems, "\n".join(problems)
        # A drawn TTL of 100 ms may run out before the renew arrives.
        assert a2.status == (200 if own == "renew" else 204) or (
            a2.status == 409 and g["ttl_ms"] < 5000), (method, target, a2.status, a2.body)

    # 4. a refused mutation changes nothing
    if req.mutation and not 200 <= ans.status < 300:
        after = snapshot(server, req.name)
        assert after == before, f"{what}\nstate before {before}\nafter {after}"


def test_served_description_is_the_yaml(server):
    """GET /v1/openapi.json is docs/openapi.yaml's content, and public."""
    a = server.request("GET", "/v1/openapi.json")
    assert a.status == 200, a.body
    assert a.headers["content-type"].startswith("application/json")
    assert json.loads(a.body) == SPEC.doc


def test_force_release_by_admin(server):
    """The one mutation the property leaves out: an admin's force release
    ends a live grant (204, described, state changed as it should)."""
    who = server.tokens.get("writer")
    g = server.request("POST", "/v1/leases", b'{"name":"f:1","owner_id":"o","ttl_ms":60000}',
                       bearer=who)
    assert g.status in (200, 201), g.body
    target = "/v1/leases/f%3A1?force=true"
    a = server.request("DELETE", target, bearer=server.admin)
    assert a.status == 204, a.body
    assert not SPEC.check_answer("DELETE", target, a.status, a.headers, a.body)
    assert server.request("GET", "/v1/leases/f%3A1", bearer=server.admin).status == 404
