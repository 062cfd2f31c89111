//! libFuzzer's entry for `a2a_native_fuzz::grpc_request` (the body and what it checks are in src/lib.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| a2a_native_fuzz::grpc_request(data));
