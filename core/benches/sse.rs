//! SSE codec throughput on a realistic A2A stream: 1000 JSON-RPC `statusUpdate` events of a few
//! hundred bytes, decoded from 4 KiB chunks (a typical socket read) and encoded into one buffer.

use a2a_native::sse::{SseDecoder, SseEvent, encode_into};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::Duration;

const EVENTS: usize = 1000;
const CHUNK: usize = 4096;

fn events() -> Vec<SseEvent> {
    (0..EVENTS)
        .map(|i| {
            SseEvent::data(format!(
                r#"{{"jsonrpc":"2.0","id":1,"result":{{"statusUpdate":{{"taskId":"2f1c6b9e-4d7a-4b8e-9c3f-{i:012}","contextId":"8a0d3c5e-1f2b-4c6d-8e9f-0a1b2c3d4e5f","status":{{"state":"TASK_STATE_WORKING","message":{{"messageId":"m-{i}","role":"ROLE_AGENT","parts":[{{"text":"Step {i}: fetched the quarterly report and extracted the revenue table."}}]}},"timestamp":"2025-10-28T10:29:00.500Z"}},"metadata":{{"seq":{i}}}}}}}}}"#
            ))
        })
        .collect()
}

fn stream(events: &[SseEvent]) -> Vec<u8> {
    let mut out = String::new();
    for event in events {
        encode_into(event, &mut out);
    }
    out.into_bytes()
}

fn codec(c: &mut Criterion) {
    let events = events();
    let bytes = stream(&events);
    let mut group = c.benchmark_group("sse");
    group.throughput(Throughput::Bytes(bytes.len() as u64));

    group.bench_function("decode_4k_chunks", |b| {
        let mut out = Vec::with_capacity(16);
        b.iter(|| {
            let mut decoder = SseDecoder::new(1 << 20);
            let mut count = 0;
            for chunk in black_box(&bytes).chunks(CHUNK) {
                decoder.push_into(chunk, &mut out);
                count += out.drain(..).filter(Result::is_ok).count();
            }
            assert_eq!(count, EVENTS);
        })
    });

    // The same bytes and chunking through `eventsource-stream`, the parser behind
    // reqwest-eventsource: the reference our decoder is compared with in one run.
    group.bench_function("decode_4k_chunks eventsource-stream (reference)", |b| {
        use eventsource_stream::Eventsource;
        use futures::StreamExt;
        b.iter(|| {
            let chunks = black_box(&bytes).chunks(CHUNK).map(|c| Ok::<_, std::convert::Infallible>(c.to_vec()));
            let count = futures::executor::block_on(
                futures::stream::iter(chunks).eventsource().filter(|e| std::future::ready(e.is_ok())).count(),
            );
            assert_eq!(count, EVENTS);
        })
    });

    group.bench_function("encode", |b| {
        let mut out = String::with_capacity(bytes.len());
        b.iter(|| {
            out.clear();
            for event in black_box(&events) {
                encode_into(event, &mut out);
            }
            black_box(out.len())
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1)).sample_size(20);
    targets = codec
}
criterion_main!(benches);
