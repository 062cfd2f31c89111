//! A server's metrics, in one registry served as Prometheus/OpenMetrics text (see
//! `server::metrics_endpoint`): requests by binding, method and outcome with their latency,
//! open streams, task state changes, events applied, push deliveries, and store latency.
//!
//! Recording is cheap enough to be always on (a hash lookup and an atomic add per sample);
//! nothing is exported unless an endpoint serves the registry, or the `OTEL_*` variables ask
//! for OTLP export (`crate::otlp_metrics`, which gets the same measurements).
//!
//! Labels are `&'static str`: bindings, A2A method names, `ErrorInfo` reasons, task states and
//! store operations are closed sets, so a hostile client cannot grow the registry.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use std::cell::Cell;
use std::sync::RwLock;
use std::time::Instant;

/// Records into the OTLP instruments too, when export is on (compiled out without `otlp`).
macro_rules! otel {
    ($o:ident => $record:expr) => {
        #[cfg(feature = "otlp")]
        if let Some($o) = crate::otlp_metrics::instruments() {
            $record;
        }
    };
}

/// The content type of [`Metrics::encode`]'s text.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Latency buckets, in seconds: 50 µs to 10 s.
pub(crate) const LATENCY_BUCKETS: [f64; 16] =
    [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0];

fn latency_histogram() -> Histogram {
    Histogram::new(LATENCY_BUCKETS)
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    binding: &'static str,
    method: &'static str,
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct MethodLabels {
    binding: &'static str,
    method: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StateLabels {
    state: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct HowLabels {
    how: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OperationLabels {
    operation: &'static str,
}

type LatencyFamily<L> = Family<L, Histogram, fn() -> Histogram>;

/// One server's metrics. Cloned handles share the counters.
pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    request_duration: LatencyFamily<MethodLabels>,
    /// The two series of each (binding, method, outcome) seen: the families hash their labels
    /// with SipHash, each under its own lock, on every lookup, which was about 1% of a
    /// SendMessage.
    request_series: RwLock<foldhash::HashMap<RequestLabels, (Counter, Histogram)>>,
    open_streams: Gauge,
    streams_closed: Family<HowLabels, Counter>,
    open_connections: Gauge,
    task_states: Family<StateLabels, Counter>,
    events_applied: Counter,
    push: Family<OutcomeLabels, Counter>,
    store_duration: LatencyFamily<OperationLabels>,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Metrics")
    }
}

impl Metrics {
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("a2a");
        let requests = Family::<RequestLabels, Counter>::default();
        registry.register(
            "server_requests",
            "A2A requests answered, by binding, method and outcome (OK or the error's ErrorInfo reason)",
            requests.clone(),
        );
        let request_duration = LatencyFamily::<MethodLabels>::new_with_constructor(latency_histogram as fn() -> _);
        registry.register(
            "server_request_duration_seconds",
            "Time from a request's arrival to its response head (a stream's events come after)",
            request_duration.clone(),
        );
        let open_streams = Gauge::default();
        registry.register("server_open_streams", "Event streams open (SSE and gRPC)", open_streams.clone());
        let streams_closed = Family::<HowLabels, Counter>::default();
        registry.register(
            "server_streams_closed",
            "Event streams closed, by how: ended (to their last event, or an error event) or abandoned (the client went away, or the server stopped, before their end)",
            streams_closed.clone(),
        );
        let open_connections = Gauge::default();
        registry.register(
            "server_open_connections",
            "Connections being served (at limits.maxConnections, accepting waits)",
            open_connections.clone(),
        );
        let task_states = Family::<StateLabels, Counter>::default();
        registry.register("task_state_changes", "Tasks entering each state", task_states.clone());
        let events_applied = Counter::default();
        registry.register("task_events_applied", "Executor events applied to tasks", events_applied.clone());
        let push = Family::<OutcomeLabels, Counter>::default();
        registry.register(
            "push_notifications",
            "Push notifications settled, by outcome: delivered, failed (after retries), refused (target not allowed), dropped (queue full, unsigned, shutdown)",
            push.clone(),
        );
        let store_duration = LatencyFamily::<OperationLabels>::new_with_constructor(latency_histogram as fn() -> _);
        registry.register(
            "store_operation_duration_seconds",
            "Task store operations, by operation: load and commit (task manager), get and list (reads)",
            store_duration.clone(),
        );
        #[cfg(feature = "otlp")]
        registry.register(
            "telemetry_spans_dropped",
            "Trace spans the OTLP exporter dropped because its queue was full (collector down or slow); process-wide",
            crate::telemetry::SPANS_DROPPED.clone(),
        );
        Self {
            registry,
            requests,
            request_duration,
            request_series: RwLock::default(),
            open_streams,
            streams_closed,
            open_connections,
            task_states,
            events_applied,
            push,
            store_duration,
        }
    }

    /// The registry as OpenMetrics text ([`CONTENT_TYPE`]).
    pub fn encode(&self) -> String {
        let mut text = String::new();
        // Writing to a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut text, &self.registry);
        text
    }

    pub(crate) fn request(&self, observed: &Observed, started: Instant) {
        let (binding, method, outcome) = (observed.binding.get(), observed.method.get(), observed.outcome.get());
        let seconds = started.elapsed().as_secs_f64();
        let key = RequestLabels { binding, method, outcome };
        let known = self.request_series.read().unwrap_or_else(|p| p.into_inner()).get(&key).cloned();
        let (count, duration) = known.unwrap_or_else(|| {
            let series = (
                self.requests.get_or_create(&key).clone(),
                self.request_duration.get_or_create(&MethodLabels { binding, method }).clone(),
            );
            self.request_series.write().unwrap_or_else(|p| p.into_inner()).insert(key, series.clone());
            series
        });
        count.inc();
        duration.observe(seconds);
        otel!(o => {
            o.requests.add(1, &crate::otlp_metrics::attrs([("a2a.binding", binding), ("a2a.method", method), ("a2a.outcome", outcome)]));
            o.request_duration.record(seconds, &crate::otlp_metrics::attrs([("a2a.binding", binding), ("a2a.method", method)]));
        });
    }

    /// A gauge count held while a stream is open; dropped, it counts how the stream closed
    /// ([`Open::ended`]).
    pub(crate) fn open_stream(&self) -> Open {
        let mut open = Open::count(&self.open_streams, OpenKind::Streams);
        open.closed = Some(Closed { family: self.streams_closed.clone(), ended: false });
        open
    }

    /// A gauge count held while a connection is served.
    pub(crate) fn open_connection(&self) -> Open {
        Open::count(&self.open_connections, OpenKind::Connections)
    }

    pub(crate) fn task_state(&self, state: &'static str) {
        self.task_states.get_or_create(&StateLabels { state }).inc();
        otel!(o => o.task_states.add(1, &crate::otlp_metrics::attrs([("a2a.task.state", state)])));
    }

    pub(crate) fn events_applied(&self, n: u64) {
        self.events_applied.inc_by(n);
        otel!(o => o.events_applied.add(n, &[]));
    }

    pub(crate) fn push(&self, outcome: &'static str, n: u64) {
        self.push.get_or_create(&OutcomeLabels { outcome }).inc_by(n);
        otel!(o => o.push.add(n, &crate::otlp_metrics::attrs([("a2a.push.outcome", outcome)])));
    }

    pub(crate) fn store(&self, operation: &'static str, started: Instant) {
        let seconds = started.elapsed().as_secs_f64();
        self.store_duration.get_or_create(&OperationLabels { operation }).observe(seconds);
        otel!(o => o.store_duration.record(seconds, &crate::otlp_metrics::attrs([("a2a.store.operation", operation)])));
    }
}

#[derive(Debug, Clone, Copy)]
enum OpenKind {
    Streams,
    Connections,
}

/// One open stream or connection: decrements its gauge when dropped (and the OTLP count, when
/// it was counted there: export may have started while it was open).
#[derive(Debug)]
pub(crate) struct Open {
    gauge: Gauge,
    kind: OpenKind,
    exported: bool,
    /// A stream's: where its close is counted, and whether it reached its end.
    closed: Option<Closed>,
}

#[derive(Debug)]
struct Closed {
    family: Family<HowLabels, Counter>,
    ended: bool,
}

impl Open {
    fn count(gauge: &Gauge, kind: OpenKind) -> Self {
        gauge.inc();
        let exported = Self::otlp(kind, 1);
        Self { gauge: gauge.clone(), kind, exported, closed: None }
    }

    /// The stream reached its end (its last event, or an error event): its close is counted
    /// `ended`, not `abandoned`.
    pub(crate) fn ended(&mut self) {
        if let Some(closed) = &mut self.closed {
            closed.ended = true;
        }
    }

    /// Adds `n` to the OTLP count of `kind`; false when export is off.
    #[allow(unused_variables)]
    fn otlp(kind: OpenKind, n: i64) -> bool {
        #[cfg(feature = "otlp")]
        if let Some(o) = crate::otlp_metrics::instruments() {
            match kind {
                OpenKind::Streams => o.open_streams.add(n, &[]),
                OpenKind::Connections => o.open_connections.add(n, &[]),
            }
            return true;
        }
        false
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        if let Some(closed) = &self.closed {
            let how = if closed.ended { "ended" } else { "abandoned" };
            closed.family.get_or_create(&HowLabels { how }).inc();
            otel!(o => o.streams_closed.add(1, &crate::otlp_metrics::attrs([("a2a.stream.closed", how)])));
        }
        self.gauge.dec();
        if self.exported {
            Self::otlp(self.kind, -1);
        }
    }
}

/// What one request turned out to be, filled in by whichever layer learns it: the binding by
/// the listener, the method by the adapter, the outcome by the handler or the error answer.
#[derive(Debug)]
pub(crate) struct Observed {
    pub binding: Cell<&'static str>,
    pub method: Cell<&'static str>,
    pub outcome: Cell<&'static str>,
    /// Refused for the load of the moment (a spent body budget): the answer says Retry-After.
    pub shed: Cell<bool>,
    /// The client's address (its connection's peer), when the listener knows it: request
    /// bodies in flight are shared out per client (`server::budget`).
    pub peer: Option<std::net::IpAddr>,
}

impl Default for Observed {
    fn default() -> Self {
        Self {
            binding: Cell::new("other"),
            method: Cell::new("unknown"),
            outcome: Cell::new(""),
            shed: Cell::new(false),
            peer: None,
        }
    }
}

tokio::task_local! {
    /// The request being answered on this task (set by `A2AService::handle`).
    pub(crate) static OBSERVED: Observed;
}

/// Records `f(observed)` on the current request, if any.
pub(crate) fn observe(f: impl FnOnce(&Observed)) {
    let _ = OBSERVED.try_with(f);
}

/// What `f` reads of the current request's observations (`None` outside a request).
pub(crate) fn observed<T>(f: impl FnOnce(&Observed) -> T) -> Option<T> {
    OBSERVED.try_with(f).ok()
}

/// Whether the current request was refused for the load of the moment.
pub(crate) fn shed() -> bool {
    OBSERVED.try_with(|o| o.shed.get()).unwrap_or(false)
}

/// The outcome of the current request, unless an inner layer already set it.
pub(crate) fn outcome(reason: &'static str) {
    observe(|o| {
        if o.outcome.get().is_empty() {
            o.outcome.set(reason);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_names_every_family_and_counts_what_was_recorded() {
        let m = Metrics::new();
        let observed = Observed::default();
        observed.binding.set("jsonrpc");
        observed.method.set("SendMessage");
        observed.outcome.set("OK");
        m.request(&observed, Instant::now());
        m.request(&observed, Instant::now());
        let stream = m.open_stream();
        let connection = m.open_connection();
        m.task_state("TASK_STATE_COMPLETED");
        m.events_applied(3);
        m.push("delivered", 1);
        m.store("commit", Instant::now());
        let text = m.encode();
        assert!(
            text.contains(r#"a2a_server_requests_total{binding="jsonrpc",method="SendMessage",outcome="OK"} 2"#),
            "{text}"
        );
        assert!(
            text.contains(r#"a2a_server_request_duration_seconds_count{binding="jsonrpc",method="SendMessage"} 2"#)
        );
        assert!(text.contains("a2a_server_open_streams 1"), "{text}");
        assert!(text.contains("a2a_server_open_connections 1"), "{text}");
        assert!(text.contains(r#"a2a_task_state_changes_total{state="TASK_STATE_COMPLETED"} 1"#));
        assert!(text.contains("a2a_task_events_applied_total 3"));
        assert!(text.contains(r#"a2a_push_notifications_total{outcome="delivered"} 1"#));
        assert!(text.contains(r#"a2a_store_operation_duration_seconds_count{operation="commit"} 1"#));
        assert!(text.ends_with("# EOF\n"), "{text}");
        drop(stream);
        assert!(m.encode().contains("a2a_server_open_streams 0"));
        drop(connection);
        assert!(m.encode().contains("a2a_server_open_connections 0"));
    }
}
