//! The SSE decoder on arbitrary bytes, fed in chunks whose sizes the input also chooses:
//! it must never panic, and never hold more than its event-size bound.
#![no_main]

use a2a_native::sse::SseDecoder;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&split, rest)) = data.split_first() else { return };
    let mut decoder = SseDecoder::new(256);
    let step = usize::from(split).max(1);
    for chunk in rest.chunks(step) {
        for outcome in decoder.push(chunk) {
            if let Ok(event) = outcome {
                assert!(event.data.len() <= 256 * 4, "event larger than the bound");
            }
        }
    }
    let _ = decoder.finish();
});
