//! Parse + serialise a Task with 10 messages and 5 artifacts: our models (with REQUIRED-field
//! validation) side by side with the official Rust crate `a2a-lf` on the same bytes.

use a2a_native::model::{self, Task};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::json;
use std::hint::black_box;
use std::time::Duration;

fn task_json() -> Vec<u8> {
    let message = |i: usize| {
        json!({
            "messageId": format!("7f1c9d2e-0000-4000-8000-{i:012}"),
            "contextId": "ctx-7f1c9d2e",
            "taskId": "task-7f1c9d2e",
            "role": if i.is_multiple_of(2) { "ROLE_USER" } else { "ROLE_AGENT" },
            "parts": [
                {"text": format!("Turn {i}: please summarise the quarterly figures for the northern region and list the outliers.")},
                {"data": {"turn": i, "confidence": 0.93, "tags": ["finance", "q3"]}, "mediaType": "application/json"}
            ],
            "metadata": {"source": "chat", "seq": i}
        })
    };
    let artifact = |i: usize| {
        json!({
            "artifactId": format!("artifact-{i}"),
            "name": format!("report-{i}"),
            "description": "Generated summary",
            "parts": [
                {"text": "Revenue grew 12% quarter over quarter, driven by the northern region. ".repeat(4)},
                {"raw": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==", "mediaType": "image/png", "filename": "chart.png"},
                {"url": "https://files.example.com/reports/q3.pdf", "mediaType": "application/pdf"}
            ]
        })
    };
    let task = json!({
        "id": "task-7f1c9d2e",
        "contextId": "ctx-7f1c9d2e",
        "status": {"state": "TASK_STATE_COMPLETED", "timestamp": "2026-11-21T10:30:00.000Z",
                   "message": message(99)},
        "artifacts": (0..5).map(artifact).collect::<Vec<_>>(),
        "history": (0..10).map(message).collect::<Vec<_>>(),
        "metadata": {"priority": "high"}
    });
    serde_json::to_vec(&task).unwrap()
}

fn bench(c: &mut Criterion) {
    let bytes = task_json();
    // Both sides must read the same document, or the comparison means nothing.
    let ours: Task = model::parse(&bytes).expect("our model reads the task");
    let theirs: a2a::Task = serde_json::from_slice(&bytes).expect("a2a-lf reads the task");
    assert_eq!(ours.history.len(), 10);
    assert_eq!(theirs.history.as_ref().map(Vec::len), Some(10));

    let mut group = c.benchmark_group("task_10_messages_5_artifacts");
    group.throughput(Throughput::Bytes(bytes.len() as u64));
    group.measurement_time(Duration::from_secs(4));
    group.bench_function("a2a-native parse+validate+serialise", |b| {
        b.iter(|| {
            let task: Task = model::parse(black_box(&bytes)).unwrap();
            black_box(serde_json::to_vec(&task).unwrap())
        })
    });
    group.bench_function("a2a-lf parse+serialise (reference)", |b| {
        b.iter(|| {
            let task: a2a::Task = serde_json::from_slice(black_box(&bytes)).unwrap();
            black_box(serde_json::to_vec(&task).unwrap())
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
