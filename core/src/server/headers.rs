//! The service parameters and media types both HTTP bindings read from a request: `A2A-Version`
//! (header or query parameter), `A2A-Extensions` / `X-A2A-Extensions`, and `Content-Type`.
//!
//! Version rules (SPEC.md §11): a missing or empty `A2A-Version` means 0.3; any `1.x` is 1.0
//! (minor versions are compatible within a major, as the official Python SDK also treats them);
//! `0.3` (or `0.3.x`) is 0.3; anything else is VersionNotSupported. The header wins over the
//! query parameter when both are given.

use crate::error::{A2AError, ErrorKind};
use crate::model::AgentCard;
use http::HeaderMap;
use http::header::{ACCEPT, CONTENT_TYPE, HeaderName, HeaderValue};

pub const VERSION_HEADER: &str = "A2A-Version";
pub const EXTENSIONS_HEADER: &str = "A2A-Extensions";
/// The 0.3 name of [`EXTENSIONS_HEADER`]; still accepted, and echoed to 0.3 callers.
pub const LEGACY_EXTENSIONS_HEADER: &str = "X-A2A-Extensions";
/// The names above, parsed once: a lookup by `&str` parses and lowercases the name each time.
pub(crate) const VERSION_NAME: HeaderName = HeaderName::from_static("a2a-version");
pub(crate) const EXTENSIONS_NAME: HeaderName = HeaderName::from_static("a2a-extensions");
pub(crate) const LEGACY_EXTENSIONS_NAME: HeaderName = HeaderName::from_static("x-a2a-extensions");
/// The HTTP+JSON media type of A2A 1.0 (spec §14).
pub const A2A_JSON: &str = "application/a2a+json";
pub const JSON: &str = "application/json";

/// The protocol versions this server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    V03,
    V10,
}

/// The version a request asked for, and whether it asked at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Requested {
    pub version: Version,
    /// `false` when `A2A-Version` was missing or empty (which the spec reads as 0.3).
    pub explicit: bool,
}

/// The versions a binding serves: JSON-RPC speaks 1.0 and 0.3; HTTP+JSON and gRPC 1.0 only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Speaks {
    V10AndV03,
    V10,
}

impl Speaks {
    fn listed(self) -> (&'static str, &'static str) {
        match self {
            Speaks::V10AndV03 => ("1.0,0.3", "this server speaks 1.0 and 0.3"),
            Speaks::V10 => ("1.0", "this binding speaks 1.0 (0.3 is served over JSON-RPC)"),
        }
    }

    /// VersionNotSupported for `requested` (an explicit 0.3 on a binding without it), naming
    /// what this binding speaks, so a client that follows it is not sent back in a loop.
    pub fn refuse(self, requested: &str, why: &str) -> A2AError {
        let (list, _) = self.listed();
        A2AError::new(ErrorKind::VersionNotSupported, why.to_owned())
            .with_meta("requestedVersion", requested)
            .with_meta("supportedVersions", list)
    }
}

/// Reads `A2A-Version` from the headers, else from the query; one this server does not know is
/// refused naming what the binding `speaks`.
pub fn requested_version(headers: &HeaderMap, query: Option<&str>, speaks: Speaks) -> Result<Requested, A2AError> {
    let header = headers.get(VERSION_NAME).map(|v| v.to_str().map(str::trim));
    let raw = match header {
        Some(Err(_)) => return Err(unsupported("(not valid text)", speaks)),
        Some(Ok(v)) if !v.is_empty() => Some(v.to_owned()),
        _ => query.and_then(|q| crate::rest::query_param(q, VERSION_HEADER)).map(|v| v.trim().to_owned()),
    };
    match raw.as_deref() {
        None | Some("") => Ok(Requested { version: Version::V03, explicit: false }),
        Some(v) => {
            parse_version(v).map(|version| Requested { version, explicit: true }).ok_or_else(|| unsupported(v, speaks))
        }
    }
}

/// `1`, `1.0`, `1.1`, `1.x`, `1.0.1` → 1.0; `0.3`, `0.3.0` → 0.3.
fn parse_version(v: &str) -> Option<Version> {
    let mut parts = v.split('.');
    let major = parts.next()?;
    let minor = parts.next();
    let rest_ok = parts.all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    let minor_ok = |m: &str| m == "x" || (!m.is_empty() && m.bytes().all(|b| b.is_ascii_digit()));
    match (major, minor) {
        ("1", None) => Some(Version::V10),
        ("1", Some(m)) if minor_ok(m) && rest_ok => Some(Version::V10),
        ("0", Some("3")) if rest_ok => Some(Version::V03),
        _ => None,
    }
}

fn unsupported(v: &str, speaks: Speaks) -> A2AError {
    let shown: String = v.chars().take(64).collect();
    let (_, said) = speaks.listed();
    speaks.refuse(&shown, &format!("A2A-Version {shown:?} is not supported; {said}"))
}

/// Extension URIs the client asked for: every `A2A-Extensions` and `X-A2A-Extensions` header
/// value and the `A2A-Extensions` query parameter, comma-separated, trimmed, deduplicated.
pub fn requested_extensions(headers: &HeaderMap, query: Option<&str>) -> Vec<String> {
    requested_where(headers, query, |_| true, 64)
}

/// [`requested_extensions`], keeping only the URIs `wanted` takes, at most `cap` of them
/// (a client cannot make the server hold an unbounded list per request).
fn requested_where(headers: &HeaderMap, query: Option<&str>, wanted: impl Fn(&str) -> bool, cap: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut add = |list: &str| {
        for uri in list.split(',').map(str::trim).filter(|u| !u.is_empty()) {
            if out.len() < cap && wanted(uri) && !out.iter().any(|have| have == uri) {
                out.push(uri.to_owned());
            }
        }
    };
    for name in [EXTENSIONS_NAME, LEGACY_EXTENSIONS_NAME] {
        for value in headers.get_all(name) {
            if let Ok(text) = value.to_str() {
                add(text);
            }
        }
    }
    if let Some(list) = query.and_then(|q| crate::rest::query_param(q, EXTENSIONS_HEADER)) {
        add(&list);
    }
    out
}

/// What the card declares about extensions, precomputed once per server.
#[derive(Debug, Clone, Default)]
pub struct ExtensionPolicy {
    declared: Vec<String>,
    required: Vec<String>,
}

impl ExtensionPolicy {
    pub fn from_card(card: &AgentCard) -> Self {
        let exts = &card.capabilities.extensions;
        Self {
            declared: exts.iter().filter(|e| !e.uri.is_empty()).map(|e| e.uri.clone()).collect(),
            required: exts.iter().filter(|e| e.required && !e.uri.is_empty()).map(|e| e.uri.clone()).collect(),
        }
    }

    /// The extensions a request asks for that the agent declares, in the client's order: the
    /// rest are ignored (spec §10), and so cannot crowd a declared one out of the bounded list
    /// (a required extension listed after 64 unknown ones read as not asked for).
    pub fn requested(&self, headers: &HeaderMap, query: Option<&str>) -> Vec<String> {
        requested_where(headers, query, |uri| self.declared.iter().any(|d| d == uri), self.declared.len())
    }

    /// The requested URIs the agent declares, in the client's order (spec §10: unknown ones are
    /// ignored, never an error).
    pub fn activate(&self, requested: &[String]) -> Vec<String> {
        requested.iter().filter(|u| self.declared.contains(u)).cloned().collect()
    }

    /// A request's activation: the executor may activate what the client asked for and the
    /// agent declares; the required ones the client listed are active from the start.
    pub fn activation(&self, requested: &[String]) -> crate::executor::Activation {
        let activation = crate::executor::Activation::new(self.activate(requested));
        for uri in self.required.iter().filter(|u| requested.contains(u)) {
            activation.force(uri);
        }
        activation
    }

    /// ExtensionSupportRequired if the card marks an extension `required` and the client did
    /// not ask for it.
    pub fn check_required(&self, requested: &[String]) -> Result<(), A2AError> {
        let missing: Vec<&str> = self.required.iter().filter(|u| !requested.contains(u)).map(String::as_str).collect();
        if missing.is_empty() {
            return Ok(());
        }
        Err(A2AError::new(
            ErrorKind::ExtensionSupportRequired,
            format!(
                "this agent requires the extension(s) {}; list them in the A2A-Extensions header (X-A2A-Extensions in A2A 0.3)",
                missing.join(", ")
            ),
        )
        .with_meta("extensions", missing.join(",")))
    }
}

/// The `A2A-Extensions` response header echoing the activated extensions (`None` if none, or
/// if a URI cannot be a header value).
pub fn extensions_value(activated: &[String]) -> Option<HeaderValue> {
    if activated.is_empty() {
        return None;
    }
    HeaderValue::from_str(&activated.join(", ")).ok()
}

/// The media type of `Content-Type` (lowercased, parameters dropped), if any.
fn media_type(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(CONTENT_TYPE)?.to_str().ok()?;
    Some(value.split(';').next().unwrap_or("").trim().to_ascii_lowercase())
}

/// Whether the request body may be read as JSON: `application/json`, `application/a2a+json`
/// or any other `application/*+json`, with any parameters (`; charset=utf-8`). A missing
/// `Content-Type` is accepted (lenient: some clients omit it); any other type is refused.
pub fn is_json_body(headers: &HeaderMap) -> bool {
    match media_type(headers) {
        None => headers.get(CONTENT_TYPE).is_none(),
        Some(t) => t == JSON || (t.starts_with("application/") && t.ends_with("+json")),
    }
}

/// The media type of HTTP+JSON responses: `application/a2a+json` when the client named it (in
/// `Accept` or as its own `Content-Type`), else `application/json`, which every client and
/// the TCK's checks (`"application/json" in content-type`) accept.
pub fn rest_media_type(headers: &HeaderMap) -> &'static str {
    let asked = |name| {
        headers.get_all(name).iter().any(|v| v.to_str().is_ok_and(|s| s.to_ascii_lowercase().contains(A2A_JSON)))
    };
    if asked(ACCEPT) || asked(CONTENT_TYPE) { A2A_JSON } else { JSON }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::AgentExtension;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    fn versions() {
        let v = |pairs: &[(&'static str, &'static str)], q: Option<&str>| {
            requested_version(&headers(pairs), q, Speaks::V10AndV03)
        };
        assert_eq!(v(&[], None).unwrap(), Requested { version: Version::V03, explicit: false });
        assert!(!v(&[("a2a-version", " ")], None).unwrap().explicit);
        for ok in ["1", "1.0", "1.1", "1.x", "1.0.1"] {
            let h = headers(&[]);
            let q = format!("A2A-Version={ok}");
            assert_eq!(requested_version(&h, Some(&q), Speaks::V10AndV03).unwrap().version, Version::V10, "{ok}");
        }
        assert_eq!(v(&[("A2A-Version", "0.3")], None).unwrap(), Requested { version: Version::V03, explicit: true });
        assert_eq!(v(&[("A2A-Version", "0.3.0")], None).unwrap().version, Version::V03);
        for bad in ["2.0", "99.0", "0.2", "1.a", "abc", "1.", "0.3.x"] {
            let h = headers(&[]);
            let q = format!("a2a-version={bad}");
            let err = requested_version(&h, Some(&q), Speaks::V10AndV03).unwrap_err();
            assert_eq!(err.kind, ErrorKind::VersionNotSupported, "{bad}");
        }
        // The header wins over the query.
        assert_eq!(v(&[("A2A-Version", "1.0")], Some("A2A-Version=0.3")).unwrap().version, Version::V10);
    }

    #[test]
    fn extensions() {
        let h = headers(&[("A2A-Extensions", " urn:a , urn:b,,urn:a"), ("X-A2A-Extensions", "urn:c")]);
        let req = requested_extensions(&h, Some("A2A-Extensions=urn:d"));
        assert_eq!(req, ["urn:a", "urn:b", "urn:c", "urn:d"]);
        let mut card_exts = vec![AgentExtension { uri: "urn:b".into(), ..Default::default() }];
        card_exts.push(AgentExtension { uri: "urn:r".into(), required: true, ..Default::default() });
        let policy = ExtensionPolicy {
            declared: card_exts.iter().map(|e| e.uri.clone()).collect(),
            required: vec!["urn:r".into()],
        };
        assert_eq!(policy.activate(&req), ["urn:b"]);
        let err = policy.check_required(&req).unwrap_err();
        assert_eq!(err.kind, ErrorKind::ExtensionSupportRequired);
        assert!(policy.check_required(&["urn:r".to_owned()]).is_ok());
        assert_eq!(extensions_value(&["urn:a".into(), "urn:b".into()]).unwrap(), "urn:a, urn:b");
    }

    #[test]
    fn content_types() {
        assert!(is_json_body(&headers(&[])));
        assert!(is_json_body(&headers(&[("content-type", "application/json")])));
        assert!(is_json_body(&headers(&[("content-type", "Application/JSON; charset=utf-8")])));
        assert!(is_json_body(&headers(&[("content-type", "application/a2a+json")])));
        assert!(!is_json_body(&headers(&[("content-type", "text/plain")])));
        assert!(!is_json_body(&headers(&[("content-type", "application/x-www-form-urlencoded")])));
        assert_eq!(rest_media_type(&headers(&[])), JSON);
        assert_eq!(rest_media_type(&headers(&[("accept", "application/a2a+json, */*")])), A2A_JSON);
    }
}
