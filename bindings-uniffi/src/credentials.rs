//! A Kotlin/Swift credentials callback as core's [`CredentialProvider`](core::CredentialProvider):
//! asked before every request for the headers to add (`method`, `url` -> name/value map).

use crate::errors::{A2aException, Result};
use a2a_native::client::{self as core, CredentialContext};
use a2a_native::{A2AError, ErrorKind};
use http::header::{HeaderName, HeaderValue};
use std::collections::HashMap;
use std::sync::Arc;

/// Implemented in Kotlin (a `suspend fun`) or Swift (`async`): the headers for one request.
#[uniffi::export(with_foreign)]
#[async_trait::async_trait]
pub trait CredentialProvider: Send + Sync {
    async fn headers(&self, method: String, url: String) -> Result<HashMap<String, String>>;
}

pub struct ForeignCredentials(pub Arc<dyn CredentialProvider>);

fn bad_header(what: String) -> A2AError {
    A2AError::new(ErrorKind::InvalidParams, what)
}

#[async_trait::async_trait]
impl core::CredentialProvider for ForeignCredentials {
    async fn headers(&self, ctx: &CredentialContext<'_>) -> a2a_native::Result<Vec<(HeaderName, HeaderValue)>> {
        let headers = self
            .0
            .headers(ctx.method.to_owned(), ctx.url.to_owned())
            .await
            .map_err(|e: A2aException| A2AError::from(e))?;
        headers
            .into_iter()
            .map(|(name, value)| {
                let name = HeaderName::try_from(name.as_str())
                    .map_err(|_| bad_header(format!("{name:?} is not an HTTP header name")))?;
                let mut value = HeaderValue::try_from(value)
                    .map_err(|_| bad_header(format!("the {name} value is not a valid HTTP header value")))?;
                value.set_sensitive(true);
                Ok((name, value))
            })
            .collect()
    }
}
