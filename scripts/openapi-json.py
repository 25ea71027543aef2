#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Build step: docs/openapi.yaml -> the same document as compact JSON.

    openapi-json.py IN.yaml OUT.json

The YAML must load as plain JSON data (mappings with string keys, lists,
strings, numbers, booleans, null): anything YAML adds beyond JSON (dates,
integer keys such as an unquoted 200) is refused, so that the served JSON
and the YAML say exactly the same thing.  cmake/TnEmbed.cmake then builds
the JSON into tenured, served at GET /v1/openapi.json."""
import json
import os
import sys

import yaml


def check(node, where="$"):
    if isinstance(node, dict):
        for k, v in node.items():
            if not isinstance(k, str):
                raise SystemExit(f"openapi-json: non-string key {k!r} at {where}")
            check(v, f"{where}.{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            check(v, f"{where}[{i}]")
    elif node is not None and not isinstance(node, (str, int, float, bool)):
        raise SystemExit(f"openapi-json: {type(node).__name__} at {where} is not JSON")


def main():
    src, dst = sys.argv[1], sys.argv[2]
    with open(src, encoding="utf-8") as f:
        doc = yaml.safe_load(f)
    check(doc)
    data = json.dumps(doc, ensure_ascii=False, separators=(",", ":"),
                      allow_nan=False).encode("utf-8")
    with open(dst + ".tmp", "wb") as f:
        f.write(data)
    os.replace(dst + ".tmp", dst)


if __name__ == "__main__":
    main()
