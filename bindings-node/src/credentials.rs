//! A JavaScript function as core's [`CredentialProvider`]: `(method, url) => headers`, plain or
//! async. The JS layer (`lib/client.js`) wraps it so that it always returns a Promise of the
//! headers as JSON text; a throw or a rejection fails the call before anything is sent.

use a2a_native::client::{CredentialContext, CredentialProvider, headers_from_pairs};
use a2a_native::error::{A2AError, ErrorKind, Result};
use async_trait::async_trait;
use http::header::{HeaderName, HeaderValue};
use napi::Status;
use napi::bindgen_prelude::{FnArgs, Promise};
use napi::threadsafe_function::ThreadsafeFunction;
use std::collections::BTreeMap;

/// `(method, url) => Promise<string>`. Weak: a client kept alive does not keep Node running.
pub type Provide =
    ThreadsafeFunction<FnArgs<(String, String)>, Promise<String>, FnArgs<(String, String)>, Status, false, true>;

pub struct JsCredentials(pub Provide);

/// The function's own error text (napi's Display would put its status before it).
fn failed(e: napi::Error) -> A2AError {
    A2AError::new(ErrorKind::Internal, format!("the credentials function failed: {}", e.reason))
}

#[async_trait]
impl CredentialProvider for JsCredentials {
    async fn headers(&self, ctx: &CredentialContext<'_>) -> Result<Vec<(HeaderName, HeaderValue)>> {
        let args = FnArgs::from((ctx.method.to_owned(), ctx.url.to_owned()));
        let text = self.0.call_async_catch(args).await.map_err(failed)?.await.map_err(failed)?;
        let headers: BTreeMap<String, String> = serde_json::from_str(&text).map_err(|_| {
            A2AError::new(ErrorKind::Internal, "the credentials function must return an object of string headers")
        })?;
        headers_from_pairs(headers)
    }
}
