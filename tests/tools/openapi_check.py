#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Check HTTP answers of tenured against docs/openapi.yaml.

As a library (the property test):
    spec = Spec()                       # docs/openapi.yaml of this tree
    problems = spec.check_answer(method, target, status, headers, body)
    problems == []  ->  the answer is one the description allows

As a program (the shell tests, tests/integration/lib-server.sh): each
request `rq` makes is recorded in a directory as N.req (one line: method,
tab, target), N.hdrs (the answer's header block) and N.body; at the end
of the test

    openapi_check.py --log DIR

checks them all in one process and exits 1 naming each answer the
description does not allow.

What "allowed" means:
- the path matches a described path (the {name} segment is one raw
  segment) and the method is described for it, else the answer is one of
  the description's x-tenure-undescribed (otherPath: 404 not_found;
  otherMethod: 405 method_not_allowed with an Allow header naming the
  described methods, or a refusal that comes first);
- the status is one the operation describes (or one any request may get
  from the front end: x-tenure-undescribed anyRequest), and never a 5xx
  but 503 and 501 (a transfer coding other than chunked);
- the Content-Type is the described media type (no body: none described);
- the JSON body validates against the described schema (JSON Schema 2020-12
  plus "x-max-bytes": the UTF-8 length limit of a string);
- headers the response marks required (Retry-After, Allow) are present.
"""
import json
import os
import re
import sys
import urllib.parse

import jsonschema
import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DEFAULT_SPEC = os.path.join(ROOT, "docs", "openapi.yaml")
METHODS = ("get", "head", "post", "put", "patch", "delete", "options", "trace")


def _max_bytes(validator, limit, instance, schema):
    if isinstance(instance, str) and len(instance.encode("utf-8", "surrogatepass")) > limit:
        yield jsonschema.ValidationError(
            f"{instance[:40]!r}... is longer than {limit} UTF-8 bytes")


Validator = jsonschema.validators.extend(
    jsonschema.Draft202012Validator, {"x-max-bytes": _max_bytes})


class Spec:
    def __init__(self, path=DEFAULT_SPEC):
        with open(path, encoding="utf-8") as f:
            self.doc = yaml.safe_load(f)
        self.resolver = jsonschema.RefResolver(base_uri="", referrer=self.doc)
        # Described paths as regexes over the raw path: {x} is one segment.
        self.paths = []
        for template, item in self.doc["paths"].items():
            rx = "^" + re.sub(r"\\\{[^}]+\\\}", "([^/]*)", re.escape(template)) + "$"
            self.paths.append((re.compile(rx), template, item))

    # -- resolution ------------------------------------------------------
    def deref(self, node):
        while isinstance(node, dict) and "$ref" in node:
            _, node = self.resolver.resolve(node["$ref"])
        return node

    def schema_errors(self, schema, instance):
        v = Validator(schema, resolver=self.resolver)
        return [e.message for e in v.iter_errors(instance)]

    def operation(self, method, path):
        """(template, path item, operation or None); template None when
        no described path matches."""
        if path == "/v1/leases/":
            path = "/v1/leases"  # the collection also answers with a slash
        for rx, template, item in self.paths:
            if rx.match(path):
                return template, item, item.get(method.lower())
        return None, None, None

    def allowed_methods(self, item):
        return sorted(m.upper() for m in item if m in METHODS)

    def parameters(self, item, op):
        params = {}
        for p in list(item.get("parameters", [])) + list(op.get("parameters", [])):
            p = self.deref(p)
            params[(p["in"], p["name"])] = p
        return params

    # -- answers ---------------------------------------------------------
    def check_answer(self, method, target, status, headers, body):
        """Problems (strings) with one answer; [] when it is allowed.
        headers: dict with lower-case names.  body: bytes (for an event
        stream, what was read of it)."""
        path = urllib.parse.urlsplit(target).path
        template, item, op = self.operation(method, path)
        where = f"{method} {target} -> {status}"
        if status >= 500 and status not in (501, 503):
            return [f"{where}: server error {status}: {body[:200]!r}"]
        if str(status) in self.doc["x-tenure-undescribed"]["anyRequest"]:
            responses, what = self.doc["x-tenure-undescribed"]["anyRequest"], "any request"
        elif template is None:
            responses, what = self.doc["x-tenure-undescribed"]["otherPath"], "undescribed path"
        elif op is None:
            responses = self.doc["x-tenure-undescribed"]["otherMethod"]
            what = f"undescribed method on {template}"
            if status == 405:
                allow = headers.get("allow", "")
                want = self.allowed_methods(item)
                got = sorted(m.strip() for m in allow.split(",") if m.strip())
                if got != want:
                    return [f"{where}: Allow {allow!r}, described {want}"]
        else:
            responses, what = op["responses"], f"{method} {template}"
        if str(status) not in responses:
            return [f"{where}: status not described for {what} "
                    f"(described: {sorted(responses)}): {body[:200]!r}"]
        response = responses[str(status)]
        return [f"{where}: {p}" for p in
                self._check_response(self.deref(response), method, headers, body)]

    def _check_response(self, response, method, headers, body):
        problems = []
        for name, h in response.get("headers", {}).items():
            h = self.deref(h)
            if h.get("required") and name.lower() not in headers:
                problems.append(f"missing header {name}")
            elif name.lower() in headers and self.deref(h.get("schema", {})).get("type") == "integer":
                if not re.fullmatch(r"[0-9]+", headers[name.lower()].strip()):
                    problems.append(f"header {name} is not an integer")
        content = response.get("content")
        ctype = headers.get("content-type", "").split(";")[0].strip().lower()
        if method.upper() == "HEAD":
            return problems  # headers only; the body is not sent
        if not content:
            if body:
                problems.append(f"body where none is described: {body[:200]!r}")
            return problems
        if ctype not in content:
            problems.append(f"Content-Type {ctype!r}, described {sorted(content)}")
            return problems
        media = content[ctype]
        if ctype == "application/json":
            try:
                value = json.loads(body.decode("utf-8"))
            except (UnicodeDecodeError, ValueError) as e:
                return problems + [f"body is not JSON ({e}): {body[:200]!r}"]
            problems += self.schema_errors(media.get("schema", {}), value)
        elif ctype == "text/event-stream":
            problems += self._check_stream(media, body)
        return problems

    def _check_stream(self, media, body):
        """The part of an event stream that was read: SSE lines, each data
        line an Event."""
        problems = []
        event_schema = media.get("x-tenure-data", {})
        text = body.decode("utf-8", "replace")
        lines = text.split("\n")
        if lines and not text.endswith("\n"):
            lines = lines[:-1]  # a line cut by the end of the read
        for line in lines:
            if line == "" or line.startswith(":") or re.fullmatch(r"id: [0-9]+", line):
                continue
            if line.startswith("data: "):
                try:
                    value = json.loads(line[6:])
                except ValueError:
                    problems.append(f"event data is not JSON: {line!r}")
                    continue
                problems += self.schema_errors(event_schema, value)
            else:
                problems.append(f"unexpected event-stream line {line!r}")
        return problems

    # -- requests (for the property test) ----------------------------------
    def request_body_schema(self, method, template):
        op = self.doc["paths"][template][method.lower()]
        rb = self.deref(op.get("requestBody", {}))
        return rb.get("content", {}).get("application/json", {}).get("schema")

    def body_valid(self, method, template, value):
        schema = self.request_body_schema(method, template)
        return schema is not None and not self.schema_errors(schema, value)

    def param_schema(self, method, template, where, name):
        item = self.doc["paths"][template]
        p = self.parameters(item, item[method.lower()]).get((where, name))
        return self.deref(p["schema"]) if p else None


def parse_header_block(text):
    """The last header block of curl -D output: (status, {name: value})."""
    blocks = [b for b in re.split(r"\r?\n\r?\n", text) if b.strip()]
    if not blocks:
        return None, {}
    lines = blocks[-1].splitlines()
    m = re.match(r"HTTP/\S+ (\d{3})", lines[0])
    status = int(m.group(1)) if m else None
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return status, headers


def check_log(directory, spec):
    problems = []
    n = 0
    for entry in sorted(os.listdir(directory)):
        if not entry.endswith(".req"):
            continue
        stem = os.path.join(directory, entry[:-4])
        with open(stem + ".req", encoding="utf-8", errors="replace") as f:
            method, _, target = f.read().rstrip("\n").partition("\t")
        try:
            with open(stem + ".hdrs", encoding="latin-1") as f:
                status, headers = parse_header_block(f.read())
            with open(stem + ".body", "rb") as f:
                body = f.read()
        except FileNotFoundError:
            continue  # no answer (the test cut the connection)
        if status is None:
            continue
        n += 1
        problems += spec.check_answer(method, target, status, headers, body)
    return n, problems


def main():
    args = sys.argv[1:]
    if len(args) != 2 or args[0] != "--log":
        print("usage: openapi_check.py --log DIR", file=sys.stderr)
        return 2
    n, problems = check_log(args[1], Spec(os.environ.get("TN_OPENAPI", DEFAULT_SPEC)))
    for p in problems:
        print(f"openapi: {p}", file=sys.stderr)
    if problems:
        print(f"openapi: {len(problems)} of {n} answers are not as docs/openapi.yaml "
              "describes", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
