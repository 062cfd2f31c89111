//! The forms in which a 0.3 client receives a 1.0 card, and what a 0.3 verifier signs of them.
//!
//! A 0.3 client reads the public card as the 1.0 card *plus* its 0.3 fields ([`with_v03_fields`]),
//! and the extended card (`agent/getAuthenticatedExtendedCard`) in its plain 0.3 form
//! ([`answered_in_v03`]). a2a-sdk 0.3, the only 0.3 SDK that verifies card signatures, does not
//! check the JCS form of the 1.0 card (`signing::card_payload`): it reads the card into its own
//! 0.3 model and signs that ([`sdk_payload`]). So a signed card that declares a 0.3 interface
//! carries one more signature per such form ([`signed_payloads`]); every verifier (ours, the 1.x
//! SDKs', a2a-sdk 0.3's) accepts a card when any one of its signatures holds.

use super::{AgentCard as V03Card, PROTOCOL_VERSION};
use crate::error::Result;
use crate::model::{self, AgentCard};
use serde_json::{Map, Value};
use std::fmt::Write;

/// The card JSON served to every client: the 1.0 card, merged with its 0.3 form when it
/// declares a 0.3 interface (see `server::card`).
pub fn with_v03_fields(card: &AgentCard) -> Value {
    let mut served = model::to_value(card);
    if let Ok(compat) = V03Card::try_from(card.clone()) {
        let mut compat = model::to_value(&compat);
        if let Value::Object(obj) = &mut compat
            && obj.get("supportsAuthenticatedExtendedCard") != Some(&Value::Bool(true))
        {
            obj.remove("supportsAuthenticatedExtendedCard");
        }
        merge_under(&mut served, compat);
    }
    served
}

/// Adds what `extra` has and `base` lacks; `base` wins on conflicts.
fn merge_under(base: &mut Value, extra: Value) {
    match (base, extra) {
        (Value::Object(b), Value::Object(e)) => {
            for (k, v) in e {
                match b.get_mut(&k) {
                    Some(have) => merge_under(have, v),
                    None => {
                        b.insert(k, v);
                    }
                }
            }
        }
        (Value::Array(b), Value::Array(e)) => {
            for (have, v) in b.iter_mut().zip(e) {
                if have.is_object() && v.is_object() {
                    merge_under(have, v);
                }
            }
        }
        _ => {}
    }
}

/// The card as a 0.3 client that reached this server can use it. A card that declares no 0.3
/// interface (a 1.0-only card) still has its JSON-RPC and HTTP+JSON endpoints answer 0.3
/// calls (see `a2a serve --help`), so they are what its 0.3 form describes; a card that
/// declares 0.3 interfaces is taken at its word.
pub fn answered_in_v03(card: &AgentCard) -> Result<V03Card> {
    let mut card = card.clone();
    if !declares_v03(&card) {
        for interface in &mut card.supported_interfaces {
            if matches!(interface.protocol_binding.as_str(), "JSONRPC" | "HTTP+JSON") {
                interface.protocol_version = PROTOCOL_VERSION.to_owned();
            }
        }
    }
    V03Card::try_from(card)
}

fn declares_v03(card: &AgentCard) -> bool {
    card.supported_interfaces.iter().any(|i| i.protocol_version.starts_with("0.3"))
}

/// The payloads a 0.3 verifier checks for `card`, each once: for a card that declares a 0.3
/// interface, its public form and its extended form (they differ when the public one leaves
/// out a false `supportsAuthenticatedExtendedCard`). A 1.0-only card has none: a 0.3 client
/// cannot read its public form. A form that cannot be made (a 0.3 client could not read it
/// either) is left out: the 1.0 card is signed all the same.
pub fn signed_payloads(card: &AgentCard) -> Vec<Vec<u8>> {
    if !declares_v03(card) {
        return Vec::new();
    }
    let extended = answered_in_v03(card).and_then(|answered| sdk_payload(model::to_value(&answered)));
    let public = sdk_payload(with_v03_fields(card));
    let mut payloads = Vec::new();
    for payload in [extended, public].into_iter().flatten() {
        if !payloads.contains(&payload) {
            payloads.push(payload);
        }
    }
    payloads
}

/// The bytes a2a-sdk 0.3 signs and verifies for the card JSON `served`
/// (`canonicalize_agent_card`): the card read into the 0.3 model (so other members are
/// ignored), without `signatures` and without the members at their schema default
/// (`protocolVersion` "0.3.0", `preferredTransport` "JSONRPC", a security scheme's `type`);
/// then every empty string, list and object, and every null, removed at any depth; written
/// with sorted keys, no spaces, and only ASCII (Python's `json.dumps(sort_keys=True)`).
pub fn sdk_payload(served: Value) -> Result<Vec<u8>> {
    let card: V03Card = model::parse_value(served)?;
    let mut value = model::to_value(&card);
    if let Value::Object(obj) = &mut value {
        obj.remove("signatures");
        for (member, default) in [("protocolVersion", PROTOCOL_VERSION), ("preferredTransport", "JSONRPC")] {
            if obj.get(member).and_then(Value::as_str) == Some(default) {
                obj.remove(member);
            }
        }
        if let Some(Value::Object(schemes)) = obj.get_mut("securitySchemes") {
            for scheme in schemes.values_mut().filter_map(Value::as_object_mut) {
                scheme.remove("type");
            }
        }
    }
    let mut out = String::new();
    if let Some(value) = without_empty(value) {
        write_python_json(&value, &mut out);
    }
    Ok(out.into_bytes())
}

/// `value` without empty strings, lists and objects, nor nulls, at any depth; `None` when
/// nothing is left.
fn without_empty(value: Value) -> Option<Value> {
    match value {
        Value::Null => None,
        Value::String(s) if s.is_empty() => None,
        Value::Array(items) => {
            let items: Vec<Value> = items.into_iter().filter_map(without_empty).collect();
            (!items.is_empty()).then_some(Value::Array(items))
        }
        Value::Object(map) => {
            let map: Map<String, Value> = map.into_iter().filter_map(|(k, v)| Some((k, without_empty(v)?))).collect();
            (!map.is_empty()).then_some(Value::Object(map))
        }
        other => Some(other),
    }
}

/// JSON as Python's `json.dumps(value, separators=(',', ':'), sort_keys=True)` writes it: keys
/// in code point order, every character outside printable ASCII escaped (`\u00e9`, surrogate
/// pairs beyond the BMP), floats as Python's `repr`.
fn write_python_json(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) if n.is_f64() => write_python_float(n.as_f64().unwrap_or_default(), out),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => write_python_str(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_python_json(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            // Rust's `str` order is byte order, which for UTF-8 is code point order (Python's).
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (k, v)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_python_str(k, out);
                out.push(':');
                write_python_json(v, out);
            }
            out.push('}');
        }
    }
}

fn write_python_str(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            _ => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
        }
    }
    out.push('"');
}

/// Python's `repr` of a float: the shortest digits that read back the same (as Rust's), in
/// positional form when the decimal point falls within 16 digits (`100.0`, `0.0001`), else
/// in exponent form with a sign and at least two digits (`1e+16`, `1e-05`).
fn write_python_float(f: f64, out: &mut String) {
    let sci = format!("{f:e}"); // "-1.25e-7": shortest round-trip digits
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (sign, mantissa) = mantissa.strip_prefix('-').map_or(("", mantissa), |m| ("-", m));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let point = exp + 1; // digits before the decimal point
    out.push_str(sign);
    if (-3..=16).contains(&point) {
        if point <= 0 {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', point.unsigned_abs() as usize));
            out.push_str(&digits);
        } else {
            let point = point as usize;
            let (int, frac) = if digits.len() > point { digits.split_at(point) } else { (digits.as_str(), "") };
            out.push_str(int);
            out.extend(std::iter::repeat_n('0', point.saturating_sub(int.len())));
            out.push('.');
            out.push_str(if frac.is_empty() { "0" } else { frac });
        }
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let _ = write!(out, "e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.unsigned_abs());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn python(value: Value) -> String {
        let mut out = String::new();
        write_python_json(&value, &mut out);
        out
    }

    #[test]
    fn floats_and_strings_as_python_writes_them() {
        // Each expected text is what CPython's json.dumps writes for the same value.
        let cases = [
            (1.0, "1.0"),
            (100.0, "100.0"),
            (-0.0, "-0.0"),
            (0.5, "0.5"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1.25e-7, "1.25e-07"),
            (1e15, "1000000000000000.0"),
            (1e16, "1e+16"),
            (1.5e300, "1.5e+300"),
            (123.456, "123.456"),
            (-2.5e-5, "-2.5e-05"),
        ];
        for (f, want) in cases {
            assert_eq!(python(serde_json::json!(f)), want, "{f}");
        }
        assert_eq!(python(serde_json::json!(7)), "7");
        assert_eq!(python(serde_json::json!("é\"\\\n\u{1}\u{7f}😀~")), r#""\u00e9\"\\\n\u0001\u007f\ud83d\ude00~""#);
        assert_eq!(
            python(serde_json::json!({"b": 1, "a": [true, null], "é": 0})),
            r#"{"a":[true,null],"b":1,"\u00e9":0}"#
        );
    }

    /// a2a-sdk 0.3's own payloads for a card using every card member (the fixture says how
    /// they were made).
    #[test]
    fn payloads_match_a2a_sdk_0_3() {
        let fixture: Value =
            serde_json::from_str(include_str!("../../../tests/fixtures/v03-signed-card.json")).unwrap();
        let card: AgentCard = model::parse_value(fixture["card"].clone()).unwrap();
        let public = sdk_payload(with_v03_fields(&card)).unwrap();
        assert_eq!(String::from_utf8(public.clone()).unwrap(), fixture["public"].as_str().unwrap());
        let extended = sdk_payload(model::to_value(&answered_in_v03(&card).unwrap())).unwrap();
        assert_eq!(String::from_utf8(extended.clone()).unwrap(), fixture["extended"].as_str().unwrap());
        // Both differ (the public form leaves out a false supportsAuthenticatedExtendedCard),
        // so both are signed.
        assert_eq!(signed_payloads(&card), [extended, public]);
        // A 1.0-only card has no 0.3 signatures.
        let mut v1 = card.clone();
        v1.supported_interfaces.retain(|i| i.protocol_version == "1.0");
        assert!(signed_payloads(&v1).is_empty());
    }

    #[test]
    fn empty_values_go_at_every_depth() {
        let value = serde_json::json!({"a": "", "b": [[], {}, {"c": [""]}], "d": {"e": null}, "f": false, "g": 0});
        assert_eq!(without_empty(value), Some(serde_json::json!({"f": false, "g": 0})));
    }
}
