//! Runs tests/vectors/rest: every HTTP+JSON route with and without a tenant, path decoding,
//! query and body handling, and every error (404, 405, 400).

use crate::common;

use a2a_native::request::Method;
use a2a_native::rest;
use serde_json::Value;

#[test]
fn rest_vectors() {
    let mut failures = Vec::new();
    let mut count = 0;
    for (file, doc) in common::vector_files("rest") {
        for case in doc["cases"].as_array().unwrap_or_else(|| panic!("{file}: cases")) {
            count += 1;
            if let Err(why) = rest::vectors::check(case) {
                failures.push(format!("{file}/{}: {why}", case["name"].as_str().unwrap()));
            }
        }
    }
    assert!(count > 0, "no rest vectors found");
    assert!(failures.is_empty(), "{} of {count} rest vectors failed:\n{}", failures.len(), failures.join("\n"));
    println!("{count} rest vectors passed");
}

#[test]
fn every_operation_has_a_route_vector_with_and_without_tenant() {
    let mut seen = std::collections::BTreeSet::new();
    for (_, doc) in common::vector_files("rest") {
        for case in doc["cases"].as_array().unwrap() {
            if let Some(op) = case["expected"].get("operation").and_then(Value::as_str) {
                seen.insert((op.to_owned(), case["expected"]["params"].get("tenant").is_some()));
            }
        }
    }
    for m in Method::ALL {
        for tenant in [false, true] {
            assert!(seen.contains(&(m.as_str().to_owned(), tenant)), "{m} without a vector (tenant: {tenant})");
        }
    }
}
