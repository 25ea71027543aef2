# SPDX-License-Identifier: MIT
"""The session routes' requests for the property test
(test_openapi_property.py): valid and invalid opens, reads, renews, ends,
claims, batch releases and acquires under a session, drawn from the
description's own schemas.  A victim session (opened once per module) is
their target; it is never renewed with a wrong TTL, ended or force-ended
here, so every example can rely on it.  The helpers of the test module
come in `h` (no import cycle)."""
import json
import secrets

from hypothesis import strategies as st

SESSION_KINDS = ["s_open", "s_open", "s_get", "s_list", "s_renew", "s_end",
                 "s_claim", "s_claim", "s_release", "s_acquire", "s_bad_id",
                 "s_too_big"]
BAD_IDS = ["x", "0123", "0123456789ABCDEF0123456789abcdef",
           "0123456789abcdef0123456789abcde", "0123456789abcdef0123456789abcdef0",
           "%30123456789abcdef0123456789abcde", "g" * 32]
JSON = {"Content-Type": "application/json"}


def some_id():
    return st.binary(min_size=16, max_size=16).map(bytes.hex)


@st.composite
def open_body(draw, h):
    """(body bytes, valid?, why) for POST /v1/sessions."""
    body = {"owner_id": draw(h.text_within(h.schema("OwnerId"))),
            "ttl_ms": draw(h.int_within(h.schema("TtlMs")))}
    how = draw(st.sampled_from(["valid"] * 4 + ["missing", "wrong_type", "out_of_range",
                                                "bad_owner", "not_object", "duplicate"]))
    if how == "missing":
        del body[draw(st.sampled_from(["owner_id", "ttl_ms"]))]
    elif how == "wrong_type":
        body["ttl_ms"] = draw(h.WRONG_TYPE_FOR_INT.filter(lambda v: v is not None))
    elif how == "out_of_range":
        body["ttl_ms"] = draw(h.int_invalid(h.schema("TtlMs")))
    elif how == "bad_owner":
        body["owner_id"] = draw(h.text_invalid(h.schema("OwnerId")))
    elif how == "not_object":
        return h.json_body([body]), False, how
    elif how == "duplicate":
        return h.json_body(body)[:-1] + b',"ttl_ms":1000}', False, how
    return h.json_body(body), h.SPEC.body_valid("POST", "/v1/sessions", body), how


@st.composite
def claim_names(draw, h):
    """A "names" value and whether it holds 1..1024 distinct lease names."""
    name = h.text_within(h.schema("LeaseName")).map(lambda s: "s:" + s[:200])
    good = st.lists(name, min_size=1, max_size=6, unique=True)
    how = draw(st.sampled_from(["valid"] * 4 + ["empty", "dup", "not_array",
                                                "wrong_elem", "bad_name", "too_many"]))
    if how == "valid":
        return draw(good), how
    if how == "empty":
        return [], how
    if how == "dup":
        v = draw(good)
        return v + [v[0]], how
    if how == "not_array":
        return draw(st.sampled_from(["s:a", 1, {"s:a": 1}, None])), how
    if how == "wrong_elem":
        return draw(good) + [draw(st.sampled_from([1, None, ["s:a"], {"name": "s:a"}]))], how
    if how == "bad_name":
        return draw(good) + [draw(h.text_invalid(h.schema("LeaseName")))], how
    return ["s:%d" % i for i in range(1025)], how


def batch_valid(h, method, body):
    """The description's word, plus what it cannot say: no name twice."""
    items = body.get("names") if method == "POST" else body.get("leases")
    names = items if method == "POST" else [x.get("name") for x in items or []
                                            if isinstance(x, dict)]
    if isinstance(names, list) and len(names) != len({json.dumps(n) for n in names}):
        return False
    return h.SPEC.body_valid(method, "/v1/sessions/{id}/leases", body)


@st.composite
def batch_request(draw, h, vsess, claim):
    """A claim or a batch release under the victim session."""
    method = "POST" if claim else "DELETE"
    body = {"session_secret": vsess["secret"]}
    if claim:
        body["names"], why = draw(claim_names(h))
        if draw(st.booleans()):
            body["owner_id"] = draw(h.text_within(h.schema("OwnerId")))
    else:
        names, why = draw(claim_names(h))
        body["leases"] = [{"name": n, "token": draw(h.int_within(h.schema("Token")))}
                          if isinstance(n, str) else n
                          for n in (names if isinstance(names, list) else [names])]
    secret = draw(st.sampled_from(["right", "right", "wrong", "missing", "bad"]))
    if secret == "wrong":
        body["session_secret"] = secrets.token_hex(16)
    elif secret == "missing":
        del body["session_secret"]
    elif secret == "bad":
        body["session_secret"] = draw(st.sampled_from(["", "zz" * 16, 5]))
    valid = batch_valid(h, method, body)
    return h.Req(method, f"/v1/sessions/{vsess['id']}/leases", h.json_body(body), JSON,
                 valid, f"{'claim' if claim else 'release'} {why}, secret {secret}",
                 "/v1/sessions/{id}/leases", None, True, "acquire")


@st.composite
def session_request(draw, h, vsess, privileged, kind):
    """One request of kind (SESSION_KINDS)."""
    vid = vsess["id"]
    if kind == "s_open":
        body, valid, why = draw(open_body(h))
        return h.Req("POST", "/v1/sessions", body, JSON, valid, "open " + why,
                     "/v1/sessions", None, True, "acquire")
    if kind == "s_get":
        sid = draw(st.one_of(st.just(vid), some_id()))
        return h.Req("GET", "/v1/sessions/" + sid, template="/v1/sessions/{id}")
    if kind == "s_list":
        q, valid, why = draw(h.queries("GET", "/v1/sessions"))
        return h.Req("GET", "/v1/sessions" + ("?" + q if q else ""), valid=valid,
                     why=why, template="/v1/sessions")
    if kind == "s_renew":
        body = {"session_secret": draw(st.sampled_from([vsess["secret"],
                                                         secrets.token_hex(16)]))}
        how = draw(st.sampled_from(["plain", "ttl", "bad_ttl", "missing"]))
        if how == "ttl":
            body["ttl_ms"] = draw(st.integers(3600000 - 1000, 3600000))
        elif how == "bad_ttl":
            body["ttl_ms"] = draw(h.int_invalid(h.schema("TtlMs")))
        elif how == "missing":
            del body["session_secret"]
        return h.Req("PATCH", "/v1/sessions/" + vid, h.json_body(body), JSON,
                     h.SPEC.body_valid("PATCH", "/v1/sessions/{id}", body), "renew " + how,
                     "/v1/sessions/{id}", None, True, "acquire")
    if kind == "s_end":
        # Never the victim with its secret; a privileged force end aims at
        # an id that names no session (409), anyone else's at the victim.
        if draw(st.booleans()):
            if privileged:
                return h.Req("DELETE", "/v1/sessions/" + draw(some_id()) + "?force=true",
                             None, {}, True, "force end", "/v1/sessions/{id}", None, False,
                             "admin")
            return h.Req("DELETE", f"/v1/sessions/{vid}?force=true", None, {}, True,
                         "force end", "/v1/sessions/{id}", None, True, "admin")
        body = draw(st.sampled_from([{"session_secret": secrets.token_hex(16)}, {},
                                     {"session_secret": 7}]))
        return h.Req("DELETE", "/v1/sessions/" + vid, h.json_body(body), JSON,
                     h.SPEC.body_valid("DELETE", "/v1/sessions/{id}", body), "end",
                     "/v1/sessions/{id}", None, True, "acquire")
    if kind in ("s_claim", "s_release"):
        return draw(batch_request(h, vsess, kind == "s_claim"))
    if kind == "s_acquire":
        body = {"name": "s:" + draw(h.text_within(h.schema("LeaseName")))[:200],
                "owner_id": "o", "session_id": vid, "session_secret": vsess["secret"]}
        how = draw(st.sampled_from(["valid", "valid", "ttl", "no_secret", "wrong_secret",
                                    "bad_id"]))
        if how == "ttl":
            body["ttl_ms"] = 1000
        elif how == "no_secret":
            del body["session_secret"]
        elif how == "wrong_secret":
            body["session_secret"] = secrets.token_hex(16)
        elif how == "bad_id":
            body["session_id"] = draw(st.sampled_from(BAD_IDS[:-2]))
        valid = h.SPEC.body_valid("POST", "/v1/leases", body)
        return h.Req("POST", "/v1/leases", h.json_body(body), JSON, valid,
                     "acquire under a session " + how, "/v1/leases",
                     body["name"] if valid else None, True, "acquire")
    if kind == "s_bad_id":
        method, suffix = draw(st.sampled_from([("GET", ""), ("PATCH", ""), ("DELETE", ""),
                                               ("POST", "/leases"), ("DELETE", "/leases")]))
        body = None if method == "GET" else b'{"session_secret":"00"}'
        return h.Req(method, "/v1/sessions/" + draw(st.sampled_from(BAD_IDS)) + suffix,
                     body, JSON if body else {}, False, "session id",
                     "/v1/sessions/{id}" + suffix, None, method != "GET",
                     "read" if method == "GET" else "acquire")
    # s_too_big: a claim over the batch routes' body cap
    limit = h.SPEC.deref(h.SPEC.doc["paths"]["/v1/sessions/{id}/leases"]["post"]
                         ["requestBody"])["x-max-bytes"]
    pad = draw(st.integers(limit + 1, limit + 4096))
    body = json.dumps({"session_secret": vsess["secret"], "names": ["s:a"],
                       "pad": "p" * pad}).encode()
    return h.Req("POST", f"/v1/sessions/{vid}/leases", body, JSON, False,
                 "batch body over 64 KiB", "/v1/sessions/{id}/leases", None, True, "acquire")
