#!/usr/bin/env python3
"""Generates the typed Python surface that must never be kept by hand:

- ``python/a2a_native/models.py``: one ``TypedDict`` per message and one ``Literal`` alias per
  enum of the A2A 1.0 proto (``spec/1.0.1/a2a.proto``), in their ProtoJSON form (camelCase
  keys, enums by name, int64 as str, bytes as base64 str). REQUIRED fields are ``Required``; the
  rest may be left out.
- ``python/a2a_native/errors.py``: ``A2AError`` and one subclass per row of core's error table
  (the ``table!`` in ``core/error-table.json``).
- ``core/tests/data/proto-model.json``: the proto as data (see ``render_digest``). This is the
  one proto reader: core's model test and the Node and uniffi generators read this digest.

Usage: ``python tools/generate.py [--proto PATH] [--check]``; ``--check`` fails when a generated
file is out of date.
"""

from __future__ import annotations

import argparse
import builtins
import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PKG = HERE.parent / "python" / "a2a_native"
REPO = HERE.parent.parent
DEFAULT_PROTO = REPO / "spec" / "1.0.1" / "a2a.proto"
ERROR_TABLE = REPO / "core" / "error-table.json"
# The proto as data, for core's model test (core/tests/suite/proto_model.rs) and the other generators.
DIGEST = REPO / "core" / "tests" / "data" / "proto-model.json"

SCALARS = {
    "string": "str", "bytes": "str", "bool": "bool", "int32": "int", "uint32": "int",
    "sint32": "int", "fixed32": "int", "int64": "str", "uint64": "str", "double": "float",
    "float": "float", "google.protobuf.Struct": "dict[str, Any]", "google.protobuf.Value": "Any",
    "google.protobuf.Timestamp": "str", "google.protobuf.Empty": "dict[str, Any]",
}
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


def parse_proto(text: str) -> dict[str, Any]:
    """The digest (see render_digest): messages and enums in declaration order. A doc is the run
    of ``//`` lines right above a declaration; a blank or code line in between drops it."""
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


def pytype(t: str) -> str:
    return SCALARS.get(t, t.split(".")[-1])


def render_digest(model: dict[str, Any], proto: bytes) -> str:
    """The proto as data, in declaration order, for core's model test and for the Node and uniffi
    generators (which read it instead of parsing the proto):

    - ``messages``: message -> ProtoJSON field name -> ``name`` (proto), ``type`` (proto; a map's
      value type), ``repeated``, ``optional``, ``map``, ``oneof`` (its name or null),
      ``required`` (REQUIRED), ``doc`` (comment lines);
    - ``enums``: enum -> value names;
    - ``docs``: the comment lines of each message, enum and enum value (``Enum.VALUE``);
    - ``proto``: the proto's path and SHA-256, so that its readers can tell this file is stale.
    """
    source = {"path": "spec/1.0.1/a2a.proto", "sha256": hashlib.sha256(proto).hexdigest()}
    return json.dumps({**model, "proto": source}, indent=1) + "\n"


def render_models(model: dict[str, Any], source: str) -> str:
    messages, enums = model["messages"], model["enums"]
    out = [
        f'"""A2A 1.0 models in their ProtoJSON form. GENERATED by tools/generate.py from {source}:',
        'do not edit. The Rust core reads and validates these dicts; these types are for checkers."""',
        "",
        "from __future__ import annotations",
        "",
        "from typing import Any, Literal, Required, TypeAlias, TypedDict",
        "",
        "__all__ = [",
    ]
    out += [f'    "{n}",' for n in sorted(list(enums) + list(messages) + ["TaskStateName"])]
    out += ["]", ""]
    for name, values in enums.items():
        out.append(f"{name}: TypeAlias = Literal[")
        out += [f'    "{v}",' for v in values]
        out += ["]", ""]
    # The short names core also reads where a caller names a state (its one table of state
    # spellings: `ctx.status("working")`, `list_tasks({"status": "input_required"})`).
    short = [v.removeprefix("TASK_STATE_").lower() for v in enums["TaskState"] if not v.endswith("UNSPECIFIED")]
    out.append('#: A state by its ProtoJSON name or its short form ("working", "input_required").')
    out.append("TaskStateName: TypeAlias = TaskState | Literal[")
    out += [f'    "{v}",' for v in short]
    out += ["]", ""]
    for name, fields in messages.items():
        out += ["", f"class {name}(TypedDict, total=False):"]
        if not fields:
            out.append("    pass")
        for field, f in fields.items():
            t = pytype(f["type"])
            # A request is what a caller writes; the client reads its states by either name.
            t = "TaskStateName" if t == "TaskState" and name.endswith("Request") else t
            t = f"dict[str, {t}]" if f["map"] else f"list[{t}]" if f["repeated"] else t
            out.append(f"    {field}: Required[{t}]" if f["required"] else f"    {field}: {t}")
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def render_errors(rows) -> str:
    out = [
        '"""A2A errors as Python exceptions. GENERATED by tools/generate.py from core\'s error table',
        '(core/error-table.json): do not edit."""',
        "",
        "from __future__ import annotations",
        "",
        "import builtins",
        "from typing import Any, ClassVar",
        "",
        "",
        "class A2AError(Exception):",
        '    """Base of every A2A error: ``code`` (JSON-RPC code), ``name`` and ``reason`` (ErrorInfo)',
        '    of the spec\'s table, plus what the peer sent: ``metadata`` and field ``violations``."""',
        "",
        "    code: ClassVar[int] = -32603",
        '    name: ClassVar[str] = "A2AError"',
        '    reason: ClassVar[str] = "INTERNAL"',
        "    http_status: ClassVar[int] = 500",
        "",
        "    def __init__(",
        "        self,",
        "        message: str | None = None,",
        "        *,",
        "        metadata: dict[str, Any] | None = None,",
        "        violations: list[tuple[str, str]] | None = None,",
        "    ) -> None:",
        "        self.message = message if message is not None else self.default_message",
        "        self.metadata = metadata or {}",
        "        self.violations = violations or []",
        "        super().__init__(self.message)",
        "",
        '    default_message: ClassVar[str] = "Internal error"',
        "",
        "    def __repr__(self) -> str:",
        '        return f"{type(self).__name__}(code={self.code}, message={self.message!r})"',
        "",
    ]
    names = []  # (spec name, Python class name)
    for kind, name, code, http, grpc, reason, msg in rows:
        # A spec name that is also a Python built-in (TimeoutError) gets the A2A prefix, so that
        # `from a2a_native import *` never shadows the built-in.
        cls = f"A2A{name}" if hasattr(builtins, name) else name
        names.append((name, cls))
        # Bad arguments are also what Python code catches as ValueError (options included), and
        # a prefixed one is also the built-in it is named after (`except TimeoutError` catches
        # an A2A timeout as it catches asyncio's).
        if name == "InvalidParamsError":
            bases = "A2AError, ValueError"
        elif cls != name:
            bases = f"A2AError, builtins.{name}"
        else:
            bases = "A2AError"
        out += [
            "",
            f"class {cls}({bases}):",
            f'    """{msg} ({code}, {reason})."""',
            "",
            f"    code: ClassVar[int] = {code}",
            f'    name: ClassVar[str] = "{name}"',
            f'    reason: ClassVar[str] = "{reason}"',
            f"    http_status: ClassVar[int] = {http}",
            f'    default_message: ClassVar[str] = "{msg}"',
            "",
        ]
    out += [
        "",
        "_BY_NAME: dict[str, type[A2AError]] = {",
        *[f'    "{n}": {c},' for n, c in names],
        "}",
        "",
        "# The spec's names of the prefixed classes, as aliases (not exported by `import *`).",
        *[f"{n} = {c}  # noqa: A001" for n, c in names if n != c],
        "",
        "",
        "def _from_native(",
        "    name: str, message: str, metadata: dict[str, Any], violations: list[tuple[str, str]]",
        ") -> A2AError:",
        '    """Called by the native module to raise a core error."""',
        "    return _BY_NAME.get(name, A2AError)(message, metadata=metadata, violations=violations)",
        "",
        "",
        "__all__ = [",
        '    "A2AError",',
        *[f'    "{c}",' for _, c in names],
        "]",
    ]
    return "\n".join(out) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--proto", type=Path, default=DEFAULT_PROTO)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    outputs: dict[Path, str] = {}
    if args.proto.exists():
        model = parse_proto(args.proto.read_text())
        outputs[PKG / "models.py"] = render_models(model, "spec/1.0.1/a2a.proto")
        outputs[DIGEST] = render_digest(model, args.proto.read_bytes())
    else:
        print(f"generate.py: {args.proto} not found; models.py left as it is", file=sys.stderr)
    # core/error-table.json: core's error table, kept current by core's error_table test.
    rows = [
        (r["kind"], r["name"], r["jsonrpcCode"], r["httpStatus"], r["grpcStatus"], r["reason"], r["defaultMessage"])
        for r in json.loads(ERROR_TABLE.read_text())
    ]
    if not rows:
        print(f"generate.py: no error table rows in {ERROR_TABLE}", file=sys.stderr)
        return 1
    outputs[PKG / "errors.py"] = render_errors(rows)
    stale = [p for p, text in outputs.items() if not p.exists() or p.read_text() != text]
    if args.check:
        for p in stale:
            print(f"generate.py: {p.relative_to(REPO)} is out of date; run tools/generate.py", file=sys.stderr)
        return 1 if stale else 0
    for p in stale:
        p.write_text(text := outputs[p])
        print(f"wrote {p.relative_to(REPO)} ({len(text.splitlines())} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
