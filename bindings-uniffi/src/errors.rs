//! One error type for Kotlin and Swift: `A2aException`, carrying the spec's code and name from
//! core's error table. Kotlin sees `A2aException.Failure` (a `kotlin.Exception`); Swift an `Error`
//! enum with one case. The wrappers (kotlin/, swift/) add `code` / `name` accessors.

use a2a_native::error::{A2AError, ErrorKind};

pub type Result<T, E = A2aException> = std::result::Result<T, E>;

/// A field that failed validation: a JSON path (`message.parts[0]`) and why.
#[derive(Debug, Clone, PartialEq, uniffi::Record)]
pub struct FieldViolation {
    pub field: String,
    pub description: String,
}

#[derive(Debug, Clone, PartialEq, uniffi::Error)]
pub enum A2aException {
    /// `code`: the JSON-RPC code (-32001 TaskNotFound, ...); `name`: the spec's name
    /// (`TaskNotFoundError`); `reason`: the `ErrorInfo.reason`; `detail`: the human message.
    Failure { code: i32, name: String, reason: String, detail: String, violations: Vec<FieldViolation> },
}

impl A2aException {
    pub fn code(&self) -> i32 {
        let Self::Failure { code, .. } = self;
        *code
    }

    /// An error of the kind named `name` (a row of core's table; an unknown name is Internal,
    /// with a warning in the log, since it is most likely a typo).
    pub fn named(name: &str, detail: impl Into<String>) -> Self {
        let kind = ErrorKind::from_name(name).unwrap_or_else(|| {
            tracing::warn!(name, "a2aError: no A2A error has this name; it is sent as InternalError");
            ErrorKind::Internal
        });
        A2AError::new(kind, detail).into()
    }
}

/// An `A2aException` of the spec error named `name` (`TaskNotFoundError`, ...; an unknown name
/// is InternalError, and a warning in the log), with its code and reason from core's table: what a Kotlin/Swift handler
/// throws to answer with that error.
#[uniffi::export]
pub fn a2a_error(name: String, detail: String) -> A2aException {
    A2aException::named(&name, detail)
}

impl std::fmt::Display for A2aException {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Self::Failure { code, name, detail, .. } = self;
        write!(f, "{name} ({code}): {detail}")
    }
}

impl std::error::Error for A2aException {}

impl From<A2AError> for A2aException {
    fn from(e: A2AError) -> Self {
        let spec = e.kind.spec();
        Self::Failure {
            code: spec.jsonrpc_code,
            name: spec.name.to_owned(),
            reason: spec.reason.to_owned(),
            detail: e.message,
            violations: e
                .violations
                .into_iter()
                .map(|v| FieldViolation { field: v.field, description: v.description })
                .collect(),
        }
    }
}

impl From<A2aException> for A2AError {
    fn from(e: A2aException) -> Self {
        let A2aException::Failure { name, detail, violations, .. } = e;
        let kind = ErrorKind::from_host(&name);
        let mut err = A2AError::new(kind, detail);
        err.violations = violations
            .into_iter()
            .map(|v| a2a_native::error::FieldViolation { field: v.field, description: v.description })
            .collect();
        err
    }
}

/// A Kotlin/Swift callback (executor, credentials) that threw something other than an
/// `A2aException`: an internal error with what the host said.
impl From<uniffi::UnexpectedUniFFICallbackError> for A2aException {
    fn from(e: uniffi::UnexpectedUniFFICallbackError) -> Self {
        A2AError::new(ErrorKind::Internal, e.reason).into()
    }
}

/// One row of core's error table.
#[derive(Debug, Clone, PartialEq, uniffi::Record)]
pub struct ErrorSpec {
    pub name: String,
    pub code: i32,
    pub reason: String,
    pub http_status: u16,
}

/// Core's error table, for hosts that map codes themselves.
#[uniffi::export]
pub fn error_table() -> Vec<ErrorSpec> {
    a2a_native::error::ERROR_TABLE
        .iter()
        .map(|r| ErrorSpec {
            name: r.name.into(),
            code: r.jsonrpc_code,
            reason: r.reason.into(),
            http_status: r.http_status,
        })
        .collect()
}
