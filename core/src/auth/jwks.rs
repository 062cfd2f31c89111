//! A JSON Web Key Set over HTTPS, read with a hard bound on size and time: an endless or
//! oversized answer costs at most [`MAX_JWKS_BYTES`] of memory.

use super::KeySet;
use crate::error::{A2AError, ErrorKind, Result};
use std::time::Duration;

/// Largest key set accepted.
pub const MAX_JWKS_BYTES: usize = 1 << 20;

/// A JSON Web Key Set fetched from `url` (an agent's push keys, a card signer's keys), read
/// within 10 s.
pub async fn fetch_jwks(url: &str) -> Result<KeySet> {
    let timeout = Duration::from_secs(10);
    let http = reqwest::Client::builder().timeout(timeout).build().map_err(|e| fetch_error(url, &e))?;
    fetch_jwks_with(&http, url, timeout).await
}

/// [`fetch_jwks`] with the caller's HTTP client (the server's JWT verifier has its own, which
/// follows no redirects). The body is read in chunks and refused as soon as it passes
/// [`MAX_JWKS_BYTES`].
pub async fn fetch_jwks_with(http: &reqwest::Client, url: &str, timeout: Duration) -> Result<KeySet> {
    let read = async {
        let mut resp = http.get(url).send().await.map_err(|e| fetch_error(url, &e))?;
        if !resp.status().is_success() {
            return Err(A2AError::new(ErrorKind::Transport, format!("fetching {url}: HTTP {}", resp.status())));
        }
        // What was served is wrong (InvalidParams, as a body that is no JWKS), not unreachable.
        let too_large = || {
            A2AError::new(ErrorKind::InvalidParams, format!("{url}: the JWKS is larger than {MAX_JWKS_BYTES} bytes"))
        };
        if resp.content_length().is_some_and(|n| n > MAX_JWKS_BYTES as u64) {
            return Err(too_large());
        }
        let mut body = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(|e| fetch_error(url, &e))? {
            if body.len() + chunk.len() > MAX_JWKS_BYTES {
                return Err(too_large());
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    };
    let body = tokio::time::timeout(timeout, read)
        .await
        .map_err(|_| A2AError::new(ErrorKind::Timeout, format!("fetching {url}: no answer within {timeout:?}")))??;
    KeySet::from_slice(&body).map_err(|e| A2AError::new(ErrorKind::InvalidParams, format!("{url} is not a JWKS: {e}")))
}

/// Transport when the key set could not be reached; InvalidParams when what came back could not
/// be read as a body (a broken chunked encoding): the server's fault, as a body that is no JWKS.
fn fetch_error(url: &str, e: &reqwest::Error) -> A2AError {
    let kind = if e.is_decode() { ErrorKind::InvalidParams } else { ErrorKind::Transport };
    A2AError::new(kind, format!("fetching {url}: {e}"))
}
