//! Core's log events on standard error (core's `log_forward`): warnings and errors until
//! `setLogLevel` chooses another level, so a refused event or a failing cancel hook is never
//! silent.

use crate::errors;
use a2a_native::log_forward;

/// Every server start and client connect calls it (once per process it takes effect), as they
/// set up OpenTelemetry.
pub fn install() {
    log_forward::install_with_warnings(log_forward::Stderr, "a2a-native-node");
}

/// The level of core's log events on standard error: `error`, `warn` (the default), `info`,
/// `debug`, `trace` or `off`.
#[napi_derive::napi]
pub fn set_log_level(level: String) -> napi::Result<()> {
    // Only the level: the first server or client installs the forwarding (and reads the
    // OpenTelemetry variables), and keeps a level set before it.
    log_forward::set_max_level(log_forward::level_named(&level).map_err(errors::to_js)?);
    Ok(())
}
