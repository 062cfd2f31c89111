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

/// Writes the current span's trace context into outgoing `headers` (client calls, push
/// notifications), so the callee's spans join this trace.
pub fn inject_current(headers: &mut HeaderMap) {
    use tracing_opentelemetry::OpenTelemetrySpanExt;
    let context = tracing::Span::current().context();
    opentelemetry::global::get_text_map_propagator(|p| p.inject_context(&context, &mut HeadersMut(headers)));
}
