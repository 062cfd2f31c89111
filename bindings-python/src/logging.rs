//! Core's `tracing` events forwarded to Python's `logging` (core's `log_forward`): target
//! `a2a_native::server::service` logs to the logger `a2a_native.server.service`. The level is
//! `logging.getLogger("a2a_native").getEffectiveLevel()`, read by [`sync_level`] whenever a
//! server starts or a client connects, so events below it cost no GIL. Beside it, when the
//! `OTEL_*` variables ask for it, core's OTLP exporter exports the server's and the client's
//! spans, flushed at exit.

use a2a_native::log_forward::{self, LogSink};
use pyo3::prelude::*;
use tracing::Level;

struct ToLogging;

impl LogSink for ToLogging {
    fn log(&self, logger: String, level: Level, text: String) {
        let level = match level {
            Level::ERROR => 40,
            Level::WARN => 30,
            Level::INFO => 20,
            Level::DEBUG => 10,
            Level::TRACE => 5,
        };
        // Events come from any thread, runtime threads included: through the gate (an event
        // while Python exits is dropped).
        crate::runtime::attach_on_worker(|py| {
            let sent = py
                .import("logging")
                .and_then(|logging| logging.call_method1("getLogger", (logger,)))
                .and_then(|logger| logger.call_method1("log", (level, text)));
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
    log_forward::install(ToLogging, "a2a-native-python");
    log_forward::set_max_level(match level {
        l if l <= 5 => Some(Level::TRACE),
        l if l <= 10 => Some(Level::DEBUG),
        l if l <= 20 => Some(Level::INFO),
        l if l <= 30 => Some(Level::WARN),
        l if l <= 40 => Some(Level::ERROR),
        _ => None,
    });
    Ok(())
}
