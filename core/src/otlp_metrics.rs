//! OTLP metrics export: the same measurements as [`crate::metrics`] (which serves them as
//! Prometheus text), pushed to an OpenTelemetry collector over OTLP/HTTP (protobuf).
//!
//! Opt-in through OpenTelemetry's standard variables, as traces are ([`crate::telemetry`]):
//! export happens only when `OTEL_EXPORTER_OTLP_ENDPOINT` or
//! `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT` is set, unless `OTEL_SDK_DISABLED=true` or
//! `OTEL_METRICS_EXPORTER=none`. The SDK's periodic reader exports every
//! `OTEL_METRIC_EXPORT_INTERVAL` ms (default 60 s) from a thread of its own, each export bounded
//! by `OTEL_EXPORTER_OTLP_METRICS_TIMEOUT`: a collector down or slow never blocks a request.
//! The instruments aggregate in place (cumulative), so memory does not grow while it is down.
//!
//! Without export, recording costs one atomic load per measurement ([`instruments`] is `None`).
//! The instruments are process-wide (the exporter is): several servers in one process add up.

use opentelemetry::KeyValue;
use opentelemetry::metrics::{Counter, Histogram, MeterProvider as _, UpDownCounter};
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The instruments [`crate::metrics::Metrics`] records into when export is on.
pub(crate) struct Instruments {
    pub requests: Counter<u64>,
    pub request_duration: Histogram<f64>,
    pub open_streams: UpDownCounter<i64>,
    pub streams_closed: Counter<u64>,
    pub open_connections: UpDownCounter<i64>,
    pub task_states: Counter<u64>,
    pub events_applied: Counter<u64>,
    pub push: Counter<u64>,
    pub store_duration: Histogram<f64>,
}

struct Export {
    provider: SdkMeterProvider,
    instruments: Instruments,
}

static EXPORT: OnceLock<Option<Export>> = OnceLock::new();

fn wanted() -> bool {
    let set = |name: &str| std::env::var(name).is_ok_and(|v| !v.trim().is_empty());
    let disabled = std::env::var("OTEL_SDK_DISABLED").is_ok_and(|v| v.eq_ignore_ascii_case("true"))
        || std::env::var("OTEL_METRICS_EXPORTER").is_ok_and(|v| v.eq_ignore_ascii_case("none"));
    !disabled && (set("OTEL_EXPORTER_OTLP_ENDPOINT") || set("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"))
}

/// Starts export (once per process) when the variables ask for it. `service` names the service
/// unless `OTEL_SERVICE_NAME` does. A malformed endpoint is said once on stderr.
pub(crate) fn init(service: &str) {
    EXPORT.get_or_init(|| {
        if !wanted() {
            return None;
        }
        crate::telemetry::warn_compression("METRICS");
        let exporter = match opentelemetry_otlp::MetricExporter::builder().with_http().build() {
            Ok(exporter) => exporter,
            Err(e) => {
                eprintln!("a2a-native: OpenTelemetry: cannot export metrics: {e}");
                return None;
            }
        };
        let resource =
            opentelemetry_sdk::Resource::builder().with_service_name(crate::telemetry::service_name(service)).build();
        let provider = SdkMeterProvider::builder()
            .with_reader(PeriodicReader::builder(exporter).build())
            .with_resource(resource)
            .build();
        let meter = provider.meter("a2a-native");
        let seconds = |name: &'static str, description: &'static str| {
            meter
                .f64_histogram(name)
                .with_unit("s")
                .with_description(description)
                .with_boundaries(crate::metrics::LATENCY_BUCKETS.to_vec())
                .build()
        };
        let instruments = Instruments {
            requests: meter
                .u64_counter("a2a.server.requests")
                .with_description("A2A requests answered, by binding, method and outcome")
                .build(),
            request_duration: seconds(
                "a2a.server.request.duration",
                "Time from a request's arrival to its response head",
            ),
            open_streams: meter
                .i64_up_down_counter("a2a.server.open_streams")
                .with_description("Event streams open (SSE and gRPC)")
                .build(),
            streams_closed: meter
                .u64_counter("a2a.server.streams_closed")
                .with_description("Event streams closed, by how: ended, or abandoned before their end")
                .build(),
            open_connections: meter
                .i64_up_down_counter("a2a.server.open_connections")
                .with_description("Connections being served (at limits.maxConnections, accepting waits)")
                .build(),
            task_states: meter
                .u64_counter("a2a.task.state_changes")
                .with_description("Tasks entering each state")
                .build(),
            events_applied: meter
                .u64_counter("a2a.task.events_applied")
                .with_description("Executor events applied to tasks")
                .build(),
            push: meter
                .u64_counter("a2a.push.notifications")
                .with_description("Push notifications settled, by outcome")
                .build(),
            store_duration: seconds("a2a.store.operation.duration", "Task store operations, by operation"),
        };
        meter
            .u64_observable_counter("a2a.telemetry.spans_dropped")
            .with_description("Trace spans the OTLP exporter dropped because its queue was full")
            .with_callback(|observer| observer.observe(crate::telemetry::SPANS_DROPPED.get(), &[]))
            .build();
        Some(Export { provider, instruments })
    });
}

/// The instruments, when export is on.
pub(crate) fn instruments() -> Option<&'static Instruments> {
    EXPORT.get()?.as_ref().map(|e| &e.instruments)
}

/// Exports what was measured now (a hosted server's stop and a binding's exit call it). The
/// SDK's flush waits for the export, so it runs on a thread of its own and a hung collector
/// holds the caller one second at most; a flush still in flight is not started again.
pub(crate) fn flush() {
    static FLUSHING: AtomicBool = AtomicBool::new(false);
    let Some(Some(export)) = EXPORT.get() else { return };
    if FLUSHING.swap(true, Ordering::AcqRel) {
        return;
    }
    let provider = export.provider.clone();
    let (done, flushed) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = provider.force_flush();
        FLUSHING.store(false, Ordering::Release);
        let _ = done.send(());
    });
    let _ = flushed.recv_timeout(Duration::from_secs(1));
}

/// Attributes of one measurement, named `a2a.*` as the spans' are.
pub(crate) fn attrs<const N: usize>(pairs: [(&'static str, &'static str); N]) -> [KeyValue; N] {
    pairs.map(|(k, v)| KeyValue::new(k, v))
}
