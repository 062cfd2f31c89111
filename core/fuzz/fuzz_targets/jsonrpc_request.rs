//! The JSON-RPC request path a server runs on every body: envelope, then the 1.0 typed
//! params. Any input must give a request or a spec error response, never a panic; and a
//! parsed request must serialise back into a request that parses to the same thing.
#![no_main]

use a2a_native::jsonrpc;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(envelope) = jsonrpc::parse_envelope(data) else { return };
    let Ok(call) = jsonrpc::parse_v10(envelope) else { return };
    if let Some(id) = &call.id {
        let again = jsonrpc::request_for(id, &call.request);
        let reparsed = jsonrpc::parse_request(&again).expect("our own request must parse");
        assert_eq!(reparsed.request, call.request);
    }
});
