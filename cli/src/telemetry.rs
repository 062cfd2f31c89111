//! `a2a serve`'s logs and traces. Logs go to stderr, as text or JSON lines (`--log-format`),
//! filtered by `RUST_LOG`. Traces are exported only when OpenTelemetry's standard variables ask
//! for it (`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, unless
//! `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`): OTLP over HTTP/protobuf, batched on
//! the SDK's own thread with a bounded queue (a slow or absent collector drops spans, never
//! slows a request), every request and execution span of core, continuing the caller's W3C
//! trace context.

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::{EnvFilter, Targets};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    #[default]
    Text,
    /// One JSON object per line, with the request's span fields (method, task id, ...).
    Json,
}

/// Flushes the traces still queued when dropped.
pub struct Telemetry(Option<SdkTracerProvider>);

impl Drop for Telemetry {
    fn drop(&mut self) {
        if let Some(provider) = self.0.take() {
            let _ = provider.shutdown();
        }
    }
}

fn env_set(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| !v.trim().is_empty())
}

fn traces_wanted() -> bool {
    let disabled = std::env::var("OTEL_SDK_DISABLED").is_ok_and(|v| v.eq_ignore_ascii_case("true"))
        || std::env::var("OTEL_TRACES_EXPORTER").is_ok_and(|v| v.eq_ignore_ascii_case("none"));
    !disabled && (env_set("OTEL_EXPORTER_OTLP_ENDPOINT") || env_set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
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
    let (provider, traces) = if traces_wanted() {
        match exporter() {
            Ok(provider) => {
                let tracer = provider.tracer("a2a-native");
                // Core's spans are DEBUG (so the log layer does not format them); this layer
                // takes them whatever RUST_LOG says.
                let spans = Targets::new().with_target("a2a_native", tracing::Level::DEBUG);
                let layer = tracing_opentelemetry::layer().with_tracer(tracer).with_filter(spans);
                opentelemetry::global::set_text_map_propagator(
                    opentelemetry_sdk::propagation::TraceContextPropagator::new(),
                );
                (Some(provider), Some(layer))
            }
            Err(e) => {
                eprintln!("OpenTelemetry: cannot export traces: {e}");
                (None, None)
            }
        }
    } else {
        (None, None)
    };
    let _ = tracing_subscriber::registry().with(logs).with(traces).try_init();
    Telemetry(provider)
}

/// OTLP/HTTP protobuf to the endpoint the `OTEL_EXPORTER_OTLP_*` variables name; the service
/// name from `OTEL_SERVICE_NAME` (default `a2a-native`).
fn exporter() -> Result<SdkTracerProvider, String> {
    let exporter = opentelemetry_otlp::SpanExporter::builder().with_http().build().map_err(|e| e.to_string())?;
    let service = std::env::var("OTEL_SERVICE_NAME").unwrap_or_else(|_| "a2a-native".into());
    let resource = opentelemetry_sdk::Resource::builder().with_service_name(service).build();
    Ok(SdkTracerProvider::builder().with_batch_exporter(exporter).with_resource(resource).build())
}
