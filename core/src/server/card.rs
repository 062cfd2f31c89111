//! The public agent card at `/.well-known/agent-card.json` (and the legacy `agent.json`), with
//! HTTP caching (spec §8.6): `Cache-Control: public, max-age=…`, a strong `ETag` over the
//! served bytes, `304 Not Modified` on a matching `If-None-Match`.
//!
//! 0.3 compatibility: when the card declares an interface with protocolVersion 0.3, the served
//! JSON is the 1.0 card *plus* the 0.3 card's fields, so one document serves both kinds of
//! client. This follows the official Python SDK (`agent_card_to_dict`): the 0.3 form
//! ([`v03::AgentCard`] from the 1.0 card) is deep-merged under the 1.0 JSON, the 1.0 value
//! winning wherever both have a member; objects merge member by member and arrays element by
//! element (so skills and security schemes gain their 0.3 members too); a false
//! `supportsAuthenticatedExtendedCard` is left out. The result carries `url`,
//! `preferredTransport`, `protocolVersion` ("0.3.0"), `additionalInterfaces` (when there are
//! several 0.3 interfaces), `supportsAuthenticatedExtendedCard`, the 0.3 security-scheme
//! members next to the 1.0 ones, and the 0.3 `security` list next to `securityRequirements`
//! (card and skills): a 0.3 client sends credentials only for what `security` names (a2a-sdk
//! 0.3's `AuthInterceptor` sends none without it). Our reader takes `securityRequirements` when
//! both are present (`model::card`'s `SecurityAlias`). A card without a 0.3 interface is
//! served as is, and so is every card when the server is set to serve a strict 1.0 card
//! (`HttpOptions::strict_v1_card`; 0.3 requests are still answered).

use super::body::ResponseBody;
use crate::model::{self, AgentCard, v03};
use bytes::Bytes;
use http::header::{CACHE_CONTROL, CONTENT_TYPE, ETAG, HeaderValue, IF_NONE_MATCH};
use http::{HeaderMap, Method, Response, StatusCode};
use std::time::Duration;

pub use crate::model::{LEGACY_WELL_KNOWN_PATH, WELL_KNOWN_PATH};

/// The card bytes and their validators, computed once (the card does not change while serving).
#[derive(Debug, Clone)]
pub struct ServedCard {
    body: Bytes,
    etag: HeaderValue,
    cache_control: HeaderValue,
    /// When this server started serving the card (it never changes while serving).
    last_modified: HeaderValue,
}

impl ServedCard {
    /// `strict_v1`: the 1.0 card alone, without the 0.3 fields (see the module docs).
    pub fn new(card: &AgentCard, max_age: Duration, strict_v1: bool) -> Self {
        let json = if strict_v1 { model::to_value(card) } else { v03::with_v03_fields(card) };
        let body = Bytes::from(serde_json::to_vec(&json).unwrap_or_default());
        let etag = HeaderValue::from_str(&format!("\"{:016x}{:08x}\"", fnv1a64(&body), body.len() as u32))
            .expect("hex is a valid header value");
        let cache_control = HeaderValue::from_str(&format!("public, max-age={}", max_age.as_secs()))
            .expect("digits are a valid header value");
        let since = chrono::Utc::now().format("%a, %d %b %Y %H:%M:%S GMT").to_string();
        let last_modified = HeaderValue::from_str(&since).expect("an HTTP date is a valid header value");
        Self { body, etag, cache_control, last_modified }
    }

    pub fn body(&self) -> &Bytes {
        &self.body
    }

    pub fn etag(&self) -> &HeaderValue {
        &self.etag
    }

    /// GET / HEAD: 200 with the card, or 304 when `If-None-Match` names this ETag. Other
    /// methods: 405 with `Allow`.
    pub fn respond(&self, method: &Method, headers: &HeaderMap) -> Response<ResponseBody> {
        if method != Method::GET && method != Method::HEAD {
            let body = crate::error::A2AError::new(
                crate::ErrorKind::MethodNotFound,
                format!("the agent card is read with GET, not {method}"),
            );
            let mut body = body.to_http_body();
            body["error"]["code"] = 405.into();
            let mut resp = super::service::json_response(StatusCode::METHOD_NOT_ALLOWED, super::headers::JSON, &body);
            resp.headers_mut().insert(http::header::ALLOW, HeaderValue::from_static("GET, HEAD"));
            return resp;
        }
        let not_modified = headers.get_all(IF_NONE_MATCH).iter().any(|v| self.matches(v));
        let mut resp = if not_modified {
            let mut r = Response::new(ResponseBody::empty());
            *r.status_mut() = StatusCode::NOT_MODIFIED;
            r
        } else {
            let mut r = Response::new(ResponseBody::full(self.body.clone()));
            r.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static(super::headers::JSON));
            r
        };
        resp.headers_mut().insert(ETAG, self.etag.clone());
        resp.headers_mut().insert(CACHE_CONTROL, self.cache_control.clone());
        resp.headers_mut().insert(http::header::LAST_MODIFIED, self.last_modified.clone());
        resp
    }

    /// `If-None-Match` uses the weak comparison (RFC 9110 §13.1.2): `W/` is ignored; `*` matches.
    fn matches(&self, value: &HeaderValue) -> bool {
        let Ok(text) = value.to_str() else { return false };
        let ours = self.etag.to_str().unwrap_or("");
        text.split(',').map(str::trim).any(|tag| tag == "*" || tag.strip_prefix("W/").unwrap_or(tag) == ours)
    }
}

/// FNV-1a, 64 bits: a stable content hash (unlike `DefaultHasher`, the same across builds),
/// so every instance of a deployment serves the same ETag for the same card.
fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn card(versions: &[&str]) -> AgentCard {
        let interfaces: Vec<Value> = versions
            .iter()
            .map(|v| json!({"url": "http://h/", "protocolBinding": "JSONRPC", "protocolVersion": v}))
            .collect();
        model::parse_value(json!({
            "name": "n", "description": "d", "version": "1", "supportedInterfaces": interfaces,
            "capabilities": {"streaming": true, "extendedAgentCard": false},
            "securitySchemes": {"b": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}},
            "securityRequirements": [{"schemes": {"b": {"list": []}}}],
            "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": [{"id": "s", "name": "s", "description": "s", "tags": ["t"]}]
        }))
        .unwrap()
    }

    #[test]
    fn a_strict_v1_card_has_only_the_spec_fields_even_with_a_v03_interface() {
        let card = card(&["1.0", "0.3"]);
        let served = ServedCard::new(&card, Duration::from_secs(300), true);
        let json: Value = serde_json::from_slice(served.body()).unwrap();
        assert_eq!(json, model::to_value(&card));
        for compat in ["url", "preferredTransport", "protocolVersion", "additionalInterfaces"] {
            assert!(json.get(compat).is_none(), "{compat} in {json}");
        }
        assert!(json["securitySchemes"]["b"].get("type").is_none(), "no 0.3 scheme members");
        // The 0.3 interface stays declared: 0.3 requests are still answered.
        assert_eq!(json["supportedInterfaces"].as_array().unwrap().len(), 2);
        let compat: Value =
            serde_json::from_slice(ServedCard::new(&card, Duration::from_secs(300), false).body()).unwrap();
        assert_eq!(compat["protocolVersion"], "0.3.0");
    }

    #[test]
    fn compat_fields_only_with_a_v03_interface() {
        let plain = v03::with_v03_fields(&card(&["1.0"]));
        assert!(plain.get("url").is_none());
        assert!(plain.get("protocolVersion").is_none());

        let mixed = v03::with_v03_fields(&card(&["1.0", "0.3"]));
        assert_eq!(mixed["url"], "http://h/");
        assert_eq!(mixed["preferredTransport"], "JSONRPC");
        assert_eq!(mixed["protocolVersion"], "0.3.0");
        assert_eq!(mixed["supportedInterfaces"].as_array().unwrap().len(), 2);
        assert!(mixed.get("supportsAuthenticatedExtendedCard").is_none(), "false is left out");
        assert_eq!(mixed["capabilities"]["streaming"], true);
        // Both security forms side by side.
        assert_eq!(mixed["securitySchemes"]["b"]["httpAuthSecurityScheme"]["scheme"], "Bearer");
        assert_eq!(mixed["securitySchemes"]["b"]["type"], "http");
        assert_eq!(mixed["security"], json!([{"b": []}]), "the 0.3 list, for 0.3 clients");
        assert!(mixed["securityRequirements"].is_array());
        // Still a valid 1.0 card (read back as it was: `securityRequirements` wins) and a
        // valid 0.3 card.
        let back = model::parse_value::<AgentCard>(mixed.clone()).unwrap();
        assert_eq!(back, card(&["1.0", "0.3"]));
        model::parse_value::<v03::AgentCard>(mixed).unwrap();
    }

    #[test]
    fn etag_and_conditional_get() {
        let served = ServedCard::new(&card(&["1.0"]), Duration::from_secs(300), false);
        let again = ServedCard::new(&card(&["1.0"]), Duration::from_secs(60), false);
        assert_eq!(served.etag(), again.etag(), "stable across instances");
        let mut h = HeaderMap::new();
        assert_eq!(served.respond(&Method::GET, &h).status(), StatusCode::OK);
        h.insert(
            IF_NONE_MATCH,
            HeaderValue::from_str(&format!("\"x\", W/{}", served.etag().to_str().unwrap())).unwrap(),
        );
        let resp = served.respond(&Method::GET, &h);
        assert_eq!(resp.status(), StatusCode::NOT_MODIFIED);
        assert_eq!(resp.headers()[CACHE_CONTROL], "public, max-age=300");
        assert_eq!(served.respond(&Method::POST, &HeaderMap::new()).status(), StatusCode::METHOD_NOT_ALLOWED);
    }
}
