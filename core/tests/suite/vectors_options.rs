//! tests/vectors/options: server and client options, read by core as every binding hands them
//! over (accepted, or refused with InvalidParams naming the field).

use a2a_native::client::ClientOptions;
use a2a_native::error::ErrorKind;
use a2a_native::server::host::{HostedServer, ServerOptions};
use serde_json::Value;

fn load(name: &str) -> Value {
    let path = format!("{}/../tests/vectors/options/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// Runs every case of `file` through `make`; failures are listed together.
fn run(file: &str, make: impl Fn(&Value, Value) -> Result<(), a2a_native::A2AError>) {
    let doc = load(file);
    let cases = doc["cases"].as_array().unwrap();
    assert!(cases.len() > 5, "{file}");
    let mut failures = Vec::new();
    for case in cases {
        let (name, options) = (case["name"].as_str().unwrap(), case["options"].clone());
        match (make(&doc["card"], options), case.get("error").and_then(Value::as_str)) {
            (Ok(()), None) => {}
            (Ok(()), Some(field)) => failures.push(format!("{name}: accepted, expected an error on {field}")),
            (Err(e), None) => failures.push(format!("{name}: refused: {}", e.message)),
            (Err(e), Some(field)) => {
                if e.kind != ErrorKind::InvalidParams || !e.message.starts_with(field) {
                    failures.push(format!("{name}: {:?} {:?}, expected InvalidParams on {field}", e.kind, e.message));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn server_options_vectors() {
    run("server.json", |card, options| HostedServer::new(card.clone(), ServerOptions::from_value(options)?).map(drop));
}

#[test]
fn client_options_vectors() {
    run("client.json", |card, options| {
        let card = a2a_native::model::parse_value(card.clone())?;
        ClientOptions::from_value(options)?.builder()?.from_card(card).map(drop)
    });
}
