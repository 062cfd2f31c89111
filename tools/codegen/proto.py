"""The one reader of the spec's proto (``spec/1.0.1/a2a.proto``) and of core's error table
(``core/error-table.json``), for every emitter; and the proto's digest, the data core's model
test reads (``core/tests/data/proto-model.json``)."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent.parent
PROTO = "spec/1.0.1/a2a.proto"
ERROR_TABLE = REPO / "core" / "error-table.json"
DIGEST = REPO / "core" / "tests" / "data" / "proto-model.json"

FIELD = re.compile(
    r"^(?P<label>repeated\s+|optional\s+)?(?:map<\s*(?P<k>[\w.]+)\s*,\s*(?P<v>[\w.]+)\s*>|(?P<type>[\w.]+))"
    r"\s+(?P<name>\w+)\s*=\s*\d+\s*(?P<opts>\[.*\])?\s*;"
)


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def doc_lines(comments: list[str]) -> list[str]:
    """The comment lines worth showing a binding's user: not linter directives (``protolint:``
    lines, ``(-- ... --)`` API-linter notes)."""
    out, skipping = [], False
    for c in comments:
        skipping = skipping or "(--" in c
        if not skipping and not c.startswith("protolint:"):
            out.append(c)
        if "--)" in c:
            skipping = False
    return out


def parse(text: str) -> dict[str, Any]:
    """Messages and enums in declaration order (see ``render_digest`` for the shape). A doc is the
    run of ``//`` lines right above a declaration; a blank or code line in between drops it."""
    messages: dict[str, dict[str, dict[str, Any]]] = {}
    enums: dict[str, list[str]] = {}
    docs: dict[str, list[str]] = {}
    stack: list[tuple[str, str]] = []  # (kind, name)
    comments: list[str] = []
    for raw in re.sub(r"/\*.*?\*/", "", text, flags=re.S).splitlines():
        line = raw.strip()
        if line.startswith("//"):
            comments.append(line[2:].strip())
            continue
        line = line.split("//", 1)[0].strip()
        doc, comments = doc_lines(comments), []
        if not line:
            continue
        m = re.match(r"^(message|enum|oneof|service)\s+(\w+)\s*\{", line)
        if m:
            kind, name = m.groups()
            stack.append((kind, name))
            if kind == "message":
                messages[name], docs[name] = {}, doc
            elif kind == "enum":
                enums[name], docs[name] = [], doc
            continue
        if line.startswith(("rpc ", "option")) and line.endswith("{"):
            stack.append(("other", ""))
            continue
        if line.startswith("}"):
            if stack:
                stack.pop()
            continue
        if not stack:
            continue
        kind, name = stack[-1]
        owner = next((n for k, n in reversed(stack) if k == "message"), None)
        if kind == "enum":
            e = re.match(r"^(\w+)\s*=", line)
            if e:
                enums[name].append(e.group(1))
                docs[f"{name}.{e.group(1)}"] = doc
        elif kind in ("message", "oneof") and owner:
            f = FIELD.match(line)
            if f:
                label = (f.group("label") or "").strip()
                messages[owner][camel(f.group("name"))] = {
                    "name": f.group("name"),
                    "type": f.group("v") or f.group("type"),
                    "repeated": label == "repeated",
                    "optional": label == "optional",
                    "map": bool(f.group("k")),
                    "oneof": name if kind == "oneof" else None,
                    "required": "REQUIRED" in (f.group("opts") or ""),
                    "doc": doc,
                }
    return {"messages": messages, "enums": enums, "docs": docs}


def read() -> dict[str, Any]:
    """The vendored proto, parsed, with its path and SHA-256 under ``proto``: its digest."""
    raw = (REPO / PROTO).read_bytes()
    return {**parse(raw.decode("utf-8")), "proto": {"path": PROTO, "sha256": hashlib.sha256(raw).hexdigest()}}


def render_digest(digest: dict[str, Any]) -> str:
    """The proto as data, in declaration order, for core's model test (``proto_model.rs``):

    - ``messages``: message -> ProtoJSON field name -> ``name`` (proto), ``type`` (proto; a map's
      value type), ``repeated``, ``optional``, ``map``, ``oneof`` (its name or null),
      ``required`` (REQUIRED), ``doc`` (comment lines);
    - ``enums``: enum -> value names;
    - ``docs``: the comment lines of each message, enum and enum value (``Enum.VALUE``);
    - ``proto``: the proto's path and SHA-256, so that a reader can tell this file is stale.
    """
    return json.dumps(digest, indent=1) + "\n"


def error_rows() -> list[dict[str, Any]]:
    """Core's error table (kept current by core's error_table test): one dict per error, with
    ``kind``, ``name``, ``jsonrpcCode``, ``httpStatus``, ``grpcStatus``, ``reason`` and
    ``defaultMessage``."""
    rows = json.loads(ERROR_TABLE.read_text(encoding="utf-8"))
    if not rows:
        raise SystemExit(f"generate.py: no error table rows in {ERROR_TABLE.relative_to(REPO)}")
    return rows
