//! Runs tests/vectors/jsonrpc: request envelopes of every method, id and error path, and the
//! responses a client reads (checked by `jsonrpc::vectors`, as every binding checks them).

use crate::common;

use a2a_native::jsonrpc;
use serde_json::Value;

#[test]
fn jsonrpc_vectors() {
    let mut failures = Vec::new();
    let mut count = 0;
    for (file, doc) in common::vector_files("jsonrpc") {
        let kind = doc["kind"].as_str().unwrap_or_else(|| panic!("{file}: kind"));
        for case in doc["cases"].as_array().unwrap_or_else(|| panic!("{file}: cases")) {
            count += 1;
            let name = format!("{file}/{}", case["name"].as_str().unwrap());
            let result = jsonrpc::vectors::check(kind, case);
            if let Err(why) = result {
                failures.push(format!("{name}: {why}"));
            }
        }
    }
    assert!(count > 0, "no jsonrpc vectors found");
    assert!(failures.is_empty(), "{} of {count} jsonrpc vectors failed:\n{}", failures.len(), failures.join("\n"));
    println!("{count} jsonrpc vectors passed");
}

#[test]
fn every_method_has_a_vector() {
    let mut seen = std::collections::BTreeSet::new();
    for (_, doc) in common::vector_files("jsonrpc") {
        for case in doc["cases"].as_array().unwrap() {
            if let Some(m) = case["expected"].get("method").and_then(Value::as_str) {
                seen.insert(m.to_owned());
            }
        }
    }
    let missing: Vec<_> = jsonrpc::Method::ALL.iter().filter(|m| !seen.contains(m.as_str())).collect();
    assert!(missing.is_empty(), "methods without a valid vector: {missing:?}");
}
