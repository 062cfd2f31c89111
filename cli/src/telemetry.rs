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

impl LogFormat {
    /// Says `text` to the operator on stderr, whatever `RUST_LOG` filters: as a plain line, or
    /// with `--log-format json` as a JSON log line of level `level` (a JSON log pipeline would
    /// choke on a plain one).
    pub fn say(self, level: &str, text: &str) {
        match self {
            LogFormat::Text => eprintln!("{text}"),
            LogFormat::Json => eprintln!(
                "{}",
                serde_json::json!({
                    "timestamp": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true),
                    "level": level,
                    "fields": {"message": text},
                    "target": "a2a::serve",
                })
            ),
        }
    }
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
    let given = std::env::var("RUST_LOG").ok().filter(|v| !v.trim().is_empty());
    let (filter, bad_filter) = match &given {
        Some(text) => match EnvFilter::try_new(text) {
            Ok(filter) => (filter, None),
            Err(e) => (
                EnvFilter::new(default_filter),
                Some(format!("RUST_LOG={text:?} is not a filter ({e}); using {default_filter:?}")),
            ),
        },
        None => (EnvFilter::new(default_filter), None),
    };
    // Colours for a person at a terminal only: escape codes in a file or a pipe are noise.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr()) && std::env::var_os("NO_COLOR").is_none();
    let logs = match format {
        LogFormat::Text => tracing_subscriber::fmt::layer().with_ansi(ansi).with_writer(std::io::stderr).boxed(),
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
    if let Some(why) = bad_filter {
        tracing::warn!("{why}");
    }
    Telemetry
}
