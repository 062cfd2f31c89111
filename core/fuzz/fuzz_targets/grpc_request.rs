//! The gRPC request path a server runs on every call: the body's framing, then the method's
//! protobuf message read as a typed request. Any input must give a request or a typed error,
//! never a panic; a request read must encode back to a message that reads the same.
#![no_main]

use a2a_native::grpc::{convert, frame};
use a2a_native::request::Method;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The first byte picks the method; the rest is the request body.
    let Some((&pick, body)) = data.split_first() else { return };
    let method = Method::ALL[usize::from(pick) % Method::ALL.len()];
    let Ok(message) = frame::single_message(body, 1 << 20) else { return };
    let Ok(request) = convert::decode_request(method, &message) else { return };
    let again = convert::encode_request(&request).expect("a request read must encode");
    assert_eq!(convert::decode_request(method, &again).expect("our own message must read"), request);
});
