//! OpenTelemetry trace export (and, through [`global`], metrics export: `crate::otlp_metrics`), for every process that hosts our server: `a2a serve` and each
//! binding's server. Opt-in through OpenTelemetry's standard variables: export happens only when
//! `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set, unless
//! `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`. OTLP over HTTP/protobuf, batched on
//! a thread of its own with a bounded queue (`OTEL_BSP_MAX_QUEUE_SIZE`, `OTEL_BSP_SCHEDULE_DELAY`,
//! `OTEL_BSP_MAX_EXPORT_BATCH_SIZE`): a slow or absent collector drops spans, counted in
//! [`SPANS_DROPPED`], and never slows a request. Exported: core's request, execution and client
//! spans, which continue the caller's W3C trace context (the W3C propagator is installed with
//! the exporter).

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::error::{OTelSdkError, OTelSdkResult};
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanExporter, SpanProcessor};
use prometheus_client::metrics::counter::Counter;
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError, sync_channel};
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, Instant};
use tracing::Subscriber;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::filter_fn;
use tracing_subscriber::registry::LookupSpan;

fn env_set(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| !v.trim().is_empty())
}

/// Whether the `OTEL_*` variables ask for trace export.
fn traces_wanted() -> bool {
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
    fn from_env(default_service: &str) -> Option<Result<Self, String>> {
        if !traces_wanted() {
            return None;
        }
        // Only OTLP over HTTP/protobuf is built in: another protocol asked for is said, not
        // silently replaced (a gRPC collector on :4317 would refuse every export).
        // The traces' own variable, when set, is the one that applies.
        let asked = ["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"]
            .into_iter()
            .find_map(|name| std::env::var(name).ok().filter(|p| !p.trim().is_empty()).map(|p| (name, p)));
        if let Some((name, protocol)) = asked
            && protocol.trim() != "http/protobuf"
        {
            eprintln!(
                "a2a-native: OpenTelemetry: {name}={protocol:?} is not supported; traces go over http/protobuf \
                 (point the endpoint at the collector's HTTP port, usually 4318)"
            );
        }
        warn_compression("TRACES");
        let mut exporter = match opentelemetry_otlp::SpanExporter::builder().with_http().build() {
            Ok(exporter) => exporter,
            Err(e) => return Some(Err(format!("OpenTelemetry: cannot export traces: {e}"))),
        };
        let resource = opentelemetry_sdk::Resource::builder().with_service_name(service_name(default_service)).build();
        opentelemetry_sdk::trace::SpanExporter::set_resource(&mut exporter, &resource);
        let queue = ExportQueue::start(exporter, QueueLimits::from_env());
        let provider = SdkTracerProvider::builder().with_span_processor(queue).with_resource(resource).build();
        opentelemetry::global::set_text_map_propagator(opentelemetry_sdk::propagation::TraceContextPropagator::new());
        Some(Ok(Self { provider }))
    }

    /// The `tracing` layer that turns core's spans into exported ones. Core's spans are DEBUG
    /// (so a log layer at INFO does not format them); this layer takes them whatever the log
    /// filter says, and of core's events only warnings and errors (as span events): a DEBUG
    /// event per response would cost every request an OTel event. No source location, thread
    /// or busy/idle attributes either: each costs every span, and a profile of `a2a serve`
    /// under load showed them.
    pub fn layer<S>(&self) -> impl Layer<S> + use<S>
    where
        S: Subscriber + for<'a> LookupSpan<'a>,
    {
        let ours = |meta: &tracing::Metadata<'_>| {
            meta.target().starts_with("a2a_native")
                && if meta.is_span() {
                    *meta.level() <= tracing::Level::DEBUG
                } else {
                    *meta.level() <= tracing::Level::WARN
                }
        };
        tracing_opentelemetry::layer()
            .with_tracer(self.provider.tracer("a2a-native"))
            .with_location(false)
            .with_threads(false)
            .with_tracked_inactivity(false)
            .with_filter(filter_fn(ours))
    }

    /// Exports what is queued now (a binding calls it before its process exits).
    pub fn flush(&self) {
        let _ = self.provider.force_flush();
    }
}

impl Drop for OtlpTraces {
    fn drop(&mut self) {
        // Bounded: a hung collector holds a process's exit two seconds at most.
        let _ = self.provider.shutdown_with_timeout(Duration::from_secs(2));
    }
}

static GLOBAL: std::sync::OnceLock<Option<OtlpTraces>> = std::sync::OnceLock::new();

/// The process's one exporter, made on first use from the `OTEL_*` variables (`None` when they
/// do not ask for one, or ask for one that cannot be built: said once on stderr). A binding with
/// a `tracing` subscriber of its own adds its [`OtlpTraces::layer`] there.
pub fn global(default_service: &str) -> Option<&'static OtlpTraces> {
    crate::otlp_metrics::init(default_service);
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
/// installs (once) a global subscriber that exports core's spans when the `OTEL_*` variables ask
/// for export, and otherwise one that takes none. Without any, `tracing`'s `log` fallback (a
/// feature on in this build) hands every span hyper and h2 open to `log`: about 200 calls per
/// gRPC request, 16% of the gRPC floor's instructions. Nothing happens when the process already
/// has a global subscriber.
pub fn install_global(default_service: &str) {
    use tracing_subscriber::layer::SubscriberExt;
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        let _ = match global(default_service) {
            Some(traces) => {
                tracing::subscriber::set_global_default(tracing_subscriber::registry().with(traces.layer()))
            }
            None => tracing::subscriber::set_global_default(tracing::subscriber::NoSubscriber::default()),
        };
    });
}

/// Exports what the process's exporter holds now: a hosted server's stop and a binding's exit
/// call it, so a process that exits right after loses no spans.
pub fn flush_global() {
    if let Some(Some(traces)) = GLOBAL.get() {
        traces.flush();
    }
    crate::otlp_metrics::flush();
}

/// What the operator hears of a collector that refuses or cannot be reached: the first failure,
/// then one line a minute while it lasts, and its end. Spans of a failed export are dropped and
/// counted in [`SPANS_DROPPED`].
#[derive(Default)]
struct ExportFailures {
    failing: bool,
    said: Option<Instant>,
}

impl ExportFailures {
    fn record(&mut self, outcome: OTelSdkResult, spans: u64) {
        match outcome {
            Ok(()) if self.failing => {
                self.failing = false;
                eprintln!("a2a-native: OpenTelemetry: exporting spans works again");
            }
            Ok(()) => {}
            Err(e) => {
                SPANS_DROPPED.inc_by(spans);
                self.failing = true;
                if self.said.is_none_or(|at| at.elapsed() >= Duration::from_secs(60)) {
                    self.said = Some(Instant::now());
                    eprintln!(
                        "a2a-native: OpenTelemetry: exporting spans failed ({e}); they are dropped and counted \
                         in a2a_telemetry_spans_dropped_total (said once a minute while it lasts)"
                    );
                }
            }
        }
    }
}

/// Spans the exporter dropped: its queue was full, or the collector refused them or could not
/// be reached. One count per process; every server's metrics list it as
/// `a2a_telemetry_spans_dropped_total`.
pub static SPANS_DROPPED: LazyLock<Counter> = LazyLock::new(Counter::default);

/// The bounds of the export queue, from the `OTEL_BSP_*` variables (OpenTelemetry's defaults).
struct QueueLimits {
    queue: usize,
    batch: usize,
    delay: Duration,
}

impl QueueLimits {
    fn from_env() -> Self {
        let read = |name: &str, default: usize| {
            std::env::var(name).ok().and_then(|v| v.trim().parse::<usize>().ok()).filter(|&n| n > 0).unwrap_or(default)
        };
        let queue = read("OTEL_BSP_MAX_QUEUE_SIZE", 2048);
        Self {
            queue,
            batch: read("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 512).min(queue),
            delay: Duration::from_millis(read("OTEL_BSP_SCHEDULE_DELAY", 5000) as u64),
        }
    }
}

enum Job {
    Span(Box<SpanData>),
    Flush(SyncSender<()>),
    Stop(SyncSender<()>),
}

/// A batching span processor like the SDK's, except that what it drops is counted: a finished
/// span goes into a bounded queue without waiting (a full queue drops it and counts it in
/// [`SPANS_DROPPED`]), and one thread of its own exports batches (the SDK's keeps that count to
/// itself).
#[derive(Debug)]
struct ExportQueue {
    jobs: SyncSender<Job>,
    worker: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl ExportQueue {
    fn start<E: SpanExporter + 'static>(exporter: E, limits: QueueLimits) -> Self {
        let (jobs, queued) = sync_channel(limits.queue);
        let worker = std::thread::Builder::new()
            .name("a2a-otlp-export".into())
            .spawn(move || export_loop(exporter, queued, limits))
            .ok();
        Self { jobs, worker: Mutex::new(worker) }
    }

    /// Queues a control job and waits for the worker to do it, all within `timeout`: a worker
    /// stuck on a hung collector (its queue full) does not hold a flush or an exit longer.
    fn ask(&self, job: fn(SyncSender<()>) -> Job, timeout: Duration) -> OTelSdkResult {
        let deadline = Instant::now() + timeout;
        let (done, finished) = sync_channel(1);
        let mut job = job(done);
        loop {
            match self.jobs.try_send(job) {
                Ok(()) => break,
                Err(TrySendError::Disconnected(_)) => return Err(OTelSdkError::AlreadyShutdown),
                Err(TrySendError::Full(back)) if Instant::now() < deadline => {
                    job = back;
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(TrySendError::Full(_)) => return Err(OTelSdkError::Timeout(timeout)),
            }
        }
        finished
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .map_err(|_| OTelSdkError::Timeout(timeout))
    }
}

impl SpanProcessor for ExportQueue {
    fn on_start(&self, _span: &mut opentelemetry_sdk::trace::Span, _cx: &opentelemetry::Context) {}

    fn on_end(&self, span: SpanData) {
        match self.jobs.try_send(Job::Span(Box::new(span))) {
            Ok(()) | Err(TrySendError::Disconnected(_)) => {}
            Err(TrySendError::Full(_)) => {
                SPANS_DROPPED.inc();
            }
        }
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.ask(Job::Flush, Duration::from_secs(2))
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        let asked = self.ask(Job::Stop, timeout);
        if asked.is_ok()
            && let Some(worker) = self.worker.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take()
        {
            let _ = worker.join();
        }
        asked
    }
}

fn export_loop<E: SpanExporter>(exporter: E, queued: Receiver<Job>, limits: QueueLimits) {
    let mut batch = Vec::with_capacity(limits.batch);
    let mut failures = ExportFailures::default();
    let mut export = |batch: &mut Vec<SpanData>| {
        if !batch.is_empty() {
            let spans = batch.len() as u64;
            // The OTLP exporter's blocking HTTP client completes the future on this thread.
            let outcome = futures_executor::block_on(exporter.export(std::mem::take(batch)));
            failures.record(outcome, spans);
        }
    };
    let mut due = Instant::now() + limits.delay;
    loop {
        match queued.recv_timeout(due.saturating_duration_since(Instant::now())) {
            Ok(Job::Span(span)) => {
                batch.push(*span);
                if batch.len() >= limits.batch {
                    export(&mut batch);
                    due = Instant::now() + limits.delay;
                }
            }
            Ok(Job::Flush(done)) => {
                export(&mut batch);
                let _ = exporter.force_flush();
                let _ = done.send(());
            }
            Ok(Job::Stop(done)) => {
                export(&mut batch);
                let _ = exporter.shutdown();
                let _ = done.send(());
                return;
            }
            Err(RecvTimeoutError::Timeout) => {
                export(&mut batch);
                due = Instant::now() + limits.delay;
            }
            Err(RecvTimeoutError::Disconnected) => {
                export(&mut batch);
                return;
            }
        }
    }
}

/// Says that a compression asked for (`OTEL_EXPORTER_OTLP_[SIGNAL_]COMPRESSION`) is not done:
/// exports go uncompressed (a collector reads both).
pub(crate) fn warn_compression(signal: &str) {
    let asked = [format!("OTEL_EXPORTER_OTLP_{signal}_COMPRESSION"), "OTEL_EXPORTER_OTLP_COMPRESSION".to_owned()]
        .into_iter()
        .find_map(|name| std::env::var(&name).ok().filter(|c| !c.trim().is_empty()).map(|c| (name, c)));
    if let Some((name, compression)) = asked
        && compression.trim() != "none"
    {
        eprintln!("a2a-native: OpenTelemetry: {name}={compression:?} is not supported; exports go uncompressed");
    }
}

/// The exported `service.name`: `OTEL_SERVICE_NAME`, else the `service.name` of
/// `OTEL_RESOURCE_ATTRIBUTES` (as the OpenTelemetry SDKs read them), else `default`.
pub(crate) fn service_name(default: &str) -> String {
    pick_service_name(std::env::var("OTEL_SERVICE_NAME").ok(), std::env::var("OTEL_RESOURCE_ATTRIBUTES").ok(), default)
}

fn pick_service_name(service: Option<String>, attributes: Option<String>, default: &str) -> String {
    let from_attributes = || {
        attributes?.split(',').find_map(|pair| {
            let (key, value) = pair.split_once('=')?;
            (key.trim() == "service.name" && !value.trim().is_empty()).then(|| value.trim().to_owned())
        })
    };
    service.filter(|s| !s.trim().is_empty()).or_else(from_attributes).unwrap_or_else(|| default.to_owned())
}

#[cfg(test)]
mod service_name_tests {
    use super::pick_service_name as pick;

    #[test]
    fn the_service_name_comes_from_the_standard_variables_in_their_order() {
        let attrs = Some("deployment.environment=prod, service.name = billing".to_owned());
        assert_eq!(pick(Some("named".into()), attrs.clone(), "dflt"), "named");
        assert_eq!(pick(None, attrs, "dflt"), "billing");
        assert_eq!(pick(Some(" ".into()), Some("a=b".into()), "dflt"), "dflt");
    }
}
