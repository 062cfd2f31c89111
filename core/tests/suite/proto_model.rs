//! Core's Rust model against the spec's proto: every message, field and enum value of
//! `spec/1.0.1/a2a.proto` (as `tests/data/proto-model.json`, which the one generator,
//! tools/generate.py, writes from it) must be read and written back by the
//! model. For each model type, samples with every field set (one per member of each oneof) go
//! through `normalize` (read, validate, write canonical ProtoJSON); every field given must come
//! back. A field the model does not know would be dropped, and the test names it.

use a2a_native::model::TaskState;
use a2a_native::model::dynamic::{TYPE_NAMES, normalize};
use serde_json::{Map, Value, json};

struct Proto {
    messages: Map<String, Value>,
    enums: Map<String, Value>,
}

fn proto() -> Proto {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/proto-model.json");
    let digest: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let object = |k: &str| digest[k].as_object().unwrap().clone();
    Proto { messages: object("messages"), enums: object("enums") }
}

/// A value a validating reader accepts for a field of `type_name` named `field`.
fn scalar(type_name: &str, field: &str) -> Option<Value> {
    let lower = field.to_ascii_lowercase();
    Some(match type_name {
        "string" if lower.ends_with("url") || lower == "url" => json!("https://agent.example.com/a2a"),
        "string" if field == "protocolVersion" => json!("1.0"),
        "string" if field == "protocolBinding" => json!("JSONRPC"),
        "string" if field == "location" => json!("header"),
        "string" if lower.contains("mediatype") || lower.ends_with("modes") => json!("text/plain"),
        "string" => json!(format!("{field}-1")),
        "bytes" => json!("AAEC"),
        "bool" => json!(true),
        "int32" | "uint32" | "sint32" | "fixed32" => json!(3),
        "int64" | "uint64" => json!("3"),
        "double" | "float" => json!(1.5),
        "google.protobuf.Struct" => json!({"k": "v"}),
        "google.protobuf.Value" => json!({"k": ["v", 1]}),
        "google.protobuf.Timestamp" => json!("2026-01-02T03:04:05.000Z"),
        "google.protobuf.Empty" => json!({}),
        _ => return None,
    })
}

/// A sample of message `name` with every field set; `variant` picks the member of each oneof.
fn sample(p: &Proto, name: &str, variant: usize, depth: usize) -> Value {
    let fields = p.messages[name].as_object().unwrap();
    let mut oneofs: std::collections::BTreeMap<&str, Vec<&str>> = Default::default();
    for (field, f) in fields {
        if let Some(o) = f["oneof"].as_str() {
            oneofs.entry(o).or_default().push(field);
        }
    }
    let mut out = Map::new();
    for (field, f) in fields {
        if let Some(o) = f["oneof"].as_str() {
            let members = &oneofs[o];
            if members[variant % members.len()] != field {
                continue;
            }
        }
        let t = f["type"].as_str().unwrap().trim_start_matches("lf.a2a.v1.");
        let one = if let Some(v) = scalar(t, field) {
            v
        } else if let Some(values) = p.enums.get(t) {
            values[1].clone() // the first value after UNSPECIFIED
        } else if p.messages.contains_key(t) {
            if depth > 6 {
                continue;
            }
            sample(p, t, variant, depth + 1)
        } else {
            panic!("{name}.{field}: unknown type {t}")
        };
        let value = if f["map"].as_bool().unwrap() {
            json!({"key": one})
        } else if f["repeated"].as_bool().unwrap() {
            json!([one])
        } else {
            one
        };
        out.insert(field.clone(), value);
    }
    Value::Object(out)
}

/// The paths of `given` that `got` lacks.
fn missing(given: &Value, got: &Value, path: &str, out: &mut Vec<String>) {
    match (given, got) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in a {
                match b.get(k) {
                    Some(w) => missing(v, w, &format!("{path}.{k}"), out),
                    None => out.push(format!("{path}.{k}")),
                }
            }
        }
        (Value::Array(a), Value::Array(b)) if !a.is_empty() => match b.first() {
            Some(w) => missing(&a[0], w, &format!("{path}[0]"), out),
            None => out.push(format!("{path}[0]")),
        },
        _ => {}
    }
}

#[test]
fn every_proto_field_is_read_and_written_by_the_model() {
    let p = proto();
    let mut problems = Vec::new();
    for name in TYPE_NAMES {
        assert!(p.messages.contains_key(*name), "{name} is a model type but not a proto message");
        for variant in 0..6 {
            let given = sample(&p, name, variant, 0);
            match normalize(name, given.clone()) {
                Ok(got) => {
                    let mut lost = Vec::new();
                    missing(&given, &got, name, &mut lost);
                    problems.extend(lost.into_iter().map(|path| format!("{path}: dropped by the model")));
                }
                Err(e) => problems.push(format!("{name} (variant {variant}): {e}\n  sample: {given}")),
            }
        }
    }
    problems.sort();
    problems.dedup();
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
}

#[test]
fn every_message_of_the_proto_is_reached_by_a_model_type() {
    let p = proto();
    let mut reached = std::collections::BTreeSet::new();
    fn walk(p: &Proto, name: &str, reached: &mut std::collections::BTreeSet<String>) {
        if !reached.insert(name.to_owned()) {
            return;
        }
        for f in p.messages[name].as_object().unwrap().values() {
            let t = f["type"].as_str().unwrap().trim_start_matches("lf.a2a.v1.");
            if p.messages.contains_key(t) {
                walk(p, t, reached);
            }
        }
    }
    for name in TYPE_NAMES {
        walk(&p, name, &mut reached);
    }
    let unreached: Vec<&String> = p.messages.keys().filter(|m| !reached.contains(*m)).collect();
    assert!(unreached.is_empty(), "proto messages no model type reaches: {unreached:?}");
}

#[test]
fn every_task_state_of_the_proto_is_a_model_state() {
    let p = proto();
    for value in p.enums["TaskState"].as_array().unwrap() {
        let name = value.as_str().unwrap();
        assert!(TaskState::from_name(name).is_some(), "TaskState {name} is missing from the model");
    }
    for value in p.enums["Role"].as_array().unwrap() {
        let v: Result<a2a_native::model::Role, _> = serde_json::from_value(value.clone());
        assert!(v.is_ok(), "Role {value} is missing from the model");
    }
}
