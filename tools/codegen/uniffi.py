"""uniffi (Kotlin and Swift): ``bindings-uniffi/src/models_gen.rs``, the A2A 1.0 models as uniffi
records and enums, and their conversions to and from core's model types (``ToCore`` /
``ToRecord`` of ``src/convert.rs``). Kotlin and Swift types are in turn generated from these
records by uniffi, so the proto is the only hand-kept definition. Mapping (proto -> Rust record
field):

- ``string`` / ``bool`` / ``int32``: the Rust scalar; ``bytes``: ``Vec<u8>`` (base64 on the wire).
- ``optional`` scalars and non-REQUIRED messages and enums: ``Option<T>``; REQUIRED messages and
  enums: ``T``; REQUIRED strings keep their type but are not defaulted in Kotlin/Swift.
- ``repeated``: ``Vec<T>``; ``map<string, X>``: ``HashMap<String, X>``.
- ``google.protobuf.Struct`` / ``Value``: ``String`` holding JSON text; ``Timestamp``: RFC 3339 text.
- a ``oneof``: ``Option<MessageOneof>``, an enum whose variants carry one named field.

Conversions go member by member (core's type of each member picks the impl, so JSON text
becomes a ``Struct`` or a ``Value`` as core declares it); a message that is only a oneof is an
enum in core, and a oneof with no member set is refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .proto import PROTO, REPO

OUT = REPO / "bindings-uniffi" / "src" / "models_gen.rs"


def outputs(model: dict[str, Any], errors: list[dict[str, Any]]) -> dict[Path, str]:
    del errors  # uniffi's errors are core's, through src/errors.rs
    return {OUT: Gen(messages_of(model), model["enums"]).render(PROTO)}


# Foreign-facing renames: Swift's concurrency `Task` would be shadowed by a record named Task.
RENAMES = {"Task": "A2ATask"}
# Only the scalar types the A2A proto uses; another one stops the generator (add its
# conversions to src/convert.rs first).
SCALARS = {
    "string": "String", "bool": "bool", "int32": "i32", "bytes": "Vec<u8>",
    "google.protobuf.Struct": "String", "google.protobuf.Value": "String",
    "google.protobuf.Timestamp": "String",
}
# Core's names where they differ from the proto's (Rust's casing of acronyms).
CORE_NAMES = {"APIKeySecurityScheme": "ApiKeySecurityScheme", "HTTPAuthSecurityScheme": "HttpAuthSecurityScheme"}
# Core's variant names for a oneof's members where they are not the member's name in PascalCase.
CORE_VARIANTS = {
    "SecurityScheme": {
        "api_key_security_scheme": "ApiKey", "http_auth_security_scheme": "HttpAuth",
        "oauth2_security_scheme": "OAuth2", "open_id_connect_security_scheme": "OpenIdConnect",
        "mtls_security_scheme": "MutualTls",
    },
}
# Members of core models that are not proto fields (never on the wire), and what a record gives them.
CORE_ONLY_FIELDS = {"TaskPushNotificationConfig": ["v03: false"]}
# Applied to a converted optional member of this type: UNSPECIFIED as a filter
# (ListTasksRequest.status) means no filter, as core reads it from JSON.
FILTERS = {"TaskState": ".filter(|s: &model::TaskState| *s != model::TaskState::Unspecified)"}


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


def messages_of(model: dict[str, Any]) -> dict[str, Message]:
    messages: dict[str, Message] = {}
    for name, fields in model["messages"].items():
        messages[name] = Message(name)
        for key, f in fields.items():
            label = "map" if f["map"] else "repeated" if f["repeated"] else "optional" if f["optional"] else ""
            messages[name].fields.append(Field(f["name"], key, f["type"], label, f["required"], f["oneof"]))
    return messages


def pascal(snake: str) -> str:
    return "".join(p[:1].upper() + p[1:].lower() for p in snake.split("_"))


def rust_name(proto: str) -> str:
    return RENAMES.get(proto, proto)


class Gen:
    def __init__(self, messages: dict[str, Message], enums: dict[str, list[str]]):
        self.messages, self.enums = messages, enums

    def base(self, t: str) -> str:
        if t in SCALARS:
            return SCALARS[t]
        if t in self.messages or t in self.enums:
            return rust_name(t)
        raise SystemExit(f"unsupported proto type {t}")

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

    def to_core(self, f: Field, value: str) -> str:
        """The core value of member `f` (held in `value`); bytes are the same on both sides."""
        if f.type == "bytes":
            return value
        expr = f'{value}.to_core(&p.field("{f.json}"))?'
        return expr + FILTERS[f.type] if f.type in FILTERS and self.field_type(f).startswith("Option<") else expr

    def to_record(self, f: Field, value: str) -> str:
        return value if f.type == "bytes" else f"{value}.to_record()"

    def enum(self, name: str, values: list[str]) -> list[str]:
        prefix = re.sub(r"(?<!^)(?=[A-Z])", "_", name).upper() + "_"
        variants = [pascal(v[len(prefix):] if v.startswith(prefix) else v) for v in values]
        out = [
            f"/// `{name}` of the proto (`{values[0]}`, ...).",
            "#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, uniffi::Enum)]",
            f"pub enum {name} {{",
        ]
        out += [f"    {v}," for v in variants]
        out += ["}", "", f"impl ToCore<model::{name}> for {name} {{"]
        out += [f"    fn to_core(self, _: &Path) -> Result<model::{name}> {{", "        Ok(match self {"]
        out += [f"            Self::{v} => model::{name}::{v}," for v in variants]
        out += ["        })", "    }", "}", "", f"impl ToRecord<{name}> for model::{name} {{"]
        out += [f"    fn to_record(self) -> {name} {{", "        match self {"]
        out += [f"            Self::{v} => {name}::{v}," for v in variants]
        out += ["        }", "    }", "}", ""]
        return out

    def oneof_enum(self, msg: Message, group: str, members: list[Field]) -> list[str]:
        name = msg.name + pascal(group)
        out = [
            f"/// The `{group}` oneof of `{msg.name}`: exactly one of these is set.",
            "#[derive(Debug, Clone, PartialEq, uniffi::Enum)]",
            f"pub enum {name} {{",
        ]
        out += [f"    {pascal(f.name)} {{ {f.name}: {self.base(f.type)} }}," for f in members]
        return out + ["}", ""]

    def oneof_to_core(self, msg: Message, group: str, members: list[Field], core_enum: str) -> list[str]:
        """A `match` giving the core enum of a oneof (held in `self.{group}`); none set is refused."""
        name = msg.name + pascal(group)
        variants = CORE_VARIANTS.get(msg.name, {})
        out = [f"match self.{group} {{"]
        for f in members:
            core = variants.get(f.name, pascal(f.name))
            out.append(f"    Some({name}::{pascal(f.name)} {{ {f.name} }}) => {core_enum}::{core}({self.to_core(f, f.name)}),")
        names = ", ".join(f.json for f in members)
        out.append(f'    None => return Err(invalid(p, "must have exactly one of {names} set")),')
        return out + ["}"]

    def oneof_to_record(self, msg: Message, group: str, members: list[Field], core_enum: str, value: str) -> list[str]:
        name = msg.name + pascal(group)
        variants = CORE_VARIANTS.get(msg.name, {})
        out = [f"Some(match {value} {{"]
        for f in members:
            core = variants.get(f.name, pascal(f.name))
            out.append(f"    {core_enum}::{core}(x) => {name}::{pascal(f.name)} {{ {f.name}: {self.to_record(f, 'x')} }},")
        return out + ["})"]

    def message(self, msg: Message) -> list[str]:
        name = rust_name(msg.name)
        core = f"model::{CORE_NAMES.get(msg.name, msg.name)}"
        groups: dict[str, list[Field]] = {}
        for f in msg.fields:
            if f.oneof:
                groups.setdefault(f.oneof, []).append(f)
        out: list[str] = []
        for group, members in groups.items():
            out += self.oneof_enum(msg, group, members)
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
        out += ["}", ""]

        indent = lambda lines, n: [" " * n + line for line in lines]  # noqa: E731
        into = [f"impl ToCore<{core}> for {name} {{", f"    fn to_core(self, p: &Path) -> Result<{core}> {{"]
        back = [f"impl ToRecord<{name}> for {core} {{", f"    fn to_record(self) -> {name} {{"]
        if len(groups) == 1 and all(f.oneof for f in msg.fields):
            # A message that is only a oneof is an enum in core.
            (group, members), = groups.items()
            lines = self.oneof_to_core(msg, group, members, core)
            into += indent(["Ok(" + lines[0]] + lines[1:-1] + ["})"], 8)
            lines = self.oneof_to_record(msg, group, members, core, "self")
            back += [f"        {name} {{"] + indent([f"{group}: " + lines[0]] + lines[1:-1] + [lines[-1] + ","], 12)
            back += ["        }"]
        else:
            into += [f"        Ok({core} {{"] if msg.fields else ["        let _ = p;", f"        Ok({core} {{"]
            back += [f"        {name} {{"]
            seen.clear()
            for f in msg.fields:
                if f.oneof:
                    if f.oneof in seen:
                        continue
                    seen.add(f.oneof)
                    members = groups[f.oneof]
                    core_enum = f"model::{msg.name}{pascal(f.oneof)}"
                    lines = self.oneof_to_core(msg, f.oneof, members, core_enum)
                    into += indent([f"{f.oneof}: " + lines[0]] + lines[1:-1] + [lines[-1] + ","], 12)
                    lines = self.oneof_to_record(msg, f.oneof, members, core_enum, f"self.{f.oneof}")
                    back += indent([f"{f.oneof}: " + lines[0]] + lines[1:-1] + [lines[-1] + ","], 12)
                    continue
                into.append(f"            {f.name}: {self.to_core(f, 'self.' + f.name)},")
                back.append(f"            {f.name}: {self.to_record(f, 'self.' + f.name)},")
            into += [f"            {extra}," for extra in CORE_ONLY_FIELDS.get(msg.name, [])]
            into += ["        })"]
            back += ["        }"]
        return out + into + ["    }", "}", ""] + back + ["    }", "}", ""]

    def render(self, source: str) -> str:
        out = [
            f"// GENERATED by tools/generate.py from {source}: do not edit.",
            "// The A2A 1.0 models as uniffi records and enums, and their conversions to and from core's.",
            "#![allow(clippy::all, clippy::pedantic)]",
            "",
            "use crate::convert::{Path, ToCore, ToRecord, invalid, through};",
            "use crate::errors::Result;",
            "use a2a_native::model;",
            "use serde_json::Value;",
            "use std::collections::HashMap;",
            "",
        ]
        for name, values in self.enums.items():
            out += self.enum(name, values)
        for msg in self.messages.values():
            out += self.message(msg)
        out += [
            "/// `value` read as the core model of proto message `type_name`, taken through its record",
            "/// and back: for the shared vectors.",
            "pub fn round_trip(type_name: &str, value: Value) -> Result<Value> {",
            "    match type_name {",
        ]
        for msg in self.messages.values():
            core = f"model::{CORE_NAMES.get(msg.name, msg.name)}"
            out.append(f'        "{msg.name}" => through::<{core}, {rust_name(msg.name)}>(value),')
        out += ['        other => Err(invalid(&Path::TOP, &format!("{other:?} is not an A2A message type"))),', "    }", "}"]
        return "\n".join(out) + "\n"
