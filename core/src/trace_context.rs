//! W3C trace context (`traceparent`, `tracestate`) on the wire, through OpenTelemetry's global
//! propagator. A library sets no globals: an application that exports traces (`a2a serve` with
//! `OTEL_*` set, or a host language's OpenTelemetry) installs the W3C propagator, and then each
//! request's span continues the caller's trace. Without one, the propagator is OpenTelemetry's
//! no-op and none of this costs anything. A malformed `traceparent` is ignored, never an error.

use http::HeaderMap;
use opentelemetry::propagation::{Extractor, Injector};

struct Headers<'a>(&'a HeaderMap);

impl Extractor for Headers<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|v| v.to_str().ok())
    }
    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(http::HeaderName::as_str).collect()
    }
}

struct HeadersMut<'a>(&'a mut HeaderMap);

impl Injector for HeadersMut<'_> {
    fn set(&mut self, key: &str, value: String) {
        // The W3C propagator writes an empty `tracestate` when there is none: no header then.
        if value.is_empty() {
            return;
        }
        if let (Ok(name), Ok(value)) =
            (http::HeaderName::from_bytes(key.as_bytes()), http::HeaderValue::try_from(value))
        {
            self.0.insert(name, value);
        }
    }
}

/// The caller's trace context from a request's headers (gRPC metadata are HTTP/2 headers).
pub fn extract(headers: &HeaderMap) -> opentelemetry::Context {
    opentelemetry::global::get_text_map_propagator(|p| p.extract(&Headers(headers)))
}

/// Makes `span` continue the trace whose context `headers` carry.
pub fn continue_trace(span: &tracing::Span, headers: &HeaderMap) {
    use tracing_opentelemetry::OpenTelemetrySpanExt;
    if span.is_disabled() {
        return;
    }
    let _ = span.set_parent(extract(headers));
}

/// Records the trace and span ids of a request's `span` as its `trace_id` and `span_id` fields,
/// so the request's log lines (`--log-format json`) join its trace: the span's own ids when this
/// process traces, else the caller's trace id from `headers`.
pub fn record_ids(span: &tracing::Span, headers: &HeaderMap) {
    use opentelemetry::trace::TraceContextExt;
    use tracing_opentelemetry::OpenTelemetrySpanExt;
    if span.is_disabled() {
        return;
    }
    let context = span.context();
    let ids = context.span().span_context().clone();
    if ids.is_valid() {
        span.record("trace_id", tracing::field::display(ids.trace_id()));
        span.record("span_id", tracing::field::display(ids.span_id()));
    } else if let Some(parent) = TraceParent::from_headers(headers).traceparent {
        span.record("trace_id", &parent[3..35]);
    }
}

tokio::task_local! {
    static CALLER: TraceParent;
}

/// Runs `call` (a client call) as part of the trace `caller` names: the current context of a
/// host language's own OpenTelemetry, which a binding reads and passes per call. The call's
/// `a2a.client` span becomes its child when this process traces; when it does not, the
/// caller's context goes out on the wire as it came.
pub async fn with_caller<F: std::future::Future>(caller: TraceParent, call: F) -> F::Output {
    CALLER.scope(caller, call).await
}

/// [`with_caller`] for a future that is large (an execution's): no async wrapper of its own,
/// whose state would copy the whole future on every move. Box it first.
#[cfg(feature = "server")]
pub(crate) fn in_caller_context<F: std::future::Future>(
    caller: TraceParent,
    call: F,
) -> tokio::task::futures::TaskLocalFuture<TraceParent, F> {
    CALLER.scope(caller, call)
}

/// The context [`with_caller`] gave the running task, as headers.
pub(crate) fn caller_headers() -> Option<HeaderMap> {
    CALLER.try_with(TraceParent::headers).ok().filter(|h| !h.is_empty())
}

/// Names `span` for export (OpenTelemetry's `otel.name`), also once its OTel span has started
/// (a span that continued a caller's trace has): `otel.name` recorded then is not applied.
#[cfg(feature = "server")]
pub(crate) fn rename(span: &tracing::Span, name: &'static str) {
    use opentelemetry::trace::TraceContextExt;
    use tracing_opentelemetry::OpenTelemetrySpanExt;
    if span.is_disabled() {
        return;
    }
    span.record("otel.name", name);
    span.context().span().update_name(name);
}

/// Writes the current span's trace context into outgoing `headers` (client calls, push
/// notifications), so the callee's spans join this trace; else the context a host language
/// gave the call ([`with_caller`]).
pub fn inject_current(headers: &mut HeaderMap) {
    use tracing_opentelemetry::OpenTelemetrySpanExt;
    let context = tracing::Span::current().context();
    opentelemetry::global::get_text_map_propagator(|p| p.inject_context(&context, &mut HeadersMut(headers)));
    if let Some(caller) = caller_headers() {
        // The caller's trace context when this process injected none (its own, when it traces,
        // already descends from the caller's); the caller's baggage either way.
        let traced = headers.contains_key("traceparent");
        for (name, value) in &caller {
            let ours = headers.contains_key(name) || (traced && (name == "traceparent" || name == "tracestate"));
            if !ours {
                headers.insert(name.clone(), value.clone());
            }
        }
    }
}

/// A W3C trace context as text, for code that propagates it itself: an executor in another
/// language hands it to its own OpenTelemetry, whose spans then join the request's trace.
/// Absent members are left out of its JSON, so a binding hands the object over as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TraceParent {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub traceparent: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tracestate: Option<String>,
    /// W3C baggage (the `baggage` header) as it came, at most [`MAX_BAGGAGE`] bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baggage: Option<String>,
}

/// The W3C Baggage limit on the whole header (§3.3.1).
pub const MAX_BAGGAGE: usize = 8192;

impl TraceParent {
    /// The caller's context from a request's headers; a malformed `traceparent` is dropped.
    pub fn from_headers(headers: &HeaderMap) -> Self {
        // Names parsed once: every request is read for them.
        const TRACEPARENT: http::HeaderName = http::HeaderName::from_static("traceparent");
        const TRACESTATE: http::HeaderName = http::HeaderName::from_static("tracestate");
        const BAGGAGE: http::HeaderName = http::HeaderName::from_static("baggage");
        let text = |name| headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim);
        // Baggage travels with or without a trace.
        let baggage = text(BAGGAGE).filter(|b| !b.is_empty() && b.len() <= MAX_BAGGAGE).map(str::to_owned);
        match text(TRACEPARENT).filter(|t| is_traceparent(t)) {
            Some(parent) => Self {
                traceparent: Some(parent.to_owned()),
                tracestate: text(TRACESTATE).filter(|s| !s.is_empty() && s.len() <= 512).map(str::to_owned),
                baggage,
            },
            None => Self { baggage, ..Self::default() },
        }
    }

    /// The context [`inject_current`] would send now; `None` without a trace.
    pub fn current() -> Option<Self> {
        let mut headers = HeaderMap::new();
        inject_current(&mut headers);
        let context = Self::from_headers(&headers);
        context.traceparent.is_some().then_some(context)
    }

    /// A context a host language gave as text; a malformed `traceparent` gives none.
    pub fn from_text(traceparent: Option<&str>, tracestate: Option<&str>, baggage: Option<&str>) -> Self {
        let mut headers = HeaderMap::new();
        for (name, value) in [("traceparent", traceparent), ("tracestate", tracestate), ("baggage", baggage)] {
            if let Some(value) = value.and_then(|v| http::HeaderValue::from_str(v).ok()) {
                headers.insert(name, value);
            }
        }
        Self::from_headers(&headers)
    }

    /// As `traceparent`/`tracestate` headers (none when absent or not valid header text).
    pub fn headers(&self) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in
            [("traceparent", &self.traceparent), ("tracestate", &self.tracestate), ("baggage", &self.baggage)]
        {
            if let Some(value) = value.as_deref().and_then(|v| http::HeaderValue::from_str(v).ok()) {
                headers.insert(name, value);
            }
        }
        headers
    }

    /// The current span's context when this process traces (its span is then the parent),
    /// else `self` (the caller's, passed through).
    pub fn in_current_span(self) -> Self {
        let mut headers = HeaderMap::new();
        inject_current(&mut headers);
        let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
        match text("traceparent") {
            Some(parent) => Self { traceparent: Some(parent), tracestate: text("tracestate"), baggage: self.baggage },
            None => self,
        }
    }
}

/// `version-traceid-parentid-flags` (W3C Trace Context §3.2), with a non-zero trace and
/// parent id; future versions may append fields after the flags.
fn is_traceparent(value: &str) -> bool {
    let fields: Vec<&str> = value.split('-').collect();
    let hex = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    let nonzero = |s: &str| s.bytes().any(|b| b != b'0');
    fields.len() >= 4
        && hex(fields[0], 2)
        && fields[0] != "ff"
        && (fields[0] != "00" || fields.len() == 4)
        && hex(fields[1], 32)
        && nonzero(fields[1])
        && hex(fields[2], 16)
        && nonzero(fields[2])
        && hex(fields[3], 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_well_formed_traceparents_are_kept() {
        let good = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        for (value, kept) in [
            (good, true),
            ("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra", true),
            ("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra", false),
            ("ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false),
            ("00-00000000000000000000000000000000-00f067aa0ba902b7-01", false),
            ("00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", false),
            ("00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", false),
            ("00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01", false),
            ("garbage", false),
        ] {
            let mut headers = HeaderMap::new();
            headers.insert("traceparent", value.parse().unwrap());
            headers.insert("tracestate", "vendor=1".parse().unwrap());
            let parsed = TraceParent::from_headers(&headers);
            assert_eq!(parsed.traceparent.is_some(), kept, "{value}");
            assert_eq!(parsed.tracestate.is_some(), kept, "{value}");
        }
        assert_eq!(TraceParent::from_headers(&HeaderMap::new()), TraceParent::default());
    }

    #[test]
    fn baggage_travels_with_or_without_a_trace_and_within_its_limit() {
        let good = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let with = TraceParent::from_text(Some(good), None, Some("user=ada,tier=1"));
        assert_eq!(with.baggage.as_deref(), Some("user=ada,tier=1"));
        assert_eq!(with.headers().get("baggage").unwrap(), "user=ada,tier=1");
        let without = TraceParent::from_text(Some("garbage"), None, Some("user=ada"));
        assert_eq!((without.traceparent, without.baggage.as_deref()), (None, Some("user=ada")));
        let huge = "k=".to_owned() + &"v".repeat(MAX_BAGGAGE);
        assert_eq!(TraceParent::from_text(None, None, Some(&huge)).baggage, None);
        assert_eq!(
            serde_json::to_value(TraceParent::from_text(None, None, Some("a=b"))).unwrap(),
            serde_json::json!({"baggage": "a=b"})
        );
    }
}
