#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Build step: docs/openapi.yaml -> a C source holding it as compact JSON.

    openapi-embed.py IN.yaml OUT.c

The YAML must load as plain JSON data (mappings with string keys, lists,
strings, numbers, booleans, null): anything YAML adds beyond JSON (dates,
integer keys such as an unquoted 200) is refused, so that the served JSON
and the YAML say exactly the same thing.  The bytes are written as an
array initializer (ISO C caps string literals at 4095 characters)."""
import json
import os
import sys

import yaml


def check(node, where="$"):
    if isinstance(node, dict):
        for k, v in node.items():
            if not isinstance(k, str):
                raise SystemExit(f"openapi-embed: non-string key {k!r} at {where}")
            check(v, f"{where}.{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            check(v, f"{where}[{i}]")
    elif node is not None and not isinstance(node, (str, int, float, bool)):
        raise SystemExit(f"openapi-embed: {type(node).__name__} at {where} is not JSON")


def main():
    src, dst = sys.argv[1], sys.argv[2]
    with open(src, encoding="utf-8") as f:
        doc = yaml.safe_load(f)
    check(doc)
    data = json.dumps(doc, ensure_ascii=False, separators=(",", ":"),
                      allow_nan=False).encode("utf-8")
    lines = []
    for i in range(0, len(data), 16):
        lines.append("    " + ",".join(str(b) for b in data[i:i + 16]) + ",")
    out = ("/* Generated from docs/openapi.yaml by scripts/openapi-embed.py; "
           "do not edit. */\n"
           "#include \"api/openapi.h\"\n\n"
           "const unsigned char tn_openapi_json[] = {\n" + "\n".join(lines) + "\n    0};\n"
           f"const size_t tn_openapi_json_len = {len(data)};\n")
    with open(dst + ".tmp", "w", encoding="ascii") as f:
        f.write(out)
    os.replace(dst + ".tmp", dst)


if __name__ == "__main__":
    main()
