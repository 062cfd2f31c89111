#!/usr/bin/env python3
"""Generates ``src/models_gen.rs``: the A2A 1.0 models as uniffi records and enums, and their
ProtoJSON conversions, from the spec's proto (``spec/1.0.1/a2a.proto``) as read by its digest,
``core/tests/data/proto-model.json``, which only ``bindings-python/tools/generate.py`` writes (one
proto parser for every binding); a digest that no longer matches the proto stops this script.

Kotlin and Swift types are in turn generated from these records by uniffi, so the proto is the
only hand-kept definition. Mapping (proto -> Rust record field):

- ``string`` / ``bool`` / ``int32``: the Rust scalar; ``bytes``: ``Vec<u8>`` (base64 on the wire).
- ``optional`` scalars and non-REQUIRED messages and enums: ``Option<T>``; REQUIRED messages and
  enums: ``T``; REQUIRED strings keep their type but are not defaulted in Kotlin/Swift.
- ``repeated``: ``Vec<T>``; ``map<string, X>``: ``HashMap<String, X>``.
- ``google.protobuf.Struct`` / ``Value``: ``String`` holding JSON text; ``Timestamp``: RFC 3339 text.
- a ``oneof``: ``Option<MessageOneof>``, an enum whose variants carry one named field.

Usage: ``python3 tools/generate.py [--check]``; ``--check`` fails (exit 1) when the committed
file differs from what the proto gives.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
CRATE = HERE.parent
OUT = CRATE / "src" / "models_gen.rs"
REPO = CRATE.parent
DIGEST = REPO / "core" / "tests" / "data" / "proto-model.json"

# Foreign-facing renames: Swift's concurrency `Task` would be shadowed by a record named Task.
RENAMES = {"Task": "A2ATask"}
# Only the scalar types the A2A proto uses; another one stops the generator (add its helpers
# to src/json.rs first: int64 would be i64 written as a JSON string, as ProtoJSON does).
SCALARS = {
    "string": "String", "bool": "bool", "int32": "i32", "bytes": "Vec<u8>",
    "google.protobuf.Struct": "String", "google.protobuf.Value": "String",
    "google.protobuf.Timestamp": "String",
}
# How each scalar is read/written: the helper pair in src/json.rs.
CODEC = {
    "string": "string", "google.protobuf.Timestamp": "string", "bool": "boolean",
    "int32": "int32", "bytes": "bytes",
    "google.protobuf.Struct": "json_object", "google.protobuf.Value": "json_value",
}


@dataclass
class Field:
    name: str  # proto snake_case
    json: str  # ProtoJSON camelCase
    type: str  # proto type (map value type for maps)
    label: str  # "", "repeated", "optional", "map"
    required: bool
    oneof: str | None


@dataclass
class Message:
    name: str
    fields: list[Field] = field(default_factory=list)


def read_digest() -> tuple[dict[str, Message], dict[str, list[str]]]:
    """The proto's messages and enums, in declaration order, from its digest; refused when the
    proto has changed since the digest was written."""
    digest = json.loads(DIGEST.read_text())
    proto = digest["proto"]
    if hashlib.sha256((REPO / proto["path"]).read_bytes()).hexdigest() != proto["sha256"]:
        raise SystemExit(
            f"{DIGEST.relative_to(REPO)} does not match {proto['path']} (the proto changed): "
            "run bindings-python/tools/generate.py"
        )
    messages: dict[str, Message] = {}
    for name, fields in digest["messages"].items():
        messages[name] = Message(name)
        for key, f in fields.items():
            label = "map" if f["map"] else "repeated" if f["repeated"] else "optional" if f["optional"] else ""
            messages[name].fields.append(Field(f["name"], key, f["type"], label, f["required"], f["oneof"]))
    return messages, digest["enums"]


def pascal(snake: str) -> str:
    return "".join(p[:1].upper() + p[1:].lower() for p in snake.split("_"))


def rust_name(proto: str) -> str:
    return RENAMES.get(proto, proto)


class Gen:
    def __init__(self, messages: dict[str, Message], enums: dict[str, list[str]]):
        self.messages, self.enums = messages, enums

    def base(self, t: str) -> str:
        return SCALARS.get(t) or rust_name(t.split(".")[-1])

    def read_fn(self, t: str) -> str:
        """A `fn(&Value, &str) -> Result<T>` expression reading one value of proto type `t`."""
        if t in CODEC:
            return f"j::{CODEC[t]}"
        if t in self.messages or t in self.enums:
            return f"{rust_name(t)}::read"
        raise SystemExit(f"unsupported proto type {t}")

    def write_expr(self, t: str, value: str, path: str) -> str:
        """A `Result<Value>` expression writing `value` (a reference) of proto type `t`."""
        if t in CODEC:
            return f"j::{CODEC[t]}_to({value}, {path})"
        return f"{value.removeprefix('&')}.write({path})"

    def field_type(self, f: Field) -> str:
        b = self.base(f.type)
        if f.label == "repeated":
            return f"Vec<{b}>"
        if f.label == "map":
            return f"HashMap<String, {b}>"
        message_or_enum = f.type in self.messages or f.type in self.enums
        if f.label == "optional" or (message_or_enum and not f.required):
            return f"Option<{b}>"
        if f.type == "google.protobuf.Struct" or f.type == "google.protobuf.Timestamp":
            return f"Option<{b}>"
        return b

    def enum(self, name: str, values: list[str]) -> list[str]:
        prefix = re.sub(r"(?<!^)(?=[A-Z])", "_", name).upper() + "_"
        variants = [(v, pascal(v[len(prefix):] if v.startswith(prefix) else v)) for v in values]
        out = [
            f"/// `{name}` of the proto; ProtoJSON writes the value's full name (`{values[0]}`).",
            "#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, uniffi::Enum)]",
            f"pub enum {name} {{",
        ]
        out += [f"    {v}," for _, v in variants]
        out += ["}", "", f"impl {name} {{", "    /// The ProtoJSON name.", "    pub fn proto_name(self) -> &'static str {", "        match self {"]
        out += [f'            Self::{v} => "{p}",' for p, v in variants]
        out += ["        }", "    }", "", "    /// Reads a name or a number, as ProtoJSON readers accept both."]
        out += ["    pub fn read(value: &Value, path: &str) -> Result<Self> {", "        match value {"]
        for i, (p, v) in enumerate(variants):
            out.append(f'            Value::String(s) if s == "{p}" => Ok(Self::{v}),')
            out.append(f"            Value::Number(n) if n.as_i64() == Some({i}) => Ok(Self::{v}),")
        out += [f'            _ => Err(j::invalid(path, "is not a {name}")),', "        }", "    }", ""]
        out += ["    pub fn write(&self, _path: &str) -> Result<Value> {", "        Ok(Value::String(self.proto_name().into()))", "    }", "}", ""]
        return out

    def oneof(self, msg: Message, group: str, members: list[Field]) -> list[str]:
        name = msg.name + pascal(group)
        out = [
            f"/// The `{group}` oneof of `{msg.name}`: exactly one of these is set.",
            "#[derive(Debug, Clone, PartialEq, uniffi::Enum)]",
            f"pub enum {name} {{",
        ]
        out += [f"    {pascal(f.name)} {{ {f.name}: {self.base(f.type)} }}," for f in members]
        out += ["}", "", f"impl {name} {{"]
        out += ["    fn read(m: &Map<String, Value>, path: &str) -> Result<Option<Self>> {"]
        for f in members:
            # A Value member may be JSON null (NullValue): there, null is set, not absent.
            lookup = "m.get(" if f.type == "google.protobuf.Value" else "j::present(m, "
            out.append(f'        if let Some(v) = {lookup}"{f.json}") {{')
            out.append(f'            let {f.name} = {self.read_fn(f.type)}(v, &j::at(path, "{f.json}"))?;')
            out.append(f"            return Ok(Some(Self::{pascal(f.name)} {{ {f.name} }}));")
            out.append("        }")
        out += ["        Ok(None)", "    }", ""]
        out += ["    fn write(&self, m: &mut Map<String, Value>, path: &str) -> Result<()> {", "        let (key, value) = match self {"]
        for f in members:
            path = f'&j::at(path, "{f.json}")'
            out.append(f'            Self::{pascal(f.name)} {{ {f.name} }} => ("{f.json}", {self.write_expr(f.type, f.name, path)}?),')
        out += ["        };", "        m.insert(key.into(), value);", "        Ok(())", "    }", "}", ""]
        return out

    def read_field(self, f: Field) -> str:
        r = self.read_fn(f.type)
        key = f'"{f.json}"'
        if f.label == "repeated":
            return f"j::opt(m, {key}, path, |v, p| j::list(v, p, {r}))?.unwrap_or_default()"
        if f.label == "map":
            return f"j::opt(m, {key}, path, |v, p| j::map(v, p, {r}))?.unwrap_or_default()"
        ty = self.field_type(f)
        if ty.startswith("Option<"):
            return f"j::opt(m, {key}, path, {r})?"
        if f.type in self.messages or f.type in self.enums:
            return f"j::req(m, {key}, path, {r})?"
        return f"j::opt(m, {key}, path, {r})?.unwrap_or_default()"

    def write_field(self, f: Field) -> str:
        path = f'&j::at(path, "{f.json}")'
        key = f'"{f.json}"'
        # REQUIRED members are always written; implicit-presence ones only when not default.
        put = "j::put_always" if f.required else "j::put"
        if f.label == "repeated":
            item = self.write_expr(f.type, "x", "p")
            return f"{put}(&mut m, {key}, j::list_to(&self.{f.name}, {path}, |x, p| {item})?);"
        if f.label == "map":
            item = self.write_expr(f.type, "x", "p")
            return f"{put}(&mut m, {key}, j::map_to(&self.{f.name}, {path}, |x, p| {item})?);"
        if self.field_type(f).startswith("Option<"):
            return (
                f"if let Some(x) = &self.{f.name} {{ j::put_always(&mut m, {key}, "
                f"{self.write_expr(f.type, 'x', path)}?); }}"
            )
        return f"{put}(&mut m, {key}, {self.write_expr(f.type, f'&self.{f.name}', path)}?);"

    def message(self, msg: Message) -> list[str]:
        name = rust_name(msg.name)
        groups: dict[str, list[Field]] = {}
        for f in msg.fields:
            if f.oneof:
                groups.setdefault(f.oneof, []).append(f)
        out: list[str] = []
        for group, members in groups.items():
            out += self.oneof(msg, group, members)
        doc = f"`{msg.name}` of the proto" + (f" (named {name} for Swift's sake)" if name != msg.name else "")
        out += [f"/// {doc}.", "#[derive(Debug, Clone, PartialEq, uniffi::Record)]", f"pub struct {name} {{"]
        seen: set[str] = set()
        for f in msg.fields:
            if f.oneof:
                if f.oneof not in seen:
                    seen.add(f.oneof)
                    out += ["    #[uniffi(default)]", f"    pub {f.oneof}: Option<{msg.name}{pascal(f.oneof)}>,"]
                continue
            ty = self.field_type(f)
            defaulted = ty.startswith(("Option<", "Vec<", "HashMap<")) or not f.required
            if f.label == "" and ty == self.base(f.type) and (f.type in self.enums or f.type in self.messages):
                defaulted = False  # a REQUIRED message or enum (uniffi has no enum default literal)
            if defaulted:
                out.append("    #[uniffi(default)]")
            out.append(f"    pub {f.name}: {ty},")
        out += ["}", "", f"impl ProtoJson for {name} {{", "    fn read(value: &Value, path: &str) -> Result<Self> {"]
        out.append("        let m = j::object(value, path)?;" if msg.fields else "        j::object(value, path)?;")
        out.append("        Ok(Self {")
        seen.clear()
        for f in msg.fields:
            if f.oneof:
                if f.oneof not in seen:
                    seen.add(f.oneof)
                    out.append(f"            {f.oneof}: {msg.name}{pascal(f.oneof)}::read(m, path)?,")
                continue
            out.append(f"            {f.name}: {self.read_field(f)},")
        out += ["        })", "    }", "", "    fn write(&self, path: &str) -> Result<Value> {"]
        out.append("        let mut m = Map::new();" if msg.fields else "        let _ = path;\n        let m = Map::new();")
        seen.clear()
        for f in msg.fields:
            if f.oneof:
                if f.oneof not in seen:
                    seen.add(f.oneof)
                    out.append(f"        if let Some(x) = &self.{f.oneof} {{ x.write(&mut m, path)?; }}")
                continue
            out.append(f"        {self.write_field(f)}")
        out += ["        Ok(Value::Object(m))", "    }", "}", ""]
        return out

    def render(self, source: str) -> str:
        out = [
            f"// GENERATED by tools/generate.py from {source}: do not edit.",
            "// The A2A 1.0 models as uniffi records and enums, with their ProtoJSON conversions.",
            "#![allow(clippy::all, clippy::pedantic)]",
            "",
            "use crate::errors::Result;",
            "use crate::json::{self as j, ProtoJson};",
            "use serde_json::{Map, Value};",
            "use std::collections::HashMap;",
            "",
        ]
        for name, values in self.enums.items():
            out += self.enum(name, values)
        for msg in self.messages.values():
            out += self.message(msg)
        out += [
            "/// Reads `value` as the record of proto message `type_name` and writes it back: the",
            "/// records' own conversions, for the shared vectors.",
            "pub fn round_trip(type_name: &str, value: &Value) -> Result<Value> {",
            "    match type_name {",
        ]
        for msg in self.messages.values():
            out.append(f'        "{msg.name}" => {rust_name(msg.name)}::read(value, "")?.write(""),')
        out += ['        other => Err(j::invalid("", &format!("{other:?} is not an A2A message type"))),', "    }", "}"]
        return "\n".join(out) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="fail when src/models_gen.rs is stale")
    args = ap.parse_args()
    messages, enums = read_digest()
    text = Gen(messages, enums).render("spec/1.0.1/a2a.proto")
    if args.check:
        if not OUT.exists() or OUT.read_text() != text:
            print(f"{OUT.relative_to(CRATE)} is stale: run python3 tools/generate.py", file=sys.stderr)
            return 1
        print(f"{OUT.relative_to(CRATE)} is up to date ({len(messages)} messages, {len(enums)} enums)")
        return 0
    OUT.write_text(text)
    print(f"wrote {OUT.relative_to(CRATE)} ({len(messages)} messages, {len(enums)} enums)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
