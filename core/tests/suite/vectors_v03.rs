//! Runs tests/vectors/v03: every case's 0.3 ↔ 1.0 conversion in the direction(s) it names, and
//! the invalid inputs with their expected error. Format: tests/vectors/v03/README.md.

use crate::common;

use a2a_native::model::v03;
use serde_json::Value;
use std::collections::BTreeSet;

/// Runs one conversion and compares with the expected JSON; `Err` describes the mismatch.
fn check(
    convert: fn(&str, Value) -> a2a_native::Result<Value>,
    ty: &str,
    input: &Value,
    want: &Value,
) -> Result<(), String> {
    match convert(ty, input.clone()) {
        Ok(got) if &got == want => Ok(()),
        Ok(got) => Err(format!("got      {got}\n  expected {want}")),
        Err(e) => Err(format!("unexpected error {e}")),
    }
}

#[test]
fn v03_vectors() {
    let mut failures = Vec::new();
    // Types with a passing case towards 1.0 / towards 0.3.
    let (mut up, mut down) = (BTreeSet::new(), BTreeSet::new());
    let mut count = 0;
    for (file, doc) in common::vector_files("v03") {
        for case in doc["cases"].as_array().unwrap_or_else(|| panic!("{file}: no cases")) {
            count += 1;
            let name = format!("{file}/{}", case["name"].as_str().expect("case name"));
            let ty = case["type"].as_str().unwrap_or_else(|| panic!("{name}: no type"));
            let direction = case["direction"].as_str().unwrap_or_default();
            if let Some(want) = case.get("error") {
                let result = match direction {
                    "to_v10" => v03::to_v10(ty, case["v03"].clone()),
                    "to_v03" => v03::to_v03(ty, case["v10"].clone()),
                    other => {
                        failures.push(format!("{name}: error cases need direction to_v10 or to_v03, not {other:?}"));
                        continue;
                    }
                };
                match result {
                    Ok(out) => failures.push(format!("{name}: accepted, gave {out}")),
                    Err(e) => {
                        let field = e.violations.first().map(|v| v.field.as_str());
                        if i64::from(e.code()) != want["code"].as_i64().unwrap() || field != want["field"].as_str() {
                            failures
                                .push(format!("{name}: got code {} field {field:?} ({e}); expected {want}", e.code()));
                        }
                    }
                }
                continue;
            }
            let (to_v10, to_v03) = match direction {
                "both" => (true, true),
                "to_v10" => (true, false),
                "to_v03" => (false, true),
                other => {
                    failures.push(format!("{name}: unknown direction {other:?}"));
                    continue;
                }
            };
            if to_v10 {
                match check(v03::to_v10, ty, &case["v03"], &case["v10"]) {
                    Ok(()) => _ = up.insert(ty.to_owned()),
                    Err(e) => failures.push(format!("{name} (0.3 → 1.0): {e}")),
                }
            }
            if to_v03 {
                match check(v03::to_v03, ty, &case["v10"], &case["v03"]) {
                    Ok(()) => _ = down.insert(ty.to_owned()),
                    Err(e) => failures.push(format!("{name} (1.0 → 0.3): {e}")),
                }
            }
        }
    }
    for ty in v03::TYPE_NAMES {
        if !up.contains(*ty) || !down.contains(*ty) {
            failures.push(format!("type {ty} lacks a passing case in each direction"));
        }
    }
    assert!(failures.is_empty(), "{} problems in {count} v03 vectors:\n{}", failures.len(), failures.join("\n"));
    println!("{count} v03 vectors passed");
}
