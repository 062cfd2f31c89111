//! `a2a serve`'s logs and traces. Logs go to stderr, as text or JSON lines (`--log-format`),
//! filtered by `RUST_LOG`. Traces are exported only when OpenTelemetry's standard variables ask
//! for it (`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, unless
//! `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`): OTLP over HTTP/protobuf, batched on
//! the SDK's own thread with a bounded queue (a slow or absent collector drops spans, never
//! slows a request), every request and execution span of core, continuing the caller's W3C
//! trace context.

use tracing_subscriber::Layer;
use tracing_subscriber::filter::EnvFilter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    #[default]
    Text,
    /// One JSON object per line, with the request's span fields (method, task id, ...).
    Json,
}

/// Flushes the traces still queued when dropped (at exit).
pub struct Telemetry;

impl Drop for Telemetry {
    fn drop(&mut self) {
        a2a_native::telemetry::flush_global();
    }
}

/// Installs the logger, and the trace exporter when configured. `default_filter` applies when
/// `RUST_LOG` is not set.
pub fn init(default_filter: &str, format: LogFormat) -> Telemetry {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default_filter));
    let logs = match format {
        LogFormat::Text => tracing_subscriber::fmt::layer().with_writer(std::io::stderr).boxed(),
        LogFormat::Json => tracing_subscriber::fmt::layer()
            .json()
            .with_current_span(true)
            .with_span_list(false)
            .with_writer(std::io::stderr)
            .boxed(),
    }
    .with_filter(filter);
    // The process's one exporter, as the bindings get it (core's telemetry::global).
    let traces = a2a_native::telemetry::global("a2a-native").map(|t| t.layer());
    let _ = tracing_subscriber::registry().with(logs).with(traces).try_init();
    Telemetry
}
