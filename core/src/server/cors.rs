//! Cross-origin requests (CORS), for agents called from web pages on other origins: off unless
//! origins are allowed. A browser asks first (a preflight `OPTIONS` with
//! `Access-Control-Request-Method`), then sends the call; both answers name the allowed origin.
//!
//! CORS only tells a browser whether a page may read the answer; it is not authentication. So
//! any request header is allowed (the credentials in them are checked as on any call), cookies
//! are never asked for (no `Access-Control-Allow-Credentials`: A2A's schemes are headers), and
//! an origin that is not allowed gets a 403 preflight, which the browser stops at.

use super::body::ResponseBody;
use crate::error::{A2AError, Result};
use http::header::{self, HeaderMap, HeaderValue};
use http::{Method, Response, StatusCode};

/// How long a browser may keep a preflight's answer (seconds).
const MAX_AGE: &str = "600";

/// The response headers a page may read besides the CORS-safelisted ones: activated
/// extensions, the protocol version, and what a refusal says about credentials and retries.
const EXPOSED: &str = "A2A-Extensions, A2A-Version, WWW-Authenticate, Retry-After";

/// The origins whose pages may call this agent.
#[derive(Debug, Clone, PartialEq)]
pub struct Cors {
    /// `*`: pages of any origin.
    any: bool,
    /// Serialized origins (`https://app.example.com`, `http://localhost:5173`), lower case.
    origins: Vec<String>,
}

impl Cors {
    /// From origins as a browser sends them (`scheme://host[:port]`, no path), or `*` for any;
    /// none means off. Anything else is refused, naming it: a path or trailing slash would never
    /// match, and a page would be blocked with no clue why.
    pub fn new<S: AsRef<str>>(origins: &[S]) -> Result<Option<Cors>> {
        let mut cors = Cors { any: false, origins: Vec::new() };
        for origin in origins {
            let origin = origin.as_ref().trim();
            if origin == "*" {
                cors.any = true;
                continue;
            }
            let bad = |why: &str| A2AError::invalid_field("corsOrigins", format!("{origin:?}: {why}"));
            let serialized = serialized_origin(origin).ok_or_else(|| bad("an origin is http(s)://host[:port]"))?;
            if serialized != origin.to_ascii_lowercase() {
                return Err(bad(&format!("give it as a browser sends it: {serialized}")));
            }
            cors.origins.push(serialized);
        }
        Ok((cors.any || !cors.origins.is_empty()).then_some(cors))
    }

    /// The request's `Origin` when this allows it.
    fn allowed<'a>(&self, origin: Option<&'a HeaderValue>) -> Option<&'a HeaderValue> {
        let origin = origin?;
        let text = origin.to_str().ok()?;
        (self.any || self.origins.iter().any(|o| o.eq_ignore_ascii_case(text))).then_some(origin)
    }

    fn allow_origin(&self, origin: &HeaderValue) -> HeaderValue {
        if self.any { HeaderValue::from_static("*") } else { origin.clone() }
    }

    /// The answer to a preflight (`OPTIONS` with `Origin` and `Access-Control-Request-Method`),
    /// or `None` when this request is not one.
    pub(crate) fn preflight(&self, method: &Method, headers: &HeaderMap) -> Option<Response<ResponseBody>> {
        if method != Method::OPTIONS || !headers.contains_key(header::ORIGIN) {
            return None;
        }
        headers.get(header::ACCESS_CONTROL_REQUEST_METHOD)?;
        let mut resp = Response::new(ResponseBody::empty());
        vary(resp.headers_mut(), "Origin, Access-Control-Request-Method, Access-Control-Request-Headers");
        let Some(origin) = self.allowed(headers.get(header::ORIGIN)) else {
            *resp.status_mut() = StatusCode::FORBIDDEN;
            return Some(resp);
        };
        *resp.status_mut() = StatusCode::NO_CONTENT;
        let h = resp.headers_mut();
        h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, self.allow_origin(origin));
        // The methods the bindings answer (whether this path takes the asked one is for the
        // call itself to say, with its own status, which the page can then read).
        h.insert(header::ACCESS_CONTROL_ALLOW_METHODS, HeaderValue::from_static("GET, POST, DELETE"));
        if let Some(wanted) = headers.get(header::ACCESS_CONTROL_REQUEST_HEADERS) {
            h.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, wanted.clone());
        }
        h.insert(header::ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static(MAX_AGE));
        Some(resp)
    }

    /// Marks the answer to a call from an allowed `origin` as readable by its page. Every
    /// answer varies by `Origin` once CORS is on, so a shared cache keeps one per origin.
    pub(crate) fn decorate(&self, origin: Option<&HeaderValue>, response: &mut HeaderMap) {
        vary(response, "Origin");
        let Some(origin) = self.allowed(origin) else { return };
        response.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, self.allow_origin(origin));
        response.insert(header::ACCESS_CONTROL_EXPOSE_HEADERS, HeaderValue::from_static(EXPOSED));
    }
}

/// `origin` as a browser serializes it (lower case, no default port), when it is an
/// http(s) origin with a path of `/` at most; a path, query or fragment is no origin.
fn serialized_origin(origin: &str) -> Option<String> {
    let (scheme, rest) = origin.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    let default_port = match scheme.as_str() {
        "http" => 80,
        "https" => 443,
        _ => return None,
    };
    let authority: http::uri::Authority = rest.strip_suffix('/').unwrap_or(rest).parse().ok()?;
    if authority.as_str().contains('@') || authority.host().is_empty() {
        return None;
    }
    let host = authority.host().to_ascii_lowercase();
    Some(match authority.port_u16().filter(|&p| p != default_port) {
        Some(port) => format!("{scheme}://{host}:{port}"),
        None => format!("{scheme}://{host}"),
    })
}

fn vary(headers: &mut HeaderMap, names: &'static str) {
    headers.append(header::VARY, HeaderValue::from_static(names));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        pairs.iter().map(|(k, v)| (k.parse().unwrap(), HeaderValue::from_str(v).unwrap())).collect()
    }

    #[test]
    fn origins_are_checked_when_configured() {
        assert_eq!(Cors::new::<&str>(&[]).unwrap(), None);
        let cors = Cors::new(&["https://App.example.com", "http://localhost:5173"]).unwrap().unwrap();
        assert_eq!(cors.origins, ["https://app.example.com", "http://localhost:5173"]);
        for bad in ["https://app.example.com/a2a", "app.example.com", "ftp://x", "null", "https://u@x", "http://x?q"] {
            let e = Cors::new(&[bad]).unwrap_err();
            assert_eq!(e.violations[0].field, "corsOrigins", "{bad}: {e}");
        }
        // A trailing slash or the default port never matches what a browser sends: refused,
        // saying what it sends.
        for (given, meant) in [("https://a.example:443", "https://a.example"), ("http://x:8080/", "http://x:8080")] {
            let e = Cors::new(&[given]).unwrap_err();
            assert!(e.message.contains(&format!("as a browser sends it: {meant}")), "{e}");
        }
    }

    #[test]
    fn a_preflight_from_an_allowed_origin_is_answered_and_others_are_refused() {
        let cors = Cors::new(&["http://localhost:5173"]).unwrap().unwrap();
        let asked = headers(&[
            ("origin", "http://localhost:5173"),
            ("access-control-request-method", "POST"),
            ("access-control-request-headers", "content-type, authorization, a2a-version"),
        ]);
        let resp = cors.preflight(&Method::OPTIONS, &asked).unwrap();
        assert_eq!(resp.status(), StatusCode::NO_CONTENT);
        let h = resp.headers();
        assert_eq!(h["access-control-allow-origin"], "http://localhost:5173");
        assert_eq!(h["access-control-allow-headers"], "content-type, authorization, a2a-version");
        assert!(h["access-control-allow-methods"].to_str().unwrap().contains("POST"));
        assert!(h.get("access-control-allow-credentials").is_none());

        let other = headers(&[("origin", "https://evil.example"), ("access-control-request-method", "POST")]);
        let resp = cors.preflight(&Method::OPTIONS, &other).unwrap();
        assert_eq!(resp.status(), StatusCode::FORBIDDEN);
        assert!(resp.headers().get("access-control-allow-origin").is_none());
        // Not a preflight: an OPTIONS without the CORS headers, or another method.
        assert!(cors.preflight(&Method::OPTIONS, &headers(&[("origin", "http://localhost:5173")])).is_none());
        assert!(cors.preflight(&Method::POST, &asked).is_none());

        let mut out = HeaderMap::new();
        cors.decorate(other.get("origin"), &mut out);
        assert!(out.get("access-control-allow-origin").is_none());
        assert_eq!(out["vary"], "Origin");
        let any = Cors::new(&["*"]).unwrap().unwrap();
        let mut out = HeaderMap::new();
        any.decorate(other.get("origin"), &mut out);
        assert_eq!(out["access-control-allow-origin"], "*");
        assert!(out["access-control-expose-headers"].to_str().unwrap().contains("A2A-Extensions"));
    }
}
