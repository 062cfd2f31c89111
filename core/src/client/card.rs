//! Agent card resolution: where the card lives, how it is read (1.0, or 0.3 converted to
//! 1.0), and an HTTP cache for it.
//!
//! - Location: a URL whose path ends in `.json` is the card itself; otherwise the card is at
//!   `{url}/.well-known/agent-card.json`, and when that is 404, at the 0.2 path
//!   `{url}/.well-known/agent.json`.
//! - Reading: a document with `supportedInterfaces` is a 1.0 card. One without it but with
//!   the 0.3 members (`url`, `protocolVersion`) is a 0.3 card: it is read with
//!   [`v03::AgentCard`] and converted, its interfaces declaring protocolVersion `0.3` (or
//!   `0.2` for a 0.2.x card). Anything invalid is InvalidAgentResponse naming the field
//!   (`supportedInterfaces[0].url: is required`).
//! - Caching: every connect asks the agent, so a stopped agent fails it and a changed one (or
//!   another agent on the same address) is seen; a card with an `ETag` is asked for with
//!   `If-None-Match`, and `304 Not Modified` reuses it unread. `no-store` keeps nothing. A
//!   `max-age` is not trusted to skip the request: a card is fetched once per connect, and a
//!   stale one (new security schemes, a restarted server) costs far more than that request.
//!   By default every client of the process shares one cache ([`CardCache::shared`]).
//! - The card fetch is idempotent: it is retried like GetTask, and sent without credentials.

use super::transport::{self, Http, Outgoing, invalid_response};
use crate::error::{A2AError, ErrorKind, Result};
use crate::model::{self, AgentCard, v03};
use http::header::{ACCEPT, CACHE_CONTROL, ETAG, HeaderMap, HeaderValue, IF_NONE_MATCH};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;

pub use crate::model::{LEGACY_WELL_KNOWN_PATH, WELL_KNOWN_PATH};

#[derive(Clone)]
struct Entry {
    card: AgentCard,
    etag: HeaderValue,
}

/// Agent cards by URL, with their HTTP validators.
#[derive(Default)]
pub struct CardCache {
    entries: Mutex<HashMap<String, Entry>>,
}

static SHARED: LazyLock<Arc<CardCache>> = LazyLock::new(|| Arc::new(CardCache::new()));

impl CardCache {
    pub fn new() -> Self {
        Self::default()
    }

    /// The process-wide cache clients use unless given another.
    pub fn shared() -> Arc<CardCache> {
        SHARED.clone()
    }

    /// Forgets every card.
    pub fn clear(&self) {
        self.lock().clear();
    }

    /// Number of cards held.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        // A panic while holding the lock cannot leave a map half-written; keep using it.
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn get(&self, url: &str) -> Option<Entry> {
        self.lock().get(url).cloned()
    }

    fn put(&self, url: &str, entry: Option<Entry>) {
        let mut map = self.lock();
        match entry {
            Some(e) => map.insert(url.to_owned(), e),
            None => map.remove(url),
        };
    }
}

/// Whether `Cache-Control` lets the card be kept (for revalidation): not with `no-store`.
fn may_store(headers: &HeaderMap) -> bool {
    !headers
        .get_all(CACHE_CONTROL)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|text| text.split(','))
        .any(|directive| directive.trim().eq_ignore_ascii_case("no-store"))
}

/// A delta-seconds value as RFC 9111 §1.2.2 bounds it: beyond 2^31 it counts as 2^31 (68
/// years). Unbounded, a server's `max-age` (or a token's `expires_in`) added to `Instant::now()`
/// would overflow, which panics.
pub(crate) fn delta_seconds(secs: u64) -> Duration {
    Duration::from_secs(secs.min(1 << 31))
}

/// The card URLs to try for `url`, in order.
pub(crate) fn card_urls(url: &str) -> Vec<String> {
    let path = url.split(['?', '#']).next().unwrap_or(url);
    if path.ends_with(".json") {
        return vec![url.to_owned()];
    }
    let base = path.trim_end_matches('/');
    vec![format!("{base}{WELL_KNOWN_PATH}"), format!("{base}{LEGACY_WELL_KNOWN_PATH}")]
}

/// Resolves the card of the agent at `url` (see the module docs).
pub(crate) async fn resolve(http: &Http, cache: &CardCache, url: &str) -> Result<AgentCard> {
    // A mistake in the URL is the caller's, said as such (reqwest would call it a failed request).
    match reqwest::Url::parse(url) {
        Ok(u) if matches!(u.scheme(), "http" | "https") => {}
        // `localhost:9999` parses as the scheme `localhost`.
        Ok(_) if !url.contains("://") => {
            return Err(A2AError::invalid_field(
                "url",
                format!("{url:?} has no scheme: write http://{url} or https://{url}"),
            ));
        }
        Ok(u) => {
            return Err(A2AError::invalid_field(
                "url",
                format!("{url:?}: the scheme {:?} is not http or https", u.scheme()),
            ));
        }
        Err(e) => return Err(A2AError::invalid_field("url", format!("{url:?} is not an absolute URL: {e}"))),
    }
    let urls = card_urls(url);
    let mut result = Err(A2AError::internal("no agent card URL"));
    for (i, card_url) in urls.iter().enumerate() {
        result = fetch(http, cache, card_url).await;
        match &result {
            Err(e) if i + 1 < urls.len() && e.metadata.contains_key("cardNotFound") => {
                tracing::debug!(url = %card_url, "no agent card here; trying the A2A 0.2 path");
            }
            _ => break,
        }
    }
    // Not found at either path: the message names both, not only the 0.2 one tried last.
    if urls.len() > 1
        && let Err(e) = &mut result
        && e.metadata.contains_key("cardNotFound")
    {
        e.message = format!("no agent card at {} (nor at {}): {}", urls[0], urls[1], e.message);
    }
    result
}

async fn fetch(http: &Http, cache: &CardCache, url: &str) -> Result<AgentCard> {
    let cached = cache.get(url);
    let mut headers = http.config.headers.clone();
    headers.insert(ACCEPT, HeaderValue::from_static(transport::JSON));
    if let Some(entry) = &cached {
        headers.insert(IF_NONE_MATCH, entry.etag.clone());
    }
    let out = Outgoing {
        verb: reqwest::Method::GET,
        url: url.to_owned(),
        headers,
        body: None,
        idempotent: true,
        streaming: false,
    };
    let mut resp = http.send(&out).await?;
    let status = resp.status().as_u16();
    let storable = may_store(resp.headers());
    let etag = resp.headers().get(ETAG).cloned();
    if status == 304
        && let Some(mut entry) = cached
    {
        tracing::debug!(%url, "agent card not modified");
        if !storable {
            cache.put(url, None);
        } else if let Some(etag) = etag {
            entry.etag = etag;
            cache.put(url, Some(entry.clone()));
        }
        return Ok(entry.card);
    }
    let headers = resp.headers().clone();
    let body = transport::read_body(&mut resp, http.config.max_response_bytes, http.config.timeout).await?;
    if !(200..300).contains(&status) {
        return Err(card_refused(status, &headers, &body, url));
    }
    let card = parse_card(&body, url).map_err(|e| match transport::BodyForm::of(&headers).unreadable(&body) {
        Some(why) => invalid_response(format!("the agent card at {url} is not JSON: {why}")).with_meta("url", url),
        None => e,
    })?;
    let entry = etag.filter(|_| storable).map(|etag| Entry { card: card.clone(), etag });
    cache.put(url, entry);
    Ok(card)
}

/// The error for a card request answered with `status`. A 404 (or any status but the auth and
/// overload ones) means no agent card is served there: InvalidAgentResponse, not the
/// TaskNotFound a 404 means from an A2A operation. The body is quoted only when it is short
/// text, not a web page.
fn card_refused(status: u16, headers: &HeaderMap, body: &[u8], url: &str) -> A2AError {
    let structured = A2AError::from_http(status, body);
    let kind = match structured.kind {
        ErrorKind::Unauthenticated | ErrorKind::PermissionDenied | ErrorKind::Unavailable => structured.kind,
        _ if status == 429 => ErrorKind::Unavailable,
        _ => ErrorKind::InvalidAgentResponse,
    };
    let reason = http::StatusCode::from_u16(status).ok().and_then(|s| s.canonical_reason()).unwrap_or("");
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    let quoted = if text.is_empty() || text.starts_with('<') || text.len() > 200 {
        format!("({} bytes)", body.len())
    } else {
        format!("({text:?})")
    };
    let mut message = format!("cannot read the agent card at {url}: HTTP {status} {reason} {quoted}");
    // A redirect that is the answer is one the client would not follow (see `same_origin_redirects`).
    if (300..400).contains(&status)
        && let Some(to) = headers.get(http::header::LOCATION).and_then(|v| v.to_str().ok())
    {
        let to = crate::error::echoed(to);
        message.push_str(&format!(", a redirect to {to:?} not followed (only up to 10, on the same origin)"));
    }
    let mut err = A2AError::new(kind, message);
    err.metadata = structured.metadata;
    if status == 404 {
        err = err.with_meta("cardNotFound", url);
    }
    err.with_meta("url", url).with_meta("httpStatus", status.to_string())
}

/// A card read from `bytes` (1.0, or 0.3 converted to 1.0). `url` is only for messages.
pub fn parse_card(bytes: &[u8], url: &str) -> Result<AgentCard> {
    let bad = |mut e: A2AError| {
        e.kind = ErrorKind::InvalidAgentResponse;
        e.message = format!("the agent card at {url} is invalid: {}", e.message);
        e.with_meta("url", url)
    };
    let value: Value = serde_json::from_slice(bytes)
        .map_err(|e| invalid_response(format!("the agent card at {url} is not JSON: {e}")).with_meta("url", url))?;
    if !value.is_object() {
        return Err(invalid_response(format!("the agent card at {url} is not a JSON object")).with_meta("url", url));
    }
    read_card(value).map_err(bad)
}

/// A card given as JSON, 1.0 or 0.3 (converted to 1.0), as [`parse_card`] reads one; its
/// faults are InvalidParams naming the field (the caller's, not an agent's).
pub fn read_card(value: Value) -> Result<AgentCard> {
    let has = |key: &str| value.as_object().is_some_and(|obj| obj.contains_key(key));
    let is_v10 = has("supportedInterfaces") || has("supported_interfaces");
    let is_v03 = has("url") || has("protocolVersion");
    if is_v10 || !is_v03 {
        return model::parse_value::<AgentCard>(value);
    }
    let card: v03::AgentCard = model::parse_value(value)?;
    AgentCard::try_from(card)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn card_locations() {
        assert_eq!(
            card_urls("http://h:1"),
            ["http://h:1/.well-known/agent-card.json", "http://h:1/.well-known/agent.json"]
        );
        assert_eq!(card_urls("http://h/a/")[0], "http://h/a/.well-known/agent-card.json");
        assert_eq!(card_urls("http://h/cards/x.json"), ["http://h/cards/x.json"]);
    }

    #[tokio::test]
    async fn a_url_that_is_no_http_url_is_the_callers_mistake() {
        for bad in ["undefined", "", "localhost:9999", "ftp://h/x", "http://"] {
            let Err(e) = crate::client::Client::connect(bad).await else { panic!("{bad:?} was taken") };
            assert_eq!((e.kind, e.violations[0].field.as_str()), (ErrorKind::InvalidParams, "url"), "{bad:?}: {e}");
        }
    }

    #[test]
    fn cache_control() {
        let h = |v: &str| {
            let mut m = HeaderMap::new();
            m.insert(CACHE_CONTROL, v.parse().unwrap());
            m
        };
        assert!(may_store(&h("public, max-age=300")) && may_store(&h("max-age=60, no-cache")));
        assert!(!may_store(&h("max-age=60, No-Store")));
        assert!(may_store(&HeaderMap::new()));
    }

    #[test]
    fn cards_of_both_versions() {
        let skills = json!([{"id": "s", "name": "s", "description": "d", "tags": ["t"]}]);
        let v10 = json!({
            "name": "a", "description": "d", "version": "1",
            "supportedInterfaces": [{"url": "http://h/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
            "capabilities": {}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"], "skills": skills
        });
        let card = parse_card(v10.to_string().as_bytes(), "u").unwrap();
        assert_eq!(card.supported_interfaces[0].protocol_version, "1.0");

        let v03 = json!({
            "protocolVersion": "0.3.0", "name": "a", "description": "d", "version": "1", "url": "http://h/rpc",
            "additionalInterfaces": [{"url": "http://h/rest", "transport": "HTTP+JSON"}],
            "capabilities": {"streaming": true}, "supportsAuthenticatedExtendedCard": true,
            "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"], "skills": skills
        });
        let card = parse_card(v03.to_string().as_bytes(), "u").unwrap();
        let ifaces: Vec<_> = card
            .supported_interfaces
            .iter()
            .map(|i| (i.url.as_str(), i.protocol_binding.as_str(), i.protocol_version.as_str()))
            .collect();
        assert_eq!(ifaces, [("http://h/rpc", "JSONRPC", "0.3"), ("http://h/rest", "HTTP+JSON", "0.3")]);
        assert_eq!(card.capabilities.extended_agent_card, Some(true));

        let mut broken = v10.clone();
        broken["supportedInterfaces"][0].as_object_mut().unwrap().remove("url");
        let err = parse_card(broken.to_string().as_bytes(), "http://x").unwrap_err();
        assert_eq!(
            (err.kind, err.violations[0].field.as_str()),
            (ErrorKind::InvalidAgentResponse, "supportedInterfaces[0].url")
        );
        assert!(err.message.contains("supportedInterfaces[0].url"), "{err}");
        // Given by a caller (`ClientBuilder::from_card_value`): the same reading, its faults
        // the caller's (InvalidParams).
        assert_eq!(read_card(v03.clone()).unwrap(), card);
        let mut no_skills = v03.clone();
        no_skills["skills"] = json!("none");
        assert_eq!(read_card(no_skills).unwrap_err().kind, ErrorKind::InvalidParams);
        let mut broken = v03;
        broken.as_object_mut().unwrap().remove("name");
        let err = parse_card(broken.to_string().as_bytes(), "http://x").unwrap_err();
        assert_eq!(err.violations[0].field, "name");
        assert_eq!(parse_card(b"<html>", "u").unwrap_err().kind, ErrorKind::InvalidAgentResponse);
        let err = parse_card(b"{}", "u").unwrap_err();
        assert_eq!(err.kind, ErrorKind::InvalidAgentResponse);
    }
}
