//! Core's `tracing` events handed to a host language's logging (Python's `logging`, say):
//! [`install`] makes one process-wide subscriber of the host's [`LogSink`] beside the OTLP
//! exporter ([`crate::telemetry`]). Spans are not forwarded. Events above the level the host
//! last set ([`set_max_level`]) are dropped before they are formatted, so a quiet host pays
//! nothing for them.

use std::fmt::Write as _;
use std::io::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::filter::filter_fn;
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};

/// Where the host wants core's log events.
pub trait LogSink: Send + Sync + 'static {
    /// `logger`: the event's target with `.` for `::` (`a2a_native.server.service`); `text`: the
    /// message, then each field as ` name=value`.
    fn log(&self, logger: String, level: Level, text: String);
}

/// The default log filter of a process serving A2A (`RUST_LOG`'s syntax). h2's warnings are
/// left out: each tells of a peer's protocol error (a PING ack never asked for, ...), so a
/// client could flood the log with them at a line per frame, while h2 answers the error itself.
pub const DEFAULT_FILTER: &str = "warn,a2a_native=info,h2=error";

/// Whether an event of `target` at `level` is one of those peer-made warnings (h2's debug and
/// trace events pass, for whoever turns the level up to look at them).
fn peer_noise(target: &str, level: &Level) -> bool {
    *level == Level::WARN && (target == "h2" || target.starts_with("h2::"))
}

/// The most verbose level forwarded: 0 = none, 1 = ERROR ... 5 = TRACE.
static MAX_LEVEL: AtomicU8 = AtomicU8::new(0);
/// Whether the host chose a level ([`set_max_level`]); until then [`install_with_warnings`]
/// forwards warnings and errors.
static LEVEL_SET: AtomicBool = AtomicBool::new(false);

fn rank(level: &Level) -> u8 {
    match *level {
        Level::ERROR => 1,
        Level::WARN => 2,
        Level::INFO => 3,
        Level::DEBUG => 4,
        Level::TRACE => 5,
    }
}

/// Forwards events at `level` and above (`None`: none), from now on.
pub fn set_max_level(level: Option<Level>) {
    LEVEL_SET.store(true, Ordering::Relaxed);
    MAX_LEVEL.store(level.as_ref().map_or(0, rank), Ordering::Relaxed);
    tracing::callsite::rebuild_interest_cache();
}

/// Makes `sink` (the first one given; later calls keep it) the process's log destination,
/// with `default_service`'s OTLP exporter when the `OTEL_*` variables ask for one. Unless the
/// process already has a global subscriber.
pub fn install(sink: impl LogSink, default_service: &str) {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        let subscriber = tracing_subscriber::registry()
            .with(forwarding(sink))
            .with(crate::telemetry::global(default_service).map(|t| t.layer()));
        let _ = tracing::subscriber::set_global_default(subscriber);
    });
}

/// [`install`], forwarding warnings and errors until the host sets a level: what a host that
/// has no logging of its own to consult gets (the Node and Kotlin/Swift bindings), so that a
/// refused event or a failing cancel hook is never silent.
pub fn install_with_warnings(sink: impl LogSink, default_service: &str) {
    static DEFAULT: std::sync::Once = std::sync::Once::new();
    DEFAULT.call_once(|| {
        if !LEVEL_SET.load(Ordering::Relaxed) {
            MAX_LEVEL.store(rank(&Level::WARN), Ordering::Relaxed);
            tracing::callsite::rebuild_interest_cache();
        }
    });
    install(sink, default_service);
}

/// Standard error, a line per event (`WARN a2a_native.task.manager: text`): the log of a host
/// that has not given its own.
pub struct Stderr;

impl LogSink for Stderr {
    fn log(&self, logger: String, level: Level, text: String) {
        // Not eprintln!, which panics when standard error is a closed pipe (`app | head`).
        let _ = writeln!(std::io::stderr().lock(), "{level} {logger}: {text}");
    }
}

/// A level as a host names it: `error`, `warn`, `info`, `debug` or `trace` in any case, or
/// `off` (none); InvalidParams naming `level` otherwise.
pub fn level_named(name: &str) -> crate::Result<Option<Level>> {
    Ok(Some(match name.to_ascii_lowercase().as_str() {
        "off" => return Ok(None),
        "error" => Level::ERROR,
        "warn" => Level::WARN,
        "info" => Level::INFO,
        "debug" => Level::DEBUG,
        "trace" => Level::TRACE,
        _ => {
            let why = format!("{name:?}: error, warn, info, debug, trace or off");
            return Err(crate::A2AError::invalid_field("level", why));
        }
    }))
}

/// The layer that hands events to `sink`, filtered by the level set. It filters for itself:
/// the log level must not hide spans from the exporter beside it.
fn forwarding<S: LogSink, R: Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>>(
    sink: S,
) -> impl Layer<R> {
    Forward(sink).with_filter(filter_fn(|meta| {
        rank(meta.level()) <= MAX_LEVEL.load(Ordering::Relaxed) && !peer_noise(meta.target(), meta.level())
    }))
}

struct Forward<S>(S);

impl<S: LogSink, R: Subscriber> Layer<R> for Forward<S> {
    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, R>) {
        let meta = event.metadata();
        let mut text = Text::default();
        event.record(&mut text);
        self.0.log(meta.target().replace("::", "."), *meta.level(), text.0);
    }
}

/// The message first, then the other fields.
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct Lines(Arc<Mutex<Vec<(String, Level, String)>>>);

    impl LogSink for Lines {
        fn log(&self, logger: String, level: Level, text: String) {
            self.0.lock().unwrap().push((logger, level, text));
        }
    }

    #[test]
    fn levels_are_read_by_name_and_others_refused() {
        assert_eq!(level_named("WARN").unwrap(), Some(Level::WARN));
        assert_eq!(level_named("debug").unwrap(), Some(Level::DEBUG));
        assert_eq!(level_named("Off").unwrap(), None);
        assert!(level_named("3").is_err(), "a number is no level name");
        let e = level_named("verbose").unwrap_err();
        assert_eq!(e.kind, crate::ErrorKind::InvalidParams);
        assert!(e.message.contains("verbose"), "{e}");
    }

    #[test]
    fn events_reach_the_sink_as_text_from_the_level_set() {
        let lines = Lines::default();
        let subscriber = tracing_subscriber::registry().with(forwarding(lines.clone()));
        tracing::subscriber::with_default(subscriber, || {
            set_max_level(Some(Level::INFO));
            tracing::debug!(target: "a2a_native::server::service", "too verbose");
            tracing::warn!(target: "a2a_native::server::service", task = "t-1", code = 7, "slow {}", "store");
            // A peer's protocol error, as h2 warns of it (a client could send one per frame),
            // is left out; h2's errors are not.
            tracing::warn!(target: "h2::proto::ping_pong", "recv PING ack that we never sent");
            tracing::error!(target: "h2::proto::connection", "kept");
            tracing::debug!(target: "h2::codec", "too verbose for the level set");
            set_max_level(None);
            tracing::error!("not forwarded");
        });
        let lines = lines.0.lock().unwrap();
        assert_eq!(
            *lines,
            vec![
                ("a2a_native.server.service".to_owned(), Level::WARN, "slow store task=t-1 code=7".to_owned()),
                ("h2.proto.connection".to_owned(), Level::ERROR, "kept".to_owned()),
            ]
        );
    }
}
