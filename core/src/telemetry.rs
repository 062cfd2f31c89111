//! OpenTelemetry trace export, for every process that hosts our server: `a2a serve` and each
//! binding's server. Opt-in through OpenTelemetry's standard variables: export happens only when
//! `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set, unless
//! `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`. OTLP over HTTP/protobuf, batched on
//! the SDK's own thread with a bounded queue (`OTEL_BSP_*`): a slow or absent collector drops
//! spans, never slows a request. Exported: core's request, execution and client spans, which
//! continue the caller's W3C trace context (the W3C propagator is installed with the exporter).

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing::Subscriber;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::registry::LookupSpan;

fn env_set(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| !v.trim().is_empty())
}

/// Whether the `OTEL_*` variables ask for trace export.
pub fn traces_wanted() -> bool {
    let disabled = std::env::var("OTEL_SDK_DISABLED").is_ok_and(|v| v.eq_ignore_ascii_case("true"))
        || std::env::var("OTEL_TRACES_EXPORTER").is_ok_and(|v| v.eq_ignore_ascii_case("none"));
    !disabled && (env_set("OTEL_EXPORTER_OTLP_ENDPOINT") || env_set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
}

/// The trace exporter the `OTEL_*` variables describe. Dropping it flushes the spans still
/// queued (a process keeps it for its lifetime).
pub struct OtlpTraces {
    provider: SdkTracerProvider,
}

impl OtlpTraces {
    /// `None` when the variables do not ask for export; an error when they ask for one that
    /// cannot be built (a malformed endpoint). Installs the W3C trace-context propagator.
    /// `default_service` names the service unless `OTEL_SERVICE_NAME` does.
    pub fn from_env(default_service: &str) -> Option<Result<Self, String>> {
        if !traces_wanted() {
            return None;
        }
        let exporter = match opentelemetry_otlp::SpanExporter::builder().with_http().build() {
            Ok(exporter) => exporter,
            Err(e) => return Some(Err(format!("OpenTelemetry: cannot export traces: {e}"))),
        };
        let service = std::env::var("OTEL_SERVICE_NAME").unwrap_or_else(|_| default_service.to_owned());
        let resource = opentelemetry_sdk::Resource::builder().with_service_name(service).build();
        let provider = SdkTracerProvider::builder().with_batch_exporter(exporter).with_resource(resource).build();
        opentelemetry::global::set_text_map_propagator(opentelemetry_sdk::propagation::TraceContextPropagator::new());
        Some(Ok(Self { provider }))
    }

    /// The `tracing` layer that turns core's spans into exported ones. Core's spans are DEBUG
    /// (so a log layer at INFO does not format them); this layer takes them whatever the log
    /// filter says, and nothing else.
    pub fn layer<S>(&self) -> impl Layer<S> + use<S>
    where
        S: Subscriber + for<'a> LookupSpan<'a>,
    {
        let spans = Targets::new().with_target("a2a_native", tracing::Level::DEBUG);
        tracing_opentelemetry::layer().with_tracer(self.provider.tracer("a2a-native")).with_filter(spans)
    }

    /// Exports what is queued now (a binding calls it before its process exits).
    pub fn flush(&self) {
        let _ = self.provider.force_flush();
    }
}

impl Drop for OtlpTraces {
    fn drop(&mut self) {
        let _ = self.provider.shutdown();
    }
}

static GLOBAL: std::sync::OnceLock<Option<OtlpTraces>> = std::sync::OnceLock::new();

/// The process's one exporter, made on first use from the `OTEL_*` variables (`None` when they
/// do not ask for one, or ask for one that cannot be built: said once on stderr). A binding with
/// a `tracing` subscriber of its own adds its [`OtlpTraces::layer`] there.
pub fn global(default_service: &str) -> Option<&'static OtlpTraces> {
    GLOBAL
        .get_or_init(|| match OtlpTraces::from_env(default_service)? {
            Ok(traces) => Some(traces),
            Err(e) => {
                eprintln!("a2a-native: {e}");
                None
            }
        })
        .as_ref()
}

/// For a host that has no `tracing` subscriber of its own (the Node and Kotlin/Swift bindings):
/// when the `OTEL_*` variables ask for export, installs (once) a global subscriber that only
/// exports core's spans. Nothing happens when they do not ask, or when the process already has a
/// global subscriber.
pub fn install_global(default_service: &str) {
    use tracing_subscriber::layer::SubscriberExt;
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        if let Some(traces) = global(default_service) {
            let _ = tracing::subscriber::set_global_default(tracing_subscriber::registry().with(traces.layer()));
        }
    });
}

/// Exports what the process's exporter holds now: a hosted server's stop and a binding's exit
/// call it, so a process that exits right after loses no spans.
pub fn flush_global() {
    if let Some(Some(traces)) = GLOBAL.get() {
        traces.flush();
    }
}
