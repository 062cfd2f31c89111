//! The caller's trace context for client calls. The JVM's and Swift's OpenTelemetry keep the
//! current context per thread (or task); a client call reads it through the source the host
//! registered ([`set_trace_context_source`]) when the call starts, on the caller's own thread
//! (uniffi polls an async call there first), and the call then joins that trace
//! (`trace_context::with_caller`). Kotlin's `useOpenTelemetryContext()` registers a source
//! over opentelemetry-api.

use a2a_native::trace_context::{TraceParent, with_caller};
use std::future::Future;
use std::sync::{Arc, PoisonError, RwLock};

/// A W3C trace context as text.
#[derive(uniffi::Record)]
pub struct TraceContext {
    pub traceparent: String,
    #[uniffi(default)]
    pub tracestate: Option<String>,
    /// W3C baggage, passed on as it is.
    #[uniffi(default)]
    pub baggage: Option<String>,
}

/// The host's current trace context, asked for at the start of each client call on the
/// caller's thread; `None` outside any span.
#[uniffi::export(with_foreign)]
pub trait TraceContextSource: Send + Sync {
    fn current(&self) -> Option<TraceContext>;
}

static SOURCE: RwLock<Option<Arc<dyn TraceContextSource>>> = RwLock::new(None);

/// Registers (or, with `None`, removes) the source every client call reads its caller's trace
/// context from.
#[uniffi::export]
pub fn set_trace_context_source(source: Option<Arc<dyn TraceContextSource>>) {
    *SOURCE.write().unwrap_or_else(PoisonError::into_inner) = source;
}

/// `call` as part of the caller's trace: the source is read now, on the calling thread.
pub fn traced<F: Future>(call: F) -> impl Future<Output = F::Output> {
    let source = SOURCE.read().unwrap_or_else(PoisonError::into_inner).clone();
    // A source that throws is a panic here (uniffi's callback failure): the call goes on
    // without a trace context instead of failing with an error that is no A2A error.
    let caller = source
        .and_then(|s| std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| s.current())).ok().flatten())
        .map(|t| TraceParent::from_text(Some(&t.traceparent), t.tracestate.as_deref(), t.baggage.as_deref()))
        .unwrap_or_default();
    with_caller(caller, call)
}
