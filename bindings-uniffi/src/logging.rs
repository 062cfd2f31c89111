//! Core's `tracing` events for the host (core's `log_forward`): by default warnings and errors
//! go to standard error, as the CLI writes them, so a refused event or a failing cancel hook is
//! never silent; [`set_log_sink`] hands them to the host's logging instead (Kotlin's
//! `useJavaLogging()` to java.util.logging; Swift to os_log, say). The logger is the event's
//! target with `.` for `::` (`a2a_native.task.manager`). Beside it, when the `OTEL_*` variables
//! ask for it, core's OTLP exporter exports the spans.

use a2a_native::log_forward;
use std::sync::{Arc, PoisonError, RwLock};
use tracing::Level;

/// A log event's level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum LogLevel {
    Error,
    Warn,
    Info,
    Debug,
    Trace,
}

/// The host's logging: called from any thread, once per event at or above the level set.
#[uniffi::export(with_foreign)]
pub trait LogSink: Send + Sync {
    fn log(&self, logger: String, level: LogLevel, text: String);
}

/// The host's sink; none: standard error.
static SINK: RwLock<Option<Arc<dyn LogSink>>> = RwLock::new(None);

struct Switch;

impl log_forward::LogSink for Switch {
    fn log(&self, logger: String, level: Level, text: String) {
        // Cloned out, so that the lock is not held while the host logs (a sink may set another).
        let sink = SINK.read().unwrap_or_else(PoisonError::into_inner).clone();
        let Some(sink) = sink else { return log_forward::Stderr.log(logger, level, text) };
        // A sink that throws is a panic here (uniffi's callback failure), in the middle of the
        // core code that logged: the event goes to standard error instead.
        let (name, line) = (logger.clone(), text.clone());
        if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sink.log(logger, level_of(&level), text))).is_err()
        {
            log_forward::Stderr.log(name, level, line);
        }
    }
}

fn level_of(level: &Level) -> LogLevel {
    match *level {
        Level::ERROR => LogLevel::Error,
        Level::WARN => LogLevel::Warn,
        Level::INFO => LogLevel::Info,
        Level::DEBUG => LogLevel::Debug,
        Level::TRACE => LogLevel::Trace,
    }
}

/// Makes core's events reach [`Switch`] (once per process), warnings and errors until the host
/// sets a level. Every server start and client connect calls it, as they set up OpenTelemetry.
pub fn install() {
    log_forward::install_with_warnings(Switch, "a2a-native-uniffi");
}

/// Sends core's log events at `level` and above (`null`: none) to `sink` (`null`: standard
/// error), from now on. The sink must not throw: an event it fails on goes to standard error.
#[uniffi::export]
pub fn set_log_sink(sink: Option<Arc<dyn LogSink>>, level: Option<LogLevel>) {
    *SINK.write().unwrap_or_else(PoisonError::into_inner) = sink;
    log_forward::set_max_level(level.map(|l| match l {
        LogLevel::Error => Level::ERROR,
        LogLevel::Warn => Level::WARN,
        LogLevel::Info => Level::INFO,
        LogLevel::Debug => Level::DEBUG,
        LogLevel::Trace => Level::TRACE,
    }));
}
