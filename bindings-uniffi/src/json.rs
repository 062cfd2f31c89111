//! The ProtoJSON readers and writers the generated records (`models_gen.rs`) are made of.
//!
//! Records cross into the core as JSON (`model::parse_value` validates them there), so these
//! only check shapes; every failure is an `InvalidParams` error naming the JSON path.

use crate::errors::{A2aException, Result};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value};
use std::collections::HashMap;

/// A record's ProtoJSON form. `path` names the value in error messages (`""` = the top).
pub trait ProtoJson: Sized {
    fn read(value: &Value, path: &str) -> Result<Self>;
    fn write(&self, path: &str) -> Result<Value>;
}

pub fn invalid(path: &str, what: &str) -> A2aException {
    A2aException::from(a2a_native::A2AError::invalid_field(path, what))
}

/// `path.key` (or `key` at the top).
pub fn at(path: &str, key: &str) -> String {
    if path.is_empty() { key.to_owned() } else { format!("{path}.{key}") }
}

pub fn object<'a>(value: &'a Value, path: &str) -> Result<&'a Map<String, Value>> {
    value.as_object().ok_or_else(|| invalid(path, "must be an object"))
}

/// A member that is there and not `null` (ProtoJSON reads `null` as absent).
pub fn present<'a>(m: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    m.get(key).filter(|v| !v.is_null())
}

pub fn opt<T>(
    m: &Map<String, Value>,
    key: &str,
    path: &str,
    read: impl Fn(&Value, &str) -> Result<T>,
) -> Result<Option<T>> {
    present(m, key).map(|v| read(v, &at(path, key))).transpose()
}

pub fn req<T>(m: &Map<String, Value>, key: &str, path: &str, read: impl Fn(&Value, &str) -> Result<T>) -> Result<T> {
    let p = at(path, key);
    read(present(m, key).ok_or_else(|| invalid(&p, "is required"))?, &p)
}

/// Writes a member unless it holds its type's default (implicit presence).
pub fn put(m: &mut Map<String, Value>, key: &str, value: Value) {
    let default = match &value {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
    };
    if !default {
        m.insert(key.to_owned(), value);
    }
}

pub fn put_always(m: &mut Map<String, Value>, key: &str, value: Value) {
    m.insert(key.to_owned(), value);
}

pub fn list<T>(value: &Value, path: &str, read: impl Fn(&Value, &str) -> Result<T>) -> Result<Vec<T>> {
    let items = value.as_array().ok_or_else(|| invalid(path, "must be an array"))?;
    items.iter().enumerate().map(|(i, v)| read(v, &format!("{path}[{i}]"))).collect()
}

pub fn list_to<T>(items: &[T], path: &str, write: impl Fn(&T, &str) -> Result<Value>) -> Result<Value> {
    items.iter().enumerate().map(|(i, x)| write(x, &format!("{path}[{i}]"))).collect::<Result<_>>().map(Value::Array)
}

pub fn map<T>(value: &Value, path: &str, read: impl Fn(&Value, &str) -> Result<T>) -> Result<HashMap<String, T>> {
    object(value, path)?.iter().map(|(k, v)| Ok((k.clone(), read(v, &at(path, k))?))).collect()
}

pub fn map_to<T>(items: &HashMap<String, T>, path: &str, write: impl Fn(&T, &str) -> Result<Value>) -> Result<Value> {
    // Sorted keys: the same record always gives the same JSON text.
    let mut keys: Vec<&String> = items.keys().collect();
    keys.sort();
    keys.into_iter().map(|k| Ok((k.clone(), write(&items[k], &at(path, k))?))).collect::<Result<_>>().map(Value::Object)
}

pub fn string(value: &Value, path: &str) -> Result<String> {
    value.as_str().map(str::to_owned).ok_or_else(|| invalid(path, "must be a string"))
}
pub fn string_to(value: &str, _path: &str) -> Result<Value> {
    Ok(Value::String(value.to_owned()))
}

pub fn boolean(value: &Value, path: &str) -> Result<bool> {
    value.as_bool().ok_or_else(|| invalid(path, "must be a boolean"))
}
pub fn boolean_to(value: &bool, _path: &str) -> Result<Value> {
    Ok(Value::Bool(*value))
}

pub fn int32(value: &Value, path: &str) -> Result<i32> {
    // ProtoJSON readers accept a number or a decimal string.
    let n = match value {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.parse::<i64>().ok(),
        _ => None,
    };
    let n = n.ok_or_else(|| invalid(path, "must be an integer"))?;
    i32::try_from(n).map_err(|_| invalid(path, "is out of the int32 range"))
}
pub fn int32_to(value: &i32, _path: &str) -> Result<Value> {
    Ok(Value::from(*value))
}

pub fn bytes(value: &Value, path: &str) -> Result<Vec<u8>> {
    let text = value.as_str().ok_or_else(|| invalid(path, "must be a base64 string"))?;
    STANDARD.decode(text).map_err(|_| invalid(path, "is not valid base64"))
}
pub fn bytes_to(value: &[u8], _path: &str) -> Result<Value> {
    Ok(Value::String(STANDARD.encode(value)))
}

/// `google.protobuf.Value`: any JSON value, kept in the record as JSON text.
pub fn json_value(value: &Value, _path: &str) -> Result<String> {
    Ok(value.to_string())
}
pub fn json_value_to(text: &str, path: &str) -> Result<Value> {
    serde_json::from_str(text).map_err(|e| invalid(path, &format!("is not JSON text: {e}")))
}

/// `google.protobuf.Struct`: a JSON object, kept in the record as JSON text.
pub fn json_object(value: &Value, path: &str) -> Result<String> {
    object(value, path)?;
    Ok(value.to_string())
}
pub fn json_object_to(text: &str, path: &str) -> Result<Value> {
    let value = json_value_to(text, path)?;
    object(&value, path)?;
    Ok(value)
}
