//! Runs tests/vectors/model: every model type's round trips and invalid inputs.

use crate::common;

use a2a_native::model::dynamic;
use std::collections::BTreeSet;

#[test]
fn model_vectors() {
    let mut failures = Vec::new();
    let mut covered = BTreeSet::new();
    let mut count = 0;
    for (file, doc) in common::vector_files("model") {
        for group in doc["groups"].as_array().expect("groups") {
            let ty = group["type"].as_str().expect("type");
            for case in group["valid"].as_array().unwrap() {
                count += 1;
                let name = format!("{file}/{ty}/{}", case["name"].as_str().unwrap());
                let expected = case.get("canonical").unwrap_or(&case["input"]);
                match dynamic::normalize(ty, case["input"].clone()) {
                    Ok(out) if &out == expected => {
                        covered.insert(ty.to_owned());
                    }
                    Ok(out) => failures.push(format!("{name}: got {out}\n  expected {expected}")),
                    Err(e) => failures.push(format!("{name}: unexpected error {e}")),
                }
            }
            for case in group["invalid"].as_array().unwrap() {
                count += 1;
                let name = format!("{file}/{ty}/{}", case["name"].as_str().unwrap());
                let want = &case["error"];
                match dynamic::normalize(ty, case["input"].clone()) {
                    Ok(out) => failures.push(format!("{name}: accepted, gave {out}")),
                    Err(e) => {
                        let field = e.violations.first().map(|v| v.field.as_str());
                        if i64::from(e.code()) != want["code"].as_i64().unwrap() || field != want["field"].as_str() {
                            failures
                                .push(format!("{name}: got code {} field {field:?} ({e}); expected {want}", e.code()));
                        }
                    }
                }
            }
        }
    }
    let missing: Vec<_> = dynamic::TYPE_NAMES.iter().filter(|t| !covered.contains(**t)).collect();
    assert!(missing.is_empty(), "types without a passing valid vector: {missing:?}");
    assert!(failures.is_empty(), "{} of {count} model vectors failed:\n{}", failures.len(), failures.join("\n"));
    println!("{count} model vectors passed");
}
