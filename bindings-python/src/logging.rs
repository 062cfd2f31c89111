//! Rust `tracing` events forwarded to Python's `logging`: target `a2a_native::server::service`
//! logs to the logger `a2a_native.server.service`. Spans are not forwarded.
//!
//! Installed once as the global subscriber (unless the process already has one). The level is
//! `logging.getLogger("a2a_native").getEffectiveLevel()`, read by [`sync_level`] whenever a
//! server starts or a client connects, so events below it cost no GIL. Beside it, when the
//! `OTEL_*` variables ask for it, core's OTLP exporter (`a2a_native::telemetry`) exports the
//! server's request and execution spans and the client's spans, flushed at exit ([`flush`]).

use pyo3::prelude::*;
use std::fmt::Write as _;
use std::sync::Once;
use std::sync::atomic::{AtomicU8, Ordering};
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Metadata, Subscriber};
use tracing_subscriber::filter::filter_fn;
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};

/// The most verbose level forwarded: 0 = none, 1 = ERROR ... 5 = TRACE.
static MAX_LEVEL: AtomicU8 = AtomicU8::new(0);
static INSTALL: Once = Once::new();

fn rank(level: &Level) -> u8 {
    match *level {
        Level::ERROR => 1,
        Level::WARN => 2,
        Level::INFO => 3,
        Level::DEBUG => 4,
        Level::TRACE => 5,
    }
}

fn python_level(level: &Level) -> i32 {
    match *level {
        Level::ERROR => 40,
        Level::WARN => 30,
        Level::INFO => 20,
        Level::DEBUG => 10,
        Level::TRACE => 5,
    }
}

struct ToLogging;

#[derive(Default)]
struct Text(String);

impl Visit for Text {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let fields = std::mem::take(&mut self.0);
            let _ = write!(self.0, "{value:?}{fields}");
        } else {
            let _ = write!(self.0, " {}={value:?}", field.name());
        }
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.0.insert_str(0, value);
        } else {
            let _ = write!(self.0, " {}={value}", field.name());
        }
    }
}

fn forwarded(metadata: &Metadata<'_>) -> bool {
    rank(metadata.level()) <= MAX_LEVEL.load(Ordering::Relaxed)
}

impl<S: Subscriber> Layer<S> for ToLogging {
    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let meta = event.metadata();
        let mut text = Text::default();
        event.record(&mut text);
        let name = meta.target().replace("::", ".");
        // Events come from any thread, runtime threads included: through the gate (an event
        // while Python exits is dropped).
        crate::runtime::attach_on_worker(|py| {
            let sent = py
                .import("logging")
                .and_then(|logging| logging.call_method1("getLogger", (name,)))
                .and_then(|logger| logger.call_method1("log", (python_level(meta.level()), text.0)));
            if let Err(e) = sent {
                e.print(py);
            }
        });
    }
}

/// Installs the bridge (once) and reads the `a2a_native` logger's level.
#[pyfunction]
pub fn sync_level(py: Python<'_>) -> PyResult<()> {
    let level: i32 = py
        .import("logging")?
        .call_method1("getLogger", ("a2a_native",))?
        .call_method0("getEffectiveLevel")?
        .extract()?;
    let max = match level {
        l if l <= 5 => 5,
        l if l <= 10 => 4,
        l if l <= 20 => 3,
        l if l <= 30 => 2,
        l if l <= 40 => 1,
        _ => 0,
    };
    MAX_LEVEL.store(max, Ordering::Relaxed);
    INSTALL.call_once(|| {
        // Each layer filters for itself: the logging level must not hide spans from the exporter.
        let traces = a2a_native::telemetry::global("a2a-native-python");
        let subscriber = tracing_subscriber::registry()
            .with(ToLogging.with_filter(filter_fn(forwarded)))
            .with(traces.map(|t| t.layer()));
        let _ = tracing::subscriber::set_global_default(subscriber);
    });
    tracing::callsite::rebuild_interest_cache();
    Ok(())
}
